// The provider integration table (docs/providers.md, "Tests") against REAL agents
// (tests/peers, pinned): over ACP `gemini --acp`, `opencode acp`, the Claude ACP adapter (both
// claude-code-acp and its successor claude-agent-acp), `codex-acp` and `qwen --acp`,
// `codex app-server` through the codex provider, and `opencode serve` through the opencode
// provider, each fully offline against the scripted model server. Every test ends with the
// invariant checker.
#include <signal.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "providers/acp/acp_test_env.h"
#include "providers/claude/claude_test_env.h"

namespace agentstream::providers::acp::testing {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Clock;
using process::Millis;

class AgentCli : public AgentTest {
 protected:
  void SetUp() override {
    AgentTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    session_ = std::make_unique<AcpSession>(loop_, GetParam(), server_->port());
    session_->Start();
  }
  void TearDown() override {
    if (!session_) return;
    EXPECT_TRUE(session_->WaitIdle(Millis(30000))) << "the session did not settle";
    session_->CheckInvariants();
    if (HasFailure()) {
      std::cerr << "log:\n" << session_->DumpLog();
      std::cerr << "stderr:\n" << session_->StderrTail().substr(0, 4000) << "\n";
    }
    session_.reset();
  }
  // Terminals, tool calls and permission requests before the current phase began.
  struct Base {
    std::size_t terminals, tools, ends, permissions, completed, canceled;
  };
  Base Mark() const {
    return {session_->Terminals(),
            session_->Of<ToolCallStart>().size(),
            session_->Of<ToolCallEnd>().size(),
            session_->Of<PermissionRequested>().size(),
            session_->Of<TurnCompleted>().size(),
            session_->Of<TurnCanceled>().size()};
  }
  bool WaitTerminals(std::size_t n, Millis timeout = Millis(60000)) {
    return session_->WaitFor([&] { return session_->Terminals() == n; }, timeout);
  }
  TurnId LastTurn() const { return session_->Turns().back(); }
  bool codex() const { return GetParam() == Agent::kCodex; }
  bool opencode_serve() const { return GetParam() == Agent::kOpencodeServe; }
  // codex-acp's only reject option is "abort": a denied call ends the turn (stopReason
  // cancelled) instead of being reported to the model.
  bool deny_cancels() const { return GetParam() == Agent::kCodexAcp; }
  std::string ProviderName() const {
    if (codex()) return "codex";
    return opencode_serve() ? "opencode" : "acp:" + PresetOf(GetParam());
  }
  std::string FailureCode() const {
    if (codex()) return "codex_turn_failed";
    return opencode_serve() ? "opencode_turn_failed" : "acp_prompt_failed";
  }
  std::string ToolName() const {
    if (codex()) return "commandExecution";
    return opencode_serve() ? "bash" : "execute";
  }

  // A tool call that needs permission (touch is no read-only command for any of the agents).
  void PermissionRound(PermissionDecision decision) {
    const Base base = Mark();
    std::filesystem::remove(session_->work() + "/made-by-test");
    session_->Submit("[shell touch made-by-test && ls]");
    ASSERT_TRUE(session_->WaitFor(
        [&] { return session_->runner().status() == SessionStatus::kPermission; }, Millis(60000)));
    const auto pending = session_->provider().PendingPermissions();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].tool_name, ToolName());
    ASSERT_TRUE(pending[0].call_id.has_value());
    const auto requested = session_->Of<PermissionRequested>();
    ASSERT_EQ(requested.size(), base.permissions + 1);
    const auto& asked = std::get<PermissionRequested>(requested.back()->payload);
    EXPECT_GE(asked.options.size(), 2u);  // the agent's own options, chosen by kind
    if (opencode_serve()) {
      EXPECT_EQ(asked.options.size(), 3u);
      EXPECT_EQ(asked.title, "touch made-by-test && ls");
    }
    ASSERT_TRUE(
        session_->runner()
            .Command(ReplyPermission{pending[0].request_id, decision, std::nullopt, std::nullopt})
            .ok());
    ASSERT_TRUE(WaitTerminals(base.terminals + 1));
    const bool canceled = decision == PermissionDecision::kDeny && deny_cancels();
    EXPECT_EQ(session_->Of<TurnCompleted>().size(), base.completed + (canceled ? 0 : 1));
    EXPECT_EQ(session_->Of<TurnCanceled>().size(), base.canceled + (canceled ? 1 : 0));
    // The tool call started and ended inside the turn.
    ASSERT_EQ(session_->Of<ToolCallStart>().size(), base.tools + 1);
    ASSERT_EQ(session_->Of<ToolCallEnd>().size(), base.ends + 1);
    EXPECT_EQ(*session_->Of<ToolCallEnd>().back()->turn, LastTurn());
    if (opencode_serve()) {  // the request names the call it gates
      const auto& start = std::get<ToolCallStart>(session_->Of<ToolCallStart>().back()->payload);
      EXPECT_EQ(start.call_id, *pending[0].call_id);
    }
    const auto& end = std::get<ToolCallEnd>(session_->Of<ToolCallEnd>().back()->payload);
    const std::string text = session_->TextOfTurn(LastTurn());
    if (decision == PermissionDecision::kAllow) {
      EXPECT_TRUE(std::filesystem::exists(session_->work() + "/made-by-test"));
      EXPECT_EQ(end.status, ToolCallStatus::kCompleted);
      EXPECT_EQ(text, "Running it.Tool finished: made-by-test");
    } else {
      EXPECT_FALSE(std::filesystem::exists(session_->work() + "/made-by-test"));
      EXPECT_EQ(end.status, ToolCallStatus::kFailed);
      EXPECT_EQ(text.rfind("Running it.", 0), 0u) << text;
      EXPECT_EQ(text.find("made-by-test"), std::string::npos) << text;
    }
  }

  std::unique_ptr<AcpSession> session_;
};

// The table's rows run as phases of one agent session: agent processes start slowly (5-15 s on
// a loaded 2-core machine), and each row starts from the idle state the previous one left.
TEST_P(AgentCli, IntegrationTable) {
  {
    SCOPED_TRACE("basic foreground turn");
    session_->Submit("hello there");
    ASSERT_TRUE(WaitTerminals(1));
    ASSERT_EQ(session_->Of<TurnCompleted>().size(), 1u);
    EXPECT_EQ(session_->TextOfTurn(LastTurn()), "Echo: hello there");
    ASSERT_EQ(session_->Of<UserMessage>().size(), 1u);
    ASSERT_EQ(session_->replies().size(), 1u);
    EXPECT_EQ(session_->replies()[0].outcome, SubmissionOutcome::kAccepted);
    const RuntimeInfo info = session_->provider().GetRuntimeInfo();
    EXPECT_TRUE(info.connected);
    EXPECT_FALSE(info.session_id.empty());
    EXPECT_EQ(info.provider, ProviderName());
    if (opencode_serve()) {
      EXPECT_FALSE(session_->Of<Usage>().empty());  // step-finish tokens
      EXPECT_EQ(info.session_id.rfind("ses_", 0), 0u) << info.session_id;
      EXPECT_EQ(info.version, "1.18.33");
      EXPECT_GT(info.pid, 0);
    } else if (!codex()) {
      EXPECT_TRUE(session_->WaitFor(  // available_commands_update
          [&] { return !session_->provider().ListCommands().empty(); }, Millis(10000)));
    }
    EXPECT_TRUE(session_->provider().DescribePersistence().has_value());
  }
  {
    SCOPED_TRACE("sequential turns");
    session_->Submit("first");
    session_->Submit("second");  // queued by the engine until the first ends
    ASSERT_TRUE(WaitTerminals(3));
    const auto turns = session_->Turns();
    ASSERT_EQ(turns.size(), 3u);
    EXPECT_NE(turns[1], turns[2]);
    EXPECT_EQ(session_->TextOfTurn(turns[1]), "Echo: first");
    EXPECT_EQ(session_->TextOfTurn(turns[2]), "Echo: second");
  }
  {
    SCOPED_TRACE("tool call, permission allowed");
    PermissionRound(PermissionDecision::kAllow);
  }
  {
    SCOPED_TRACE("tool call, permission denied");
    PermissionRound(PermissionDecision::kDeny);
  }
  {
    SCOPED_TRACE("fast fail");
    const Base base = Mark();
    const auto start = Clock::now();
    session_->Submit("[error] please");
    ASSERT_TRUE(WaitTerminals(base.terminals + 1, Millis(30000)));
    EXPECT_LT(Clock::now() - start, Millis(20000));
    ASSERT_EQ(session_->Of<TurnFailed>().size(), 1u);
    const auto& failed = std::get<TurnFailed>(session_->Of<TurnFailed>()[0]->payload);
    EXPECT_EQ(failed.code, FailureCode());
    EXPECT_NE(failed.message.find("scripted failure"), std::string::npos) << failed.message;
    EXPECT_EQ(session_->runner().status(), SessionStatus::kError);
  }
  {
    SCOPED_TRACE("interruption");
    const Base base = Mark();
    const std::size_t deltas = session_->Of<AssistantMessageDelta>().size();
    session_->Submit("[slow 60] go");
    ASSERT_TRUE(session_->WaitFor(
        [&] { return session_->Of<AssistantMessageDelta>().size() > deltas; }, Millis(60000)));
    const auto start = Clock::now();
    session_->Interrupt();
    ASSERT_TRUE(WaitTerminals(base.terminals + 1, Millis(15000)));
    EXPECT_LT(Clock::now() - start, Millis(5000));  // session/cancel sufficed
    ASSERT_EQ(session_->Of<TurnCanceled>().size(), base.canceled + 1);
    EXPECT_LT(session_->Of<AssistantMessageDelta>().size() - deltas, 60u);
    EXPECT_TRUE(session_->provider().GetRuntimeInfo().connected);  // the agent lives on
    session_->Submit("after the interrupt");
    ASSERT_TRUE(WaitTerminals(base.terminals + 2));
    EXPECT_EQ(session_->Of<TurnCompleted>().size(), base.completed + 1);
    EXPECT_EQ(session_->TextOfTurn(LastTurn()), "Echo: after the interrupt");
  }
  // Nothing the agent printed on stdout was garbage; every prompt is one user message of its own
  // turn; no turn id repeats.
  EXPECT_TRUE(session_->Of<ErrorEvent>().empty());
  const auto turns = session_->Turns();
  EXPECT_EQ(session_->Of<UserMessage>().size(), turns.size());
  EXPECT_EQ(std::set<TurnId>(turns.begin(), turns.end()).size(), turns.size());
}

TEST_P(AgentCli, CrashOfTheAgentMidTurn) {
  session_->Submit("[slow 80] go");
  ASSERT_TRUE(session_->WaitFor([&] { return !session_->Of<AssistantMessageDelta>().empty(); },
                                Millis(60000)));
  const auto start = Clock::now();
  ::kill(session_->provider().GetRuntimeInfo().pid, SIGKILL);
  ASSERT_TRUE(WaitTerminals(1, Millis(8000)));
  EXPECT_LT(Clock::now() - start, Millis(3000));
  ASSERT_EQ(session_->Of<TurnFailed>().size(), 1u);
  const auto& failed = std::get<TurnFailed>(session_->Of<TurnFailed>()[0]->payload);
  EXPECT_EQ(failed.code, "provider_exited");
  EXPECT_NE(failed.message.find("signal 9"), std::string::npos) << failed.message;
  EXPECT_EQ(session_->runner().status(), SessionStatus::kError);
  EXPECT_FALSE(session_->provider().GetRuntimeInfo().connected);
}

// `opencode serve`: sessions with the same program, environment and directory share one server;
// each sees only its own events, and closing one leaves the other working.
class OpencodeServeCli : public AgentCli {};

TEST_P(OpencodeServeCli, TwoSessionsShareOneServer) {
  AcpSession::Options options;
  options.root = session_->root();
  auto other = std::make_unique<AcpSession>(loop_, GetParam(), server_->port(), options);
  other->Start();
  EXPECT_EQ(other->provider().GetRuntimeInfo().pid, session_->provider().GetRuntimeInfo().pid);
  EXPECT_NE(other->provider().GetRuntimeInfo().session_id,
            session_->provider().GetRuntimeInfo().session_id);
  session_->Submit("[slow 8] from one");
  other->Submit("from two");
  ASSERT_TRUE(WaitTerminals(1));
  ASSERT_TRUE(other->WaitFor([&] { return other->Terminals() == 1; }, Millis(60000)));
  EXPECT_EQ(other->TextOfTurn(other->Turns().back()), "Echo: from two");
  EXPECT_NE(session_->TextOfTurn(LastTurn()).find("chunk 7"), std::string::npos);
  EXPECT_EQ(session_->TextOfTurn(LastTurn()).find("from two"), std::string::npos);
  other->CheckInvariants();
  other.reset();  // closes its session; the server stays for this one
  EXPECT_TRUE(session_->provider().GetRuntimeInfo().connected);
  session_->Submit("still here");
  ASSERT_TRUE(WaitTerminals(2));
  EXPECT_EQ(session_->TextOfTurn(LastTurn()), "Echo: still here");
}

std::string ParamName(const ::testing::TestParamInfo<Agent>& info) { return AgentName(info.param); }

INSTANTIATE_TEST_SUITE_P(Cli, AgentCli,
                         ::testing::Values(Agent::kGemini, Agent::kOpencode, Agent::kClaude,
                                           Agent::kCodex, Agent::kOpencodeServe, Agent::kCodexAcp,
                                           Agent::kQwen, Agent::kClaudeAgent),
                         ParamName);
INSTANTIATE_TEST_SUITE_P(Cli, OpencodeServeCli, ::testing::Values(Agent::kOpencodeServe),
                         ParamName);

}  // namespace
}  // namespace agentstream::providers::acp::testing
