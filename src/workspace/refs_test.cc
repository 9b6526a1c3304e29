// Branch names and refs as git checks them, without git.
#include "workspace/refs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace agentstream::workspace {
namespace {

TEST(RefsTest, BranchNamesFollowGitsRules) {
  for (const std::string& good :
       std::vector<std::string>{"main", "feature/x", "fix-1.2", "agentstream/ses_1", "a@b",
                                "caf\xc3\xa9", std::string(250, 'x')}) {
    EXPECT_TRUE(CheckBranchName(good).ok()) << good;
  }
  const std::vector<std::string> bad{
      "",
      "@",
      "HEAD",
      "-b",
      "bad..name",
      "a//b",
      "/a",
      "a/",
      "a.",
      ".a",
      "a/.b",
      "a.lock",
      "a/b.lock/c",
      "a b",
      "a~1",
      "a^",
      "a:b",
      "a?",
      "a*",
      "a[",
      "a\\b",
      "a@{1}",
      "a\x01",
      "a\x7f",
      "refs/heads/x",
      std::string(251, 'x'),
      std::string(256, 'y'),
      std::string(40, 'a'),
  };
  for (const std::string& name : bad) {
    const Status checked = CheckBranchName(name);
    EXPECT_EQ(checked.code(), ErrorCode::kInvalidArgument) << name;
  }
  // e/ x 20,000: refused by its length, before git could make any directory for it.
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "e/";
  deep += "e";
  const Status long_one = CheckBranchName(deep);
  EXPECT_EQ(long_one.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(long_one.message().find("255 bytes"), std::string::npos) << long_one.message();
  EXPECT_LT(long_one.message().size(), 300u);
}

TEST(RefsTest, ALookupNamesABranchAFullRefHeadOrAFullIdExactly) {
  EXPECT_EQ(*ExactRef("base", "main"), "refs/heads/main");
  EXPECT_EQ(*ExactRef("base", "v1"), "refs/heads/v1");
  EXPECT_EQ(*ExactRef("base", "refs/tags/v1"), "refs/tags/v1");
  EXPECT_EQ(*ExactRef("base", "HEAD"), "HEAD");
  // An abbreviated id is a branch name, never expanded to a commit.
  EXPECT_EQ(*ExactRef("base", "abc1234"), "refs/heads/abc1234");
  const std::string sha1(40, 'a'), sha256(64, '0');
  EXPECT_EQ(*ExactRef("against", sha1), sha1);
  EXPECT_EQ(*ExactRef("against", sha256), sha256);
  for (const std::string& bad : std::vector<std::string>{
           "@", "main~2", "v1^", "@{-1}", "HEAD^{tree}", "-p", "", "refs/heads/a..b"}) {
    auto exact = ExactRef("against", bad);
    ASSERT_FALSE(exact.ok()) << bad;
    EXPECT_EQ(exact.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(exact.status().message().rfind("against", 0), 0u) << exact.status().message();
  }
}

}  // namespace
}  // namespace agentstream::workspace
