// The command half of the turn engine: submissions, provider acceptance, interrupts, permission
// replies, queue edits and restart recovery.
#include <type_traits>

#include "core/turn/engine_internal.h"
#include "core/utf8.h"

namespace agentstream::turn::internal {

Status Stepper::Check(const Command& command) const {
  if (const auto* submit = std::get_if<SubmitPrompt>(&command)) {
    if (submit->client_message_id.empty())
      return Error(ErrorCode::kInvalidArgument, "a prompt needs a client message id");
  }
  if (const auto* reply = std::get_if<ReplyPermission>(&command)) {
    for (const auto& [id, run] : s_.open)
      if (run.pending_permissions.count(reply->request_id)) return Status::Ok();
    return Error(ErrorCode::kNotFound, "no pending permission request " + reply->request_id.str());
  }
  return Status::Ok();
}

void Stepper::OnCommand(const Command& command) {
  std::visit(
      [&](const auto& c) {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, SubmitPrompt>)
          Submit(c);
        else if constexpr (std::is_same_v<T, ProviderAcceptedTurn>)
          Accepted(c);
        else if constexpr (std::is_same_v<T, ProviderRejectedTurn>)
          Rejected(c);
        else if constexpr (std::is_same_v<T, RequestInterrupt>)
          Interrupt();
        else if constexpr (std::is_same_v<T, InterruptTeardownDone>)
          TeardownDone();
        else if constexpr (std::is_same_v<T, ReplyPermission>)
          Permission(c);
        else if constexpr (std::is_same_v<T, CancelQueuedPrompt>)
          CancelQueued(c);
        else if constexpr (std::is_same_v<T, RecoverAfterRestart>)
          Recover(c);
        else if constexpr (std::is_same_v<T, ResumeQueue>)
          ResumeQueued();
        else
          s_.queue_held = true;
      },
      command);
}

void Stepper::Submit(const SubmitPrompt& p) {
  if (const TurnId* known = s_.known_client_ids.Find(p.client_message_id)) {
    std::optional<TurnId> turn;
    if (!known->empty()) turn = *known;
    Do(ReplySubmission{p.client_message_id, SubmissionOutcome::kDuplicate, turn,
                       "already received"});
    return;
  }
  s_.known_client_ids.Set(p.client_message_id, TurnId());
  if (s_.open.empty() && !s_.pending_after_teardown) {
    StartForeground(p);  // accepted once the provider accepts (ProviderAcceptedTurn)
    return;
  }
  const bool replace = p.while_running != WhileRunning::kQueue;
  if (!replace || s_.pending_after_teardown) {
    s_.queue.push_back(p);
    Queue(p, "");
    return;
  }
  // Atomic transition: interrupt every open run, await teardown, then start this prompt.
  s_.pending_after_teardown = p;
  for (auto& [id, run] : s_.open) InterruptRun(run);
  Queue(p, "starts when the running turn has stopped");
}

// Records a prompt that waits (it is durable before the client hears "queued") and replies.
void Stepper::Queue(const SubmitPrompt& p, const std::string& message) {
  std::optional<std::string> while_running;
  if (p.while_running == WhileRunning::kInterrupt) while_running = "interrupt";
  if (p.while_running == WhileRunning::kSteer) while_running = "steer";
  Emit(PromptQueued{p.client_message_id, SanitizeUtf8(p.text), p.attachments, while_running},
       std::nullopt);
  Do(ReplySubmission{p.client_message_id, SubmissionOutcome::kQueued, std::nullopt, message});
}

void Stepper::InterruptRun(Run& run) {
  if (run.phase == RunPhase::kFinalizing) return;  // already asked
  run.phase = RunPhase::kFinalizing;
  Do(InterruptProvider{run.id});
}

void Stepper::Accepted(const ProviderAcceptedTurn& c) {
  std::optional<std::string> client_id;
  if (Run* run = Open(c.turn)) {
    if (run->phase == RunPhase::kQueued) run->phase = RunPhase::kAwaitingResponse;
    client_id = run->client_message_id;
  } else {
    for (const Run& closed : s_.recent_closed)
      if (closed.id == c.turn) client_id = closed.client_message_id;
  }
  if (client_id) Do(ReplySubmission{*client_id, SubmissionOutcome::kAccepted, c.turn, ""});
}

void Stepper::Rejected(const ProviderRejectedTurn& c) {
  Run* run = Open(c.turn);
  if (!run) return;  // already ended: its terminal is recorded
  const std::optional<std::string> client_id = run->client_message_id;
  CloseRun(c.turn, TurnOutcome::kFailed, "provider_rejected", c.message, std::nullopt);
  if (client_id) Do(ReplySubmission{*client_id, SubmissionOutcome::kRejected, c.turn, c.message});
}

void Stepper::Interrupt() {
  if (s_.foreground) {
    InterruptRun(s_.open[*s_.foreground]);
    return;
  }
  for (auto& [id, run] : s_.open) InterruptRun(run);  // else every autonomous run
}

void Stepper::TeardownDone() {
  std::vector<TurnId> finalizing;
  for (const auto& [id, run] : s_.open)
    if (run.phase == RunPhase::kFinalizing) finalizing.push_back(id);
  for (const TurnId& id : finalizing)
    CloseRun(id, TurnOutcome::kCanceled, "", "interrupted", std::nullopt);
  StartWaitingPrompt();
}

void Stepper::Permission(const ReplyPermission& c) {
  const std::optional<TurnId> holder = ResolvePermission(s_, c.request_id);
  if (!holder) return;
  Emit(PermissionResolved{c.request_id, c.decision, c.option_id, c.message}, *holder);
  Do(SendPermissionReply{c.request_id, c.decision, c.option_id, c.message});
}

void Stepper::CancelQueued(const CancelQueuedPrompt& c) {
  if (s_.pending_after_teardown &&
      s_.pending_after_teardown->client_message_id == c.client_message_id) {
    s_.pending_after_teardown.reset();  // the interrupt it asked for goes on
    s_.known_client_ids.Erase(c.client_message_id);
    Emit(PromptCanceled{c.client_message_id, SanitizeUtf8(c.reason)}, std::nullopt);
    Do(ReplySubmission{c.client_message_id, SubmissionOutcome::kCanceled, std::nullopt, ""});
    return;
  }
  for (auto it = s_.queue.begin(); it != s_.queue.end(); ++it) {
    if (it->client_message_id != c.client_message_id) continue;
    s_.queue.erase(it);
    s_.known_client_ids.Erase(c.client_message_id);  // never started: may be sent again
    Emit(PromptCanceled{c.client_message_id, SanitizeUtf8(c.reason)}, std::nullopt);
    Do(ReplySubmission{c.client_message_id, SubmissionOutcome::kCanceled, std::nullopt, ""});
    return;
  }
}

void Stepper::Recover(const RecoverAfterRestart& c) { FailAllOpen(c.code, c.message); }

void Stepper::ResumeQueued() {
  s_.queue_held = false;
  StartWaitingPrompt();
}

}  // namespace agentstream::turn::internal
