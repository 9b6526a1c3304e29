#include "providers/scripted/scripted_provider.h"

#include <algorithm>

#include "system/random_id.h"

namespace agentstream::providers::scripted {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace): the event vocabulary
using process::Millis;

ScriptStep ScriptStep::Text(std::string text, int chunks, Millis gap) {
  ScriptStep s;
  s.kind = Kind::kText, s.text = std::move(text), s.chunks = std::max(1, chunks), s.delay = gap;
  return s;
}
ScriptStep ScriptStep::Tool(std::string name, boost::json::value input, std::string output) {
  ScriptStep s;
  s.kind = Kind::kTool, s.name = std::move(name), s.input = std::move(input);
  s.text = std::move(output);
  return s;
}
ScriptStep ScriptStep::Permission(std::string name, boost::json::value input, std::string output) {
  ScriptStep s = Tool(std::move(name), std::move(input), std::move(output));
  s.kind = Kind::kPermission;
  return s;
}
ScriptStep ScriptStep::Background(std::string description, Millis after,
                                  std::vector<ScriptStep> wake) {
  ScriptStep s;
  s.kind = Kind::kBackgroundTask, s.name = std::move(description), s.delay = after;
  s.wake = std::move(wake);
  return s;
}
ScriptStep ScriptStep::Delay(Millis d) {
  ScriptStep s;
  s.kind = Kind::kDelay, s.delay = d;
  return s;
}
ScriptStep ScriptStep::Err(std::string code, std::string message, bool fatal) {
  ScriptStep s;
  s.kind = Kind::kError, s.name = std::move(code), s.text = std::move(message), s.fatal = fatal;
  return s;
}
ScriptStep ScriptStep::Fail(std::string code, std::string message) {
  ScriptStep s;
  s.kind = Kind::kFail, s.name = std::move(code), s.text = std::move(message);
  return s;
}

std::vector<ScriptStep> EchoResponder(const std::string& prompt) {
  return {ScriptStep::Text("Echo: " + prompt)};
}

ScriptedProvider::ScriptedProvider(process::Timers& timers, Responder responder)
    : timers_(timers), responder_(std::move(responder)) {
  instance_ = system::RandomHex(16);
}

ScriptedProvider::~ScriptedProvider() {
  *alive_ = false;
  subscribers_->Close();
}

EventSubscription ScriptedProvider::Subscribe(EventCallback callback) {
  return subscribers_->Add(std::move(callback));
}

void ScriptedProvider::Later(Done done, Status status) {
  if (!done) return;
  std::erase_if(later_, [](const auto& h) { return h == nullptr; });
  later_.push_back(timers_.After(
      Millis(0), [done = std::move(done), status = std::move(status)] { done(status); }));
}

void ScriptedProvider::Emit(ProviderEvent event) {
  history_.push_back(event);
  if (history_.size() > kMaxHistory) history_.pop_front();
  subscribers_->Publish(std::move(event));
}

void ScriptedProvider::Start(Done done) {
  if (closed_) return Later(std::move(done), Error(ErrorCode::kUnavailable, "closed"));
  connected_ = true;
  Later(std::move(done), Status::Ok());
}

void ScriptedProvider::StartTurn(const TurnRequest& request, Done done) {
  if (!connected_ || closed_)
    return Later(std::move(done), Error(ErrorCode::kUnavailable, "not connected"));
  const bool fg_busy =
      (current_ && current_->foreground) ||
      std::any_of(jobs_.begin(), jobs_.end(), [](const Job& j) { return j.foreground; });
  if (fg_busy)
    return Later(std::move(done), Error(ErrorCode::kConflict, "a foreground turn is active"));
  jobs_.push_back(Job{responder_(request.text), true, request.text, std::nullopt});
  Later(std::move(done), Status::Ok());
  if (!current_) step_timer_ = timers_.After(Millis(0), [this] { MaybeRunNext(); });
}

void ScriptedProvider::MaybeRunNext() {
  if (current_ || jobs_.empty() || closed_) return;
  current_ = std::move(jobs_.front());
  jobs_.pop_front();
  step_index_ = 0;
  if (current_->foreground) Emit(ProviderUserEcho{std::nullopt, std::nullopt, current_->prompt});
  Emit(ProviderTurnBegan{current_->task_id});
  Step();
}

void ScriptedProvider::Step() {
  if (!current_) return;
  if (step_index_ >= current_->steps.size()) return EndTurn(TurnOutcome::kCompleted, "", "");
  const ScriptStep step = current_->steps[step_index_++];
  RunStep(step);
}

void ScriptedProvider::RunStep(const ScriptStep& step) {
  using Kind = ScriptStep::Kind;
  auto next = [this](Millis d) { step_timer_ = timers_.After(d, [this] { Step(); }); };
  switch (step.kind) {
    case Kind::kText: {
      const MessageId id(Next("scripted_msg_"));
      Emit(ProviderMessageStart{id, std::nullopt, current_->task_id});
      return RunText(step, 0, id);
    }
    case Kind::kTool: {
      const ToolCallId call(Next("scripted_call_"));
      Emit(ProviderToolStart{call, step.name, std::nullopt, step.input, std::nullopt,
                             current_->task_id});
      Emit(ProviderToolEnd{call, ToolCallStatus::kCompleted, step.text, std::nullopt});
      return next(Millis(0));
    }
    case Kind::kPermission: {
      const ToolCallId call(Next("scripted_call_"));
      const RequestId req(Next("scripted_perm_"));
      Emit(ProviderToolStart{call, step.name, std::nullopt, step.input, std::nullopt,
                             current_->task_id});
      permission_ = Waiting{PendingPermission{req, call, step.name, step.input}, step.text};
      Emit(ProviderPermissionRequest{req,
                                     call,
                                     step.name,
                                     step.name,
                                     step.input,
                                     {{"allow", PermissionOptionKind::kAllowOnce, "Allow"},
                                      {"deny", PermissionOptionKind::kRejectOnce, "Deny"}}});
      return;  // RespondToPermission continues the script
    }
    case Kind::kBackgroundTask: {
      const std::string task = Next("scripted_task_");
      Emit(ProviderTaskStarted{task, step.name});
      task_timers_[task] = timers_.After(
          step.delay, [this, task, wake = step.wake]() mutable { Wake(task, std::move(wake)); });
      return next(Millis(0));
    }
    case Kind::kDelay:
      return next(step.delay);
    case Kind::kError:
      Emit(ProviderError{step.name, step.text, step.fatal});
      if (step.fatal) return EndTurn(TurnOutcome::kFailed, step.name, step.text);
      return next(Millis(0));
    case Kind::kFail:
      return EndTurn(TurnOutcome::kFailed, step.name, step.text);
  }
}

void ScriptedProvider::RunText(const ScriptStep& step, int chunk, const MessageId& id) {
  const std::size_t n = step.text.size();
  const std::size_t from = n * chunk / step.chunks, to = n * (chunk + 1) / step.chunks;
  Emit(ProviderTextDelta{id, step.text.substr(from, to - from), std::nullopt, current_->task_id});
  if (chunk + 1 >= step.chunks) {
    Emit(ProviderMessageStop{id, "end_turn"});
    step_timer_ = timers_.After(Millis(0), [this] { Step(); });
    return;
  }
  step_timer_ =
      timers_.After(step.delay, [this, step, chunk, id] { RunText(step, chunk + 1, id); });
}

void ScriptedProvider::EndTurn(TurnOutcome outcome, std::string code, std::string message) {
  if (!current_) return;
  step_timer_.reset();
  permission_.reset();
  ProviderTurnResult r{outcome, std::nullopt, std::move(code), std::move(message),
                       current_->task_id};
  if (outcome == TurnOutcome::kCompleted) r.stop_reason = "end_turn";
  current_.reset();
  Emit(std::move(r));
  step_timer_ = timers_.After(Millis(0), [this] { MaybeRunNext(); });
}

void ScriptedProvider::Wake(const std::string& task_id, std::vector<ScriptStep> steps) {
  task_timers_.erase(task_id);  // NOLINT: destroys the handle of the timer running now (safe)
  Emit(ProviderTaskNotification{task_id, "completed", "background task finished"});
  jobs_.push_back(Job{std::move(steps), false, "", std::nullopt});
  MaybeRunNext();
}

void ScriptedProvider::Interrupt(Done done) {
  if (current_) EndTurn(TurnOutcome::kCanceled, "", "interrupted");
  Later(std::move(done), Status::Ok());
}

Result<std::vector<ProviderEvent>> ScriptedProvider::StreamHistory() {
  return std::vector<ProviderEvent>(history_.begin(), history_.end());
}

RuntimeInfo ScriptedProvider::GetRuntimeInfo() const {
  return RuntimeInfo{"scripted", "scripted", model_, mode_, "1", 0, connected_ && !closed_};
}

std::vector<ModeInfo> ScriptedProvider::AvailableModes() const {
  return {{"default", "Ask"}, {"bypassPermissions", "Never ask"}};
}

void ScriptedProvider::SetMode(const std::string& mode, Done done) {
  const auto modes = AvailableModes();
  if (std::none_of(modes.begin(), modes.end(), [&](const ModeInfo& m) { return m.id == mode; }))
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown mode " + mode));
  if (mode != mode_) Emit(ProviderModeChanged{mode});
  mode_ = mode;
  Later(std::move(done), Status::Ok());
}

std::vector<ModelInfo> ScriptedProvider::AvailableModels() const {
  return {{"scripted-1", "Scripted"}, {"scripted-2", "Scripted (fast)"}};
}

void ScriptedProvider::SetModel(const std::string& model, Done done) {
  if (model != "scripted-1" && model != "scripted-2")
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown model " + model));
  model_ = model;
  Emit(ProviderModelChanged{model});
  Later(std::move(done), Status::Ok());
}

std::vector<ThinkingOption> ScriptedProvider::ThinkingOptions() const {
  return {{"off", "Off"}, {"on", "On"}};
}

void ScriptedProvider::SetThinkingOption(const std::string& option, Done done) {
  if (option != "off" && option != "on")
    return Later(std::move(done), Error(ErrorCode::kInvalidArgument, "unknown option " + option));
  thinking_ = option;
  Later(std::move(done), Status::Ok());
}

std::vector<SlashCommand> ScriptedProvider::ListCommands() const {
  return {{"help", "What the scripted agent understands"}};
}

std::vector<PendingPermission> ScriptedProvider::PendingPermissions() const {
  if (!permission_) return {};
  return {permission_->info};
}

void ScriptedProvider::RespondToPermission(const RequestId& request, const PermissionReply& reply,
                                           Done done) {
  if (!permission_ || permission_->info.request_id != request)
    return Later(std::move(done), Error(ErrorCode::kNotFound, "not pending: " + request.str()));
  Waiting w = std::move(*permission_);
  permission_.reset();
  // The resolution itself is recorded by the turn engine (ReplyPermission), not echoed here.
  const bool allow = reply.decision == PermissionDecision::kAllow;
  Emit(ProviderToolEnd{*w.info.call_id,
                       allow ? ToolCallStatus::kCompleted : ToolCallStatus::kFailed,
                       allow ? std::optional<std::string>(w.output) : std::nullopt,
                       allow ? std::nullopt : std::optional<std::string>("denied")});
  step_timer_ = timers_.After(Millis(0), [this] { Step(); });
  Later(std::move(done), Status::Ok());
}

std::optional<PersistenceHandle> ScriptedProvider::DescribePersistence() const {
  return std::nullopt;  // nothing persists outside the daemon's own log
}

void ScriptedProvider::Close(Done done) {
  closed_ = true;
  connected_ = false;
  subscribers_->Close();
  step_timer_.reset();
  task_timers_.clear();
  jobs_.clear();
  current_.reset();
  permission_.reset();
  Later(std::move(done), Status::Ok());
}

}  // namespace agentstream::providers::scripted
