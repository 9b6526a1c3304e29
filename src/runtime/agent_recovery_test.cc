// Recovery over a real SQLite log (testing/agent_manager_fixture.h): turns a daemon's restart or a
// refused append left open are closed, and the session goes on (docs/architecture.md).
#include "runtime/agent_manager.h"

#include <gtest/gtest.h>

#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
using testing::AgentManagerTest;
using testing::Of;
using turn::SessionStatus;
using turn::SubmissionOutcome;

TEST_F(AgentManagerTest, RestartRecoveryFailsOpenTurnsAndTheSessionResumes) {
  StartManager(100ms);
  const api::AgentSnapshot agent = Create();
  Result<api::SendReply> sent = Send(agent.id, "c1", "long work");
  ASSERT_TRUE(sent.ok() && sent->accepted);
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kRunning);
  DieAndReopen();
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kRunning);

  StartManager(2ms);
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Recover(d); }).ok());
  std::vector<Event> events = Events(agent.id);
  const auto failed = Of<TurnFailed>(events);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->turn, sent->turn);
  EXPECT_EQ(std::get<TurnFailed>(failed[0]->payload).code, "daemon_restarted");
  EXPECT_NE(std::get<TurnFailed>(failed[0]->payload).message.find("restarted"), std::string::npos);
  const StatusRecord stored = Stored(agent.id);
  ASSERT_TRUE(stored.status.has_value());
  EXPECT_NE(*stored.status, SessionStatus::kRunning);
  Result<api::AgentSnapshot> snapshot = Get(agent.id);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_FALSE(snapshot->loaded);
  EXPECT_EQ(snapshot->status, *stored.status);

  // Resumable: a retry of c1 is recognised, a new prompt runs.
  Result<api::SendReply> retry = Send(agent.id, "c1", "long work");
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->outcome, SubmissionOutcome::kDuplicate);
  Result<api::SendReply> next = Send(agent.id, "c2", "go on");
  ASSERT_TRUE(next.ok() && next->accepted);
  ASSERT_TRUE(WaitIdle(agent.id));
  events = Events(agent.id);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 1u);
}

TEST_F(AgentManagerTest, ASessionLeftOpenIsClosedWhenItLoadsWithoutRecover) {
  StartManager(100ms);
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "long work").ok());
  DieAndReopen();
  StartManager(2ms);  // no Recover(): the next prompt loads the session
  Result<api::SendReply> next = Send(agent.id, "c2", "go on");
  ASSERT_TRUE(next.ok() && next->accepted) << next.status().ToString();
  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<TurnFailed>(events).size(), 1u);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 1u);
}

TEST_F(AgentManagerTest, RecoverDoesNotReadIdleSessions) {
  StartManager();
  std::vector<SessionId> ids;
  ids.reserve(20);
  for (int i = 0; i < 20; ++i) ids.push_back(Create().id);
  ASSERT_TRUE(Send(ids[0], "c1", "hello").ok());
  ASSERT_TRUE(WaitIdle(ids[0]));
  // A session another tool wrote, with no status snapshot: read once, then known.
  ASSERT_TRUE(sqlite_
                  ->CreateSession(SessionId("ses_raw"), SessionMeta{"scripted", "/w", "raw"},
                                  {MakeNewEvent(SessionCreated{"scripted", "/w", std::nullopt,
                                                               std::nullopt, std::nullopt})})
                  .ok());
  bool done = false;
  manager_->Shutdown([&] { done = true; });
  ASSERT_TRUE(loop_.RunUntil([&] { return done; }, 20s));
  subscription_.Reset();
  manager_.reset();

  StartManager();
  log_->reads = 0;
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Recover(d); }).ok());
  EXPECT_EQ(log_->reads.load(), 1);  // ses_raw only
  EXPECT_EQ(Stored(SessionId("ses_raw")).status, SessionStatus::kIdle);
  log_->reads = 0;
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Recover(d); }).ok());
  Result<std::vector<api::AgentSnapshot>> all = Wait<std::vector<api::AgentSnapshot>>(
      [&](const Callback<std::vector<api::AgentSnapshot>>& d) { manager_->List(true, d); });
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 21u);
  Result<api::AgentSnapshot> one = Get(ids[0]);
  ASSERT_TRUE(one.ok());
  EXPECT_GE(one->cursor.seq.value(), 6u);
  EXPECT_EQ(log_->reads.load(), 0);
}

TEST_F(AgentManagerTest, AFailedAppendIsReportedAndTheSessionRecovers) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  log_->fail_appends = true;
  Result<api::SendReply> lost = Send(agent.id, "c1", "hello");
  EXPECT_FALSE(lost.ok());
  ASSERT_TRUE(loop_.RunUntil([&] { return NoticesOf(AgentNotice::Kind::kError) > 0; }, 20s));
  log_->fail_appends = false;
  // The broken runtime is still stopping: this prompt waits for that, then reloads the session.
  Result<api::SendReply> next = Send(agent.id, "c2", "again");
  ASSERT_TRUE(next.ok() && next->accepted) << next.status().ToString();
  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<TurnStarted>(events).size(), 1u);  // c1 never reached the log
  EXPECT_EQ(Of<UserMessage>(events).size(), 1u);
}

// The deadlock of one commit, a full disk, a store restarting: the runtime whose append was
// refused stops, and no client may come back to the session. Its open turn must not stay open.
TEST_F(AgentManagerTest, ATurnARefusedAppendLeftOpenIsClosedWithoutAnotherCommand) {
  StartManager(100ms);  // chunks 100 ms apart: the turn is still open when appends fail
  const api::AgentSnapshot agent = Create();
  Result<api::SendReply> sent = Send(agent.id, "c1", "long work");
  ASSERT_TRUE(sent.ok() && sent->accepted);
  ASSERT_EQ(Stored(agent.id).status, SessionStatus::kRunning);
  log_->fail_appends = true;
  ASSERT_TRUE(loop_.RunUntil([&] { return NoticesOf(AgentNotice::Kind::kError) > 0; }, 20s));
  // While the store still refuses, the recovery's own append fails too: it tries again later.
  EXPECT_FALSE(loop_.RunUntil([] { return false; }, 700ms));
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kRunning);
  log_->fail_appends = false;
  ASSERT_TRUE(
      loop_.RunUntil([&] { return Stored(agent.id).status != SessionStatus::kRunning; }, 20s));
  const std::vector<Event> events = Events(agent.id);
  const auto failed = Of<TurnFailed>(events);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->turn, sent->turn);
  EXPECT_EQ(std::get<TurnFailed>(failed[0]->payload).code, "append_failed");
  EXPECT_NE(std::get<TurnFailed>(failed[0]->payload).message.find("injected append failure"),
            std::string::npos);
  Result<api::AgentSnapshot> snapshot = Get(agent.id);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_FALSE(snapshot->loaded);
  EXPECT_FALSE(snapshot->active_turn);
  CheckEverySession();
  // The session goes on.
  Result<api::SendReply> next = Send(agent.id, "c2", "again");
  ASSERT_TRUE(next.ok() && next->accepted) << next.status().ToString();
  ASSERT_TRUE(WaitIdle(agent.id));
}

// The same, when a prompt loads the session before the daemon's next try: its new runtime ends
// the open turn the same way.
TEST_F(AgentManagerTest, APromptThatLoadsASessionARefusedAppendLeftOpenEndsItsTurnTheSameWay) {
  StartManager(100ms);
  const api::AgentSnapshot agent = Create();
  Result<api::SendReply> sent = Send(agent.id, "c1", "long work");
  ASSERT_TRUE(sent.ok() && sent->accepted);
  Result<OwnerLease> runtime_lease = log_->GetOwnership(agent.id);
  ASSERT_TRUE(runtime_lease.ok());
  log_->fail_appends = true;
  // The runtime stops; the daemon's first try takes the next lease, fails to append and lets it
  // go. Its next try is 250 ms later.
  ASSERT_TRUE(loop_.RunUntil(
      [&] {
        Result<OwnerLease> lease = log_->GetOwnership(agent.id);
        return lease.ok() && lease->generation > runtime_lease->generation && lease->owner.empty();
      },
      20s));
  log_->fail_appends = false;
  Result<api::SendReply> next = Send(agent.id, "c2", "again");
  ASSERT_TRUE(next.ok() && next->accepted) << next.status().ToString();
  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  const auto failed = Of<TurnFailed>(events);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0]->turn, sent->turn);
  EXPECT_EQ(std::get<TurnFailed>(failed[0]->payload).code, "append_failed");
  CheckEverySession();
}

}  // namespace
}  // namespace agentstream::runtime
