#include "server/schedules.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>
#include <ctime>

#include <fmt/format.h>

namespace agentstream::server {

namespace json = boost::json;

namespace {

constexpr std::int64_t kHorizonMs = std::int64_t{3653} * 24 * 3600 * 1000;
constexpr int kFloorCheckTicks = 64;

Status Refused(const std::string& where, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, where + ": " + why);
}

Status BadInterval() {
  return Error(ErrorCode::kInvalidArgument,
               "an interval is a whole number of seconds, minutes, hours or days: \"90s\", "
               "\"15m\", \"2h\", \"1d\"");
}

}  // namespace

Result<std::int64_t> ParseInterval(std::string_view text) {
  if (text.size() < 2 || text.size() > 12) return BadInterval();
  std::int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1000;
      break;
    case 'm':
      unit = 60'000;
      break;
    case 'h':
      unit = 3'600'000;
      break;
    case 'd':
      unit = 86'400'000;
      break;
    default:
      return BadInterval();
  }
  std::int64_t count = 0;
  const char* end = text.data() + text.size() - 1;
  const auto [at, ec] = std::from_chars(text.data(), end, count);
  if (ec != std::errc() || at != end || count <= 0 || count > kHorizonMs / unit)
    return BadInterval();
  return count * unit;
}

namespace {

std::string EveryText(std::int64_t ms) {
  for (const auto& [unit, suffix] : {std::pair{86'400'000, 'd'}, {3'600'000, 'h'}, {60'000, 'm'}}) {
    if (ms % unit == 0) return std::to_string(ms / unit) + suffix;
  }
  return std::to_string(ms / 1000) + "s";
}

const char* PolicyName(MissedPolicy policy) {
  return policy == MissedPolicy::kSkip ? "skip" : "run-once";
}

// The UTC fields of `ms`.
std::tm UtcFields(TimestampMs ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
  std::tm out{};
  gmtime_r(&seconds, &out);
  return out;
}

// The floor: an interval under it, or cron ticks closer than it (over the next kFloorCheckTicks
// after `now_ms`), are refused; so is a cron expression that never fires.
Status CheckFloor(const ScheduleDefinition& s, std::int64_t floor_ms, TimestampMs now_ms,
                  const std::string& where) {
  const std::string floor_text = EveryText(std::max<std::int64_t>(floor_ms, 1000));
  if (s.every_ms != 0) {
    if (s.every_ms < floor_ms)
      return Refused(where, "ticks every " + EveryText(s.every_ms) +
                                " are more often than this daemon's floor of one every " +
                                floor_text);
    return Status::Ok();
  }
  std::optional<TimestampMs> previous = NextCronTick(*s.cron, s.zone, now_ms);
  if (!previous) return Refused(where, "cron \"" + s.cron->text + "\" never fires");
  for (int i = 1; i < kFloorCheckTicks; ++i) {
    const std::optional<TimestampMs> next = NextCronTick(*s.cron, s.zone, *previous);
    if (!next) break;
    if (*next - *previous < floor_ms) {
      return Refused(where, "cron \"" + s.cron->text + "\" fires " + TickKey(*previous) + " and " +
                                TickKey(*next) +
                                ", more often than this daemon's floor of one every " + floor_text);
    }
    previous = next;
  }
  return Status::Ok();
}

// "cron" with "timezone", or "every", read into `s`.
Status ReadWhen(const std::optional<std::string>& cron, const std::optional<std::string>& timezone,
                const std::optional<std::string>& every, const std::string& where,
                ScheduleDefinition& s) {
  if (cron.has_value() == every.has_value())
    return Refused(where, "give \"cron\" (an expression) or \"every\" (an interval), one of them");
  if (!cron) {
    if (timezone) return Refused(where, "\"timezone\" goes with \"cron\", not with \"every\"");
    Result<std::int64_t> ms = ParseInterval(*every);
    if (!ms.ok()) return Refused(where, "every: " + ms.status().message());
    s.every_ms = *ms;
    return Status::Ok();
  }
  Result<CronExpression> parsed = ParseCron(*cron);
  if (!parsed.ok()) return Refused(where, "cron: " + parsed.status().message());
  s.cron = std::move(*parsed);
  if (timezone) {
    Result<TimeZone> zone = TimeZone::Load(*timezone);
    if (!zone.ok()) return Refused(where, "timezone: " + zone.status().message());
    s.zone = std::move(*zone);
  }
  return Status::Ok();
}

}  // namespace

Result<ScheduleDefinition> ParseSchedule(const json::value& body, std::int64_t floor_ms,
                                         TimestampMs now_ms) {
  if (!body.is_object()) return Error(ErrorCode::kInvalidArgument, "a schedule is a JSON object");
  const json::object& o = body.get_object();
  ScheduleDefinition s;
  const json::value* id = o.if_contains("id");
  if (id == nullptr || !id->is_string() || !IsAutomationId(id->get_string()))
    return Refused("schedule", "\"id\" must be 1 to 64 letters, digits, '_' or '-'");
  s.id = std::string(id->get_string());
  const std::string where = "schedule " + s.id;
  for (const auto& member : o) {
    static constexpr std::string_view kKnown[] = {"id",    "cron",     "timezone", "every",
                                                  "agent", "template", "prompt",   "missed"};
    if (std::find(std::begin(kKnown), std::end(kKnown), member.key()) == std::end(kKnown))
      return Refused(where, "unknown member \"" + std::string(member.key()) + "\"");
  }
  auto string_of = [&](std::string_view key) -> Result<std::optional<std::string>> {
    const json::value* v = o.if_contains(key);
    if (v == nullptr) return std::optional<std::string>();
    if (!v->is_string()) return Refused(where, "\"" + std::string(key) + "\" must be a string");
    return std::optional<std::string>(std::string(v->get_string()));
  };
  AS_ASSIGN_OR_RETURN(auto cron, string_of("cron"));
  AS_ASSIGN_OR_RETURN(auto timezone, string_of("timezone"));
  AS_ASSIGN_OR_RETURN(auto every, string_of("every"));
  AS_RETURN_IF_ERROR(ReadWhen(cron, timezone, every, where, s));
  AS_ASSIGN_OR_RETURN(auto agent, string_of("agent"));
  if (agent) {
    if (agent->empty()) return Refused(where, "\"agent\" must name an agent");
    s.agent = SessionId(*agent);
  }
  if (const json::value* tpl = o.if_contains("template")) {
    AS_ASSIGN_OR_RETURN(s.create, ParseAgentTemplate(*tpl, where));
  }
  if (s.agent.has_value() == s.create.has_value())
    return Refused(where,
                   "give \"agent\" (an agent's id) or \"template\" (a new agent), one of them");
  AS_ASSIGN_OR_RETURN(auto prompt, string_of("prompt"));
  if (!prompt || prompt->find_first_not_of(" \t\r\n") == std::string::npos)
    return Refused(where, "\"prompt\" is required");
  if (Status checked = CheckTemplate(*prompt); !checked.ok())
    return Refused(where, "prompt: " + checked.message());
  s.prompt = std::move(*prompt);
  AS_ASSIGN_OR_RETURN(auto missed, string_of("missed"));
  if (missed) {
    if (*missed == "skip") {
      s.missed = MissedPolicy::kSkip;
    } else if (*missed == "run-once") {
      s.missed = MissedPolicy::kRunOnce;
    } else {
      return Refused(where, "\"missed\" must be \"skip\" or \"run-once\"");
    }
  }
  AS_RETURN_IF_ERROR(CheckFloor(s, floor_ms, now_ms, where));
  return s;
}

json::object ScheduleToJson(const ScheduleDefinition& s) {
  json::object out{{"id", s.id}};
  if (s.cron) {
    out["cron"] = s.cron->text;
    out["timezone"] = s.zone.name();
  } else {
    out["every"] = EveryText(s.every_ms);
  }
  if (s.agent) out["agent"] = s.agent->str();
  if (s.create) out["template"] = AgentTemplateToJson(*s.create);
  out["prompt"] = s.prompt;
  out["missed"] = PolicyName(s.missed);
  return out;
}

std::optional<TimestampMs> NextTick(const ScheduleDefinition& s, TimestampMs created_ms,
                                    TimestampMs after_ms) {
  if (s.cron) return NextCronTick(*s.cron, s.zone, after_ms);
  if (s.every_ms <= 0) return std::nullopt;
  if (after_ms < created_ms) return created_ms + s.every_ms;
  const std::int64_t periods = (after_ms - created_ms) / s.every_ms + 1;
  const TimestampMs next = created_ms + periods * s.every_ms;
  if (next - after_ms > kHorizonMs) return std::nullopt;
  return next;
}

TickPlan PlanTicks(const ScheduleDefinition& s, const ScheduleRecord& record, TimestampMs now_ms) {
  // Bounds the work of one plan when all daemons were down a long time (a tick a minute for a
  // week is 10,080): the rest is walked by the next plan.
  constexpr int kMaxWalk = 100'000;
  TickPlan plan;
  plan.handled_through = record.last_tick_ms;
  const TimestampMs after = std::max(record.last_tick_ms, record.created_ms);
  std::optional<TimestampMs> tick = NextTick(s, record.created_ms, after);
  TimestampMs first_missed = 0;
  TimestampMs last_missed = 0;
  TimestampMs before_last = 0;
  std::int64_t missed = 0;
  for (int walked = 0; tick && *tick <= now_ms && walked < kMaxWalk; ++walked) {
    if (now_ms - *tick <= kScheduleGraceMs) {
      plan.fire = *tick;
      break;
    }
    if (missed == 0) first_missed = *tick;
    before_last = last_missed;
    last_missed = *tick;
    ++missed;
    tick = NextTick(s, record.created_ms, *tick);
  }
  if (missed == 0) return plan;
  if (!plan.fire && s.missed == MissedPolicy::kRunOnce) {
    plan.fire = last_missed;
    if (--missed == 0) return plan;
    last_missed = before_last;
  }
  ScheduleFiring skipped;
  skipped.schedule_id = s.id;
  skipped.first_tick_ms = first_missed;
  skipped.tick_ms = last_missed;
  skipped.ticks = missed;
  skipped.outcome = "skipped";
  skipped.detail = "missed: no daemon fired " + std::string(missed == 1 ? "it" : "them") +
                   " within " + std::to_string(kScheduleGraceMs / 1000) + " s";
  plan.skipped = std::move(skipped);
  plan.handled_through = last_missed;
  return plan;
}

std::string TickKey(TimestampMs tick_ms) {
  const std::tm t = UtcFields(tick_ms);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec);
}

json::value TickFields(const ScheduleDefinition& s, TimestampMs tick_ms) {
  const std::tm local = UtcFields(tick_ms + std::int64_t{s.zone.OffsetSeconds(tick_ms)} * 1000);
  return json::object{
      {"schedule", s.id},
      {"tick", TickKey(tick_ms)},
      {"date",
       fmt::format("{:04}-{:02}-{:02}", local.tm_year + 1900, local.tm_mon + 1, local.tm_mday)},
      {"time", fmt::format("{:02}:{:02}", local.tm_hour, local.tm_min)},
  };
}

}  // namespace agentstream::server
