// The settings of an agent through the agent manager over a real SQLite log
// (testing/agent_manager_fixture.h): mode and model, the thinking option, and the capabilities
// its runtime offers, recorded in the log and published in its snapshot.
#include <gtest/gtest.h>

#include "runtime/agent_manager.h"
#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using testing::AgentManagerTest;
using testing::Of;

TEST_F(AgentManagerTest, ModeAndModelChangesAreLogged) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) {
                manager_->SetMode(agent.id, "bypassPermissions", d);
              }).ok());
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) {
                manager_->SetModel(agent.id, "scripted-2", d);
              }).ok());
  const std::vector<Event> events = Events(agent.id);
  ASSERT_EQ(Of<ModeChanged>(events).size(), 1u);
  EXPECT_EQ(std::get<ModeChanged>(Of<ModeChanged>(events)[0]->payload).mode, "bypassPermissions");
  ASSERT_EQ(Of<ModelChanged>(events).size(), 1u);
  const Result<api::AgentSnapshot> s = Get(agent.id);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->mode, "bypassPermissions");
  EXPECT_EQ(s->model, "scripted-2");
}

TEST_F(AgentManagerTest, TheRuntimesCapabilitiesAndThinkingOptionAreRecordedAndPublished) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "hello").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  Result<api::AgentSnapshot> s = Get(agent.id);
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s->capabilities.has_value());
  EXPECT_EQ(s->capabilities->models,
            (std::vector<Choice>{{"scripted-1", "Scripted"}, {"scripted-2", "Scripted (fast)"}}));
  EXPECT_EQ(s->capabilities->thinking_options, (std::vector<Choice>{{"off", "Off"}, {"on", "On"}}));
  EXPECT_EQ(s->capabilities->commands.size(), 1u);
  EXPECT_EQ(s->thinking, "");
  // Recorded once, when the runtime was ready (before the prompt's turn), not per turn.
  std::vector<Event> events = Events(agent.id);
  ASSERT_EQ(Of<CapabilitiesChanged>(events).size(), 1u);
  EXPECT_FALSE(Of<CapabilitiesChanged>(events)[0]->turn.has_value());
  EXPECT_EQ(std::get<CapabilitiesChanged>(Of<CapabilitiesChanged>(events)[0]->payload),
            *s->capabilities);

  EXPECT_TRUE(
      WaitStatus([&](const StatusCallback& d) { manager_->SetThinking(agent.id, "on", d); }).ok());
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) {
                manager_->SetThinking(agent.id, "on", d);  // unchanged: nothing more recorded
              }).ok());
  const Status refused =
      WaitStatus([&](const StatusCallback& d) { manager_->SetThinking(agent.id, "loud", d); });
  EXPECT_EQ(refused.code(), ErrorCode::kInvalidArgument);
  events = Events(agent.id);
  ASSERT_EQ(Of<ThinkingOptionChanged>(events).size(), 1u);
  EXPECT_EQ(std::get<ThinkingOptionChanged>(Of<ThinkingOptionChanged>(events)[0]->payload).option,
            "on");
  EXPECT_EQ(Get(agent.id)->thinking, "on");

  // A restart reads both from the log: the same lists are not recorded again.
  DieAndReopen();
  StartManager();
  ASSERT_TRUE(Send(agent.id, "c2", "again").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  events = Events(agent.id);
  EXPECT_EQ(Of<CapabilitiesChanged>(events).size(), 1u);
  s = Get(agent.id);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->thinking, "on");
  EXPECT_TRUE(s->capabilities.has_value());
}

}  // namespace
}  // namespace agentstream::runtime
