// MemoryEventLog: the EventLog kept in process memory, for tests and tools. Same rules, limits
// and errors as the durable backends (they share store/log_state.h); nothing survives the object.
// Appends complete synchronously on the caller's thread; the callback runs before AppendAsync
// returns. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/event_log.h"

namespace agentstream {

class MemoryEventLog final : public EventLog, public Coordination {
 public:
  explicit MemoryEventLog(LogLimits limits = {});
  ~MemoryEventLog() override;

  Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                     std::vector<NewEvent> initial) override;
  Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                            SessionMeta meta, std::vector<NewEvent> initial) override;
  Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                              std::vector<NewEvent> initial) override;
  Result<SessionInfo> GetSession(const SessionId& id) override;
  Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                std::size_t limit) override;
  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override;
  void AppendAsync(AppendRequest request, AppendCallback done) override;
  Result<ReadResult> Read(const ReadRequest& request) override;
  Result<Cursor> Tail(const SessionId& session) override;
  Subscription SubscribeCommits(CommitListener listener) override;
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
  Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) override;
  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session) override;
  Status SaveConsumer(const ConsumerId& consumer, const std::string& definition) override;
  Result<std::vector<StoredConsumer>> ListConsumers() override;
  Status DeleteConsumer(const ConsumerId& consumer) override;
  Coordination& coordination() override { return *this; }
  Status Health() override;
  LogStats Stats() override;

  // Coordination, judged by the process's wall clock.
  Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                      std::int64_t ttl_ms) override;
  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override;
  Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) override;
  Result<OwnerLease> GetOwnership(const SessionId& session) override;
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override;
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) override;
  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override;
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) override;
  Result<std::string> SharedSecret(const std::string& name, const std::string& candidate) override;

  // Test hooks. The next commit fails as a sync failure of unknown outcome would (the log turns
  // sticky). A raw record is stored as given, with `checksum` (nullopt: the correct one), to
  // model damaged storage.
  void FailNextCommit();
  // What reopening a durable log does to its failure state: writes are accepted again.
  void SimulateReopen();
  void InjectRawRecord(const EventRecord& record, std::optional<std::uint64_t> checksum);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace agentstream
