// The provider integration table and the churn gate (docs/providers.md, "Tests"), against the
// REAL `claude` CLI (tests/peers, pinned) running fully offline against the scripted model
// server. Every test ends with the invariant checker (invariants a-e of docs/timeline.md),
// transcript parity included.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <set>

#include "providers/claude/claude_test_env.h"

namespace agentstream::providers::claude::testing {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::Millis;

class ClaudeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ =
        std::make_unique<ModelServer>(loop_, std::vector<std::string>{"SCRIPTED_AGAIN_SLEEP=0.3"});
    ASSERT_NE(server_->port(), 0);
    session_ = std::make_unique<Session>(loop_, server_->port());
    session_->Start();
  }
  void TearDown() override {
    if (!session_) return;
    EXPECT_TRUE(session_->WaitQuiet(Millis(300), Millis(30000))) << "the session did not settle";
    session_->CheckInvariants();
    if (HasFailure()) std::cerr << "log:\n" << session_->DumpLog();
    session_.reset();
  }
  // Turn ids of the turns started so far, in order.
  std::vector<TurnId> Turns(std::optional<TurnOrigin> origin = std::nullopt) const {
    std::vector<TurnId> out;
    for (const Event* e : session_->Of<TurnStarted>())
      if (!origin || std::get<TurnStarted>(e->payload).origin == *origin) out.push_back(*e->turn);
    return out;
  }
  std::size_t Terminals() const {
    return session_->Of<TurnCompleted>().size() + session_->Of<TurnCanceled>().size() +
           session_->Of<TurnFailed>().size();
  }

  process::EventLoop loop_;
  std::unique_ptr<ModelServer> server_;
  std::unique_ptr<Session> session_;
};

TEST_F(ClaudeCli, BasicForegroundTurn) {
  session_->Submit("hello there");
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(30000)));
  ASSERT_EQ(session_->Of<TurnCompleted>().size(), 1u);
  const TurnId turn = Turns().at(0);
  EXPECT_EQ(*session_->Of<TurnCompleted>()[0]->turn, turn);
  EXPECT_EQ(session_->TextOfTurn(turn), "Echo: hello there");
  ASSERT_EQ(session_->replies().size(), 1u);
  EXPECT_EQ(session_->replies()[0].outcome, SubmissionOutcome::kAccepted);
  EXPECT_EQ(session_->replies()[0].turn, turn);
  const RuntimeInfo info = session_->provider().GetRuntimeInfo();
  EXPECT_EQ(info.version, "2.1.197");
  EXPECT_TRUE(info.connected);
  EXPECT_FALSE(session_->provider().ListCommands().empty());
  EXPECT_FALSE(session_->provider().AvailableModels().empty());
}

TEST_F(ClaudeCli, NoDuplicateUserMessagesEvenAfterTheTerminal) {
  session_->Submit("[shell echo hi]");
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(30000)));
  session_->WaitFor([] { return false; }, Millis(500));  // anything trailing arrives now
  const auto users = session_->Of<UserMessage>();
  ASSERT_EQ(users.size(), 1u);
  EXPECT_EQ(std::get<UserMessage>(users[0]->payload).text, "[shell echo hi]");
  // The tool round trip happened inside the same turn; its tool_result was no user message.
  ASSERT_EQ(session_->Of<ToolCallEnd>().size(), 1u);
  EXPECT_EQ(*session_->Of<ToolCallEnd>()[0]->turn, Turns().at(0));
  EXPECT_EQ(std::get<ToolCallEnd>(session_->Of<ToolCallEnd>()[0]->payload).output, "hi");
  EXPECT_EQ(session_->TextOfTurn(Turns().at(0)), "Running it.Tool finished: hi");
}

TEST_F(ClaudeCli, LifecycleNeverStuck) {
  session_->Submit("one");
  ASSERT_TRUE(session_->WaitIdle(Millis(30000)));
  session_->WaitFor([] { return false; }, Millis(500));
  EXPECT_EQ(session_->runner().status(), SessionStatus::kIdle);
  EXPECT_EQ(StatusFromLog(session_->log()), SessionStatus::kIdle);  // replaying agrees
  EXPECT_EQ(Turns().size(), 1u);  // the repeated system/init opened nothing
  const auto& changes = session_->status_changes();
  ASSERT_FALSE(changes.empty());
  EXPECT_EQ(changes.front(), SessionStatus::kRunning);
  EXPECT_EQ(changes.back(), SessionStatus::kIdle);
}

TEST_F(ClaudeCli, AutonomousRunAfterABackgroundTask) {
  // The task outlasts the rest of the foreground turn even on a loaded machine, so its
  // notification comes after the turn ended and wakes an autonomous one.
  session_->Submit("[bg-sleep 3] go");
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(30000)));
  EXPECT_EQ(session_->runner().status(), SessionStatus::kIdle);  // idle while the task runs
  ASSERT_EQ(session_->Of<ProviderMetadata>().empty(), false);
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 2; }, Millis(30000)))
      << "the autonomous wake never came";
  const auto auto_turns = Turns(TurnOrigin::kAutonomous);
  ASSERT_EQ(auto_turns.size(), 1u);
  EXPECT_NE(auto_turns[0], Turns(TurnOrigin::kForeground).at(0));
  EXPECT_EQ(session_->TextOfTurn(auto_turns[0]), "Background task finished: completed");
  EXPECT_TRUE(session_->WaitIdle(Millis(5000)));
  const std::vector<SessionStatus> want = {SessionStatus::kRunning, SessionStatus::kIdle,
                                           SessionStatus::kRunning, SessionStatus::kIdle};
  EXPECT_EQ(session_->status_changes(), want);
}

TEST_F(ClaudeCli, InterruptionEndsTheTurnCanceled) {
  session_->Submit("[slow 60] go");
  ASSERT_TRUE(session_->WaitFor([&] { return !session_->Of<AssistantMessageDelta>().empty(); },
                                Millis(30000)));
  const auto start = process::Clock::now();
  session_->Interrupt();
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(15000)));
  EXPECT_LT(process::Clock::now() - start, Millis(5000));  // the protocol interrupt sufficed
  ASSERT_EQ(session_->Of<TurnCanceled>().size(), 1u);
  EXPECT_LT(session_->Of<AssistantMessageDelta>().size(), 60u);
  EXPECT_TRUE(session_->provider().GetRuntimeInfo().connected);  // the CLI lives on
  session_->Submit("after the interrupt");
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 2; }, Millis(30000)));
  EXPECT_EQ(session_->TextOfTurn(Turns().at(1)), "Echo: after the interrupt");
}

TEST_F(ClaudeCli, SequentialTurnsHaveDistinctIdsAndOwnTheirText) {
  session_->Submit("first");
  session_->Submit("second");  // queued by the engine until the first ends
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 2; }, Millis(30000)));
  const auto turns = Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_NE(turns[0], turns[1]);
  EXPECT_EQ(session_->TextOfTurn(turns[0]), "Echo: first");
  EXPECT_EQ(session_->TextOfTurn(turns[1]), "Echo: second");
}

TEST_F(ClaudeCli, FastFailWhenTheModelReturnsAnError) {
  const auto start = process::Clock::now();
  session_->Submit("[error] please");
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(30000)));
  EXPECT_LT(process::Clock::now() - start, Millis(10000));
  ASSERT_EQ(session_->Of<TurnFailed>().size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(session_->Of<TurnFailed>()[0]->payload).code, "api_error_400");
  const std::size_t events = session_->log().size();
  session_->WaitFor([] { return false; }, Millis(500));
  EXPECT_EQ(session_->log().size(), events);  // no stale events after the terminal
  EXPECT_EQ(session_->runner().status(), SessionStatus::kError);
  session_->Submit("recovered?");  // the session goes on
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 2; }, Millis(30000)));
  EXPECT_EQ(session_->Of<TurnCompleted>().size(), 1u);
}

TEST_F(ClaudeCli, UserMessageDedupAcrossTurns) {
  session_->Submit("same words");
  session_->Submit("same words");  // a second prompt with the same text is its own turn
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 2; }, Millis(30000)));
  const auto users = session_->Of<UserMessage>();
  ASSERT_EQ(users.size(), 2u);
  EXPECT_NE(*users[0]->turn, *users[1]->turn);
  for (const Event* u : users) EXPECT_EQ(std::get<UserMessage>(u->payload).text, "same words");
}

TEST_F(ClaudeCli, PermissionRequestAndReply) {
  session_->Submit("[shell touch made-by-test && ls]");
  ASSERT_TRUE(session_->WaitFor(
      [&] { return session_->runner().status() == SessionStatus::kPermission; }, Millis(30000)));
  const auto pending = session_->provider().PendingPermissions();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].tool_name, "Bash");
  ASSERT_TRUE(session_->runner()
                  .Command(ReplyPermission{pending[0].request_id, PermissionDecision::kAllow,
                                           std::nullopt, std::nullopt})
                  .ok());
  ASSERT_TRUE(session_->WaitFor([&] { return Terminals() == 1; }, Millis(30000)));
  EXPECT_TRUE(std::filesystem::exists(session_->root() + "/work/made-by-test"));
  EXPECT_EQ(session_->TextOfTurn(Turns().at(0)), "Running it.Tool finished: made-by-test");
  // Permission mode through the control protocol.
  std::optional<Status> set;
  session_->provider().SetMode("acceptEdits", [&](Status s) { set = s; });
  ASSERT_TRUE(session_->WaitFor([&] { return set.has_value(); }, Millis(10000)));
  EXPECT_TRUE(set->ok()) << set->ToString();
  EXPECT_EQ(session_->provider().GetRuntimeInfo().mode, "acceptEdits");
}

TEST_F(ClaudeCli, ResumeContinuesTheSameSession) {
  session_->Submit("[say remember me]");
  ASSERT_TRUE(session_->WaitIdle(Millis(30000)));
  const std::string id = session_->session_id();
  const std::string root = session_->root();
  session_->CheckInvariants();
  // Checked once, here (its transcript grows below); destroyed after the resumed session.
  const std::unique_ptr<Session> first = std::move(session_);
  Session::Options o;
  o.resume_session_id = id;
  o.root = root;
  {
    Session resumed(loop_, server_->port(), o);
    resumed.Start();
    resumed.Submit("again");
    ASSERT_TRUE(resumed.WaitIdle(Millis(30000)));
    EXPECT_EQ(resumed.session_id(), id);
    resumed.Close();
    auto history = resumed.provider().StreamHistory();
    ASSERT_TRUE(history.ok());
    std::string all;
    for (const auto& e : *history)
      if (const auto* d = std::get_if<ProviderTextDelta>(&e)) all += d->text + "|";
    EXPECT_NE(all.find("remember me|"), std::string::npos);  // the first process's turn
    EXPECT_NE(all.find("Echo: again|"), std::string::npos);
  }
}

// The churn gate: 50 cycles of "do it again" followed at once by "hello" while the wake of the
// previous cycle's background task is pending. Every cycle must show a running transition and
// settle; nothing may hang.
TEST_F(ClaudeCli, ChurnGate) {
  const int cycles = 50;
  for (int i = 0; i < cycles; ++i) {
    const std::size_t changes = session_->status_changes().size();
    session_->Submit("do it again");
    session_->Submit("hello " + std::to_string(i));
    const bool ran = session_->WaitFor(
        [&] {
          const auto& c = session_->status_changes();
          for (std::size_t k = changes; k < c.size(); ++k)
            if (c[k] == SessionStatus::kRunning) return true;
          return false;
        },
        Millis(30000));
    ASSERT_TRUE(ran) << "cycle " << i << ": no running transition";
    ASSERT_TRUE(session_->WaitIdle(Millis(60000))) << "cycle " << i << " hangs";
    ASSERT_EQ(session_->Of<UserMessage>().size(), static_cast<std::size_t>(2 * (i + 1)));
  }
  // The last wake completes too.
  ASSERT_TRUE(session_->WaitQuiet(Millis(1500), Millis(30000)));
  EXPECT_EQ(Turns(TurnOrigin::kForeground).size(), static_cast<std::size_t>(2 * cycles));
  EXPECT_GE(Turns(TurnOrigin::kAutonomous).size(), 1u);
  const auto all = Turns();
  EXPECT_EQ(std::set<TurnId>(all.begin(), all.end()).size(), all.size());
  // Every HELLO reached the agent (the CLI's transcript holds each prompt) and was answered in its
  // own turn. When a wake races a prompt, the wake's text joins the foreground turn (foreground
  // exclusivity, docs/timeline.md "Routing") and the turn ends at the answer to its prompt.
  int own_turn = 0;
  for (const Event* u : session_->Of<UserMessage>()) {
    const std::string& prompt = std::get<UserMessage>(u->payload).text;
    if (prompt.rfind("hello ", 0) == 0)
      own_turn += session_->TextOfTurn(*u->turn).find("Echo: " + prompt) != std::string::npos;
  }
  std::cout << "churn: " << own_turn << "/" << cycles << " hellos answered in their own turn, "
            << Turns(TurnOrigin::kAutonomous).size() << " autonomous turns\n";
  // The provider correlates each prompt with the CLI turn that answers it (--replay-user-messages
  // and result.before_prompt), so every answer is in the turn of its prompt.
  EXPECT_EQ(own_turn, cycles);
  session_->Close();
  Result<std::vector<ProviderEvent>> history = session_->provider().StreamHistory();
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  std::string prompts;
  for (const ProviderEvent& e : *history)
    if (const auto* echo = std::get_if<ProviderUserEcho>(&e)) prompts += echo->text + "\n";
  for (int i = 0; i < cycles; ++i)
    EXPECT_NE(prompts.find("hello " + std::to_string(i)), std::string::npos)
        << "hello " << i << " never reached the agent";
  // TearDown checks transcript parity: every assistant message of the CLI's transcript file
  // (the HELLOs and the autonomous completions included) is in the timeline.
}

}  // namespace
}  // namespace agentstream::providers::claude::testing
