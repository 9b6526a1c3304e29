#include "workspace/diff.h"

#include <vector>

namespace agentstream::workspace {

namespace {

// The options every diff runs with: the same text whatever the user's git configuration says
// about colors, external diff drivers and prefixes.
const std::vector<std::string> kDiffOptions{"--no-color", "--no-ext-diff", "--src-prefix=a/",
                                            "--dst-prefix=b/"};

Result<std::string> Resolve(const Git& git, const std::string& dir, const std::string& ref) {
  if (ref.empty() || ref.front() == '-')
    return Error(ErrorCode::kInvalidArgument, "against \"" + ref + "\" is not a valid ref");
  AS_ASSIGN_OR_RETURN(GitOutput out, git.Run(dir, {"rev-parse", "--verify", "--quiet",
                                                   "--end-of-options", ref + "^{commit}"}));
  if (out.exit_code != 0 || out.out.empty())
    return Error(ErrorCode::kInvalidArgument, "against \"" + ref + "\" is not a commit");
  return out.out.substr(0, out.out.find('\n'));
}

// Untracked, not ignored files, as git lists them (NUL-separated).
Result<std::vector<std::string>> Untracked(const Git& git, const std::string& dir) {
  AS_ASSIGN_OR_RETURN(GitOutput out,
                      git.Run(dir, {"ls-files", "--others", "--exclude-standard", "-z"}));
  if (out.exit_code != 0)
    return Error(ErrorCode::kInvalidArgument, "git ls-files failed: " + GitMessage(out));
  std::vector<std::string> files;
  std::size_t start = 0;
  while (start < out.out.size()) {
    std::size_t end = out.out.find('\0', start);
    if (end == std::string::npos) end = out.out.size();
    std::string name = out.out.substr(start, end - start);
    if (!name.empty() && name.back() == '\n' && end == out.out.size()) name.pop_back();
    // A directory (a nested repository) is not a file to show.
    if (!name.empty() && name.back() != '/') files.push_back(std::move(name));
    start = end + 1;
  }
  return files;
}

}  // namespace

Result<WorktreeDiff> DiffWorktree(const Worktrees& worktrees, const Workspace& workspace,
                                  const std::optional<std::string>& against,
                                  const DiffLimits& limits) {
  if (worktrees.StateOf(workspace) == WorktreeState::kMissing)
    return Error(ErrorCode::kNotFound, "the worktree " + workspace.path + " is missing");
  const Git& git = worktrees.git();
  WorktreeDiff diff;
  diff.against = against.value_or(workspace.base);
  if (against) {
    AS_ASSIGN_OR_RETURN(diff.against_commit, Resolve(git, workspace.path, *against));
  } else {
    diff.against_commit = workspace.base_commit;
  }
  std::vector<std::string> args{"diff"};
  args.insert(args.end(), kDiffOptions.begin(), kDiffOptions.end());
  args.insert(args.end(), {diff.against_commit, "--"});
  AS_ASSIGN_OR_RETURN(GitOutput tracked, git.Run(workspace.path, args, limits.max_bytes));
  if (tracked.exit_code != 0)
    return Error(ErrorCode::kInvalidArgument, "git diff failed: " + GitMessage(tracked));
  diff.text = std::move(tracked.out);
  diff.truncated = tracked.truncated;
  if (diff.truncated) return diff;
  AS_ASSIGN_OR_RETURN(std::vector<std::string> untracked, Untracked(git, workspace.path));
  std::size_t shown = 0;
  for (const std::string& file : untracked) {
    if (shown == limits.max_untracked_files || diff.text.size() >= limits.max_bytes) {
      diff.truncated = true;
      break;
    }
    std::vector<std::string> added{"diff"};
    added.insert(added.end(), kDiffOptions.begin(), kDiffOptions.end());
    added.insert(added.end(), {"--no-index", "--", "/dev/null", file});
    AS_ASSIGN_OR_RETURN(GitOutput out,
                        git.Run(workspace.path, added, limits.max_bytes - diff.text.size()));
    // --no-index exits 1 when the files differ, as they do.
    if (out.exit_code != 0 && out.exit_code != 1)
      return Error(ErrorCode::kInvalidArgument, "git diff " + file + " failed: " + GitMessage(out));
    diff.text += out.out;
    ++shown;
    if (out.truncated) {
      diff.truncated = true;
      break;
    }
  }
  return diff;
}

}  // namespace agentstream::workspace
