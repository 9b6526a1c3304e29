#include "core/offset_text.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "core/ids.h"

namespace agentstream {
namespace {

using Pair = std::pair<std::uint64_t, std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

TEST(OffsetTextTest, FormatsSixteenDigitsAtLeastSoThatTextOrderIsPairOrder) {
  EXPECT_EQ(FormatOffsetPair(0, 0), "0000000000000000_0000000000000000");
  EXPECT_EQ(FormatOffsetPair(3, 42), "0000000000000003_0000000000000042");
  EXPECT_EQ(FormatOffsetPair(kMax, 1), "18446744073709551615_0000000000000001");
  EXPECT_LT(FormatOffsetPair(1, 99), FormatOffsetPair(2, 0));
  EXPECT_LT(FormatOffsetPair(2, 9), FormatOffsetPair(2, 10));
}

TEST(OffsetTextTest, ParsesWhatItFormatsAndAnyWidthOfDigits) {
  for (const Pair p : {Pair{0, 0}, Pair{1, 2}, Pair{kMax, kMax}, Pair{12345678, 0}})
    EXPECT_EQ(ParseOffsetPair(FormatOffsetPair(p.first, p.second)), p);
  EXPECT_EQ(ParseOffsetPair("3_7"), (Pair{3, 7}));
  EXPECT_EQ(ParseOffsetPair("3_" + std::string(19, '0') + "7"), (Pair{3, 7})) << "20 digits";
  EXPECT_EQ(ParseOffsetPair("3_" + std::string(20, '0') + "7"), std::nullopt) << "21 digits";
  EXPECT_EQ(ParseOffsetPair("3:7", ":_"), (Pair{3, 7}));
  EXPECT_EQ(ParseOffsetPair("3:7"), std::nullopt) << "':' is not a separator unless named";
}

TEST(OffsetTextTest, RefusesAnythingButTwoCountersInSixtyFourBits) {
  for (const char* bad : {"", "_", "1_", "_1", "-1_2", "+1_2", " 1_2", "1_2 ", "1_2_3", "a_1",
                          "1_0x2", "18446744073709551616_0", "0_18446744073709551616"})
    EXPECT_EQ(ParseOffsetPair(bad), std::nullopt) << bad;
}

TEST(OffsetTextTest, ASessionCursorAndItsStreamOffsetAreOneCodec) {
  const Cursor c{Epoch(2), Seq(17)};
  EXPECT_EQ(FormatStreamOffset(c), FormatOffsetPair(2, 17));
  Cursor parsed;
  ASSERT_TRUE(ParseCursor(FormatStreamOffset(c), &parsed));
  EXPECT_EQ(parsed, c);
  EXPECT_FALSE(ParseCursor("0_5", &parsed)) << "epochs start at 1";
}

}  // namespace
}  // namespace agentstream
