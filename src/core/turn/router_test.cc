#include "core/turn/router.h"

#include <gtest/gtest.h>

#include "core/turn/test_util.h"

namespace agentstream::turn::testing {
namespace {

TEST(Router, MetadataBelongsToNoTurn) {
  Harness h;
  h.Cmd(SubmitPrompt{"c1", "x"});
  EXPECT_EQ(Route(h.state, ProviderTaskNotification{"t", "done", ""}).kind, RouteKind::kMetadata);
  EXPECT_EQ(Route(h.state, ProviderUsage{}).kind, RouteKind::kMetadata);
}

TEST(Router, ForegroundOwnsEveryNonMetadataEvent) {
  Harness h;
  h.Prov(
      ProviderTextDelta{MessageId("a1"), "bg", std::nullopt, std::string("task")});  // turn_1 auto
  h.Cmd(SubmitPrompt{"c1", "x"});                       // queued behind the autonomous turn
  h.Prov(ProviderTurnResult{TurnOutcome::kCompleted});  // ends turn_1, starts turn_2 (foreground)
  ASSERT_EQ(h.state.foreground, TurnId("turn_2"));
  // A new task id, a new message id: still the foreground's (foreground exclusivity).
  RouteDecision d =
      Route(h.state, ProviderTextDelta{MessageId("new"), "x", std::nullopt, std::string("other")});
  EXPECT_EQ(d.kind, RouteKind::kTurn);
  EXPECT_EQ(d.turn, TurnId("turn_2"));
  // ... except an event that names the finished turn: late, recorded with no turn.
  d = Route(h.state, ProviderTextDelta{MessageId("a1"), "x"});
  EXPECT_EQ(d.kind, RouteKind::kLate);
  EXPECT_EQ(d.turn, TurnId("turn_1"));
}

TEST(Router, IdentifierPriorityTaskThenParentThenMessage) {
  Harness h;
  h.Prov(ProviderTextDelta{MessageId("a"), "x", std::nullopt, std::string("task-a")});  // turn_1
  h.Prov(ProviderTextDelta{MessageId("b"), "x", std::nullopt, std::string("task-b")});  // turn_2
  ASSERT_EQ(h.state.open.size(), 2u);
  // Task id wins over message id.
  EXPECT_EQ(
      Route(h.state, ProviderTextDelta{MessageId("b"), "", std::nullopt, std::string("task-a")})
          .turn,
      TurnId("turn_1"));
  // Parent message id wins over message id.
  EXPECT_EQ(Route(h.state, ProviderTextDelta{MessageId("b"), "", MessageId("a")}).turn,
            TurnId("turn_1"));
  EXPECT_EQ(Route(h.state, ProviderTextDelta{MessageId("b"), ""}).turn, TurnId("turn_2"));
  // Tool output routes by its call id.
  h.Prov(ProviderToolStart{ToolCallId("call"), "Bash", std::nullopt, {}, MessageId("a")});
  EXPECT_EQ(Route(h.state, ProviderToolOutput{ToolCallId("call"), "o"}).turn, TurnId("turn_1"));
}

TEST(Router, UnknownContentGoesToNewestAutonomousElseOpensOne) {
  Harness h;
  EXPECT_EQ(Route(h.state, ProviderTextDelta{MessageId("a"), "x"}).kind, RouteKind::kNewAutonomous);
  EXPECT_EQ(Route(h.state, ProviderToolEnd{ToolCallId("zz")}).kind, RouteKind::kUnowned);
  EXPECT_EQ(Route(h.state, ProviderTurnResult{}).kind, RouteKind::kUnowned);
  h.Prov(ProviderTextDelta{MessageId("a"), "x", std::nullopt, std::string("t1")});
  EXPECT_EQ(Route(h.state, ProviderTextDelta{MessageId("fresh"), "x"}).turn, TurnId("turn_1"));
  // Content of another background task opens its own autonomous turn.
  EXPECT_EQ(
      Route(h.state, ProviderTextDelta{MessageId("f"), "x", std::nullopt, std::string("t2")}).kind,
      RouteKind::kNewAutonomous);
}

}  // namespace
}  // namespace agentstream::turn::testing
