// A dead agent process never wedges a session: the agent manager drives each real CLI (tests/peers,
// pinned; offline against the scripted model server), and the CLI's process is killed with
// SIGKILL at a random moment of a turn, again and again. After every kill the turn ends once
// (provider_exited, or completed when it finished first), and the next prompt is accepted: it
// starts the CLI again, resuming the conversation from the stored persistence handle. 50 kills in
// all over claude, codex, gemini (ACP) and opencode serve.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/timeline/invariants.h"
#include "providers/acp/acp_test_env.h"
#include "providers/claude/claude_test_env.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/session_records.h"
#include "runtime/testing/real_cli_fixture.h"
#include "store/memory_log.h"

namespace agentstream::runtime {
namespace {

namespace acp_testing = providers::acp::testing;

// A real CLI, and how many times a test kills it.
struct Cli : testing::RealCli {
  int kills = 0;
};

// The pids of the processes whose parent is `parent`.
std::vector<int> ChildrenOf(int parent) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent && state != 'Z') out.push_back(std::stoi(name));
  }
  return out;
}

class ProviderFaults : public testing::RealCliFixture<Cli> {
 protected:
  // Kills the agent's CLI: the children of the supervisors this process started, but the model
  // server's.
  int KillCli() {
    int killed = 0;
    for (int supervisor : ChildrenOf(::getpid())) {
      for (int cli : ChildrenOf(supervisor)) {
        std::ifstream cmd("/proc/" + std::to_string(cli) + "/cmdline");
        std::string argv((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        if (argv.find("model_server") != std::string::npos) continue;
        if (::kill(cli, SIGKILL) == 0) ++killed;
      }
    }
    return killed;
  }
};

TEST_P(ProviderFaults, EveryPromptAfterAKilledCliIsAnswered) {
  const Cli& cli = GetParam();
  Result<api::AgentSnapshot> agent =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& d) {
        manager_->Create(api::AgentConfig{cli.provider, setup_.work, setup_.model, {}, {}}, d);
      });
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  const SessionId id = agent->id;
  std::mt19937 random(std::random_device{}());
  int kills = 0;
  for (int cycle = 0; cycle < cli.kills; ++cycle) {
    // A turn of 6 chunks 250 ms apart, killed somewhere in it (or just after it started).
    Result<api::SendReply> sent = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
      manager_->Send(id, api::SendRequest{"c" + std::to_string(cycle), "[slow 6]", {}}, d);
    });
    ASSERT_TRUE(sent.ok()) << "cycle " << cycle << ": " << sent.status().ToString();
    ASSERT_TRUE(sent->accepted) << "cycle " << cycle << ": " << sent->message;
    loop_.RunFor(process::Millis(std::uniform_int_distribution<int>(0, 1400)(random)));
    kills += KillCli() > 0;
    ASSERT_TRUE(WaitNotRunning(id)) << "cycle " << cycle << ": the turn never ended";
  }
  EXPECT_GE(kills, cli.kills - 2) << "the CLI was rarely found running";
  Result<api::SendReply> last = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
    manager_->Send(id, api::SendRequest{"last", "[say still here]", {}}, d);
  });
  ASSERT_TRUE(last.ok() && last->accepted) << last.status().ToString();
  ASSERT_TRUE(WaitNotRunning(id));
  const std::vector<Event> events = Events(id);
  std::size_t completed = 0, failed = 0;
  for (const Event& e : events) {
    completed += std::holds_alternative<TurnCompleted>(e.payload);
    failed += std::holds_alternative<TurnFailed>(e.payload);
  }
  EXPECT_EQ(completed + failed, static_cast<std::size_t>(cli.kills) + 1) << "one terminal a turn";
  EXPECT_GE(failed, static_cast<std::size_t>(kills) / 2) << "few kills ended a turn";
  const Event* last_terminal = nullptr;
  for (const Event& e : events)
    if (std::holds_alternative<TurnCompleted>(e.payload) ||
        std::holds_alternative<TurnFailed>(e.payload))
      last_terminal = &e;
  ASSERT_NE(last_terminal, nullptr);
  EXPECT_TRUE(std::holds_alternative<TurnCompleted>(last_terminal->payload))
      << "the last prompt's turn did not complete";
  timeline::CheckOptions check;
  for (const auto& v : timeline::CheckInvariants(events, check))
    ADD_FAILURE() << "invariant " << timeline::FormatViolation(v);
}

// Fewer kills of the CLIs that start slowly (gemini takes seconds to start, more under the
// sanitizers): each kill costs a start.
INSTANTIATE_TEST_SUITE_P(
    Clis, ProviderFaults,
    ::testing::Values(Cli{{"claude", "claude", acp_testing::Agent::kClaude}, 15},
                      Cli{{"codex", "codex", acp_testing::Agent::kCodex}, 15},
                      Cli{{"gemini", "acp:gemini", acp_testing::Agent::kGemini}, 6},
                      Cli{{"opencode", "opencode", acp_testing::Agent::kOpencodeServe}, 6}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentstream::runtime
