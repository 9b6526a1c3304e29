// Resume against REAL agents (tests/peers, pinned), offline against the scripted model server:
// a session runs a turn and is closed (the agent process exits); a new provider opens the same
// runtime session from its persistence handle (codex `thread/resume`, ACP `session/load`), its
// past comes back through StreamHistory() as hydration (no turn, nothing in the log), and a new
// turn in the resumed session works with the earlier conversation in the model's request.
//
// Agents: codex app-server, `opencode acp`, `claude-code-acp`, `claude-agent-acp`, `codex-acp` and
// `qwen --acp` (closed right after its turn: it writes the reply to its chat file only after
// answering the prompt, and its preset's settle keeps stdin open for that write).
// `gemini --acp` 0.61.0 advertises `loadSession` but answers `session/load` of its own sessions
// with "No previous sessions found for this project", so it is not in the table.
#include <signal.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "providers/acp/acp_test_env.h"
#include "providers/claude/claude_test_env.h"

namespace agentstream::providers::acp::testing {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;

// The history as "user:TEXT" / "agent:TEXT" / "tool:NAME:STATUS" entries, messages joined.
std::vector<std::string> Summary(const std::vector<ProviderEvent>& history) {
  std::vector<std::string> out;
  for (const ProviderEvent& e : history) {
    if (const auto* u = std::get_if<ProviderUserEcho>(&e)) out.push_back("user:" + u->text);
    if (std::holds_alternative<ProviderMessageStart>(e)) out.emplace_back("agent:");
    if (const auto* d = std::get_if<ProviderTextDelta>(&e); d && !out.empty())
      out.back() += d->text;
    if (const auto* t = std::get_if<ProviderToolStart>(&e)) out.push_back("tool:" + t->name);
    if (const auto* t = std::get_if<ProviderToolEnd>(&e))
      out.emplace_back(t->status == ToolCallStatus::kCompleted ? "end:completed" : "end:other");
  }
  return out;
}

class ResumeCli : public AgentTest {
 protected:
  void SetUp() override {
    AgentTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    char tmpl[] = "/tmp/agentstream-resume-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }
  AcpSession::Options Opts(const std::string& load) const {
    AcpSession::Options o;
    o.root = root_;  // the same HOME (the agent's stored sessions) and cwd for both providers
    o.load_session_id = load;
    o.codex_history_page_turns = 1;  // several thread/turns/list pages
    // opencode's session/load takes 15-20 s on an idle 2-core machine, far longer under load.
    o.handshake_timeout = Millis(180000);
    return o;
  }
  static void Report(AcpSession& s) {
    std::cerr << "log:\n" << s.DumpLog() << "stderr:\n" << s.StderrTail().substr(0, 4000) << "\n";
  }
  bool codex() const { return GetParam() == Agent::kCodex; }

  std::string root_;
};

TEST_P(ResumeCli, ResumedSessionHydratesItsPastAndTakesNewTurns) {
  std::string session_id;
  std::vector<std::string> expected = {"user:hello there", "agent:Echo: hello there"};
  {
    SCOPED_TRACE("the first provider: a turn, then closed");
    AcpSession first(loop_, GetParam(), server_->port(), Opts(""));
    ASSERT_NO_FATAL_FAILURE(first.Start());
    first.Submit("hello there");
    ASSERT_TRUE(first.WaitFor([&] { return first.Terminals() == 1; }, Millis(120000)));
    ASSERT_EQ(first.Of<TurnCompleted>().size(), 1u);
    EXPECT_EQ(first.TextOfTurn(first.Turns().back()), "Echo: hello there");
    if (codex()) {
      // A tool call with its permission, to see it again in the history.
      first.Submit("[shell touch made-by-test && ls]");
      ASSERT_TRUE(first.WaitFor(
          [&] { return first.runner().status() == SessionStatus::kPermission; }, Millis(120000)));
      const auto pending = first.provider().PendingPermissions();
      ASSERT_EQ(pending.size(), 1u);
      ASSERT_TRUE(first.runner()
                      .Command(ReplyPermission{pending[0].request_id, PermissionDecision::kAllow,
                                               std::nullopt, std::nullopt})
                      .ok());
      ASSERT_TRUE(first.WaitFor([&] { return first.Terminals() == 2; }, Millis(120000)));
      ASSERT_EQ(first.Of<TurnCompleted>().size(), 2u);
      expected.insert(expected.end(), {"user:[shell touch made-by-test && ls]", "agent:Running it.",
                                       "tool:commandExecution", "end:completed",
                                       "agent:Tool finished: made-by-test"});
    }
    ASSERT_TRUE(first.WaitIdle(Millis(30000)));
    const std::optional<PersistenceHandle> handle = first.provider().DescribePersistence();
    ASSERT_TRUE(handle.has_value());
    session_id = handle->session_id;
    ASSERT_FALSE(session_id.empty());
    // A new session has no past of its own.
    const auto own = first.provider().StreamHistory();
    ASSERT_TRUE(own.ok()) << own.status().ToString();
    EXPECT_TRUE(own->empty());
    first.CheckInvariants();
    const int pid = first.provider().GetRuntimeInfo().pid;
    first.Close();
    EXPECT_FALSE(first.provider().GetRuntimeInfo().connected);
    EXPECT_NE(::kill(pid, 0), 0) << "the agent process outlived Close()";
    if (HasFailure()) Report(first);
  }
  SCOPED_TRACE("the second provider: resumed from the handle");
  AcpSession second(loop_, GetParam(), server_->port(), Opts(session_id));
  ASSERT_NO_FATAL_FAILURE(second.Start());
  EXPECT_EQ(second.provider().GetRuntimeInfo().session_id, session_id);
  // The past is hydration: it opened no turn and wrote nothing to the log.
  EXPECT_TRUE(second.Of<TurnStarted>().empty()) << second.DumpLog();
  EXPECT_TRUE(second.Of<UserMessage>().empty());
  EXPECT_TRUE(second.Of<AssistantMessageDelta>().empty());
  const auto history = second.provider().StreamHistory();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  EXPECT_EQ(Summary(*history), expected);
  std::size_t starts = 0, stops = 0;
  for (const ProviderEvent& e : *history) {
    starts += std::holds_alternative<ProviderMessageStart>(e);
    stops += std::holds_alternative<ProviderMessageStop>(e);
  }
  EXPECT_EQ(starts, stops);  // every replayed message is closed
  // A new turn goes on in the same conversation: the model's request carries the earlier prompts.
  second.Submit("[recall] what did I say?");
  ASSERT_TRUE(second.WaitFor([&] { return second.Terminals() == 1; }, Millis(120000)));
  ASSERT_EQ(second.Of<TurnCompleted>().size(), 1u);
  const std::string recall = second.TextOfTurn(second.Turns().back());
  EXPECT_EQ(recall.rfind("Recall: hello there", 0), 0u) << recall;
  EXPECT_EQ(second.Of<UserMessage>().size(), 1u);
  EXPECT_TRUE(second.Of<ErrorEvent>().empty());
  EXPECT_TRUE(second.WaitIdle(Millis(30000)));
  second.CheckInvariants();
  if (HasFailure()) Report(second);
}

INSTANTIATE_TEST_SUITE_P(Cli, ResumeCli,
                         ::testing::Values(Agent::kCodex, Agent::kOpencode, Agent::kClaude,
                                           Agent::kCodexAcp, Agent::kClaudeAgent, Agent::kQwen),
                         [](const ::testing::TestParamInfo<Agent>& info) {
                           return AgentName(info.param);
                         });

}  // namespace
}  // namespace agentstream::providers::acp::testing
