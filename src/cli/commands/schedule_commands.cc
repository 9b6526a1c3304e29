#include "cli/commands/schedule_commands.h"

#include <fmt/core.h>

#include <boost/json.hpp>

#include "cli/commands/command_util.h"
#include "client/endpoint.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

std::string SchedulePath(std::string_view id, std::string_view suffix = {}) {
  return "/v1/schedules/" + client::PercentEncode(id) + std::string(suffix);
}

std::string Text(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || v->is_null()) return "-";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

void PrintSummary(const json::object& s) {
  const std::string when = s.contains("cron") ? Text(s, "cron") + " " + Text(s, "timezone")
                                              : "every " + Text(s, "every");
  const std::string target = s.contains("agent")
                                 ? Text(s, "agent")
                                 : "new " + Text(s.at("template").as_object(), "provider");
  fmt::print("{:<20} {:<28} {:<24} {:<7} next {}\n", Text(s, "id"), when, target,
             Text(s, "paused") == "true" ? "paused" : "active", Text(s, "nextTick"));
}

json::value Body(const NewScheduleOptions& o) {
  json::object body{{"id", o.id}, {"prompt", o.prompt}};
  if (!o.cron.empty()) body["cron"] = o.cron;
  if (!o.timezone.empty()) body["timezone"] = o.timezone;
  if (!o.every.empty()) body["every"] = o.every;
  if (!o.agent.empty()) body["agent"] = o.agent;
  if (!o.provider.empty() || !o.cwd.empty()) {
    json::object t{{"provider", o.provider}, {"cwd", o.cwd}};
    if (o.worktree) t["worktree"] = true;
    if (!o.model.empty()) t["model"] = o.model;
    if (!o.mode.empty()) t["mode"] = o.mode;
    if (!o.title.empty()) t["title"] = o.title;
    body["template"] = std::move(t);
  }
  if (!o.missed.empty()) body["missed"] = o.missed;
  return body;
}

}  // namespace

int ListSchedules(const ClientContext& context) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", "/v1/schedules"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::value* list =
        reply.is_object() ? reply.get_object().if_contains("schedules") : nullptr;
    if (list == nullptr || !list->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: schedules: not a list");
    for (const json::value& s : list->get_array())
      if (s.is_object()) PrintSummary(s.get_object());
    return Status::Ok();
  });
}

int NewSchedule(const ClientContext& context, const NewScheduleOptions& options) {
  const json::value body = Body(options);
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("POST", "/v1/schedules", &body));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
    } else {
      fmt::print("{} next {}\n", Text(reply.get_object(), "id"),
                 Text(reply.get_object(), "nextTick"));
    }
    return Status::Ok();
  });
}

int ShowSchedule(const ClientContext& context, const std::string& id) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", SchedulePath(id)));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::object& s = reply.get_object();
    PrintSummary(s);
    fmt::print("prompt       {}\n", Text(s, "prompt"));
    fmt::print("missed ticks {}\n", Text(s, "missed"));
    fmt::print("last tick    {}\n", Text(s, "lastTick"));
    const json::value* firings = s.if_contains("firings");
    if (firings == nullptr || !firings->is_array()) return Status::Ok();
    for (const json::value& v : firings->get_array()) {
      if (!v.is_object()) continue;
      const json::object& f = v.get_object();
      const std::string outcome = Text(f, "outcome");
      if (outcome == "fired") {
        fmt::print("  {}  fired    {}  turn {} {}\n", Text(f, "tick"), Text(f, "agent"),
                   Text(f, "turnId"), Text(f, "turnOutcome"));
      } else if (outcome == "skipped") {
        fmt::print("  {}  skipped  {} tick(s) from {}: {}\n", Text(f, "tick"),
                   f.contains("ticks") ? Text(f, "ticks") : "1",
                   f.contains("firstTick") ? Text(f, "firstTick") : Text(f, "tick"),
                   Text(f, "detail"));
      } else {
        fmt::print("  {}  {:<8} {}\n", Text(f, "tick"), outcome, Text(f, "detail"));
      }
    }
    return Status::Ok();
  });
}

int PauseSchedule(const ClientContext& context, const std::string& id, bool paused) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    const json::value body = json::object{};
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("POST", SchedulePath(id, paused ? "/pause" : "/resume"), &body));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
    } else {
      PrintSummary(reply.get_object());
    }
    return Status::Ok();
  });
}

int RemoveSchedule(const ClientContext& context, const std::string& id) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("DELETE", SchedulePath(id)));
    if (context.json) PrintJson(reply);
    return Status::Ok();
  });
}

}  // namespace agentstream::cli
