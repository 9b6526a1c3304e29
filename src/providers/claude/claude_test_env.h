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

#include "process/child_process.h"
#include "process/event_loop.h"
#include "providers/claude/claude_provider.h"
#include "providers/testing/driven_session.h"

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

// One claude session: a ClaudeProvider driven through the turn engine into an in-memory log, with
// a private HOME and working directory.
class Session : public providers::testing::DrivenSession {
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

  // Waits until the session is idle, every background task the CLI started has notified, and no
  // event was appended for `quiet` (so a pending autonomous wake has happened).
  bool WaitQuiet(process::Millis quiet, process::Millis timeout);
  // Ids of the background tasks the CLI started that have not finished yet.
  std::set<std::string> RunningTasks() const;
  // Checks the turn invariants a-e of docs/timeline.md over the log, with the CLI's transcript
  // (StreamHistory) for (e) when `with_transcript` (which closes the session first: the CLI
  // writes its transcript lazily).
  // Adds a test failure per violation.
  void CheckInvariants(bool with_transcript = true);

  ClaudeProvider& provider() { return *provider_; }
  std::string session_id() const { return provider_->GetRuntimeInfo().session_id; }

 private:
  ClaudeProvider* provider_ = nullptr;
};

}  // namespace agentstream::providers::claude::testing
