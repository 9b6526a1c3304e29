// The ACP client against the scripted fake agent (testdata/fake_acp_agent.mjs): the client-side
// methods (fs confined to the cwd, terminals), permission options chosen by kind, every
// session/update variant, session/load history as hydration, and the faults (garbage, oversize,
// silence). Plus the pure parts of acp_protocol.h.
#include <gtest/gtest.h>

#include <filesystem>

#include "providers/acp/acp_test_env.h"
#include "testing/temp_dir.h"

namespace agentstream::providers::acp::testing {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Clock;
using process::Millis;
namespace json = boost::json;

TEST(AcpProtocol, ChoosesOptionsByKindNeverById) {
  const std::vector<AcpOption> gemini = {{"proceed_always", "allow_always", ""},
                                         {"proceed_once", "allow_once", ""},
                                         {"cancel", "reject_once", ""}};
  EXPECT_EQ(ChooseOption(gemini, true).value_or(""), "proceed_once");
  EXPECT_EQ(ChooseOption(gemini, false).value_or(""), "cancel");
  const std::vector<AcpOption> only_always = {{"a", "allow_always", ""}};
  EXPECT_EQ(ChooseOption(only_always, true).value_or(""), "a");
  EXPECT_FALSE(ChooseOption(only_always, false).has_value());
}

TEST(AcpProtocol, ConfinesPathsToTheWorkingDirectory) {
  const test_support::TempDir dir("acp-confine");
  const std::string& root = dir.path();
  std::filesystem::create_directories(root + "/a");
  EXPECT_TRUE(ConfinePath(root, root + "/a/b.txt").ok());
  EXPECT_TRUE(ConfinePath(root, root).ok());
  EXPECT_FALSE(ConfinePath(root, root + "/../etc/passwd").ok());
  EXPECT_FALSE(ConfinePath(root, root + "-sibling/x").ok());  // a prefix is no parent
  EXPECT_FALSE(ConfinePath(root, "relative/path").ok());
  std::error_code ec;
  std::filesystem::create_directory_symlink("/etc", root + "/link", ec);
  EXPECT_FALSE(ConfinePath(root, root + "/link/passwd").ok());  // through a symlink
}

TEST(AcpProtocol, PresetsNameTheirCommands) {
  auto gemini = Preset("gemini", std::string("gemini-2.5-flash"));
  ASSERT_TRUE(gemini.ok());
  EXPECT_EQ(gemini->argv, (std::vector<std::string>{"gemini", "--acp", "-m", "gemini-2.5-flash"}));
  auto opencode = Preset("opencode", std::nullopt, "/opt/opencode");
  ASSERT_TRUE(opencode.ok());
  EXPECT_EQ(opencode->argv, (std::vector<std::string>{"/opt/opencode", "acp"}));
  auto codex = Preset("codex", std::string("gpt-5.4"));
  ASSERT_TRUE(codex.ok());
  EXPECT_EQ(codex->argv, (std::vector<std::string>{"codex-acp", "-c", "model=\"gpt-5.4\""}));
  auto qwen = Preset("qwen", std::string("qwen3-coder"));
  ASSERT_TRUE(qwen.ok());
  EXPECT_EQ(qwen->argv, (std::vector<std::string>{"qwen", "--acp", "-m", "qwen3-coder"}));
  auto claude = Preset("claude-agent", std::nullopt);
  ASSERT_TRUE(claude.ok());
  EXPECT_EQ(claude->argv, (std::vector<std::string>{"claude-agent-acp"}));
  EXPECT_EQ(claude->name, "acp:claude-agent");
  EXPECT_FALSE(Preset("nope", std::nullopt).ok());
}

class AcpFake : public ::testing::Test {
 protected:
  void Open(AcpSession::Options o = {}) {
    session_ = std::make_unique<AcpSession>(loop_, Agent::kFake, 0, o);
    session_->Start();
  }
  void TearDown() override {
    if (!session_) return;
    session_->CheckInvariants();
    if (HasFailure()) std::cerr << "log:\n" << session_->DumpLog();
  }
  std::string RunTurn(const std::string& prompt) {
    const std::size_t n = session_->Terminals();
    session_->Submit(prompt);
    EXPECT_TRUE(session_->WaitFor([&] { return session_->Terminals() == n + 1; }, Millis(15000)));
    return session_->TextOfTurn(session_->Turns().back());
  }
  // Opens the fake, dropping the prompts that arrive within `drop` of a failed one, with the
  // client's `settle` after a failed turn, and runs one failed turn.
  void OpenAndFailATurn(Millis drop, Millis settle, Millis stall = Millis(120000)) {
    AcpSession::Options o;
    if (drop.count() > 0)
      o.extra_env = {"FAKE_DROP_AFTER_FAILURE_MS=" + std::to_string(drop.count())};
    o.fake_settle_after_failed_turn = settle;
    o.stall_timeout = stall;
    Open(o);
    RunTurn("fail");
    const auto failed = session_->Of<TurnFailed>();
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(std::get<TurnFailed>(failed[0]->payload).code, "acp_prompt_failed");
  }
  process::EventLoop loop_;
  std::unique_ptr<AcpSession> session_;
};

TEST_F(AcpFake, FileSystemMethodsStayInsideTheWorkingDirectory) {
  Open();
  EXPECT_EQ(RunTurn("fs"), "outside:-32602 sneaky:-32602 wrote:yes read:line2");
  EXPECT_FALSE(std::filesystem::exists(session_->root() + "/escaped.txt"));
  EXPECT_TRUE(std::filesystem::exists(session_->work() + "/sub/in.txt"));
}

TEST_F(AcpFake, TerminalsRunConfinedAndAreReleased) {
  Open();
  EXPECT_EQ(RunTurn("terminal"), "exit:0 out:term-out released:yes outside:-32602");
}

TEST_F(AcpFake, PermissionOptionsAreChosenByKind) {
  Open();
  for (const PermissionDecision decision :
       {PermissionDecision::kAllow, PermissionDecision::kDeny}) {
    const std::size_t n = session_->Terminals();
    session_->Submit("perm");
    ASSERT_TRUE(session_->WaitFor(
        [&] { return session_->runner().status() == SessionStatus::kPermission; }, Millis(15000)));
    const auto pending = session_->provider().PendingPermissions();
    ASSERT_EQ(pending.size(), 1u);
    EXPECT_EQ(pending[0].tool_name, "edit");
    ASSERT_TRUE(
        session_->runner()
            .Command(ReplyPermission{pending[0].request_id, decision, std::nullopt, std::nullopt})
            .ok());
    ASSERT_TRUE(session_->WaitFor([&] { return session_->Terminals() == n + 1; }, Millis(15000)));
    const std::string text = session_->TextOfTurn(session_->Turns().back());
    EXPECT_EQ(text, decision == PermissionDecision::kAllow ? "chosen:qq-5" : "chosen:zz-9");
  }
  const auto ends = session_->Of<ToolCallEnd>();
  ASSERT_EQ(ends.size(), 2u);
  EXPECT_EQ(std::get<ToolCallEnd>(ends[0]->payload).status, ToolCallStatus::kCompleted);
  EXPECT_EQ(std::get<ToolCallEnd>(ends[0]->payload).output.value_or(""), "tool says hi");
  EXPECT_EQ(std::get<ToolCallEnd>(ends[1]->payload).status, ToolCallStatus::kFailed);
}

TEST_F(AcpFake, EveryUpdateVariantIsRecorded) {
  Open();
  // The fake sends its commands right after the session/new answer.
  EXPECT_TRUE(session_->WaitFor([&] { return !session_->provider().ListCommands().empty(); },
                                Millis(5000)));
  EXPECT_EQ(session_->provider().ListCommands().size(), 1u);
  EXPECT_EQ(session_->provider().AvailableModes().size(), 2u);
  EXPECT_EQ(RunTurn("extras"), "done");
  ASSERT_EQ(session_->Of<Reasoning>().size(), 1u);
  ASSERT_EQ(session_->Of<Plan>().size(), 1u);
  EXPECT_EQ(std::get<Plan>(session_->Of<Plan>()[0]->payload).entries.size(), 2u);
  ASSERT_EQ(session_->Of<Usage>().size(), 1u);
  EXPECT_EQ(std::get<Usage>(session_->Of<Usage>()[0]->payload).input_tokens, 7);
  EXPECT_EQ(session_->provider().GetRuntimeInfo().mode, "plan");
  EXPECT_EQ(session_->provider().GetRuntimeInfo().version, "9.9.9");
  bool usage_update = false;
  for (const Event* e : session_->Of<ProviderMetadata>())
    usage_update |= std::get<ProviderMetadata>(e->payload).type == "acp.usage_update";
  EXPECT_TRUE(usage_update);
}

TEST_F(AcpFake, LoadedHistoryIsHydrationNotNewTurns) {
  AcpSession::Options o;
  o.load_session_id = "fake-session-1";
  Open(o);
  EXPECT_TRUE(session_->Of<TurnStarted>().empty());  // the replay opened no turn
  auto history = session_->provider().StreamHistory();
  ASSERT_TRUE(history.ok());
  std::string seen;
  for (const ProviderEvent& e : *history) {
    if (const auto* u = std::get_if<ProviderUserEcho>(&e)) seen += "user:" + u->text + " ";
    if (const auto* d = std::get_if<ProviderTextDelta>(&e)) seen += "agent:" + d->text + " ";
    if (const auto* t = std::get_if<ProviderToolEnd>(&e)) seen += "tool:" + t->output.value_or("");
  }
  EXPECT_EQ(seen, "user:old prompt agent:old answer tool:a b");
  EXPECT_EQ(RunTurn("next"), "Echo: next");
  EXPECT_EQ(session_->Of<TurnStarted>().size(), 1u);
}

TEST_F(AcpFake, GarbageAndOversizeLinesAreNonFatalErrors) {
  AcpSession::Options o;
  o.max_line_bytes = 1024;
  Open(o);
  EXPECT_EQ(RunTurn("garbage"), "ok");
  const auto errors = session_->Of<ErrorEvent>();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(std::get<ErrorEvent>(errors[0]->payload).code, "protocol_garbage");
  EXPECT_EQ(std::get<ErrorEvent>(errors[1]->payload).code, "protocol_oversize");
  EXPECT_EQ(session_->Of<TurnCompleted>().size(), 1u);
}

TEST_F(AcpFake, SilenceFailsTheTurnAndStopsTheAgent) {
  AcpSession::Options o;
  o.stall_timeout = Millis(1000);
  Open(o);
  const auto start = Clock::now();
  session_->Submit("silence");
  ASSERT_TRUE(session_->WaitFor([&] { return session_->Terminals() == 1; }, Millis(10000)));
  EXPECT_LT(Clock::now() - start, Millis(5000));
  ASSERT_EQ(session_->Of<TurnFailed>().size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(session_->Of<TurnFailed>()[0]->payload).code, "provider_stalled");
  EXPECT_TRUE(session_->WaitFor([&] { return !session_->provider().GetRuntimeInfo().connected; },
                                Millis(5000)));
}

TEST_F(AcpFake, InterruptIgnoredByTheAgentEscalatesToSignals) {
  AcpSession::Options o;
  o.interrupt_timeout = Millis(300);
  Open(o);
  session_->Submit("silence");  // the fake ignores session/cancel
  ASSERT_TRUE(session_->WaitFor([&] { return !session_->Of<ErrorEvent>().empty(); }, Millis(5000)));
  session_->Interrupt();
  ASSERT_TRUE(session_->WaitFor([&] { return session_->Terminals() == 1; }, Millis(10000)));
  ASSERT_EQ(session_->Of<TurnCanceled>().size(), 1u);  // an interrupt ends canceled
}

// The fake, like codex-acp, drops a prompt that arrives while it is still ending a failed turn:
// without a settle the next turn never starts and the watchdog fails it.
TEST_F(AcpFake, APromptSentRightAfterAFailedTurnIsLostWithoutASettle) {
  ASSERT_NO_FATAL_FAILURE(OpenAndFailATurn(Millis(5000), Millis(0), Millis(1000)));
  session_->Submit("next");
  ASSERT_TRUE(session_->WaitFor([&] { return session_->Terminals() == 2; }, Millis(10000)));
  const auto failed = session_->Of<TurnFailed>();
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(std::get<TurnFailed>(failed[1]->payload).code, "provider_stalled");
}

// With the agent's settle (the codex preset has one), the next prompt waits for it and runs.
TEST_F(AcpFake, APromptAfterAFailedTurnWaitsForTheAgentToSettle) {
  ASSERT_NO_FATAL_FAILURE(OpenAndFailATurn(Millis(500), Millis(1000)));
  EXPECT_EQ(RunTurn("next"), "Echo: next");
  EXPECT_EQ(session_->Of<TurnCompleted>().size(), 1u);
}

// An interrupt of a turn whose prompt is still held ends it canceled at once; the agent never
// sees that prompt, and the next one runs.
TEST_F(AcpFake, AnInterruptEndsAHeldPromptTheAgentNeverSaw) {
  ASSERT_NO_FATAL_FAILURE(OpenAndFailATurn(Millis(0), Millis(3000)));
  session_->Submit("held");
  ASSERT_TRUE(
      session_->WaitFor([&] { return session_->Of<TurnStarted>().size() == 2; }, Millis(5000)));
  session_->Interrupt();
  ASSERT_TRUE(session_->WaitFor([&] { return session_->Terminals() == 2; }, Millis(2000)));
  ASSERT_EQ(session_->Of<TurnCanceled>().size(), 1u);
  EXPECT_EQ(RunTurn("after"), "Echo: after");
  for (const Event* e : session_->Of<AssistantMessageDelta>())
    EXPECT_EQ(std::get<AssistantMessageDelta>(e->payload).text.find("held"), std::string::npos);
}

TEST_F(AcpFake, AMissingProgramFailsStart) {
  AcpOptions o;
  o.command = AgentCommand{"acp:missing", {"/nonexistent/agent"}, {}};
  o.cwd = "/tmp";
  AcpProvider provider(loop_, o);
  std::optional<Status> started;
  provider.Start([&](const Status& s) { started = s; });
  ASSERT_TRUE(loop_.RunUntil([&] { return started.has_value(); }, Millis(5000)));
  EXPECT_FALSE(started->ok());
}

}  // namespace
}  // namespace agentstream::providers::acp::testing
