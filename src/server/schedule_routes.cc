#include "server/schedule_routes.h"

#include <boost/json.hpp>

#include <algorithm>
#include <charconv>

#include "api/api_json.h"
#include "server/api_router.h"
#include "server/scheduler.h"
#include "server/schedules.h"

namespace agentstream::server {

namespace json = boost::json;

namespace {

// How far back in an agent's log Show looks for a fired turn's end.
constexpr std::size_t kTurnLookbackEvents = 2000;

json::value TickOrNull(TimestampMs tick) {
  return tick == 0 ? json::value(nullptr) : json::value(TickKey(tick));
}

}  // namespace

ScheduleRoutes::ScheduleRoutes(EventLog& log, Scheduler* scheduler, std::int64_t floor_ms,
                               system::WallClock clock)
    : log_(log), scheduler_(scheduler), floor_ms_(floor_ms), clock_(std::move(clock)) {}

TimestampMs ScheduleRoutes::Now() const { return clock_ ? clock_() : system::WallClockMs(); }

Result<json::object> ScheduleRoutes::View(const ScheduleRecord& record) {
  AS_ASSIGN_OR_RETURN(json::value body, api::ParseJson(record.definition));
  if (!body.is_object()) return Error(ErrorCode::kIoError, "a stored schedule is not an object");
  json::value next = nullptr;
  if (!record.paused) {
    Result<ScheduleDefinition> schedule = ParseSchedule(body, 0, Now());
    if (schedule.ok()) {
      const std::optional<TimestampMs> tick =
          NextTick(*schedule, record.created_ms, std::max(record.last_tick_ms, record.created_ms));
      if (tick) next = TickKey(*tick);
    }
  }
  json::object view = std::move(body.get_object());
  view["paused"] = record.paused;
  view["createdMs"] = record.created_ms;
  view["lastTick"] = TickOrNull(record.last_tick_ms);
  view["nextTick"] = std::move(next);
  view["pendingTick"] = TickOrNull(record.pending_tick_ms);
  view["leaseOwner"] = record.lease_owner;
  return view;
}

Result<json::object> ScheduleRoutes::Create(const json::value& definition) {
  const TimestampMs now = Now();
  AS_ASSIGN_OR_RETURN(ScheduleDefinition schedule, ParseSchedule(definition, floor_ms_, now));
  AS_ASSIGN_OR_RETURN(std::vector<ScheduleRecord> all, log_.schedules().ListSchedules());
  if (all.size() >= kMaxSchedules)
    return Error(ErrorCode::kResourceExhausted, "this store holds 1,000 schedules already");
  ScheduleRecord record;
  record.id = schedule.id;
  record.definition = json::serialize(ScheduleToJson(schedule));
  record.created_ms = now;
  record.updated_ms = now;
  AS_RETURN_IF_ERROR(log_.schedules().AddSchedule(record));
  if (scheduler_ != nullptr) scheduler_->Poke();
  return View(record);
}

Result<json::array> ScheduleRoutes::List() {
  AS_ASSIGN_OR_RETURN(std::vector<ScheduleRecord> all, log_.schedules().ListSchedules());
  json::array out;
  for (const ScheduleRecord& record : all) {
    AS_ASSIGN_OR_RETURN(json::object view, View(record));
    out.push_back(std::move(view));
  }
  return out;
}

std::string ScheduleRoutes::TurnOutcome(const std::string& agent, const std::string& turn) {
  ReadRequest read;
  read.session = SessionId(agent);
  read.direction = ReadDirection::kBackward;
  read.max_items = 500;
  std::size_t seen = 0;
  while (seen < kTurnLookbackEvents) {
    Result<ReadResult> page = log_.Read(read);
    if (!page.ok() || page->events.empty()) break;
    for (auto e = page->events.rbegin(); e != page->events.rend(); ++e) {
      if (!e->turn || e->turn->str() != turn) continue;
      switch (static_cast<EventKind>(e->kind)) {
        case EventKind::kTurnCompleted:
          return "completed";
        case EventKind::kTurnFailed:
          return "failed";
        case EventKind::kTurnCanceled:
          return "canceled";
        case EventKind::kTurnStarted:
          return "running";
        default:
          break;
      }
    }
    seen += page->events.size();
    if (!page->has_older) break;
    read.epoch = page->epoch;
    read.from = page->events.front().seq;
  }
  return "";
}

Result<json::object> ScheduleRoutes::Show(const std::string& id, std::size_t shown) {
  AS_ASSIGN_OR_RETURN(ScheduleRecord record, log_.schedules().GetSchedule(id));
  AS_ASSIGN_OR_RETURN(json::object view, View(record));
  AS_ASSIGN_OR_RETURN(std::vector<ScheduleFiring> firings, log_.schedules().ListFirings(id, shown));
  json::array list;
  for (const ScheduleFiring& f : firings) {
    json::object row{
        {"tick", TickKey(f.tick_ms)}, {"outcome", f.outcome}, {"recordedMs", f.recorded_ms}};
    if (f.ticks > 1) {
      row["firstTick"] = TickKey(f.first_tick_ms);
      row["ticks"] = f.ticks;
    }
    if (!f.agent.empty()) row["agent"] = f.agent;
    if (!f.client_message_id.empty()) row["clientMessageId"] = f.client_message_id;
    if (!f.turn_id.empty()) {
      row["turnId"] = f.turn_id;
      row["turnOutcome"] = TurnOutcome(f.agent, f.turn_id);
    }
    if (!f.detail.empty()) row["detail"] = f.detail;
    list.push_back(std::move(row));
  }
  view["firings"] = std::move(list);
  return view;
}

Result<json::object> ScheduleRoutes::SetPaused(const std::string& id, bool paused) {
  AS_RETURN_IF_ERROR(log_.schedules().SetSchedulePaused(id, paused, Now()));
  if (!paused && scheduler_ != nullptr) scheduler_->Poke();
  AS_ASSIGN_OR_RETURN(ScheduleRecord record, log_.schedules().GetSchedule(id));
  return View(record);
}

Status ScheduleRoutes::Delete(const std::string& id) { return log_.schedules().DeleteSchedule(id); }

bool ScheduleRoutes::Handle(const HttpRequest& request, const std::vector<std::string>& seg,
                            const std::function<void(HttpResponse)>& reply) {
  if (seg.size() < 2 || seg.size() > 4 || seg[0] != "v1" || seg[1] != "schedules") return false;
  auto answer = [&](const Result<json::object>& result, int status = 200) {
    reply(result.ok() ? JsonValueResponse(*result, status) : ErrorResponse(result.status()));
  };
  if (seg.size() == 2) {
    if (request.method == "GET") {
      Result<json::array> all = List();
      if (!all.ok()) return reply(ErrorResponse(all.status())), true;
      return reply(JsonValueResponse(json::object{{"schedules", std::move(*all)}})), true;
    }
    if (request.method == "POST") {
      Result<json::value> body = api::ParseJson(request.body);
      if (!body.ok()) return reply(ErrorResponse(body.status())), true;
      return answer(Create(*body), 201), true;
    }
  } else if (seg.size() == 3) {
    if (request.method == "GET") {
      std::size_t shown = kShownFirings;
      if (auto it = request.query.find("firings"); it != request.query.end()) {
        const std::string& text = it->second;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), shown);
        if (ec != std::errc() || end != text.data() + text.size() || shown < 1 ||
            shown > ScheduleStore::kKeptFirings) {
          reply(ErrorResponse(
              Error(ErrorCode::kInvalidArgument, "firings must be an integer from 1 to 100")));
          return true;
        }
      }
      return answer(Show(seg[2], shown)), true;
    }
    if (request.method == "DELETE") {
      const Status deleted = Delete(seg[2]);
      reply(deleted.ok() ? JsonResponse(200, R"({"ok":true})") : ErrorResponse(deleted));
      return true;
    }
  } else if (request.method == "POST" && (seg[3] == "pause" || seg[3] == "resume")) {
    return answer(SetPaused(seg[2], seg[3] == "pause")), true;
  }
  reply(ErrorResponse(NoEndpoint(request)));
  return true;
}

}  // namespace agentstream::server
