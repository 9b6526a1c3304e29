// ScheduleStore: the schedules that prompt agents on a clock (docs/automation.md, "Schedules"),
// kept in the log's store so that every daemon sharing a PostgreSQL store fires them, and one
// daemon at a time fires each: the holder of its lease.
//
// A schedule's definition (its cron expression or interval, its time zone, what it does) is a
// JSON object as text owned by the schedules module (server/schedules.h); the store keeps it
// whole. What the store adds is the schedule's progress, which makes each tick fire once:
//   - `last_tick_ms`: every tick at or before it is handled (fired, or skipped by policy);
//   - `pending_tick_ms`: the tick being fired. It is written before the firing's first step, so
//     a daemon that takes the schedule over after a crash fires that tick again under the same
//     idempotency key (which repeats nothing) before any other, and never skips it as missed;
//   - the firings: one row per tick (its time is the key), fired or skipped, the newest 100.
// Leases are judged by the clocks of the daemons that claim them (the `now_ms` given): a lease
// only saves work, the idempotency keys make a firing once.
//
// Threading: every method may be called from any thread and blocks for one store round trip.
// Errors: kNotFound for an unknown schedule, kUnavailable / kIoError as the log's writes,
// kInvalidArgument for text the store cannot hold.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/status.h"

namespace agentstream {

// A schedule, as stored.
struct ScheduleRecord {
  std::string id;          // 1 to 64 letters, digits, '_' and '-'
  std::string definition;  // a JSON object as text, at most 64 KiB (server/schedules.h)
  bool paused = false;
  TimestampMs created_ms = 0;
  TimestampMs updated_ms = 0;        // the last pause or resume
  TimestampMs last_tick_ms = 0;      // every tick at or before it is handled
  TimestampMs pending_tick_ms = 0;   // the tick being fired; 0: none
  std::string lease_owner;           // the daemon firing it; "" when nobody holds the lease
  TimestampMs lease_expires_ms = 0;  // by the clock of the daemon that claimed it
};

// One handled tick of a schedule (or a run of skipped ticks), as stored.
struct ScheduleFiring {
  std::string schedule_id;
  TimestampMs tick_ms = 0;        // the tick (the last one of a skipped run): the key
  TimestampMs first_tick_ms = 0;  // a skipped run's first tick; tick_ms otherwise
  std::int64_t ticks = 1;         // the ticks this row stands for (a skipped run: more than one)
  TimestampMs recorded_ms = 0;
  std::string outcome;            // "fired", "skipped" or "failed"
  std::string agent;              // fired: the agent prompted
  std::string client_message_id;  // fired: the prompt's client message id
  std::string turn_id;            // fired: the turn the prompt started or joined; "" if queued
  std::string detail;             // failed: the error; skipped: why. At most 1 KiB.
};

class ScheduleStore {
 public:
  // The firings kept per schedule: the newest, by tick.
  static constexpr std::size_t kKeptFirings = 100;

  virtual ~ScheduleStore() = default;

  // Stores a new schedule as given (no lease, no pending tick). kAlreadyExists for a taken id.
  virtual Status AddSchedule(const ScheduleRecord& schedule) = 0;
  // Every schedule, by id.
  virtual Result<std::vector<ScheduleRecord>> ListSchedules() = 0;
  virtual Result<ScheduleRecord> GetSchedule(const std::string& id) = 0;
  // Pauses or resumes it, and sets updated_ms = now_ms. Resuming also sets last_tick_ms to
  // max(last_tick_ms, now_ms): the ticks of the paused time are not missed ones, they are not
  // fired. Pausing or resuming again changes nothing. kNotFound.
  virtual Status SetSchedulePaused(const std::string& id, bool paused, TimestampMs now_ms) = 0;
  // Removes the schedule and its firings. kNotFound.
  virtual Status DeleteSchedule(const std::string& id) = 0;

  // Grants or renews the lease of the schedule to `owner` until now_ms + ttl_ms, when nobody
  // holds it, it expired at now_ms, or `owner` holds it already, and returns the schedule as it is
  // after the grant. kConflict, naming the holder, while another owner's lease is live at now_ms.
  // kNotFound.
  virtual Result<ScheduleRecord> ClaimSchedule(const std::string& id, const std::string& owner,
                                               TimestampMs now_ms, std::int64_t ttl_ms) = 0;
  // As the lease's holder `owner`, in one transaction: stores each of `firings` unless a firing
  // of the same schedule and tick_ms is stored already (that one is kept), sets last_tick_ms to
  // max(last_tick_ms, the given one) and pending_tick_ms to the given one (0 clears it), and
  // keeps the newest kKeptFirings firings. kConflict when `owner` no longer holds the lease (a
  // daemon took the schedule over: it fires the pending tick itself); kNotFound.
  virtual Status AdvanceSchedule(const std::string& id, const std::string& owner,
                                 TimestampMs last_tick_ms, TimestampMs pending_tick_ms,
                                 const std::vector<ScheduleFiring>& firings) = 0;
  // Frees the lease `owner` holds (a daemon that stops). Nothing when another holds it.
  virtual Status ReleaseSchedule(const std::string& id, const std::string& owner) = 0;
  // The newest `limit` firings of the schedule, newest tick first. An unknown schedule has none.
  virtual Result<std::vector<ScheduleFiring>> ListFirings(const std::string& id,
                                                          std::size_t limit) = 0;
};

}  // namespace agentstream
