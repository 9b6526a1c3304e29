#include "store/memory_log.h"

#include <chrono>
#include <map>

#include "store/log_state.h"
#include "store/memory_consumer_store.h"
#include "store/memory_device_store.h"
#include "store/memory_log_state.h"
#include "store/memory_schedule_store.h"
#include "system/wall_clock.h"

namespace agentstream {

using store_internal::AppendPlan;
using store_internal::SessionState;
using store_internal::StoredRow;

using store_internal::MemoryLogState;

namespace {

// Stores `events` as the seqs from `first` of (session, epoch); with state.mu held.
void StoreEvents(MemoryLogState& state, const std::string& session, Epoch epoch, Seq first,
                 std::vector<NewEvent>& events, std::uint64_t owner_generation = 0) {
  state.stats.events += events.size();
  auto& vec = state.rows[{session, epoch.value()}];
  const TimestampMs now = system::WallClockMs();
  Seq seq = first;
  for (auto& e : events) {
    EventRecord r{SessionId(session),
                  epoch,
                  seq,
                  now,
                  static_cast<std::uint16_t>(e.kind),
                  std::move(e.turn),
                  kEventFormatVersion,
                  std::move(e.payload),
                  owner_generation};
    const auto checksum = store_internal::RecordChecksum(r);
    vec.push_back(StoredRow{std::move(r), checksum});
    seq = seq.next();
  }
}

SessionInfo InfoOf(const std::string& id, const SessionState& s) {
  OwnerLease owner = s.owner;
  owner.now_ms = system::WallClockMs();
  return SessionInfo{SessionId(id),        s.meta,        s.current(),
                     s.epochs.back().tail, s.forked_from, std::move(owner)};
}

}  // namespace

MemoryEventLog::MemoryEventLog(LogLimits limits)
    : state_(std::make_unique<MemoryLogState>(limits)),
      consumers_(std::make_unique<store_internal::MemoryConsumerStore>(*state_)),
      devices_(std::make_unique<store_internal::MemoryDeviceStore>(*state_)),
      schedules_(std::make_unique<store_internal::MemoryScheduleStore>(*state_)) {}
MemoryEventLog::~MemoryEventLog() = default;

Result<AppendResult> MemoryEventLog::CreateSession(const SessionId& id, SessionMeta meta,
                                                   std::vector<NewEvent> initial) {
  if (id.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, state_->limits, true));
  CommitNotice notice;
  AppendResult result;
  {
    std::lock_guard lock(state_->mu);
    AS_RETURN_IF_ERROR(state_->CheckWritable());
    if (state_->sessions.count(id.str())) {
      return Error(ErrorCode::kAlreadyExists, "session " + id.str() + " exists");
    }
    AS_RETURN_IF_ERROR(state_->Commit());
    SessionState& s = state_->sessions[id.str()];
    s.meta = store_internal::NewSessionMeta(std::move(meta), initial, system::WallClockMs());
    s.epochs.push_back({});
    result = AppendResult{Epoch(1), Seq(1), Seq(initial.size()), false};
    s.epochs.back().tail = Seq(initial.size());
    StoreEvents(*state_, id.str(), Epoch(1), Seq(1), initial);
    notice = CommitNotice{id, Epoch(1), s.epochs.back().tail};
  }
  state_->listeners->Notify(notice);
  return result;
}

Result<AppendResult> MemoryEventLog::Fork(const SessionId& parent, Cursor at,
                                          const SessionId& child, SessionMeta meta,
                                          std::vector<NewEvent> initial) {
  if (child.empty()) return Error(ErrorCode::kInvalidArgument, "a session id must not be empty");
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, state_->limits, true));
  CommitNotice notice;
  AppendResult result;
  {
    std::lock_guard lock(state_->mu);
    AS_RETURN_IF_ERROR(state_->CheckWritable());
    auto it = state_->sessions.find(parent.str());
    if (it == state_->sessions.end())
      return Error(ErrorCode::kNotFound, "no session " + parent.str());
    AS_RETURN_IF_ERROR(store_internal::CheckPrefix(it->second, parent, at));
    if (state_->sessions.count(child.str())) {
      return Error(ErrorCode::kAlreadyExists, "session " + child.str() + " exists");
    }
    AS_RETURN_IF_ERROR(state_->Commit());
    SessionState& s = state_->sessions[child.str()];
    HistoryBase base{parent, at.epoch, at.seq};
    s.meta = store_internal::NewSessionMeta(std::move(meta), initial, system::WallClockMs());
    s.forked_from = base;
    s.epochs.push_back(store_internal::ContinueFrom(base));
    result = AppendResult{Epoch(1), at.seq.next(), Seq(at.seq.value() + initial.size()), false};
    s.epochs.back().tail = result.last_seq;
    StoreEvents(*state_, child.str(), Epoch(1), result.first_seq, initial);
    notice = CommitNotice{child, Epoch(1), result.last_seq};
  }
  state_->listeners->Notify(notice);
  return result;
}

Result<AppendResult> MemoryEventLog::Rewind(const SessionId& session, Cursor to,
                                            std::vector<NewEvent> initial) {
  AS_RETURN_IF_ERROR(store_internal::CheckBatch(initial, state_->limits, true));
  CommitNotice notice;
  AppendResult result;
  {
    std::lock_guard lock(state_->mu);
    AS_RETURN_IF_ERROR(state_->CheckWritable());
    auto it = state_->sessions.find(session.str());
    if (it == state_->sessions.end())
      return Error(ErrorCode::kNotFound, "no session " + session.str());
    SessionState& s = it->second;
    AS_RETURN_IF_ERROR(store_internal::CheckPrefix(s, session, to));
    AS_RETURN_IF_ERROR(state_->Commit());
    s.epochs.push_back(store_internal::ContinueFrom(HistoryBase{session, to.epoch, to.seq}));
    s.producers.clear();  // producers are per epoch of history
    const Epoch epoch = s.current();
    result = AppendResult{epoch, to.seq.next(), Seq(to.seq.value() + initial.size()), false};
    s.epochs.back().tail = result.last_seq;
    if (auto meta = store_internal::MetaAfter(s.meta, initial)) s.meta = std::move(*meta);
    StoreEvents(*state_, session.str(), epoch, result.first_seq, initial);
    notice = CommitNotice{session, epoch, result.last_seq};
  }
  state_->listeners->Notify(notice);
  return result;
}

Result<SessionInfo> MemoryEventLog::GetSession(const SessionId& id) {
  std::lock_guard lock(state_->mu);
  auto it = state_->sessions.find(id.str());
  if (it == state_->sessions.end()) return Error(ErrorCode::kNotFound, "no session " + id.str());
  return InfoOf(it->first, it->second);
}

Result<std::vector<SessionInfo>> MemoryEventLog::ListSessions(const std::string& after,
                                                              std::size_t limit) {
  std::lock_guard lock(state_->mu);
  std::vector<SessionInfo> out;
  for (auto it = state_->sessions.upper_bound(after);
       it != state_->sessions.end() && out.size() < limit; ++it) {
    out.push_back(InfoOf(it->first, it->second));
  }
  return out;
}

Status MemoryEventLog::UpdateSessionMeta(const SessionId& id, const SessionMetaUpdate& update) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  auto it = state_->sessions.find(id.str());
  if (it == state_->sessions.end()) return Error(ErrorCode::kNotFound, "no session " + id.str());
  AS_RETURN_IF_ERROR(store_internal::CheckOwner(it->second, id, update.owner_generation));
  SessionMeta& meta = it->second.meta;
  if (update.persistence_handle) meta.persistence_handle = *update.persistence_handle;
  if (update.status_snapshot) meta.status_snapshot = *update.status_snapshot;
  return Status::Ok();
}

void MemoryEventLog::AppendAsync(AppendRequest request, AppendCallback done) {
  Status checked = store_internal::CheckBatch(request.events, state_->limits, false);
  if (!checked.ok()) return done(checked);
  CommitNotice notice;
  AppendResult result;
  {
    std::lock_guard lock(state_->mu);
    if (Status s = state_->CheckWritable(); !s.ok()) return done(s);
    auto it = state_->sessions.find(request.session.str());
    if (it == state_->sessions.end()) {
      return done(Error(ErrorCode::kNotFound, "no session " + request.session.str()));
    }
    auto plan = store_internal::PlanAppend(it->second, request);
    if (!plan.ok()) return done(plan.status());
    result = plan->result;
    if (!result.duplicate) {
      if (Status s = state_->Commit(); !s.ok()) return done(s);
      store_internal::ApplyAppend(it->second, *plan);
      StoreEvents(*state_, request.session.str(), result.epoch, result.first_seq, request.events,
                  request.owner_generation.value_or(0));
    }
    notice = CommitNotice{request.session, result.epoch, it->second.epochs.back().tail};
  }
  if (!result.duplicate) state_->listeners->Notify(notice);
  {
    std::lock_guard lock(state_->mu);
    ++state_->stats.appends;
  }
  done(result);
}

Result<ReadResult> MemoryEventLog::Read(const ReadRequest& request) {
  std::lock_guard lock(state_->mu);
  auto it = state_->sessions.find(request.session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + request.session.str());
  const Epoch epoch = request.epoch.value_or(it->second.current());
  const auto* es = it->second.epoch(epoch);
  if (es == nullptr) {
    return Error(ErrorCode::kNotFound,
                 request.session.str() + " has no epoch " + std::to_string(epoch.value()));
  }
  auto lookup = [&](const SessionId& s, Epoch e) -> Result<std::optional<HistoryBase>> {
    auto found = state_->sessions.find(s.str());
    const auto* ep = found == state_->sessions.end() ? nullptr : found->second.epoch(e);
    if (ep == nullptr)
      return Error(ErrorCode::kCorruption, "history refers to a missing epoch of " + s.str());
    return ep->base;
  };
  AS_ASSIGN_OR_RETURN(auto segments,
                      store_internal::ResolveSegments(request.session, epoch, es->tail, lookup));
  auto reader = [&](const store_internal::Segment& seg, Seq lo, Seq hi, bool backward,
                    std::size_t limit, std::vector<StoredRow>& out) -> Status {
    const auto& vec = state_->rows[{seg.session.str(), seg.epoch.value()}];
    const std::uint64_t base = seg.lo.value() - 1;  // rows[0] holds seq base + 1
    std::uint64_t a = lo.value(), b = hi.value();
    if (backward && b - a + 1 > limit) a = b - limit + 1;
    if (!backward && b - a + 1 > limit) b = a + limit - 1;
    for (std::uint64_t seq = a; seq <= b; ++seq) {
      const std::uint64_t index = seq - base - 1;
      if (index >= vec.size()) break;
      out.push_back(vec[index]);
    }
    return Status::Ok();
  };
  return store_internal::ReadSegments(request, request.session, epoch, es->tail, segments,
                                      state_->limits, reader);
}

Result<Cursor> MemoryEventLog::Tail(const SessionId& session) {
  std::lock_guard lock(state_->mu);
  auto it = state_->sessions.find(session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  return Cursor{it->second.current(), it->second.epochs.back().tail};
}

ListenerRegistration MemoryEventLog::SubscribeCommits(CommitListener listener) {
  return state_->listeners->Add(std::move(listener));
}

Status MemoryEventLog::SaveCheckpoint(const SessionId& session, const Checkpoint& checkpoint) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  auto it = state_->sessions.find(session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  AS_RETURN_IF_ERROR(
      store_internal::CheckCheckpoint(it->second, session, checkpoint, state_->limits));
  state_->checkpoints[session.str()] = checkpoint;
  return Status::Ok();
}

Result<std::optional<Checkpoint>> MemoryEventLog::LoadCheckpoint(const SessionId& session) {
  std::lock_guard lock(state_->mu);
  if (!state_->sessions.count(session.str()))
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  auto it = state_->checkpoints.find(session.str());
  if (it == state_->checkpoints.end()) return std::optional<Checkpoint>();
  return std::optional<Checkpoint>(it->second);
}

ConsumerStore& MemoryEventLog::consumers() { return *consumers_; }

DeviceStore& MemoryEventLog::devices() { return *devices_; }
ScheduleStore& MemoryEventLog::schedules() { return *schedules_; }

Result<OwnerGrant> MemoryEventLog::AcquireOwnership(const SessionId& session,
                                                    const std::string& owner, std::int64_t ttl_ms) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  auto it = state_->sessions.find(session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  const TimestampMs now = system::WallClockMs();
  AS_ASSIGN_OR_RETURN(OwnerGrant grant,
                      store_internal::GrantOwnership(it->second, session, owner, now, ttl_ms));
  state_->owner_history[session.str()].push_back(
      OwnershipRecord{grant.lease.generation, owner, now,
                      Cursor{it->second.current(), it->second.epochs.back().tail}});
  return grant;
}

Result<std::vector<SessionId>> MemoryEventLog::RenewOwnerships(
    const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
    std::int64_t ttl_ms) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  const TimestampMs now = system::WallClockMs();
  std::vector<SessionId> lost;
  for (const auto& [session, generation] : leases) {
    auto it = state_->sessions.find(session.str());
    if (it == state_->sessions.end() ||
        !store_internal::RenewOwnership(it->second, owner, generation, now, ttl_ms))
      lost.push_back(session);
  }
  return lost;
}

Status MemoryEventLog::ReleaseOwnership(const SessionId& session, std::uint64_t generation) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  auto it = state_->sessions.find(session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  return store_internal::ReleaseOwnership(it->second, session, generation);
}

Result<OwnerLease> MemoryEventLog::GetOwnership(const SessionId& session) {
  std::lock_guard lock(state_->mu);
  auto it = state_->sessions.find(session.str());
  if (it == state_->sessions.end())
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  OwnerLease lease = it->second.owner;
  lease.now_ms = system::WallClockMs();
  return lease;
}

Result<std::vector<std::pair<SessionId, OwnerLease>>> MemoryEventLog::ListExpiredOwnerships(
    std::size_t limit) {
  std::lock_guard lock(state_->mu);
  const TimestampMs now = system::WallClockMs();
  std::vector<std::pair<SessionId, OwnerLease>> out;
  for (const auto& [id, s] : state_->sessions) {
    if (out.size() >= limit) break;
    if (s.owner.owner.empty() || s.owner.expires_ms > now) continue;
    OwnerLease lease = s.owner;
    lease.now_ms = now;
    out.emplace_back(SessionId(id), std::move(lease));
  }
  return out;
}

Result<std::vector<OwnershipRecord>> MemoryEventLog::OwnershipHistory(const SessionId& session) {
  std::lock_guard lock(state_->mu);
  if (!state_->sessions.count(session.str()))
    return Error(ErrorCode::kNotFound, "no session " + session.str());
  auto it = state_->owner_history.find(session.str());
  if (it == state_->owner_history.end()) return std::vector<OwnershipRecord>{};
  return it->second;
}

Status MemoryEventLog::Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) {
  std::lock_guard lock(state_->mu);
  AS_RETURN_IF_ERROR(state_->CheckWritable());
  const TimestampMs now = system::WallClockMs();
  DaemonRecord& stored = state_->daemons[self.id];
  AS_RETURN_IF_ERROR(store_internal::CheckDaemonIdentity(stored, self, now, ttl_ms));
  stored = self;
  stored.heartbeat_ms = now;
  return Status::Ok();
}

Result<std::optional<DaemonRecord>> MemoryEventLog::GetDaemon(const std::string& id) {
  std::lock_guard lock(state_->mu);
  auto it = state_->daemons.find(id);
  if (it == state_->daemons.end()) return std::optional<DaemonRecord>();
  DaemonRecord record = it->second;
  record.now_ms = system::WallClockMs();
  return std::optional<DaemonRecord>(std::move(record));
}

Result<std::string> MemoryEventLog::SharedSecret(const std::string& name, const std::string&) {
  return Error(ErrorCode::kUnavailable,
               "the in-memory store keeps no shared secrets (asked for " + name + ")");
}

Status MemoryEventLog::Health() {
  std::lock_guard lock(state_->mu);
  return state_->CheckWritable();
}

LogStats MemoryEventLog::Stats() {
  std::lock_guard lock(state_->mu);
  return state_->stats;
}

}  // namespace agentstream
