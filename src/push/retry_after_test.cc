// Retry-After as delay-seconds and as an HTTP date in each of its three forms, capped at 1 h.
#include <gtest/gtest.h>

#include "push/sender.h"

namespace agentstream::push {
namespace {

// Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example date.
constexpr std::int64_t kExampleMs = 784111777000;

TEST(RetryAfterMs, ReadsDelaySeconds) {
  EXPECT_EQ(RetryAfterMs("120", 0), 120000);
  EXPECT_EQ(RetryAfterMs("0", 0), 0);
  EXPECT_EQ(RetryAfterMs(" 5\t", 0), 5000);
  EXPECT_EQ(RetryAfterMs("3600", 0), 3600000);
}

TEST(RetryAfterMs, CapsAtOneHour) {
  EXPECT_EQ(RetryAfterMs("3601", 0), kMaxRetryAfterMs);
  EXPECT_EQ(RetryAfterMs("99999999999999999999999", 0), kMaxRetryAfterMs);
  EXPECT_EQ(RetryAfterMs("Sun, 06 Nov 1994 08:49:37 GMT", kExampleMs - 86400000), kMaxRetryAfterMs);
}

TEST(RetryAfterMs, ReadsTheThreeDateForms) {
  for (const char* date : {"Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT",
                           "Sun Nov  6 08:49:37 1994"}) {
    EXPECT_EQ(RetryAfterMs(date, kExampleMs - 30000), 30000) << date;
    EXPECT_EQ(RetryAfterMs(date, kExampleMs + 1000), 0) << date;  // in the past
  }
}

TEST(RetryAfterMs, AnythingElseIsNoDelay) {
  for (const char* value : {"", "  ", "-5", "1.5", "5s", "soon", "Sun, 06 Nov 1994 GMT",
                            "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT x"}) {
    EXPECT_EQ(RetryAfterMs(value, kExampleMs - 30000), 0) << value;
  }
}

}  // namespace
}  // namespace agentstream::push
