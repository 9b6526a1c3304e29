#include "providers/claude/claude_provider.h"

#include <boost/json.hpp>
#include <fstream>
#include <sstream>

namespace agentstream::providers::claude {

namespace json = boost::json;

ClaudeProvider::ClaudeProvider(process::EventLoop& loop, ClaudeOptions options)
    : ChildProcessProvider(
          loop, ChildLifecycle::Of("claude", "claude did not answer initialize in time", options)),
      options_(std::move(options)) {
  if (options_.launch.session_id.empty()) options_.launch.session_id = NewSessionUuid();
}

std::string ClaudeProvider::NextRequestId() { return "req_" + std::to_string(next_request_++); }

Result<process::SpawnOptions> ClaudeProvider::Command() {
  process::SpawnOptions spawn;
  spawn.argv = BuildArgv(options_.launch);
  spawn.env = BuildEnv(options_.launch);
  spawn.cwd = options_.launch.cwd;
  spawn.max_line_bytes = options_.max_line_bytes;
  return spawn;
}

void ClaudeProvider::Handshake() {
  const std::string id = NextRequestId();
  if (Status s = child_->WriteLine(InitializeLine(id)); !s.ok())
    return Later([this](Status status) { FinishHandshake(std::move(status)); }, s);
  pending_control_[id] = [this](const ControlResponseIn& r) { OnInitialized(r); };
}

void ClaudeProvider::OnInitialized(const ControlResponseIn& r) {
  if (!handshaking()) return;
  if (!r.success)
    return FinishHandshake(Error(ErrorCode::kUnavailable, "initialize failed: " + r.error));
  if (r.response.is_object()) {
    const json::object& body = r.response.as_object();
    if (const json::value* c = body.if_contains("commands"); c && c->is_array())
      for (const json::value& cmd : c->as_array())
        if (cmd.is_object() && cmd.as_object().if_contains("name") && cmd.at("name").is_string())
          commands_.push_back(
              {json::value_to<std::string>(cmd.at("name")),
               cmd.as_object().if_contains("description") && cmd.at("description").is_string()
                   ? json::value_to<std::string>(cmd.at("description"))
                   : ""});
    if (const json::value* m = body.if_contains("models"); m && m->is_array())
      for (const json::value& model : m->as_array())
        if (model.is_object() && model.as_object().if_contains("value") &&
            model.at("value").is_string())
          models_.push_back(
              {json::value_to<std::string>(model.at("value")),
               model.as_object().if_contains("displayName") && model.at("displayName").is_string()
                   ? json::value_to<std::string>(model.at("displayName"))
                   : ""});
  }
  connected_ = true;
  FinishHandshake(Status::Ok());
}

void ClaudeProvider::StartTurn(const TurnRequest& request, Done done) {
  if (Status ready = ReadyForTurn(foreground_active_); !ready.ok())
    return Later(std::move(done), std::move(ready));
  const std::string uuid = NewSessionUuid();
  if (Status s = child_->WriteLine(UserMessageLine(request.text, uuid)); !s.ok())
    return Later(std::move(done), Error(ErrorCode::kUnavailable, s.message()));
  outstanding_prompt_ = uuid;
  foreground_active_ = turn_running_ = true;
  ArmWatchdog();
  Later(std::move(done), Status::Ok());
}

void ClaudeProvider::SendCancel() { SendControl(InterruptLine(NextRequestId()), nullptr); }

void ClaudeProvider::SendControl(const std::string& line,
                                 std::function<void(ControlResponseIn)> reply) {
  const json::value v = json::parse(line);
  const std::string id = json::value_to<std::string>(v.at("request_id"));
  if (reply) pending_control_[id] = std::move(reply);
  if (!child_ || !child_->WriteLine(line).ok()) {
    auto it = pending_control_.find(id);
    if (it == pending_control_.end()) return;
    auto cb = std::move(it->second);
    pending_control_.erase(it);
    Post([cb, id] { cb(ControlResponseIn{id, false, "claude is not running", {}}); });
  }
}

void ClaudeProvider::OnFrame(const process::Frame& frame) {
  if (frame.kind == process::Frame::Kind::kOversize) {
    OnParsed(parser_.Oversize(frame.text.size(), frame.dropped));
  } else {
    OnParsed(parser_.Parse(frame.text));
  }
  ArmWatchdog();
}

void ClaudeProvider::OnParsed(ParsedLine parsed) {
  if (parsed.init) {
    init_ = *parsed.init;
    if (!init_.permission_mode.empty()) mode_ = init_.permission_mode;
    turn_running_ = true;
  }
  if (parsed.control_request) OnControlRequest(*parsed.control_request);
  if (parsed.replayed_uuid && parsed.replayed_uuid == outstanding_prompt_)
    outstanding_prompt_.reset();
  if (parsed.turn_result && outstanding_prompt_ && !interrupting()) {
    // The CLI finished a turn it started by itself (a background task's wake) before taking our
    // prompt in: that result does not end the foreground turn, whose prompt the CLI answers next.
    for (turn::ProviderEvent& e : parsed.events)
      if (auto* r = std::get_if<turn::ProviderTurnResult>(&e))
        e = turn::ProviderUnknown{"result.before_prompt",
                                  boost::json::object{{"outcome", static_cast<int>(r->outcome)},
                                                      {"message", r->message}}};
    parsed.turn_result = false;
  }
  // Before publishing: a subscriber may start the next turn from inside the result's delivery,
  // and that turn's state must survive this line.
  if (parsed.turn_result) ResetTurnState();
  for (turn::ProviderEvent& e : parsed.events) {
    if (auto* m = std::get_if<turn::ProviderModeChanged>(&e)) mode_ = m->mode;
    Publish(std::move(e));
  }
  if (parsed.cancel_request_id) {
    const RequestId id(*parsed.cancel_request_id);
    if (permissions_.Erase(id))
      Publish(turn::ProviderPermissionResolved{id, PermissionDecision::kDeny, std::nullopt,
                                               "withdrawn by claude"});
  }
  if (parsed.control_response) {
    auto it = pending_control_.find(parsed.control_response->request_id);
    if (it != pending_control_.end()) {
      auto cb = std::move(it->second);
      pending_control_.erase(it);
      cb(std::move(*parsed.control_response));
    }
  }
  if (parsed.turn_result) ResolveInterruptWaiters();
}

void ClaudeProvider::OnControlRequest(const ControlRequestIn& request) {
  if (request.subtype != "can_use_tool") {
    if (child_) (void)child_->WriteLine(ControlErrorLine(request.request_id, "unsupported"));
    return;
  }
  PendingPermission info;
  info.request_id = RequestId(request.request_id);
  const json::value* tool = request.request.if_contains("tool_name");
  if (tool && tool->is_string()) info.tool_name = std::string(tool->as_string());
  if (const json::value* input = request.request.if_contains("input")) info.input = *input;
  const json::value* call = request.request.if_contains("tool_use_id");
  if (call && call->is_string()) info.call_id = ToolCallId(std::string(call->as_string()));
  permissions_.Add(std::move(info));
}

void ClaudeProvider::ResetTurnState() {
  turn_running_ = foreground_active_ = false;
  outstanding_prompt_.reset();
  permissions_.Clear();
  StopWatchdog();
}

void ClaudeProvider::FailRequests(const process::ExitInfo&) {
  auto controls = std::move(pending_control_);
  for (auto& [id, cb] : controls) cb(ControlResponseIn{id, false, "claude exited", {}});
}

Result<std::vector<turn::ProviderEvent>> ClaudeProvider::StreamHistory() {
  std::string home;
  for (const std::string& e : BuildEnv(options_.launch))
    if (e.rfind("HOME=", 0) == 0) home = e.substr(5);
  const std::string path =
      TranscriptPath(home, options_.launch.cwd,
                     init_.session_id.empty() ? options_.launch.session_id : init_.session_id);
  std::string text;
  if (options_.read_file) {
    AS_ASSIGN_OR_RETURN(text, options_.read_file(path));
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error(ErrorCode::kNotFound, "no transcript at " + path);
    std::ostringstream buf;
    buf << in.rdbuf();
    text = buf.str();
  }
  return ParseTranscript(text);
}

RuntimeInfo ClaudeProvider::GetRuntimeInfo() const {
  return RuntimeInfo{
      "claude",      init_.session_id.empty() ? options_.launch.session_id : init_.session_id,
      init_.model,   mode_,
      init_.version, pid(),
      connected_};
}

std::vector<ModeInfo> ClaudeProvider::AvailableModes() const {
  return {{"default", "Ask before tools"},
          {"acceptEdits", "Accept edits"},
          {"bypassPermissions", "Bypass permissions"},
          {"plan", "Plan only"},
          {"dontAsk", "Deny unless allowed"}};
}

void ClaudeProvider::SetMode(const std::string& mode, Done done) {
  if (!connected_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  SendControl(SetPermissionModeLine(NextRequestId(), mode),
              [this, mode, done = std::move(done)](const ControlResponseIn& r) {
                if (!r.success) return done(Error(ErrorCode::kInvalidArgument, r.error));
                if (mode_ != mode) Publish(turn::ProviderModeChanged{mode});
                mode_ = mode;
                done(Status::Ok());
              });
}

void ClaudeProvider::SetModel(const std::string& model, Done done) {
  if (!connected_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  SendControl(SetModelLine(NextRequestId(), model),
              [this, model, done = std::move(done)](const ControlResponseIn& r) {
                if (!r.success) return done(Error(ErrorCode::kInvalidArgument, r.error));
                Publish(turn::ProviderModelChanged{model});
                done(Status::Ok());
              });
}

std::vector<ThinkingOption> ClaudeProvider::ThinkingOptions() const {
  return {{"default", "Adaptive"}, {"off", "No extended thinking"}};
}

void ClaudeProvider::SetThinkingOption(const std::string& option, Done done) {
  if (!connected_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  if (option != "default" && option != "off")
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown option " + option));
  std::optional<int> tokens;
  if (option == "off") tokens = 0;
  SendControl(SetThinkingLine(NextRequestId(), tokens),
              [done = std::move(done)](const ControlResponseIn& r) {
                done(r.success ? Status::Ok() : Error(ErrorCode::kInvalidArgument, r.error));
              });
}

std::vector<SlashCommand> ClaudeProvider::ListCommands() const {
  if (!commands_.empty()) return commands_;
  std::vector<SlashCommand> out;
  for (const std::string& c : init_.slash_commands) out.push_back({c, ""});
  return out;
}

void ClaudeProvider::RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                         Done done) {
  const std::optional<PermissionTable<>::Entry> p = permissions_.Take(request);
  if (!p) return Later(std::move(done), NotPending(request));
  const std::string line =
      reply.decision == PermissionDecision::kAllow
          ? PermissionAllowLine(request.str(), p->info.input,
                                p->info.call_id ? p->info.call_id->str() : std::string())
          : PermissionDenyLine(request.str(), reply.message.value_or("denied by the user"));
  Status s = child_ ? child_->WriteLine(line) : Error(ErrorCode::kUnavailable, "not running");
  ArmWatchdog();
  Later(std::move(done), std::move(s));
}

std::optional<PersistenceHandle> ClaudeProvider::DescribePersistence() const {
  return PersistenceHandle{"claude", GetRuntimeInfo().session_id, options_.launch.cwd};
}

}  // namespace agentstream::providers::claude
