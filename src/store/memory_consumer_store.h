// Internal to the store module: the ConsumerStore (consumer_store.h) of MemoryEventLog. Its rows
// live beside the log's and under the log's lock, so a log that turned sticky refuses these writes
// too. Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/consumer_store.h"
#include "store/memory_log_state.h"

namespace agentstream::store_internal {

class MemoryConsumerStore final : public ConsumerStore {
 public:
  // `log` must outlive the store.
  explicit MemoryConsumerStore(MemoryLogState& log) : log_(log) {}

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
  // The stored row of (consumer, session), or nullopt; with log_.mu held.
  std::optional<ConsumerPosition> Find(const ConsumerId& consumer, const SessionId& session) const;
  // Removes every position of `consumer`; with log_.mu held.
  void ErasePositions(const ConsumerId& consumer);

  MemoryLogState& log_;
  // Guarded by log_.mu.
  std::map<std::pair<std::string, std::string>, ConsumerPosition>
      positions_;                                   // (consumer, session)
  std::map<std::string, std::string> definitions_;  // by consumer id
};

}  // namespace agentstream::store_internal
