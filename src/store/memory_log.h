// MemoryEventLog: the EventLog kept in process memory, for tests and tools. Same rules, limits
// and errors as the durable backends (they share store/log_state.h); nothing survives the object.
// Appends complete synchronously on the caller's thread; the callback runs before AppendAsync
// returns. Thread-safe. Tests fail its commits and damage its rows through
// testing::MemoryLogPeer (store/testing/memory_log_peer.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/event_log.h"

namespace agentstream {

namespace store_internal {
struct MemoryLogState;
class MemoryConsumerStore;
class MemoryDeviceStore;
class MemoryScheduleStore;
}  // namespace store_internal
namespace testing {
class MemoryLogPeer;  // store/testing/memory_log_peer.h
}  // namespace testing

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
  ListenerRegistration SubscribeCommits(CommitListener listener) override;
  Status SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) override;
  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& session) override;
  ConsumerStore& consumers() override;
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override;
  ScheduleStore& schedules() override;
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

 private:
  friend class testing::MemoryLogPeer;

  std::unique_ptr<store_internal::MemoryLogState> state_;
  std::unique_ptr<store_internal::MemoryConsumerStore> consumers_;
  std::unique_ptr<store_internal::MemoryDeviceStore> devices_;
  std::unique_ptr<store_internal::MemoryScheduleStore> schedules_;
};

}  // namespace agentstream
