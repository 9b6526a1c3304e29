// What the protocol layer reads from a request: ISO 8601 times (Stream-Expires-At).
#include <gtest/gtest.h>

#include "streams/stream_protocol.h"

namespace agentstream::streams {
namespace {

TEST(IsoTimeTest, ParsesUtcAndOffsets) {
  EXPECT_EQ(ParseIsoTime("1970-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(ParseIsoTime("2024-10-09T00:00:00Z"), 1728432000000);
  EXPECT_EQ(ParseIsoTime("2024-10-09T02:00:00+02:00"), 1728432000000);
  EXPECT_EQ(ParseIsoTime("2024-10-09T00:00:00.5Z"), 1728432000500);
  EXPECT_FALSE(ParseIsoTime("not-a-timestamp"));
  EXPECT_FALSE(ParseIsoTime("2024-13-01T00:00:00Z"));
}

}  // namespace
}  // namespace agentstream::streams
