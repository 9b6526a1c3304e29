#include "system/wall_clock.h"

#include <gtest/gtest.h>

namespace agentstream::system {
namespace {

TEST(WallClockTest, ReadsTheSystemClockInMilliseconds) {
  const TimestampMs before = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
  const TimestampMs now = WallClockMs();
  EXPECT_GE(now, before);
  EXPECT_LT(now - before, 60000);
}

TEST(WallClockTest, AnInjectedClockWins) {
  EXPECT_EQ(Now([] { return TimestampMs{42}; }), 42);
  const TimestampMs now = Now(WallClock());
  EXPECT_GT(now, TimestampMs{1700000000000});  // the system's, after November 2023
}

}  // namespace
}  // namespace agentstream::system
