// The transport of generic Durable Streams (stream_http.cc) over real sockets: the Location of a
// created stream names the configured address, whatever Host the client sent. The protocol itself
// is tested in src/streams/.
#include "server/testing/http_fixtures.h"

namespace agentstream::server::testing {
namespace {

TEST_F(HostTest, LocationNamesTheConfiguredAddressNotTheClientsHost) {
  const TestResponse res = HttpCall(port_, "PUT", "/v1/stream/loc", "", {{"Host", "lb.example:1"}});
  EXPECT_EQ(res.status, 201);
  EXPECT_EQ(res.Header("location"), "http://127.0.0.1:" + std::to_string(port_) + "/v1/stream/loc");
  // A path whose decoded form would end the Location header early is refused.
  const TestResponse split = HttpCall(port_, "PUT", "/v1/stream/a%0d%0aSet-Cookie:%20x=1", "", {});
  EXPECT_EQ(split.status, 400);
  EXPECT_EQ(split.Header("set-cookie"), "");
}

}  // namespace
}  // namespace agentstream::server::testing
