// Test support for the tests against the real `claude` CLI: the scripted model server
// (tests/model_server/server.mjs, run with node through the process layer) and a session that
// drives a ClaudeProvider through the turn engine into an in-memory log, with the invariant
// checker (including transcript parity against the CLI's own transcript file) run at the end.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/turn/turn_state.h"
#include "process/child_process.h"
#include "process/event_loop.h"
#include "providers/claude/claude_provider.h"
#include "providers/session_runner.h"
#include "providers/testing/effect_recorder.h"

namespace agentstream::providers::claude::testing {

// The pinned CLI of tests/peers (npm ci) and the fake one of testdata/.
std::string ClaudeProgram();
std::string FakeClaudeProgram();

// node tests/model_server/server.mjs on a free port, alive as long as this object.
class ModelServer {
 public:
  // Starts the server; fails the test (fatal) when it does not come up within 10 s.
  explicit ModelServer(process::EventLoop& loop, std::vector<std::string> extra_env = {});
  int port() const { return port_; }
  int requests() const { return requests_; }

 private:
  std::unique_ptr<process::ChildProcess> child_;
  int port_ = 0;
  int requests_ = 0;
};

// One claude session: provider + SessionRunner + log, with a private HOME and working dir.
class Session {
 public:
  struct Options {
    std::string program;  // default: ClaudeProgram()
    process::Millis stall_timeout{120000};
    process::Millis interrupt_timeout{5000};
    std::size_t max_line_bytes = std::size_t{8} << 20;
    std::string resume_session_id;  // resume this session instead of a new one
    std::string root;               // reuse this HOME/work root (for resume)
  };
  Session(process::EventLoop& loop, int port, const Options& options);
  Session(process::EventLoop& loop, int port) : Session(loop, port, Options{}) {}
  ~Session();

  // Starts the CLI and waits for the initialize answer (fatal failure after 60 s).
  void Start();
  // Submits a prompt (queued behind a running turn); the client message id is generated.
  void Submit(const std::string& text,
              turn::WhileRunning while_running = turn::WhileRunning::kQueue);
  void Interrupt();
  // Runs the loop until `pred` holds; false after `timeout`.
  bool WaitFor(const std::function<bool()>& pred, process::Millis timeout);
  // Waits until the session is idle (or error) with no queued prompt.
  bool WaitIdle(process::Millis timeout);
  // Waits until the session is idle, every background task the CLI started has notified, and no
  // event was appended for `quiet` (so a pending autonomous wake has happened).
  bool WaitQuiet(process::Millis quiet, process::Millis timeout);
  // Ids of the background tasks the CLI started that have not finished yet.
  std::set<std::string> RunningTasks() const;
  // Closes the provider (stdin EOF; the CLI flushes its transcript and exits) and waits.
  void Close();
  // Checks the turn invariants a-e of docs/timeline.md over the log, with the CLI's transcript
  // (StreamHistory) for (e) when `with_transcript` (which closes the session first: the CLI
  // writes its transcript lazily).
  // Adds a test failure per violation.
  void CheckInvariants(bool with_transcript = true);

  template <class T>
  std::vector<const Event*> Of() const {
    std::vector<const Event*> out;
    for (const Event& e : log_)
      if (std::holds_alternative<T>(e.payload)) out.push_back(&e);
    return out;
  }
  // One line per event ("seq kind turn payload"), for failure messages.
  std::string DumpLog() const;
  // All assistant text of `turn`.
  std::string TextOfTurn(const TurnId& turn) const;
  const std::vector<Event>& log() const { return log_; }
  SessionRunner& runner() { return *runner_; }
  // Every ReplySubmission and StatusChanged effect the runner reported, in order.
  const std::vector<turn::ReplySubmission>& replies() const { return effects_.replies(); }
  const std::vector<turn::SessionStatus>& status_changes() const {
    return effects_.status_changes();
  }
  ClaudeProvider& provider() { return *provider_; }
  const std::string& root() const { return root_; }
  std::string session_id() const { return provider_->GetRuntimeInfo().session_id; }

 private:
  process::EventLoop& loop_;
  std::string root_;
  bool owns_root_ = true;
  std::vector<Event> log_;
  turn::SequentialTurnIds ids_;
  providers::testing::EffectRecorder effects_;
  std::unique_ptr<ClaudeProvider> provider_;
  std::unique_ptr<SessionRunner> runner_;
  int next_client_id_ = 1;
};

}  // namespace agentstream::providers::claude::testing
