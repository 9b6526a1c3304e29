// The protocol layer through HandleStreamRequest on a memory store: ETags and 304, creation
// refused for a past expiry, malformed offsets and producer headers, and unknown live modes.
#include "streams/stream_protocol.h"

#include <gtest/gtest.h>

#include "streams/memory_stream_store.h"
#include "streams/testing/protocol_call.h"

namespace agentstream::streams {
namespace {

using testing::Call;

std::string HeaderOf(const StreamResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers)
    if (n == name) return v;
  return "";
}

TEST(ProtocolTest, EtagAnd304) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  EXPECT_EQ(Call(store, {"PUT", "/v1/stream/x", "", {{"content-type", "text/plain"}}, "hi"}).status,
            201);
  StreamResponse first = Call(store, {"GET", "/v1/stream/x", "offset=-1", {}, ""});
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "hi");
  const std::string etag = HeaderOf(first, "etag");
  ASSERT_FALSE(etag.empty());
  StreamResponse again =
      Call(store, {"GET", "/v1/stream/x", "offset=-1", {{"if-none-match", etag}}, ""});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
}

TEST(ProtocolTest, ACreateExpiredAlreadyIs400) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  const StreamResponse old = Call(
      store, {"PUT", "/v1/stream/old", "", {{"stream-expires-at", "1970-01-01T00:00:00Z"}}, ""});
  EXPECT_EQ(old.status, 400);
  EXPECT_NE(old.body.find("in the past"), std::string::npos) << old.body;
  EXPECT_EQ(Call(store, {"HEAD", "/v1/stream/old", "", {}, ""}).status, 404);
  EXPECT_EQ(
      Call(store,
           {"PUT", "/v1/stream/later", "", {{"stream-expires-at", "2999-01-01T00:00:00Z"}}, ""})
          .status,
      201);
}

TEST(ProtocolTest, RejectsBadOffsetsAndProducerHeaders) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  Call(store, {"PUT", "/v1/stream/x", "", {{"content-type", "text/plain"}}, ""});
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "offset=../etc", {}, ""}).status, 400);
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "offset=-1&offset=now", {}, ""}).status, 400);
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "live=sse", {}, ""}).status, 400);
  EXPECT_EQ(
      Call(
          store,
          {"POST", "/v1/stream/x", "", {{"content-type", "text/plain"}, {"producer-id", "p"}}, "a"})
          .status,
      400);
  EXPECT_EQ(Call(store, {"PUT", "/v1/stream/y", "", {{"stream-ttl", "1e3"}}, ""}).status, 400);
}

TEST(ProtocolTest, AnUnknownLiveModeIsRefusedNotServedAsACatchUpRead) {
  MemoryStreamStore store(StreamLimits{}, nullptr);
  Call(store, {"PUT", "/v1/stream/x", "", {{"content-type", "text/plain"}}, "hi"});
  for (const char* query :
       {"offset=-1&live=bogus", "offset=-1&live=", "offset=-1&live=SSE", "offset=-1&live=true",
        "offset=-1&live=sse&live=long-poll", "live=bogus"}) {
    const StreamResponse r = Call(store, {"GET", "/v1/stream/x", query, {}, ""});
    EXPECT_EQ(r.status, 400) << query << ": " << r.body;
    EXPECT_NE(r.body.find("live"), std::string::npos) << query << ": " << r.body;
  }
  EXPECT_EQ(Call(store, {"GET", "/v1/stream/x", "offset=-1", {}, ""}).body, "hi");
}

}  // namespace
}  // namespace agentstream::streams
