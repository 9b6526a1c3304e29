// Git actions on real repositories made by the tests, with a local bare repository as the remote.
#include "workspace/git_actions.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/shell.h"
#include "testing/temp_dir.h"

namespace agentstream::workspace {
namespace {

namespace fs = std::filesystem;

using test_support::RunShell;
using test_support::ShellOutput;
using test_support::WriteTextFile;

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class GitActionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ShellOutput("git init -q -b main " + repo_);
    WriteTextFile(repo_ + "/README.md", "hello\n");
    WriteTextFile(repo_ + "/a.txt", "one\ntwo\nthree\n");
    WriteTextFile(repo_ + "/.gitignore", "*.log\n");
    Commit(repo_, "first");
    auto made = worktrees_.Create(repo_, {}, "ses_1");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    ws_ = *made;
  }

  void Commit(const std::string& dir, const std::string& message) {
    ShellOutput(Git(dir) + " add -A && " + Git(dir) +
                " -c user.name=t -c user.email=t@t commit -q -m " + message);
  }
  std::string Git(const std::string& dir) const { return "git -C " + dir; }
  std::string Rev(const std::string& dir, const std::string& rev) {
    return Trim(ShellOutput(Git(dir) + " rev-parse " + rev));
  }
  std::string Status(const std::string& dir) {
    return ShellOutput(Git(dir) + " status --porcelain");
  }

  test_support::TempDir dir_{"git-actions"};
  const std::string repo_ = dir_.File("repo");
  Worktrees worktrees_{workspace::Git(), dir_.File("data/worktrees")};
  GitActions actions_{worktrees_, {GitIdentity{"Ada Agent", "ada@example.com"}}};
  Workspace ws_;
};

TEST_F(GitActionsTest, CommitsEveryChangeOnTheWorktreesBranchButNotIgnoredFiles) {
  WriteTextFile(ws_.path + "/a.txt", "one\nTWO\nthree\n");
  WriteTextFile(ws_.path + "/new.txt", "new\n");
  WriteTextFile(ws_.path + "/debug.log", "ignored\n");
  fs::remove(ws_.path + "/README.md");
  auto done = actions_.Commit(ws_, "Fix the second line\n\nAnd more words.\n");
  ASSERT_TRUE(done.ok()) << done.status().ToString();
  EXPECT_EQ(done->action, "commit");
  EXPECT_EQ(done->outcome, "committed");
  EXPECT_EQ(done->branch, "agentstream/ses_1");
  EXPECT_EQ(done->message, "Fix the second line");
  EXPECT_EQ(*done->commit, Rev(repo_, "refs/heads/agentstream/ses_1"));
  EXPECT_EQ(Trim(ShellOutput(Git(repo_) + " log -1 --format='%an <%ae>|%cn|%B' " + *done->commit)),
            "Ada Agent <ada@example.com>|Ada Agent|Fix the second line\n\nAnd more words.");
  EXPECT_EQ(ShellOutput(Git(repo_) + " show --name-status --format= " + *done->commit),
            "D\tREADME.md\nM\ta.txt\nA\tnew.txt\n");
  EXPECT_EQ(Status(ws_.path), "");  // the ignored file stays, untracked
  EXPECT_TRUE(fs::exists(ws_.path + "/debug.log"));
  EXPECT_EQ(Rev(repo_, "main"), Rev(repo_, *done->commit + "^"));  // main did not move
}

TEST_F(GitActionsTest, RefusesAnEmptyCommitABadMessageAndAWorktreeOffItsBranch) {
  auto nothing = actions_.Commit(ws_, "nothing");
  EXPECT_EQ(nothing.status().code(), ErrorCode::kConflict);
  EXPECT_NE(nothing.status().message().find("nothing to commit"), std::string::npos);
  WriteTextFile(ws_.path + "/x.txt", "x\n");
  EXPECT_EQ(actions_.Commit(ws_, " \n ").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(actions_.Commit(ws_, std::string(kMaxCommitMessageBytes + 1, 'm')).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(actions_.Commit(ws_, "bad \xff byte").status().code(), ErrorCode::kInvalidArgument);
  ShellOutput(Git(ws_.path) + " checkout -q -b elsewhere");
  auto off = actions_.Commit(ws_, "on the wrong branch");
  EXPECT_EQ(off.status().code(), ErrorCode::kConflict);
  EXPECT_NE(off.status().message().find("not on its branch"), std::string::npos);
  EXPECT_EQ(Rev(repo_, "elsewhere"), Rev(repo_, "main"));  // nothing was committed
}

TEST_F(GitActionsTest, TheRepositorysIdentityOrADefaultWhenNoneIsConfigured) {
  GitActions plain(worktrees_);
  WriteTextFile(ws_.path + "/x.txt", "x\n");
  auto first = plain.Commit(ws_, "by default");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(Trim(ShellOutput(Git(repo_) + " log -1 --format='%an <%ae>' " + *first->commit)),
            "agentstream <agentstream@localhost>");
  ShellOutput(Git(repo_) + " config user.name 'Repo Owner' && " + Git(repo_) +
              " config user.email owner@example.com");
  WriteTextFile(ws_.path + "/y.txt", "y\n");
  auto second = plain.Commit(ws_, "by the repository's identity");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(Trim(ShellOutput(Git(repo_) + " log -1 --format='%an <%ae>' " + *second->commit)),
            "Repo Owner <owner@example.com>");
}

TEST_F(GitActionsTest, FastForwardsTheCheckedOutBaseAndItsFiles) {
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  const std::string tip = Rev(repo_, "agentstream/ses_1");
  auto merged = actions_.Merge(ws_, std::nullopt, false);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->outcome, "fast-forward");
  EXPECT_EQ(merged->target, "main");
  EXPECT_EQ(*merged->commit, tip);
  EXPECT_EQ(Rev(repo_, "main"), tip);
  EXPECT_TRUE(fs::exists(repo_ + "/feature.txt"));  // the checkout moved with its branch
  EXPECT_EQ(Status(repo_), "");
  auto again = actions_.Merge(ws_, std::nullopt, false);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, "up-to-date");
}

TEST_F(GitActionsTest, MergesDivergedBranchesWithAMergeCommit) {
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  WriteTextFile(repo_ + "/README.md", "hello, world\n");
  Commit(repo_, "readme");
  const std::string old_main = Rev(repo_, "main");
  const std::string tip = Rev(repo_, "agentstream/ses_1");
  auto merged = actions_.Merge(ws_, "main", false);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->outcome, "merged");
  EXPECT_EQ(merged->message, "Merge branch 'agentstream/ses_1' into main");
  EXPECT_EQ(Rev(repo_, "main"), *merged->commit);
  EXPECT_EQ(Trim(ShellOutput(Git(repo_) + " log -1 --format=%P main")), old_main + " " + tip);
  EXPECT_TRUE(fs::exists(repo_ + "/feature.txt"));
  EXPECT_EQ(Status(repo_), "");
}

TEST_F(GitActionsTest, AConflictLeavesEverythingAsItWas) {
  WriteTextFile(ws_.path + "/a.txt", "one\nagent\nthree\n");
  ASSERT_TRUE(actions_.Commit(ws_, "agent's line").ok());
  WriteTextFile(repo_ + "/a.txt", "one\nhuman\nthree\n");
  Commit(repo_, "human-line");
  const std::string old_main = Rev(repo_, "main");
  auto merged = actions_.Merge(ws_, std::nullopt, false);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->outcome, "conflict");
  EXPECT_EQ(merged->files, std::vector<std::string>{"a.txt"});
  EXPECT_EQ(Rev(repo_, "main"), old_main);
  EXPECT_EQ(Status(repo_), "");
  EXPECT_FALSE(fs::exists(repo_ + "/.git/MERGE_HEAD"));
  EXPECT_EQ(ShellOutput("cat " + repo_ + "/a.txt"), "one\nhuman\nthree\n");
}

TEST_F(GitActionsTest, LocalChangesInTheWayOfTheBaseCheckoutRefuseTheWholeMerge) {
  WriteTextFile(ws_.path + "/a.txt", "one\nagent\nthree\n");
  ASSERT_TRUE(actions_.Commit(ws_, "agent's line").ok());
  WriteTextFile(repo_ + "/a.txt", "one\nuncommitted\nthree\n");
  const std::string old_main = Rev(repo_, "main");
  auto merged = actions_.Merge(ws_, std::nullopt, false);
  EXPECT_EQ(merged.status().code(), ErrorCode::kConflict);
  EXPECT_NE(merged.status().message().find("nothing was merged"), std::string::npos);
  EXPECT_EQ(Rev(repo_, "main"), old_main);
  EXPECT_EQ(ShellOutput("cat " + repo_ + "/a.txt"), "one\nuncommitted\nthree\n");
}

TEST_F(GitActionsTest, MergesIntoABranchCheckedOutNowhereByItsRef) {
  ShellOutput(Git(repo_) + " branch release");
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  auto merged = actions_.Merge(ws_, "release", true);
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->outcome, "merged");  // no_ff: a merge commit even where a fast-forward would do
  EXPECT_EQ(Rev(repo_, "release"), *merged->commit);
  EXPECT_NE(Rev(repo_, "main"), *merged->commit);
  EXPECT_EQ(actions_.Merge(ws_, "no-such-branch", false).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(actions_.Merge(ws_, "bad..name", false).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(actions_.Merge(ws_, "agentstream/ses_1", false).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST_F(GitActionsTest, PushesToABareRemoteAndReportsARefusal) {
  const std::string remote = dir_.File("remote.git");
  ShellOutput("git init -q --bare " + remote + " && " + Git(repo_) + " remote add origin " +
              remote);
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  auto pushed = actions_.Push(ws_, "origin");
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->outcome, "pushed");
  EXPECT_EQ(pushed->target, "origin");
  EXPECT_EQ(Rev(remote, "agentstream/ses_1"), Rev(repo_, "agentstream/ses_1"));
  // Someone else moves the remote branch: the next push is not a fast-forward, and is refused.
  const std::string other = dir_.File("other");
  ShellOutput("git clone -q -b agentstream/ses_1 " + remote + " " + other);
  WriteTextFile(other + "/theirs.txt", "theirs\n");
  Commit(other, "theirs");
  ShellOutput(Git(other) + " push -q origin agentstream/ses_1");
  const std::string theirs = Rev(remote, "agentstream/ses_1");
  WriteTextFile(ws_.path + "/mine.txt", "mine\n");
  ASSERT_TRUE(actions_.Commit(ws_, "mine").ok());
  const std::string mine = Rev(repo_, "agentstream/ses_1");
  auto refused = actions_.Push(ws_, "origin");
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->outcome, "refused");
  EXPECT_NE(refused->message->find("rejected"), std::string::npos) << *refused->message;
  EXPECT_EQ(Rev(remote, "agentstream/ses_1"), theirs);
  EXPECT_EQ(Rev(repo_, "agentstream/ses_1"), mine);  // nothing local is lost
}

TEST_F(GitActionsTest, APushRunsNoProgramTheRepositorysConfigurationNames) {
  const std::string remote = dir_.File("remote.git");
  const std::string marker = dir_.File("ran");
  ShellOutput("git init -q --bare " + remote);
  // A remote whose receive-pack is a command, a remote helper, an ext:: URL, and an ssh command.
  ShellOutput(Git(repo_) + " remote add origin " + remote + " && " + Git(repo_) +
              " config remote.origin.receivepack 'touch " + marker + "; git-receive-pack' && " +
              Git(repo_) + " config core.sshCommand 'touch " + marker + "' && " + Git(repo_) +
              " config remote.evil.url 'ext::sh -c touch% " + marker + "' && " + Git(repo_) +
              " config remote.helper.url 'evil::" + remote + "' && " + Git(repo_) +
              " config remote.http.url http://example.com/x.git");
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  auto pushed = actions_.Push(ws_, "origin");
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->outcome, "pushed");
  for (const char* name : {"evil", "helper", "http", "missing"}) {
    auto refused = actions_.Push(ws_, name);
    EXPECT_EQ(refused.status().code(), ErrorCode::kInvalidArgument) << name;
  }
  EXPECT_EQ(actions_.Push(ws_, "-u").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(actions_.Push(ws_, "a/b").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(marker));
}

// A pull request: pushed, then gh run with the repository, branch, base, title and body. GitHub
// cannot be reached here, so `gh` is a script that records how it was run and answers as gh
// does; the real gh against GitHub is not tested (docs/workspaces.md).
TEST_F(GitActionsTest, APullRequestPushesThenRunsGhOutsideTheWorktree) {
  const std::string remote = dir_.File("remote.git");
  const std::string record = dir_.File("gh.args");
  const std::string gh = dir_.File("gh");
  ShellOutput("git init -q --bare " + remote);
  // Fetched from GitHub, pushed to the local bare repository (a pushurl, as people set one).
  ShellOutput(Git(repo_) + " remote add origin https://github.com/octo/app.git && " + Git(repo_) +
              " config remote.origin.pushurl " + remote);
  WriteTextFile(
      gh,
      "#!/bin/sh\n"
      "{ pwd; printf '%s\\n' \"$@\"; env | grep -c '^GIT_' ; echo \"$GH_PROMPT_DISABLED\"; } > " +
          record +
          "\n"
          "echo 'Creating pull request for agentstream/ses_1 into main in octo/app'\n"
          "echo\n"
          "echo https://github.com/octo/app/pull/7\n");
  fs::permissions(gh, fs::perms::owner_all);
  WriteTextFile(ws_.path + "/feature.txt", "feature\n");
  ASSERT_TRUE(actions_.Commit(ws_, "feature").ok());
  GitActionOptions options{GitIdentity{"Ada Agent", "ada@example.com"}};
  options.gh_program = gh;
  GitActions with_gh(worktrees_, options);
  auto opened = with_gh.PullRequest(ws_, "origin", std::nullopt, "Add the feature", "Why: tests.");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->action, "pr");
  EXPECT_EQ(opened->outcome, "opened");
  EXPECT_EQ(opened->url, "https://github.com/octo/app/pull/7");
  EXPECT_EQ(opened->target, "main");
  EXPECT_EQ(Rev(remote, "agentstream/ses_1"), Rev(repo_, "agentstream/ses_1"));
  EXPECT_EQ(ShellOutput("cat " + record),
            "/\npr\ncreate\n--repo\ngithub.com/octo/app\n--head\nagentstream/ses_1\n--base\nmain\n"
            "--title\nAdd the feature\n--body\nWhy: tests.\n0\n1\n");
  // gh refuses (not logged in): the outcome says so with gh's words; the branch stays pushed.
  WriteTextFile(gh,
                "#!/bin/sh\necho 'To get started with GitHub CLI, please run:  gh auth login' >&2\n"
                "exit 4\n");
  auto failed = with_gh.PullRequest(ws_, "origin", std::string("main"), "Again", "");
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  EXPECT_EQ(failed->outcome, "failed");
  EXPECT_NE(failed->message->find("gh auth login"), std::string::npos) << *failed->message;
  // No gh at all; a remote that is not GitHub's; a bad title.
  options.gh_program = dir_.File("no-such-gh");
  EXPECT_EQ(GitActions(worktrees_, options)
                .PullRequest(ws_, "origin", std::nullopt, "t", "")
                .status()
                .code(),
            ErrorCode::kUnavailable);
  ShellOutput(Git(repo_) + " remote add local " + remote);
  EXPECT_EQ(with_gh.PullRequest(ws_, "local", std::nullopt, "t", "").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(with_gh.PullRequest(ws_, "origin", std::nullopt, "", "").status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(with_gh.PullRequest(ws_, "origin", std::nullopt, "two\nlines", "").status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(GitHubRepository, ReadsGitHubsUrlShapesOnly) {
  EXPECT_EQ(GitHubRepository("https://github.com/octo/app.git"), "github.com/octo/app");
  EXPECT_EQ(GitHubRepository("https://github.com/octo/app"), "github.com/octo/app");
  EXPECT_EQ(GitHubRepository("git@github.com:octo/app.git"), "github.com/octo/app");
  EXPECT_EQ(GitHubRepository("ssh://git@ghe.example.com:22/team/repo.git"),
            "ghe.example.com/team/repo");
  EXPECT_EQ(GitHubRepository("https://user:tok@github.com/octo/app.git"), "github.com/octo/app");
  EXPECT_FALSE(GitHubRepository("/srv/git/app.git"));
  EXPECT_FALSE(GitHubRepository("file:///srv/git/app.git"));
  EXPECT_FALSE(GitHubRepository("https://github.com/octo"));
  EXPECT_FALSE(GitHubRepository("https://github.com/octo/app/extra"));
  EXPECT_FALSE(GitHubRepository("https://github.com/-x/app"));
  EXPECT_FALSE(GitHubRepository("https://github.com/octo/.."));
  EXPECT_FALSE(GitHubRepository("git@github.com:octo/app\n.git"));
}

TEST_F(GitActionsTest, DiscardsChangesButKeepsIgnoredFiles) {
  WriteTextFile(ws_.path + "/a.txt", "changed\n");
  WriteTextFile(ws_.path + "/new.txt", "new\n");
  fs::create_directories(ws_.path + "/dir");
  WriteTextFile(ws_.path + "/dir/deep.txt", "deep\n");
  WriteTextFile(ws_.path + "/keep.log", "ignored\n");
  auto discarded = actions_.Discard(ws_);
  ASSERT_TRUE(discarded.ok()) << discarded.status().ToString();
  EXPECT_EQ(discarded->outcome, "discarded");
  EXPECT_EQ(discarded->files, (std::vector<std::string>{"a.txt", "dir/", "new.txt"}));
  EXPECT_EQ(Status(ws_.path), "");
  EXPECT_EQ(ShellOutput("cat " + ws_.path + "/a.txt"), "one\ntwo\nthree\n");
  EXPECT_FALSE(fs::exists(ws_.path + "/new.txt"));
  EXPECT_FALSE(fs::exists(ws_.path + "/dir"));
  EXPECT_TRUE(fs::exists(ws_.path + "/keep.log"));
  EXPECT_EQ(actions_.Discard(ws_).status().code(), ErrorCode::kConflict);  // nothing left
}

TEST(GitIdentityTest, ReadsNameAndEmail) {
  auto who = ParseGitIdentity("Ada Lovelace <ada@example.com>");
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_EQ(who->name, "Ada Lovelace");
  EXPECT_EQ(who->email, "ada@example.com");
  for (const char* bad : {"Ada", "<ada@example.com>", "Ada <>", "Ada <a b@c>", "Ada <a@b> x",
                          "Ada <a<b@c>", "Ada\n <a@b>"})
    EXPECT_EQ(ParseGitIdentity(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  EXPECT_EQ(ParseGitIdentity(std::string(300, 'a') + " <a@b>").status().code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace agentstream::workspace
