// The scripted provider through the real turn engine (SessionRunner), in virtual time.
#include "providers/scripted/scripted_provider.h"

#include <gtest/gtest.h>

#include "providers/testing/logged_runner.h"

namespace agentstream::providers::scripted {
namespace {

using namespace agentstream::turn;  // NOLINT(google-build-using-namespace)
using process::ManualTimers;
using process::Millis;

// A session: scripted provider + engine + the log as stored events; invariants checked at the end.
class ScriptedSession : public ::testing::Test {
 protected:
  void Open(Responder responder) {
    provider_ = std::make_unique<ScriptedProvider>(timers_, std::move(responder));
    session_.Open(*provider_, "scripted");
    bool started = false;
    provider_->Start([&](Status s) { started = s.ok(); });
    timers_.Advance(Millis(0));
    ASSERT_TRUE(started);
  }
  void TearDown() override { session_.CheckInvariants(); }
  void Submit(const std::string& id, const std::string& text) {
    ASSERT_TRUE(session_.Command(SubmitPrompt{id, text, {}, WhileRunning::kQueue}).ok());
  }
  template <class T>
  std::vector<const Event*> Of() const {
    return session_.Of<T>();
  }
  SessionRunner& runner() { return session_.runner(); }

  ManualTimers timers_;
  std::unique_ptr<ScriptedProvider> provider_;
  providers::testing::LoggedRunner session_;  // after provider_: the runner goes first
};

TEST_F(ScriptedSession, ForegroundTurnWithStreamedTextAndTool) {
  Open([](const std::string&) {
    return std::vector<ScriptStep>{
        ScriptStep::Text("hello there", 3, Millis(10)),
        ScriptStep::Tool("Bash", boost::json::object{{"command", "ls"}}, "a\nb")};
  });
  Submit("c1", "hi");
  EXPECT_EQ(runner().status(), SessionStatus::kRunning);
  timers_.Advance(Millis(100));
  EXPECT_EQ(runner().status(), SessionStatus::kIdle);
  ASSERT_EQ(Of<TurnCompleted>().size(), 1u);
  EXPECT_EQ(Of<UserMessage>().size(), 1u);  // the provider's echo was de-duplicated
  EXPECT_EQ(Of<AssistantMessageDelta>().size(), 3u);
  std::string text;
  for (const Event* e : Of<AssistantMessageDelta>())
    text += std::get<AssistantMessageDelta>(e->payload).text;
  EXPECT_EQ(text, "hello there");
  ASSERT_EQ(Of<ToolCallEnd>().size(), 1u);
  EXPECT_EQ(std::get<ToolCallEnd>(Of<ToolCallEnd>()[0]->payload).output, "a\nb");
  ASSERT_EQ(session_.replies().size(), 1u);
  EXPECT_EQ(session_.replies()[0].outcome, SubmissionOutcome::kAccepted);
}

// The runner returns the answer the engine gives a prompt's sender at once (queued, a retry) and
// hands the observer only the answers that come later (the provider accepted the turn).
TEST_F(ScriptedSession, CommandReturnsTheSendersAnswerWhenTheEngineGivesItAtOnce) {
  Open([](const std::string&) {
    return std::vector<ScriptStep>{ScriptStep::Text("one two", 2, Millis(100))};
  });
  auto submit = [&](const std::string& id) {
    return runner().Command(SubmitPrompt{id, "hi", {}, WhileRunning::kQueue});
  };
  Result<std::optional<ReplySubmission>> first = submit("c1");
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(first->has_value());  // the provider accepts the turn later
  Result<std::optional<ReplySubmission>> second = submit("c2");
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->outcome, SubmissionOutcome::kQueued);
  Result<std::optional<ReplySubmission>> retry = submit("c1");
  ASSERT_TRUE(retry.ok() && retry->has_value());
  EXPECT_EQ((*retry)->outcome, SubmissionOutcome::kDuplicate);
  EXPECT_EQ((*retry)->turn, Of<TurnStarted>().at(0)->turn);
  EXPECT_EQ(runner().Command(SubmitPrompt{"", "hi", {}, WhileRunning::kQueue}).status().code(),
            ErrorCode::kInvalidArgument);
  timers_.Advance(Millis(1));
  ASSERT_EQ(session_.replies().size(), 1u);  // c1's acceptance, reported as an effect
  EXPECT_EQ(session_.replies()[0].client_message_id, "c1");
  EXPECT_EQ(session_.replies()[0].outcome, SubmissionOutcome::kAccepted);
  timers_.Advance(Millis(1000));
  EXPECT_EQ(Of<TurnCompleted>().size(), 2u);
}

TEST_F(ScriptedSession, BackgroundTaskWakesTheAgentAsAnAutonomousTurn) {
  Open([](const std::string&) {
    return std::vector<ScriptStep>{
        ScriptStep::Background("sleep 5", Millis(5000), {ScriptStep::Text("task done")}),
        ScriptStep::Text("started it")};
  });
  Submit("c1", "run it in the background");
  timers_.Advance(Millis(10));
  EXPECT_EQ(runner().status(), SessionStatus::kIdle);  // the turn ended; the task still runs
  timers_.Advance(Millis(4900));
  EXPECT_EQ(Of<TurnStarted>().size(), 1u);
  timers_.Advance(Millis(200));
  const auto starts = Of<TurnStarted>();
  ASSERT_EQ(starts.size(), 2u);
  EXPECT_EQ(std::get<TurnStarted>(starts[1]->payload).origin, TurnOrigin::kAutonomous);
  EXPECT_NE(*starts[0]->turn, *starts[1]->turn);
  EXPECT_EQ(Of<TurnCompleted>().size(), 2u);
  EXPECT_EQ(runner().status(), SessionStatus::kIdle);
  // idle -> running -> idle -> running (the wake) -> idle
  const std::vector<SessionStatus> want = {SessionStatus::kRunning, SessionStatus::kIdle,
                                           SessionStatus::kRunning, SessionStatus::kIdle};
  EXPECT_EQ(session_.status_changes(), want);
}

TEST_F(ScriptedSession, PermissionRoundTrip) {
  Open([](const std::string& prompt) {
    return std::vector<ScriptStep>{
        ScriptStep::Permission("Bash", boost::json::object{{"command", "rm x"}}, "removed"),
        ScriptStep::Text(prompt == "deny" ? "ok, not removed" : "removed it")};
  });
  Submit("c1", "allow");
  timers_.Advance(Millis(10));
  EXPECT_EQ(runner().status(), SessionStatus::kPermission);
  ASSERT_EQ(provider_->PendingPermissions().size(), 1u);
  const RequestId req = provider_->PendingPermissions()[0].request_id;
  ASSERT_TRUE(
      runner()
          .Command(ReplyPermission{req, PermissionDecision::kAllow, std::nullopt, std::nullopt})
          .ok());
  timers_.Advance(Millis(10));
  EXPECT_EQ(runner().status(), SessionStatus::kIdle);
  EXPECT_EQ(Of<PermissionResolved>().size(), 1u);  // recorded once, by the engine
  EXPECT_EQ(std::get<ToolCallEnd>(Of<ToolCallEnd>()[0]->payload).status,
            ToolCallStatus::kCompleted);
  // A reply to a request that is not pending is refused by the engine and the provider.
  EXPECT_EQ(session_.Command(ReplyPermission{req, PermissionDecision::kAllow, {}, {}}).code(),
            ErrorCode::kNotFound);
  Status provider_reply;
  provider_->RespondToPermission(req, {}, [&](Status s) { provider_reply = s; });
  timers_.Advance(Millis(1));
  EXPECT_EQ(provider_reply.code(), ErrorCode::kNotFound);
}

TEST_F(ScriptedSession, InterruptCancelsASlowTurn) {
  Open([](const std::string&) {
    return std::vector<ScriptStep>{ScriptStep::Text("one two three four", 4, Millis(1000))};
  });
  Submit("c1", "slow please");
  timers_.Advance(Millis(1500));
  EXPECT_EQ(Of<AssistantMessageDelta>().size(), 2u);
  ASSERT_TRUE(runner().Command(RequestInterrupt{}).ok());
  timers_.Advance(Millis(10));
  EXPECT_EQ(Of<TurnCanceled>().size(), 1u);
  EXPECT_EQ(runner().status(), SessionStatus::kIdle);
  timers_.Advance(Millis(5000));
  EXPECT_EQ(Of<AssistantMessageDelta>().size(), 2u);  // nothing plays after the interrupt
}

TEST_F(ScriptedSession, ErrorsAndFailures) {
  Open([](const std::string& prompt) {
    if (prompt == "fatal") return std::vector<ScriptStep>{ScriptStep::Err("boom", "dead", true)};
    return std::vector<ScriptStep>{ScriptStep::Err("warn", "minor"), ScriptStep::Text("still ok"),
                                   ScriptStep::Fail("rate_limited", "try later")};
  });
  Submit("c1", "soft");
  timers_.Advance(Millis(10));
  ASSERT_EQ(Of<TurnFailed>().size(), 1u);
  EXPECT_EQ(std::get<TurnFailed>(Of<TurnFailed>()[0]->payload).code, "rate_limited");
  EXPECT_EQ(Of<ErrorEvent>().size(), 1u);
  EXPECT_EQ(runner().status(), SessionStatus::kError);
  Submit("c2", "fatal");
  timers_.Advance(Millis(10));
  EXPECT_EQ(Of<TurnFailed>().size(), 2u);
  EXPECT_EQ(Of<ErrorEvent>().size(), 2u);
}

TEST(ScriptedProviderTest, ContractGuarantees) {
  ManualTimers timers;
  ScriptedProvider provider(timers);
  std::vector<std::string> seen;
  // Subscribe before start: nothing is missed.
  EventSubscription sub = provider.Subscribe(
      [&](const ProviderEvent& e) { seen.push_back(std::to_string(e.index())); });
  EventSubscription bad = provider.Subscribe([](const ProviderEvent&) { throw 1; });
  Status not_started;
  provider.StartTurn({TurnId("t"), "c", "x"}, [&](Status s) { not_started = s; });
  timers.Advance(Millis(0));
  EXPECT_EQ(not_started.code(), ErrorCode::kUnavailable);
  provider.Start([](Status) {});
  Status first, second;
  provider.StartTurn({TurnId("t1"), "c1", "x"}, [&](Status s) { first = s; });
  provider.StartTurn({TurnId("t2"), "c2", "y"}, [&](Status s) { second = s; });
  EXPECT_TRUE(seen.empty());  // nothing runs inside the call
  timers.Advance(Millis(0));
  EXPECT_TRUE(first.ok());
  EXPECT_EQ(second.code(), ErrorCode::kConflict);  // a foreground turn is active
  timers.Advance(Millis(10));
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front(), std::to_string(ProviderEvent(ProviderUserEcho{}).index()));
  EXPECT_EQ(seen.back(), std::to_string(ProviderEvent(ProviderTurnResult{}).index()));
  // Run(): StartTurn + Subscribe, reporting the result and the text.
  std::optional<Result<RunResult>> run;
  provider.Run({TurnId("t3"), "c3", "ping"}, [&](Result<RunResult> r) { run = std::move(r); });
  timers.Advance(Millis(10));
  ASSERT_TRUE(run && run->ok());
  EXPECT_EQ((*run)->text, "Echo: ping");
  // Close: no callback afterwards.
  const std::size_t before = seen.size();
  bool closed = false;
  provider.Close([&](Status) { closed = true; });
  provider.StartTurn({TurnId("t4"), "c4", "z"}, [](Status) {});
  timers.Advance(Millis(100));
  EXPECT_TRUE(closed);
  EXPECT_EQ(seen.size(), before);
  EXPECT_FALSE(provider.GetRuntimeInfo().connected);
}

}  // namespace
}  // namespace agentstream::providers::scripted
