// What an agent's snapshot shows is durable first: a permission request the runtime already has
// is not listed (so no client answers it) until the log holds its permission.requested event.
#include <gtest/gtest.h>

#include "runtime/agent_manager.h"
#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using testing::AgentManagerTest;

TEST_F(AgentManagerTest, APermissionIsListedOnlyOnceItIsInTheLog) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  log_->hold_permission_requests = true;
  ASSERT_TRUE(Send(agent.id, "c1", "ask permission first").ok());
  // The runtime asked, and its permission.requested append is held back.
  ASSERT_TRUE(loop_.RunUntil([&] { return log_->held() > 0; }, std::chrono::seconds(10)));
  loop_.RunFor(std::chrono::milliseconds(50));
  Result<api::AgentSnapshot> s = Get(agent.id);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->permissions.empty()) << "a permission the log does not hold yet was listed";
  EXPECT_EQ(s->status, turn::SessionStatus::kRunning);

  log_->ReleaseHeld();
  ASSERT_TRUE(loop_.RunUntil(
      [&] {
        Result<api::AgentSnapshot> now = Get(agent.id);
        return now.ok() && !now->permissions.empty();
      },
      std::chrono::seconds(10)));
  s = Get(agent.id);
  EXPECT_EQ(s->status, turn::SessionStatus::kPermission);
  ASSERT_EQ(s->permissions.size(), 1u);
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) {
                manager_->ReplyPermission(
                    agent.id, {s->permissions[0].request_id, PermissionDecision::kAllow, {}, {}},
                    d);
              }).ok());
  EXPECT_TRUE(WaitIdle(agent.id));
}

}  // namespace
}  // namespace agentstream::runtime
