#include "server/address_limiter.h"

#include <gtest/gtest.h>

#include <utility>

namespace agentstream::server {
namespace {

TEST(AddressLimiterTest, BoundsThePlacesOfEachAddress) {
  AddressLimiter limiter(2);
  AddressSlot a1, a2, a3, b1;
  EXPECT_TRUE(a1.Acquire(limiter, "10.0.0.1"));
  EXPECT_TRUE(a1.Acquire(limiter, "10.0.0.1"));  // held already: no second place
  EXPECT_TRUE(a2.Acquire(limiter, "10.0.0.1"));
  EXPECT_FALSE(a3.Acquire(limiter, "10.0.0.1"));
  EXPECT_TRUE(b1.Acquire(limiter, "10.0.0.2"));  // another address is not affected
  EXPECT_EQ(limiter.held("10.0.0.1"), 2u);
  a1.Release();
  EXPECT_TRUE(a3.Acquire(limiter, "10.0.0.1"));
  {
    AddressSlot moved = std::move(a3);
    EXPECT_FALSE(a3.held());
    EXPECT_EQ(limiter.held("10.0.0.1"), 2u);
  }
  EXPECT_EQ(limiter.held("10.0.0.1"), 1u);
}

}  // namespace
}  // namespace agentstream::server
