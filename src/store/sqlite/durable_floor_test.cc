#include "store/sqlite/durable_floor.h"

#include <gtest/gtest.h>

namespace agentstream::sqlite {
namespace {

TEST(DurableFloorTest, HidesCommitsUntilTheirSyncReleasesThem) {
  DurableFloor floor;
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(10)), Seq(10)) << "nothing held: all visible";
  floor.Hold("s", Epoch(1), Seq(10), /*batch=*/1);  // commit 1 takes s from 10 to 15
  floor.Hold("s", Epoch(1), Seq(15), /*batch=*/2);  // commit 2 takes s from 15 to 20
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(20)), Seq(10));
  EXPECT_EQ(floor.Clamp("t", Epoch(1), Seq(7)), Seq(7)) << "other sessions unaffected";
  EXPECT_EQ(floor.Clamp("s", Epoch(2), Seq(3)), Seq(3)) << "other epochs unaffected";
  floor.Release("s", Seq(15), /*batch=*/1);
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(20)), Seq(15)) << "commit 2 still waits";
  floor.Release("s", Seq(20), /*batch=*/2);
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(20)), Seq(20));
}

TEST(DurableFloorTest, ClearMakesEverythingVisible) {
  DurableFloor floor;
  floor.Hold("s", Epoch(1), Seq(4), 1);
  floor.Clear();
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(9)), Seq(9));
  floor.Release("s", Seq(9), 1);  // a late release after a clear is harmless
  EXPECT_EQ(floor.Clamp("s", Epoch(1), Seq(9)), Seq(9));
}

}  // namespace
}  // namespace agentstream::sqlite
