// Internal to the store module: the ConsumerStore (consumer_store.h) of the PostgreSQL log, over
// the tables `consumers` and `consumer_positions` that the daemons sharing the database share.
// Writes run in the log's writer batch (so a sticky log refuses them too); a lease change of
// (consumer, session) holds an advisory lock on it until the commit, so two daemons never both
// win one lease. Leases are judged by the server's clock: the daemons may disagree on the time,
// the database does not; the callers' now_ms is unused. Reads run on a reader connection.
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pg/setup.h"
#include "store/consumer_store.h"
#include "store/postgres/txn.h"

namespace agentstream::pg {

class PostgresConsumerStore final : public ConsumerStore {
 public:
  // `queue` and `readers` are the log's; both must outlive the store.
  PostgresConsumerStore(WriteQueue& queue, ReaderPool& readers)
      : queue_(queue), readers_(readers) {}

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

}  // namespace agentstream::pg
