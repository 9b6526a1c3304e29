#include "client/endpoint.h"

#include <gtest/gtest.h>

namespace agentstream::client {
namespace {

TEST(EndpointTest, ParsesHostPortAndPrefix) {
  auto endpoint = ParseEndpoint("http://127.0.0.1:7600");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  EXPECT_EQ(endpoint->server.host, "127.0.0.1");
  EXPECT_EQ(endpoint->server.port, 7600);
  EXPECT_EQ(endpoint->base_path, "");

  endpoint = ParseEndpoint("http://daemon.local/agentstream/");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(endpoint->server.host, "daemon.local");
  EXPECT_EQ(endpoint->server.port, 80);
  EXPECT_EQ(endpoint->base_path, "/agentstream");

  endpoint = ParseEndpoint("http://[::1]:9000");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(endpoint->server.host, "::1");
  EXPECT_EQ(endpoint->server.port, 9000);
  EXPECT_EQ(endpoint->UrlOf("/v1/agents"), "http://[::1]:9000/v1/agents");

  endpoint = ParseEndpoint("https://proxy.example/agentstream");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_TRUE(endpoint->server.tls);
  EXPECT_EQ(endpoint->server.port, 443);
  EXPECT_EQ(endpoint->UrlOf("/v1/agents"), "https://proxy.example:443/agentstream/v1/agents");
}

TEST(EndpointTest, RefusesWhatItCannotReach) {
  for (const char* url : {"ftp://127.0.0.1:7600", "127.0.0.1:7600", "http://h/p?q=1",
                          "http://h/p#f", "http://", "http://:7600", "http://host:0",
                          "http://host:70000", "http://host:12ab", "http://host:", "http://[::1"}) {
    EXPECT_EQ(ParseEndpoint(url).status().code(), ErrorCode::kInvalidArgument) << url;
  }
}

TEST(EndpointTest, PercentEncodesAllButUnreservedAndColon) {
  EXPECT_EQ(PercentEncode("ses_AZ-09.~"), "ses_AZ-09.~");
  EXPECT_EQ(PercentEncode("1:5"), "1:5");
  EXPECT_EQ(PercentEncode("a b/c?d&e"), "a%20b%2Fc%3Fd%26e");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
}

}  // namespace
}  // namespace agentstream::client
