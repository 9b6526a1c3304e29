// The agent manager over a real SQLite log (testing/agent_manager_fixture.h): sends, queues,
// interrupts, permissions, forks and rewinds, bounds. Recovery after a restart or a refused append
// is agent_recovery_test.cc.
#include "runtime/agent_manager.h"

#include <gtest/gtest.h>

#include "runtime/testing/agent_manager_fixture.h"

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;
using testing::AgentManagerTest;
using testing::CountingLog;
using testing::Of;
using turn::SessionStatus;
using turn::SubmissionOutcome;
using turn::WhileRunning;

TEST_F(AgentManagerTest, CreateAndSendAcceptsAfterTheTurnStartedAndLogsInOrder) {
  StartManager();
  const api::AgentSnapshot agent = Create(std::string("first"));
  EXPECT_TRUE(agent.id.str().rfind("ses_", 0) == 0);
  EXPECT_TRUE(agent.loaded);
  EXPECT_EQ(agent.title, "first");
  EXPECT_EQ(agent.model, "scripted-1");
  EXPECT_EQ(NoticesOf(AgentNotice::Kind::kCreated), 1u);

  // At the moment of the reply, the turn's start is durable at or before the reply's cursor.
  std::optional<bool> started_in_log;
  Result<api::SendReply> reply = Wait<api::SendReply>([&](const Callback<api::SendReply>& done) {
    manager_->Send(agent.id, api::SendRequest{"c1", "hello", {}, WhileRunning::kQueue},
                   [&, done](Result<api::SendReply> r) {
                     if (r.ok()) {
                       bool found = false;
                       for (const Event& e : Events(agent.id)) {
                         const auto* started = std::get_if<TurnStarted>(&e.payload);
                         found |= started && e.turn == r->turn && e.seq <= r->cursor.seq &&
                                  started->client_message_id == "c1";
                       }
                       started_in_log = found;
                     }
                     done(std::move(r));
                   });
  });
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->outcome, SubmissionOutcome::kAccepted);
  EXPECT_TRUE(reply->accepted);
  ASSERT_TRUE(reply->turn.has_value());
  EXPECT_EQ(reply->turn->str().rfind("turn_", 0), 0u);
  EXPECT_EQ(started_in_log, true);

  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  ASSERT_GE(events.size(), 6u);
  EXPECT_TRUE(std::holds_alternative<SessionCreated>(events[0].payload));
  // What the runtime offers, recorded once it was ready (before any prompt).
  EXPECT_TRUE(std::holds_alternative<CapabilitiesChanged>(events[1].payload));
  EXPECT_TRUE(std::holds_alternative<TurnStarted>(events[2].payload));
  EXPECT_TRUE(std::holds_alternative<TurnCompleted>(events.back().payload));
  ASSERT_EQ(Of<UserMessage>(events).size(), 1u);
  EXPECT_EQ(std::get<UserMessage>(Of<UserMessage>(events)[0]->payload).text, "hello");
  EXPECT_EQ(Of<ToolCallEnd>(events).size(), 1u);
  EXPECT_GE(Of<AssistantMessageDelta>(events).size(), 9u);  // streamed in chunks
  for (const Event& e : events) {
    if (!std::holds_alternative<SessionCreated>(e.payload) &&
        !std::holds_alternative<CapabilitiesChanged>(e.payload)) {
      EXPECT_EQ(e.turn, reply->turn);
    }
  }
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kIdle);
  EXPECT_GE(NoticesOf(AgentNotice::Kind::kStatus), 2u);  // running, idle
  const Result<api::AgentSnapshot> after = Get(agent.id);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->cursor.seq, events.back().seq);
}

TEST_F(AgentManagerTest, ResendWithTheSameClientIdIsRecordedOnce) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  // Both sends are queued on the loop before either runs.
  std::optional<Result<api::SendReply>> first, second;
  manager_->Send(agent.id, api::SendRequest{"c1", "hi", {}, WhileRunning::kQueue},
                 [&](Result<api::SendReply> r) { first = std::move(r); });
  manager_->Send(agent.id, api::SendRequest{"c1", "hi", {}, WhileRunning::kQueue},
                 [&](Result<api::SendReply> r) { second = std::move(r); });
  ASSERT_TRUE(loop_.RunUntil([&] { return first && second; }, 20s));
  ASSERT_TRUE(first->ok() && second->ok());
  EXPECT_EQ((*first)->outcome, SubmissionOutcome::kAccepted);
  EXPECT_EQ((*second)->outcome, SubmissionOutcome::kDuplicate);
  EXPECT_FALSE((*second)->accepted);
  ASSERT_TRUE(WaitIdle(agent.id));

  Result<api::SendReply> again = Send(agent.id, "c1", "hi");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, SubmissionOutcome::kDuplicate);
  EXPECT_EQ(again->turn, (*first)->turn);
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<TurnStarted>(events).size(), 1u);
  EXPECT_EQ(Of<UserMessage>(events).size(), 1u);

  Result<api::SendReply> missing = Send(agent.id, "", "no id");
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  Result<api::SendReply> unknown = Send(SessionId("ses_nope"), "c9", "x");
  EXPECT_EQ(unknown.status().code(), ErrorCode::kNotFound);
}

TEST_F(AgentManagerTest, QueueCancelInterruptAndSteerWhileRunning) {
  StartManager(80ms);  // a turn lasts about 0.8 s
  const api::AgentSnapshot agent = Create();
  Result<api::SendReply> c1 = Send(agent.id, "c1", "long task");
  ASSERT_TRUE(c1.ok() && c1->accepted);

  Result<api::SendReply> c2 = Send(agent.id, "c2", "later");
  ASSERT_TRUE(c2.ok());
  EXPECT_EQ(c2->outcome, SubmissionOutcome::kQueued);
  EXPECT_FALSE(c2->accepted);
  Result<api::AgentSnapshot> running = Get(agent.id);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->status, SessionStatus::kRunning);
  EXPECT_EQ(running->active_turn, c1->turn);
  ASSERT_EQ(running->queue.size(), 1u);
  EXPECT_EQ(running->queue[0].client_message_id, "c2");
  EXPECT_GE(NoticesOf(AgentNotice::Kind::kQueued), 1u);

  EXPECT_TRUE(
      WaitStatus([&](const StatusCallback& d) { manager_->CancelQueued(agent.id, "c2", d); }).ok());
  EXPECT_EQ(WaitStatus([&](const StatusCallback& d) {
              manager_->CancelQueued(agent.id, "c2", d);
            }).code(),
            ErrorCode::kNotFound);
  ASSERT_TRUE(WaitFor(agent.id, [](const api::AgentSnapshot& s) { return s.queue.empty(); }));

  Result<api::SendReply> c3 = Send(agent.id, "c3", "next");
  ASSERT_TRUE(c3.ok());
  EXPECT_EQ(c3->outcome, SubmissionOutcome::kQueued);
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Interrupt(agent.id, d); }).ok());
  // c1 ends canceled; c3 starts by itself.
  ASSERT_TRUE(WaitFor(agent.id, [&](const api::AgentSnapshot& s) {
    return s.active_turn && s.active_turn != c1->turn && s.queue.empty();
  }));
  // Steer: replaces the running c3 turn.
  Result<api::SendReply> c4 = Send(agent.id, "c4", "do this instead", WhileRunning::kSteer);
  ASSERT_TRUE(c4.ok());
  EXPECT_EQ(c4->outcome, SubmissionOutcome::kQueued);
  ASSERT_TRUE(WaitIdle(agent.id));

  const std::vector<Event> events = Events(agent.id);
  const auto starts = Of<TurnStarted>(events);
  ASSERT_EQ(starts.size(), 3u);  // c1, c3, c4; never c2
  EXPECT_EQ(std::get<TurnStarted>(starts[0]->payload).client_message_id, "c1");
  EXPECT_EQ(std::get<TurnStarted>(starts[1]->payload).client_message_id, "c3");
  EXPECT_EQ(std::get<TurnStarted>(starts[2]->payload).client_message_id, "c4");
  EXPECT_EQ(Of<TurnCanceled>(events).size(), 2u);
  ASSERT_EQ(Of<TurnCompleted>(events).size(), 1u);
  EXPECT_EQ(Of<TurnCompleted>(events)[0]->turn, starts[2]->turn);
}

TEST_F(AgentManagerTest, PermissionRequestIsAnsweredThroughTheManager) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  Result<api::SendReply> sent = Send(agent.id, "c1", "this needs permission");
  ASSERT_TRUE(sent.ok() && sent->accepted);
  ASSERT_TRUE(WaitFor(agent.id, [](const api::AgentSnapshot& s) {
    return s.status == SessionStatus::kPermission && !s.permissions.empty();
  }));
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kPermission);
  const api::AgentSnapshot waiting = *Get(agent.id);
  EXPECT_EQ(waiting.permissions[0].tool_name, "Bash");

  turn::ReplyPermission bogus{RequestId("nope"), PermissionDecision::kAllow, {}, {}};
  EXPECT_EQ(WaitStatus([&](const StatusCallback& d) {
              manager_->ReplyPermission(agent.id, bogus, d);
            }).code(),
            ErrorCode::kNotFound);
  turn::ReplyPermission allow{
      waiting.permissions[0].request_id, PermissionDecision::kAllow, {}, {}};
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) {
                manager_->ReplyPermission(agent.id, allow, d);
              }).ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<PermissionRequested>(events).size(), 1u);
  ASSERT_EQ(Of<PermissionResolved>(events).size(), 1u);
  EXPECT_EQ(std::get<PermissionResolved>(Of<PermissionResolved>(events)[0]->payload).decision,
            PermissionDecision::kAllow);
  EXPECT_EQ(Of<TurnCompleted>(events).size(), 1u);
}

TEST_F(AgentManagerTest, ForkAndRewindValidateTheirCursor) {
  StartManager();
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "one").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  const Cursor tail = Get(agent.id)->cursor;
  auto fork = [&](const SessionId& id, Cursor at) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Fork(id, at, d); });
  };
  auto rewind = [&](const SessionId& id, Cursor at) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Rewind(id, at, d); });
  };
  EXPECT_EQ(fork(agent.id, {Epoch(2), Seq(1)}).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(fork(agent.id, {tail.epoch, tail.seq.next()}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(fork(agent.id, {tail.epoch, Seq(0)}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(fork(SessionId("ses_nope"), tail).status().code(), ErrorCode::kNotFound);
  // A foreground turn's start, before its prompt, is refused: the branch would hold a turn
  // without a user message. Nothing is created.
  const std::vector<Event> before = Events(agent.id);
  auto started = std::find_if(before.begin(), before.end(), [](const Event& e) {
    return std::holds_alternative<TurnStarted>(e.payload);
  });
  ASSERT_NE(started, before.end());
  const Cursor at_start{started->epoch, started->seq};
  EXPECT_EQ(fork(agent.id, at_start).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rewind(agent.id, at_start).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Events(agent.id).size(), before.size());
  EXPECT_EQ(Get(agent.id)->cursor, tail);

  Result<api::AgentSnapshot> child = fork(agent.id, tail);
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_NE(child->id, agent.id);
  ASSERT_TRUE(child->forked_from.has_value());
  EXPECT_EQ(child->forked_from->session, agent.id);
  EXPECT_EQ(child->forked_from->seq, tail.seq);
  EXPECT_FALSE(child->loaded);
  std::vector<Event> child_events = Events(child->id);
  ASSERT_EQ(child_events.size(), tail.seq.value() + 1);
  EXPECT_TRUE(std::holds_alternative<SessionForked>(child_events.back().payload));
  Result<api::SendReply> in_child = Send(child->id, "c1-child", "in the fork");
  ASSERT_TRUE(in_child.ok() && in_child->accepted);
  ASSERT_TRUE(WaitIdle(child->id));

  // Rewind to just after SessionCreated: a new epoch; cursors of the old one are refused.
  Result<api::AgentSnapshot> rewound = rewind(agent.id, {tail.epoch, Seq(1)});
  ASSERT_TRUE(rewound.ok()) << rewound.status().ToString();
  EXPECT_EQ(rewound->cursor.epoch, Epoch(2));
  EXPECT_EQ(rewound->cursor.seq, Seq(2));
  EXPECT_EQ(rewind(agent.id, {tail.epoch, Seq(1)}).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(rewind(agent.id, {Epoch(2), Seq(3)}).status().code(), ErrorCode::kInvalidArgument);
  Result<api::SendReply> after = Send(agent.id, "c2", "after the rewind");
  ASSERT_TRUE(after.ok() && after->accepted);
  EXPECT_EQ(after->cursor.epoch, Epoch(2));
  ASSERT_TRUE(WaitIdle(agent.id));
  const std::vector<Event> events = Events(agent.id);
  EXPECT_TRUE(std::holds_alternative<SessionRewound>(events[1].payload));
  EXPECT_EQ(Of<TurnStarted>(events).size(), 1u);
  // c1 belonged to the history the rewind dropped: the same id is a new prompt again.
  Result<api::SendReply> c1_again = Send(agent.id, "c1", "one");
  ASSERT_TRUE(c1_again.ok());
  EXPECT_EQ(c1_again->outcome, SubmissionOutcome::kAccepted);
  ASSERT_TRUE(WaitIdle(agent.id));
}

TEST_F(AgentManagerTest, ForkInsideATurnClosesItInTheChild) {
  StartManager(50ms);
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "long").ok());
  const Cursor mid = Get(agent.id)->cursor;  // the turn is open here
  Result<api::AgentSnapshot> child = Wait<api::AgentSnapshot>(
      [&](const Callback<api::AgentSnapshot>& d) { manager_->Fork(agent.id, mid, d); });
  ASSERT_TRUE(child.ok()) << child.status().ToString();
  EXPECT_EQ(child->status, SessionStatus::kIdle);
  const std::vector<Event> events = Events(child->id);
  ASSERT_EQ(Of<TurnCanceled>(events).size(), 1u);
  ASSERT_TRUE(WaitIdle(agent.id));
}

TEST_F(AgentManagerTest, RenameRecordsTheTitleWithAndWithoutARuntime) {
  StartManager();
  const api::AgentSnapshot agent = Create("first");
  auto rename = [&](const SessionId& id, std::string title) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Rename(id, std::move(title), d); });
  };
  auto titles = [&] {
    const std::vector<Event> events = Events(agent.id);
    std::vector<std::string> out;
    for (const Event* e : Of<SessionTitled>(events))
      out.push_back(std::get<SessionTitled>(e->payload).title);
    return out;
  };

  // On the running runtime: the event, the snapshot and a status notice carry the new title.
  ASSERT_TRUE(Send(agent.id, "c1", "work").ok());
  Result<api::AgentSnapshot> live = rename(agent.id, "second");
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_EQ(live->title, "second");
  EXPECT_EQ(Get(agent.id)->title, "second");
  EXPECT_EQ(titles(), std::vector<std::string>{"second"});
  ASSERT_FALSE(notices_.empty());
  EXPECT_TRUE(std::any_of(notices_.begin(), notices_.end(), [](const AgentNotice& n) {
    return n.kind == AgentNotice::Kind::kStatus && n.agent.title == "second";
  }));
  ASSERT_TRUE(WaitIdle(agent.id));

  // Closed, with no runtime: recorded under the lease, and the runtime does not start.
  ASSERT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Close(agent.id, d); }).ok());
  Result<api::AgentSnapshot> stored = rename(agent.id, "");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->title, "");
  EXPECT_FALSE(stored->loaded);
  EXPECT_TRUE(stored->closed);
  EXPECT_EQ(titles(), (std::vector<std::string>{"second", ""}));

  // Bad titles and unknown agents change nothing.
  const std::size_t before = Events(agent.id).size();
  EXPECT_EQ(rename(agent.id, "two\nlines").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rename(agent.id, std::string(kMaxTitleBytes + 1, 'x')).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(rename(agent.id, "\xff\xfe").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(rename(SessionId("ses_missing"), "x").status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(Events(agent.id).size(), before);
  EXPECT_TRUE(rename(agent.id, std::string(kMaxTitleBytes, 'x')).ok());

  // The title outlives the daemon.
  ASSERT_TRUE(rename(agent.id, "third").ok());
  DieAndReopen();
  StartManager();
  EXPECT_EQ(Get(agent.id)->title, "third");
}

TEST_F(AgentManagerTest, CloseStopsTheRuntimeAndASendReopens) {
  StartManager(40ms);
  const api::AgentSnapshot agent = Create();
  const api::AgentSnapshot other = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "work").ok());
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Close(agent.id, d); }).ok());
  EXPECT_EQ(NoticesOf(AgentNotice::Kind::kDisposed), 1u);
  Result<api::AgentSnapshot> closed = Get(agent.id);
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(closed->closed);
  EXPECT_FALSE(closed->loaded);
  EXPECT_EQ(closed->status, SessionStatus::kIdle);
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<TurnCanceled>(events).size(), 1u);  // the open turn was interrupted

  auto list = [&](bool include_closed) {
    return Wait<std::vector<api::AgentSnapshot>>(
        [&](const Callback<std::vector<api::AgentSnapshot>>& d) {
          manager_->List(include_closed, d);
        });
  };
  Result<std::vector<api::AgentSnapshot>> open_only = list(false);
  ASSERT_TRUE(open_only.ok());
  ASSERT_EQ(open_only->size(), 1u);
  EXPECT_EQ((*open_only)[0].id, other.id);
  EXPECT_EQ(list(true)->size(), 2u);
  EXPECT_EQ(
      WaitStatus([&](const StatusCallback& d) { manager_->Close(SessionId("ses_x"), d); }).code(),
      ErrorCode::kNotFound);

  Result<api::SendReply> reopened = Send(agent.id, "c2", "again");
  ASSERT_TRUE(reopened.ok() && reopened->accepted);
  EXPECT_FALSE(Get(agent.id)->closed);
  ASSERT_TRUE(WaitIdle(agent.id));
}

// The inbox path: events from outside the runtime land in order with a running turn's batches
// without breaking its append pipeline, and a redelivery with the same producer stamp appends
// nothing, whether a runtime is attached or not.
TEST_F(AgentManagerTest, ForeignEventsInterleaveWithARunningTurnAndRedeliveriesAppendNothing) {
  StartManager(20ms);
  const api::AgentSnapshot agent = Create();
  auto foreign = [&](const SessionId& id, std::uint64_t n) {
    std::vector<NewEvent> events{
        MakeNewEvent(SubagentEvent{SessionId("ses_child"), Epoch(1), Seq(n + 1), "notice",
                                   std::nullopt, boost::json::object{{"n", n}}})};
    return Wait<AppendResult>([&](const Callback<AppendResult>& done) {
      manager_->AppendForeign(id, std::move(events),
                              ProducerStamp{ProducerId("inbox/c/ses_child"), 1, n}, done);
    });
  };
  ASSERT_TRUE(Send(agent.id, "c1", "work").ok());
  for (std::uint64_t n = 0; n < 4; ++n) {
    Result<AppendResult> r = foreign(agent.id, n);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->duplicate);
  }
  Result<AppendResult> again = foreign(agent.id, 2);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(foreign(agent.id, 9).status().code(), ErrorCode::kSequenceGap);
  ASSERT_TRUE(WaitIdle(agent.id));
  EXPECT_EQ(NoticesOf(AgentNotice::Kind::kError), 0u);

  // Without a runtime: appended directly, deduplicated the same way.
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Close(agent.id, d); }).ok());
  ASSERT_TRUE(foreign(agent.id, 4).ok());
  EXPECT_TRUE(foreign(agent.id, 4)->duplicate);
  EXPECT_EQ(foreign(SessionId("ses_missing"), 0).status().code(), ErrorCode::kNotFound);

  const std::vector<Event> events = Events(agent.id);
  std::vector<std::uint64_t> seen;
  for (const Event* e : Of<SubagentEvent>(events))
    seen.push_back(std::get<SubagentEvent>(e->payload).child_seq.value());
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  ASSERT_EQ(Of<TurnCompleted>(events).size(), 1u);
  EXPECT_LT(Of<SubagentEvent>(events)[0]->seq, Of<TurnCompleted>(events)[0]->seq)
      << "the first foreign event should land inside the running turn";

  // A later prompt still works: the pipeline's expected tail followed the foreign appends.
  ASSERT_TRUE(Send(agent.id, "c2", "more").ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  EXPECT_EQ(Of<TurnCompleted>(Events(agent.id)).size(), 2u);
}

TEST_F(AgentManagerTest, PendingSendsAreBounded) {
  AgentManagerOptions options;
  options.max_pending_sends = 2;
  StartManager(2ms, options);
  const api::AgentSnapshot agent = Create();
  std::vector<std::optional<Result<api::SendReply>>> replies(4);
  for (int i = 0; i < 4; ++i) {
    manager_->Send(agent.id,
                   api::SendRequest{"b" + std::to_string(i), "x", {}, WhileRunning::kQueue},
                   [&replies, i](Result<api::SendReply> r) { replies[i] = std::move(r); });
  }
  ASSERT_TRUE(loop_.RunUntil(
      [&] { return std::all_of(replies.begin(), replies.end(), [](const auto& r) { return r; }); },
      20s));
  // All four run before any log acknowledgement: b0 waits for its turn to start, b1 is queued
  // (its answer waits for b0's events to be durable), b2 and b3 find two sends open.
  ASSERT_TRUE(replies[0]->ok());
  EXPECT_EQ((*replies[0])->outcome, SubmissionOutcome::kAccepted);
  ASSERT_TRUE(replies[1]->ok());
  EXPECT_EQ((*replies[1])->outcome, SubmissionOutcome::kQueued);
  EXPECT_EQ(replies[2]->status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(replies[3]->status().code(), ErrorCode::kUnavailable);
  ASSERT_TRUE(WaitIdle(agent.id));
  // Answered sends free their slots.
  Result<api::SendReply> later = Send(agent.id, "b4", "x");
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_TRUE(WaitIdle(agent.id));
}

TEST_F(AgentManagerTest, QueuedPromptsAreBounded) {
  AgentManagerOptions options;
  options.max_queued_prompts = 2;
  StartManager(50ms, options);
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "q0", "running").ok());
  EXPECT_EQ(Send(agent.id, "q1", "x")->outcome, SubmissionOutcome::kQueued);
  EXPECT_EQ(Send(agent.id, "q2", "x")->outcome, SubmissionOutcome::kQueued);
  EXPECT_EQ(Send(agent.id, "q3", "x").status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(Send(agent.id, "q1", "x")->outcome, SubmissionOutcome::kDuplicate);
  EXPECT_TRUE(WaitStatus([&](const StatusCallback& d) { manager_->Interrupt(agent.id, d); }).ok());
  ASSERT_TRUE(WaitIdle(agent.id));
  EXPECT_EQ(Of<TurnStarted>(Events(agent.id)).size(), 3u);
}

// The manager's time is stepped by hand; the turns run in real time.
TEST_F(AgentManagerTest, IdleRuntimesStopAndRestartOnTheNextPrompt) {
  AgentManagerOptions options;
  options.idle_stop_after = 1s;
  options.timers = &manual_timers_;
  StartManager(2ms, options);
  const api::AgentSnapshot agent = Create();
  // The runtime counts as idle from the status notice that says so (it follows the append).
  const auto idle_after = [&](std::size_t from) {
    return loop_.RunUntil(
        [&] {
          for (std::size_t i = from; i < notices_.size(); ++i) {
            const AgentNotice& n = notices_[i];
            if (n.kind == AgentNotice::Kind::kStatus && n.agent.id == agent.id &&
                n.agent.status == SessionStatus::kIdle)
              return true;
          }
          return false;
        },
        20s);
  };
  // Send answers once the turn started: an idle notice from then on is the turn's end.
  ASSERT_TRUE(Send(agent.id, "c1", "hi").ok());
  ASSERT_TRUE(idle_after(notices_.size()));
  manual_timers_.Advance(999ms);
  EXPECT_TRUE(Get(agent.id)->loaded) << "stopped before it was idle for idle_stop_after";
  manual_timers_.Advance(1ms);
  ASSERT_TRUE(WaitFor(agent.id, [](const api::AgentSnapshot& s) { return !s.loaded; }));
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kIdle);
  EXPECT_EQ(Of<TurnCompleted>(Events(agent.id)).size(), 1u);
  Result<api::SendReply> again = Send(agent.id, "c2", "hi again");
  ASSERT_TRUE(again.ok() && again->accepted);
  EXPECT_TRUE(Get(agent.id)->loaded);
  ASSERT_TRUE(idle_after(notices_.size()));
  manual_timers_.Advance(1s);
  ASSERT_TRUE(WaitFor(agent.id, [](const api::AgentSnapshot& s) { return !s.loaded; }));
  EXPECT_EQ(Of<TurnCompleted>(Events(agent.id)).size(), 2u);
}

// At max_live_agents, a new runtime stops the one idle the longest; with none idle it is refused.
TEST_F(AgentManagerTest, AtTheBoundTheLongestIdleRuntimeMakesRoom) {
  AgentManagerOptions options;
  options.max_live_agents = 2;
  StartManager(50ms, options);
  const api::AgentSnapshot a = Create();
  ASSERT_TRUE(Send(a.id, "a1", "hi").ok());
  ASSERT_TRUE(WaitIdle(a.id));
  const api::AgentSnapshot b = Create();
  ASSERT_TRUE(Send(b.id, "b1", "hi").ok());
  ASSERT_TRUE(WaitIdle(b.id));
  const api::AgentSnapshot c = Create();  // a has been idle the longest
  ASSERT_TRUE(WaitFor(a.id, [](const api::AgentSnapshot& s) { return !s.loaded; }));
  EXPECT_TRUE(Get(b.id)->loaded);
  EXPECT_TRUE(Get(c.id)->loaded);
  // b and c busy: nothing idle to stop, so a's prompt is refused and nothing is lost.
  ASSERT_TRUE(Send(b.id, "b2", "long").ok());
  ASSERT_TRUE(Send(c.id, "c1", "long").ok());
  Result<api::SendReply> refused = Send(a.id, "a2", "again");
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable) << refused.status().ToString();
  ASSERT_TRUE(WaitIdle(b.id));
  ASSERT_TRUE(WaitIdle(c.id));
  // Now b has been idle the longest: a's prompt loads a and stops b.
  Result<api::SendReply> again = Send(a.id, "a2", "again");
  ASSERT_TRUE(again.ok() && again->accepted) << again.status().ToString();
  ASSERT_TRUE(WaitFor(b.id, [](const api::AgentSnapshot& s) { return !s.loaded; }));
  ASSERT_TRUE(WaitIdle(a.id));
  EXPECT_EQ(Of<TurnCompleted>(Events(a.id)).size(), 2u);
  EXPECT_EQ(Of<TurnCompleted>(Events(b.id)).size(), 2u);
}

TEST_F(AgentManagerTest, ShutdownCancelsOpenTurnsAndRefusesLaterCalls) {
  StartManager(100ms);
  const api::AgentSnapshot agent = Create();
  ASSERT_TRUE(Send(agent.id, "c1", "long").ok());
  bool done = false;
  manager_->Shutdown([&] { done = true; });
  ASSERT_TRUE(loop_.RunUntil([&] { return done; }, 20s));
  const std::vector<Event> events = Events(agent.id);
  EXPECT_EQ(Of<TurnCanceled>(events).size(), 1u);
  EXPECT_EQ(Stored(agent.id).status, SessionStatus::kIdle);
  EXPECT_EQ(Send(agent.id, "c2", "x").status().code(), ErrorCode::kUnavailable);
  Result<api::AgentSnapshot> created =
      Wait<api::AgentSnapshot>([&](const Callback<api::AgentSnapshot>& d) {
        manager_->Create(api::AgentConfig{"scripted", dir_.string(), {}, {}, {}}, d);
      });
  EXPECT_EQ(created.status().code(), ErrorCode::kUnavailable);
}

TEST_F(AgentManagerTest, ACreateWhoseRuntimeStopsBeforeItIsReadyAnswersWithTheAgent) {
  // An ACP agent that never answers its handshake: its runtime is still starting when the daemon
  // stops (as when a daemon loses the lease). The agent exists all the same: the answer says so,
  // rather than an error that a retry without a clientRequestId would turn into a second agent.
  ProviderFactoryOptions factory_options;
  factory_options.acp_agents["acp:mute"] =
      providers::acp::AgentCommand{"acp:mute", {"sleep", "60"}};
  factory_ = std::make_unique<DefaultProviderFactory>(factory_options);
  manager_ = std::make_unique<AgentManager>(*log_, *factory_, loop_, AgentManagerOptions{});
  std::optional<Result<api::AgentSnapshot>> created;
  manager_->Create(api::AgentConfig{"acp:mute", dir_.string(), {}, {}, {}},
                   [&](Result<api::AgentSnapshot> r) { created = std::move(r); });
  loop_.RunFor(300ms);
  ASSERT_FALSE(created.has_value()) << "the runtime is still starting";
  bool stopped = false;
  manager_->Shutdown([&] { stopped = true; });
  ASSERT_TRUE(loop_.RunUntil([&] { return stopped && created.has_value(); }, 20s));
  ASSERT_TRUE(created->ok()) << created->status().ToString();
  EXPECT_EQ((*created)->provider, "acp:mute");
  Result<std::vector<SessionInfo>> sessions = sqlite_->ListSessions("", 10);
  ASSERT_TRUE(sessions.ok());
  ASSERT_EQ(sessions->size(), 1u);
  EXPECT_EQ((*sessions)[0].id, (*created)->id);
}

TEST_F(AgentManagerTest, ARetriedCreateAnswersTheSameAgent) {
  StartManager();
  auto create = [&](api::AgentConfig config) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Create(std::move(config), d); });
  };
  const api::AgentConfig config{"scripted", dir_.string(), {}, {}, std::string("t"), "req-42"};
  Result<api::AgentSnapshot> first = create(config);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<api::AgentSnapshot> retry = create(config);
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(retry->id, first->id);
  api::AgentConfig other = config;
  other.title = "another";
  EXPECT_EQ(create(other).status().code(), ErrorCode::kConflict);
  api::AgentConfig fresh = config;
  fresh.client_request_id = "req-43";
  Result<api::AgentSnapshot> second = create(fresh);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->id, first->id);
  EXPECT_EQ(sqlite_->ListSessions("", 10)->size(), 2u);
  EXPECT_EQ(Of<SessionCreated>(Events(first->id)).size(), 1u);
}

TEST_F(AgentManagerTest, CreateRejectsBadConfigs) {
  StartManager();
  auto create = [&](api::AgentConfig config) {
    return Wait<api::AgentSnapshot>(
        [&](const Callback<api::AgentSnapshot>& d) { manager_->Create(std::move(config), d); });
  };
  EXPECT_EQ(create(api::AgentConfig{"nope", dir_.string(), {}, {}, {}}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(create(api::AgentConfig{"scripted", "", {}, {}, {}}).status().code(),
            ErrorCode::kInvalidArgument);
  // A cwd that is not a directory is the client's error, named as such, before anything exists.
  Result<api::AgentSnapshot> missing =
      create(api::AgentConfig{"scripted", (dir_ / "nowhere").string(), {}, {}, {}});
  EXPECT_EQ(missing.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("cwd"), std::string::npos)
      << missing.status().message();
  EXPECT_EQ(create(api::AgentConfig{"scripted", dir_.string() + std::string("\0x", 2), {}, {}, {}})
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(create(api::AgentConfig{"scripted", dir_.string(), {}, {}, {}, std::string("bad key")})
                .status()
                .code(),
            ErrorCode::kInvalidArgument);
  ASSERT_TRUE(sqlite_->ListSessions("", 10)->empty()) << "a refused create stored a session";
  // A runtime that cannot start: the session exists, with an Error event saying why.
  ProviderFactoryOptions options;
  options.claude_program = (dir_ / "no-such-claude").string();
  factory_ = std::make_unique<DefaultProviderFactory>(options);
  subscription_.Reset();
  manager_ = std::make_unique<AgentManager>(*log_, *factory_, loop_);
  Result<api::AgentSnapshot> failed = create(api::AgentConfig{"claude", dir_.string(), {}, {}, {}});
  EXPECT_EQ(failed.status().code(), ErrorCode::kUnavailable);
  Result<std::vector<SessionInfo>> sessions = sqlite_->ListSessions("", 10);
  ASSERT_TRUE(sessions.ok());
  ASSERT_EQ(sessions->size(), 1u);
  const std::vector<Event> events = Events((*sessions)[0].id);
  EXPECT_EQ(Of<ErrorEvent>(events).size(), 1u);
}

}  // namespace
}  // namespace agentstream::runtime

namespace agentstream::runtime {
namespace {

TEST_F(AgentManagerTest, AWorkspaceIsRecordedAfterTheSessionsFirstEventAndAForksOwnAfterItsFork) {
  StartManager();
  const std::filesystem::path parent_dir = dir_ / "wt-parent";
  const std::filesystem::path child_dir = dir_ / "wt-child";
  std::filesystem::create_directories(parent_dir);
  std::filesystem::create_directories(child_dir);
  api::AgentConfig config{"scripted", parent_dir.string(), {}, {}, {}};
  config.session_id = SessionId("ses_workspace");
  config.workspace =
      WorkspaceCreated{parent_dir.string(), "agentstream/ses_workspace", "HEAD", "c0ffee", "/repo"};
  Result<api::AgentSnapshot> agent = Wait<api::AgentSnapshot>(
      [&](const Callback<api::AgentSnapshot>& d) { manager_->Create(config, d); });
  ASSERT_TRUE(agent.ok()) << agent.status().ToString();
  EXPECT_EQ(agent->id, SessionId("ses_workspace"));
  EXPECT_EQ(agent->cwd, parent_dir.string());
  std::vector<Event> events = Events(agent->id);
  ASSERT_GE(events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<SessionCreated>(events[0].payload));
  ASSERT_TRUE(std::holds_alternative<WorkspaceCreated>(events[1].payload));
  EXPECT_EQ(std::get<WorkspaceCreated>(events[1].payload).branch, "agentstream/ses_workspace");

  const Cursor tail = Get(agent->id)->cursor;
  ForkWorkspace child{SessionId("ses_child"),
                      WorkspaceCreated{child_dir.string(), "agentstream/ses_child",
                                       "agentstream/ses_workspace", "c0ffee", "/repo"}};
  Result<api::AgentSnapshot> forked = Wait<api::AgentSnapshot>(
      [&](const Callback<api::AgentSnapshot>& d) { manager_->Fork(agent->id, tail, d, child); });
  ASSERT_TRUE(forked.ok()) << forked.status().ToString();
  EXPECT_EQ(forked->id, SessionId("ses_child"));
  EXPECT_EQ(forked->cwd, child_dir.string());
  std::vector<Event> child_events = Events(forked->id);
  ASSERT_EQ(child_events.size(), tail.seq.value() + 2);
  EXPECT_TRUE(std::holds_alternative<SessionForked>(child_events[tail.seq.value()].payload));
  ASSERT_TRUE(std::holds_alternative<WorkspaceCreated>(child_events.back().payload));
  EXPECT_EQ(std::get<WorkspaceCreated>(child_events.back().payload).path, child_dir.string());
  // The fork runs in its own worktree.
  Result<api::SendReply> sent = Send(forked->id, "c1", "hello");
  ASSERT_TRUE(sent.ok() && sent->accepted);
  ASSERT_TRUE(WaitIdle(forked->id));
  EXPECT_EQ(Get(forked->id)->cwd, child_dir.string());
}

}  // namespace
}  // namespace agentstream::runtime
