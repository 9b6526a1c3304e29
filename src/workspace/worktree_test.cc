// Worktrees and their diffs on real git repositories made by the tests.
#include "workspace/worktree.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/shell.h"
#include "testing/temp_dir.h"
#include "workspace/diff.h"
#include "workspace/unified_diff.h"

namespace agentstream::workspace {
namespace {

namespace fs = std::filesystem;

using test_support::ShellOutput;
using test_support::WriteTextFile;

class WorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ShellOutput("git init -q -b main " + repo_);
    fs::create_directories(repo_ + "/src");
    WriteTextFile(repo_ + "/README.md", "hello\n");
    WriteTextFile(repo_ + "/src/a.txt", "one\ntwo\nthree\n");
    WriteTextFile(repo_ + "/.gitignore", "*.log\n");
    Commit(repo_, "first");
    head_ = Trim(ShellOutput(git_ + repo_ + " rev-parse HEAD"));
  }

  void Commit(const std::string& dir, const std::string& message) {
    ShellOutput(git_ + dir + " add -A && " + git_ + dir +
                " -c user.name=t -c user.email=t@t commit -q -m " + message);
  }
  static std::string Trim(std::string s) {
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  bool BranchExists(const std::string& branch) {
    return std::system(
               (git_ + repo_ + " rev-parse --verify --quiet refs/heads/" + branch + " >/dev/null")
                   .c_str()) == 0;
  }

  test_support::TempDir dir_{"worktree"};
  const std::string repo_ = dir_.File("repo");
  const std::string root_ = dir_.File("data/worktrees");
  const std::string git_ = "git -C ";
  std::string head_;
  Worktrees worktrees_{Git(), root_};
};

TEST_F(WorktreeTest, CreatesAWorktreeOnANewBranchFromHead) {
  auto made = worktrees_.Create(repo_ + "/src", {}, "ses_1");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->path, root_ + "/ses_1");
  EXPECT_EQ(made->branch, "agentstream/ses_1");
  EXPECT_EQ(made->base, "HEAD");
  EXPECT_EQ(made->base_commit, head_);
  EXPECT_EQ(made->repository, fs::canonical(repo_).string());
  EXPECT_TRUE(fs::exists(made->path + "/src/a.txt"));
  EXPECT_EQ(Trim(ShellOutput(git_ + made->path + " rev-parse --abbrev-ref HEAD")),
            "agentstream/ses_1");
  EXPECT_EQ(worktrees_.StateOf(*made), WorktreeState::kPresent);
}

TEST_F(WorktreeTest, TheDiffIsGitsOwnAndShowsUntrackedFilesWithoutTouchingTheIndex) {
  auto made = worktrees_.Create(repo_, WorktreeRequest{"feature/x", std::nullopt}, "ses_2");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  const std::string wt = made->path;
  WriteTextFile(wt + "/src/a.txt", "one\n2\nthree\nfour\n");
  fs::remove(wt + "/README.md");
  auto tracked_only = DiffWorktree(worktrees_, *made, std::nullopt, {});
  ASSERT_TRUE(tracked_only.ok()) << tracked_only.status().ToString();
  EXPECT_EQ(tracked_only->text, ShellOutput(git_ + wt + " diff --full-index " + head_));
  EXPECT_FALSE(tracked_only->truncated);

  WriteTextFile(wt + "/notes new.txt", "a\nb\n");
  WriteTextFile(wt + "/debug.log", "ignored\n");
  auto with_untracked = DiffWorktree(worktrees_, *made, std::nullopt, {});
  ASSERT_TRUE(with_untracked.ok());
  const std::string expected =
      ShellOutput(git_ + wt + " diff --full-index " + head_) +
      ShellOutput(
          "cd " + wt +
          " && git diff --no-index --full-index -- /dev/null 'notes new.txt'; test $? -eq 1");
  EXPECT_EQ(with_untracked->text, expected);
  const std::vector<FileDiff> files = ParseUnifiedDiff(with_untracked->text);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "README.md");
  EXPECT_EQ(files[0].status, "deleted");
  EXPECT_EQ(files[1].path, "src/a.txt");
  EXPECT_EQ(files[2].path, "notes new.txt");
  EXPECT_EQ(files[2].status, "added");
  EXPECT_EQ(files[2].additions, 2);
  // The untracked file is still untracked: nothing was added to the index.
  EXPECT_EQ(ShellOutput(git_ + wt + " status --porcelain -- 'notes new.txt'"),
            "?? \"notes new.txt\"\n");

  // A commit the agent made stays in its diff against the base, and leaves a diff against itself.
  Commit(wt, "work");
  auto committed = DiffWorktree(worktrees_, *made, std::nullopt, {});
  ASSERT_TRUE(committed.ok());
  EXPECT_EQ(committed->text, ShellOutput(git_ + wt + " diff --full-index " + head_));
  auto against_head = DiffWorktree(worktrees_, *made, std::string("HEAD"), {});
  ASSERT_TRUE(against_head.ok());
  EXPECT_EQ(against_head->text, "");
  EXPECT_EQ(against_head->against_commit, Trim(ShellOutput(git_ + wt + " rev-parse HEAD")));
  auto bad = DiffWorktree(worktrees_, *made, std::string("no-such-ref"), {});
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  auto option = DiffWorktree(worktrees_, *made, std::string("--output=/tmp/x"), {});
  EXPECT_EQ(option.status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(WorktreeTest, TheDiffIsBounded) {
  auto made = worktrees_.Create(repo_, {}, "ses_3");
  ASSERT_TRUE(made.ok());
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "line " + std::to_string(i) + "\n";
  WriteTextFile(made->path + "/src/a.txt", big);
  WriteTextFile(made->path + "/extra.txt", "x\n");
  DiffLimits limits;
  limits.max_bytes = 4096;
  auto diff = DiffWorktree(worktrees_, *made, std::nullopt, limits);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(diff->truncated);
  EXPECT_LE(diff->text.size(), 4096u);
  EXPECT_EQ(diff->text.back(), '\n');
  limits = DiffLimits{};
  limits.max_untracked_files = 0;
  WriteTextFile(made->path + "/src/a.txt", "one\ntwo\nthree\n");
  auto capped = DiffWorktree(worktrees_, *made, std::nullopt, limits);
  ASSERT_TRUE(capped.ok());
  EXPECT_EQ(capped->text, "");
  EXPECT_TRUE(capped->truncated);
}

TEST_F(WorktreeTest, BadInputIsRefusedAndCreatesNothing) {
  ShellOutput(git_ + repo_ + " branch taken");
  const std::string plain = dir_.File("plain");
  fs::create_directories(plain);
  struct Case {
    std::string cwd;
    WorktreeRequest request;
    ErrorCode code;
    std::string says;
  };
  const std::vector<Case> cases{
      {plain, {}, ErrorCode::kInvalidArgument, "not in a git repository"},
      {repo_, {"taken", std::nullopt}, ErrorCode::kAlreadyExists, "exists"},
      {repo_, {std::nullopt, "no-such-base"}, ErrorCode::kInvalidArgument, "not a commit"},
      {repo_, {std::nullopt, "-p"}, ErrorCode::kInvalidArgument, "not a valid name"},
      {repo_, {"bad..name", std::nullopt}, ErrorCode::kInvalidArgument, "not a valid name"},
      {repo_, {"-b", std::nullopt}, ErrorCode::kInvalidArgument, "not a valid"},
      {repo_ + "/src/..", {}, ErrorCode::kInvalidArgument, "\"..\""},
      {"src", {}, ErrorCode::kInvalidArgument, "absolute"},
  };
  for (const Case& c : cases) {
    auto made = worktrees_.Create(c.cwd, c.request, "ses_bad");
    ASSERT_FALSE(made.ok()) << c.cwd;
    EXPECT_EQ(made.status().code(), c.code) << made.status().ToString();
    EXPECT_NE(made.status().message().find(c.says), std::string::npos) << made.status().ToString();
    EXPECT_FALSE(fs::exists(root_ + "/ses_bad"));
  }
  EXPECT_FALSE(BranchExists("agentstream/ses_bad"));
  EXPECT_FALSE(BranchExists("bad..name"));

  Worktrees no_git(Git(GitOptions{"agentstream-no-such-git"}), root_);
  auto missing = no_git.Create(repo_, {}, "ses_bad");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("cannot run git"), std::string::npos);
  EXPECT_FALSE(fs::exists(root_ + "/ses_bad"));
}

TEST_F(WorktreeTest, RemovalRefusesUncommittedChangesUnlessForcedAndKeepsTheBranch) {
  auto made = worktrees_.Create(repo_, {}, "ses_4");
  ASSERT_TRUE(made.ok());
  std::string summary;
  EXPECT_FALSE(*worktrees_.HasChanges(*made, &summary));
  WriteTextFile(made->path + "/new.txt", "x\n");
  EXPECT_TRUE(*worktrees_.HasChanges(*made, &summary));
  EXPECT_NE(summary.find("new.txt"), std::string::npos);
  Status refused = worktrees_.Remove(*made, false);
  EXPECT_EQ(refused.code(), ErrorCode::kConflict) << refused.ToString();
  EXPECT_TRUE(fs::exists(made->path + "/new.txt"));
  ASSERT_TRUE(worktrees_.Remove(*made, true).ok());
  EXPECT_FALSE(fs::exists(made->path));
  EXPECT_EQ(worktrees_.StateOf(*made), WorktreeState::kMissing);
  EXPECT_TRUE(BranchExists("agentstream/ses_4"));
  EXPECT_EQ(ShellOutput(git_ + repo_ + " worktree list --porcelain").find(made->path),
            std::string::npos);
}

TEST_F(WorktreeTest, AWorktreeDeletedByHandIsMissingNotAnError) {
  auto made = worktrees_.Create(repo_, {}, "ses_5");
  ASSERT_TRUE(made.ok());
  fs::remove_all(made->path);
  EXPECT_EQ(worktrees_.StateOf(*made), WorktreeState::kMissing);
  auto diff = DiffWorktree(worktrees_, *made, std::nullopt, {});
  EXPECT_EQ(diff.status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(worktrees_.Remove(*made, false).ok());
  EXPECT_EQ(ShellOutput(git_ + repo_ + " worktree list --porcelain").find(made->path),
            std::string::npos);
}

TEST_F(WorktreeTest, AForkBranchesFromTheParentsBranchAsItIsNow) {
  auto parent = worktrees_.Create(repo_, {}, "ses_6");
  ASSERT_TRUE(parent.ok());
  WriteTextFile(parent->path + "/committed.txt", "kept\n");
  Commit(parent->path, "parent-work");
  WriteTextFile(parent->path + "/uncommitted.txt", "not carried\n");
  auto child = worktrees_.Branch(*parent, "ses_7");
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(child->branch, "agentstream/ses_7");
  EXPECT_EQ(child->base, "agentstream/ses_6");
  EXPECT_EQ(child->base_commit, Trim(ShellOutput(git_ + parent->path + " rev-parse HEAD")));
  EXPECT_TRUE(fs::exists(child->path + "/committed.txt"));
  EXPECT_FALSE(fs::exists(child->path + "/uncommitted.txt"));
  auto diff = DiffWorktree(worktrees_, *child, std::nullopt, {});
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->text, "");
}

TEST_F(WorktreeTest, ABaseThatIsABranchOrATagIsResolved) {
  ShellOutput(git_ + repo_ + " tag v1");
  WriteTextFile(repo_ + "/later.txt", "later\n");
  Commit(repo_, "later");
  // A bare name is a branch: the tag is named in full.
  auto bare = worktrees_.Create(repo_, WorktreeRequest{std::nullopt, "v1"}, "ses_8");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(root_ + "/ses_8"));
  auto made = worktrees_.Create(repo_, WorktreeRequest{std::nullopt, "refs/tags/v1"}, "ses_8");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->base, "refs/tags/v1");
  EXPECT_EQ(made->base_commit, head_);
  EXPECT_FALSE(fs::exists(made->path + "/later.txt"));
}

}  // namespace
}  // namespace agentstream::workspace
