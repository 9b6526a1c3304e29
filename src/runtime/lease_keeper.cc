#include "runtime/lease_keeper.h"

#include <algorithm>

#include "system/wall_clock.h"

namespace agentstream::runtime {

LeaseKeeper::LeaseKeeper(Coordination& store, const process::Timers& clock,
                         OwnershipOptions options, Callbacks callbacks)
    : store_(store),
      clock_(clock),
      options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      started_ms_(system::Now(options_.clock)),
      url_(options_.url),
      thread_([this] { Loop(); }) {}

LeaseKeeper::~LeaseKeeper() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void LeaseKeeper::Track(const SessionId& session, std::uint64_t generation,
                        process::Clock::time_point granted_at) {
  std::lock_guard lock(mu_);
  tracked_[session] = Tracked{generation, granted_at};
}

void LeaseKeeper::Untrack(const SessionId& session, std::uint64_t generation) {
  std::lock_guard lock(mu_);
  auto it = tracked_.find(session);
  if (it != tracked_.end() && it->second.generation == generation) tracked_.erase(it);
}

std::vector<std::pair<SessionId, std::uint64_t>> LeaseKeeper::Overdue(
    process::Clock::time_point now) const {
  const process::Millis allowance = options_.ttl - std::min(options_.renew_every, options_.ttl);
  std::vector<std::pair<SessionId, std::uint64_t>> out;
  std::lock_guard lock(mu_);
  for (const auto& [session, tracked] : tracked_)
    if (now - tracked.renewed_at > allowance) out.emplace_back(session, tracked.generation);
  return out;
}

void LeaseKeeper::Poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  cv_.notify_all();
}

void LeaseKeeper::SetUrl(std::string url) {
  {
    std::lock_guard lock(mu_);
    url_ = std::move(url);
  }
  Poke();
}

// Rounds start every `renew_every` from the previous round's start, not its end: a round slowed
// by a busy store (a commit waiting on the disk) delays the next renewal by its own excess only,
// and a round longer than the period is followed by the next at once.
void LeaseKeeper::Loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const process::Clock::time_point started = clock_.Now();
    lock.unlock();
    Round();
    lock.lock();
    // A span rather than an instant of the steady clock: `clock_` may be a stepped one.
    cv_.wait_for(lock, started + options_.renew_every - clock_.Now(),
                 [this] { return stop_ || poked_; });
    poked_ = false;
  }
}

void LeaseKeeper::Round() {
  const process::Clock::time_point sent = clock_.Now();
  std::vector<std::pair<SessionId, std::uint64_t>> leases;
  std::string url;
  {
    std::lock_guard lock(mu_);
    for (const auto& [session, tracked] : tracked_)
      leases.emplace_back(session, tracked.generation);
    url = url_;
  }
  const std::int64_t ttl_ms = options_.ttl.count();
  if (!leases.empty()) {
    Result<std::vector<SessionId>> lost =
        store_.RenewOwnerships(options_.daemon_id, leases, ttl_ms);
    const auto took = std::chrono::duration_cast<process::Millis>(clock_.Now() - sent);
    // A failure changes nothing here: Overdue() stops the runtimes in time.
    renew_failures_.Report(lost.status(), {{"leases", leases.size()}});
    // Over the period, the margin before the runtimes stop by themselves (ttl - renew_every) is
    // being eaten: said once, until a renewal is on time again.
    const bool slow = lost.ok() && took > options_.renew_every;
    if (slow && !renew_slow_)
      log::Warn("ownership.renew_slow", {{"leases", leases.size()}, {"ms", took.count()}});
    renew_slow_ = slow;
    if (lost.ok()) {
      {
        std::lock_guard lock(mu_);
        for (const auto& [session, generation] : leases) {
          auto it = tracked_.find(session);
          const bool gone = std::find(lost->begin(), lost->end(), session) != lost->end();
          if (it != tracked_.end() && it->second.generation == generation && !gone)
            it->second.renewed_at = std::max(it->second.renewed_at, sent);
        }
      }
      if (!lost->empty()) callbacks_.lost(std::move(*lost));
    }
  }
  const DaemonRecord self{
      options_.daemon_id, url, options_.host, options_.data_dir, started_ms_, 0, 0};
  heartbeat_failures_.Report(store_.Heartbeat(self, ttl_ms));
  Result<std::vector<std::pair<SessionId, OwnerLease>>> expired =
      store_.ListExpiredOwnerships(options_.sweep_limit);
  if (expired.ok() && !expired->empty()) callbacks_.expired(std::move(*expired));
}

}  // namespace agentstream::runtime
