// Internal to the consumers module: the state and the threads behind ConsumerService
// (consumer_service.h). One job per file:
// - consumer_service.cc: the public calls, and the consumers' definitions (load, create, delete);
// - lane_scheduler.cc: which lanes are due (commit notices, rescans, back-off) and the workers
//   that step them;
// - lane_lease.cc: each lane's lease and the positions committed under it;
// - lane_delivery.cc: one step of a lane: plan, journal, send, acknowledge, retry or park.
//
// Locking: mu_ guards the maps, the queues and the fields of Entry and Lane marked so; the worker
// fields of a Lane belong to the one worker stepping it (Lane::scheduled).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "consumers/consumer_service.h"
#include "consumers/lane.h"
#include "consumers/sink.h"

namespace agentstream::consumers {

class ConsumerService::Impl {
 public:
  Impl(EventLog& log, ConsumerServiceOptions options, ParentAppender parent)
      : log_(log), options_(std::move(options)), parent_(std::move(parent)) {
    if (options_.workers < 1) options_.workers = 1;
  }

  ~Impl() { Stop(); }

  Status Start();
  void Stop();
  Result<ConsumerState> Create(ConsumerSpec spec);
  Result<std::vector<ConsumerState>> List();
  Result<ConsumerState> Get(const ConsumerId& id);
  Status Delete(const ConsumerId& id);
  Status Resume(const ConsumerId& id, const std::optional<SessionId>& session);

 private:
  using SteadyClock = std::chrono::steady_clock;
  using Millis = std::chrono::milliseconds;

  // What one step of a lane asks of the scheduler.
  enum class Next { kMore, kIdle, kRetry, kParked };
  struct StepOutcome {
    Next next = Next::kIdle;
    std::int64_t delay_ms = 0;  // kRetry
  };

  // One (consumer, session). The fields under "worker" belong to the worker running the lane (at
  // most one at a time: `scheduled`); the rest are guarded by mu_.
  struct Lane {
    explicit Lane(SessionId s) : session(std::move(s)) {}
    const SessionId session;
    // Guarded by mu_.
    bool scheduled = false;
    bool dirty = true;
    SteadyClock::time_point not_before{};
    bool resume = false;
    SessionProgress progress;
    TimestampMs pending_since_ms = 0;  // commit time of the oldest unacknowledged event
    // Worker.
    std::uint64_t generation = 0;
    TimestampMs lease_expires_ms = 0;
    Cursor position;
    LaneRecord record;
    int attempts = 0;
  };

  // One consumer and its lanes; guarded by mu_ (the sink is thread-safe).
  struct Entry {
    ConsumerSpec spec;
    std::shared_ptr<Sink> sink;
    std::map<SessionId, std::shared_ptr<Lane>> lanes;
    bool deleted = false;
    int running = 0;  // lanes being stepped
    std::uint64_t deliveries = 0, events_delivered = 0, failures = 0;
  };

  // The lane's next delivery after `from`, without journaling it.
  struct Planned {
    Cursor position;  // `from` in the session's current epoch (or past a range with nothing to
                      // deliver)
    std::optional<InflightPlan> plan;
    Delivery delivery;
    bool caught_up = false;
  };

  // A parent-session sink never reads its own parent: its appends would feed it forever.
  static bool Selects(const ConsumerSpec& spec, const SessionId& session,
                      const std::string& provider);

  // ---- Definitions (consumer_service.cc) ----
  Result<std::shared_ptr<Sink>> MakeSinkFor(const ConsumerSpec& spec);
  Status AddLocked(ConsumerSpec spec);
  ConsumerState StateLocked(const Entry& e) const;

  // ---- Scheduling (lane_scheduler.cc) ----
  void SchedulerLoop();
  void WorkerLoop();
  void Discover();
  void TrackLocked(Entry& e, const SessionInfo& info);
  void PushIfDueLocked(const std::shared_ptr<Entry>& e, const std::shared_ptr<Lane>& lane,
                       SteadyClock::time_point now);

  // ---- Leases (lane_lease.cc) ----
  // Positions every session `spec` selects at its tail (a consumer created "from now").
  Status PositionAtTails(const ConsumerSpec& spec);
  // Takes or renews the lane's lease when it has none or half of it has passed, and adopts the
  // stored position and record on a new grant. nullopt: the lane holds its lease; else what the
  // step ends with.
  std::optional<StepOutcome> KeepLease(Entry& e, Lane& lane);
  // Commits `position` and the lane's record under its lease and publishes the position; the
  // caller publishes the rest of the lane's progress together. kFenced drops the lease.
  Status Commit(Entry& e, Lane& lane, Cursor position);
  // Releases every lease the lanes hold; once the workers are gone.
  void ReleaseLeasesLocked();
  std::int64_t LeaseTtl(const Entry& e) const {
    // A lease must outlive one send: it is renewed between sends, not during one.
    return std::max(options_.lease_ttl_ms, 2 * e.spec.sink.timeout_ms);
  }

  // ---- Delivery (lane_delivery.cc) ----
  StepOutcome Step(Entry& e, Lane& lane);
  // Unparks the lane when Resume() asked; nullopt to go on with the step.
  std::optional<StepOutcome> ResumeIfAsked(Entry& e, Lane& lane);
  // Plans the next delivery into `d` and journals it; nullopt when `d` is ready to send.
  std::optional<StepOutcome> JournalNext(Entry& e, Lane& lane, Delivery& d);
  // Rebuilds the journaled delivery into `d`; nullopt when `d` is ready to send.
  std::optional<StepOutcome> ReplayJournaled(Entry& e, Lane& lane, Delivery& d);
  // Sends `d`, then commits the position, the sink's state and the next plan in one transaction.
  StepOutcome SendAndCommit(Entry& e, Lane& lane, const Delivery& d);
  Result<Planned> Plan(Entry& e, Lane& lane, Cursor from);
  // `retry_after_ms`: the sink's Retry-After; the next attempt waits at least that long.
  StepOutcome Fail(Entry& e, Lane& lane, const std::string& error, std::int64_t retry_after_ms = 0);
  std::int64_t Backoff(const RetryPolicy& retry, int attempts);

  TimestampMs Now() const { return system::Now(options_.clock); }
  // The scheduler's time (back-off, Retry-After, rescans, idle polls): the steady clock, or the
  // injected wall clock when one is set, so that a test stepping that clock steps these too.
  SteadyClock::time_point SchedulerNow() const {
    return options_.clock ? SteadyClock::time_point(Millis(options_.clock())) : SteadyClock::now();
  }

  EventLog& log_;
  ConsumerServiceOptions options_;
  ParentAppender parent_;

  std::mutex mu_;  // guards everything below
  std::condition_variable scheduler_cv_, worker_cv_, idle_cv_;
  std::map<ConsumerId, std::shared_ptr<Entry>> consumers_;
  std::map<SessionId, std::string> providers_;  // known sessions and their provider
  std::map<SessionId, Cursor> noticed_;  // sessions with commits not yet looked at, and tails
  bool resume_pending_ = false;
  bool rescan_ = true;
  // Lanes ready to step; each lane at most once (Lane::scheduled), so the queue is bounded by
  // the number of lanes.
  std::deque<std::pair<std::shared_ptr<Entry>, std::shared_ptr<Lane>>> ready_;
  bool started_ = false, stopping_ = false;
  std::thread scheduler_;
  std::vector<std::thread> workers_;
  ListenerRegistration subscription_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace agentstream::consumers
