#include "core/timeline/projection.h"

#include <gtest/gtest.h>

#include "core/timeline/test_events.h"

namespace agentstream::timeline::testing {
namespace {

TEST(ProjectionIndex, LocatesItemsAndThoseOpenAcrossASeq) {
  LogBuilder b;
  b.Add(ToolCallStart{ToolCallId("long"), "Bash"});   // 1: ends at 6
  b.Add(UserMessage{MessageId("u"), "c", "hi"});      // 2
  b.Add(AssistantMessageDelta{MessageId("m"), "x"});  // 3
  b.Add(AssistantMessageDelta{MessageId("m"), "y"});  // 4
  b.Add(Notice{NoticeLevel::kInfo, "n"});             // 5
  b.Add(ToolCallEnd{ToolCallId("long")});             // 6
  ProjectionIndex index;
  for (const Event& e : b.events) index.Add(e);
  ASSERT_EQ(index.size(), 4u);
  EXPECT_EQ(index.tail(), Seq(6));
  EXPECT_EQ(index.FirstStartingAfter(Seq(0)), 0u);
  EXPECT_EQ(index.FirstStartingAfter(Seq(2)), 2u);
  EXPECT_EQ(index.FirstStartingAfter(Seq(6)), 4u);
  EXPECT_EQ(index.EndingAfter(2, Seq(2)), (std::vector<std::size_t>{0}));
  EXPECT_EQ(index.EndingAfter(4, Seq(3)), (std::vector<std::size_t>{0, 2, 3}));
  EXPECT_TRUE(index.EndingAfter(4, Seq(6)).empty());
  // Re-adding an old event is ignored.
  EXPECT_FALSE(index.Add(b.events[2]).has_value());
  EXPECT_EQ(index.span(2).ranges.size(), 1u);
}

TEST(ProjectionIndex, EndTreeSurvivesGrowth) {
  ProjectionIndex index;
  LogBuilder b;
  b.Add(ToolCallStart{ToolCallId("first"), "Bash"});
  for (int i = 0; i < 1000; ++i) b.Add(Notice{NoticeLevel::kInfo, "n"});
  b.Add(ToolCallEnd{ToolCallId("first")});
  for (const Event& e : b.events) index.Add(e);
  EXPECT_EQ(index.size(), 1001u);
  EXPECT_EQ(index.EndingAfter(index.size(), Seq(1001)), (std::vector<std::size_t>{0}));
}

TEST(Projection, IncrementalEqualsBatch) {
  LogBuilder b;
  for (int i = 0; i < 50; ++i) {
    b.Add(AssistantMessageDelta{MessageId("m" + std::to_string(i % 7)), std::to_string(i)});
    if (i % 5 == 0) b.Add(ToolCallOutput{ToolCallId("t" + std::to_string(i % 3)), "o"});
  }
  Projection incremental;
  std::size_t changed = 0;
  for (const Event& e : b.events) changed += incremental.Apply(e).has_value();
  EXPECT_EQ(changed, b.events.size());
  Projection batch = Project(b.events);
  ASSERT_EQ(incremental.items().size(), batch.items().size());
  for (std::size_t i = 0; i < batch.items().size(); ++i)
    EXPECT_EQ(ItemToJson(incremental.items()[i]), ItemToJson(batch.items()[i]));
  EXPECT_EQ(batch.items().size(), 10u);  // 7 messages + 3 tool calls
}

}  // namespace
}  // namespace agentstream::timeline::testing
