#include "server/security.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(PathSegments("/v1//agents/x/"), (std::vector<std::string>{"v1", "agents", "x"}));
}

}  // namespace
}  // namespace agentstream::server
