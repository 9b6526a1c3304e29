#include "notify/classify.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>

#include "notify/notification.h"
#include "notify/routing.h"

namespace agentstream::notify {
namespace {

// A session log written by hand: each event gets the next seq and the given time.
class Log {
 public:
  EventRecord Add(const Payload& payload, std::optional<std::string> turn, TimestampMs time) {
    std::optional<TurnId> id;
    if (turn) id = TurnId(*turn);
    NewEvent e = MakeNewEvent(payload, id);
    EventRecord r;
    r.session = SessionId("ses_1");
    r.epoch = Epoch(1);
    r.seq = Seq(++seq_);
    r.time = time;
    r.kind = static_cast<std::uint16_t>(e.kind);
    r.turn = e.turn;
    r.payload = e.payload;
    return r;
  }

 private:
  std::uint64_t seq_ = 0;
};

TurnStarted Foreground(std::string client) {
  TurnStarted t;
  t.client_message_id = std::move(client);
  return t;
}

TurnStarted Autonomous() {
  TurnStarted t;
  t.origin = TurnOrigin::kAutonomous;
  t.task_id = "task_1";
  return t;
}

UserMessage Prompt(std::string text) {
  UserMessage m;
  m.message_id = MessageId("m1");
  m.client_message_id = "c1";
  m.text = std::move(text);
  return m;
}

TEST(ClassifyTest, ForegroundTurnFinishedWithItsLengthAndPrompt) {
  Log log;
  Track track;
  auto out = Classify(track, {log.Add(Foreground("c1"), "t1", 1000),
                              log.Add(Prompt("fix the flaky test"), "t1", 1001)});
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(track.open.size(), 1u);
  // The end comes in a later delivery: the track carries the start (through its JSON, as the
  // sink stores it).
  track = TrackFromJson(boost::json::parse(boost::json::serialize(TrackToJson(track))));
  out = Classify(track, {log.Add(TurnCompleted{}, "t1", 46000)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kTurnFinished);
  EXPECT_EQ(out[0].ran_ms, 45000);
  EXPECT_EQ(out[0].text, "fix the flaky test");
  EXPECT_EQ(out[0].cursor, (Cursor{Epoch(1), Seq(3)}));
  EXPECT_TRUE(track.open.empty());
}

TEST(ClassifyTest, AutonomousTurnFinished) {
  Log log;
  Track track;
  auto out = Classify(track, {log.Add(Autonomous(), "t1", 0), log.Add(TurnCompleted{}, "t1", 10)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kAutonomousFinished);
}

TEST(ClassifyTest, TurnNotSeenStartingIsNotNotifiedAndCanceledIsSilent) {
  Log log;
  Track track;
  EXPECT_TRUE(Classify(track, {log.Add(TurnCompleted{}, "t0", 10)}).empty());
  EXPECT_TRUE(Classify(track, {log.Add(Foreground("c1"), "t1", 20),
                               log.Add(TurnCanceled{"interrupted"}, "t1", 90000)})
                  .empty());
}

TEST(ClassifyTest, PermissionAndFailure) {
  Log log;
  Track track;
  PermissionRequested p;
  p.request_id = RequestId("r1");
  p.title = "Run rm -rf build";
  TurnFailed f{"provider_exited", "the agent's process exited"};
  auto out = Classify(
      track, {log.Add(Foreground("c1"), "t1", 0), log.Add(p, "t1", 5), log.Add(f, "t1", 9)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, Kind::kPermission);
  EXPECT_EQ(out[0].text, "Run rm -rf build");
  EXPECT_EQ(out[0].cursor.seq, Seq(2));
  EXPECT_EQ(out[1].kind, Kind::kTurnFailed);
  EXPECT_EQ(out[1].text, "the agent's process exited");
}

// A turn a schedule or a trigger started (automation.fired, then the prompt under its key) that
// fails notifies as any failed turn does (docs/automation.md).
TEST(ClassifyTest, AnAutomationsFailedTurnNotifiesAsAnyOther) {
  Log log;
  Track track;
  AutomationFired fired{"schedule", "nightly", "2027-01-04T09:00:00Z", std::nullopt, {}};
  auto out = Classify(
      track, {log.Add(fired, std::nullopt, 0),
              log.Add(Foreground("schedule:nightly:2027-01-04T09:00:00Z"), "t1", 1),
              log.Add(TurnFailed{"provider_exited", "the agent's process exited"}, "t1", 9)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kTurnFailed);
  EXPECT_EQ(out[0].text, "the agent's process exited");
}

TEST(ClassifyTest, QueueWaitingWhenTheRuntimeCannotRunTheQueue) {
  Log log;
  Track track;
  PromptQueued q;
  q.client_message_id = "c2";
  q.text = "and then the docs";
  // The usual case: the turn ends and the queued prompt starts in the same commit.
  auto out =
      Classify(track, {log.Add(Foreground("c1"), "t1", 0), log.Add(q, "t1", 1),
                       log.Add(TurnCompleted{}, "t1", 2), log.Add(Foreground("c2"), "t2", 2)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kTurnFinished);  // 2 ms: Wants() leaves it out by minTurnMs
  EXPECT_TRUE(track.queued.empty());
  // The process exits with a prompt queued: the queue is held, and the daemon starts a new
  // runtime for it, so that alone is not notified.
  PromptQueued q3;
  q3.client_message_id = "c3";
  q3.text = "third";
  out = Classify(track,
                 {log.Add(q3, "t2", 3), log.Add(TurnFailed{"provider_exited", "gone"}, "t2", 4)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kTurnFailed);
  // The new runtime does not start: the agent is idle with the prompt waiting.
  const EventRecord failed =
      log.Add(ErrorEvent{"runtime_start_failed", "claude: not found", true}, std::nullopt, 5);
  out = Classify(track, {failed});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, Kind::kQueueWaiting);
  EXPECT_EQ(out[0].cursor, failed.cursor());
  EXPECT_EQ(out[0].waiting, 1u);
  EXPECT_EQ(out[0].text, "third");
  // A fatal error in a turn: the engine runs the queue next (a turn is open), nothing waits.
  Track running;
  out = Classify(running, {log.Add(q3, "t5", 6), log.Add(Foreground("c9"), "t5", 6),
                           log.Add(ErrorEvent{"overloaded", "x", true}, "t5", 7)});
  EXPECT_TRUE(out.empty());
  // A non-fatal error is not a stall; a canceled prompt leaves the queue.
  out = Classify(track, {log.Add(ErrorEvent{"rate_limit", "slow down", false}, std::nullopt, 8)});
  EXPECT_TRUE(out.empty());
  out = Classify(track, {log.Add(PromptCanceled{"c3", "canceled by a client"}, std::nullopt, 9)});
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(track.queued.empty());
}

TEST(ClassifyTest, TheConsumersFilterHoldsEveryKindClassifyReads) {
  const std::vector<std::string> kinds = ClassifiedEventKinds();
  for (const char* kind :
       {"permission.requested", "turn.started", "turn.completed", "turn.failed", "turn.canceled",
        "user.message", "prompt.queued", "prompt.canceled", "error"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kind;
}

TEST(ClassifyTest, TrackIsBounded) {
  Log log;
  Track track;
  std::vector<EventRecord> events;
  for (int i = 0; i < 100; ++i) {
    PromptQueued q;
    q.client_message_id = "c" + std::to_string(i);
    q.text = std::string(5000, 'x');
    events.push_back(log.Add(q, std::nullopt, i));
    events.push_back(log.Add(Foreground("d" + std::to_string(i)), "t" + std::to_string(i), i));
  }
  (void)Classify(track, events);
  EXPECT_EQ(track.queued.size(), kMaxTrackedPrompts);
  EXPECT_EQ(track.open.size(), kMaxTrackedTurns);
  EXPECT_LE(track.queued.front().second.size(), kMaxTrackedTextBytes);
  EXPECT_TRUE(TrackFromJson(boost::json::value()).open.empty());
  EXPECT_TRUE(TrackFromJson(boost::json::parse(R"({"open":7,"queued":[1]})")).queued.empty());
}

TEST(NotificationTest, PreviewOnlyWhenAllowedAndAtMost120Characters) {
  Candidate c{Kind::kPermission, Cursor{Epoch(1), Seq(42)}};
  c.text = std::string(300, 'a') + " secret";
  Notification off = Compose(c, SessionId("ses_1"), "Refactor", false);
  EXPECT_EQ(off.body, "Needs your permission");
  EXPECT_EQ(off.title, "Refactor");
  EXPECT_EQ(off.cursor, "1:42");
  EXPECT_EQ(off.url, "/#agent=ses_1&cursor=1:42");
  Notification on = Compose(c, SessionId("ses_1"), "", true);
  EXPECT_EQ(on.title, "ses_1");
  EXPECT_EQ(on.body.find("secret"), std::string::npos);
  const std::string summary = Summary(c.text, kMaxPreviewChars);
  EXPECT_EQ(summary, std::string(119, 'a') + "\xE2\x80\xA6");
  EXPECT_EQ(on.body, "Needs your permission: " + summary);
  // Characters, not bytes; whitespace folded.
  EXPECT_EQ(Summary("  caf\xC3\xA9\n\n  ok ", 120), "caf\xC3\xA9 ok");
  EXPECT_EQ(Summary(std::string(200, '\xC3'), 3).size(), 3u + 3u + 3u);  // U+FFFD x2 + "…"
}

TEST(NotificationTest, PayloadIsBoundedWhateverTheText) {
  Candidate c{Kind::kQueueWaiting, Cursor{Epoch(1), Seq(1)}};
  c.waiting = 2;
  c.text = std::string(100000, '\x01');
  Notification n = Compose(c, SessionId("ses_1"), std::string(100000, '\x02'), true);
  const std::string payload = PayloadJson(n);
  EXPECT_LE(payload.size(), kMaxPayloadBytes);
  auto v = boost::json::parse(payload).as_object();
  EXPECT_EQ(v.at("kind").as_string(), "queueWaiting");
  EXPECT_EQ(v.at("agent").as_string(), "ses_1");
  EXPECT_EQ(v.at("cursor").as_string(), "1:1");
  EXPECT_EQ(Compose(c, SessionId("ses_1"), "t", false).body, "Idle with 2 prompts waiting");
}

TEST(RoutingTest, AVisibleFocusedRecentClientHoldsBackOthersDoNot) {
  const SessionId agent("ses_1");
  const TimestampMs now = 1'000'000;
  PresenceRecord shown{"c1", "dev_1", true, "ses_1", now - 1000, now + 44000};
  EXPECT_TRUE(ShownOnAClient({shown}, agent, now));
  PresenceRecord hidden = shown;
  hidden.visible = false;
  PresenceRecord other = shown;
  other.focused_agent = "ses_2";
  PresenceRecord expired = shown;
  expired.expires_ms = now;
  PresenceRecord idle = shown;
  idle.last_activity_ms = now - kActivityWindowMs - 1;
  EXPECT_FALSE(ShownOnAClient({hidden, other, expired, idle}, agent, now));
  EXPECT_TRUE(ShownOnAClient({hidden, shown}, agent, now));
  EXPECT_FALSE(ShownOnAClient({}, agent, now));
}

}  // namespace
}  // namespace agentstream::notify
