// What each real agent CLI (tests/peers, pinned; offline against the scripted model server)
// reports of itself reaches the agent's snapshot and its log: modes, models, thinking options and
// slash commands (docs/protocol.md, "Agent capabilities"), recorded once and kept current.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/session_records.h"
#include "runtime/testing/real_cli_fixture.h"

namespace agentstream::runtime {
namespace {

namespace acp_testing = providers::acp::testing;

// A real CLI and what it must report: these modes (exactly, in order), at least these commands,
// and whether it lists thinking options (then the first one is set through the manager).
struct Reporting : testing::RealCli {
  std::vector<std::string> modes;
  std::vector<std::string> some_models;
  std::vector<std::string> some_commands;
  bool thinking = false;
};
void PrintTo(const Reporting& cli, std::ostream* os) { *os << cli.name; }

std::vector<std::string> Ids(const std::vector<Choice>& choices) {
  std::vector<std::string> out;
  for (const Choice& c : choices) out.push_back(c.id);
  return out;
}

class CapabilitiesCli : public testing::RealCliFixture<Reporting> {
 protected:
  // Sends `text` and waits for its turn to end.
  void Turn(const SessionId& id, const std::string& client_id, const std::string& text) {
    Result<api::SendReply> sent = Wait<api::SendReply>([&](const Callback<api::SendReply>& d) {
      manager_->Send(id, api::SendRequest{client_id, text, {}}, d);
    });
    ASSERT_TRUE(sent.ok() && sent->accepted) << sent.status().ToString();
    ASSERT_TRUE(WaitNotRunning(id)) << "the turn never ended";
    EXPECT_EQ(Get(id)->status, turn::SessionStatus::kIdle);
  }
};

TEST_P(CapabilitiesCli, TheCliDescribesItselfToEveryClient) {
  const Reporting& cli = GetParam();
  Result<api::AgentSnapshot> agent =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& d) {
        manager_->Create(api::AgentConfig{cli.provider, setup_.work, setup_.model, {}, {}}, d);
      });
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  const SessionId id = agent->id;
  Turn(id, "c1", "[say hello]");
  Turn(id, "c2", "[say again]");

  Result<api::AgentSnapshot> s = Get(id);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->capabilities.has_value()) << cli.name << " reported nothing";
  const CapabilitiesChanged& c = *s->capabilities;
  std::string listed;
  for (const CommandInfo& command : c.commands) listed += " /" + command.name;
  SCOPED_TRACE(cli.name + " modes " + ::testing::PrintToString(Ids(c.modes)) + " models " +
               ::testing::PrintToString(Ids(c.models)) + " thinking " +
               ::testing::PrintToString(Ids(c.thinking_options)) + " commands" + listed);
  EXPECT_EQ(Ids(c.modes), cli.modes);
  for (const std::string& id : cli.some_models) {
    EXPECT_TRUE(std::any_of(c.models.begin(), c.models.end(),
                            [&](const Choice& model) { return model.id == id; }))
        << "no model " << id;
  }
  for (const std::string& name : cli.some_commands) {
    EXPECT_TRUE(std::any_of(c.commands.begin(), c.commands.end(),
                            [&](const CommandInfo& command) { return command.name == name; }))
        << "no /" << name;
  }
  EXPECT_EQ(!c.thinking_options.empty(), cli.thinking);

  // The log holds what the snapshot shows, each list recorded once per change (not per turn).
  const std::vector<Event> events = Events(id);
  std::vector<const CapabilitiesChanged*> recorded;
  for (const Event& e : events)
    if (const auto* r = std::get_if<CapabilitiesChanged>(&e.payload)) recorded.push_back(r);
  ASSERT_FALSE(recorded.empty());
  EXPECT_LE(recorded.size(), 2u) << "recorded again although nothing changed";
  EXPECT_EQ(*recorded.back(), c);

  if (cli.thinking) {
    const std::string option = c.thinking_options.back().id;
    Result<bool> set = Wait<bool>([&](const Callback<bool>& d) {
      manager_->SetThinking(id, option, [d](const Status& st) {
        d(st.ok() ? Result<bool>(true) : Result<bool>(st));
      });
    });
    ASSERT_TRUE(set.ok()) << set.status().ToString();
    EXPECT_EQ(Get(id)->thinking, option);
    Turn(id, "c3", "[say thought]");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Clis, CapabilitiesCli,
    ::testing::Values(Reporting{{"claude", "claude", acp_testing::Agent::kClaude},
                                {"default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"},
                                {"sonnet", "haiku"},
                                {"compact", "init", "review"},
                                true},
                      Reporting{{"codex", "codex", acp_testing::Agent::kCodex},
                                {"untrusted", "on-request", "never"},
                                {},
                                {},
                                false},
                      Reporting{{"gemini", "acp:gemini", acp_testing::Agent::kGemini},
                                {"default", "autoEdit", "yolo", "plan"},
                                {"gemini-2.5-pro"},
                                {"init", "help", "memory"},
                                false}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace agentstream::runtime
