#include "core/timeline/assembler.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "core/utf8.h"

#include "core/timeline/projection.h"
#include "core/timeline/test_events.h"

namespace agentstream::timeline::testing {
namespace {

const MessageId kM("m1");
const ToolCallId kT("t1");

TEST(Assembler, DeltaBeforeStartIsAPlaceholderThatReconciles) {
  LogBuilder b;
  b.Add(AssistantMessageDelta{kM, "He"}).Add(AssistantMessageEnd{kM, "end_turn"});
  b.Add(AssistantMessageStart{kM, MessageId("parent")}).Add(AssistantMessageDelta{kM, "llo"});
  Projection p = Project(b.events);
  ASSERT_EQ(p.items().size(), 1u);
  const auto& body = std::get<AssistantMessageBody>(p.items()[0].body);
  EXPECT_EQ(body.text, "Hello");
  EXPECT_TRUE(body.started);
  EXPECT_TRUE(body.finished);
  EXPECT_EQ(body.parent_message_id, MessageId("parent"));
  EXPECT_EQ(p.items()[0].seq_start, Seq(1));
  EXPECT_EQ(p.items()[0].seq_end, Seq(4));
}

// A git action on the worktree is a notice of its own; one git refused is a warning.
TEST(Assembler, GitActionsAreNotices) {
  LogBuilder b;
  b.Add(WorkspaceAction{"commit",
                        "committed",
                        "agentstream/s",
                        std::string("0123456789abcdef"),
                        std::nullopt,
                        std::string("Fix it"),
                        {}});
  b.Add(WorkspaceAction{"push",
                        "refused",
                        "agentstream/s",
                        std::string("0123456789abcdef"),
                        std::string("origin"),
                        std::string("[rejected] (non-fast-forward)"),
                        {}});
  Projection p = Project(b.events);
  ASSERT_EQ(p.items().size(), 2u);
  const auto& committed = std::get<NoticeBody>(p.items()[0].body);
  EXPECT_EQ(committed.level, NoticeLevel::kInfo);
  EXPECT_EQ(committed.text, "git commit committed 0123456789ab: Fix it");
  const auto& refused = std::get<NoticeBody>(p.items()[1].body);
  EXPECT_EQ(refused.level, NoticeLevel::kWarning);
  EXPECT_EQ(refused.text, "git push refused 0123456789ab to origin: [rejected] (non-fast-forward)");
}

// A trigger's delivery is a notice; one whose template missed fields is a warning.
TEST(Assembler, AutomationFiredIsANotice) {
  LogBuilder b;
  b.Add(AutomationFired{"trigger", "issues", "72d3162e", std::string("issues"), {}});
  b.Add(AutomationFired{"trigger", "issues", "8a1c0f20", std::nullopt, {"comment.body", "x"}});
  Projection p = Project(b.events);
  ASSERT_EQ(p.items().size(), 2u);
  const auto& first = std::get<NoticeBody>(p.items()[0].body);
  EXPECT_EQ(first.level, NoticeLevel::kInfo);
  EXPECT_EQ(first.text, "trigger issues: delivery 72d3162e (issues)");
  const auto& second = std::get<NoticeBody>(p.items()[1].body);
  EXPECT_EQ(second.level, NoticeLevel::kWarning);
  EXPECT_EQ(second.text, "trigger issues: delivery 8a1c0f20; missing fields: comment.body, x");
}

TEST(Assembler, ToolCallLifecycleCollapsesAtItsFirstPosition) {
  LogBuilder b;
  b.Add(ToolCallStart{kT, "Bash", std::string("ls")});
  b.Add(AssistantMessageDelta{kM, "meanwhile"});
  b.Add(ToolCallOutput{kT, "a\n"}).Add(ToolCallOutput{kT, "b\n"});
  b.Add(ToolCallEnd{kT, ToolCallStatus::kFailed, std::nullopt, false, std::string("exit 1")});
  Projection p = Project(b.events);
  ASSERT_EQ(p.items().size(), 2u);
  const ProjectedItem& tool = p.items()[0];
  EXPECT_EQ(tool.kind, ItemKind::kToolCall);
  EXPECT_EQ(tool.seq_start, Seq(1));
  EXPECT_EQ(tool.seq_end, Seq(5));
  EXPECT_EQ(tool.source_seq_ranges, (std::vector<SeqRange>{{Seq(1), Seq(1)}, {Seq(3), Seq(5)}}));
  EXPECT_TRUE(tool.collapsed);
  const auto& body = std::get<ToolCallBody>(tool.body);
  EXPECT_EQ(body.output, "a\nb\n");
  EXPECT_EQ(body.state, ToolCallState::kFailed);
  EXPECT_EQ(body.error, "exit 1");
  EXPECT_FALSE(p.items()[1].collapsed);
}

TEST(Assembler, EndBeforeStartKeepsTheFinalState) {
  LogBuilder b;
  b.Add(ToolCallEnd{kT, ToolCallStatus::kCompleted, std::string("out")})
      .Add(ToolCallStart{kT, "Read"});
  const Projection p = Project(b.events);
  const auto& body = std::get<ToolCallBody>(p.items()[0].body);
  EXPECT_EQ(body.state, ToolCallState::kCompleted);
  EXPECT_EQ(body.name, "Read");
  EXPECT_EQ(body.output, "out");
}

TEST(Assembler, AccumulatedToolOutputStaysBounded) {
  LogBuilder b;
  b.Add(ToolCallStart{kT, "Bash"});
  for (int i = 0; i < 3; ++i) b.Add(ToolCallOutput{kT, std::string(40 * 1024, 'x')});
  const Projection p = Project(b.events);
  const auto& body = std::get<ToolCallBody>(p.items()[0].body);
  EXPECT_EQ(body.output.size(), kMaxToolOutputBytes);
  EXPECT_TRUE(body.truncated);
}

TEST(Assembler, PermissionPlanUsageSubagentAndUnprojectedKinds) {
  LogBuilder b;
  const TurnId turn("turn_1");
  b.Add(TurnStarted{}, turn).Add(PermissionRequested{RequestId("r"), kT, "allow?"}, turn);
  b.Add(Plan{{PlanEntry{"a"}}}, turn)
      .Add(Usage{120, 30, 7, 1, 0.25}, turn)
      .Add(Plan{{PlanEntry{"a"}, PlanEntry{"b"}}}, turn);
  b.Add(PermissionResolved{RequestId("r"), PermissionDecision::kAllow}, turn);
  b.Add(SubagentEvent{SessionId("child"), Epoch(1), Seq(1), "assistant.message.delta", std::nullopt,
                      boost::json::object{{"text", "hi"}}});
  b.Add(SubagentEvent{SessionId("child"), Epoch(1), Seq(2), "turn.completed"});
  b.Add(TurnCompleted{}, turn);
  Projection p = Project(b.events);
  ASSERT_EQ(p.items().size(), 4u);
  EXPECT_EQ(std::get<PermissionBody>(p.items()[0].body).decision, PermissionDecision::kAllow);
  EXPECT_EQ(std::get<PlanBody>(p.items()[1].body).entries.size(), 2u);
  // Each usage event is an item of its turn.
  EXPECT_EQ(p.items()[2].kind, ItemKind::kUsage);
  EXPECT_EQ(p.items()[2].turn, turn);
  const boost::json::object usage = ItemToJson(p.items()[2]);
  EXPECT_EQ(usage.at("kind"), "usage");
  EXPECT_EQ(usage.at("inputTokens"), 120);
  EXPECT_EQ(usage.at("outputTokens"), 30);
  EXPECT_EQ(usage.at("cacheReadTokens"), 7);
  EXPECT_EQ(usage.at("costUsd"), 0.25);
  const auto& sub = std::get<SubagentBody>(p.items()[3].body);
  EXPECT_EQ(sub.event_count, 2);
  EXPECT_EQ(sub.last_kind, "turn.completed");
  EXPECT_EQ(sub.last_text, "hi");
}

TEST(Assembler, ItemJsonCarriesPositions) {
  LogBuilder b;
  b.Add(AssistantMessageDelta{kM, "a"}, TurnId("t"))
      .Add(Usage{})
      .Add(AssistantMessageDelta{kM, "b"});
  boost::json::object j = ItemToJson(Project(b.events).items()[0]);
  EXPECT_EQ(j.at("kind"), "assistant_message");
  EXPECT_EQ(j.at("seqStart"), 1);
  EXPECT_EQ(j.at("seqEnd"), 3);
  EXPECT_EQ(boost::json::serialize(j.at("sourceSeqRanges")), "[[1,1],[3,3]]");
  EXPECT_EQ(j.at("collapsed"), true);
  EXPECT_EQ(j.at("text"), "ab");
  EXPECT_EQ(j.at("turn"), "t");
}

}  // namespace
}  // namespace agentstream::timeline::testing
