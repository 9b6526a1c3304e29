#include "core/timeline/pager.h"

#include <gtest/gtest.h>

#include "core/timeline/projection.h"
#include "core/timeline/test_events.h"

namespace agentstream::timeline::testing {
namespace {

// 1: tool start (ends at the very end), then `n` user messages, then the tool's end.
LogBuilder LongToolLog(int n) {
  LogBuilder b;
  b.Add(ToolCallStart{ToolCallId("long"), "Bash"});
  for (int i = 0; i < n; ++i) b.Add(UserMessage{MessageId("u"), "c" + std::to_string(i), "m"});
  b.Add(ToolCallEnd{ToolCallId("long"), ToolCallStatus::kCompleted, std::string("done")});
  return b;
}

PageRequest Req(PageDirection d, std::optional<Cursor> c, std::size_t items) {
  PageRequest r;
  r.direction = d, r.cursor = c, r.max_items = items;
  return r;
}

TEST(Pager, TailPageIsTheNewestItems) {
  LogBuilder b = LongToolLog(10);
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  Result<Page> page = BuildPage(p.index(), reader, Req(PageDirection::kTail, std::nullopt, 3));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 3u);
  EXPECT_EQ(page->items.front().seq_start, Seq(9));
  EXPECT_EQ(page->items.back().seq_start, Seq(11));
  EXPECT_TRUE(page->has_older);
  EXPECT_FALSE(page->has_newer);
  EXPECT_EQ(page->end_cursor, (Cursor{Epoch(1), Seq(12)}));
  EXPECT_EQ(page->start_cursor, (Cursor{Epoch(1), Seq(9)}));
}

TEST(Pager, PageWithFarEndingToolCallReadsOnlyItsSources) {
  LogBuilder b = LongToolLog(100000);
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  // The oldest page holds the tool call; its end is 100001 events later.
  Result<Page> page =
      BuildPage(p.index(), reader, Req(PageDirection::kBefore, Cursor{Epoch(1), Seq(4)}, 3));
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 3u);
  const auto& tool = std::get<ToolCallBody>(page->items[0].body);
  EXPECT_EQ(tool.state, ToolCallState::kCompleted);
  EXPECT_EQ(tool.output, "done");
  EXPECT_EQ(page->items[0].seq_end, Seq(100002));
  EXPECT_FALSE(page->has_older);
  EXPECT_TRUE(page->has_newer);
  EXPECT_LE(reader.events_read, 3u + 1u);  // never the history in between
  EXPECT_LE(reader.reads, 2u);
}

TEST(Pager, AfterPagesChainToTheTailWithoutGaps) {
  LogBuilder b = LongToolLog(20);
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  // A client holding everything through seq 5 catches up: the tool call (open across the
  // cursor) is delivered again with its end, and every newer item exactly once.
  std::optional<Cursor> cursor = Cursor{Epoch(1), Seq(5)};
  std::vector<std::string> keys;
  bool more = true;
  for (int guard = 0; more && guard < 50; ++guard) {
    Result<Page> page = BuildPage(p.index(), reader, Req(PageDirection::kAfter, cursor, 4));
    ASSERT_TRUE(page.ok());
    for (const auto& item : page->items) keys.push_back(item.key);
    EXPECT_GE(page->end_cursor.seq, cursor->seq);
    cursor = page->end_cursor;
    more = page->has_newer;
  }
  EXPECT_EQ(cursor->seq, Seq(22));
  // 16 user messages after seq 5 plus the tool call, in some page.
  EXPECT_EQ(keys.size(), 17u);
  EXPECT_NE(std::find(keys.begin(), keys.end(), "t:long"), keys.end());
}

TEST(Pager, ByteBudgetStopsEarlyButAlwaysProgresses) {
  LogBuilder b;
  for (int i = 0; i < 5; ++i) b.Add(UserMessage{MessageId("u"), "c", std::string(1000, 'x')});
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  PageRequest r = Req(PageDirection::kAfter, Cursor{Epoch(1), Seq(0)}, 5);
  r.max_bytes = 2500;
  Result<Page> page = BuildPage(p.index(), reader, r);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 2u);
  EXPECT_LE(page->bytes, 2500u);
  EXPECT_TRUE(page->has_newer);
  EXPECT_EQ(page->end_cursor.seq, Seq(2));
  r.max_bytes = 10;
  page = BuildPage(p.index(), reader, r);
  EXPECT_EQ(page->items.size(), 1u);  // one item even over budget
}

TEST(Pager, StaleEpochGetsABoundedReset) {
  LogBuilder b = LongToolLog(1000);
  b.epoch = Epoch(2);
  for (Event& e : b.events) e.epoch = Epoch(2);
  ProjectionIndex index(Epoch(2));
  for (const Event& e : b.events) index.Add(e);
  VectorReader reader(b.events);
  Result<Page> page =
      BuildPage(index, reader, Req(PageDirection::kAfter, Cursor{Epoch(1), Seq(7)}, 100000));
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->reset);
  EXPECT_EQ(page->epoch, Epoch(2));
  EXPECT_EQ(page->items.size(), kMaxPageItems);
  EXPECT_EQ(page->end_cursor, (Cursor{Epoch(2), Seq(1002)}));
}

TEST(Pager, RejectsBadCursorsAndReportsReaderDisagreement) {
  LogBuilder b = LongToolLog(3);
  Projection p = Project(b.events);
  VectorReader reader(b.events);
  EXPECT_EQ(
      BuildPage(p.index(), reader, Req(PageDirection::kAfter, std::nullopt, 3)).status().code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(BuildPage(p.index(), reader, Req(PageDirection::kBefore, Cursor{Epoch(1), Seq(99)}, 3))
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  std::vector<Event> truncated(b.events.begin(), b.events.end() - 1);
  VectorReader short_reader(truncated);
  EXPECT_EQ(BuildPage(p.index(), short_reader, Req(PageDirection::kTail, std::nullopt, 10))
                .status()
                .code(),
            ErrorCode::kInternal);
}

}  // namespace
}  // namespace agentstream::timeline::testing
