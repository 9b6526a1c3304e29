#include "core/turn/scenario_runner.h"

#include <boost/json.hpp>

#include "core/timeline/invariants.h"
#include "core/timeline/projection.h"

namespace agentstream::turn::testing {

namespace json = boost::json;

namespace {

std::string Str(const json::object& o, const char* name, const std::string& fallback = "") {
  const json::value* v = o.if_contains(name);
  return v && v->is_string() ? std::string(v->as_string()) : fallback;
}
std::optional<std::string> OptStr(const json::object& o, const char* name) {
  const json::value* v = o.if_contains(name);
  if (!v || !v->is_string()) return std::nullopt;
  return std::string(v->as_string());
}
template <class Id>
std::optional<Id> OptId(const json::object& o, const char* name) {
  auto s = OptStr(o, name);
  return s ? std::optional<Id>(Id(*s)) : std::nullopt;
}
std::string Repeat(const json::object& o) {  // "text", or "repeat" x "times" for large texts
  std::string text = Str(o, "text");
  if (const json::value* n = o.if_contains("times"); n && n->is_int64())
    for (std::int64_t i = 1; i < n->as_int64(); ++i) text += Str(o, "text");
  return text;
}
ToolCallStatus ToolStatus(const std::string& s) {
  if (s == "failed") return ToolCallStatus::kFailed;
  if (s == "canceled") return ToolCallStatus::kCanceled;
  return ToolCallStatus::kCompleted;
}
TurnOutcome Outcome(const std::string& s) {
  if (s == "failed") return TurnOutcome::kFailed;
  if (s == "canceled") return TurnOutcome::kCanceled;
  return TurnOutcome::kCompleted;
}
WhileRunning While(const std::string& s) {
  if (s == "interrupt") return WhileRunning::kInterrupt;
  if (s == "steer") return WhileRunning::kSteer;
  return WhileRunning::kQueue;
}

std::optional<Command> ParseCommand(const std::string& type, const json::object& o) {
  if (type == "submit")
    return SubmitPrompt{
        Str(o, "clientMessageId"), Str(o, "text"), {}, While(Str(o, "whileRunning"))};
  if (type == "accepted") return ProviderAcceptedTurn{TurnId(Str(o, "turn"))};
  if (type == "rejected") return ProviderRejectedTurn{TurnId(Str(o, "turn")), Str(o, "message")};
  if (type == "interrupt") return RequestInterrupt{};
  if (type == "teardown_done") return InterruptTeardownDone{};
  if (type == "permission_reply")
    return ReplyPermission{
        RequestId(Str(o, "requestId")),
        Str(o, "decision") == "allow" ? PermissionDecision::kAllow : PermissionDecision::kDeny,
        OptStr(o, "optionId"), OptStr(o, "message")};
  if (type == "cancel_queued") return CancelQueuedPrompt{Str(o, "clientMessageId")};
  if (type == "recover") {
    RecoverAfterRestart recover;
    if (auto code = OptStr(o, "code")) recover.code = *code;
    return recover;
  }
  if (type == "resume_queue") return ResumeQueue{};
  return std::nullopt;
}

std::optional<ProviderEvent> ParseProvider(const std::string& type, const json::object& o) {
  const MessageId mid(Str(o, "messageId"));
  const ToolCallId call(Str(o, "callId"));
  const auto parent = OptId<MessageId>(o, "parentMessageId");
  const auto task = OptStr(o, "taskId");
  if (type == "turn_began") return ProviderTurnBegan{task};
  if (type == "message_start") return ProviderMessageStart{mid, parent, task};
  if (type == "text_delta") return ProviderTextDelta{mid, Repeat(o), parent, task};
  if (type == "message_stop") return ProviderMessageStop{mid, OptStr(o, "stopReason")};
  if (type == "reasoning") return ProviderReasoningDelta{mid, Str(o, "text"), parent};
  if (type == "user_echo")
    return ProviderUserEcho{OptId<MessageId>(o, "messageId"), OptStr(o, "clientMessageId"),
                            Str(o, "text")};
  if (type == "tool_start")
    return ProviderToolStart{call,           Str(o, "name"), OptStr(o, "title"),
                             json::object{}, parent,         task};
  if (type == "tool_output") return ProviderToolOutput{call, Repeat(o)};
  if (type == "tool_end")
    return ProviderToolEnd{call, ToolStatus(Str(o, "status")), OptStr(o, "output"),
                           OptStr(o, "error")};
  if (type == "permission_request")
    return ProviderPermissionRequest{RequestId(Str(o, "requestId")),
                                     OptId<ToolCallId>(o, "callId"),
                                     Str(o, "title"),
                                     OptStr(o, "toolName"),
                                     json::object{},
                                     {}};
  if (type == "permission_resolved")
    return ProviderPermissionResolved{RequestId(Str(o, "requestId")), PermissionDecision::kAllow,
                                      std::nullopt, std::nullopt};
  if (type == "plan")
    return ProviderPlan{{PlanEntry{Str(o, "text"), PlanEntryStatus::kPending, std::nullopt}}};
  if (type == "task_started") return ProviderTaskStarted{Str(o, "taskId"), Str(o, "text")};
  if (type == "task_notification")
    return ProviderTaskNotification{Str(o, "taskId"), Str(o, "status", "completed"),
                                    Str(o, "text")};
  if (type == "result")
    return ProviderTurnResult{Outcome(Str(o, "outcome")), OptStr(o, "stopReason"), Str(o, "code"),
                              Str(o, "message"), task};
  if (type == "error") {
    const json::value* fatal = o.if_contains("fatal");
    return ProviderError{Str(o, "code"), Str(o, "message"),
                         fatal && fatal->is_bool() && fatal->as_bool()};
  }
  if (type == "usage") return ProviderUsage{Usage{}};
  if (type == "unknown") return ProviderUnknown{Str(o, "name"), json::object{}};
  if (type == "exited") return ProviderExited{Str(o, "message")};
  return std::nullopt;
}

// "kind@turn" ("@-" for no turn) of each stored event.
std::vector<std::string> LogLines(const std::vector<Event>& log) {
  std::vector<std::string> out;
  out.reserve(log.size());
  for (const Event& e : log)
    out.push_back(std::string(EventKindName(e.kind())) + "@" + (e.turn ? e.turn->str() : "-"));
  return out;
}

bool Subset(const json::value& expected, const json::value& actual) {
  if (!expected.is_object()) return expected == actual;
  if (!actual.is_object()) return false;
  for (const auto& [key, value] : expected.as_object()) {
    const json::value* a = actual.as_object().if_contains(key);
    if (!a || !Subset(value, *a)) return false;
  }
  return true;
}

void CheckExpectations(const json::object& expect, ScenarioRun& run) {
  if (const json::value* log = expect.if_contains("log")) {
    json::array actual;
    for (const std::string& line : LogLines(run.log)) actual.push_back(json::string(line));
    if (*log != json::value(actual))
      run.problems.push_back("log: expected " + json::serialize(*log) + "\n     got " +
                             json::serialize(actual));
  }
  if (const json::value* timeline = expect.if_contains("timeline")) {
    json::array actual;
    const timeline::Projection projection = timeline::Project(run.log);
    for (const auto& item : projection.items()) actual.push_back(timeline::ItemToJson(item));
    const json::array& want = timeline->as_array();
    bool ok = want.size() == actual.size();
    for (std::size_t i = 0; ok && i < want.size(); ++i) ok = Subset(want[i], actual[i]);
    if (!ok)
      run.problems.push_back("timeline: expected " + json::serialize(*timeline) + "\n     got " +
                             json::serialize(actual));
  }
  if (const json::value* status = expect.if_contains("status")) {
    const std::string got(SessionStatusName(SessionStatusOf(run.state)));
    if (status->as_string() != got)
      run.problems.push_back("status: expected " + std::string(status->as_string()) + ", got " +
                             got);
    const std::string replayed(SessionStatusName(StatusFromLog(run.log)));
    if (replayed != got)
      run.problems.push_back("status from a replay of the log is " + replayed + ", live " + got);
  }
  timeline::CheckOptions options;
  if (const json::value* open = expect.if_contains("openTurnsAtTail"); open && open->as_bool())
    options.allow_open_turns_at_tail = true;
  for (const auto& v : timeline::CheckInvariants(run.log, options))
    run.problems.push_back("invariant " + timeline::FormatViolation(v));
}

}  // namespace

Result<EngineInput> ParseInput(const json::object& input) {
  const std::string type = Str(input, "type");
  if (auto command = ParseCommand(type, input)) return EngineInput(*command);
  if (auto event = ParseProvider(type, input)) return EngineInput(*event);
  return Error(ErrorCode::kInvalidArgument, "unknown scenario input type '" + type + "'");
}

void AppendToLog(const std::vector<NewEvent>& events, std::vector<Event>& log) {
  for (const NewEvent& ne : events) {
    Result<Event> event = ToEvent(ne, SessionId("s"), Cursor{Epoch(1), Seq(log.size() + 1)});
    if (event.ok()) log.push_back(std::move(event).value());
  }
}

Result<ScenarioRun> RunScenario(const std::string& json_text) {
  boost::system::error_code ec;
  json::value doc = json::parse(json_text, ec);
  if (ec || !doc.is_object())
    return Error(ErrorCode::kInvalidArgument, "scenario is not a JSON object");
  const json::object& root = doc.as_object();
  ScenarioRun run;
  run.state.provider = "scripted";
  SequentialTurnIds ids;
  for (const json::value& v : root.at("inputs").as_array()) {
    const json::object& input = v.as_object();
    if (Str(input, "type") == "restart") {  // the daemon restarts: state comes back from the log
      run.state = RestoreTurnState(run.log, "scripted");
      continue;
    }
    AS_ASSIGN_OR_RETURN(EngineInput parsed, ParseInput(input));
    Step step = Advance(std::move(run.state), parsed, ids);
    if (!step.status.ok()) run.problems.push_back("input refused: " + step.status.ToString());
    run.state = std::move(step.state);
    AppendToLog(step.events, run.log);
    for (Effect& e : step.effects) run.effects.push_back(std::move(e));
  }
  CheckExpectations(root.at("expect").as_object(), run);
  return run;
}

}  // namespace agentstream::turn::testing
