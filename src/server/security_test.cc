#include "server/security.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(CheckAccess(open, "", "", "", "127.0.0.1"), Access::kAllowed);  // a CLI: no Origin
  EXPECT_EQ(CheckAccess(open, "", "", "http://localhost:7600", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(open, "", "", "http://evil.example", "127.0.0.1"),
            Access::kForbiddenOrigin);
  EXPECT_EQ(CheckAccess(open, "", "", "http://localhost:7601", "127.0.0.1"),
            Access::kForbiddenOrigin);

  SecurityOptions locked = open;
  locked.token = "s3cret";
  EXPECT_EQ(CheckAccess(locked, "", "", "", "127.0.0.1"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cret", "", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cre", "", "", "127.0.0.1"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Basic s3cret", "", "", "127.0.0.1"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "", "s3cret", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cret", "", "http://evil.example", "127.0.0.1"),
            Access::kForbiddenOrigin);
}

TEST(SecurityTest, WithoutATokenOnlyALoopbackClientIsAllowed) {
  SecurityOptions open;
  EXPECT_EQ(CheckAccess(open, "", "", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(open, "", "", "", "127.9.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(open, "", "", "", "::1"), Access::kAllowed);
  // A client a trusted proxy forwarded from another machine, or one not known.
  EXPECT_EQ(CheckAccess(open, "", "", "", "203.0.113.5"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(open, "", "", "", "2001:db8::5"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(open, "", "", "", ""), Access::kUnauthorized);
  SecurityOptions locked;
  locked.token = "s3cret";
  EXPECT_EQ(CheckAccess(locked, "Bearer s3cret", "", "", "203.0.113.5"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "", "", "", "127.0.0.1"), Access::kUnauthorized);
}

TEST(SecurityTest, TheBearerSchemeIsCaseInsensitive) {
  SecurityOptions locked;
  locked.token = "s3cret";
  EXPECT_EQ(CheckAccess(locked, "bearer s3cret", "", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "BEARER s3cret", "", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "BeArEr   s3cret", "", "", "127.0.0.1"), Access::kAllowed);
  EXPECT_EQ(CheckAccess(locked, "bearer S3CRET", "", "", "127.0.0.1"),
            Access::kUnauthorized);  // the token is not
  EXPECT_EQ(CheckAccess(locked, "bearers3cret", "", "", "127.0.0.1"), Access::kUnauthorized);
  EXPECT_EQ(CheckAccess(locked, "Bearer", "", "", "127.0.0.1"), Access::kUnauthorized);
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

}  // namespace
}  // namespace agentstream::server
