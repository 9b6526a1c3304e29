#include "core/turn/turn_state.h"

#include <gtest/gtest.h>

#include "core/turn/test_util.h"

namespace agentstream::turn::testing {
namespace {

TEST(TurnState, RestoreRebuildsOpenRunsKnownPromptsAndRouting) {
  Harness h;
  h.Cmd(SubmitPrompt{"c1", "x"});
  h.Prov(ProviderTextDelta{MessageId("m1"), "a"});
  h.Prov(ProviderPermissionRequest{RequestId("r1"), std::nullopt, "ok?"});
  TurnState restored = RestoreTurnState(h.log, "test");
  EXPECT_EQ(restored.foreground, TurnId("turn_1"));
  EXPECT_EQ(restored.by_message.at(MessageId("m1")), TurnId("turn_1"));
  EXPECT_EQ(restored.known_client_ids.count("c1"), 1u);
  EXPECT_EQ(restored.open.at(TurnId("turn_1")).prompt_text, "x");
  EXPECT_EQ(SessionStatusOf(restored), SessionStatus::kPermission);
  EXPECT_EQ(StatusFromLog(h.log), SessionStatusOf(h.state));
}

TEST(TurnState, StatusFromLogFollowsTerminals) {
  Harness h;
  EXPECT_EQ(StatusFromLog(h.log), SessionStatus::kIdle);
  h.Cmd(SubmitPrompt{"c1", "x"});
  EXPECT_EQ(StatusFromLog(h.log), SessionStatus::kRunning);
  h.Prov(ProviderTurnResult{TurnOutcome::kFailed, std::nullopt, "boom", "it broke"});
  EXPECT_EQ(StatusFromLog(h.log), SessionStatus::kError);
  h.Cmd(SubmitPrompt{"c2", "y"});
  h.Prov(ProviderTurnResult{TurnOutcome::kCanceled});
  EXPECT_EQ(StatusFromLog(h.log), SessionStatus::kIdle);
}

TEST(TurnState, RestoreThenRecoverClosesTurnsLeftOpen) {
  Harness h;
  h.Cmd(SubmitPrompt{"c1", "x"});
  h.Prov(ProviderTextDelta{MessageId("a"), "bg"});
  Harness after;
  after.state = RestoreTurnState(h.log, "test");
  after.log = h.log;
  after.Cmd(RecoverAfterRestart{});
  ASSERT_EQ(after.Payloads<TurnFailed>().size(), 1u);
  EXPECT_EQ(after.Payloads<TurnFailed>()[0]->code, "daemon_restarted");
  EXPECT_EQ(SessionStatusOf(after.state), SessionStatus::kError);
  EXPECT_EQ(StatusFromLog(after.log), SessionStatus::kError);
}

}  // namespace
}  // namespace agentstream::turn::testing
