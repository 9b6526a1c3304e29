// Restart recovery and takeover (docs/architecture.md, "Restart recovery", "Agent ownership"):
// sessions a stopped runtime left with open turns or queued prompts are taken over by whichever
// daemon can take their lease, at start-up (this daemon's own earlier run) and whenever the lease
// keeper finds a lease its owner stopped renewing. Also what the keeper reports about this
// daemon's own leases: lost ones and ones gone unrenewed too long stop their runtimes.
#include <algorithm>

#include "core/turn/engine.h"
#include "log/log.h"
#include "runtime/manager_impl.h"

namespace agentstream::runtime {

namespace {

// RecoverRefused tries again after 250 ms, then twice as long each time, up to every 10 s, while
// the store refuses; the reason the failed turns give keeps the first line of the store's error,
// at most this long.
constexpr process::Millis kRefusedRetryFirst{250};
constexpr process::Millis kRefusedRetryMax{10000};
constexpr std::size_t kRefusedReasonBytes = 300;

}  // namespace

void AgentManager::Impl::Recover(const StatusCallback& done) {
  Status first_error;
  std::string after;
  while (true) {
    Result<std::vector<SessionInfo>> page = log_.ListSessions(after, kListPage);
    if (!page.ok()) return done(page.status());
    for (const SessionInfo& info : *page) {
      if (agents_.count(info.id)) continue;
      if (!MayHaveOpenTurn(DecodeStatusRecord(info.meta.status_snapshot))) continue;
      // Another live daemon runs it: its turns are not ours to close.
      if (info.owner.live() && info.owner.owner != options_.ownership.daemon_id) continue;
      Status s = TakeOver(info.id);
      if (!s.ok() && first_error.ok()) {
        first_error = Status(s.code(), "recovering " + info.id.str() + ": " + s.message());
      }
    }
    if (page->size() < kListPage) break;
    after = page->back().id.str();
  }
  done(first_error);
}

Result<OwnerGrant> AgentManager::Impl::Acquire(const SessionId& id) {
  Result<OwnerGrant> grant =
      coordination().AcquireOwnership(id, options_.ownership.daemon_id, ttl_ms());
  if (grant.ok() && !grant->previous.owner.empty() &&
      grant->previous.owner != options_.ownership.daemon_id) {
    log::Info("ownership.takeover", {{"agent", id.str()},
                                     {"from", grant->previous.owner},
                                     {"generation", grant->lease.generation}});
  }
  return grant;
}

Status AgentManager::Impl::TakeOver(const SessionId& id, const turn::RecoverAfterRestart* why) {
  if (shut_down_ || Live(id)) return Status::Ok();
  const process::Clock::time_point sent = Now();
  Result<OwnerGrant> grant = Acquire(id);
  if (!grant.ok()) {
    // Held by a live daemon (it took the session first, or renewed in time): not ours.
    return grant.status().code() == ErrorCode::kConflict ? Status::Ok() : grant.status();
  }
  keeper_->Track(id, grant->lease.generation, sent);
  AS_ASSIGN_OR_RETURN(SessionInfo info, log_.GetSession(id));
  Result<HistoryFold> history = LoadHistory(log_, id, info.epoch, Seq(0), info.meta.provider);
  if (!history.ok()) {
    Release(id, grant->lease.generation);
    return history.status();
  }
  const turn::TurnState& state = history->turns.state();
  const bool queued = !state.queue.empty() || state.pending_after_teardown.has_value();
  if (queued && !DecodeStatusRecord(info.meta.status_snapshot).closed) {
    // Prompts wait: they run here, after the runtime closed what was left open.
    AS_ASSIGN_OR_RETURN(std::shared_ptr<LiveAgent> agent, Attach(id, *grant, sent));
    (void)agent;
    return Status::Ok();
  }
  Result<turn::TurnState> recovered = RecoverWith(info, *grant, std::move(*history), why);
  Release(id, grant->lease.generation);
  return recovered.status();
}

Result<turn::TurnState> AgentManager::Impl::RecoverWith(const SessionInfo& info,
                                                        const OwnerGrant& grant,
                                                        HistoryFold history,
                                                        const turn::RecoverAfterRestart* why) {
  const std::optional<std::string> model = history.model, mode = history.mode;
  // Saves the next load the reading (the terminals appended below are few).
  if (history.events_read >= kCheckpointEvery)
    (void)SaveHistoryCheckpoint(log_, info.id, info.epoch, history);
  turn::TurnState state = std::move(history.turns).Finish();
  const std::uint64_t generation = grant.lease.generation;
  if (!state.open.empty()) {
    const turn::RecoverAfterRestart recovery =
        RecoveryFor(grant, options_.ownership.daemon_id, why);
    const std::size_t open_turns = state.open.size();
    turn::Step step = turn::Advance(std::move(state), turn::Command(recovery), turn_ids_);
    if (!step.events.empty()) {
      AppendRequest request;
      request.session = info.id;
      request.epoch = info.epoch;
      request.events = std::move(step.events);
      request.owner_generation = generation;
      AS_RETURN_IF_ERROR(log_.Append(std::move(request)).status());
    }
    log::Info("agent.recovered",
              {{"agent", info.id.str()}, {"open_turns", open_turns}, {"code", recovery.code}});
    state = std::move(step.state);
  }
  StatusRecord record = DecodeStatusRecord(info.meta.status_snapshot);
  record.status = turn::SessionStatusOf(state);
  record.queued = state.queue_held && !record.closed;
  if (record.model.empty()) record.model = model.value_or("");
  if (record.mode.empty()) record.mode = mode.value_or("");
  AS_RETURN_IF_ERROR(log_.UpdateSessionMeta(
      info.id, SessionMetaUpdate{std::nullopt, EncodeStatusRecord(record), generation}));
  if (Result<api::AgentSnapshot> snapshot = Get(info.id); snapshot.ok())
    Notify(AgentNotice::Kind::kStatus, *snapshot, "");
  return state;
}

void AgentManager::Impl::RecoverRefused(const SessionId& id, const Status& refused, int attempt) {
  if (attempt == 0) {
    const std::string& why = refused.message();
    turn::RecoverAfterRestart recovery{
        "append_failed",
        "its runtime stopped: " + why.substr(0, std::min(why.find('\n'), kRefusedReasonBytes))};
    if (!refused_.emplace(id, std::move(recovery)).second) return;  // already being retried
  }
  auto it = refused_.find(id);
  if (it == refused_.end()) return;
  // A command that loaded the session meanwhile closed them (Attach).
  if (shut_down_ || Live(id) || TakeOver(id, &it->second).ok()) {
    refused_.erase(id);
    return;
  }
  const process::Millis delay =
      std::min<process::Millis>(kRefusedRetryMax, kRefusedRetryFirst * (1 << std::min(attempt, 8)));
  After(delay, [this, id, refused, attempt] { RecoverRefused(id, refused, attempt + 1); });
}

void AgentManager::Impl::OnLeasesLost(const std::vector<SessionId>& lost) {
  for (const SessionId& id : lost) {
    std::shared_ptr<LiveAgent> agent = Live(id);
    if (agent) agent->Fence("another daemon took its lease over");
  }
}

void AgentManager::Impl::OnLeasesExpired(
    const std::vector<std::pair<SessionId, OwnerLease>>& expired) {
  for (const auto& [id, lease] : expired) {
    if (Live(id)) continue;  // ours: CheckOverdue stops it if it is overdue
    (void)TakeOver(id);      // a failure leaves the lease expired: the next round tries again
  }
}

void AgentManager::Impl::CheckOverdue() {
  const process::Clock::time_point now = Now();
  for (const auto& [id, generation] : keeper_->Overdue(now)) {
    std::shared_ptr<LiveAgent> agent = Live(id);
    if (agent && agent->generation() == generation) {
      agent->Fence(
          "its lease went unrenewed for " +
          std::to_string((options_.ownership.ttl - options_.ownership.renew_every).count()) +
          " ms, so another daemon may take it over");
    }
    if (!agent || agent->generation() == generation) keeper_->Untrack(id, generation);
  }
  const process::Millis every = std::max(process::Millis(50), options_.ownership.renew_every / 4);
  std::weak_ptr<bool> alive = alive_;
  overdue_timer_ = timers().After(every, [this, alive] {
    if (alive.lock()) CheckOverdue();
  });
}

}  // namespace agentstream::runtime
