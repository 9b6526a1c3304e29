// Internal to src/process/: how an agent's process is started so that it never outlives the
// daemon. The daemon forks a small supervisor, which starts a session of its own (a new process
// group), asks the kernel to signal it when the daemon's thread that started it dies
// (PR_SET_PDEATHSIG), and starts the agent in its group with the given pipes as its stdio. Then:
//   - the supervisor is a child subreaper: whatever the agent's descendants leave behind when
//     they die is reparented to it, tools that started sessions of their own included;
//   - when the agent exits, the supervisor kills everything the agent left (its background
//     tasks) and exits with the agent's status (re-raising its signal), so the daemon sees the
//     agent's exit; the daemon then kills what is left in the agent's group;
//   - when the daemon dies first (kill -9 included), the supervisor kills the agent and every
//     process it started, wherever it went, then itself.
// Between fork and exec only async-signal-safe system calls run, as POSIX requires of a child of
// a multithreaded process; the supervisor closes every descriptor but its own, so it holds none
// of the daemon's sockets, locks or other agents' pipes.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace agentstream::process {

struct SupervisedSpawn {
  const char* program = nullptr;  // a path (PATH lookup is the caller's)
  char* const* argv = nullptr;    // null-terminated
  char* const* envp = nullptr;    // null-terminated
  const char* cwd = nullptr;      // null: the daemon's
  int stdin_fd = -1;              // the agent's stdio (the supervisor keeps no copy)
  int stdout_fd = -1;
  int stderr_fd = -1;
};

struct SupervisedProcess {
  pid_t supervisor = -1;  // the daemon's child, whose exit mirrors the agent's
  pid_t agent = -1;       // the agent's own process, and the id of its group
};

// Starts the supervisor and the agent. Waits until the agent's program was executed:
// kUnavailable naming `what` with the reason when it could not be (not found, not executable, a
// bad cwd), after reaping the supervisor.
Result<SupervisedProcess> StartSupervised(const SupervisedSpawn& spawn, const std::string& what);

}  // namespace agentstream::process
