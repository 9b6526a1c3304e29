// Test support: records what a SessionRunner reports to its observer (each ReplySubmission and
// StatusChanged effect, in order), for tests that drive a provider through the turn engine
// without a daemon. Header-only; single-threaded, like the runner it observes.
#pragma once

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/turn/effect.h"
#include "core/turn/turn_state.h"
#include "runtime/session_runner.h"

namespace agentstream::providers::testing {

class EffectRecorder {
 public:
  // An observer for SessionRunner that appends to this recorder, which must outlive the runner.
  runtime::SessionRunner::EffectObserver Observer() {
    return [this](const turn::Effect& effect) {
      if (const auto* r = std::get_if<turn::ReplySubmission>(&effect)) {
        replies_.push_back(*r);
      } else if (const auto* c = std::get_if<turn::StatusChanged>(&effect)) {
        status_changes_.push_back(c->status);
      }
    };
  }

  // Every ReplySubmission and StatusChanged effect so far, in order.
  const std::vector<turn::ReplySubmission>& replies() const { return replies_; }
  const std::vector<turn::SessionStatus>& status_changes() const { return status_changes_; }

 private:
  std::vector<turn::ReplySubmission> replies_;
  std::vector<turn::SessionStatus> status_changes_;
};

// The state a new session starts from: nothing open, `provider` stamped on its metadata events.
inline turn::TurnState NewSessionState(std::string provider) {
  turn::TurnState state;
  state.provider = std::move(provider);
  return state;
}

}  // namespace agentstream::providers::testing
