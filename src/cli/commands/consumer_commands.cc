#include "cli/commands/consumer_commands.h"

#include <fmt/core.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <fstream>
#include <sstream>

#include "cli/commands/command_util.h"
#include "client/endpoint.h"
#include "consumers/consumer_spec.h"

namespace agentstream::cli {

namespace json = boost::json;

namespace {

std::string ConsumerPath(std::string_view id, std::string_view suffix = {}) {
  return "/v1/consumers/" + client::PercentEncode(id) + std::string(suffix);
}

std::string String(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return "";
  if (v->is_string()) return std::string(v->get_string());
  return json::serialize(*v);
}

void PrintSummary(const json::object& c) {
  const json::value* sink =
      c.contains("spec") ? c.at("spec").as_object().if_contains("sink") : nullptr;
  const std::string kind = sink != nullptr ? String(sink->as_object(), "kind") : "?";
  fmt::print("{:<24} {:<8} lag {:>6} events {:>8}s  parked {:<3} delivered {:<8} failures {}\n",
             String(c, "id"), kind, String(c, "lagEvents"), String(c, "lagSeconds"),
             String(c, "parked"), String(c, "eventsDelivered"), String(c, "failures"));
}

Result<consumers::ConsumerSpec> SpecFromFlags(const NewConsumerOptions& o) {
  consumers::ConsumerSpec spec;
  spec.id = ConsumerId(o.id);
  const int sinks = !o.webhook.empty() + !o.command.empty() + !o.parent.empty() + !o.jsonl.empty();
  if (sinks != 1) {
    return Error(ErrorCode::kInvalidArgument,
                 "give exactly one sink: --webhook, --command, --parent or --jsonl");
  }
  consumers::SinkSpec& sink = spec.sink;
  sink.timeout_ms = o.timeout_ms;
  if (!o.webhook.empty()) {
    sink.kind = consumers::SinkKind::kWebhook;
    sink.url = o.webhook;
    sink.secret = o.secret;
    for (const std::string& h : o.headers) {
      const std::size_t colon = h.find(':');
      if (colon == std::string::npos || colon == 0)
        return Error(ErrorCode::kInvalidArgument, "--header takes \"Name: value\", got " + h);
      std::string value = h.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      sink.headers.emplace_back(h.substr(0, colon), value);
    }
  } else if (!o.command.empty()) {
    sink.kind = consumers::SinkKind::kCommand;
    sink.argv = o.command;
  } else if (!o.parent.empty()) {
    sink.kind = consumers::SinkKind::kParentSession;
    sink.parent = SessionId(o.parent);
  } else {
    sink.kind = consumers::SinkKind::kJsonl;
    sink.path = o.jsonl;
  }
  spec.filter.providers = o.providers;
  spec.filter.kinds = o.kinds;
  for (const std::string& s : o.sessions) spec.filter.sessions.emplace_back(s);
  spec.retry = consumers::RetryPolicy{o.max_attempts, o.initial_backoff_ms, o.max_backoff_ms};
  spec.coalesce = !o.no_coalesce;
  spec.from_now = o.from_now;
  return spec;
}

Result<json::value> SpecBody(const NewConsumerOptions& o) {
  if (o.spec_file.empty()) {
    AS_ASSIGN_OR_RETURN(consumers::ConsumerSpec spec, SpecFromFlags(o));
    return json::value(consumers::ConsumerSpecToJson(spec, /*redact_secret=*/false));
  }
  std::ifstream in(o.spec_file);
  if (!in) return Error(ErrorCode::kNotFound, "cannot read " + o.spec_file);
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  json::value body = json::parse(text.str(), ec);
  if (ec || !body.is_object())
    return Error(ErrorCode::kInvalidArgument, o.spec_file + " is not a JSON object");
  if (!o.id.empty()) body.as_object()["id"] = o.id;
  return body;
}

}  // namespace

int ListConsumers(const ClientContext& context) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", "/v1/consumers"));
    if (context.json) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::value* list =
        reply.is_object() ? reply.get_object().if_contains("consumers") : nullptr;
    if (list == nullptr || !list->is_array())
      return Error(ErrorCode::kInvalidArgument, "daemon: consumers: not a list");
    for (const json::value& c : list->get_array())
      if (c.is_object()) PrintSummary(c.get_object());
    return Status::Ok();
  });
}

int NewConsumer(const ClientContext& context, const NewConsumerOptions& options) {
  Result<json::value> body = SpecBody(options);
  if (!body.ok()) {
    PrintError(body.status());
    return kExitUsage;
  }
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("POST", "/v1/consumers", &*body));
    if (context.json) {
      PrintJson(reply);
    } else if (reply.is_object()) {
      fmt::print("{}\n", String(reply.get_object(), "id"));
    }
    return Status::Ok();
  });
}

int ShowConsumer(const ClientContext& context, const std::string& id) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("GET", ConsumerPath(id)));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::object& c = reply.get_object();
    PrintSummary(c);
    fmt::print("spec         {}\n", String(c, "spec"));
    const json::value* sessions = c.if_contains("sessions");
    if (sessions == nullptr || !sessions->is_array()) return Status::Ok();
    for (const json::value& v : sessions->get_array()) {
      if (!v.is_object()) continue;
      const json::object& s = v.get_object();
      fmt::print("  {:<28} at {:<10} tail {:<10} lag {:>6}{}{}\n", String(s, "session"),
                 String(s, "position"), String(s, "tail"), String(s, "lagEvents"),
                 String(s, "parked") == "true" ? "  PARKED" : "",
                 s.contains("lastError") ? "  last error: " + String(s, "lastError") : "");
    }
    return Status::Ok();
  });
}

int RemoveConsumer(const ClientContext& context, const std::string& id) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("DELETE", ConsumerPath(id)));
    if (context.json) PrintJson(reply);
    return Status::Ok();
  });
}

int ResumeConsumer(const ClientContext& context, const std::string& id,
                   const std::string& session) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    json::value body = json::object{};
    if (!session.empty()) body.as_object()["session"] = session;
    AS_ASSIGN_OR_RETURN(json::value reply, api.Call("POST", ConsumerPath(id, "/resume"), &body));
    if (context.json) PrintJson(reply);
    return Status::Ok();
  });
}

int ShowInbox(const ClientContext& context, const std::string& agent) {
  return RunCall(context, [&](client::DaemonApi& api) -> Status {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        api.Call("GET", client::DaemonApi::AgentPath(agent, "/inbox")));
    if (context.json || !reply.is_object()) {
      PrintJson(reply);
      return Status::Ok();
    }
    const json::object& o = reply.get_object();
    std::string base = context.http.url;
    while (!base.empty() && base.back() == '/') base.pop_back();
    fmt::print("url    {}{}\n", base, String(o, "path"));
    fmt::print("token  {}\n", String(o, "token"));
    return Status::Ok();
  });
}

}  // namespace agentstream::cli
