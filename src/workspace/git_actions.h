// Git actions on an agent's worktree (docs/workspaces.md, "Git actions"): commit its changes,
// merge its branch into the base, push its branch to a remote of the repository, or discard its
// uncommitted changes. Each runs git (git.h) at places checked from the file system
// (git_place.h), with the same neutralised configuration as every other git command, and
// answers what happened as the payload of the session's workspace.action event.
//
// Nothing is left half done:
// - a merge is computed without a work tree (`git merge-tree --write-tree`, `git commit-tree`),
//   so a conflict changes nothing; the base branch then moves by a compare-and-swap of its ref
//   or, when it is checked out in a worktree, by `git merge --ff-only` there, which git refuses
//   as a whole when that worktree's own changes are in the way;
// - a push never forces: a remote that refuses keeps its branch, and nothing local changes.
//
// Blocking, thread-safe (the object is immutable); call from a worker thread.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "workspace/worktree.h"

namespace agentstream::workspace {

// What workspace.action records (core/event.h).
using GitActionResult = WorkspaceAction;

// Who a commit is by (author and committer): "Name <email>" of the daemon's configuration.
struct GitIdentity {
  std::string name;
  std::string email;
};

// "Name <email>" read into an identity; kInvalidArgument with the reason when it is not one (no
// angle brackets, an empty name or email, a newline or a control character, over 256 bytes).
Result<GitIdentity> ParseGitIdentity(std::string_view text);

struct GitActionOptions {
  // The author and committer of a commit (and of a merge commit). Absent: the repository's own
  // user.name and user.email when it sets them, else "agentstream <agentstream@localhost>".
  std::optional<GitIdentity> identity;
  process::Millis push_timeout{120000};  // a push (a network round trip); other commands: git.h's
  // The GitHub CLI of pull requests (PullRequest): a path, or a name looked up in PATH, and its
  // time limit.
  std::string gh_program = "gh";
  process::Millis gh_timeout{60000};
};

// Bounds of a client's input.
inline constexpr std::size_t kMaxCommitMessageBytes = std::size_t{16} << 10;
inline constexpr std::size_t kMaxConflictFilesListed = 100;
inline constexpr std::size_t kMaxPullRequestTitleBytes = 256;
inline constexpr std::size_t kMaxPullRequestBodyBytes = std::size_t{64} << 10;

// "HOST/OWNER/REPO" of a GitHub remote URL (https://HOST/OWNER/REPO[.git], ssh://[user@]HOST/
// OWNER/REPO[.git], [user@]HOST:OWNER/REPO[.git]), as `gh --repo` takes it; nullopt for any other
// URL (a path, a URL with more or fewer path parts).
std::optional<std::string> GitHubRepository(std::string_view url);

class GitActions {
 public:
  explicit GitActions(const Worktrees& worktrees, GitActionOptions options = {});

  // Stages every change of the worktree (`git add -A`: new, changed and deleted files; ignored
  // files stay out) and commits it on the worktree's branch with `message`. kInvalidArgument for
  // a message that is empty, over kMaxCommitMessageBytes or not UTF-8 text; kConflict "nothing
  // to commit" when the worktree has no change, and when it is not on its own branch.
  Result<GitActionResult> Commit(const Workspace& workspace, const std::string& message) const;

  // Merges the worktree's branch into `into` (a branch name; absent: the base the worktree was
  // made from when that is a branch, else the branch the repository's HEAD is on): a
  // fast-forward when the branch contains the base (unless `no_ff`), else a merge commit. The
  // outcome "conflict" (with the conflicting files) leaves everything as it was; "up-to-date"
  // when the base already contains the branch. kInvalidArgument for a target that is not a
  // branch; kConflict when the target moved during the merge, or git refused to update the
  // worktree it is checked out in (git's message).
  Result<GitActionResult> Merge(const Workspace& workspace, const std::optional<std::string>& into,
                                bool no_ff) const;

  // Pushes the worktree's branch to the branch of the same name at `remote` (a remote the
  // repository configures; default "origin"), never forced. Only file paths, https:// and ssh
  // URLs are used. The outcome "refused" carries git's message (a non-fast-forward, a hook of the
  // remote); kInvalidArgument for a remote that is not configured or a URL of another kind;
  // kUnavailable when it did not finish within the push timeout.
  Result<GitActionResult> Push(const Workspace& workspace, const std::string& remote) const;

  // Opens a pull request of the worktree's branch on GitHub with the `gh` CLI: pushes the branch
  // to `remote` as Push does, then runs `gh pr create --repo HOST/OWNER/REPO --head BRANCH --base
  // BASE --title TITLE --body BODY` outside the worktree (gh never reads the agent's git
  // configuration; its own login, GH_TOKEN or ~/.config/gh, is used), never prompting. `base`:
  // as Merge's `into`. The outcome "opened" carries the pull request's URL; "refused" the push's
  // refusal, "failed" gh's message (not logged in, a pull request of the branch exists).
  // kInvalidArgument for a title that is empty, over kMaxPullRequestTitleBytes or not one line of
  // UTF-8 text, a body over kMaxPullRequestBodyBytes, a remote whose URL is not GitHub's;
  // kUnavailable when gh is not installed or did not finish within its time limit.
  Result<GitActionResult> PullRequest(const Workspace& workspace, const std::string& remote,
                                      const std::optional<std::string>& base,
                                      const std::string& title, const std::string& body) const;

  // Drops the worktree's uncommitted changes: tracked files back to its branch's last commit
  // (`git reset --hard`), untracked files that are not ignored removed (`git clean -fd`). The
  // files it touched are listed (at most kMaxConflictFilesListed). kConflict "nothing to
  // discard" when there is no change.
  Result<GitActionResult> Discard(const Workspace& workspace) const;

 private:
  Result<GitIdentity> IdentityAt(const GitPlace& place) const;
  // Moves branch `target` from `old` to `next` (a merge's result): in the worktree it is checked
  // out in by git's fast-forward there, else by a compare-and-swap of the ref; kConflict, with
  // nothing moved, when it moved meanwhile or git refused.
  Status MoveBranch(const Workspace& workspace, const GitPlace& repository,
                    const std::string& target, const std::string& old,
                    const std::string& next) const;
  // The branch `into` names (refs/heads/NAME), or the default target of `workspace`.
  Result<std::string> MergeTarget(const Workspace& workspace, const GitPlace& repository,
                                  const std::optional<std::string>& into) const;
  // The URL of `remote` a push (pushurl, else url) or a fetch (url) uses; "" when it has none.
  Result<std::string> RemoteUrl(const GitPlace& place, const std::string& remote,
                                bool for_push) const;

  const Worktrees& worktrees_;
  GitActionOptions options_;
};

}  // namespace agentstream::workspace
