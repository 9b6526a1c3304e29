// RunCommand: a program run to completion, for the command line (`agentstream service` runs
// systemctl with it) and for short helper programs of the daemon (git, workspace/git.h). A
// ChildProcess on an event loop of its own, driven on the caller's thread: it blocks that thread
// until the program exits or its time is up, so never call it on a shared event loop's thread.
#pragma once

#include <cstddef>
#include <limits>
#include <string>

#include "core/status.h"
#include "process/child_process.h"
#include "process/event_loop.h"

namespace agentstream::process {

struct CommandResult {
  ExitInfo exit;               // how it ended, with the tail of its stderr
  std::string out;             // its stdout, each line ending in '\n', at most the output bound
  bool out_truncated = false;  // stdout went past the bound: `out` holds its first lines only
};

// Runs `options.argv` with stdin closed and waits for it to exit. Keeps at most
// `max_out_bytes` of stdout (whole lines; the rest is read and dropped, and `out_truncated` is
// set); `options.max_line_bytes` still bounds one line. Errors: kNotFound when the program
// cannot be started (not found, not executable, a bad cwd); kUnavailable when it did not exit
// within `timeout` (its process group is killed then).
Result<CommandResult> RunCommand(
    const SpawnOptions& options, Millis timeout,
    std::size_t max_out_bytes = std::numeric_limits<std::size_t>::max());

}  // namespace agentstream::process
