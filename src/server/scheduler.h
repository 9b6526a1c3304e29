// Scheduler: fires the schedules of the store (schedule_store.h, schedules.h) at their ticks, on
// one daemon of several at a time (docs/automation.md, "Schedules"). A thread of its own, a round
// every `poll` and after each change:
//   1. lists the schedules; for each one not paused whose next tick came due (or that has a tick
//      pending), and whose lease no other daemon holds alive, claims its lease;
//   2. records the ticks missed beyond the grace as skipped (PlanTicks), then the tick to fire as
//      pending, then fires it under the key "schedule:ID:TICK" (FireAutomation: one agent, one
//      automation.fired event and one turn per key);
//   3. records the firing (the turn, or the error) and clears the pending tick.
// A crash at any instant leaves the tick pending or handled: the daemon that takes the lease over
// fires a pending tick again under the same key, which repeats nothing.
//
// Threading: Poke and Stop from any thread. FireAutomation's callbacks, on the manager's thread,
// only queue their result for the scheduler's thread, which makes every store call.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "runtime/agent_manager.h"
#include "server/schedules.h"
#include "store/schedule_store.h"
#include "system/wall_clock.h"

namespace agentstream::server {

class WorkspaceRoutes;

struct SchedulerOptions {
  std::string daemon_id = "local";  // the lease owner's name (the daemon's id)
  std::chrono::milliseconds poll{1000};
  // A schedule's lease lasts this long after its claim; a daemon killed while it holds one delays
  // its schedule's ticks by at most this much (well within kScheduleGraceMs).
  std::int64_t lease_ttl_ms = 20'000;
  system::WallClock clock;  // empty: the system's
};

class Scheduler {
 public:
  // `store`, `agents` and `workspaces` (may be null) outlive the scheduler. Starts the thread.
  Scheduler(ScheduleStore& store, runtime::AgentManager& agents, WorkspaceRoutes* workspaces,
            SchedulerOptions options);
  ~Scheduler();  // Stop()
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs a round now (a schedule was made or resumed).
  void Poke();
  // Joins the thread and frees the leases held. A firing in flight stays pending in the store:
  // the next daemon to claim the schedule fires it again under its key. Idempotent.
  void Stop();

 private:
  struct Shared;
  struct Finished;
  void Loop();
  void Round();
  void Start(const ScheduleDefinition& schedule, const ScheduleRecord& record);
  void Finish(const Finished& finished);
  const ScheduleDefinition* Definition(const ScheduleRecord& record);
  TimestampMs Now() const;

  ScheduleStore& store_;
  runtime::AgentManager& agents_;
  WorkspaceRoutes* workspaces_;
  SchedulerOptions options_;
  std::shared_ptr<Shared> shared_;  // the queue FireAutomation's callbacks post to
  // The scheduler thread's own.
  std::map<std::string, std::pair<std::string, ScheduleDefinition>> definitions_;  // by id
  std::map<std::string, std::string> unreadable_;  // id -> the definition that did not parse
  std::set<std::string> in_flight_;
  std::set<std::string> held_;  // schedules whose lease this daemon claimed
  std::string list_error_;      // the last error of listing the schedules, logged once
  std::thread thread_;
};

}  // namespace agentstream::server
