// A worktree is hostile input: each test plants what an agent that may only write files inside
// its worktree (or a repository's configuration) can plant, and checks that the daemon's git
// runs nothing of it, reads nothing outside the worktree and resolves refs exactly. A marker
// file written by a planted program must never appear.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <vector>

#include "testing/shell.h"
#include "testing/temp_dir.h"
#include "workspace/diff.h"
#include "workspace/unified_diff.h"
#include "workspace/worktree.h"

namespace agentstream::workspace {
namespace {

namespace fs = std::filesystem;

using test_support::ShellOutput;
using test_support::WriteTextFile;

class HostileWorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ShellOutput("git init -q -b main " + repo_);
    WriteTextFile(repo_ + "/a.txt", "one\ntwo\n");
    Commit(repo_, "first");
    // A program that leaves the marker behind when anything runs it.
    WriteTextFile(planted_, "#!/bin/sh\ntouch " + marker_ + "\ncat\n");
    fs::permissions(planted_, fs::perms::owner_all);
  }

  void Commit(const std::string& dir, const std::string& message) {
    ShellOutput("git -C " + dir + " add -A && git -C " + dir +
                " -c user.name=t -c user.email=t@t commit -q -m " + message);
  }
  std::string Git(const std::string& dir, const std::string& args) {
    std::string out = ShellOutput("git -C " + dir + " " + args);
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  Workspace Made(const std::string& name, WorktreeRequest request = {}) {
    auto made = worktrees_.Create(repo_, request, name);
    EXPECT_TRUE(made.ok()) << made.status().ToString();
    return made.ok() ? *made : Workspace{};
  }
  bool Ran() const { return fs::exists(marker_); }
  std::string RefDirectories() {
    return ShellOutput("cd " + repo_ + "/.git && find refs logs -type d 2>/dev/null | sort");
  }

  test_support::TempDir dir_{"hostile"};
  const std::string repo_ = dir_.File("repo");
  const std::string root_ = dir_.File("data/worktrees");
  const std::string marker_ = dir_.File("ran");
  const std::string planted_ = dir_.File("planted.sh");
  Worktrees worktrees_{workspace::Git(), root_};
};

TEST_F(HostileWorktreeTest, AGitDirectoryPlantedInTheWorktreeIsRefusedAndRunsNothing) {
  const Workspace ws = Made("ses_1");
  const std::string evil = ws.path + "/.evil";
  ShellOutput("cp -r " + repo_ + "/.git " + evil);
  Git(evil, "config core.fsmonitor " + planted_);
  WriteTextFile(evil + "/hooks/post-checkout", "#!/bin/sh\ntouch " + marker_ + "\n");
  fs::permissions(evil + "/hooks/post-checkout", fs::perms::owner_all);
  WriteTextFile(ws.path + "/.git", "gitdir: " + evil + "\n");
  WriteTextFile(ws.path + "/a.txt", "changed\n");

  auto diff = DiffWorktree(worktrees_, ws, std::nullopt, {});
  EXPECT_EQ(diff.status().code(), ErrorCode::kConflict) << diff.status().ToString();
  EXPECT_NE(diff.status().message().find("will not run git"), std::string::npos);
  EXPECT_EQ(worktrees_.HasChanges(ws, nullptr).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(worktrees_.Remove(ws, false).code(), ErrorCode::kConflict);
  EXPECT_EQ(worktrees_.Remove(ws, true).code(), ErrorCode::kConflict);
  EXPECT_TRUE(fs::exists(ws.path + "/a.txt"));
  // The planted repository itself is the worktree's: git, run by hand there, would run it.
  EXPECT_FALSE(Ran());
}

TEST_F(HostileWorktreeTest, ADotGitThatIsALinkOrNamesAnotherWorktreeIsRefused) {
  const Workspace ws = Made("ses_2");
  const Workspace other = Made("ses_3");
  // The .git file of the other worktree: a real entry of the repository, but not this one's.
  fs::remove(ws.path + "/.git");
  fs::copy_file(other.path + "/.git", ws.path + "/.git");
  EXPECT_EQ(DiffWorktree(worktrees_, ws, std::nullopt, {}).status().code(), ErrorCode::kConflict);
  fs::remove(ws.path + "/.git");
  fs::create_symlink(other.path + "/.git", ws.path + "/.git");
  EXPECT_EQ(DiffWorktree(worktrees_, ws, std::nullopt, {}).status().code(), ErrorCode::kConflict);
  fs::remove(ws.path + "/.git");
  fs::create_directory(ws.path + "/.git");
  EXPECT_EQ(DiffWorktree(worktrees_, ws, std::nullopt, {}).status().code(), ErrorCode::kConflict);
  // The other one still works.
  EXPECT_TRUE(DiffWorktree(worktrees_, other, std::nullopt, {}).ok());
}

TEST_F(HostileWorktreeTest, TheRepositorysProgramRunningSettingsAreSwitchedOff) {
  WriteTextFile(repo_ + "/.gitattributes", "*.txt diff=evil filter=evil\n");
  Commit(repo_, "attributes");
  Git(repo_, "config core.fsmonitor " + planted_);
  Git(repo_, "config core.hooksPath " + dir_.File("hooks"));
  fs::create_directories(dir_.File("hooks"));
  for (const char* hook : {"post-checkout", "reference-transaction", "post-index-change"}) {
    WriteTextFile(dir_.File("hooks/") + hook, "#!/bin/sh\ntouch " + marker_ + "\n");
    fs::permissions(dir_.File("hooks/") + hook, fs::perms::owner_all);
  }
  Git(repo_, "config diff.external " + planted_);
  Git(repo_, "config diff.evil.command " + planted_);
  Git(repo_, "config diff.evil.textconv " + planted_);
  Git(repo_, "config filter.evil.clean " + planted_);
  Git(repo_, "config filter.evil.smudge " + planted_);
  Git(repo_, "config filter.evil.required true");
  Git(repo_, "config core.pager " + planted_);
  ASSERT_FALSE(Ran()) << "the test's own git ran the planted program";

  const Workspace ws = Made("ses_4");  // checkout: smudge, post-checkout
  WriteTextFile(ws.path + "/a.txt", "one\nTWO\n");
  WriteTextFile(ws.path + "/new.txt", "new\n");
  auto diff = DiffWorktree(worktrees_, ws, std::nullopt, {});  // clean, textconv, external diff
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_NE(diff->text.find("+TWO"), std::string::npos) << diff->text;
  EXPECT_NE(diff->text.find("+new"), std::string::npos) << diff->text;
  EXPECT_TRUE(*worktrees_.HasChanges(ws, nullptr));
  auto fork = worktrees_.Branch(ws, "ses_5");
  ASSERT_TRUE(fork.ok()) << fork.status().ToString();
  EXPECT_TRUE(worktrees_.Remove(*fork, false).ok());
  EXPECT_TRUE(worktrees_.Remove(ws, true).ok());
  EXPECT_FALSE(Ran());
}

TEST_F(HostileWorktreeTest, UntrackedLinksAreShownAsLinksAndSpecialFilesAreSkipped) {
  const std::string outside = dir_.File("outside");
  fs::create_directories(outside);
  WriteTextFile(outside + "/null", "SECRET in a directory\n");
  WriteTextFile(outside + "/secret", "SECRET in a file\n");
  const Workspace ws = Made("ses_6");
  fs::create_symlink(outside, ws.path + "/link_dir");
  fs::create_symlink(outside + "/secret", ws.path + "/link_file");
  fs::create_directories(ws.path + "/sub");
  fs::create_symlink(outside, ws.path + "/sub/deeper");
  // A tracked file replaced by a FIFO (git cannot diff it), and an untracked one (git does not
  // list it).
  fs::remove(ws.path + "/a.txt");
  ASSERT_EQ(::mkfifo((ws.path + "/a.txt").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo((ws.path + "/pipe").c_str(), 0600), 0);
  WriteTextFile(ws.path + "/plain.txt", "mine\n");

  auto diff = DiffWorktree(worktrees_, ws, std::nullopt, {});
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_EQ(diff->text.find("SECRET"), std::string::npos) << diff->text;
  const std::vector<FileDiff> files = ParseUnifiedDiff(diff->text);
  std::map<std::string, const FileDiff*> by_path;
  for (const FileDiff& f : files) by_path[f.path] = &f;
  for (const std::string link : {"link_dir", "link_file", "sub/deeper"}) {
    ASSERT_TRUE(by_path.count(link)) << link << "\n" << diff->text;
    EXPECT_EQ(by_path[link]->new_mode, "120000");
    ASSERT_EQ(by_path[link]->hunks.size(), 1u);
    EXPECT_EQ(by_path[link]->hunks[0].lines[0].substr(0, 1 + outside.size()), "+" + outside);
  }
  EXPECT_EQ(by_path["plain.txt"]->hunks[0].lines[0], "+mine");
  EXPECT_FALSE(by_path.count("pipe"));
  EXPECT_FALSE(by_path.count("a.txt"));
  ASSERT_EQ(diff->skipped.size(), 1u);
  EXPECT_EQ(diff->skipped[0].path, "a.txt");
  EXPECT_EQ(diff->skipped[0].reason, "fifo");
  // The link is what git itself shows for it once tracked.
  const std::string by_git = ShellOutput("cd " + ws.path +
                                         " && git diff --no-index --full-index /dev/null "
                                         "link_file; test $? -eq 1");
  EXPECT_NE(diff->text.find(by_git), std::string::npos) << by_git;
}

TEST_F(HostileWorktreeTest, ABranchNamedAtIsRefusedAndATagNeverStandsForABranch) {
  auto at = worktrees_.Create(repo_, WorktreeRequest{"@", std::nullopt}, "ses_7");
  EXPECT_EQ(at.status().code(), ErrorCode::kInvalidArgument);
  const std::string first = Git(repo_, "rev-parse HEAD");
  Git(repo_, "tag dup");  // the tag stays on the first commit
  WriteTextFile(repo_ + "/b.txt", "b\n");
  Commit(repo_, "second");
  Git(repo_, "branch dup");  // the branch on the second
  const std::string second = Git(repo_, "rev-parse HEAD");
  ASSERT_NE(first, second);

  const Workspace ws = Made("ses_8", WorktreeRequest{"feature", "dup"});
  EXPECT_EQ(ws.base_commit, second);
  auto against = DiffWorktree(worktrees_, ws, std::string("dup"), {});
  ASSERT_TRUE(against.ok());
  EXPECT_EQ(against->against_commit, second);
  auto tag = DiffWorktree(worktrees_, ws, std::string("refs/tags/dup"), {});
  ASSERT_TRUE(tag.ok());
  EXPECT_EQ(tag->against_commit, first);

  // A fork of an agent on a branch named like a tag takes the branch's commit.
  const Workspace on_dup = Made("ses_9", WorktreeRequest{"dup2", "dup"});
  Git(repo_, "tag dup2 " + first);
  auto fork = worktrees_.Branch(on_dup, "ses_10");
  ASSERT_TRUE(fork.ok()) << fork.status().ToString();
  EXPECT_EQ(fork->base_commit, second);
}

TEST_F(HostileWorktreeTest, OverLongNamesAreRefusedBeforeGitRunsAndLeaveNothing) {
  const std::string before = RefDirectories();
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "e/";
  deep += "e";
  const std::vector<std::string> names{std::string(300, 'b'), "x/" + std::string(300, 'b'), deep,
                                       std::string(900 << 10, 'c')};
  for (const std::string& name : names) {
    auto made = worktrees_.Create(repo_, WorktreeRequest{name, std::nullopt}, "ses_11");
    ASSERT_FALSE(made.ok());
    EXPECT_EQ(made.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_EQ(made.status().message().find("Argument list"), std::string::npos);
    auto based = worktrees_.Create(repo_, WorktreeRequest{std::nullopt, name}, "ses_11");
    ASSERT_FALSE(based.ok());
    EXPECT_EQ(based.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_LT(based.status().message().size(), 400u);
  }
  EXPECT_EQ(RefDirectories(), before);
  EXPECT_FALSE(fs::exists(root_ + "/ses_11"));
  // The longest name allowed works, and its removal and branch deletion leave the same tree.
  const std::string longest = "y/" + std::string(250, 'z');
  const Workspace ws = Made("ses_12", WorktreeRequest{longest, std::nullopt});
  EXPECT_EQ(ws.branch, longest);
}

}  // namespace
}  // namespace agentstream::workspace
