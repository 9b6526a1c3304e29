#include "providers/child_process_provider.h"

#include <unistd.h>

namespace agentstream::providers {

ChildProcessProvider::ChildProcessProvider(process::EventLoop& loop, ChildLifecycle lifecycle)
    : ProviderBase(loop, lifecycle.name, lifecycle.stall_timeout, lifecycle.interrupt_timeout),
      lifecycle_(std::move(lifecycle)) {}

ChildProcessProvider::~ChildProcessProvider() {
  Shutdown();
  child_.reset();  // kills the process group
}

void ChildProcessProvider::Start(Done done) {
  if (child_ || closing_) return Later(std::move(done), Error(ErrorCode::kConflict, "started"));
  Result<process::SpawnOptions> spawn = Command();
  if (!spawn.ok()) return Later(std::move(done), spawn.status());
  auto child = process::ChildProcess::Spawn(loop_, *spawn,
                                            {[this](const process::Frame& f) { OnFrame(f); },
                                             [this](const process::ExitInfo& e) { OnExit(e); }});
  if (!child.ok()) return Later(std::move(done), child.status());
  child_ = std::move(child).value();
  handshake_done_ = std::move(done);
  handshake_timer_ = loop_.timers().After(lifecycle_.handshake_timeout, [this] {
    if (!handshaking()) return;
    FinishHandshake(Error(ErrorCode::kUnavailable, lifecycle_.handshake_timeout_message));
    Terminate();
  });
  Handshake();
}

void ChildProcessProvider::FinishHandshake(Status status) {
  handshake_timer_.reset();
  if (handshake_done_) std::exchange(handshake_done_, nullptr)(std::move(status));
}

void ChildProcessProvider::Terminate() {
  if (child_) child_->Terminate(lifecycle_.kill_plan, nullptr);
}

int ChildProcessProvider::pid() const { return child_ && !exited_ ? child_->pid() : 0; }

std::vector<std::string> ChildProcessProvider::EnvOrDaemons(std::vector<std::string> env) {
  if (env.empty())
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  return env;
}

void ChildProcessProvider::OnStalled() {
  Publish(turn::ProviderError{"provider_stalled",
                              name_ + " produced no output for " +
                                  std::to_string(stall_timeout_.count()) +
                                  " ms during a turn; stopping it",
                              true});
  Terminate();
}

void ChildProcessProvider::OnInterruptTimeout() {
  if (interrupting()) Terminate();
}

void ChildProcessProvider::OnExit(const process::ExitInfo& exit) {
  exited_ = true;
  connected_ = false;
  StopWatchdog();
  handshake_timer_.reset();
  DropTurn();
  turn_running_ = false;
  // An interrupt that escalated to signals is complete: its teardown is reported first, so the
  // interrupted turn ends canceled rather than failed.
  ResolveInterruptWaiters();
  if (!closing_) Publish(turn::ProviderExited{name_ + " " + exit.Describe()});
  FailRequests(exit);
  close_delay_timer_.reset();
  close_timer_.reset();
  auto waiters = std::exchange(close_waiters_, {});
  for (Done& d : waiters) d(Status::Ok());
}

void ChildProcessProvider::Close(Done done) {
  CloseSubscribers();  // guarantee 5: no callback after Close
  if (!child_ || exited_) {
    closing_ = true;
    return Later(std::move(done), Status::Ok());
  }
  close_waiters_.push_back(std::move(done));
  if (closing_) return;
  closing_ = true;
  connected_ = false;
  OnClosing();
  if (const process::Millis delay = CloseDelay(); delay.count() > 0) {
    close_delay_timer_ = loop_.timers().After(delay, [this] { CloseStdin(); });
  } else {
    CloseStdin();
  }
}

void ChildProcessProvider::CloseStdin() {
  child_->CloseStdin();
  close_timer_ = loop_.timers().After(lifecycle_.close_grace, [this] { Terminate(); });
}

std::string ChildProcessProvider::StderrTail() const { return child_ ? child_->StderrTail() : ""; }

}  // namespace agentstream::providers
