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
  EXPECT_TRUE(restored.known_client_ids.Contains("c1"));
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

TEST(KnownClientIds, TheNewestAreKeptAndTheOldestForgottenFirst) {
  KnownClientIds known;
  for (std::size_t i = 0; i < kKnownClientIds + 10; ++i)
    known.Set("c" + std::to_string(i), TurnId());
  EXPECT_EQ(known.size(), kKnownClientIds);
  EXPECT_FALSE(known.Contains("c9"));
  EXPECT_TRUE(known.Contains("c10"));
  // An update keeps its place (c10 is still the oldest); an erased id comes back as the newest.
  known.Set("c10", TurnId("turn_10"));
  ASSERT_NE(known.Find("c10"), nullptr);
  EXPECT_EQ(*known.Find("c10"), TurnId("turn_10"));
  known.Erase("c11");
  known.Set("c11", TurnId());
  known.Set("new", TurnId());
  EXPECT_FALSE(known.Contains("c10"));
  EXPECT_TRUE(known.Contains("c11"));
  std::string oldest;
  known.ForEach([&](const std::string& id, const TurnId&) {
    if (oldest.empty()) oldest = id;
  });
  EXPECT_EQ(oldest, "c12");
}

}  // namespace
}  // namespace agentstream::turn::testing
