// SSE reads: every data event followed by its control event.
#include <gtest/gtest.h>

#include "streams/memory_stream_store.h"
#include "streams/stream_protocol.h"
#include "streams/testing/protocol_call.h"

namespace agentstream::streams {
namespace {

using testing::Call;

TEST(ProtocolTest, SsePairsEveryDataEventWithAControlEvent) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  Call(store, {"PUT", "/v1/stream/j", "", {{"content-type", "application/json"}}, "[1,2]"});
  Call(store, {"POST", "/v1/stream/j", "", {{"content-type", "application/json"}}, "3"});
  LiveRead read;
  read.sse = true;
  read.path = "/v1/stream/j";
  SseOutput out = SseStep(store, read, false);
  const std::string& e = out.events;
  const std::size_t d1 = e.find("event: data\ndata:[1,2]\n\n");
  const std::size_t c1 = e.find("event: control", d1);
  const std::size_t d2 = e.find("event: data\ndata:[3]\n\n", c1);
  const std::size_t c2 = e.find("event: control", d2);
  ASSERT_NE(d1, std::string::npos);
  ASSERT_NE(c1, std::string::npos);
  ASSERT_NE(d2, std::string::npos);
  ASSERT_NE(c2, std::string::npos);
  EXPECT_NE(e.find("\"upToDate\":true", c2), std::string::npos);
  EXPECT_FALSE(out.end);
}

}  // namespace
}  // namespace agentstream::streams
