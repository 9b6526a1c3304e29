// LeaseKeeper: keeps the ownership leases of the runtimes this daemon runs (store/coordination.h,
// docs/architecture.md "Agent ownership"). A thread of its own, a round every `renew_every`
// (counted from the previous round's start):
//   1. renews every tracked lease in one store call, and reports the leases that were lost;
//   2. refreshes this daemon's registry entry (its id, advertised URL, heartbeat);
//   3. lists leases other daemons stopped renewing (their runtimes are gone), for takeover.
// Store calls block this thread only, never the manager's loop, so a slow or unreachable store
// cannot freeze the agents; Overdue() tells the loop, from the last renewals that succeeded,
// which runtimes must stop before their lease may expire.
//
// Threading: Track, Untrack and Overdue may be called from any thread. The callbacks run on the
// keeper's thread; they must only post work elsewhere.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "log/log.h"
#include "process/event_loop.h"
#include "store/coordination.h"
#include "system/wall_clock.h"

namespace agentstream::runtime {

struct OwnershipOptions {
  std::string daemon_id = "local";  // unique among the daemons sharing the store
  std::string url;                  // advertised base URL other daemons forward to ("": none)
  std::string host;                 // registered with the id, so that no other daemon claims it
  std::string data_dir;
  // A lease lasts `ttl` after its grant or last renewal (by the store's clock); it is renewed
  // every `renew_every`. A runtime whose lease went unrenewed for ttl - renew_every stops by
  // itself, so it is gone before another daemon may take the lease over.
  process::Millis ttl{10000};
  process::Millis renew_every{3000};
  std::size_t sweep_limit = 64;  // expired leases taken over per round
  // The wall clock of the daemon's start time in its registry entry; empty: the system's.
  system::WallClock clock;
};

class LeaseKeeper {
 public:
  struct Callbacks {
    std::function<void(std::vector<SessionId> lost)> lost;
    std::function<void(std::vector<std::pair<SessionId, OwnerLease>> expired)> expired;
  };

  // `store` and `clock` must outlive the keeper. `clock` is the steady time of the renewals, of
  // Track's `granted_at` and of Overdue's `now` (the manager's timers); its Now() is read on the
  // keeper's thread. Rounds follow one another `renew_every` apart on that clock, waiting in real
  // time for what remains of the period: a test stepping the clock by hand runs rounds by Poke().
  // Starts the thread; the first round runs at once.
  LeaseKeeper(Coordination& store, const process::Timers& clock, OwnershipOptions options,
              Callbacks callbacks);
  ~LeaseKeeper();  // stops and joins the thread
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Starts renewing `generation` of `session`, granted by a request sent at `granted_at`.
  void Track(const SessionId& session, std::uint64_t generation,
             process::Clock::time_point granted_at);
  // Stops renewing it (a no-op when another generation is tracked).
  void Untrack(const SessionId& session, std::uint64_t generation);
  // The tracked leases whose last successful renewal (or grant) was asked for more than
  // ttl - renew_every before `now`, with their generations.
  std::vector<std::pair<SessionId, std::uint64_t>> Overdue(process::Clock::time_point now) const;
  // Runs a round now rather than at the next period.
  void Poke();
  // The URL registered from the next round on (known once the server listens).
  void SetUrl(std::string url);

  const OwnershipOptions& options() const { return options_; }

 private:
  struct Tracked {
    std::uint64_t generation = 0;
    process::Clock::time_point renewed_at;  // when the last successful renewal was sent
  };
  void Loop();
  void Round();

  Coordination& store_;
  const process::Timers& clock_;
  const OwnershipOptions options_;
  const Callbacks callbacks_;
  const TimestampMs started_ms_;
  mutable std::mutex mu_;  // guards tracked_, stop_, poked_, url_
  std::string url_;
  std::condition_variable cv_;
  std::map<SessionId, Tracked> tracked_;
  bool stop_ = false;
  bool poked_ = false;
  bool renew_slow_ = false;                                             // the thread's
  log::RepeatedFailure renew_failures_{"ownership.renew_failed"};       // the thread's
  log::RepeatedFailure heartbeat_failures_{"daemon.heartbeat_failed"};  // the thread's
  std::thread thread_;
};

}  // namespace agentstream::runtime
