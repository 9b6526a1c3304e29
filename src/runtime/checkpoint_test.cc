// Loading a session reads its checkpoint plus the events after it, never its whole history: the
// events the log hands out for decoding are counted (CountingLog::events_read) and bounded.
#include <gtest/gtest.h>

#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
using testing::AgentManagerTest;
using turn::SubmissionOutcome;

// More than a checkpoint interval of events, appended from outside any runtime.
constexpr std::size_t kHistory = 3 * kCheckpointEvery;
// What a load may read beyond a checkpoint: a turn's events and a page's worth of slack.
constexpr std::size_t kLoadBound = 100;

class CheckpointTest : public AgentManagerTest {
 protected:
  // A session with one finished turn ("c1") and kHistory notices after it.
  api::AgentSnapshot LongSession() {
    const api::AgentSnapshot agent = Create();
    EXPECT_TRUE(Send(agent.id, "c1", "first").ok());
    EXPECT_TRUE(WaitIdle(agent.id));
    for (std::size_t done = 0; done < kHistory; done += 1000) {
      AppendRequest request;
      request.session = agent.id;
      for (int i = 0; i < 1000; ++i)
        request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n"}));
      EXPECT_TRUE(sqlite_->Append(std::move(request)).ok());
    }
    return agent;
  }
  std::optional<Checkpoint> Stored(const SessionId& id) {
    Result<std::optional<Checkpoint>> c = sqlite_->LoadCheckpoint(id);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? *c : std::nullopt;
  }
  Seq Tail(const SessionId& id) { return sqlite_->Tail(id)->seq; }
  // The reloaded session still knows its history: c1's retry is a duplicate of its first turn.
  void ExpectFirstPromptKnown(const SessionId& id) {
    Result<api::SendReply> again = Send(id, "c1", "first");
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_EQ(again->outcome, SubmissionOutcome::kDuplicate);
  }
};

TEST_F(CheckpointTest, ARunningRuntimeCheckpointsAndALoadAfterACrashReadsOnlyWhatFollows) {
  StartManager();
  const api::AgentSnapshot agent = LongSession();
  // The runtime's next append finds kHistory events since its checkpoint and folds them.
  ASSERT_TRUE(Send(agent.id, "c2", "second").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  std::optional<Checkpoint> stored = Stored(agent.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_GT(stored->seq.value(), kHistory);
  EXPECT_EQ(stored->epoch, Epoch(1));

  DieAndReopen();  // no clean stop: no checkpoint at the tail
  StartManager();
  log_->events_read = 0;
  Result<api::SendReply> third = Send(agent.id, "c3", "third");
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_EQ(third->outcome, SubmissionOutcome::kAccepted);
  EXPECT_LE(log_->events_read.load(), kLoadBound) << "of a history of " << Tail(agent.id).value();
  ASSERT_TRUE(WaitIdle(agent.id));
  ExpectFirstPromptKnown(agent.id);
}

TEST_F(CheckpointTest, ALoadThatReadsALongHistoryCheckpointsIt) {
  StartManager();
  const api::AgentSnapshot agent = LongSession();
  DieAndReopen();
  StartManager();
  log_->events_read = 0;
  ASSERT_TRUE(Send(agent.id, "c2", "second").ok());
  EXPECT_GE(log_->events_read.load(), kHistory);  // no checkpoint yet: the history is read once
  std::optional<Checkpoint> stored = Stored(agent.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_GT(stored->seq.value(), kHistory);
  ASSERT_TRUE(WaitIdle(agent.id));

  DieAndReopen();
  StartManager();
  log_->events_read = 0;
  ASSERT_TRUE(Send(agent.id, "c3", "third").ok());
  EXPECT_LE(log_->events_read.load(), kLoadBound);
  ASSERT_TRUE(WaitIdle(agent.id));
  ExpectFirstPromptKnown(agent.id);
}

TEST_F(CheckpointTest, ACleanStopLeavesACheckpointAtTheTail) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "first").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  bool done = false;
  manager_->Shutdown([&] { done = true; });
  ASSERT_TRUE(loop_.RunUntil([&] { return done; }, 20s));
  std::optional<Checkpoint> stored = Stored(agent.id);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->seq, Tail(agent.id));

  subscription_.Reset();
  manager_.reset();
  StartManager();
  log_->events_read = 0;
  ASSERT_TRUE(Send(agent.id, "c2", "second").ok());
  EXPECT_EQ(log_->events_read.load(), 0u);
  ASSERT_TRUE(WaitIdle(agent.id));
  ExpectFirstPromptKnown(agent.id);
}

TEST_F(CheckpointTest, AnUnreadableOrNewerCheckpointIsIgnoredAndTheHistoryRead) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "first").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  for (const char* body : {"{not json", R"({"v":2,"turns":{}})", R"({"v":1,"turns":{"open":7}})"}) {
    DieAndReopen();
    ASSERT_TRUE(sqlite_->SaveCheckpoint(agent.id, Checkpoint{Epoch(1), Tail(agent.id), body}).ok());
    StartManager();
    log_->events_read = 0;
    ExpectFirstPromptKnown(agent.id);
    EXPECT_GE(log_->events_read.load(), Tail(agent.id).value()) << body;
  }
}

TEST_F(CheckpointTest, ForksAndRewindsAreCheckpointedWhereTheyBegin) {
  StartManager();
  const api::AgentSnapshot agent = LongSession();
  ASSERT_TRUE(Send(agent.id, "c2", "second").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  const Seq tail = Tail(agent.id);

  log_->events_read = 0;
  Result<api::AgentSnapshot> child =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& done) {
        manager_->Fork(agent.id, Cursor{Epoch(1), tail}, done);
      });
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  std::optional<Checkpoint> forked = Stored(child->id);
  ASSERT_TRUE(forked.has_value());
  EXPECT_EQ(forked->seq, Tail(child->id));
  ASSERT_TRUE(Send(child->id, "c3", "in the fork").ok());
  EXPECT_LE(log_->events_read.load(), kLoadBound);  // the fork point and the load alike
  ASSERT_TRUE(WaitIdle(child->id));
  ExpectFirstPromptKnown(child->id);

  // A rewind to the middle of the notices: the parent's checkpoint is past it, so the prefix is
  // read once (in pages), and the new epoch is checkpointed where it begins.
  Result<api::AgentSnapshot> rewound =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& done) {
        manager_->Rewind(agent.id, Cursor{Epoch(1), Seq(kHistory / 2)}, done);
      });
  ASSERT_TRUE(rewound.ok()) << rewound.status().ToString();
  std::optional<Checkpoint> epoch2 = Stored(agent.id);
  ASSERT_TRUE(epoch2.has_value());
  EXPECT_EQ(epoch2->epoch, Epoch(2));
  EXPECT_EQ(epoch2->seq, Tail(agent.id));
  log_->events_read = 0;
  ASSERT_TRUE(Send(agent.id, "c4", "after the rewind").ok());
  EXPECT_LE(log_->events_read.load(), kLoadBound);
  ASSERT_TRUE(WaitIdle(agent.id));
  ExpectFirstPromptKnown(agent.id);
}

}  // namespace
}  // namespace agentstream::runtime
