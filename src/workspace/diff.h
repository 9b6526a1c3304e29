// The changes of an agent's worktree as a diff, never from tool calls: tracked files against a
// commit, computed by git (`git diff --full-index COMMIT`: staged and unstaged changes alike, so
// a commit the agent made is part of its diff against the base), then every untracked file that
// is not ignored, as an addition, in the text `git diff --no-index /dev/null FILE` prints.
//
// The untracked files are read by the daemon, not by git, and never through a symbolic link:
// each path is opened one component at a time without following links, a symbolic link is shown
// as a link (its target text, mode 120000, as git shows a tracked one), and FIFOs, sockets,
// devices and files over max_untracked_file_bytes are listed in `skipped`, never opened. Nothing
// outside the worktree is read, and nothing in the worktree or its index is changed (git runs
// with GIT_OPTIONAL_LOCKS=0, git.h).
//
// Blocking (it runs git and reads files); thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "workspace/worktree.h"

namespace agentstream::workspace {

// The worktree's changes against `against` (a commit-ish; absent: the workspace's base commit).
// kInvalidArgument for a ref that is not a commit (refs.h's ExactRef says which refs are looked
// up); kNotFound when the worktree is missing; kConflict when its `.git` no longer names its
// repository's entry (git_place.h); Git's errors.
Result<WorktreeDiff> DiffWorktree(const Worktrees& worktrees, const Workspace& workspace,
                                  const std::optional<std::string>& against,
                                  const DiffLimits& limits);

}  // namespace agentstream::workspace
