#include "net/http_url.h"

#include <gtest/gtest.h>

namespace agentstream::net {
namespace {

TEST(HttpUrl, HttpsDefaultsToPort443) {
  Result<HttpUrl> url = ParseHttpUrl("https://hooks.example.com/a?b=1");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->host, "hooks.example.com");
  EXPECT_EQ(url->target, "/a?b=1");
  EXPECT_EQ(UrlOf(*url, "/x"), "https://hooks.example.com:443/x");
}

TEST(HttpUrl, ParsesPortsIpv6AndAMissingPath) {
  Result<HttpUrl> plain = ParseHttpUrl("http://[::1]:8080");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->host, "::1");
  EXPECT_EQ(plain->port, 8080);
  EXPECT_EQ(plain->target, "/");
  EXPECT_EQ(HostAndPort(*plain), "[::1]:8080");
  Result<HttpUrl> named = ParseHttpUrl("http://daemon.local/prefix/");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->port, 80);
  EXPECT_EQ(named->target, "/prefix/");
}

TEST(HttpUrl, RefusesWhatItCannotReach) {
  for (const char* url : {"ftp://x/", "127.0.0.1:7600", "http://", "http://:7600", "http://host:0",
                          "http://host:70000", "http://host:12ab", "http://host:", "http://[::1",
                          "http://[::1]x", "https:///path"}) {
    Result<HttpUrl> parsed = ParseHttpUrl(url);
    EXPECT_EQ(parsed.status().code(), ErrorCode::kInvalidArgument) << url;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.status().message().find(url), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace agentstream::net
