// Git: the `git` program run as a child process (process/run_command.h) with a time limit and a
// bound on its output, for the workspaces of agents (worktree.h, diff.h).
//
// An agent can write anything inside its worktree, so the daemon treats what git would find
// there as hostile (docs/workspaces.md, "What git is allowed to do"):
// - Every command runs at a GitPlace: GIT_DIR and GIT_WORK_TREE are the paths the daemon located
//   and checked (git_place.h); git never discovers a repository from a directory.
// - Configuration that runs programs is switched off on the command line: core.fsmonitor=false,
//   core.hooksPath=/dev/null, core.pager=cat, protocol.allow=never, no credential helper, no
//   automatic gc, and every filter driver the repository defines emptied; diffs add
//   --no-ext-diff and --no-textconv (diff.h). The system and global configuration are not read
//   (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL=/dev/null, GIT_ATTR_NOSYSTEM), and no GIT_* variable
//   of the daemon's environment reaches git.
// - GIT_OPTIONAL_LOCKS=0 (read-only commands such as `git status` and `git diff` never rewrite
//   the index), GIT_TERMINAL_PROMPT=0 (never waits for a password) and LC_ALL=C (messages in
//   English, as the errors quote them).
//
// Threading: a Git is immutable after construction; Run may be called from any thread, and
// blocks the calling thread until git exits (at most `timeout`). Never call it on an event
// loop's thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "process/event_loop.h"

namespace agentstream::workspace {

struct GitOptions {
  std::string program = "git";     // a path, or a name looked up in the daemon's PATH
  process::Millis timeout{10000};  // each git command; it is killed after this
  std::size_t max_output_bytes = std::size_t{8} << 20;  // stdout kept from one command
};

struct GitOutput {
  int exit_code = -1;
  std::string out;         // stdout, at most max_output_bytes (whole lines)
  bool truncated = false;  // stdout went past the bound
  std::string err;         // the tail of stderr
};

// Where one git command runs (made by git_place.h, never from a client's or an agent's word).
struct GitPlace {
  std::string git_dir;     // GIT_DIR: a repository's git directory, or a worktree's entry in it
  std::string work_tree;   // GIT_WORK_TREE, and the command's current directory
  std::string common_dir;  // the repository's common git directory (where worktrees/ lives)
  // The filter drivers the repository's configuration names (filter.NAME.*), emptied for every
  // command run here.
  std::vector<std::string> filters;
};

class Git {
 public:
  explicit Git(GitOptions options = {});

  // Runs `git ARGS` at `place`, with the configuration neutralised as the file comment says and
  // at most `max_output_bytes` of stdout kept (0: the options' bound). A non-zero exit is not an
  // error here: the caller reads exit_code. Errors: kInvalidArgument when git cannot be started
  // ("git is not installed or not in the daemon's PATH") or the arguments are too long for one
  // command; kUnavailable when it did not finish within the timeout or was killed.
  Result<GitOutput> Run(const GitPlace& place, const std::vector<std::string>& args,
                        std::size_t max_output_bytes = 0) const;

  // Run, and `failure` (with git's own message) unless git exited 0. Returns stdout with its
  // trailing newline removed.
  Result<std::string> Check(const GitPlace& place, const std::vector<std::string>& args,
                            ErrorCode failure) const;

  const GitOptions& options() const { return options_; }

 private:
  GitOptions options_;
  std::vector<std::string> env_;  // the daemon's environment without GIT_*, with git's settings
};

// The entries of git's NUL-separated output (`-z`, `--null`) as Run returns it (with the newline
// it ends unterminated output with), without empty ones.
std::vector<std::string> SplitNul(std::string_view out);

// The first line of git's stderr without "fatal: " / "error: ", for messages; "exit code N"
// when git printed nothing.
std::string GitMessage(const GitOutput& output);

}  // namespace agentstream::workspace
