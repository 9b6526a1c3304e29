// Schedules (docs/automation.md, "Schedules"): a cron expression in a time zone, or an interval,
// that prompts an agent, or a new agent made from a template, at each tick. This file holds the
// pure parts: a schedule's definition (what POST /v1/schedules takes, and the JSON text the
// ScheduleStore keeps), its ticks, and the plan of what a daemon does with the ticks that came
// due. The Scheduler (scheduler.h) fires them.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"
#include "server/cron.h"
#include "server/triggers.h"
#include "store/schedule_store.h"

namespace agentstream::server {

// What becomes of the ticks no daemon fired in time (all daemons down, the store unreachable).
enum class MissedPolicy {
  kSkip,     // recorded as skipped; the schedule goes on at its next tick
  kRunOnce,  // the newest of them fires once; the others are recorded as skipped
};

struct ScheduleDefinition {
  std::string id;  // 1 to 64 letters, digits, '_' and '-'
  // One of the two: a cron expression read in `zone`, or a period counted from the schedule's
  // creation.
  std::optional<CronExpression> cron;
  TimeZone zone = TimeZone::Utc();
  std::int64_t every_ms = 0;
  // Where the prompt goes: an existing agent, or a new agent per tick.
  std::optional<SessionId> agent;
  std::optional<AgentTemplate> create;
  std::string prompt;  // a template over the tick's fields (TickFields)
  MissedPolicy missed = MissedPolicy::kSkip;
};

// The shortest time between two ticks a daemon takes by default (serve --schedule-floor).
inline constexpr std::int64_t kDefaultScheduleFloorMs = 60'000;
// A tick not fired within this time of its time is missed (its schedule's MissedPolicy).
inline constexpr std::int64_t kScheduleGraceMs = 60'000;
inline constexpr std::size_t kMaxSchedules = 1000;

// Reads a definition: {"id", "cron" + "timezone"? | "every", "agent" | "template", "prompt",
// "missed"?} ("every": a whole number of seconds, minutes, hours or days, "90s", "15m", "2h",
// "1d"). kInvalidArgument naming the member: an unknown member, both or neither of cron and
// every, a cron expression that does not parse or never fires, ticks closer than `floor_ms`
// (checked over the next 64 ticks after `now_ms`), an unknown time zone, both or neither of
// agent and template, a template that does not parse.
Result<ScheduleDefinition> ParseSchedule(const boost::json::value& body, std::int64_t floor_ms,
                                         TimestampMs now_ms);
// "90s", "15m", "2h", "1d": a whole number of seconds, minutes, hours or days, in ms.
// kInvalidArgument for anything else, 0, or more than ten years.
Result<std::int64_t> ParseInterval(std::string_view text);

// The definition as ParseSchedule reads it: the text the store keeps.
boost::json::object ScheduleToJson(const ScheduleDefinition& schedule);

// The first tick strictly after `after_ms` (an interval's ticks are created_ms + k * every_ms), or
// nullopt when there is none within ten years.
std::optional<TimestampMs> NextTick(const ScheduleDefinition& schedule, TimestampMs created_ms,
                                    TimestampMs after_ms);

// What a daemon that holds a schedule's lease does at `now_ms` with the ticks after
// `record.last_tick_ms` (the creation time for a new schedule):
//   - a tick is due once its time has come; a due tick is missed when it is more than
//     kScheduleGraceMs old;
//   - the oldest due tick that is not missed fires (`fire`): one at a time, in order;
//   - the missed ticks before it are recorded skipped (`skipped`: one row for the run), and
//     when no tick is on time, kRunOnce fires the newest missed tick instead of skipping it.
// `handled_through` is the last tick the skipped row covers (the store's new last_tick_ms before
// the firing), or record.last_tick_ms when nothing is skipped. A pending tick is not planned: it
// fires first, whatever its age.
struct TickPlan {
  std::optional<TimestampMs> fire;
  std::optional<ScheduleFiring> skipped;
  TimestampMs handled_through = 0;
};
TickPlan PlanTicks(const ScheduleDefinition& schedule, const ScheduleRecord& record,
                   TimestampMs now_ms);

// A tick's key: its time in UTC, "2026-12-06T09:00:00Z" (whole seconds).
std::string TickKey(TimestampMs tick_ms);
// The fields a schedule's prompt and title templates read: {"schedule", "tick" (TickKey),
// "date" ("2026-12-06") and "time" ("09:00") in the schedule's time zone}.
boost::json::value TickFields(const ScheduleDefinition& schedule, TimestampMs tick_ms);

}  // namespace agentstream::server
