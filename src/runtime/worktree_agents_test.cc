// Two agents of one real CLI (tests/peers, pinned: claude and codex) against the scripted model
// server (tests/model_server) edit the same file of one repository, each in a git worktree of its
// own: each diff is git's, holds its own edit and not the other's, and the repository's checkout
// is untouched. Each edit writes AGENTSTREAM_AGENT_ID, which the daemon sets for the agent's CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "providers/acp/acp_test_env.h"
#include "providers/claude/claude_test_env.h"
#include "runtime/agent_manager.h"
#include "runtime/provider_factory.h"
#include "runtime/testing/real_cli_fixture.h"
#include "store/memory_log.h"
#include "testing/shell.h"
#include "workspace/diff.h"
#include "workspace/worktree.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
namespace acp_testing = providers::acp::testing;
using testing::RealCli;

class WorktreeAgents : public testing::RealCliFixture<> {
 protected:
  // Sends `prompt`, allows every permission the CLI asks for, and waits for the turn to end.
  void RunAllowing(const SessionId& id, const std::string& prompt) {
    Result<api::SendReply> sent = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
      manager_->Send(id, api::SendRequest{"c-" + prompt, prompt, {}, turn::WhileRunning::kQueue},
                     d);
    });
    ASSERT_TRUE(sent.ok() && sent->accepted) << sent.status().ToString();
    const auto deadline = process::Clock::now() + 120s;
    while (process::Clock::now() < deadline) {
      Result<api::AgentSnapshot> s = Wait<api::AgentSnapshot>(
          [&](const Callback<api::AgentSnapshot>& d) { manager_->Get(id, d); });
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      if (s->status == turn::SessionStatus::kIdle && !s->active_turn) return;
      for (const api::PendingPermissionInfo& p : s->permissions) {
        Result<bool> replied = Wait<bool>([&](const Callback<bool>& d) {
          manager_->ReplyPermission(
              id,
              turn::ReplyPermission{p.request_id, PermissionDecision::kAllow, std::nullopt,
                                    std::nullopt},
              [d](const Status& r) { d(r.ok() ? Result<bool>(true) : Result<bool>(r)); });
        });
        ASSERT_TRUE(replied.ok()) << replied.status().ToString();
      }
      loop_.RunFor(20ms);
    }
    FAIL() << "the turn of \"" << prompt << "\" never ended";
  }
};

TEST_P(WorktreeAgents, TwoAgentsEditTheSameFileInWorktreesOfTheirOwn) {
  const std::string repo = root_ + "/repo";
  ASSERT_EQ(test_support::RunShell("git init -q -b main " + repo + " && echo hello >" + repo +
                                   "/README.md && git -C " + repo + " add -A && git -C " + repo +
                                   " -c user.name=t -c user.email=t@t commit -q -m first")
                .status,
            0);
  workspace::Worktrees worktrees(workspace::Git(), root_ + "/worktrees");
  std::vector<workspace::Workspace> made;
  for (const std::string& name :
       {"ses_" + GetParam().name + "_a", "ses_" + GetParam().name + "_b"}) {
    Result<workspace::Workspace> ws = worktrees.Create(repo, {}, name);
    ASSERT_TRUE(ws.ok()) << ws.status().ToString();
    api::AgentConfig config{GetParam().provider, ws->path, setup_.model, {}, {name}};
    config.session_id = SessionId(name);
    config.workspace = *ws;
    Result<api::AgentSnapshot> agent = Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Create(config, d); });
    ASSERT_TRUE(agent.ok()) << agent.status().ToString();
    // Both edit README.md: each in its own worktree, writing the id the daemon gave its CLI.
    ASSERT_NO_FATAL_FAILURE(
        RunAllowing(agent->id, "[shell echo edited-by-$AGENTSTREAM_AGENT_ID >> README.md]"));
    made.push_back(*ws);
  }

  for (const workspace::Workspace& ws : made) {
    Result<workspace::WorktreeDiff> diff = workspace::DiffWorktree(worktrees, ws, {}, {});
    ASSERT_TRUE(diff.ok()) << diff.status().ToString();
    const std::string mine = "+edited-by-" + ws.path.substr(ws.path.rfind('/') + 1);
    EXPECT_NE(diff->text.find(mine), std::string::npos) << diff->text;
    EXPECT_EQ(diff->text.find("+edited-by-", diff->text.find(mine) + 1), std::string::npos)
        << "the other agent's edit leaked: " << diff->text;
    EXPECT_EQ(
        diff->text,
        test_support::RunShell("git -C " + ws.path + " diff --full-index " + ws.base_commit).out);
  }
  // The repository's own checkout is untouched.
  EXPECT_EQ(test_support::RunShell("cat " + repo + "/README.md").out, "hello\n");
}

INSTANTIATE_TEST_SUITE_P(Clis, WorktreeAgents,
                         ::testing::Values(RealCli{"claude", "claude", acp_testing::Agent::kClaude},
                                           RealCli{"codex", "codex", acp_testing::Agent::kCodex}),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentstream::runtime
