// SessionRunner: one agent session driven end to end, as the daemon's per-session actor does it:
// ONE subscription to the provider, every provider event and every command fed through
// the pure turn engine (core/turn/engine.h) one at a time, the engine's events handed to an append
// sink in order, then its effects executed against the provider (start a turn, interrupt with
// escalation, answer a permission), whose outcomes come back as commands.
//
// Beside the providers, above the provider contract and the turn engine and needing nothing else:
// the daemon's LiveAgent (runtime/live_agent.h) runs one per session, and the provider tests
// (providers/testing/) drive a provider through it into an in-memory log. It is a library of its
// own, agentstream_session_runner, so that no provider links it.
//
// Threading: the provider's EventLoop thread. Inputs that arrive while a step runs (a provider
// callback fired from inside an effect) are queued and fed after it, so steps never nest.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/event_codec.h"
#include "core/status.h"
#include "core/turn/engine.h"
#include "providers/provider.h"

namespace agentstream::providers {

class SessionRunner {
 public:
  // Receives each step's events, in order, as one batch (the daemon appends them to the log).
  using AppendSink = std::function<void(const std::vector<NewEvent>&)>;

  // Receives each ReplySubmission and StatusChanged effect, in order, after the step's events
  // went to the sink, except the answer Command() returns. It may call Command() (the input is
  // queued behind the running step).
  using EffectObserver = std::function<void(const turn::Effect&)>;

  // `provider` and `ids` must outlive the runner; `sink` and `observer` must not be empty.
  // Starts from `initial` (a state restored from the log, RestoreTurnState, or a fresh TurnState
  // naming the provider) and subscribes at once (before any turn starts).
  SessionRunner(AgentProvider& provider, turn::TurnState initial, turn::TurnIdSource& ids,
                AppendSink sink, EffectObserver observer);

  // Feeds a command (submit, interrupt, permission reply, ...) and the inputs it sets off. Returns
  // the engine's refusal (nothing changed), or for a SubmitPrompt the answer to its sender when
  // the engine gave it within this call (a retry, a queued prompt, a turn the provider accepted or
  // refused at once); that answer goes to the caller here and not to the observer. Empty for the
  // other commands; for a prompt whose turn the provider has yet to accept (its answer reaches the
  // observer later); and for a command queued behind a running step (checked when it is fed).
  Result<std::optional<turn::ReplySubmission>> Command(const turn::Command& command);

  const turn::TurnState& state() const { return state_; }
  turn::SessionStatus status() const { return turn::SessionStatusOf(state_); }

 private:
  // The answer to the sender of the command being fed, looked for among the effects.
  struct SenderAnswer {
    const std::string* client_message_id = nullptr;  // none: nobody waits for one
    std::optional<turn::ReplySubmission> reply;
  };

  Status Feed(turn::EngineInput input, SenderAnswer* answer);
  void Execute(const turn::Effect& effect, SenderAnswer* answer);

  AgentProvider& provider_;
  turn::TurnIdSource& ids_;
  AppendSink sink_;
  EffectObserver observer_;
  turn::TurnState state_;
  EventSubscription subscription_;
  bool stepping_ = false;
  std::deque<turn::EngineInput> pending_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentstream::providers
