#include "core/turn/engine.h"

#include "core/turn/engine_internal.h"
#include "core/utf8.h"

namespace agentstream::turn {

namespace internal {

void Stepper::Emit(const Payload& payload, const std::optional<TurnId>& turn) {
  step_.events.push_back(MakeNewEvent(payload, turn));
}

Run* Stepper::Open(const std::optional<TurnId>& turn) {
  if (!turn) return nullptr;
  auto it = s_.open.find(*turn);
  return it == s_.open.end() ? nullptr : &it->second;
}

void Stepper::MarkStreaming(const std::optional<TurnId>& turn) {
  Run* run = Open(turn);
  if (run && run->phase != RunPhase::kFinalizing) run->phase = RunPhase::kStreaming;
}

TurnId Stepper::OpenRun(TurnOrigin origin, const std::optional<std::string>& client_id,
                        const std::optional<std::string>& task_id) {
  TurnId id = ids_.Next();
  Run run{id, origin, RunPhase::kQueued, client_id, task_id};
  run.order = s_.next_order++;
  if (origin == TurnOrigin::kForeground) s_.foreground = id;
  if (task_id) s_.by_task[*task_id] = id;
  s_.open[id] = std::move(run);
  s_.errored = false;
  Emit(TurnStarted{origin, client_id, task_id}, id);
  return id;
}

void Stepper::StartForeground(const SubmitPrompt& prompt) {
  const TurnId turn = OpenRun(TurnOrigin::kForeground, prompt.client_message_id, std::nullopt);
  Run& run = s_.open[turn];
  run.prompt_text = SanitizeUtf8(prompt.text);
  s_.last_prompt_text = run.prompt_text;
  s_.known_client_ids.Set(prompt.client_message_id, turn);
  Emit(UserMessage{MessageId("user_" + turn.str()), prompt.client_message_id, run.prompt_text,
                   prompt.attachments},
       turn);
  Do(StartProviderTurn{turn, prompt.client_message_id, run.prompt_text, prompt.attachments});
}

void Stepper::CloseRun(const TurnId& turn, TurnOutcome outcome, const std::string& code,
                       const std::string& message, const std::optional<std::string>& stop_reason) {
  if (!s_.open.count(turn)) return;
  switch (outcome) {
    case TurnOutcome::kCompleted:
      Emit(TurnCompleted{stop_reason}, turn);
      RetireRun(s_, turn, RunPhase::kCompleted);
      break;
    case TurnOutcome::kCanceled:
      Emit(TurnCanceled{message.empty() ? "interrupted" : SanitizeUtf8(message)}, turn);
      RetireRun(s_, turn, RunPhase::kInterrupted);
      break;
    case TurnOutcome::kFailed:
      Emit(TurnFailed{code.empty() ? "failed" : SanitizeUtf8(code), SanitizeUtf8(message)}, turn);
      RetireRun(s_, turn, RunPhase::kError);
      break;
  }
  s_.errored = outcome == TurnOutcome::kFailed;
  StartWaitingPrompt();
}

// Starts the prompt that preempted an autonomous turn, else the next queued prompt, once no run
// is open: this is the "start" of the atomic autonomous -> foreground transition.
void Stepper::StartWaitingPrompt() {
  if (!s_.open.empty() || s_.queue_held) return;
  if (s_.pending_after_teardown) {
    SubmitPrompt prompt = std::move(*s_.pending_after_teardown);
    s_.pending_after_teardown.reset();
    StartForeground(prompt);
  } else if (!s_.queue.empty()) {
    SubmitPrompt prompt = std::move(s_.queue.front());
    s_.queue.pop_front();
    StartForeground(prompt);
  }
}

void Stepper::FailAllOpen(const std::string& code, const std::string& message) {
  // Fail every run open now; prompts started by CloseRun afterwards stay open.
  std::vector<TurnId> open;
  for (const auto& [id, run] : s_.open) open.push_back(id);
  for (const TurnId& id : open) CloseRun(id, TurnOutcome::kFailed, code, message, std::nullopt);
}

}  // namespace internal

Step Advance(TurnState state, const EngineInput& input, TurnIdSource& ids) {
  Step step;
  internal::Stepper stepper(state, step, ids);
  if (const auto* command = std::get_if<Command>(&input)) {
    step.status = stepper.Check(*command);  // refuses before anything changes
    if (!step.status.ok()) {
      step.state = std::move(state);
      return step;
    }
    stepper.OnCommand(*command);
  } else {
    stepper.OnProvider(std::get<ProviderEvent>(input));
  }
  const SessionStatus status = SessionStatusOf(state);
  if (status != state.reported_status) {
    state.reported_status = status;
    step.effects.push_back(StatusChanged{status});
  }
  step.state = std::move(state);
  return step;
}

}  // namespace agentstream::turn
