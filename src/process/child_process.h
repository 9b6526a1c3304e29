// ChildProcess: the only code in agentstream that creates processes. It starts a program with an
// exact argv, environment and working directory in a new session (its own process group) under a
// supervisor that kills the whole group when the daemon dies, kill -9 included (supervisor.h), so
// no agent process outlives the daemon; reads stdout through the event loop as newline-framed
// lines with a maximum size, keeps the tail of stderr in a bounded ring, detects exit (pidfd: the
// supervisor exits as the agent did), writes stdin lines asynchronously, and cleans up the whole
// process group.
//
// Threading: create, use and destroy on the EventLoop's thread; handlers run on that thread.
// Lifetime: destroying a ChildProcess kills its process group (SIGKILL), reaps the child and
// guarantees no handler runs afterwards.
// Logs (log/log.h): process.started, process.signaled and process.exited (with the stderr tail),
// each with the program and the fields of the log::Scope open when Spawn was called (the agent
// whose provider started it); the handlers run inside that scope too.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "process/event_loop.h"
#include "process/line_framer.h"

namespace agentstream::process {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program: a path, or a name looked up in PATH
                                  // of `env` (or of the daemon when env is empty)
  std::vector<std::string> env;   // "KEY=value" entries: the child's whole environment
  std::string cwd;                // working directory; empty: the daemon's
  std::size_t max_line_bytes = std::size_t{8} << 20;  // longer stdout lines become kOversize
  std::size_t stderr_ring_bytes = std::size_t{16} << 10;
};

struct ExitInfo {
  int exit_code = -1;  // when it exited normally, else -1
  int signal = 0;      // the signal that killed it, else 0
  std::string stderr_tail;
  std::string Describe() const;  // "exit code 1" / "killed by signal 9", plus the stderr tail
};

// "SIGKILL" for 9; "signal N" for a number without a name.
std::string SignalName(int signal);

// Makes a write to a pipe or socket whose reader has gone fail with EPIPE, an error value its
// caller handles, instead of raising SIGPIPE, whose default ends the whole process. Process-wide
// and idempotent. Every Spawn calls it before its child starts, and the daemon and the stdio
// servers at their start; a child gets the default disposition back before its program runs.
void IgnoreBrokenPipes();

// Where a spawn finds `program`: a name with a slash as it is, any other on the PATH of `env`
// ("KEY=value" entries; the daemon's own PATH when they have none), as a shell would. nullopt
// when no executable file is there.
std::optional<std::string> FindProgram(const std::string& program,
                                       const std::vector<std::string>& env);

struct ProcessHandlers {
  std::function<void(Frame)> on_stdout;   // each complete stdout line (or oversize frame)
  std::function<void(ExitInfo)> on_exit;  // once, after the last stdout frame
};

// Escalation delays of Terminate(): SIGINT, then SIGTERM after `interrupt_grace`, then SIGKILL
// after `term_grace`.
struct KillPlan {
  Millis interrupt_grace{2000};
  Millis term_grace{2000};
};

class ChildProcess {
 public:
  // Starts the process. kInvalidArgument for an empty argv; kUnavailable when the program
  // cannot be started (not found, not executable, bad cwd): no handler runs then.
  static Result<std::unique_ptr<ChildProcess>> Spawn(EventLoop& loop, const SpawnOptions& options,
                                                     ProcessHandlers handlers);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const;      // the supervisor's: the process group's id
  bool exited() const;  // on_exit has run (or is about to, in this handler turn)

  // Queues `line` + '\n' for stdin; writes happen in order. kUnavailable once stdin is closed
  // or the process exited.
  Status WriteLine(std::string line);
  // Closes stdin after the queued writes (the agent sees EOF).
  void CloseStdin();
  // Sends `sig` to the whole process group. No-op after exit.
  void SignalGroup(int sig);
  // Escalates SIGINT -> SIGTERM -> SIGKILL per `plan` until the process exits; `done` runs once
  // after on_exit. Runs `done` at once if it already exited.
  void Terminate(KillPlan plan, std::function<void()> done);
  // The retained tail of stderr.
  std::string StderrTail() const;

  struct Impl;

 private:
  explicit ChildProcess(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace agentstream::process
