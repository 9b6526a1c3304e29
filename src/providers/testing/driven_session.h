// Test support: a provider driven through the turn engine on a real EventLoop, for the tests
// against real agent CLIs. It owns the provider, its LoggedRunner and a private root directory
// (root/home for the CLI's HOME, root/work for its working directory), removed at the end unless
// it was given. The CLI-specific sessions (claude's, the ACP family's) configure the provider.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/turn/command.h"
#include "process/event_loop.h"
#include "providers/provider.h"
#include "providers/testing/logged_runner.h"
#include "providers/testing/provider_test_peer.h"
#include "testing/temp_dir.h"

namespace agentstream::providers::testing {

class DrivenSession : public LoggedRunner {
 public:
  ~DrivenSession();

  // Starts the provider and waits for it (a fatal test failure after the start wait).
  void Start();
  // Submits a prompt (queued behind a running turn by default); the client message id is
  // generated.
  void Submit(const std::string& text,
              turn::WhileRunning while_running = turn::WhileRunning::kQueue);
  void Interrupt();
  // Runs the loop until `pred` holds; false after `timeout`.
  bool WaitFor(const std::function<bool()>& pred, process::Millis timeout);
  // Waits until the session is Settled().
  bool WaitIdle(process::Millis timeout);
  // Closes the provider (stdin EOF; the CLI flushes what it writes lazily and exits) and waits.
  void Close();

  // The provider process's stderr tail, for failure messages.
  std::string StderrTail() const { return stderr_tail_(); }
  const std::string& root() const { return root_; }
  std::string work() const { return root_ + "/work"; }

 protected:
  // `root` empty: a new directory <tmp>/agentstream-`prefix`-XXXXXX, removed with the session.
  DrivenSession(process::EventLoop& loop, const std::string& root, const std::string& prefix);

  // Takes the provider and opens the runner over it; Start() waits up to `start_wait`.
  template <class P>
  P& Attach(std::unique_ptr<P> provider, std::string provider_name, process::Millis start_wait) {
    P& typed = *provider;
    stderr_tail_ = [p = provider.get()] { return ProviderTestPeer::StderrTail(*p); };
    provider_ = std::move(provider);
    start_wait_ = start_wait;
    Open(*provider_, std::move(provider_name));
    return typed;
  }
  AgentProvider& agent_provider() { return *provider_; }
  process::EventLoop& loop() { return loop_; }

 private:
  process::EventLoop& loop_;
  std::optional<test_support::TempDir> owned_root_;
  std::string root_;
  std::unique_ptr<AgentProvider> provider_;
  std::function<std::string()> stderr_tail_;
  process::Millis start_wait_{60000};
  int next_client_id_ = 1;
};

}  // namespace agentstream::providers::testing
