// RunCommand: a program run to completion, for the command line (`agentstream service` runs
// systemctl with it). A ChildProcess on an event loop of its own, driven on the caller's thread.
#pragma once

#include <string>

#include "core/status.h"
#include "process/child_process.h"
#include "process/event_loop.h"

namespace agentstream::process {

struct CommandResult {
  ExitInfo exit;    // how it ended, with the tail of its stderr
  std::string out;  // its stdout, each line ending in '\n'
};

// Runs `options.argv` with stdin closed and waits for it to exit. kUnavailable when it cannot be
// started (not found, not executable) or did not exit within `timeout` (it is killed then).
Result<CommandResult> RunCommand(const SpawnOptions& options, Millis timeout);

}  // namespace agentstream::process
