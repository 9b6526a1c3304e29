// Worktrees: the git worktrees agents run in (docs/workspaces.md). Each agent that asks for one
// gets a worktree of the repository that contains its cwd, on a new branch, in a directory of
// its own under the daemon's data directory (`root`/AGENT_ID). What was made is described by a
// Workspace, the payload of the session's workspace.created event, so the log, not this class,
// remembers the worktrees.
//
// Every operation runs git (git.h) at a place located and checked from the file system
// (git_place.h), and blocks the calling thread; call from a worker thread. Thread-safe (the
// object is immutable). Errors are the caller's to show: kInvalidArgument for bad input (a cwd
// outside any repository, a branch name git refuses, a base that is not a commit, a path with
// "..", git missing), kAlreadyExists for a branch or directory that exists, kConflict for a
// removal that would discard uncommitted changes and for a worktree whose `.git` no longer names
// its repository's entry (nothing runs there), kUnavailable when git timed out, kIoError when
// the directory could not be made.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "workspace/git.h"
#include "workspace/git_place.h"
#include "workspace/workspace_types.h"

namespace agentstream::workspace {

class Worktrees {
 public:
  // `root` is the directory worktrees are made in (created when needed).
  Worktrees(Git git, std::string root);

  // Makes the worktree `root`/`name` of the repository containing `cwd` (an absolute path
  // without ".." components) on a new branch from the request's base. Nothing is left behind
  // on error: no directory, no branch, no worktree entry, no directory under refs/.
  Result<Workspace> Create(const std::string& cwd, const WorktreeRequest& request,
                           const std::string& name) const;
  // A fork's worktree: `root`/`name` on the new branch "agentstream/NAME" made from `parent`'s
  // branch as it is now (its latest commit; the parent's uncommitted changes are not carried).
  Result<Workspace> Branch(const Workspace& parent, const std::string& name) const;

  // Whether the worktree has uncommitted changes (staged, unstaged or untracked files); a short
  // list of them in `summary` when it does.
  Result<bool> HasChanges(const Workspace& workspace, std::string* summary) const;
  // Removes the worktree (its directory and git's record of it); its branch stays. kConflict
  // when it has uncommitted changes and not `force`, and (even with `force`) when its `.git` no
  // longer names its repository's entry. A worktree already deleted by hand is pruned and
  // reported OK.
  Status Remove(const Workspace& workspace, bool force) const;
  // Removes a worktree that was just made and its branch, after the agent could not be created.
  void Discard(const Workspace& workspace) const;

  WorktreeState StateOf(const Workspace& workspace) const;
  // Where git runs for `workspace`, checked (git_place.h's WorktreePlace).
  Result<GitPlace> PlaceOf(const Workspace& workspace) const;

  const std::string& root() const { return root_; }
  const Git& git() const { return git_; }

 private:
  Result<Workspace> Add(const GitPlace& repository, const std::string& top,
                        const std::string& branch, const std::string& base,
                        const std::string& name) const;

  Git git_;
  std::string root_;
};

// The commit `ref` names at `place`, looked up exactly (refs.h's ExactRef: HEAD, a full object
// id, a full ref, or a branch as refs/heads/NAME) and peeled to a commit: its full id.
// kInvalidArgument ("WHAT ... is not a commit") otherwise; `what` is "base" or "against".
Result<std::string> ResolveCommit(const Git& git, const GitPlace& place, std::string_view what,
                                  const std::string& ref);

}  // namespace agentstream::workspace
