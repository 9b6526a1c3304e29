// The changes of an agent's worktree as a diff, computed by git (never from tool calls): tracked
// files against a commit (`git diff COMMIT`: staged and unstaged changes alike, so a commit the
// agent made is part of its diff against the base), then every untracked file that is not
// ignored, as an addition (`git diff --no-index /dev/null FILE`). Nothing in the worktree or its
// index is changed (git runs with GIT_OPTIONAL_LOCKS=0, git.h).
//
// Blocking (it runs git); thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/status.h"
#include "workspace/worktree.h"

namespace agentstream::workspace {

struct DiffLimits {
  std::size_t max_bytes = std::size_t{1} << 20;  // diff text kept; the rest is cut (truncated)
  std::size_t max_untracked_files = 1000;        // untracked files shown; more: truncated
};

struct WorktreeDiff {
  std::string against;         // the ref compared with (the base when none was asked)
  std::string against_commit;  // what it resolved to
  std::string text;            // the unified diff, at most max_bytes, whole lines
  bool truncated = false;      // the diff was longer than max_bytes, or had more untracked files
};

// The worktree's changes against `against` (a commit-ish; absent: the workspace's base commit).
// kInvalidArgument for a ref that is not a commit; kNotFound when the worktree is missing;
// Git's errors.
Result<WorktreeDiff> DiffWorktree(const Worktrees& worktrees, const Workspace& workspace,
                                  const std::optional<std::string>& against,
                                  const DiffLimits& limits);

}  // namespace agentstream::workspace
