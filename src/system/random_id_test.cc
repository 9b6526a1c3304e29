#include "system/random_id.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace agentstream::system {
namespace {

TEST(RandomIdTest, HexHasTheDigitsAskedFor) {
  EXPECT_EQ(RandomHex(0), "");
  for (std::size_t digits : {1, 7, 8, 16, 32}) {
    const std::string hex = RandomHex(digits);
    EXPECT_TRUE(std::regex_match(hex, std::regex("[0-9a-f]{" + std::to_string(digits) + "}")))
        << hex;
  }
}

TEST(RandomIdTest, IdIsThePrefixAndHex) {
  EXPECT_TRUE(std::regex_match(RandomId("turn"), std::regex("turn_[0-9a-f]{16}")));
  EXPECT_TRUE(std::regex_match(RandomId("w", 24), std::regex("w_[0-9a-f]{24}")));
}

TEST(RandomIdTest, UuidIsVersion4) {
  for (int i = 0; i < 100; ++i) {
    const std::string uuid = RandomUuid();
    EXPECT_TRUE(std::regex_match(
        uuid, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
        << uuid;
  }
}

TEST(RandomIdTest, IdsDoNotRepeat) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(RandomId("s")).second);
}

}  // namespace
}  // namespace agentstream::system
