#include "mcp_server/mcp_tools.h"

#include <boost/json.hpp>
#include <cctype>
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "api/api_json.h"
#include "client/daemon_api.h"
#include "client/endpoint.h"
#include "client/transport.h"
#include "consumers/consumer_spec.h"

namespace agentstream::mcp_server {

namespace json = boost::json;
using client::DaemonApi;
using client::Transport;

namespace {

// The tools: name, title, description and the JSON Schema of their arguments.
constexpr std::string_view kTools = R"json([
{"name": "agents_list", "title": "List agents",
 "description": "The daemon's agents with their provider, cwd, title, status (idle, running, permission, error), pending permission requests and log cursor.",
 "inputSchema": {"type": "object", "additionalProperties": false, "properties": {
   "includeClosed": {"type": "boolean", "description": "also closed agents (default false)"}}}},
{"name": "agent_create", "title": "Create an agent",
 "description": "Starts a new agent session on the daemon and returns its snapshot (its id is agent.id). With notifyParent, every turn end of the new agent is delivered into that agent's session, once, also across daemon restarts.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["provider", "cwd"],
  "properties": {
   "provider": {"type": "string", "description": "claude, codex, opencode, acp:gemini, scripted, ..."},
   "cwd": {"type": "string", "description": "absolute working directory"},
   "title": {"type": "string"}, "model": {"type": "string"}, "mode": {"type": "string"},
   "notifyParent": {"type": ["string", "boolean"], "description": "an agent id to notify of each turn end, or true for the calling agent"}}}},
{"name": "agent_send", "title": "Prompt an agent",
 "description": "Sends a prompt. With wait, waits (at most timeoutSeconds) for the turn it started to end and returns how it ended and the last assistant message.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent", "text"],
  "properties": {
   "agent": {"type": "string"}, "text": {"type": "string"},
   "wait": {"type": "boolean", "description": "wait for the turn's end (default false)"},
   "timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": 3600, "description": "how long to wait (default 120)"},
   "whileRunning": {"type": "string", "enum": ["queue", "interrupt", "steer"], "description": "when a turn runs (default queue)"},
   "clientMessageId": {"type": "string", "description": "a retry with the same id is recorded once"},
   "notifyParent": {"type": ["string", "boolean"], "description": "an agent id to notify of each turn end, or true for the calling agent"}}}},
{"name": "agent_timeline", "title": "Read an agent's timeline",
 "description": "A page of the agent's timeline items (user and assistant messages, tool calls, permissions, errors): the newest (tail), or before / after a cursor of a previous page (startCursor, endCursor).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent"],
  "properties": {
   "agent": {"type": "string"},
   "direction": {"type": "string", "enum": ["tail", "before", "after"]},
   "cursor": {"type": "string", "description": "EPOCH:SEQ; required for before and after"},
   "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "items (default 20)"}}}},
{"name": "agents_search", "title": "Search agents' histories",
 "description": "The user messages, assistant messages, tool calls and tool outputs holding every word of query, in every agent's history or one agent's, newest first: each hit's agent, cursor (read around it with agent_timeline), kind and a snippet with each match between U+0002 and U+0003.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["query"],
  "properties": {
   "query": {"type": "string", "description": "words to find (all of them; punctuation separates words)"},
   "agent": {"type": "string", "description": "only this agent's history"},
   "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "hits (default 10)"}}}},
{"name": "agent_last_message", "title": "Read an agent's last answer",
 "description": "The text of the agent's last assistant message (null when it has none yet).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent"],
  "properties": {"agent": {"type": "string"}}}},
{"name": "agent_settings", "title": "Read or change an agent's settings",
 "description": "The agent's current mode, model and thinking option, and what its runtime offers: modes, models, thinking options and slash commands (capabilities: null until its runtime reported them). With mode, model or thinking, sets those first (each must be one the agent offers).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent"],
  "properties": {
   "agent": {"type": "string"}, "mode": {"type": "string"}, "model": {"type": "string"},
   "thinking": {"type": "string", "description": "one of capabilities.thinkingOptions"}}}},
{"name": "agent_interrupt", "title": "Interrupt an agent",
 "description": "Interrupts the agent's running turn (it ends canceled).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent"],
  "properties": {"agent": {"type": "string"}}}},
{"name": "agent_git", "title": "Commit, merge, push, open a pull request of or discard an agent's worktree changes",
 "description": "A git action on the worktree of an agent created with one: commit its changes (message, default the first line of its last message), merge its branch into the base (or into), push its branch to a remote of the repository (default origin), open a GitHub pull request of it (pr: pushes, then runs the daemon's gh CLI; title defaults to the first line of its last message), or discard its uncommitted changes. Returns the outcome (committed, fast-forward, merged, up-to-date, conflict, pushed, opened with the url, refused, failed, discarded), the commit and the files; conflict and refused changed nothing. Recorded in the agent's log.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["agent", "action"],
  "properties": {
   "agent": {"type": "string"},
   "action": {"type": "string", "enum": ["commit", "merge", "push", "pr", "discard"]},
   "message": {"type": "string", "description": "commit: the commit message"},
   "into": {"type": "string", "description": "merge: the branch to merge into (default: the worktree's base)"},
   "noFastForward": {"type": "boolean", "description": "merge: a merge commit even when a fast-forward would do"},
   "remote": {"type": "string", "description": "push, pr: the remote (default origin)"},
   "title": {"type": "string", "description": "pr: the pull request's title"},
   "body": {"type": "string", "description": "pr: its description"},
   "base": {"type": "string", "description": "pr: the branch it merges into (default: the worktree's base)"}}}},
{"name": "permission_answer", "title": "Answer a permission request",
 "description": "Allows or denies a pending permission request of an agent (agents_list shows them).",
 "inputSchema": {"type": "object", "additionalProperties": false,
  "required": ["agent", "requestId", "decision"],
  "properties": {
   "agent": {"type": "string"}, "requestId": {"type": "string"},
   "decision": {"type": "string", "enum": ["allow", "deny"]},
   "optionId": {"type": "string", "description": "a provider's option (allow_once, allow_always, ...)"},
   "message": {"type": "string", "description": "a message for the agent"}}}},
{"name": "schedule_create", "title": "Schedule prompts on a clock",
 "description": "A schedule that prompts an agent (queued behind its running turn), or a new agent made from a template, at each tick of a cron expression (five fields, in a time zone) or of an interval. Each tick fires exactly once, on one daemon; ticks missed while every daemon was down are skipped or run once (missed). The prompt and the template's title may name {{date}}, {{time}}, {{tick}} and {{schedule}}.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["id", "prompt"],
  "properties": {
   "id": {"type": "string", "description": "1 to 64 letters, digits, '_' or '-'"},
   "cron": {"type": "string", "description": "minute hour day-of-month month day-of-week: \"0 9 * * 1-5\""},
   "timezone": {"type": "string", "description": "the cron expression's IANA time zone (default UTC)"},
   "every": {"type": "string", "description": "or an interval: \"90s\", \"15m\", \"2h\", \"1d\""},
   "agent": {"type": "string", "description": "the agent to prompt"},
   "template": {"type": "object", "description": "or a new agent per tick: provider, cwd (absolute), worktree, model, mode, title"},
   "prompt": {"type": "string"},
   "missed": {"type": "string", "enum": ["skip", "run-once"]}}}},
{"name": "schedules_list", "title": "List schedules",
 "description": "Every schedule with its definition, whether it is paused, and its last and next ticks.",
 "inputSchema": {"type": "object", "additionalProperties": false, "properties": {}}},
{"name": "schedule_show", "title": "Show a schedule's firings",
 "description": "A schedule and its last firings: each tick fired (the agent, the turn and its outcome), skipped or failed.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["schedule"],
  "properties": {"schedule": {"type": "string"}}}},
{"name": "schedule_pause", "title": "Pause a schedule",
 "description": "Stops firing the schedule until it is resumed.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["schedule"],
  "properties": {"schedule": {"type": "string"}}}},
{"name": "schedule_resume", "title": "Resume a schedule",
 "description": "Fires a paused schedule again from its next tick; the ticks of the paused time are not fired.",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["schedule"],
  "properties": {"schedule": {"type": "string"}}}},
{"name": "schedule_delete", "title": "Delete a schedule",
 "description": "Deletes the schedule and its firings (the agents it prompted and their logs stay).",
 "inputSchema": {"type": "object", "additionalProperties": false, "required": ["schedule"],
  "properties": {"schedule": {"type": "string"}}}}
])json";

const json::array& Tools() {
  static const json::array* tools = new json::array(json::parse(kTools).as_array());
  return *tools;
}

Status Invalid(const std::string& message) { return Error(ErrorCode::kInvalidArgument, message); }

// The arguments of one call, checked against the tool's schema's property names and types.
class Args {
 public:
  static Result<Args> Of(std::string_view tool, const json::value& arguments) {
    if (arguments.is_null()) return Args(json::object());
    if (!arguments.is_object()) return Invalid("arguments must be an object");
    const json::object* properties = nullptr;
    for (const json::value& t : Tools())
      if (t.at("name").as_string() == tool)
        properties = &t.at("inputSchema").at("properties").as_object();
    for (const auto& [key, value] : arguments.as_object())
      if (properties == nullptr || !properties->contains(key))
        return Invalid("unknown argument " + std::string(key));
    return Args(arguments.as_object());
  }

  Result<std::optional<std::string>> Str(std::string_view name) const {
    const json::value* v = args_.if_contains(name);
    if (v == nullptr || v->is_null()) return std::optional<std::string>();
    if (!v->is_string()) return Invalid(std::string(name) + " must be a string");
    return std::optional<std::string>(std::string(v->as_string()));
  }
  Result<std::string> Required(std::string_view name) const {
    AS_ASSIGN_OR_RETURN(std::optional<std::string> s, Str(name));
    if (!s || s->empty()) return Invalid(std::string(name) + " is required");
    return *s;
  }
  // notifyParent: an agent id, or true for `calling` (the agent this server serves); absent or
  // false: none.
  Result<std::optional<std::string>> Parent(const std::string& calling) const {
    const json::value* v = args_.if_contains("notifyParent");
    if (v == nullptr || v->is_null() || (v->is_bool() && !v->as_bool()))
      return std::optional<std::string>();
    if (v->is_bool()) {
      if (calling.empty())
        return Invalid(
            "notifyParent: true needs the calling agent's id, which this server was not given "
            "(AGENTSTREAM_AGENT_ID): pass the parent's id");
      return std::optional<std::string>(calling);
    }
    if (!v->is_string()) return Invalid("notifyParent must be an agent id or true");
    if (v->as_string().empty()) return Invalid("notifyParent must not be empty");
    return std::optional<std::string>(std::string(v->as_string()));
  }
  const json::object& object() const { return args_; }
  Result<bool> Bool(std::string_view name) const {
    const json::value* v = args_.if_contains(name);
    if (v == nullptr || v->is_null()) return false;
    if (!v->is_bool()) return Invalid(std::string(name) + " must be true or false");
    return v->as_bool();
  }
  Result<int> Int(std::string_view name, int min, int max, int fallback) const {
    const json::value* v = args_.if_contains(name);
    if (v == nullptr || v->is_null()) return fallback;
    const double d = v->is_number() ? v->to_number<double>() : 0.5;  // 0.5: not an integer
    if (d != std::floor(d) || d < min || d > max)
      return Invalid(std::string(name) + " must be an integer from " + std::to_string(min) +
                     " to " + std::to_string(max));
    return static_cast<int>(d);
  }

 private:
  explicit Args(json::object args) : args_(std::move(args)) {}
  json::object args_;
};

Result<std::string> OneOf(const std::optional<std::string>& value, std::string_view name,
                          std::vector<std::string_view> allowed) {
  if (!value) return std::string(allowed.front());
  for (std::string_view a : allowed)
    if (*value == a) return *value;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
  return Invalid(std::string(name) + " must be one of " + list);
}

json::object AsObject(json::value v) {
  return v.is_object() ? std::move(v.as_object()) : json::object{{"value", std::move(v)}};
}

Result<json::object> ListAgents(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(bool closed, args.Bool("includeClosed"));
  AS_ASSIGN_OR_RETURN(json::value reply,
                      env.call("GET", closed ? "/v1/agents?closed=true" : "/v1/agents", nullptr));
  return AsObject(std::move(reply));
}

// kNotFound (the daemon's) unless `parent`, when given, is an agent of the daemon.
Status CheckParent(const ToolEnv& env, const std::optional<std::string>& parent) {
  if (!parent) return Status::Ok();
  return env.call("GET", DaemonApi::AgentPath(*parent), nullptr).status();
}

// Creates the notify consumer of `child` when `parent` is given.
Result<std::optional<std::string>> Notify(const ToolEnv& env, const std::string& child,
                                          const std::optional<std::string>& parent) {
  if (!parent) return std::optional<std::string>();
  AS_ASSIGN_OR_RETURN(json::object spec, NotifySpec(child, *parent));
  const json::value body = spec;
  AS_RETURN_IF_ERROR(env.call("POST", "/v1/consumers", &body).status());
  return std::optional<std::string>(std::string(spec.at("id").as_string()));
}

Result<json::object> CreateAgent(const ToolEnv& env, const Args& args) {
  api::AgentConfig config;
  AS_ASSIGN_OR_RETURN(config.provider, args.Required("provider"));
  AS_ASSIGN_OR_RETURN(config.cwd, args.Required("cwd"));
  if (!config.cwd.starts_with("/")) return Invalid("cwd must be an absolute path");
  AS_ASSIGN_OR_RETURN(config.title, args.Str("title"));
  AS_ASSIGN_OR_RETURN(config.model, args.Str("model"));
  AS_ASSIGN_OR_RETURN(config.mode, args.Str("mode"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> parent, args.Parent(env.calling_agent));
  AS_RETURN_IF_ERROR(CheckParent(env, parent));  // before the agent exists
  config.client_request_id = client::NewClientId("mcp");
  const json::value body = api::AgentConfigToJson(config);
  AS_ASSIGN_OR_RETURN(json::value agent, env.call("POST", "/v1/agents", &body));
  AS_ASSIGN_OR_RETURN(std::string id, api::StringMember(agent, "id"));
  json::object out{{"agent", agent}};
  Result<std::optional<std::string>> consumer = Notify(env, id, parent);
  if (!consumer.ok())
    return Error(consumer.status().code(), "agent " + id +
                                               " was created, but its notification "
                                               "was not: " +
                                               consumer.status().message());
  if (*consumer) out["notifyConsumer"] = **consumer;
  return out;
}

std::string TimelineTarget(const std::string& agent, const std::string& direction,
                           const std::string& cursor, int limit) {
  std::string target = DaemonApi::AgentPath(agent, "/timeline") + "?direction=" + direction;
  if (!cursor.empty()) target += "&cursor=" + client::PercentEncode(cursor);
  return target + "&limit=" + std::to_string(limit) +
         "&maxBytes=" + std::to_string(kMaxTimelineBytes);
}

// The last assistant message of `agent`, read back from the tail: {text, turn, cursor}, text
// null when there is none in the last kLastMessagePages pages.
Result<json::object> LastMessage(const ToolEnv& env, const std::string& agent) {
  std::string direction = "tail", cursor;
  for (int page = 0; page < kLastMessagePages; ++page) {
    AS_ASSIGN_OR_RETURN(json::value reply,
                        env.call("GET", TimelineTarget(agent, direction, cursor, 50), nullptr));
    const json::object* p = reply.is_object() ? &reply.as_object() : nullptr;
    const json::value* items = p ? p->if_contains("items") : nullptr;
    if (items == nullptr || !items->is_array()) return Invalid("daemon: a page without items");
    const json::array& list = items->as_array();
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      if (!it->is_object() || !it->as_object().contains("kind") ||
          it->at("kind") != "assistant_message")
        continue;
      const json::object& item = it->as_object();
      json::object out{{"agent", agent}, {"text", item.contains("text") ? item.at("text") : ""}};
      out["turn"] = item.contains("turn") ? item.at("turn") : json::value(nullptr);
      if (p->contains("epoch") && item.contains("seqEnd"))
        out["cursor"] = json::serialize(p->at("epoch")) + ":" + json::serialize(item.at("seqEnd"));
      return out;
    }
    const json::value* older = p->if_contains("hasOlder");
    const json::value* start = p->if_contains("startCursor");
    if (!older || !older->is_bool() || !older->as_bool() || !start || !start->is_string()) break;
    direction = "before";
    cursor = start->as_string();
  }
  return json::object{{"agent", agent}, {"text", nullptr}};
}

// agent_send up to its wait: the prompt sent, and, with `wait`, the turn to wait for.
Result<ToolStep> BeginSend(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  AS_ASSIGN_OR_RETURN(std::string text, args.Required("text"));
  AS_ASSIGN_OR_RETURN(bool wait, args.Bool("wait"));
  AS_ASSIGN_OR_RETURN(int timeout,
                      args.Int("timeoutSeconds", 1, kMaxWaitSeconds, kDefaultWaitSeconds));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> while_running, args.Str("whileRunning"));
  AS_ASSIGN_OR_RETURN(std::string mode,
                      OneOf(while_running, "whileRunning", {"queue", "interrupt", "steer"}));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> client_id, args.Str("clientMessageId"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> parent, args.Parent(env.calling_agent));
  json::object body{{"clientMessageId",
                     client_id && !client_id->empty() ? *client_id : client::NewClientId("mcp")},
                    {"text", text},
                    {"whileRunning", mode}};
  const std::string message_id(body.at("clientMessageId").as_string());

  AS_RETURN_IF_ERROR(CheckParent(env, parent));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> consumer, Notify(env, agent, parent));
  std::string from = "-1";
  if (wait) {  // read from the tail before the prompt, so no event of its turn is missed
    AS_ASSIGN_OR_RETURN(json::value snapshot,
                        env.call("GET", DaemonApi::AgentPath(agent), nullptr));
    AS_ASSIGN_OR_RETURN(std::string cursor, api::StringMember(snapshot, "cursor"));
    if (!cursor.ends_with(":0")) from = cursor;
  }
  const json::value request = body;
  AS_ASSIGN_OR_RETURN(json::value reply_json,
                      env.call("POST", DaemonApi::AgentPath(agent, "/messages"), &request));
  AS_ASSIGN_OR_RETURN(api::SendReply reply, api::SendReplyFromJson(reply_json));
  json::object out = AsObject(reply_json);
  out["clientMessageId"] = message_id;
  if (consumer) out["notifyConsumer"] = *consumer;
  const bool refused = reply.outcome == turn::SubmissionOutcome::kRejected ||
                       reply.outcome == turn::SubmissionOutcome::kCanceled;
  if (!wait || refused) return ToolStep{std::move(out), std::nullopt};
  if (reply.outcome == turn::SubmissionOutcome::kDuplicate) from = "-1";  // it may be long done
  std::optional<std::string> turn;
  if (reply.turn) turn = reply.turn->str();
  TurnWaitRequest request_wait{agent, from, message_id, std::move(turn),
                               std::chrono::seconds(timeout)};
  return ToolStep{json::object{}, PendingSend{std::move(request_wait), std::move(out)}};
}

Result<json::object> Timeline(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> d, args.Str("direction"));
  AS_ASSIGN_OR_RETURN(std::string direction, OneOf(d, "direction", {"tail", "before", "after"}));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> cursor, args.Str("cursor"));
  if (direction != "tail" && (!cursor || cursor->empty()))
    return Invalid("cursor is required for direction " + direction);
  Cursor parsed;
  if (cursor && !ParseCursor(*cursor, &parsed)) return Invalid("cursor must be EPOCH:SEQ");
  AS_ASSIGN_OR_RETURN(int limit, args.Int("limit", 1, kMaxTimelineItems, 20));
  AS_ASSIGN_OR_RETURN(
      json::value page,
      env.call("GET", TimelineTarget(agent, direction, cursor.value_or(""), limit), nullptr));
  return AsObject(std::move(page));
}

Result<json::object> Search(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string query, args.Required("query"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> agent, args.Str("agent"));
  AS_ASSIGN_OR_RETURN(int limit, args.Int("limit", 1, 50, 10));
  std::string target =
      "/v1/search?q=" + client::PercentEncode(query) + "&limit=" + std::to_string(limit);
  if (agent && !agent->empty()) target += "&agent=" + client::PercentEncode(*agent);
  AS_ASSIGN_OR_RETURN(json::value hits, env.call("GET", target, nullptr));
  return AsObject(std::move(hits));
}

Result<json::object> Interrupt(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  AS_ASSIGN_OR_RETURN(json::value reply,
                      env.call("POST", DaemonApi::AgentPath(agent, "/interrupt"), nullptr));
  return AsObject(std::move(reply));
}

// Sets the settings given (mode, model, thinking, in that order), then reads the agent back.
Result<json::object> Settings(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  for (const char* name : {"mode", "model", "thinking"}) {
    AS_ASSIGN_OR_RETURN(std::optional<std::string> value, args.Str(name));
    if (!value) continue;
    const json::value body = json::object{{name, *value}};
    AS_RETURN_IF_ERROR(
        env.call("POST", DaemonApi::AgentPath(agent, std::string("/") + name), &body).status());
  }
  AS_ASSIGN_OR_RETURN(json::value snapshot, env.call("GET", DaemonApi::AgentPath(agent), nullptr));
  const json::object s = AsObject(std::move(snapshot));
  json::object out;
  for (const char* name : {"mode", "model", "thinking", "capabilities"})
    if (const json::value* v = s.if_contains(name)) out[name] = *v;
  return out;
}

// The action's members of POST /v1/agents/{id}/git/{action}: each action takes its own.
Result<json::object> GitAction(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> a, args.Str("action"));
  if (!a) return Invalid("action is required");
  AS_ASSIGN_OR_RETURN(std::string action,
                      OneOf(a, "action", {"commit", "merge", "push", "pr", "discard"}));
  json::object body;
  auto take = [&](const char* name, std::initializer_list<std::string_view> only) -> Status {
    AS_ASSIGN_OR_RETURN(std::optional<std::string> value, args.Str(name));
    if (!value) return Status::Ok();
    if (std::find(only.begin(), only.end(), action) == only.end())
      return Invalid(std::string(name) + " is for " + std::string(*only.begin()) +
                     (only.size() > 1 ? " and " + std::string(*(only.begin() + 1)) : ""));
    body[name] = *value;
    return Status::Ok();
  };
  AS_RETURN_IF_ERROR(take("message", {"commit"}));
  AS_RETURN_IF_ERROR(take("into", {"merge"}));
  AS_RETURN_IF_ERROR(take("remote", {"push", "pr"}));
  AS_RETURN_IF_ERROR(take("title", {"pr"}));
  AS_RETURN_IF_ERROR(take("body", {"pr"}));
  AS_RETURN_IF_ERROR(take("base", {"pr"}));
  AS_ASSIGN_OR_RETURN(bool no_ff, args.Bool("noFastForward"));
  if (no_ff && action != "merge") return Invalid("noFastForward is for merge");
  if (no_ff) body["noFastForward"] = true;
  const json::value request = std::move(body);
  AS_ASSIGN_OR_RETURN(json::value reply,
                      env.call("POST", DaemonApi::AgentPath(agent, "/git/" + action), &request));
  return AsObject(std::move(reply));
}

Result<json::object> AnswerPermission(const ToolEnv& env, const Args& args) {
  AS_ASSIGN_OR_RETURN(std::string agent, args.Required("agent"));
  AS_ASSIGN_OR_RETURN(std::string request, args.Required("requestId"));
  AS_ASSIGN_OR_RETURN(std::optional<std::string> d, args.Str("decision"));
  if (!d) return Invalid("decision is required");
  AS_ASSIGN_OR_RETURN(std::string decision, OneOf(d, "decision", {"allow", "deny"}));
  turn::ReplyPermission reply;
  reply.request_id = RequestId(request);
  reply.decision = decision == "allow" ? PermissionDecision::kAllow : PermissionDecision::kDeny;
  AS_ASSIGN_OR_RETURN(reply.option_id, args.Str("optionId"));
  AS_ASSIGN_OR_RETURN(reply.message, args.Str("message"));
  const json::value body = api::PermissionReplyToJson(reply);
  const std::string target =
      DaemonApi::AgentPath(agent, "/permissions/" + client::PercentEncode(request));
  AS_ASSIGN_OR_RETURN(json::value answer, env.call("POST", target, &body));
  return AsObject(std::move(answer));
}

// schedule_create, schedules_list, schedule_show, schedule_pause, schedule_resume and
// schedule_delete: the daemon's /v1/schedules (docs/automation.md).
Result<json::object> ScheduleTool(const ToolEnv& env, std::string_view name, const Args& args) {
  if (name == "schedule_create") {
    const json::value body = args.object();
    AS_ASSIGN_OR_RETURN(json::value reply, env.call("POST", "/v1/schedules", &body));
    return AsObject(std::move(reply));
  }
  if (name == "schedules_list") {
    AS_ASSIGN_OR_RETURN(json::value reply, env.call("GET", "/v1/schedules", nullptr));
    return AsObject(std::move(reply));
  }
  AS_ASSIGN_OR_RETURN(std::string schedule, args.Required("schedule"));
  const std::string path = "/v1/schedules/" + client::PercentEncode(schedule);
  Result<json::value> reply = Invalid("no tool " + std::string(name));
  if (name == "schedule_show") {
    reply = env.call("GET", path, nullptr);
  } else if (name == "schedule_delete") {
    reply = env.call("DELETE", path, nullptr);
  } else {
    const json::value body = json::object{};
    reply = env.call("POST", path + (name == "schedule_pause" ? "/pause" : "/resume"), &body);
  }
  if (!reply.ok()) return reply.status();
  return AsObject(std::move(*reply));
}

}  // namespace

json::object ToolsList() { return json::object{{"tools", Tools()}}; }

bool IsTool(std::string_view name) {
  for (const json::value& t : Tools())
    if (t.at("name").as_string() == name) return true;
  return false;
}

bool WaitsForTurn(std::string_view name, const json::value& arguments) {
  if (name != "agent_send" || !arguments.is_object()) return false;
  const json::value* wait = arguments.as_object().if_contains("wait");
  return wait && wait->is_bool() && wait->as_bool();
}

ToolStep BeginTool(const ToolEnv& env, std::string_view name, const json::value& arguments) {
  auto done = [](Result<json::object> result) { return ToolStep{std::move(result), std::nullopt}; };
  if (!IsTool(name)) return done(Invalid("no tool " + std::string(name)));
  Result<Args> args = Args::Of(name, arguments);
  if (!args.ok()) return done(args.status());
  if (name == "agent_send") {
    Result<ToolStep> step = BeginSend(env, *args);
    return step.ok() ? std::move(step).value() : done(step.status());
  }
  if (name == "agents_list") return done(ListAgents(env, *args));
  if (name == "agent_create") return done(CreateAgent(env, *args));
  if (name == "agent_timeline") return done(Timeline(env, *args));
  if (name == "agents_search") return done(Search(env, *args));
  if (name == "agent_last_message") {
    Result<std::string> agent = args->Required("agent");
    return done(agent.ok() ? LastMessage(env, *agent) : agent.status());
  }
  if (name == "agent_interrupt") return done(Interrupt(env, *args));
  if (name == "agent_settings") return done(Settings(env, *args));
  if (name == "agent_git") return done(GitAction(env, *args));
  if (name.starts_with("schedule")) return done(ScheduleTool(env, name, *args));
  return done(AnswerPermission(env, *args));
}

Result<json::object> FinishSend(const ToolEnv& env, PendingSend pending,
                                const Result<client::TurnEnd>& waited) {
  AS_RETURN_IF_ERROR(waited.status());
  const client::TurnEnd& end = *waited;
  json::object out = std::move(pending.reply);
  if (end.outcome.empty()) {
    out["timedOut"] = true;
    if (!end.turn.empty()) out["turnId"] = end.turn;
    return out;
  }
  out["timedOut"] = false;
  out["turnId"] = end.turn;
  out["turnOutcome"] = end.outcome;
  out["turnReason"] = end.reason;
  out["endCursor"] = FormatCursor(end.at);
  AS_ASSIGN_OR_RETURN(json::object last, LastMessage(env, pending.wait.agent));
  out["lastMessage"] = last.at("text");
  return out;
}

Result<json::object> CallTool(const ToolEnv& env, std::string_view name,
                              const json::value& arguments, const std::atomic<bool>* cancel) {
  ToolStep step = BeginTool(env, name, arguments);
  if (!step.wait) return std::move(step.result);
  const TurnWaitRequest& w = step.wait->wait;
  Result<client::TurnEnd> end = env.wait(w.agent, w.from, w.client_id, w.turn, w.timeout, cancel);
  return FinishSend(env, std::move(*step.wait), end);
}

ToolEnv DaemonToolEnv(const client::TransportOptions& http_options,
                      std::chrono::milliseconds retry_for,
                      const std::shared_ptr<std::atomic<bool>>& stopping) {
  ToolEnv env;
  env.call = [http_options, retry_for, stopping](std::string_view method, const std::string& target,
                                                 const json::value* body) -> Result<json::value> {
    const bool retry = !target.ends_with("/interrupt");
    const auto deadline = std::chrono::steady_clock::now() + retry_for;
    std::chrono::milliseconds backoff{200};
    for (;;) {
      AS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> http, Transport::Create(http_options));
      client::DaemonApi api(*http);
      Result<json::value> result = api.Call(method, target, body);
      if (result.ok() || result.status().code() != ErrorCode::kUnavailable || !retry || *stopping ||
          std::chrono::steady_clock::now() + backoff > deadline)
        return result;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
    }
  };
  env.wait = [http_options, stopping](const std::string& agent, const std::string& from,
                                      const std::string& client_id, std::optional<std::string> turn,
                                      std::chrono::milliseconds timeout,
                                      const std::atomic<bool>* cancel) -> Result<client::TurnEnd> {
    AS_ASSIGN_OR_RETURN(std::unique_ptr<Transport> http, Transport::Create(http_options));
    std::atomic<bool> stop{false};
    std::jthread timer(
        [&stop, stopping, cancel,
         deadline = std::chrono::steady_clock::now() + timeout](const std::stop_token& done) {
          while (!done.stop_requested() && !*stopping && !(cancel && *cancel) &&
                 std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
          stop = true;
        });
    return client::WaitForTurn(
        *http, agent, from, client_id, std::move(turn),
        [](const Status&, std::chrono::milliseconds) {}, &stop);
  };
  return env;
}

Result<json::object> NotifySpec(const std::string& child, const std::string& parent) {
  if (child == parent) return Invalid("an agent cannot notify itself");
  consumers::ConsumerSpec spec;
  std::string id = "mcp-notify." + child + "." + parent;
  for (char& c : id)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (id.size() > consumers::kMaxConsumerIdBytes)
    return Invalid("the agent ids are too long for a notification consumer id");
  spec.id = ConsumerId(id);
  spec.filter.sessions = {SessionId(child)};
  spec.filter.kinds = {"turn.completed", "turn.canceled", "turn.failed"};
  spec.sink.kind = consumers::SinkKind::kParentSession;
  spec.sink.parent = SessionId(parent);
  spec.from_now = true;  // the child's earlier turn ends are not news
  return consumers::ConsumerSpecToJson(spec, /*redact_secret=*/false);
}

}  // namespace agentstream::mcp_server
