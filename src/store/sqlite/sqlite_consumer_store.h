// Internal to the store module: the ConsumerStore (consumer_store.h) of the SQLite log, over the
// tables `consumers` and `consumer_positions`. Writes run on the log's writer thread inside its
// batch transaction (so a sticky log refuses them too); reads on a reader connection. Leases are
// judged by the caller's clock (one daemon uses the file). Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/consumer_store.h"
#include "store/sqlite/sqlite_reader.h"
#include "store/sqlite/sqlite_writer.h"

namespace agentstream::sqlite {

class SqliteConsumerStore final : public ConsumerStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  SqliteConsumerStore(WriteQueue& queue, ReaderPool& readers) : queue_(queue), readers_(readers) {}

  Result<ConsumerPosition> AcquireLease(const ConsumerId& consumer, const SessionId& session,
                                        const std::string& owner, TimestampMs now_ms,
                                        std::int64_t ttl_ms) override;
  Status CommitConsumerPosition(const ConsumerId& consumer, const SessionId& session,
                                std::uint64_t generation, Cursor position,
                                std::optional<std::string> adapter_state,
                                TimestampMs now_ms) override;
  Status ReleaseLease(const ConsumerId& consumer, const SessionId& session,
                      std::uint64_t generation) override;
  Result<std::vector<ConsumerPosition>> ListConsumerPositions(const ConsumerId& consumer) override;
  Status DeleteConsumerPositions(const ConsumerId& consumer) override;
  Status SaveConsumer(const ConsumerId& consumer, const std::string& definition) override;
  Result<std::vector<StoredConsumer>> ListConsumers() override;
  Status DeleteConsumer(const ConsumerId& consumer) override;

 private:
  WriteQueue& queue_;
  ReaderPool& readers_;
};

}  // namespace agentstream::sqlite
