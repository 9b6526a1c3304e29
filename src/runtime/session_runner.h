// SessionRunner: one agent session driven end to end, as the daemon's per-session actor does it:
// ONE subscription to the provider, every provider event and every command fed through
// the pure turn engine (core/turn/engine.h) one at a time, the engine's events handed to an append
// sink in order, then its effects executed against the provider (start a turn, interrupt with
// escalation, answer a permission), whose outcomes come back as commands.
//
// Runtime glue, not part of a provider: the daemon's LiveAgent (live_agent.h) runs one per
// session, and the provider tests drive a provider through it into an in-memory log (it is a
// library of its own, agentstream_session_runner, for them).
//
// Threading: the provider's EventLoop thread. Inputs that arrive while a step runs (a provider
// callback fired from inside an effect) are queued and fed after it, so steps never nest.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "core/event_codec.h"
#include "core/turn/engine.h"
#include "providers/provider.h"

namespace agentstream::runtime {

class SessionRunner {
 public:
  // Receives each step's events, in order, as one batch (the daemon appends them to the log).
  using AppendSink = std::function<void(const std::vector<NewEvent>&)>;

  // Receives each ReplySubmission and StatusChanged effect, in order, after the step's events
  // went to the sink. It may call Command() (the input is queued behind the running step).
  using EffectObserver = std::function<void(const turn::Effect&)>;

  // `provider` and `ids` must outlive the runner; `sink` and `observer` must not be empty.
  // Starts from `initial` (a state restored from the log, RestoreTurnState, or a fresh TurnState
  // naming the provider) and subscribes at once (before any turn starts).
  SessionRunner(providers::AgentProvider& provider, turn::TurnState initial,
                turn::TurnIdSource& ids, AppendSink sink, EffectObserver observer);

  // Feeds a command (submit, interrupt, permission reply, ...). Returns the engine's verdict
  // (non-OK: refused, nothing changed); OK when it was queued behind a running step.
  Status Command(const turn::Command& command);

  const turn::TurnState& state() const { return state_; }
  turn::SessionStatus status() const { return turn::SessionStatusOf(state_); }

 private:
  Status Feed(turn::EngineInput input);
  void Execute(const turn::Effect& effect);

  providers::AgentProvider& provider_;
  turn::TurnIdSource& ids_;
  AppendSink sink_;
  EffectObserver observer_;
  turn::TurnState state_;
  providers::Subscription subscription_;
  bool stepping_ = false;
  std::deque<turn::EngineInput> pending_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace agentstream::runtime
