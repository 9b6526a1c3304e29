// Test support: an EventLog (and its Coordination) that passes every call to another one, for
// tests that count, delay or fail some calls of a real backend. Override the calls of interest;
// the rest forward. The consumer, device, schedule, item and search stores are the inner log's
// own. Not thread-safe beyond what `inner` is. Only test binaries use it.
#pragma once

#include <atomic>
#include <cstddef>
#include <utility>

#include "store/event_log.h"

namespace agentstream::testing {

class ForwardingLog : public EventLog, public Coordination {
 public:
  explicit ForwardingLog(EventLog& inner) : inner_(inner) {}

  // ---- EventLog ----
  Result<AppendResult> CreateSession(const SessionId& id, SessionMeta meta,
                                     std::vector<NewEvent> initial) override {
    return inner_.CreateSession(id, std::move(meta), std::move(initial));
  }
  Result<AppendResult> Fork(const SessionId& parent, Cursor at, const SessionId& child,
                            SessionMeta meta, std::vector<NewEvent> initial) override {
    return inner_.Fork(parent, at, child, std::move(meta), std::move(initial));
  }
  Result<AppendResult> Rewind(const SessionId& session, Cursor to,
                              std::vector<NewEvent> initial) override {
    return inner_.Rewind(session, to, std::move(initial));
  }
  Result<SessionInfo> GetSession(const SessionId& id) override { return inner_.GetSession(id); }
  Result<std::vector<SessionInfo>> ListSessions(const std::string& after,
                                                std::size_t limit) override {
    return inner_.ListSessions(after, limit);
  }
  Status UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) override {
    return inner_.UpdateSessionMeta(id, update);
  }
  void AppendAsync(AppendRequest request, AppendCallback done) override {
    inner_.AppendAsync(std::move(request), std::move(done));
  }
  Result<ReadResult> Read(const ReadRequest& request) override { return inner_.Read(request); }
  Result<Cursor> Tail(const SessionId& session) override { return inner_.Tail(session); }
  ListenerRegistration SubscribeCommits(CommitListener listener) override {
    return inner_.SubscribeCommits(std::move(listener));
  }
  Status SaveCheckpoint(const SessionId& s, const Checkpoint& checkpoint) override {
    return inner_.SaveCheckpoint(s, checkpoint);
  }
  Result<std::optional<Checkpoint>> LoadCheckpoint(const SessionId& s) override {
    return inner_.LoadCheckpoint(s);
  }
  ConsumerStore& consumers() override { return inner_.consumers(); }
  Coordination& coordination() override { return *this; }
  DeviceStore& devices() override { return inner_.devices(); }
  ScheduleStore& schedules() override { return inner_.schedules(); }
  ItemIndexStore* item_index() override { return inner_.item_index(); }
  SearchIndexStore* search_index() override { return inner_.search_index(); }
  Status Health() override { return inner_.Health(); }
  LogStats Stats() override { return inner_.Stats(); }

  // ---- Coordination ----
  Result<OwnerGrant> AcquireOwnership(const SessionId& session, const std::string& owner,
                                      std::int64_t ttl_ms) override {
    return owners().AcquireOwnership(session, owner, ttl_ms);
  }
  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override {
    return owners().RenewOwnerships(owner, leases, ttl_ms);
  }
  Status ReleaseOwnership(const SessionId& session, std::uint64_t generation) override {
    return owners().ReleaseOwnership(session, generation);
  }
  Result<OwnerLease> GetOwnership(const SessionId& session) override {
    return owners().GetOwnership(session);
  }
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override {
    return owners().ListExpiredOwnerships(limit);
  }
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId& session) override {
    return owners().OwnershipHistory(session);
  }
  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override {
    return owners().Heartbeat(self, ttl_ms);
  }
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string& id) override {
    return owners().GetDaemon(id);
  }
  Result<std::string> SharedSecret(const std::string& name, const std::string& candidate) override {
    return owners().SharedSecret(name, candidate);
  }

 protected:
  EventLog& inner() { return inner_; }
  Coordination& owners() { return inner_.coordination(); }

 private:
  EventLog& inner_;
};

// Counts the reads and the events they returned (the events the caller then decodes), so a test
// can bound what a page or a load touches.
class ReadCountingLog : public ForwardingLog {
 public:
  using ForwardingLog::ForwardingLog;
  std::atomic<int> reads{0};
  std::atomic<std::size_t> events_read{0};

  Result<ReadResult> Read(const ReadRequest& request) override {
    ++reads;
    Result<ReadResult> read = ForwardingLog::Read(request);
    if (read.ok()) events_read += read->events.size();
    return read;
  }
};

}  // namespace agentstream::testing
