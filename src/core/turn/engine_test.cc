#include "core/turn/engine.h"

#include <gtest/gtest.h>

#include "core/timeline/invariants.h"
#include "core/turn/test_util.h"
#include "core/utf8.h"

namespace agentstream::turn::testing {
namespace {

SubmitPrompt Prompt(std::string id, std::string text, WhileRunning w = WhileRunning::kQueue) {
  return SubmitPrompt{std::move(id), std::move(text), {}, w};
}

TEST(Engine, SubmitStartsForegroundTurnAndAcceptsOnlyAfterProviderAccepts) {
  Harness h;
  h.Cmd(Prompt("c1", "hi"));
  ASSERT_EQ(h.log.size(), 2u);
  EXPECT_EQ(h.log[0].kind(), EventKind::kTurnStarted);
  EXPECT_EQ(h.log[0].turn, TurnId("turn_1"));
  EXPECT_EQ(std::get<UserMessage>(h.log[1].payload).client_message_id, "c1");
  ASSERT_EQ(h.EffectsOf<StartProviderTurn>().size(), 1u);
  EXPECT_TRUE(h.EffectsOf<ReplySubmission>().empty());  // not accepted yet
  EXPECT_EQ(ModeOf(h.state), TurnMode::kForeground);
  ASSERT_EQ(h.EffectsOf<StatusChanged>().size(), 1u);
  EXPECT_EQ(h.EffectsOf<StatusChanged>()[0]->status, SessionStatus::kRunning);

  h.Cmd(ProviderAcceptedTurn{TurnId("turn_1")});
  ASSERT_EQ(h.EffectsOf<ReplySubmission>().size(), 1u);
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->outcome, SubmissionOutcome::kAccepted);
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->turn, TurnId("turn_1"));
  EXPECT_EQ(h.state.open.at(TurnId("turn_1")).phase, RunPhase::kAwaitingResponse);
}

TEST(Engine, RefusesPromptWithoutClientIdAndLeavesStateUnchanged) {
  Harness h;
  h.Cmd(Prompt("", "hi"));
  EXPECT_EQ(h.status.code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(h.log.empty());
  EXPECT_EQ(ModeOf(h.state), TurnMode::kIdle);
  h.Cmd(ReplyPermission{RequestId("nope")});
  EXPECT_EQ(h.status.code(), ErrorCode::kNotFound);
}

TEST(Engine, DuplicateSubmissionIsRecordedOnceAndRepliesWithItsTurn) {
  Harness h;
  h.Cmd(Prompt("c1", "hi")).Cmd(Prompt("c1", "hi"));
  EXPECT_EQ(h.Payloads<UserMessage>().size(), 1u);
  ASSERT_EQ(h.EffectsOf<ReplySubmission>().size(), 1u);
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->outcome, SubmissionOutcome::kDuplicate);
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->turn, TurnId("turn_1"));
}

TEST(Engine, EchoesAreDeduplicatedByTextAndByClientId) {
  Harness h;
  h.Cmd(Prompt("c1", "hello"));
  h.Prov(ProviderUserEcho{MessageId("u-1"), std::nullopt, "hello"});
  h.Prov(ProviderUserEcho{std::nullopt, std::string("c1"), "hello (reformatted)"});
  h.Prov(ProviderUserEcho{MessageId("u-2"), std::nullopt, "something else"});
  EXPECT_EQ(h.Payloads<UserMessage>().size(), 1u);
  ASSERT_EQ(h.Payloads<ProviderMetadata>().size(), 1u);  // the unmatched one is kept
  EXPECT_EQ(h.Payloads<ProviderMetadata>()[0]->type, "user.message.unmatched");
}

TEST(Engine, ToolOutputIsBoundedBeforeItIsAppended) {
  Harness h;
  h.Cmd(Prompt("c1", "x"));
  std::string big(kMaxToolOutputBytes + 10, 'a');
  big[kMaxToolOutputBytes - 1] = '\xC3';  // a 2-byte character straddling the cut
  big[kMaxToolOutputBytes] = '\xA9';
  h.Prov(ProviderToolStart{ToolCallId("t"), "Bash"});
  h.Prov(ProviderToolOutput{ToolCallId("t"), big});
  h.Prov(ProviderToolEnd{ToolCallId("t"), ToolCallStatus::kCompleted, big});
  const ToolCallOutput* out = h.Payloads<ToolCallOutput>().at(0);
  EXPECT_TRUE(out->truncated);
  EXPECT_LE(out->text.size(), kMaxToolOutputBytes);
  EXPECT_EQ(out->text.size(), kMaxToolOutputBytes - 1);  // cut before the split character
  EXPECT_TRUE(IsValidUtf8(out->text));
  const ToolCallEnd* end = h.Payloads<ToolCallEnd>().at(0);
  EXPECT_TRUE(end->truncated);
  EXPECT_LE(end->output->size(), kMaxToolOutputBytes);
}

TEST(Engine, InterruptOfAutonomousTurnEndsInTerminalAfterTeardown) {
  Harness h;
  h.Prov(ProviderTextDelta{MessageId("a"), "bg"});
  ASSERT_EQ(ModeOf(h.state), TurnMode::kAutonomous);
  h.Cmd(RequestInterrupt{});
  ASSERT_EQ(h.EffectsOf<InterruptProvider>().size(), 1u);
  EXPECT_EQ(h.EffectsOf<InterruptProvider>()[0]->turn, TurnId("turn_1"));
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kRunning);
  h.Cmd(InterruptTeardownDone{});
  ASSERT_EQ(h.Payloads<TurnCanceled>().size(), 1u);
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kIdle);
}

TEST(Engine, PromptWithInterruptPreemptsAutonomousAtomically) {
  Harness h;
  h.Prov(ProviderTextDelta{MessageId("a"), "bg"});
  h.Cmd(Prompt("c1", "now", WhileRunning::kInterrupt));
  EXPECT_EQ(h.EffectsOf<InterruptProvider>().size(), 1u);
  EXPECT_EQ(h.Payloads<UserMessage>().size(), 0u);  // not before the teardown
  // Until the autonomous run is torn down, its events still go to it, never to the new prompt.
  h.Prov(ProviderTextDelta{MessageId("a"), " more"});
  EXPECT_EQ(h.log.back().turn, TurnId("turn_1"));
  h.Cmd(InterruptTeardownDone{});
  // One step: the autonomous terminal, then the foreground start, its user message.
  ASSERT_GE(h.log.size(), 3u);
  EXPECT_EQ(h.log[h.log.size() - 3].kind(), EventKind::kTurnCanceled);
  EXPECT_EQ(h.log[h.log.size() - 2].kind(), EventKind::kTurnStarted);
  EXPECT_EQ(h.log.back().kind(), EventKind::kUserMessage);
  EXPECT_EQ(ModeOf(h.state), TurnMode::kForeground);
  EXPECT_TRUE(h.EffectsOf<StatusChanged>().empty());  // never passed through idle
}

TEST(Engine, QueuedPromptStartsAfterTerminalAndCanBeCanceled) {
  Harness h;
  h.Cmd(Prompt("c1", "one")).Cmd(Prompt("c2", "two")).Cmd(Prompt("c3", "three"));
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->outcome, SubmissionOutcome::kQueued);
  h.Cmd(CancelQueuedPrompt{"c3"});
  EXPECT_EQ(h.EffectsOf<ReplySubmission>()[0]->outcome, SubmissionOutcome::kCanceled);
  h.Prov(ProviderTurnResult{TurnOutcome::kCompleted});
  EXPECT_EQ(h.EffectsOf<StartProviderTurn>().at(0)->client_message_id, "c2");
  h.Prov(ProviderTurnResult{TurnOutcome::kCompleted});
  EXPECT_EQ(h.Payloads<UserMessage>().size(), 2u);
  EXPECT_EQ(ModeOf(h.state), TurnMode::kIdle);
  h.Cmd(Prompt("c3", "three"));  // a canceled prompt may be sent again
  EXPECT_EQ(h.Payloads<UserMessage>().size(), 3u);
}

TEST(Engine, PermissionMakesStatusPermissionUntilReplied) {
  Harness h;
  h.Cmd(Prompt("c1", "x"));
  h.Prov(ProviderPermissionRequest{RequestId("r"), std::nullopt, "ok?"});
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kPermission);
  h.Cmd(ReplyPermission{RequestId("r"), PermissionDecision::kAllow, std::string("once")});
  ASSERT_EQ(h.EffectsOf<SendPermissionReply>().size(), 1u);
  EXPECT_EQ(h.EffectsOf<SendPermissionReply>()[0]->option_id, "once");
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kRunning);
  EXPECT_EQ(h.Payloads<PermissionResolved>().size(), 1u);
}

// A provider that repeats a request id in a second autonomous turn: one reply answers it in
// both, and the live status agrees with a replay of the log (found by the property test).
TEST(Engine, RepeatedPermissionRequestIsAnsweredEverywhere) {
  Harness h;
  h.Prov(ProviderMessageStart{MessageId("m0"), std::nullopt, std::string("task0")});
  h.Prov(ProviderPermissionRequest{RequestId("r"), ToolCallId("c"), "ok?"});
  h.Prov(ProviderToolStart{
      ToolCallId("c"), "Bash", std::nullopt, {}, MessageId("m1"), std::string("task1")});
  h.Prov(ProviderPermissionRequest{RequestId("r"), ToolCallId("c"), "ok?"});
  ASSERT_EQ(h.state.open.size(), 2u);
  h.Cmd(ReplyPermission{RequestId("r"), PermissionDecision::kAllow});
  EXPECT_EQ(h.EffectsOf<SendPermissionReply>().size(), 1u);
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kRunning);
  EXPECT_EQ(StatusFromLog(h.log), SessionStatusOf(h.state));
}

TEST(Engine, FatalErrorFailsEveryOpenTurn) {
  Harness h;
  h.Cmd(Prompt("c1", "x"));
  h.Prov(ProviderError{"auth", "expired", true});
  EXPECT_EQ(h.Payloads<TurnFailed>().size(), 1u);
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kError);
  h.Cmd(Prompt("c2", "y"));
  EXPECT_EQ(SessionStatusOf(h.state), SessionStatus::kRunning);  // a new turn clears the error
}

TEST(Engine, MetadataNeverOpensTurns) {
  Harness h;
  h.Prov(ProviderTaskStarted{"t1", "sleep"});
  h.Prov(ProviderUnknown{"weird", boost::json::object{{"a", 1}}});
  h.Prov(ProviderModeChanged{"plan"});
  h.Prov(ProviderTurnResult{TurnOutcome::kCompleted});
  h.Prov(ProviderTurnBegan{});
  EXPECT_EQ(ModeOf(h.state), TurnMode::kIdle);
  for (const Event& e : h.log) EXPECT_FALSE(e.turn.has_value());
  EXPECT_EQ(h.log.size(), 5u);  // every one of them is kept
}

TEST(Engine, RecentClosedTurnsAreBounded) {
  Harness h;
  for (int i = 0; i < static_cast<int>(kRecentClosedTurns) + 10; ++i) {
    h.Cmd(Prompt("c" + std::to_string(i), "p"));
    h.Prov(ProviderTextDelta{MessageId("m" + std::to_string(i)), "x"});
    h.Prov(ProviderTurnResult{TurnOutcome::kCompleted});
  }
  EXPECT_EQ(h.state.recent_closed.size(), kRecentClosedTurns);
  EXPECT_EQ(h.state.by_message.size(), kRecentClosedTurns);
  EXPECT_TRUE(timeline::CheckInvariants(h.log).empty());
}

}  // namespace
}  // namespace agentstream::turn::testing
