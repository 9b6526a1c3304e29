// The ScheduleStore conformance suite (store/schedule_store.h): schedules listed, paused, resumed
// and deleted; their leases claimed, renewed, taken over and released; their progress advanced
// only by the lease's holder, each tick's firing stored once and the newest 100 kept; the limits
// of what is stored. Every backend passes it unchanged.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "store/test_backend.h"

namespace agentstream {
namespace {

constexpr std::int64_t kLeaseTtl = 30'000;

ScheduleRecord NewSchedule(const std::string& id, TimestampMs created_ms = 1000) {
  ScheduleRecord s;
  s.id = id;
  s.definition = R"({"cron":"*/5 * * * *","tz":"UTC","agent":"ses_)" + id + R"("})";
  s.created_ms = created_ms;
  s.updated_ms = created_ms;
  s.last_tick_ms = created_ms;
  return s;
}

ScheduleFiring FiredAt(const std::string& schedule, TimestampMs tick_ms,
                       const std::string& agent = "ses_1") {
  ScheduleFiring f;
  f.schedule_id = schedule;
  f.tick_ms = tick_ms;
  f.first_tick_ms = tick_ms;
  f.recorded_ms = tick_ms + 5;
  f.outcome = "fired";
  f.agent = agent;
  f.client_message_id = "sch-" + schedule + "-" + std::to_string(tick_ms);
  f.turn_id = "turn_" + std::to_string(tick_ms);
  return f;
}

class ScheduleStoreConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  }
  ScheduleStore& schedules() { return backend_->log().schedules(); }

  // Adds schedule `id` and leases it to `owner` at `now_ms`.
  void AddClaimed(const std::string& id, const std::string& owner, TimestampMs now_ms) {
    ASSERT_TRUE(schedules().AddSchedule(NewSchedule(id)).ok());
    auto claimed = schedules().ClaimSchedule(id, owner, now_ms, kLeaseTtl);
    ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  }

  // The ticks of the newest `limit` firings of `id`, newest first.
  std::vector<TimestampMs> Ticks(const std::string& id, std::size_t limit = 1000) {
    std::vector<TimestampMs> out;
    auto firings = schedules().ListFirings(id, limit);
    EXPECT_TRUE(firings.ok()) << firings.status().ToString();
    if (firings.ok())
      for (const ScheduleFiring& f : *firings) out.push_back(f.tick_ms);
    return out;
  }

  std::unique_ptr<testing::Backend> backend_;
};

TEST_P(ScheduleStoreConformance, SchedulesAreAddedOnceListedByIdAndFound) {
  ScheduleRecord b = NewSchedule("nightly-b", 2000);
  b.paused = true;
  b.pending_tick_ms = 7;  // not taken: a new schedule has no pending tick and no lease
  b.lease_owner = "daemon-x";
  b.lease_expires_ms = 99'000;
  ASSERT_TRUE(schedules().AddSchedule(b).ok());
  ASSERT_TRUE(schedules().AddSchedule(NewSchedule("a_hourly")).ok());
  ScheduleRecord again = NewSchedule("nightly-b", 3000);
  EXPECT_EQ(schedules().AddSchedule(again).code(), ErrorCode::kAlreadyExists);

  auto list = schedules().ListSchedules();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "a_hourly");  // by id
  EXPECT_EQ((*list)[1].id, "nightly-b");

  auto stored = schedules().GetSchedule("nightly-b");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->definition, b.definition);
  EXPECT_TRUE(stored->paused);
  EXPECT_EQ(stored->created_ms, 2000);  // the first one's, kept
  EXPECT_EQ(stored->updated_ms, 2000);
  EXPECT_EQ(stored->last_tick_ms, 2000);
  EXPECT_EQ(stored->pending_tick_ms, 0);
  EXPECT_EQ(stored->lease_owner, "");
  EXPECT_EQ(stored->lease_expires_ms, 0);
  EXPECT_FALSE((*list)[0].paused);

  EXPECT_EQ(schedules().GetSchedule("nope").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(schedules().ListFirings("nope", 10)->empty());
}

TEST_P(ScheduleStoreConformance, TextTheStoreCannotHoldIsRefused) {
  auto refused = [&](const ScheduleRecord& s) { return schedules().AddSchedule(s).code(); };
  EXPECT_EQ(refused(NewSchedule("")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(NewSchedule("has space")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(NewSchedule("ümlaut")), ErrorCode::kInvalidArgument);
  EXPECT_EQ(refused(NewSchedule(std::string(65, 'x'))), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(schedules().AddSchedule(NewSchedule(std::string(64, 'x'))).ok());
  ScheduleRecord big = NewSchedule("big");
  big.definition = std::string(64 * 1024 + 1, ' ');
  EXPECT_EQ(refused(big), ErrorCode::kInvalidArgument);
  ScheduleRecord nul = NewSchedule("nul");
  nul.definition = std::string("{\"a\":\"\0\"}", 10);
  EXPECT_EQ(refused(nul), ErrorCode::kInvalidArgument);
  ScheduleRecord bad_utf8 = NewSchedule("bad");
  bad_utf8.definition = "{\"a\":\"\xff\"}";
  EXPECT_EQ(refused(bad_utf8), ErrorCode::kInvalidArgument);
  big.definition = std::string(64 * 1024, ' ');  // at the limit
  EXPECT_TRUE(schedules().AddSchedule(big).ok());
  EXPECT_EQ(schedules().ListSchedules()->size(), 2u);

  EXPECT_EQ(schedules().ClaimSchedule("big", "", 1000, kLeaseTtl).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(schedules().ClaimSchedule("big", "daemon-a", 1000, 0).status().code(),
            ErrorCode::kInvalidArgument);
  ASSERT_TRUE(schedules().ClaimSchedule("big", "daemon-a", 1000, kLeaseTtl).ok());
  ScheduleFiring long_detail = FiredAt("big", 60'000);
  long_detail.outcome = "failed";
  long_detail.detail = std::string(1025, 'e');
  EXPECT_EQ(schedules().AdvanceSchedule("big", "daemon-a", 60'000, 0, {long_detail}).code(),
            ErrorCode::kInvalidArgument);
  ScheduleFiring nul_agent = FiredAt("big", 60'000, std::string("ses\0", 4));
  EXPECT_EQ(schedules().AdvanceSchedule("big", "daemon-a", 60'000, 0, {nul_agent}).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      schedules().AdvanceSchedule("big", "daemon-a", 60'000, 0, {FiredAt("other", 60'000)}).code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(schedules().AdvanceSchedule("big", "", 60'000, 0, {}).code(),
            ErrorCode::kInvalidArgument);
  // Refused whole: nothing of them was stored.
  EXPECT_TRUE(Ticks("big").empty());
  EXPECT_EQ(schedules().GetSchedule("big")->last_tick_ms, 1000);
  long_detail.detail = std::string(1024, 'e');  // at the limit
  ASSERT_TRUE(schedules().AdvanceSchedule("big", "daemon-a", 60'000, 0, {long_detail}).ok());
  EXPECT_EQ(schedules().ListFirings("big", 1)->at(0).detail, long_detail.detail);
}

TEST_P(ScheduleStoreConformance, PauseAndResumeSkipThePausedTicks) {
  ASSERT_TRUE(schedules().AddSchedule(NewSchedule("p")).ok());
  ASSERT_TRUE(schedules().SetSchedulePaused("p", true, 5000).ok());
  auto paused = schedules().GetSchedule("p");
  ASSERT_TRUE(paused.ok());
  EXPECT_TRUE(paused->paused);
  EXPECT_EQ(paused->updated_ms, 5000);
  EXPECT_EQ(paused->last_tick_ms, 1000);
  ASSERT_TRUE(schedules().SetSchedulePaused("p", true, 6000).ok());  // again: no change
  EXPECT_EQ(schedules().GetSchedule("p")->updated_ms, 5000);

  ASSERT_TRUE(schedules().SetSchedulePaused("p", false, 9000).ok());
  auto resumed = schedules().GetSchedule("p");
  EXPECT_FALSE(resumed->paused);
  EXPECT_EQ(resumed->updated_ms, 9000);
  EXPECT_EQ(resumed->last_tick_ms, 9000);  // the paused time's ticks are not missed ones
  ASSERT_TRUE(schedules().SetSchedulePaused("p", false, 10'000).ok());  // again: no change
  EXPECT_EQ(schedules().GetSchedule("p")->last_tick_ms, 9000);
  EXPECT_EQ(schedules().GetSchedule("p")->updated_ms, 9000);

  // Resuming never moves last_tick_ms back.
  ASSERT_TRUE(schedules().ClaimSchedule("p", "daemon-a", 10'000, kLeaseTtl).ok());
  ASSERT_TRUE(schedules().AdvanceSchedule("p", "daemon-a", 20'000, 0, {}).ok());
  ASSERT_TRUE(schedules().SetSchedulePaused("p", true, 12'000).ok());
  ASSERT_TRUE(schedules().SetSchedulePaused("p", false, 15'000).ok());
  EXPECT_EQ(schedules().GetSchedule("p")->last_tick_ms, 20'000);

  EXPECT_EQ(schedules().SetSchedulePaused("nope", true, 1).code(), ErrorCode::kNotFound);
  EXPECT_EQ(schedules().SetSchedulePaused("nope", false, 1).code(), ErrorCode::kNotFound);
}

TEST_P(ScheduleStoreConformance, DeleteRemovesTheScheduleAndItsFirings) {
  AddClaimed("d", "daemon-a", 1000);
  AddClaimed("kept", "daemon-a", 1000);
  ASSERT_TRUE(schedules().AdvanceSchedule("d", "daemon-a", 60'000, 0, {FiredAt("d", 60'000)}).ok());
  ASSERT_TRUE(
      schedules().AdvanceSchedule("kept", "daemon-a", 60'000, 0, {FiredAt("kept", 60'000)}).ok());
  ASSERT_TRUE(schedules().DeleteSchedule("d").ok());
  EXPECT_EQ(schedules().GetSchedule("d").status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(Ticks("d").empty());
  EXPECT_EQ(schedules().DeleteSchedule("d").code(), ErrorCode::kNotFound);
  EXPECT_EQ(Ticks("kept"), std::vector<TimestampMs>{60'000});
  // The id is free again, with no history.
  ASSERT_TRUE(schedules().AddSchedule(NewSchedule("d")).ok());
  EXPECT_TRUE(Ticks("d").empty());
  EXPECT_EQ(schedules().GetSchedule("d")->lease_owner, "");
}

TEST_P(ScheduleStoreConformance, ALeaseIsGrantedRenewedRefusedAndTakenOverWhenExpired) {
  ASSERT_TRUE(schedules().AddSchedule(NewSchedule("l")).ok());
  auto granted = schedules().ClaimSchedule("l", "daemon-a", 10'000, kLeaseTtl);
  ASSERT_TRUE(granted.ok()) << granted.status().ToString();
  EXPECT_EQ(granted->id, "l");
  EXPECT_EQ(granted->lease_owner, "daemon-a");
  EXPECT_EQ(granted->lease_expires_ms, 40'000);
  EXPECT_EQ(granted->definition, NewSchedule("l").definition);

  // Live at 39'999: refused, naming the holder.
  auto refused = schedules().ClaimSchedule("l", "daemon-b", 39'999, kLeaseTtl);
  ASSERT_EQ(refused.status().code(), ErrorCode::kConflict);
  EXPECT_NE(refused.status().message().find("daemon-a"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(schedules().GetSchedule("l")->lease_owner, "daemon-a");

  // The holder renews.
  auto renewed = schedules().ClaimSchedule("l", "daemon-a", 20'000, kLeaseTtl);
  ASSERT_TRUE(renewed.ok()) << renewed.status().ToString();
  EXPECT_EQ(renewed->lease_expires_ms, 50'000);
  EXPECT_EQ(schedules().ClaimSchedule("l", "daemon-b", 40'000, kLeaseTtl).status().code(),
            ErrorCode::kConflict);

  // Expired at 50'000: another daemon takes it over.
  auto taken = schedules().ClaimSchedule("l", "daemon-b", 50'000, kLeaseTtl);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(taken->lease_owner, "daemon-b");
  EXPECT_EQ(taken->lease_expires_ms, 80'000);
  auto stored = schedules().GetSchedule("l");
  EXPECT_EQ(stored->lease_owner, "daemon-b");
  EXPECT_EQ(stored->lease_expires_ms, 80'000);

  EXPECT_EQ(schedules().ClaimSchedule("nope", "daemon-a", 1, kLeaseTtl).status().code(),
            ErrorCode::kNotFound);
}

TEST_P(ScheduleStoreConformance, OnlyTheHolderAdvancesAndEachTickIsStoredOnce) {
  AddClaimed("t", "daemon-a", 1000);
  // The pending tick is written before the firing's first step.
  ASSERT_TRUE(schedules().AdvanceSchedule("t", "daemon-a", 1000, 60'000, {}).ok());
  EXPECT_EQ(schedules().GetSchedule("t")->pending_tick_ms, 60'000);
  ScheduleFiring first = FiredAt("t", 60'000, "ses_first");
  ASSERT_TRUE(schedules().AdvanceSchedule("t", "daemon-a", 60'000, 0, {first}).ok());
  auto advanced = schedules().GetSchedule("t");
  EXPECT_EQ(advanced->last_tick_ms, 60'000);
  EXPECT_EQ(advanced->pending_tick_ms, 0);  // cleared

  // A second firing of the tick keeps the first; last_tick_ms never goes back.
  ScheduleFiring again = FiredAt("t", 60'000, "ses_second");
  ScheduleFiring skipped = FiredAt("t", 180'000);
  skipped.first_tick_ms = 120'000;
  skipped.ticks = 2;
  skipped.outcome = "skipped";
  skipped.agent = skipped.client_message_id = skipped.turn_id = "";
  skipped.detail = "missed while no daemon ran";
  ASSERT_TRUE(schedules().AdvanceSchedule("t", "daemon-a", 30'000, 0, {again, skipped}).ok());
  EXPECT_EQ(schedules().GetSchedule("t")->last_tick_ms, 60'000);
  auto firings = schedules().ListFirings("t", 10);
  ASSERT_TRUE(firings.ok()) << firings.status().ToString();
  ASSERT_EQ(firings->size(), 2u);
  const ScheduleFiring& newest = (*firings)[0];  // newest tick first
  EXPECT_EQ(newest.schedule_id, "t");
  EXPECT_EQ(newest.tick_ms, 180'000);
  EXPECT_EQ(newest.first_tick_ms, 120'000);
  EXPECT_EQ(newest.ticks, 2);
  EXPECT_EQ(newest.outcome, "skipped");
  EXPECT_EQ(newest.agent, "");
  EXPECT_EQ(newest.detail, "missed while no daemon ran");
  const ScheduleFiring& kept = (*firings)[1];
  EXPECT_EQ(kept.tick_ms, 60'000);
  EXPECT_EQ(kept.agent, "ses_first");
  EXPECT_EQ(kept.recorded_ms, 60'005);
  EXPECT_EQ(kept.outcome, "fired");
  EXPECT_EQ(kept.client_message_id, "sch-t-60000");
  EXPECT_EQ(kept.turn_id, "turn_60000");
  EXPECT_EQ(kept.ticks, 1);

  // Taken over: the old holder advances nothing.
  ASSERT_TRUE(schedules().AdvanceSchedule("t", "daemon-a", 180'000, 240'000, {}).ok());
  ASSERT_TRUE(schedules().ClaimSchedule("t", "daemon-b", 1'000'000, kLeaseTtl).ok());
  EXPECT_EQ(schedules()
                .AdvanceSchedule("t", "daemon-a", 300'000, 0, {FiredAt("t", 240'000, "ses_stale")})
                .code(),
            ErrorCode::kConflict);
  auto unchanged = schedules().GetSchedule("t");
  EXPECT_EQ(unchanged->last_tick_ms, 180'000);
  EXPECT_EQ(unchanged->pending_tick_ms, 240'000);  // the new holder fires it again
  EXPECT_EQ(Ticks("t"), (std::vector<TimestampMs>{180'000, 60'000}));
  ASSERT_TRUE(schedules()
                  .AdvanceSchedule("t", "daemon-b", 240'000, 0, {FiredAt("t", 240'000, "ses_new")})
                  .ok());
  EXPECT_EQ(schedules().ListFirings("t", 1)->at(0).agent, "ses_new");

  EXPECT_EQ(schedules().AdvanceSchedule("nope", "daemon-a", 1, 0, {}).code(), ErrorCode::kNotFound);
}

TEST_P(ScheduleStoreConformance, OnlyTheNewestFiringsAreKept) {
  AddClaimed("k", "daemon-a", 1000);
  constexpr TimestampMs kMinute = 60'000;
  // 105 ticks: one at a time, then five at once (the call's firings are trimmed too).
  for (int i = 1; i <= 100; ++i) {
    ASSERT_TRUE(schedules()
                    .AdvanceSchedule("k", "daemon-a", i * kMinute, 0, {FiredAt("k", i * kMinute)})
                    .ok());
  }
  std::vector<ScheduleFiring> five;
  for (int i = 101; i <= 105; ++i) five.push_back(FiredAt("k", i * kMinute));
  ASSERT_TRUE(schedules().AdvanceSchedule("k", "daemon-a", 105 * kMinute, 0, five).ok());
  const std::vector<TimestampMs> ticks = Ticks("k");
  ASSERT_EQ(ticks.size(), ScheduleStore::kKeptFirings);
  EXPECT_EQ(ticks.front(), 105 * kMinute);
  EXPECT_EQ(ticks.back(), 6 * kMinute);
  EXPECT_EQ(Ticks("k", 3), (std::vector<TimestampMs>{105 * kMinute, 104 * kMinute, 103 * kMinute}));
  EXPECT_TRUE(Ticks("k", 0).empty());
  // An old tick given again is stored and trimmed at once: it is not among the newest.
  ASSERT_TRUE(schedules().AdvanceSchedule("k", "daemon-a", 0, 0, {FiredAt("k", kMinute)}).ok());
  EXPECT_EQ(Ticks("k").back(), 6 * kMinute);
  EXPECT_EQ(Ticks("k").size(), ScheduleStore::kKeptFirings);
}

TEST_P(ScheduleStoreConformance, AReleaseFreesOnlyTheOwnLease) {
  AddClaimed("r", "daemon-a", 1000);
  ASSERT_TRUE(schedules().ReleaseSchedule("r", "daemon-b").ok());  // not its lease: nothing
  EXPECT_EQ(schedules().GetSchedule("r")->lease_owner, "daemon-a");
  ASSERT_TRUE(schedules().ReleaseSchedule("r", "daemon-a").ok());
  auto freed = schedules().GetSchedule("r");
  EXPECT_EQ(freed->lease_owner, "");
  // Free at once, also well before the old lease would have expired.
  auto taken = schedules().ClaimSchedule("r", "daemon-b", 1001, kLeaseTtl);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_EQ(taken->lease_owner, "daemon-b");
  // The released holder advances nothing.
  EXPECT_EQ(schedules().AdvanceSchedule("r", "daemon-a", 5000, 0, {}).code(), ErrorCode::kConflict);
  EXPECT_EQ(schedules().ReleaseSchedule("nope", "daemon-a").code(), ErrorCode::kNotFound);
}

TEST_P(ScheduleStoreConformance, TwoClaimsAtOnceLeaseTheScheduleToExactlyOne) {
  for (int round = 0; round < 5; ++round) {
    const std::string id = "race" + std::to_string(round);
    ASSERT_TRUE(schedules().AddSchedule(NewSchedule(id)).ok());
    std::atomic<int> granted{0};
    std::atomic<int> refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        auto r = schedules().ClaimSchedule(id, "daemon-" + std::to_string(t), 5000, kLeaseTtl);
        if (r.ok())
          ++granted;
        else if (r.status().code() == ErrorCode::kConflict)
          ++refused;
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(granted.load(), 1);
    EXPECT_EQ(refused.load(), 1);
    // The loser cannot advance it either.
    const std::string holder = schedules().GetSchedule(id)->lease_owner;
    const std::string loser = holder == "daemon-0" ? "daemon-1" : "daemon-0";
    EXPECT_EQ(schedules().AdvanceSchedule(id, loser, 6000, 0, {}).code(), ErrorCode::kConflict);
  }
}

TEST_P(ScheduleStoreConformance, SurvivesReopen) {
  AddClaimed("s", "daemon-a", 1000);
  ASSERT_TRUE(
      schedules().AdvanceSchedule("s", "daemon-a", 60'000, 120'000, {FiredAt("s", 60'000)}).ok());
  backend_->Reopen();
  if (GetParam() == "memory") return;  // nothing survives the memory log
  auto stored = schedules().GetSchedule("s");
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->last_tick_ms, 60'000);
  EXPECT_EQ(stored->pending_tick_ms, 120'000);
  EXPECT_EQ(stored->lease_owner, "daemon-a");
  EXPECT_EQ(Ticks("s"), std::vector<TimestampMs>{60'000});
}

INSTANTIATE_TEST_SUITE_P(Backends, ScheduleStoreConformance,
                         ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace agentstream
