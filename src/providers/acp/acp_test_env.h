// Test support for the ACP provider against real agents (tests/peers, pinned) and the fake agent
// of testdata/, and for the codex provider (`codex app-server`): one session = the provider
// configured for `agent`, a SessionRunner and an
// in-memory log, with a private HOME and working directory holding the agent's offline
// configuration (docs/providers.md, "Tests") pointed at the scripted model server.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/event.h"
#include "core/turn/turn_state.h"
#include "process/event_loop.h"
#include "providers/acp/acp_provider.h"
#include "providers/session_runner.h"
#include "providers/testing/effect_recorder.h"

namespace agentstream::providers::acp::testing {

// kCodex: CodexProvider; kOpencodeServe: OpencodeProvider (`opencode serve`, the opencode
// configuration of kOpencode).
enum class Agent { kGemini, kOpencode, kClaude, kFake, kCodex, kOpencodeServe };

std::string AgentName(Agent agent);
// For test names and messages (GoogleTest finds it by argument-dependent lookup).
inline void PrintTo(Agent agent, std::ostream* os) { *os << AgentName(agent); }
// The agent's program: tests/peers/node_modules/.bin/<cli>, or testdata/fake_acp_agent.mjs.
std::string AgentProgram(Agent agent);
// Whether the agent's program exists (the tests skip loudly when it does not).
bool AgentInstalled(Agent agent);

// An agent's offline setup: a private HOME under `root` holding its configuration, pointed at the
// scripted model server on `port` (docs/providers.md, "Tests"), and `root`/work as its working
// directory (opencode's configuration lives there): the environment entries to run it with, and
// the model to ask for when the agent needs one.
struct AgentSetup {
  std::vector<std::string> env;
  std::optional<std::string> model;
  std::string work;
};
AgentSetup PrepareAgent(Agent agent, int port, const std::string& root);

class AcpSession {
 public:
  struct Options {
    process::Millis stall_timeout{120000};
    // The provider's handshake (codex and ACP); Start() waits 30 s longer before failing.
    process::Millis handshake_timeout{60000};
    process::Millis interrupt_timeout{5000};
    std::size_t max_line_bytes = std::size_t{8} << 20;
    std::string load_session_id;  // session/load instead of session/new
    std::string root;             // reuse this HOME/work root (for load)
    std::vector<std::string> extra_env;
    std::size_t codex_history_page_turns = 0;  // CodexOptions::history_page_turns; 0: default
  };
  AcpSession(process::EventLoop& loop, Agent agent, int port, const Options& options);
  AcpSession(process::EventLoop& loop, Agent agent, int port)
      : AcpSession(loop, agent, port, Options{}) {}
  ~AcpSession();

  // Starts the agent and waits for the session (fatal failure after handshake_timeout + 30 s).
  void Start();
  void Submit(const std::string& text);
  void Interrupt();
  bool WaitFor(const std::function<bool()>& pred, process::Millis timeout);
  bool WaitIdle(process::Millis timeout);
  void Close();
  // The turn invariants a-d of docs/timeline.md over the log; a failure per violation.
  void CheckInvariants();

  template <class T>
  std::vector<const Event*> Of() const {
    std::vector<const Event*> out;
    for (const Event& e : log_)
      if (std::holds_alternative<T>(e.payload)) out.push_back(&e);
    return out;
  }
  std::size_t Terminals() const {
    return Of<TurnCompleted>().size() + Of<TurnCanceled>().size() + Of<TurnFailed>().size();
  }
  std::vector<TurnId> Turns() const;
  std::string DumpLog() const;
  std::string TextOfTurn(const TurnId& turn) const;
  const std::vector<Event>& log() const { return log_; }
  SessionRunner& runner() { return *runner_; }
  // Every ReplySubmission and StatusChanged effect the runner reported, in order.
  const std::vector<turn::ReplySubmission>& replies() const { return effects_.replies(); }
  const std::vector<turn::SessionStatus>& status_changes() const {
    return effects_.status_changes();
  }
  AgentProvider& provider() { return *provider_; }
  std::string StderrTail() const { return stderr_tail_(); }
  const std::string& root() const { return root_; }
  std::string work() const { return root_ + "/work"; }

 private:
  process::EventLoop& loop_;
  std::string root_;
  bool owns_root_ = true;
  std::vector<Event> log_;
  turn::SequentialTurnIds ids_;
  providers::testing::EffectRecorder effects_;
  std::unique_ptr<AgentProvider> provider_;
  std::function<std::string()> stderr_tail_;
  std::unique_ptr<SessionRunner> runner_;
  int next_client_id_ = 1;
  process::Millis start_wait_{90000};
};

}  // namespace agentstream::providers::acp::testing
