#include "core/ids.h"

#include <gtest/gtest.h>

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
