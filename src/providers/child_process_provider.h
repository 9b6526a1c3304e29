// ChildProcessProvider: a provider whose runtime is one child process it owns (the claude CLI, an
// ACP agent, codex app-server), on top of ProviderBase. It owns the process and its deterministic
// cleanup (guarantee 5 of provider.h):
//   - Start(): refuses a second start, spawns Command(), arms the handshake deadline and runs
//     Handshake(), which ends with FinishHandshake(). At the deadline Start() fails kUnavailable
//     and the process is terminated.
//   - Interrupt() (ProviderBase): SendCancel(), then signals (the kill plan) when the turn has not
//     ended in time.
//   - The stall watchdog: a fatal "provider_stalled" error, then signals.
//   - The process's exit: the turn is dropped (DropTurn()), interrupts complete, ProviderExited is
//     published unless closing, requests in flight fail (FailRequests()), Close() completes.
//   - Close(): subscribers go, stdin is closed (after CloseDelay()), signals after the close grace;
//     `done` runs once the process is gone. The destructor kills the process group.
// A provider writes its argv, its handshake, its stdout handler and what it forgets on exit.
//
// Threading: as AgentProvider (one EventLoop thread).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "process/child_process.h"
#include "providers/provider_base.h"

namespace agentstream::providers {

namespace testing {
class ProviderTestPeer;  // providers/testing/provider_test_peer.h
}  // namespace testing

// How a child-process provider names its runtime and times its lifecycle (copied from each
// provider's options).
struct ChildLifecycle {
  std::string name;                       // "claude", "codex", the ACP agent's name
  std::string handshake_timeout_message;  // Start()'s error at the handshake deadline
  process::Millis handshake_timeout{60000};
  process::Millis stall_timeout{600000};
  process::Millis interrupt_timeout{5000};  // after the protocol's cancel, before signals
  process::Millis close_grace{3000};        // after stdin EOF, before signals
  process::KillPlan kill_plan;              // SIGINT -> SIGTERM -> SIGKILL delays

  // From a provider's options, which carry the five timing fields under these names.
  template <typename Options>
  static ChildLifecycle Of(std::string name, std::string handshake_timeout_message,
                           const Options& o) {
    return ChildLifecycle{std::move(name),     std::move(handshake_timeout_message),
                          o.handshake_timeout, o.stall_timeout,
                          o.interrupt_timeout, o.close_grace,
                          o.kill_plan};
  }
};

class ChildProcessProvider : public ProviderBase {
 public:
  // OK once Handshake() finished well; kConflict when started or closed before; the spawn's error;
  // kUnavailable when the handshake fails or passes its deadline.
  void Start(Done done) final;
  // Stops the process: stdin EOF, then signals after the close grace. Idempotent; `done` runs
  // once the process is gone (at once when it never ran or already exited).
  void Close(Done done) final;

 protected:
  ChildProcessProvider(process::EventLoop& loop, ChildLifecycle lifecycle);
  ~ChildProcessProvider() override;

  // Hooks.
  // The process to start (argv, env, cwd, line limit); an error fails Start() with it.
  virtual Result<process::SpawnOptions> Command() = 0;
  // After the spawn: the protocol's handshake, ended by FinishHandshake().
  virtual void Handshake() = 0;
  // Each stdout line (or oversize frame).
  virtual void OnFrame(const process::Frame& frame) = 0;
  // The process is gone: forget the turn's state (open messages, permissions). turn_running_ is
  // cleared after it; runs before interrupt waiters complete and ProviderExited is published.
  virtual void DropTurn() = 0;
  // After ProviderExited: fail every request still waiting on an answer.
  virtual void FailRequests(const process::ExitInfo& exit) = 0;
  // Close() is stopping the process (before stdin closes).
  virtual void OnClosing() {}
  // How long Close() waits before it closes stdin (the runtime may still be writing its own
  // state); the close grace runs after that.
  virtual process::Millis CloseDelay() const { return process::Millis{0}; }

  // While Start()'s `done` waits for the handshake.
  bool handshaking() const { return static_cast<bool>(handshake_done_); }
  // Ends the handshake: clears its deadline and runs Start()'s `done` with `status` (once; later
  // calls do nothing). Call it from a callback, never inside Handshake() itself.
  void FinishHandshake(Status status);
  // Escalates signals per the kill plan until the process exits.
  void Terminate();
  // The process group's id while it runs, else 0.
  int pid() const;
  // `env` when set, else the daemon's whole environment.
  static std::vector<std::string> EnvOrDaemons(std::vector<std::string> env);

  void OnStalled() override;
  void OnInterruptTimeout() override;

  const ChildLifecycle lifecycle_;
  std::unique_ptr<process::ChildProcess> child_;  // set by Start(), kept until destruction

 private:
  friend class testing::ProviderTestPeer;

  void OnExit(const process::ExitInfo& exit);
  // Closes stdin and arms the close grace's signals.
  void CloseStdin();
  // The process's stderr tail, for a failing test's message ("" before Start()).
  std::string StderrTail() const;

  Done handshake_done_;
  std::vector<Done> close_waiters_;
  std::unique_ptr<process::TimerHandle> handshake_timer_, close_delay_timer_, close_timer_;
};

}  // namespace agentstream::providers
