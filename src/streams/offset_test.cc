// Offsets: their fixed-width text form, and string order as stream order.
#include "streams/offset.h"

#include <gtest/gtest.h>

namespace agentstream::streams {
namespace {

TEST(OffsetTest, FormatsFixedWidthAndParsesBack) {
  const Offset o{1, 42};
  EXPECT_EQ(FormatOffset(o), "0000000000000001_0000000000000042");
  EXPECT_EQ(ParseOffset(FormatOffset(o)), o);
  EXPECT_EQ(ParseOffset("3_7"), (Offset{3, 7}));
  EXPECT_FALSE(ParseOffset("-1"));
  EXPECT_FALSE(ParseOffset("1_"));
  EXPECT_FALSE(ParseOffset("a_1"));
  EXPECT_FALSE(ParseOffset("1_2_3"));
}

TEST(OffsetTest, StringOrderIsStreamOrder) {
  Offset o;
  std::string previous = FormatOffset(o);
  for (std::uint64_t size : {0U, 1U, 9U, 99U, 12345U, 1U}) {
    o = Advance(o, size);
    const std::string next = FormatOffset(o);
    EXPECT_LT(previous, next);
    previous = next;
  }
}

}  // namespace
}  // namespace agentstream::streams
