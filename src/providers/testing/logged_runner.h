// Test support: a SessionRunner over a provider whose batches land in an in-memory log, as the
// stored events of one session, beside every ReplySubmission and StatusChanged effect the runner
// reported. For the tests that drive a provider through the turn engine without a daemon or a
// store. Single-threaded, like the runner.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/timeline/invariants.h"
#include "core/turn/effect.h"
#include "core/turn/turn_state.h"
#include "providers/provider.h"
#include "providers/session_runner.h"

namespace agentstream::providers::testing {

class LoggedRunner {
 public:
  LoggedRunner() = default;
  LoggedRunner(const LoggedRunner&) = delete;
  LoggedRunner& operator=(const LoggedRunner&) = delete;

  // Builds the runner over `provider`, which must outlive it (or Drop()); a new session with
  // `provider_name` stamped on its metadata events.
  void Open(AgentProvider& provider, std::string provider_name);
  // Destroys the runner (it unsubscribes from its provider); the log stays.
  void Drop() { runner_.reset(); }

  SessionRunner& runner() { return *runner_; }
  const SessionRunner& runner() const { return *runner_; }
  const std::vector<Event>& log() const { return log_; }

  template <class T>
  std::vector<const Event*> Of() const {
    std::vector<const Event*> out;
    for (const Event& e : log_)
      if (std::holds_alternative<T>(e.payload)) out.push_back(&e);
    return out;
  }
  // Completed, canceled and failed turns.
  std::size_t Terminals() const;
  // The turns started, in order.
  std::vector<TurnId> Turns() const;
  // All assistant text of `turn`.
  std::string TextOfTurn(const TurnId& turn) const;
  // One line per event ("seq kind turn payload"), for failure messages.
  std::string DumpLog() const;
  // Idle (or in error) with no prompt queued and no teardown pending.
  bool Settled() const;
  // The turn invariants of docs/timeline.md over the log; a test failure per violation.
  void CheckInvariants(const timeline::CheckOptions& options = {}) const;

  // Feeds `command` through the runner (SessionRunner::Command) and returns the engine's verdict;
  // the answer the runner returns to a prompt's sender joins replies().
  Status Command(const turn::Command& command);

  // Every answer to a prompt's sender (returned to Command() or reported as an effect) and every
  // StatusChanged effect, in order.
  const std::vector<turn::ReplySubmission>& replies() const { return replies_; }
  const std::vector<turn::SessionStatus>& status_changes() const { return status_changes_; }

 private:
  void Record(const turn::Effect& effect);

  std::vector<Event> log_;
  turn::SequentialTurnIds ids_;
  std::vector<turn::ReplySubmission> replies_;
  std::vector<turn::SessionStatus> status_changes_;
  std::unique_ptr<SessionRunner> runner_;
};

}  // namespace agentstream::providers::testing
