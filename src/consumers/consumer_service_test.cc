// The delivery engine against a fake sink on the in-memory and SQLite logs.
#include "consumers/consumer_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "consumers/lane.h"
#include "consumers/sink.h"
#include "store/memory_log.h"
#include "store/sqlite/sqlite_log.h"
#include "store/testing/events.h"
#include "system/wall_clock.h"
#include "testing/eventually.h"
#include "testing/temp_dir.h"

namespace agentstream::consumers {
namespace {

using agentstream::testing::Note;
using test_support::Eventually;

namespace json = boost::json;
using namespace std::chrono_literals;

// Records every delivery; fails while `fail` says so; can hold a send until released.
class FakeSink final : public Sink {
 public:
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<Delivery> attempts;   // every Send, failed ones included
    std::vector<Delivery> delivered;  // acknowledged ones
    std::function<bool(const Delivery&)> fail;
    bool hold = false;  // Send waits while set
    int held = 0;       // Sends waiting
  };
  explicit FakeSink(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}

  Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
    std::unique_lock lock(shared_->mu);
    shared_->attempts.push_back(d);
    ++shared_->held;
    shared_->cv.notify_all();
    shared_->cv.wait(lock, [&] { return !shared_->hold; });
    --shared_->held;
    if (shared_->fail && shared_->fail(d)) return Error(ErrorCode::kUnavailable, "refused");
    shared_->delivered.push_back(d);
    shared_->cv.notify_all();
    // The adapter state counts this session's acknowledged deliveries.
    std::int64_t n = 0;
    for (const auto& x : shared_->delivered) n += x.session == d.session ? 1 : 0;
    return SinkAck{json::value(json::object{{"n", n}})};
  }

 private:
  std::shared_ptr<Shared> shared_;
};

void AppendNotes(EventLog& log, const SessionId& s, int from, int to) {
  for (int i = from; i <= to; ++i) {
    AppendRequest r;
    r.session = s;
    r.events = {Note(s.str() + "#" + std::to_string(i))};
    ASSERT_TRUE(log.Append(std::move(r)).ok());
  }
}

ConsumerSpec Spec(const std::string& id, bool coalesce = false) {
  ConsumerSpec spec;
  spec.id = ConsumerId(id);
  spec.sink.kind = SinkKind::kJsonl;  // replaced by the fake through sink_factory
  spec.sink.path = "/unused";
  spec.sink.timeout_ms = 100;
  spec.retry = RetryPolicy{3, 5, 20};
  spec.coalesce = coalesce;
  return spec;
}

// `lease_ttl_ms`: long by default, so that no step of a loaded machine outlives a lease; the
// test of a stale holder passes a short one.
ConsumerServiceOptions Options(const std::string& owner,
                               const std::shared_ptr<FakeSink::Shared>& shared,
                               std::int64_t lease_ttl_ms = 15000) {
  ConsumerServiceOptions o;
  o.owner = owner;
  o.lease_ttl_ms = lease_ttl_ms;
  o.workers = 2;
  o.idle_poll_ms = 50;
  o.rescan_ms = 200;
  o.sink_factory = [shared](const ConsumerSpec&) -> Result<std::unique_ptr<Sink>> {
    return std::unique_ptr<Sink>(std::make_unique<FakeSink>(shared));
  };
  return o;
}

// A wall clock the test steps by hand, read by the services' threads. Set as
// ConsumerServiceOptions::clock it is also the scheduler's time: no back-off, Retry-After or lease
// lapses unless the test steps it.
class SteppedClock {
 public:
  system::WallClock Get() {
    return [this] { return now_ms_.load(); };
  }
  void Advance(std::chrono::milliseconds d) { now_ms_ += d.count(); }

 private:
  std::atomic<TimestampMs> now_ms_{1'700'000'000'000};
};

// Waits up to a generous deadline for `pred` (checked under the sink's mutex).
bool WaitFor(FakeSink::Shared& shared, const std::function<bool()>& pred,
             std::chrono::seconds limit = 60s) {
  std::unique_lock lock(shared.mu);
  return shared.cv.wait_for(lock, limit, pred);
}

// The acknowledged deliveries of `session`, in order.
std::vector<Delivery> Of(FakeSink::Shared& shared, const SessionId& session) {
  std::lock_guard lock(shared.mu);
  std::vector<Delivery> out;
  for (const auto& d : shared.delivered)
    if (d.session == session) out.push_back(d);
  return out;
}

Seq DeliveredThrough(FakeSink::Shared& shared, const SessionId& session) {
  auto all = Of(shared, session);
  return all.empty() ? Seq(0) : all.back().seq_end;
}

const SessionProgress* Find(const ConsumerState& state, const SessionId& s) {
  for (const auto& p : state.sessions)
    if (p.session == s) return &p;
  return nullptr;
}

TEST(ConsumerService, DeliversEverySessionInOrderWithDenseOrdinalsAndState) {
  MemoryEventLog log;
  const SessionId a("a"), b("b");
  ASSERT_TRUE(log.CreateSession(a, {"scripted", "/", "a"}, {Note("a#0")}).ok());
  ASSERT_TRUE(log.CreateSession(b, {"other", "/", "b"}, {Note("b#0")}).ok());
  AppendNotes(log, a, 1, 30);
  auto shared = std::make_shared<FakeSink::Shared>();
  ConsumerService service(log, Options("w1", shared), nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(service.Create(Spec("c")).ok());
  EXPECT_TRUE(service.Create(Spec("c")).ok());  // idempotent
  ConsumerSpec other = Spec("c");
  other.retry.max_attempts = 9;
  EXPECT_EQ(service.Create(other).status().code(), ErrorCode::kAlreadyExists);
  AppendNotes(log, b, 1, 20);  // live, after the consumer exists
  AppendNotes(log, a, 31, 40);
  // The position is committed after the sink acknowledged: wait for both.
  ASSERT_TRUE(Eventually([&] {
    auto st = service.Get(ConsumerId("c"));
    return DeliveredThrough(*shared, a) == Seq(41) && DeliveredThrough(*shared, b) == Seq(21) &&
           st.ok() && st->events_delivered == 62;
  }));
  for (const SessionId& s : {a, b}) {
    Seq next(1);
    std::uint64_t ordinal = 0;
    json::value state;  // null before the first acknowledgement
    for (const auto& d : Of(*shared, s)) {
      EXPECT_EQ(d.seq_start, next);
      EXPECT_EQ(d.ordinal, ordinal++);
      EXPECT_EQ(d.idempotency_key, IdempotencyKey(ConsumerId("c"), s, Epoch(1), d.seq_end));
      EXPECT_EQ(d.state, state);  // the state the sink returned last time
      state = json::object{{"n", static_cast<std::int64_t>(ordinal)}};
      for (const auto& e : d.events) {
        EXPECT_EQ(e.seq, next);
        next = next.next();
      }
      EXPECT_EQ(next, d.seq_end.next());
    }
  }
  auto got = service.Get(ConsumerId("c"));
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->sessions.size(), 2u);
  EXPECT_EQ(Find(*got, a)->position, (Cursor{Epoch(1), Seq(41)}));
  EXPECT_EQ(Find(*got, a)->lag_events, 0u);
  EXPECT_EQ(Find(*got, a)->lease_owner, "w1");
  EXPECT_EQ(got->events_delivered, 62u);
  EXPECT_EQ(service.Get(ConsumerId("zz")).status().code(), ErrorCode::kNotFound);
}

TEST(ConsumerService, FilterSelectsSessionsAndKinds) {
  MemoryEventLog log;
  ASSERT_TRUE(log.CreateSession(SessionId("a"), {"scripted", "/", "a"}, {Note("x")}).ok());
  ASSERT_TRUE(log.CreateSession(SessionId("b"), {"other", "/", "b"}, {Note("y")}).ok());
  AppendRequest r;
  r.session = SessionId("a");
  r.events = {MakeNewEvent(TurnStarted{}), Note("z")};
  ASSERT_TRUE(log.Append(std::move(r)).ok());
  auto shared = std::make_shared<FakeSink::Shared>();
  ConsumerService service(log, Options("w1", shared), nullptr);
  ASSERT_TRUE(service.Start().ok());
  ConsumerSpec spec = Spec("c");
  spec.filter.providers = {"scripted"};
  spec.filter.kinds = {"turn.started"};
  ASSERT_TRUE(service.Create(spec).ok());
  ASSERT_TRUE(Eventually([&] {
    auto s = service.Get(ConsumerId("c"));
    return s.ok() && s->sessions.size() == 1 && s->sessions[0].position.seq == Seq(3);
  }));
  std::lock_guard lock(shared->mu);
  ASSERT_EQ(shared->delivered.size(), 1u);
  ASSERT_EQ(shared->delivered[0].events.size(), 1u);
  EXPECT_EQ(shared->delivered[0].events[0].kind,
            static_cast<std::uint16_t>(EventKind::kTurnStarted));
  EXPECT_EQ(shared->delivered[0].ordinal, 0u);
}

TEST(ConsumerService, RetriesThenParksOnThePoisonEventWhileOtherSessionsContinue) {
  MemoryEventLog log;
  const SessionId a("a"), b("b");
  ASSERT_TRUE(log.CreateSession(a, {"p", "/", "a"}, {Note("a#0")}).ok());
  ASSERT_TRUE(log.CreateSession(b, {"p", "/", "b"}, {Note("b#0")}).ok());
  auto shared = std::make_shared<FakeSink::Shared>();
  std::atomic<bool> poison{true};
  shared->fail = [&](const Delivery& d) {
    if (!poison) return false;
    for (const auto& e : d.events)
      if (e.session == SessionId("a") && e.payload.find("poison") != std::string::npos) return true;
    return false;
  };
  // One worker steps the lanes one after another, in the order the scheduler found them due.
  SteppedClock clock;
  ConsumerServiceOptions options = Options("w1", shared);
  options.workers = 1;
  options.clock = clock.Get();
  ConsumerService service(log, options, nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(service.Create(Spec("c")).ok());
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, a) == Seq(1); }));
  AppendRequest r;
  r.session = a;
  r.events = {Note("poison")};
  ASSERT_TRUE(log.Append(std::move(r)).ok());
  auto parked = [&] {
    auto s = service.Get(ConsumerId("c"));
    return s.ok() && Find(*s, a) != nullptr && Find(*s, a)->parked;
  };
  // Each look steps time past the longest back-off (20 ms), so every retry falls due.
  ASSERT_TRUE(Eventually([&] {
    clock.Advance(20ms);
    return parked();
  }));
  auto state = service.Get(ConsumerId("c"));
  EXPECT_EQ(Find(*state, a)->attempts, 3);
  EXPECT_NE(Find(*state, a)->last_error.find("refused"), std::string::npos);
  EXPECT_EQ(Find(*state, a)->position.seq, Seq(1));  // never skipped
  EXPECT_EQ(state->failures, 3u);
  // Parked: however long it waits, no further attempts. The scheduler pass that finds b's commit
  // reads the clock after this step, and a lane of a due in that pass would be pushed before b's
  // (a sorts first) and sent by the one worker before b's delivery.
  clock.Advance(std::chrono::hours(1));
  AppendNotes(log, b, 1, 5);  // another session keeps going
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, b) == Seq(6); }));
  std::string poison_key;
  {
    std::lock_guard lock(shared->mu);
    int tries = 0;
    for (const auto& d : shared->attempts) {
      if (d.session != a || d.seq_end != Seq(2)) continue;
      ++tries;
      if (poison_key.empty()) poison_key = d.idempotency_key;
      EXPECT_EQ(d.idempotency_key, poison_key);  // every retry is the same delivery
    }
    EXPECT_EQ(tries, 3);
  }
  clock.Advance(std::chrono::hours(1));  // and once more, after a pass of its own
  AppendNotes(log, b, 6, 6);
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, b) == Seq(7); }));
  {
    std::lock_guard lock(shared->mu);
    int tries = 0;
    for (const auto& d : shared->attempts) tries += d.session == a && d.seq_end == Seq(2);
    EXPECT_EQ(tries, 3);
  }
  poison = false;
  ASSERT_TRUE(service.Resume(ConsumerId("c"), a).ok());
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, a) == Seq(2); }));
  EXPECT_EQ(Of(*shared, a).back().idempotency_key, poison_key);
  EXPECT_FALSE(parked());
  EXPECT_EQ(service.Resume(ConsumerId("c"), SessionId("nope")).code(), ErrorCode::kNotFound);
}

TEST(ConsumerService, AStaleLeaseHolderIsFencedAndStopsDelivering) {
  MemoryEventLog log;
  const SessionId s("s");
  ASSERT_TRUE(log.CreateSession(s, {"p", "/", "s"}, {Note("s#0")}).ok());
  AppendNotes(log, s, 1, 9);
  auto first = std::make_shared<FakeSink::Shared>();
  first->hold = true;
  SteppedClock clock;  // both services on one machine's clock
  ConsumerServiceOptions stale_options = Options("stale", first, 300);
  stale_options.clock = clock.Get();
  ConsumerService stale(log, stale_options, nullptr);
  ASSERT_TRUE(stale.Start().ok());
  ConsumerSpec spec = Spec("c");
  ASSERT_TRUE(stale.Create(spec).ok());
  // The first holder is stuck in a send past its lease.
  ASSERT_TRUE(WaitFor(*first, [&] { return first->held == 1; }));
  auto second = std::make_shared<FakeSink::Shared>();
  ConsumerServiceOptions fresh_options = Options("fresh", second);
  fresh_options.clock = clock.Get();
  ConsumerService fresh(log, fresh_options, nullptr);
  ASSERT_TRUE(fresh.Start().ok());
  // The send outlives the stale holder's lease (300 ms); the new holder, turned away while that
  // lease was live, looks again after half of its own (7.5 s). Each look steps a second, so the
  // retry falls due however the steps meet the new holder's attempts.
  ASSERT_TRUE(Eventually([&] {
    clock.Advance(1s);
    return DeliveredThrough(*second, s) == Seq(10);
  }));
  // The new holder resent the journaled delivery first, with the same key.
  std::string stuck_key;
  {
    std::lock_guard lock(first->mu);
    stuck_key = first->attempts.at(0).idempotency_key;
  }
  EXPECT_EQ(Of(*second, s).front().idempotency_key, stuck_key);
  {
    std::lock_guard lock(first->mu);
    first->hold = false;
    first->cv.notify_all();
  }
  // The stale holder's acknowledgement is refused.
  ASSERT_TRUE(Eventually([&] {
    auto st = stale.Get(ConsumerId("c"));
    return st.ok() && !st->sessions.empty() &&
           st->sessions[0].last_error.find("fenced") != std::string::npos;
  }));
  stale.Stop();
  fresh.Stop();  // waits for its last commit
  auto positions = log.consumers().ListConsumerPositions(ConsumerId("c"));
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].position, (Cursor{Epoch(1), Seq(10)}));
  EXPECT_GE((*positions)[0].generation, 2u);
  {
    std::lock_guard lock(first->mu);
    EXPECT_EQ(first->attempts.size(), 1u);  // nothing more after it was fenced
  }
}

TEST(ConsumerService, CoalescesABacklogOfDeltasAndCoversEveryEvent) {
  MemoryEventLog log;
  const SessionId s("s");
  ASSERT_TRUE(log.CreateSession(s, {"p", "/", "s"}, {}).ok());
  std::vector<NewEvent> events;
  events.push_back(MakeNewEvent(AssistantMessageStart{MessageId("m"), std::nullopt}, TurnId("t")));
  std::string expected;
  for (int i = 0; i < 1000; ++i) {
    expected += "w" + std::to_string(i) + " ";
    events.push_back(MakeNewEvent(
        AssistantMessageDelta{MessageId("m"), "w" + std::to_string(i) + " "}, TurnId("t")));
  }
  events.push_back(MakeNewEvent(AssistantMessageEnd{MessageId("m"), std::nullopt}, TurnId("t")));
  AppendRequest r;
  r.session = s;
  r.events = std::move(events);
  ASSERT_TRUE(log.Append(std::move(r)).ok());
  auto shared = std::make_shared<FakeSink::Shared>();
  ConsumerService service(log, Options("w", shared), nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(service.Create(Spec("c", /*coalesce=*/true)).ok());
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, s) == Seq(1002); }));
  std::string text;
  Seq next(1);
  std::size_t deltas = 0;
  bool coalesced = false;
  for (const auto& d : Of(*shared, s)) {
    EXPECT_EQ(d.seq_start, next);
    coalesced = coalesced || d.coalesced;
    for (std::size_t i = 0; i < d.events.size(); ++i) {
      EXPECT_EQ(d.first_seqs[i], next);
      next = d.events[i].seq.next();
      if (d.events[i].kind == static_cast<std::uint16_t>(EventKind::kAssistantMessageDelta)) {
        ++deltas;
        text += json::parse(d.events[i].payload).as_object().at("text").as_string();
      }
    }
    EXPECT_EQ(next, d.seq_end.next());
  }
  EXPECT_EQ(text, expected);
  EXPECT_TRUE(coalesced);
  EXPECT_LT(deltas, 10u);  // 1000 deltas behind cost a handful of events
}

TEST(ConsumerService, ARewindContinuesFromTheCommonPrefix) {
  MemoryEventLog log;
  const SessionId s("s");
  ASSERT_TRUE(log.CreateSession(s, {"p", "/", "s"}, {Note("s#0")}).ok());
  AppendNotes(log, s, 1, 9);
  auto shared = std::make_shared<FakeSink::Shared>();
  ConsumerService service(log, Options("w", shared), nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(service.Create(Spec("c")).ok());
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, s) == Seq(10); }));
  const std::size_t before = Of(*shared, s).size();
  ASSERT_TRUE(log.Rewind(s, Cursor{Epoch(1), Seq(5)},
                         {MakeNewEvent(SessionRewound{Epoch(1), Epoch(1), Seq(5)}), Note("new")})
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    auto all = Of(*shared, s);
    return !all.empty() && all.back().epoch == Epoch(2) && all.back().seq_end == Seq(7);
  }));
  auto all = Of(*shared, s);
  ASSERT_GT(all.size(), before);
  const Delivery& first_new = all[before];
  EXPECT_EQ(first_new.epoch, Epoch(2));
  EXPECT_EQ(first_new.seq_start, Seq(6));  // 1..5 are shared and were delivered already
  EXPECT_EQ(first_new.ordinal, 0u);        // ordinals count per epoch
  EXPECT_EQ(first_new.events.front().kind, static_cast<std::uint16_t>(EventKind::kSessionRewound));
}

TEST(ConsumerService, AJournaledPlanIsResentExactlyAfterACrash) {
  MemoryEventLog log;
  const SessionId s("s");
  ASSERT_TRUE(log.CreateSession(s, {"p", "/", "s"}, {Note("s#0")}).ok());
  AppendNotes(log, s, 1, 9);
  const ConsumerId c("c");
  ASSERT_TRUE(
      log.consumers().SaveConsumer(c, json::serialize(ConsumerSpecToJson(Spec("c"), false))).ok());
  // A crashed holder acknowledged through 2 and journaled 3..5 as ordinal 2.
  auto lease = log.consumers().AcquireLease(c, s, "crashed", 1, 1);
  ASSERT_TRUE(lease.ok());
  LaneRecord record;
  record.ordinal_epoch = 1;
  record.next_ordinal = 2;
  record.sink_state = json::object{{"n", 2}};
  record.inflight = InflightPlan{2, Epoch(1), Seq(3), Seq(5), false, nullptr};
  ASSERT_TRUE(log.consumers()
                  .CommitConsumerPosition(c, s, lease->generation, Cursor{Epoch(1), Seq(2)},
                                          EncodeLaneRecord(record), 1)
                  .ok());
  auto shared = std::make_shared<FakeSink::Shared>();
  ConsumerService service(log, Options("w", shared), nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, s) == Seq(10); }));
  auto all = Of(*shared, s);
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0].seq_start, Seq(3));
  EXPECT_EQ(all[0].seq_end, Seq(5));
  EXPECT_EQ(all[0].ordinal, 2u);
  EXPECT_EQ(all[0].idempotency_key, "c/s/1/5");
  EXPECT_EQ(all[0].state, (json::value(json::object{{"n", 2}})));
  EXPECT_EQ(all[1].seq_start, Seq(6));
  EXPECT_EQ(all[1].ordinal, 3u);
}

TEST(ConsumerService, ConsumersAndPositionsSurviveARestartOnSqlite) {
  const test_support::TempDir temp("consumers");
  const std::string& dir = temp.path();
  SqliteLogOptions options;
  options.path = dir + "/log.db";
  auto shared = std::make_shared<FakeSink::Shared>();
  const SessionId s("s");
  {
    auto log = OpenSqliteEventLog(options);
    ASSERT_TRUE(log.ok());
    ASSERT_TRUE((*log)->CreateSession(s, {"p", "/", "s"}, {Note("s#0")}).ok());
    AppendNotes(**log, s, 1, 9);
    ConsumerService service(**log, Options("w", shared), nullptr);
    ASSERT_TRUE(service.Start().ok());
    ASSERT_TRUE(service.Create(Spec("c")).ok());
    ConsumerSpec late = Spec("late");
    late.from_now = true;
    ASSERT_TRUE(service.Create(late).ok());
    ASSERT_TRUE(Eventually([&] { return DeliveredThrough(*shared, s) == Seq(10); }));
    service.Stop();
    AppendNotes(**log, s, 10, 14);
  }
  const std::size_t before = Of(*shared, s).size();
  {
    auto log = OpenSqliteEventLog(options);
    ASSERT_TRUE(log.ok());
    ConsumerService service(**log, Options("w2", shared), nullptr);
    ASSERT_TRUE(service.Start().ok());
    auto listed = service.List();
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->size(), 2u);
    ASSERT_TRUE(Eventually([&] {
      std::lock_guard lock(shared->mu);
      std::size_t late_through = 0, c_through = 0;
      for (const auto& d : shared->delivered) {
        if (d.consumer == ConsumerId("late")) late_through = d.seq_end.value();
        if (d.consumer == ConsumerId("c")) c_through = d.seq_end.value();
      }
      return late_through == 15 && c_through == 15;
    }));
    std::lock_guard lock(shared->mu);
    for (std::size_t i = before; i < shared->delivered.size(); ++i)
      EXPECT_GE(shared->delivered[i].seq_start, Seq(11));  // nothing acknowledged is resent
    for (const auto& d : shared->delivered) {
      if (d.consumer == ConsumerId("late")) {
        EXPECT_GE(d.seq_start, Seq(11));  // from_now
      }
    }
    ASSERT_TRUE(service.Delete(ConsumerId("late")).ok());
    EXPECT_EQ(service.Delete(ConsumerId("late")).code(), ErrorCode::kNotFound);
    EXPECT_TRUE((*log)->consumers().ListConsumerPositions(ConsumerId("late"))->empty());
  }
}

// The parent-session sink: the child's events land in the parent's log wrapped as sub-agent
// events, once each, even when an acknowledgement is lost after the append (the producer stamp
// makes the redelivery a duplicate the log drops).
TEST(ConsumerService, ParentSessionSinkAppendsEachChildEventOnce) {
  MemoryEventLog log;
  const SessionId parent("parent"), child("child");
  ASSERT_TRUE(log.CreateSession(parent, {"p", "/", "parent"}, {Note("p#0")}).ok());
  ASSERT_TRUE(log.CreateSession(child, {"p", "/", "child"}, {Note("c#0")}).ok());
  AppendNotes(log, child, 1, 7);
  std::atomic<int> appends{0};
  ParentAppender appender = [&](const SessionId& to, const Delivery& d,
                                std::function<void(Status)> done) {
    auto events = SubagentEventsFor(d);
    if (!events.ok()) return done(events.status());
    AppendRequest r;
    r.session = to;
    r.producer = ProducerStamp{ParentProducerId(d.consumer, d.session), d.epoch.value(), d.ordinal};
    r.events = std::move(*events);
    auto appended = log.Append(std::move(r));
    // The first acknowledgement is lost, as if the daemon crashed right after the append.
    if (appends.fetch_add(1) == 0) return done(Error(ErrorCode::kUnavailable, "lost ack"));
    done(appended.status());
  };
  ConsumerServiceOptions options;
  options.owner = "w";
  options.idle_poll_ms = 50;
  options.rescan_ms = 200;
  options.max_delivery_events = 3;
  ConsumerService service(log, options, appender);
  ASSERT_TRUE(service.Start().ok());
  ConsumerSpec spec = Spec("sub");
  spec.sink = SinkSpec{};
  spec.sink.kind = SinkKind::kParentSession;
  spec.sink.parent = parent;
  ASSERT_TRUE(service.Create(spec).ok());  // no filter: every session but the parent itself
  ASSERT_TRUE(Eventually([&] {
    auto st = service.Get(ConsumerId("sub"));
    return st.ok() && st->sessions.size() == 1 && st->sessions[0].position.seq == Seq(8);
  }));
  auto page = log.Read(ReadRequest{parent, std::nullopt, ReadDirection::kForward, Seq(1), 100,
                                   std::size_t{1} << 20});
  ASSERT_TRUE(page.ok());
  std::vector<std::uint64_t> child_seqs;
  for (const auto& r : page->events) {
    if (r.kind != static_cast<std::uint16_t>(EventKind::kSubagentEvent)) continue;
    auto ev = DecodeRecord(r);
    ASSERT_TRUE(ev.ok());
    const auto& sub = std::get<SubagentEvent>(ev->payload);
    EXPECT_EQ(sub.child, child);
    child_seqs.push_back(sub.child_seq.value());
  }
  EXPECT_EQ(child_seqs, (std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
  auto st = service.Get(ConsumerId("sub"));
  ASSERT_EQ(st->sessions.size(), 1u);
  EXPECT_EQ(st->sessions[0].session, child);
  EXPECT_GE(appends.load(), 4);  // 3 deliveries plus the resend
}

// A sink told "not yet, retry after 400 ms" (an HTTP 429 with Retry-After): the next attempt
// waits for it although the policy's back-off is 5 ms; the attempt counts as failed. Time is
// stepped by hand: first to 1 ms short of the 400 ms, then the rest.
TEST(ConsumerService, ASinksRetryAfterDelaysTheNextAttempt) {
  struct Attempts {
    std::mutex mu;
    std::map<SessionId, std::vector<TimestampMs>> at;  // by session, the clock at each Send
  };
  class RetryAfterSink final : public Sink {
   public:
    RetryAfterSink(std::shared_ptr<Attempts> attempts, system::WallClock clock)
        : attempts_(std::move(attempts)), clock_(std::move(clock)) {}
    Result<SinkAck> Send(const Delivery& d, const json::value& prepared) override {
      std::lock_guard lock(attempts_->mu);
      std::vector<TimestampMs>& at = attempts_->at[d.session];
      at.push_back(clock_());
      if (d.session == SessionId("a") && at.size() == 1)
        return SinkAck{std::nullopt, NotDelivered{"429 slow down", 400}};
      return SinkAck{};
    }

   private:
    std::shared_ptr<Attempts> attempts_;
    system::WallClock clock_;
  };
  MemoryEventLog log;
  const SessionId a("a"), b("b");
  ASSERT_TRUE(log.CreateSession(a, {"p", "/", "a"}, {Note("a#0")}).ok());
  ASSERT_TRUE(log.CreateSession(b, {"p", "/", "b"}, {Note("b#0")}).ok());
  auto attempts = std::make_shared<Attempts>();
  auto count = [&](const SessionId& s) {
    std::lock_guard lock(attempts->mu);
    return attempts->at[s].size();
  };
  SteppedClock clock;
  auto options = Options("w1", std::make_shared<FakeSink::Shared>());
  options.workers = 1;  // lanes are sent one after another, in the order they fell due
  options.clock = clock.Get();
  options.sink_factory = [attempts, &clock](const ConsumerSpec&) -> Result<std::unique_ptr<Sink>> {
    return std::unique_ptr<Sink>(std::make_unique<RetryAfterSink>(attempts, clock.Get()));
  };
  ConsumerService service(log, options, nullptr);
  ASSERT_TRUE(service.Start().ok());
  ASSERT_TRUE(service.Create(Spec("c")).ok());
  ASSERT_TRUE(Eventually([&] {
    auto s = service.Get(ConsumerId("c"));
    return s.ok() && s->failures == 1 && count(b) == 1;
  }));
  // A delivery of b after that proves the one worker done with a's step, its next attempt's time
  // set (from the clock as the step ended) before any step of the clock.
  AppendNotes(log, b, 1, 1);
  ASSERT_TRUE(Eventually([&] { return count(b) == 2; }));
  clock.Advance(399ms);
  // The scheduler pass that finds b's next commit reads the clock after the step; were a due, it
  // would be pushed before b (it sorts first) and sent first by the one worker.
  AppendNotes(log, b, 2, 2);
  ASSERT_TRUE(Eventually([&] { return count(b) == 3; }));
  EXPECT_EQ(count(a), 1u) << "retried before its Retry-After";
  clock.Advance(1ms);
  ASSERT_TRUE(Eventually([&] {
    auto s = service.Get(ConsumerId("c"));
    return s.ok() && Find(*s, a) != nullptr && Find(*s, a)->position.seq == Seq(1);
  }));
  std::lock_guard lock(attempts->mu);
  const std::vector<TimestampMs>& at = attempts->at[a];
  ASSERT_EQ(at.size(), 2u);
  EXPECT_GE(at[1] - at[0], 400);
  auto state = service.Get(ConsumerId("c"));
  EXPECT_EQ(state->failures, 1u);
}

}  // namespace
}  // namespace agentstream::consumers
