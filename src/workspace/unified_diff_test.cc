#include "workspace/unified_diff.h"

#include <gtest/gtest.h>

namespace agentstream::workspace {
namespace {

TEST(UnifiedDiffTest, SplitsFilesAndHunksAndCountsLines) {
  const std::string text =
      "diff --git a/src/main.c b/src/main.c\n"
      "index 1111111..2222222 100644\n"
      "--- a/src/main.c\n"
      "+++ b/src/main.c\n"
      "@@ -1,3 +1,4 @@ int main\n"
      " one\n"
      "-two\n"
      "+zwei\n"
      "+drei\n"
      " three\n"
      "@@ -10 +11 @@\n"
      "-last\n"
      "+final\n"
      "\\ No newline at end of file\n"
      "diff --git a/new.txt b/new.txt\n"
      "new file mode 100644\n"
      "index 0000000..3333333\n"
      "--- /dev/null\n"
      "+++ b/new.txt\n"
      "@@ -0,0 +1 @@\n"
      "+hello\n";
  const std::vector<FileDiff> files = ParseUnifiedDiff(text);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "src/main.c");
  EXPECT_EQ(files[0].status, "modified");
  EXPECT_EQ(files[0].additions, 3);
  EXPECT_EQ(files[0].deletions, 2);
  ASSERT_EQ(files[0].hunks.size(), 2u);
  EXPECT_EQ(files[0].hunks[0].header, "@@ -1,3 +1,4 @@ int main");
  EXPECT_EQ(files[0].hunks[0].old_start, 1);
  EXPECT_EQ(files[0].hunks[0].old_lines, 3);
  EXPECT_EQ(files[0].hunks[0].new_lines, 4);
  EXPECT_EQ(files[0].hunks[0].lines,
            (std::vector<std::string>{" one", "-two", "+zwei", "+drei", " three"}));
  EXPECT_EQ(files[0].hunks[1].old_lines, 1);
  EXPECT_EQ(files[0].hunks[1].new_start, 11);
  EXPECT_EQ(files[0].hunks[1].lines.back(), "\\ No newline at end of file");
  EXPECT_EQ(files[1].path, "new.txt");
  EXPECT_EQ(files[1].status, "added");
  EXPECT_EQ(files[1].new_mode, "100644");
  EXPECT_EQ(files[1].additions, 1);
}

TEST(UnifiedDiffTest, DeletionsRenamesBinariesAndModeChanges) {
  const std::string text =
      "diff --git a/gone.txt b/gone.txt\n"
      "deleted file mode 100644\n"
      "--- a/gone.txt\n"
      "+++ /dev/null\n"
      "@@ -1 +0,0 @@\n"
      "-bye\n"
      "diff --git a/old name.txt b/new name.txt\n"
      "similarity index 100%\n"
      "rename from old name.txt\n"
      "rename to new name.txt\n"
      "diff --git a/logo.png b/logo.png\n"
      "index 4444444..5555555 100644\n"
      "Binary files a/logo.png and b/logo.png differ\n"
      "diff --git a/run.sh b/run.sh\n"
      "old mode 100644\n"
      "new mode 100755\n"
      "diff --git \"a/caf\\303\\251.txt\" \"b/caf\\303\\251.txt\"\n"
      "--- \"a/caf\\303\\251.txt\"\n"
      "+++ \"b/caf\\303\\251.txt\"\n"
      "@@ -1 +1 @@\n"
      "--- a line that looks like a header\n"
      "+++ and its replacement\n";
  const std::vector<FileDiff> files = ParseUnifiedDiff(text);
  ASSERT_EQ(files.size(), 5u);
  EXPECT_EQ(files[0].status, "deleted");
  EXPECT_EQ(files[0].path, "gone.txt");
  EXPECT_EQ(files[0].deletions, 1);
  EXPECT_EQ(files[1].status, "renamed");
  EXPECT_EQ(files[1].old_path, "old name.txt");
  EXPECT_EQ(files[1].path, "new name.txt");
  EXPECT_TRUE(files[2].binary);
  EXPECT_EQ(files[2].path, "logo.png");
  EXPECT_EQ(files[3].path, "run.sh");
  EXPECT_EQ(files[3].old_mode, "100644");
  EXPECT_EQ(files[3].new_mode, "100755");
  EXPECT_EQ(files[4].path, "caf\xc3\xa9.txt");
  // Inside a hunk, "--- " and "+++ " are content, counted by the hunk header.
  EXPECT_EQ(files[4].deletions, 1);
  EXPECT_EQ(files[4].additions, 1);
  EXPECT_EQ(files[4].hunks[0].lines.size(), 2u);
}

TEST(UnifiedDiffTest, ADiffCutShortKeepsWhatItHas) {
  const std::vector<FileDiff> files =
      ParseUnifiedDiff("diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,5 +1,5 @@\n one\n-two\n+2");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].hunks[0].lines.size(), 3u);
  EXPECT_TRUE(ParseUnifiedDiff("").empty());
  EXPECT_TRUE(ParseUnifiedDiff("garbage\n@@ -1 +1 @@\n+x\n").empty());
}

}  // namespace
}  // namespace agentstream::workspace
