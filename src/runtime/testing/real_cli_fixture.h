// An agent manager over a memory log whose providers are the real agent CLIs of tests/peers
// (claude, codex, opencode serve, gemini over ACP), configured offline against the scripted model
// server (tests/model_server; docs/providers.md). For a TestWithParam<P> whose P has `name` (for
// messages), `provider` (an api::AgentConfig provider) and `setup` (its acp_testing::Agent): a CLI
// that is not installed skips the test loudly.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "providers/acp/acp_test_env.h"
#include "providers/claude/claude_test_env.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/session_records.h"
#include "runtime/testing/loop_wait.h"
#include "store/memory_log.h"

namespace agentstream::runtime::testing {

// One real CLI of the fixture.
struct RealCli {
  std::string name;      // for test names and messages
  std::string provider;  // the api::AgentConfig provider
  providers::acp::testing::Agent setup;
};
inline void PrintTo(const RealCli& cli, std::ostream* os) { *os << cli.name; }

template <class P = RealCli>
class RealCliFixture : public ::testing::TestWithParam<P> {
 protected:
  void SetUp() override {
    namespace acp_testing = providers::acp::testing;
    namespace claude_testing = providers::claude::testing;
    const P& cli = this->GetParam();
    const bool installed = cli.provider == "claude"
                               ? ::access(claude_testing::ClaudeProgram().c_str(), X_OK) == 0
                               : acp_testing::AgentInstalled(cli.setup);
    if (!installed) GTEST_SKIP() << cli.name << " is not installed (tools/setup.sh)";
    char tmpl[] = "/tmp/agentstream-real-cli-XXXXXX";
    root_ = ::mkdtemp(tmpl);
    server_ = std::make_unique<claude_testing::ModelServer>(loop_);
    setup_ = acp_testing::PrepareAgent(cli.setup, server_->port(), root_);
    ProviderFactoryOptions options;
    options.claude_program = claude_testing::ClaudeProgram();
    options.claude_env = setup_.env;
    options.codex_program = acp_testing::AgentProgram(acp_testing::Agent::kCodex);
    options.codex_env = setup_.env;
    options.opencode_program = acp_testing::AgentProgram(acp_testing::Agent::kOpencodeServe);
    options.opencode_env = setup_.env;
    options.acp_programs["gemini"] = acp_testing::AgentProgram(acp_testing::Agent::kGemini);
    options.acp_env = setup_.env;
    Configure(options);
    factory_ = std::make_unique<DefaultProviderFactory>(options);
    manager_ = std::make_unique<AgentManager>(log_, *factory_, loop_);
  }
  void TearDown() override {
    if (manager_) {
      bool done = false;
      manager_->Shutdown([&] { done = true; });
      EXPECT_TRUE(loop_.RunUntil([&] { return done; }, std::chrono::seconds(60)));
      manager_.reset();
    }
    server_.reset();
    std::error_code ec;
    if (!root_.empty()) std::filesystem::remove_all(root_, ec);
  }

  // A test's own settings of the providers, made after the fixture's (setup_ and root_ are set).
  virtual void Configure(ProviderFactoryOptions& options) { (void)options; }

  // Runs the loop until the call answers, up to two minutes (a real CLI's turn).
  template <class T>
  Result<T> Wait(const std::function<void(const Callback<T>&)>& start) {
    return RunForResult<T>(loop_, start, std::chrono::minutes(2));
  }
  Result<api::AgentSnapshot> Get(const SessionId& id) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Get(id, d); });
  }
  // Whether the agent stopped running (no open turn, not asking) within two minutes.
  bool WaitNotRunning(const SessionId& id) {
    const auto deadline = process::Clock::now() + std::chrono::minutes(2);
    while (process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Get(id);
      if (s.ok() && s->status != turn::SessionStatus::kRunning &&
          s->status != turn::SessionStatus::kPermission && !s->active_turn)
        return true;
      loop_.RunFor(std::chrono::milliseconds(20));
    }
    return false;
  }
  // The events of the session's current epoch (none when it cannot be read).
  std::vector<Event> Events(const SessionId& id) {
    Result<SessionInfo> info = log_.GetSession(id);
    if (!info.ok()) return {};
    Result<std::vector<Event>> events = ReadEpoch(log_, id, info->epoch);
    return events.ok() ? *events : std::vector<Event>{};
  }

  std::string root_;
  process::EventLoop loop_;
  MemoryEventLog log_;
  std::unique_ptr<providers::claude::testing::ModelServer> server_;
  providers::acp::testing::AgentSetup setup_;
  std::unique_ptr<DefaultProviderFactory> factory_;
  std::unique_ptr<AgentManager> manager_;
};

}  // namespace agentstream::runtime::testing
