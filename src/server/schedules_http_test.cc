// Schedules (docs/automation.md, "Schedules"): the API over real sockets with a Scheduler on a
// clock the test sets, each tick fired once into an agent's log; what a crash leaves (a pending
// tick fired again by the next lease holder, repeating nothing); the missed-tick policies; and
// the pure parts (definitions, ticks, plans).
#include <atomic>

#include "server/schedule_routes.h"
#include "server/scheduler.h"
#include "server/schedules.h"
#include "server/testing/server_test_fixture.h"

namespace agentstream::server::testing {
namespace {

// 2027-01-04T09:00:00Z, a Monday.
constexpr TimestampMs kMonday9 = 1799053200000;

ScheduleDefinition DefinitionOf(const std::string& text, std::int64_t floor_ms = 1000) {
  Result<ScheduleDefinition> parsed = ParseSchedule(json::parse(text), floor_ms, kMonday9);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : ScheduleDefinition{};
}

std::string RefusalOf(const std::string& text, std::int64_t floor_ms = 60'000) {
  Result<ScheduleDefinition> parsed = ParseSchedule(json::parse(text), floor_ms, kMonday9);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? "" : parsed.status().message();
}

class SchedulesHttpTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& options) override {
    routes_ = std::make_unique<ScheduleRoutes>(log_, nullptr, 1000, [this] { return now_.load(); });
    options.schedules = routes_.get();
  }
  void TearDown() override {
    if (scheduler_) scheduler_->Stop();
    ServerFixture::TearDown();
    scheduler_.reset();
    routes_.reset();
  }
  // Starts a scheduler named `daemon` that fires on the test's clock, rounds only when poked.
  std::unique_ptr<Scheduler> MakeScheduler(const std::string& daemon) {
    SchedulerOptions options;
    options.daemon_id = daemon;
    options.poll = std::chrono::hours(1);
    options.clock = [this] { return now_.load(); };
    return std::make_unique<Scheduler>(log_.schedules(), *manager_, nullptr, options);
  }
  json::value Show(const std::string& id) {
    return Call("GET", "/v1/schedules/" + id + "?firings=100");
  }
  // Pokes until the schedule's last tick is `tick` and nothing is pending.
  bool WaitHandled(Scheduler& scheduler, const std::string& id, const std::string& tick) {
    return Eventually([&] {
      scheduler.Poke();
      json::value s = Show(id);
      return s.is_object() && s.at("lastTick") == json::value(tick) &&
             s.at("pendingTick").is_null();
    });
  }
  std::size_t Count(const std::string& agent, const std::string& kind) {
    std::size_t n = 0;
    for (const json::value& e : AllEvents(agent)) n += Kind(e) == kind;
    return n;
  }

  std::atomic<TimestampMs> now_{kMonday9 - 30'000};
  std::unique_ptr<ScheduleRoutes> routes_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(SchedulesHttpTest, ACronScheduleFiresEachTickOnceIntoItsAgent) {
  const std::string agent = CreateAgent();
  ASSERT_FALSE(agent.empty());
  json::value made =
      Call("POST", "/v1/schedules",
           R"({"id":"standup","cron":"0 9 * * 1-5","agent":")" + agent +
               R"(","prompt":"Standup for {{date}} at {{time}} ({{tick}}){{nope}}"})",
           201);
  EXPECT_EQ(made.at("nextTick"), "2027-01-04T09:00:00Z");
  EXPECT_EQ(made.at("timezone"), "UTC");
  EXPECT_EQ(made.at("missed"), "skip");
  EXPECT_TRUE(made.at("lastTick").is_null());
  // Two daemons' schedulers on one store: each tick fires once.
  scheduler_ = MakeScheduler("d1");
  std::unique_ptr<Scheduler> other = MakeScheduler("d2");
  now_ = kMonday9 + 1500;
  other->Poke();
  ASSERT_TRUE(WaitHandled(*scheduler_, "standup", "2027-01-04T09:00:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  for (int i = 0; i < 3; ++i) scheduler_->Poke(), other->Poke();
  json::value shown = Show("standup");
  ASSERT_EQ(shown.at("firings").as_array().size(), 1u) << shown;
  const json::value& firing = shown.at("firings").at(0);
  EXPECT_EQ(firing.at("outcome"), "fired");
  EXPECT_EQ(firing.at("agent"), json::value(agent));
  EXPECT_EQ(firing.at("clientMessageId"), "schedule:standup:2027-01-04T09:00:00Z");
  EXPECT_EQ(firing.at("turnOutcome"), "completed");
  std::size_t fired = 0;
  for (const json::value& e : AllEvents(agent)) {
    if (Kind(e) == "automation.fired") {
      ++fired;
      EXPECT_EQ(e.at("payload").at("source"), "schedule");
      EXPECT_EQ(e.at("payload").at("id"), "standup");
      EXPECT_EQ(e.at("payload").at("key"), "2027-01-04T09:00:00Z");
      EXPECT_EQ(e.at("payload").at("missingFields"), json::array{"nope"});
    }
    if (Kind(e) == "user.message")
      EXPECT_EQ(e.at("payload").at("text"),
                "Standup for 2027-01-04 at 09:00 (2027-01-04T09:00:00Z)");
  }
  EXPECT_EQ(fired, 1u);
  EXPECT_EQ(Count(agent, "turn.started"), 1u);
  other->Stop();
  // The next day's tick.
  now_ = kMonday9 + 86'400'000 + 20'000;
  ASSERT_TRUE(WaitHandled(*scheduler_, "standup", "2027-01-05T09:00:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  EXPECT_EQ(Count(agent, "automation.fired"), 2u);
  // Every daemon down from Wednesday to Friday noon: three ticks missed, skipped by the policy
  // and recorded as one row; nothing fires.
  now_ = kMonday9 + 4 * 86'400'000 + 3 * 3'600'000;
  ASSERT_TRUE(WaitHandled(*scheduler_, "standup", "2027-01-08T09:00:00Z"));
  shown = Show("standup");
  const json::value& skipped = shown.at("firings").at(0);
  EXPECT_EQ(skipped.at("outcome"), "skipped");
  EXPECT_EQ(skipped.at("ticks"), 3);
  EXPECT_EQ(skipped.at("firstTick"), "2027-01-06T09:00:00Z");
  EXPECT_EQ(shown.at("nextTick"), "2027-01-11T09:00:00Z");
  EXPECT_EQ(Count(agent, "automation.fired"), 2u);
}

TEST_F(SchedulesHttpTest, RunOnceFiresTheNewestMissedTickAndSkipsTheRest) {
  const std::string agent = CreateAgent();
  now_ = kMonday9;
  Call("POST", "/v1/schedules",
       R"({"id":"sweep","every":"5m","missed":"run-once","agent":")" + agent +
           R"(","prompt":"sweep {{tick}}"})",
       201);
  scheduler_ = MakeScheduler("d1");
  // Three ticks came and went while no daemon ran; the newest is 90 s old.
  now_ = kMonday9 + 15 * 60'000 + 90'000;
  ASSERT_TRUE(WaitHandled(*scheduler_, "sweep", "2027-01-04T09:15:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  json::value shown = Show("sweep");
  json::array& firings = shown.at("firings").as_array();
  ASSERT_EQ(firings.size(), 2u) << shown;
  EXPECT_EQ(firings[0].at("tick"), "2027-01-04T09:15:00Z");
  EXPECT_EQ(firings[0].at("outcome"), "fired");
  EXPECT_EQ(firings[1].at("outcome"), "skipped");
  EXPECT_EQ(firings[1].at("firstTick"), "2027-01-04T09:05:00Z");
  EXPECT_EQ(firings[1].at("tick"), "2027-01-04T09:10:00Z");
  EXPECT_EQ(firings[1].at("ticks"), 2);
  EXPECT_EQ(Count(agent, "automation.fired"), 1u);
  // On time again: the next tick fires as usual.
  now_ = kMonday9 + 20 * 60'000 + 10;
  ASSERT_TRUE(WaitHandled(*scheduler_, "sweep", "2027-01-04T09:20:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  EXPECT_EQ(Count(agent, "automation.fired"), 2u);
}

TEST_F(SchedulesHttpTest, APendingTickIsFiredAgainByTheNextLeaseHolderRepeatingNothing) {
  const std::string agent = CreateAgent();
  now_ = kMonday9;
  Call("POST", "/v1/schedules",
       R"({"id":"hourly","every":"1h","agent":")" + agent + R"(","prompt":"hourly {{tick}}"})",
       201);
  ScheduleStore& store = log_.schedules();
  const TimestampMs tick = kMonday9 + 3'600'000;
  // A daemon claimed the tick, marked it pending and died before its first step; it is found two
  // minutes later, far past the grace: it fires all the same, never skipped as missed.
  ASSERT_TRUE(store.ClaimSchedule("hourly", "dead", tick + 5, 1000).ok());
  ASSERT_TRUE(store.AdvanceSchedule("hourly", "dead", 0, tick, {}).ok());
  now_ = tick + 30 * 60'000;
  scheduler_ = MakeScheduler("d2");
  ASSERT_TRUE(WaitHandled(*scheduler_, "hourly", "2027-01-04T10:00:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  json::value shown = Show("hourly");
  EXPECT_EQ(shown.at("firings").at(0).at("tick"), "2027-01-04T10:00:00Z");
  EXPECT_EQ(shown.at("firings").at(0).at("outcome"), "fired");
  EXPECT_EQ(Count(agent, "automation.fired"), 1u);
  // A daemon fired it whole and died before recording it: the tick is pending again. Fired again
  // under the same key, it repeats nothing.
  scheduler_->Stop();  // frees its lease
  ASSERT_TRUE(store.ClaimSchedule("hourly", "dead", now_, 1000).ok());
  ASSERT_TRUE(store.AdvanceSchedule("hourly", "dead", tick, tick, {}).ok());
  now_ = tick + 3'600'000 + 5000;  // the dead daemon's lease expired; 11:00 came due
  scheduler_ = MakeScheduler("d3");
  ASSERT_TRUE(WaitHandled(*scheduler_, "hourly", "2027-01-04T11:00:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  // Ticks 10:00 (again: a duplicate) and 11:00 (on time); 10:00 once in the log.
  std::size_t ten = 0;
  for (const json::value& e : AllEvents(agent)) {
    if (Kind(e) == "automation.fired") ten += e.at("payload").at("key") == "2027-01-04T10:00:00Z";
  }
  EXPECT_EQ(ten, 1u);
  EXPECT_EQ(Count(agent, "automation.fired"), 2u);
  EXPECT_EQ(Count(agent, "turn.started"), 2u);
}

TEST_F(SchedulesHttpTest, ATemplateMakesOneAgentPerTickTitledWithTheDate) {
  now_ = kMonday9 - 1000;
  json::value made = Call("POST", "/v1/schedules",
                          R"({"id":"nightly","cron":"0 10 * * *","timezone":"Europe/Berlin",
                              "template":{"provider":"scripted","cwd":"/tmp",
                                          "title":"Nightly {{date}}"},
                              "prompt":"Run the suite"})",
                          201);
  EXPECT_EQ(made.at("nextTick"), "2027-01-04T09:00:00Z");  // 10:00 in Berlin's winter
  scheduler_ = MakeScheduler("d1");
  now_ = kMonday9 + 10;
  ASSERT_TRUE(WaitHandled(*scheduler_, "nightly", "2027-01-04T09:00:00Z"));
  json::value firing = Show("nightly").at("firings").at(0);
  const std::string agent(firing.at("agent").as_string());
  ASSERT_TRUE(WaitIdle(agent));
  EXPECT_EQ(Snapshot(agent).at("title"), "Nightly 2027-01-04");
  EXPECT_EQ(Count(agent, "automation.fired"), 1u);
  EXPECT_EQ(Count(agent, "user.message"), 1u);
}

TEST_F(SchedulesHttpTest, PauseResumeDeleteAndBadInput) {
  const std::string agent = CreateAgent();
  now_ = kMonday9;
  Call("POST", "/v1/schedules",
       R"({"id":"p","every":"1m","agent":")" + agent + R"(","prompt":"x"})", 201);
  // A second schedule of that id, a bad definition, an unknown schedule.
  json::value dup =
      Call("POST", "/v1/schedules", R"({"id":"p","every":"1m","agent":"a","prompt":"x"})", 409);
  EXPECT_EQ(dup.at("error").at("code"), "already_exists");
  json::value never = Call("POST", "/v1/schedules",
                           R"({"id":"n","cron":"0 0 30 2 *","agent":"a","prompt":"x"})", 400);
  EXPECT_NE(std::string(never.at("error").at("message").as_string()).find("never fires"),
            std::string::npos);
  Call("POST", "/v1/schedules", R"({"id":"z","every":"1m","agent":"a"})", 400);
  Call("POST", "/v1/schedules", "not json", 400);
  Call("GET", "/v1/schedules/none", "", 404);
  Call("POST", "/v1/schedules/none/pause", "{}", 404);
  Call("DELETE", "/v1/schedules/none", "", 404);
  Call("GET", "/v1/schedules/p?firings=0", "", 400);
  json::value paused = Call("POST", "/v1/schedules/p/pause", "{}");
  EXPECT_EQ(paused.at("paused"), true);
  EXPECT_TRUE(paused.at("nextTick").is_null());
  // Paused for ten minutes: nothing fires, and resuming does not fire the paused ticks.
  scheduler_ = MakeScheduler("d1");
  now_ = kMonday9 + 10 * 60'000 + 30'000;
  scheduler_->Poke();
  json::value resumed = Call("POST", "/v1/schedules/p/resume", "{}");
  EXPECT_EQ(resumed.at("paused"), false);
  EXPECT_EQ(resumed.at("nextTick"), "2027-01-04T09:11:00Z");
  now_ = kMonday9 + 11 * 60'000 + 5;
  ASSERT_TRUE(WaitHandled(*scheduler_, "p", "2027-01-04T09:11:00Z"));
  ASSERT_TRUE(WaitIdle(agent));
  EXPECT_EQ(Count(agent, "automation.fired"), 1u);
  json::value listed = Call("GET", "/v1/schedules");
  ASSERT_EQ(listed.at("schedules").as_array().size(), 1u);
  Call("DELETE", "/v1/schedules/p");
  EXPECT_TRUE(Call("GET", "/v1/schedules").at("schedules").as_array().empty());
}

TEST_F(SchedulesHttpTest, TheWebSocketProtocolManagesSchedules) {
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  auto request = [&](const std::string& text) {
    EXPECT_TRUE(ws.Send(text));
    std::optional<std::string> reply = ws.Read();
    return reply ? ParseOrNull(*reply) : json::value();
  };
  json::value made = request(
      R"({"type":"schedules.create","id":"1","schedule":{"id":"w","every":"1h","agent":"a","prompt":"p"}})");
  EXPECT_EQ(made.at("type"), "schedule");
  EXPECT_EQ(made.at("id"), "1");
  EXPECT_EQ(made.at("schedule").at("every"), "1h");
  json::value listed = request(R"({"type":"schedules.list","id":"2"})");
  EXPECT_EQ(listed.at("type"), "schedules");
  EXPECT_EQ(listed.at("schedules").as_array().size(), 1u);
  json::value paused = request(R"({"type":"schedules.pause","id":"3","schedule":"w"})");
  EXPECT_EQ(paused.at("schedule").at("paused"), true);
  json::value shown = request(R"({"type":"schedules.show","id":"4","schedule":"w"})");
  EXPECT_TRUE(shown.at("schedule").at("firings").as_array().empty());
  json::value bad = request(
      R"({"type":"schedules.create","id":"5","schedule":{"id":"x","every":"1h","prompt":"p"}})");
  EXPECT_EQ(bad.at("type"), "error");
  EXPECT_EQ(bad.at("error").at("code"), "invalid_argument");
  json::value missing = request(R"({"type":"schedules.resume","id":"6","schedule":"none"})");
  EXPECT_EQ(missing.at("error").at("code"), "not_found");
  json::value deleted = request(R"({"type":"schedules.delete","id":"7","schedule":"w"})");
  EXPECT_EQ(deleted.at("type"), "schedule.deleted");
  EXPECT_TRUE(Call("GET", "/v1/schedules").at("schedules").as_array().empty());
}

// ---- The pure parts ----

TEST(Schedules, DefinitionsAreReadStrictlyAndWrittenBackTheSame) {
  const ScheduleDefinition s = DefinitionOf(
      R"({"id":"a","cron":"*/15 9-17 * * mon-fri","timezone":"Europe/Berlin","agent":"ses_1",
          "prompt":"p","missed":"run-once"})");
  EXPECT_EQ(s.missed, MissedPolicy::kRunOnce);
  const json::value again = ScheduleToJson(s);
  EXPECT_EQ(json::serialize(ScheduleToJson(DefinitionOf(json::serialize(again)))),
            json::serialize(again));
  EXPECT_EQ(again.at("timezone"), "Europe/Berlin");
  EXPECT_EQ(
      ScheduleToJson(
          DefinitionOf(
              R"({"id":"b","every":"90m","template":{"provider":"scripted","cwd":"/tmp"},"prompt":"p"})"))
          .at("every"),
      "90m");
  EXPECT_NE(RefusalOf(R"({"id":"a","cron":"* * * * *","every":"1m","agent":"x","prompt":"p"})")
                .find("one of them"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","agent":"x","prompt":"p"})").find("one of them"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"1h","agent":"x","template":{"provider":"p","cwd":"/"},
                          "prompt":"p"})")
                .find("one of them"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"1h","agent":"x","prompt":"p","color":1})")
                .find("unknown member \"color\""),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"1h","agent":"x","prompt":"p","missed":"twice"})")
                .find("missed"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"1h","timezone":"UTC","agent":"x","prompt":"p"})")
                .find("timezone"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","cron":"0 9 * * *","timezone":"Mars/Olympus","agent":"x",
                          "prompt":"p"})")
                .find("timezone"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a b","every":"1h","agent":"x","prompt":"p"})").find("\"id\""),
            std::string::npos);
  EXPECT_NE(
      RefusalOf(R"({"id":"a","every":"1h","agent":"x","prompt":"{{unclosed"})").find("prompt"),
      std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"10x","agent":"x","prompt":"p"})").find("every"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","cron":"61 * * * *","agent":"x","prompt":"p"})").find("cron"),
            std::string::npos);
  // The floor (one a minute by default): an interval under it, cron ticks closer than it.
  EXPECT_NE(RefusalOf(R"({"id":"a","every":"30s","agent":"x","prompt":"p"})").find("floor"),
            std::string::npos);
  EXPECT_NE(RefusalOf(R"({"id":"a","cron":"*/2 * * * *","agent":"x","prompt":"p"})", 300'000)
                .find("floor"),
            std::string::npos);
  EXPECT_NE(
      RefusalOf(R"({"id":"a","cron":"0 0 30 2 *","agent":"x","prompt":"p"})").find("never fires"),
      std::string::npos);
}

TEST(Schedules, IntervalTicksCountFromTheCreation) {
  const ScheduleDefinition s = DefinitionOf(R"({"id":"a","every":"2s","agent":"x","prompt":"p"})");
  EXPECT_EQ(NextTick(s, 1000, 1000), 3000);
  EXPECT_EQ(NextTick(s, 1000, 2999), 3000);
  EXPECT_EQ(NextTick(s, 1000, 3000), 5000);
  EXPECT_EQ(NextTick(s, 1000, 0), 3000);
  EXPECT_EQ(ParseInterval("1d").value(), 86'400'000);
  EXPECT_FALSE(ParseInterval("0s").ok());
  EXPECT_FALSE(ParseInterval("-1s").ok());
  EXPECT_FALSE(ParseInterval("1.5h").ok());
  EXPECT_FALSE(ParseInterval("99999999999d").ok());
}

TEST(Schedules, PlansFireTheOldestTickOnTimeAndRecordTheMissedOnes) {
  const ScheduleDefinition skip =
      DefinitionOf(R"({"id":"a","every":"1m","agent":"x","prompt":"p"})");
  ScheduleRecord record;
  record.created_ms = 0;
  // Nothing due yet.
  TickPlan plan = PlanTicks(skip, record, 59'999);
  EXPECT_FALSE(plan.fire);
  EXPECT_FALSE(plan.skipped);
  // Due and on time.
  plan = PlanTicks(skip, record, 60'000);
  EXPECT_EQ(plan.fire, 60'000);
  EXPECT_FALSE(plan.skipped);
  // Two late, one on time (at most 60 s old): the late ones are skipped, the next fires.
  plan = PlanTicks(skip, record, 190'000);
  EXPECT_EQ(plan.fire, 180'000);
  ASSERT_TRUE(plan.skipped);
  EXPECT_EQ(plan.skipped->first_tick_ms, 60'000);
  EXPECT_EQ(plan.skipped->tick_ms, 120'000);
  EXPECT_EQ(plan.skipped->ticks, 2);
  EXPECT_EQ(plan.handled_through, 120'000);
  // All late (every five minutes, the newest 90 s old): skip fires nothing; run-once fires the
  // newest.
  ScheduleDefinition five = skip;
  five.every_ms = 300'000;
  plan = PlanTicks(five, record, 990'000);
  EXPECT_FALSE(plan.fire);
  EXPECT_EQ(plan.skipped->ticks, 3);
  EXPECT_EQ(plan.skipped->first_tick_ms, 300'000);
  EXPECT_EQ(plan.handled_through, 900'000);
  ScheduleDefinition once = five;
  once.missed = MissedPolicy::kRunOnce;
  plan = PlanTicks(once, record, 990'000);
  EXPECT_EQ(plan.fire, 900'000);
  EXPECT_EQ(plan.skipped->ticks, 2);
  EXPECT_EQ(plan.skipped->tick_ms, 600'000);
  EXPECT_EQ(plan.handled_through, 600'000);
  // Run-once of a single late tick: it fires, nothing is skipped.
  plan = PlanTicks(once, record, 390'000);
  EXPECT_EQ(plan.fire, 300'000);
  EXPECT_FALSE(plan.skipped);
  EXPECT_EQ(plan.handled_through, 0);
  // After the last tick handled.
  record.last_tick_ms = 180'000;
  plan = PlanTicks(skip, record, 240'500);
  EXPECT_EQ(plan.fire, 240'000);
}

TEST(Schedules, TickKeysAndFields) {
  EXPECT_EQ(TickKey(kMonday9 + 999), "2027-01-04T09:00:00Z");
  const ScheduleDefinition s = DefinitionOf(
      R"({"id":"n","cron":"30 23 * * *","timezone":"Europe/Berlin","agent":"x","prompt":"p"})");
  // 22:30 UTC is 23:30 in Berlin, on the same day.
  const json::value fields = TickFields(s, kMonday9 + 13 * 3'600'000 + 30 * 60'000);
  EXPECT_EQ(fields.at("date"), "2027-01-04");
  EXPECT_EQ(fields.at("time"), "23:30");
  EXPECT_EQ(fields.at("tick"), "2027-01-04T22:30:00Z");
  EXPECT_EQ(fields.at("schedule"), "n");
}

}  // namespace
}  // namespace agentstream::server::testing
