#include "api/workspace_json.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "api/api_json.h"

namespace agentstream::api {
namespace {

namespace json = boost::json;

json::value Parse(std::string_view text) {
  auto parsed = ParseJson(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : json::value();
}

TEST(WorkspaceJsonTest, TheWorktreeMemberOfACreate) {
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"provider":"p","cwd":"/x"})")));
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"worktree":null})")));
  EXPECT_FALSE(*WorktreeRequestFromJson(Parse(R"({"worktree":false})")));
  auto defaults = WorktreeRequestFromJson(Parse(R"({"worktree":true})"));
  ASSERT_TRUE(defaults.ok() && *defaults);
  EXPECT_FALSE((*defaults)->branch);
  auto given = WorktreeRequestFromJson(Parse(R"({"worktree":{"branch":"fix/a","base":"main"}})"));
  ASSERT_TRUE(given.ok() && *given);
  EXPECT_EQ((*given)->branch, "fix/a");
  EXPECT_EQ((*given)->base, "main");
  EXPECT_EQ(json::serialize(WorktreeRequestToJson(**given)), R"({"branch":"fix/a","base":"main"})");
  for (const char* bad : {R"({"worktree":3})", R"({"worktree":{"branch":7}})",
                          R"({"worktree":{"base":""}})", R"({"worktree":"x"})"}) {
    EXPECT_EQ(WorktreeRequestFromJson(Parse(bad)).status().code(), ErrorCode::kInvalidArgument)
        << bad;
  }
}

TEST(WorkspaceJsonTest, AWorktreeEntryRoundTrips) {
  const workspace::Workspace ws{"/d/worktrees/ses_1", "agentstream/ses_1", "HEAD", "abc", "/r"};
  const json::object out =
      WorktreeToJson(SessionId("ses_1"), ws, workspace::WorktreeState::kMissing, true);
  EXPECT_EQ(out.at("state"), "missing");
  auto back = WorktreeEntryFromJson(out);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->agent, SessionId("ses_1"));
  EXPECT_EQ(back->workspace.branch, "agentstream/ses_1");
  EXPECT_EQ(back->workspace.base_commit, "abc");
  EXPECT_EQ(back->state, "missing");
  EXPECT_TRUE(back->closed);
  EXPECT_FALSE(WorktreeEntryFromJson(Parse(R"({"agent":"a"})")).ok());
}

TEST(WorkspaceJsonTest, TheDiffShapeTotalsFilesAndRepairsUtf8) {
  const workspace::Workspace ws{"/w", "b", "HEAD", "c0", "/r"};
  workspace::WorktreeDiff diff;
  diff.against = "HEAD";
  diff.against_commit = "c0";
  diff.text =
      "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1,2 @@\n-x\n+y\n+\xff\n"
      "diff --git a/old b/new\nsimilarity index 100%\nrename from old\nrename to new\n";
  diff.truncated = true;
  const json::object out = DiffToJson(SessionId("ses_1"), ws, diff);
  EXPECT_EQ(out.at("additions"), 2);
  EXPECT_EQ(out.at("deletions"), 1);
  EXPECT_EQ(out.at("truncated"), true);
  const json::array& files = out.at("files").as_array();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].at("hunks").at(0).at("lines").at(2), "+\xef\xbf\xbd");
  EXPECT_EQ(files[0].at("hunks").at(0).at("newLines"), 2);
  EXPECT_FALSE(files[0].as_object().contains("oldPath"));
  EXPECT_EQ(files[1].at("status"), "renamed");
  EXPECT_EQ(files[1].at("oldPath"), "old");
  EXPECT_EQ(files[1].at("path"), "new");
}

}  // namespace
}  // namespace agentstream::api
