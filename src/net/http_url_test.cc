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

TEST(PercentDecoding, StrictRefusesMalformedEscapesAndNul) {
  std::string out;
  EXPECT_TRUE(PercentDecode("a%20b%2fc%2F+d", false, &out));
  EXPECT_EQ(out, "a b/c/+d");
  EXPECT_TRUE(PercentDecode("a+b", true, &out));
  EXPECT_EQ(out, "a b");
  for (const char* bad : {"%", "%4", "a%zz", "%g0", "x%00y", "%%41"})
    EXPECT_FALSE(PercentDecode(bad, true, &out)) << bad;
  EXPECT_TRUE(PercentDecode(PercentEncode("id/with space:1\x7f"), false, &out));
  EXPECT_EQ(out, "id/with space:1\x7f");
}

TEST(PercentDecoding, LenientKeepsMalformedEscapesAsWritten) {
  EXPECT_EQ(PercentDecodeLenient("a%20b+c"), "a b c");
  EXPECT_EQ(PercentDecodeLenient("%zz%4"), "%zz%4");
  EXPECT_EQ(PercentDecodeLenient("100%"), "100%");
  EXPECT_EQ(PercentDecodeLenient("%%41"), "%A");
}

}  // namespace
}  // namespace agentstream::net
