#include "core/ids.h"

#include <gtest/gtest.h>

#include <vector>

namespace agentstream {
namespace {

TEST(CursorTest, FormatsAndParsesRoundTrip) {
  Cursor cursor{Epoch(3), Seq(1234567)};
  EXPECT_EQ(FormatCursor(cursor), "3:1234567");
  Cursor parsed;
  ASSERT_TRUE(ParseCursor("3:1234567", &parsed));
  EXPECT_EQ(parsed, cursor);
}

TEST(CursorTest, RejectsMalformedText) {
  Cursor parsed;
  for (const char* bad : {"", ":", "1:", ":1", "0:5", "-1:2", "1:-2", "1:2:3", "a:b", "1 :2",
                          "99999999999999999999999:1", "1:2x"}) {
    EXPECT_FALSE(ParseCursor(bad, &parsed)) << bad;
  }
}

// Durable Streams offsets compare as strings the way their cursors compare, and parse back.
TEST(CursorTest, StreamOffsetsSortAsStringsAndParse) {
  const std::vector<Cursor> ordered = {{Epoch(1), Seq(0)},  {Epoch(1), Seq(9)},
                                       {Epoch(1), Seq(10)}, {Epoch(1), Seq(123456789)},
                                       {Epoch(2), Seq(1)},  {Epoch(10), Seq(0)}};
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const std::string offset = FormatStreamOffset(ordered[i]);
    EXPECT_EQ(offset.size(), 33u);
    Cursor parsed;
    ASSERT_TRUE(ParseCursor(offset, &parsed)) << offset;
    EXPECT_EQ(parsed, ordered[i]);
    if (i > 0) {
      EXPECT_LT(FormatStreamOffset(ordered[i - 1]), offset);
    }
  }
  EXPECT_EQ(FormatStreamOffset({Epoch(3), Seq(42)}), "0000000000000003_0000000000000042");
  Cursor parsed;
  EXPECT_FALSE(ParseCursor("1_2_3", &parsed));
  EXPECT_FALSE(ParseCursor("_5", &parsed));
}

TEST(CursorTest, OrdersByEpochThenSeq) {
  EXPECT_LT((Cursor{Epoch(1), Seq(9)}), (Cursor{Epoch(2), Seq(1)}));
  EXPECT_LT((Cursor{Epoch(2), Seq(1)}), (Cursor{Epoch(2), Seq(2)}));
}

TEST(StrongIdTest, CounterNextAndCompare) {
  Seq a(5);
  EXPECT_EQ(a.next(), Seq(6));
  EXPECT_TRUE(Seq(1) < Seq(2));
  EXPECT_EQ(SessionId("a"), SessionId("a"));
  EXPECT_NE(SessionId("a"), SessionId("b"));
}

}  // namespace
}  // namespace agentstream
