#include "server/security.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "core/utf8.h"
#include "server/address_limiter.h"
#include "server/api_router.h"
#include "server/http_types.h"

namespace agentstream::server {
namespace {

TEST(SecurityTest, LoopbackHostsNeedNoToken) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("[::1]"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("192.168.1.4"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_TRUE(CheckBind("127.0.0.1", "").ok());
  EXPECT_EQ(CheckBind("0.0.0.0", "").code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(CheckBind("0.0.0.0", "secret").ok());
}

TEST(SecurityTest, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(SecurityTest, TokenAndOriginChecks) {
  SecurityOptions open;
  open.allowed_origins = SameHostOrigins(7600);
  EXPECT_EQ(CheckAccess(open, "", "", ""), Access::kAllowed);  // a CLI: no Origin
  EXPECT_EQ(CheckAccess(open, "", "", "http://localhost:7600"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(open, "", "", "http://evil.example"), Access::kForbiddenOrigin);
  EXPECT_EQ(CheckAccess(open, "", "", "http://localhost:7601"), Access::kForbiddenOrigin);

  SecurityOptions locked = open;
  locked.token = "s3cret";
  EXPECT_EQ(CheckAccess(locked, "", "", ""), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cret", "", ""), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cre", "", ""), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Basic s3cret", "", ""), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "", "s3cret", ""), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cret", "", "http://evil.example"),
            Access::kForbiddenOrigin);
}

TEST(SecurityTest, TheBearerSchemeIsCaseInsensitive) {
  SecurityOptions locked;
  locked.token = "s3cret";
  EXPECT_EQ(CheckAccess(locked, "bearer s3cret", "", ""), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "BEARER s3cret", "", ""), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "BeArEr   s3cret", "", ""), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "bearer S3CRET", "", ""),
            Access::kUnauthorized);  // the token is not
  EXPECT_EQ(CheckAccess(locked, "bearers3cret", "", ""), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Bearer", "", ""), Access::kUnauthorized);
  EXPECT_EQ(BearerToken("bearer  abc "), std::optional<std::string_view>("abc"));
  EXPECT_EQ(BearerToken("Bearer "), std::nullopt);
  EXPECT_EQ(BearerToken("Basic abc"), std::nullopt);
}

TEST(SecurityTest, HostHeadersAreParsedWithoutThePort) {
  EXPECT_EQ(HostOfHeader("Example.COM:7600"), "example.com");
  EXPECT_EQ(HostOfHeader("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(HostOfHeader("[::1]:7600"), "::1");
  EXPECT_EQ(HostOfHeader("[::1]"), "::1");
  EXPECT_EQ(HostOfHeader(""), std::nullopt);
  EXPECT_EQ(HostOfHeader(":7600"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a:b"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a:"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a:123456"), std::nullopt);
  EXPECT_EQ(HostOfHeader("::1"), std::nullopt);  // IPv6 needs brackets
  EXPECT_EQ(HostOfHeader("[::1"), std::nullopt);
  EXPECT_EQ(HostOfHeader("[evil.example]"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a b"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a/b"), std::nullopt);
  EXPECT_EQ(HostOfHeader("a@b"), std::nullopt);
}

// DNS rebinding: a page of evil.example.com whose name now resolves to 127.0.0.1 sends
// same-origin requests (no Origin header) with `Host: evil.example.com:7600`.
TEST(SecurityTest, OnlyThisDaemonsNamesAreAllowedAsHost) {
  SecurityOptions options;
  options.allowed_hosts = {"127.0.0.1", "LB.internal", "[fd00::7]:8080"};
  EXPECT_FALSE(HostAllowed(options, "evil.example.com:7600"));
  EXPECT_FALSE(HostAllowed(options, "evil.example.com"));
  EXPECT_FALSE(HostAllowed(options, "127.0.0.1.evil.example.com"));
  EXPECT_FALSE(HostAllowed(options, "localhost.evil.example.com"));
  EXPECT_FALSE(HostAllowed(options, "10.0.0.11:7600"));  // an address literal not ours
  EXPECT_FALSE(HostAllowed(options, ""));
  EXPECT_TRUE(HostAllowed(options, "127.0.0.1:7600"));
  EXPECT_TRUE(HostAllowed(options, "127.9.9.9:1"));  // every loopback literal
  EXPECT_TRUE(HostAllowed(options, "localhost:7600"));
  EXPECT_TRUE(HostAllowed(options, "LOCALHOST"));
  EXPECT_TRUE(HostAllowed(options, "[::1]:7600"));
  EXPECT_TRUE(HostAllowed(options, "[0:0::1]"));
  EXPECT_TRUE(HostAllowed(options, "lb.internal:443"));  // --allow-host, any port
  EXPECT_TRUE(HostAllowed(options, "[FD00:0::7]:7600"));
  // A wildcard listen address: its addresses are unknown, and a rebound page names a domain.
  options.allow_ip_literal_hosts = true;
  EXPECT_TRUE(HostAllowed(options, "10.0.0.11:7600"));
  EXPECT_TRUE(HostAllowed(options, "[2001:db8::1]:7600"));
  EXPECT_FALSE(HostAllowed(options, "evil.example.com:7600"));
}

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

TEST(HttpTypesTest, FramingOtherThanChunkedIsRefused) {
  EXPECT_EQ(CheckFraming(std::nullopt, 11), std::nullopt);
  EXPECT_EQ(CheckFraming("chunked", 11), std::nullopt);
  EXPECT_EQ(CheckFraming(" Chunked ", 11), std::nullopt);
  EXPECT_EQ(CheckFraming("xchunked", 11)->status, 400);  // an unknown coding: length unknown
  EXPECT_EQ(CheckFraming("chunked, gzip", 11)->status, 400);
  EXPECT_EQ(CheckFraming("", 11)->status, 400);
  EXPECT_EQ(CheckFraming("chunked, chunked", 11)->status, 400);
  EXPECT_EQ(CheckFraming("gzip, chunked", 11)->status, 501);
  EXPECT_EQ(CheckFraming("chunked", 10)->status, 400);
}

TEST(HttpTypesTest, ErrorBodiesAreValidUtf8) {
  const HttpResponse not_found =
      ErrorResponse(Error(ErrorCode::kNotFound, std::string("no session \xff\xfe")));
  EXPECT_TRUE(IsValidUtf8(not_found.body)) << not_found.body;
  EXPECT_NE(not_found.body.find("\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  const HttpResponse forbidden =
      CodedErrorResponse(403, "forbidden", "origin \"\xc3\x28\\ is not allowed");
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_TRUE(IsValidUtf8(forbidden.body)) << forbidden.body;
  boost::system::error_code ec;
  const boost::json::value parsed = boost::json::parse(forbidden.body, ec);
  ASSERT_FALSE(ec) << forbidden.body;
  EXPECT_EQ(parsed.at("error").at("code"), "forbidden");
}

TEST(HttpTypesTest, ParsesTargets) {
  std::string path;
  std::map<std::string, std::string> query;
  ASSERT_TRUE(ParseTarget("/v1/agents/a%20b/events?offset=1%3A2&live=sse&x", &path, &query));
  EXPECT_EQ(path, "/v1/agents/a b/events");
  EXPECT_EQ(query.at("offset"), "1:2");
  EXPECT_EQ(query.at("live"), "sse");
  EXPECT_EQ(query.at("x"), "");
  EXPECT_FALSE(ParseTarget("/bad%2", &path, &query));
  EXPECT_FALSE(ParseTarget("/nul%00", &path, &query));
  EXPECT_FALSE(ParseTarget("relative", &path, &query));
  // Decoded control characters would end a header that echoes the path (Location, ETag).
  EXPECT_FALSE(ParseTarget("/v1/stream/a%0d%0aSet-Cookie:%20x=1", &path, &query));
  EXPECT_FALSE(ParseTarget("/a%7f", &path, &query));
  EXPECT_FALSE(ParseTarget("/a%09b", &path, &query));
  EXPECT_TRUE(ParseTarget("/a?x=%0a", &path, &query));  // a query value may hold one
  EXPECT_TRUE(IsSafeHeaderValue("http://127.0.0.1:7600/v1/stream/a b"));
  EXPECT_FALSE(IsSafeHeaderValue("a\r\nSet-Cookie: x"));
  EXPECT_FALSE(IsSafeHeaderValue(std::string_view("a\0b", 3)));
  EXPECT_EQ(PathSegments("/v1//agents/x/"), (std::vector<std::string>{"v1", "agents", "x"}));
}

}  // namespace
}  // namespace agentstream::server
