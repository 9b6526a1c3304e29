// The values of agents' worktrees and their diffs (docs/workspaces.md): what a worktree is, what a
// client asks for, whether it is still there, and a diff with its limits. No git and no process
// here (worktree.h and diff.h do the work), so the API's JSON codecs can include it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"

namespace agentstream::workspace {

// What a worktree is: the payload of workspace.created.
using Workspace = WorkspaceCreated;

// POST /v1/agents {worktree: {branch?, base?}}.
struct WorktreeRequest {
  std::optional<std::string> branch;  // absent: "agentstream/AGENT_ID"
  std::optional<std::string> base;    // a ref as refs.h's ExactRef reads it; absent: HEAD
};

// Whether a recorded worktree is still there: present; removed on request (the session records
// its workspace.removed); missing otherwise (deleted by hand). StateOf tells only present from
// not; the session's log tells removed from missing.
enum class WorktreeState { kPresent, kRemoved, kMissing };
// "present", "removed", "missing".
inline std::string_view WorktreeStateName(WorktreeState state) {
  switch (state) {
    case WorktreeState::kPresent:
      return "present";
    case WorktreeState::kRemoved:
      return "removed";
    case WorktreeState::kMissing:
      break;
  }
  return "missing";
}

struct DiffLimits {
  std::size_t max_bytes = std::size_t{1} << 20;  // diff text kept; the rest is cut (truncated)
  std::size_t max_untracked_files = 1000;        // untracked files shown; more: truncated
  std::size_t max_untracked_file_bytes = std::size_t{64} << 20;  // larger ones are skipped
};

// An untracked path the diff does not show, and why: "fifo", "socket", "device", "too large"
// or "unreadable".
struct SkippedFile {
  std::string path;
  std::string reason;
};

struct WorktreeDiff {
  std::string against;         // the ref compared with (the base when none was asked)
  std::string against_commit;  // what it resolved to
  std::string text;            // the unified diff, at most max_bytes, whole lines
  bool truncated = false;      // the diff was longer than max_bytes, or had more untracked files
  std::vector<SkippedFile> skipped;  // untracked paths not shown, in git's order
};

}  // namespace agentstream::workspace
