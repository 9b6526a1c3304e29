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

#include "process/event_loop.h"
#include "providers/acp/acp_provider.h"
#include "providers/claude/claude_test_env.h"
#include "providers/testing/driven_session.h"

namespace agentstream::providers::acp::testing {

// kCodex: CodexProvider; kOpencodeServe: OpencodeProvider (`opencode serve`, the opencode
// configuration of kOpencode).
// kCodexAcp, kQwen, kClaudeAgent: the ACP presets acp:codex (codex-acp), acp:qwen (qwen --acp)
// and acp:claude-agent (claude-agent-acp).
enum class Agent {
  kGemini,
  kOpencode,
  kClaude,
  kFake,
  kCodex,
  kOpencodeServe,
  kCodexAcp,
  kQwen,
  kClaudeAgent
};

std::string AgentName(Agent agent);
// The agent's ACP preset (acp_protocol.h): "codex" for kCodexAcp, "claude-agent" for kClaudeAgent,
// else AgentName.
std::string PresetOf(Agent agent);
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

// A test over each agent: skipped loudly when the agent's program is not installed; the scripted
// model server runs for it. A subclass's SetUp() calls this one first and returns when it skipped
// or failed.
class AgentTest : public ::testing::TestWithParam<Agent> {
 protected:
  void SetUp() override;

  process::EventLoop loop_;
  std::unique_ptr<claude::testing::ModelServer> server_;
};

// One session of `agent`: its provider driven through the turn engine into an in-memory log, with
// the agent's offline setup (PrepareAgent) in a private root.
class AcpSession : public providers::testing::DrivenSession {
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
    process::Millis fake_settle_after_failed_turn{0};  // the fake agent's AgentCommand's
  };
  AcpSession(process::EventLoop& loop, Agent agent, int port, const Options& options);
  AcpSession(process::EventLoop& loop, Agent agent, int port)
      : AcpSession(loop, agent, port, Options{}) {}

  AgentProvider& provider() { return agent_provider(); }
};

}  // namespace agentstream::providers::acp::testing
