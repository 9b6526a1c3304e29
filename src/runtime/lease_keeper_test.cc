// The lease keeper against a scripted store, on steady time stepped by hand. Rounds run when the
// test pokes the keeper, and the test steps time only between rounds (it waits for each round's
// last store call) and by less than a period since the last one began, so that no round starts
// by itself meanwhile.
#include "runtime/lease_keeper.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace agentstream::runtime {
namespace {

using namespace std::chrono_literals;

// Answers the keeper's calls as the test sets it, records them, and counts rounds (a round's
// last call is ListExpiredOwnerships). Thread-safe: the keeper calls it on its own thread.
class ScriptedStore final : public Coordination {
 public:
  std::mutex mu;
  std::condition_variable cv;
  // Set by the test.
  bool reachable = true;
  std::vector<SessionId> lose;  // reported lost by the next renewals
  std::vector<std::pair<SessionId, OwnerLease>> expired;
  // Seen by the test.
  std::vector<std::vector<std::pair<SessionId, std::uint64_t>>> renewals;
  std::vector<DaemonRecord> heartbeats;
  int rounds = 0;

  Result<std::vector<SessionId>> RenewOwnerships(
      const std::string& owner, const std::vector<std::pair<SessionId, std::uint64_t>>& leases,
      std::int64_t ttl_ms) override {
    std::lock_guard lock(mu);
    renewals.push_back(leases);
    if (!reachable) return Unreachable();
    return lose;
  }
  Status Heartbeat(const DaemonRecord& self, std::int64_t ttl_ms) override {
    std::lock_guard lock(mu);
    heartbeats.push_back(self);
    return reachable ? Status::Ok() : Unreachable();
  }
  Result<std::vector<std::pair<SessionId, OwnerLease>>> ListExpiredOwnerships(
      std::size_t limit) override {
    std::lock_guard lock(mu);
    ++rounds;
    cv.notify_all();
    if (!reachable) return Unreachable();
    return expired;
  }
  // Not called by the keeper.
  Result<OwnerGrant> AcquireOwnership(const SessionId&, const std::string&, std::int64_t) override {
    return Unexpected();
  }
  Status ReleaseOwnership(const SessionId&, std::uint64_t) override { return Unexpected(); }
  Result<OwnerLease> GetOwnership(const SessionId&) override { return Unexpected(); }
  Result<std::vector<OwnershipRecord>> OwnershipHistory(const SessionId&) override {
    return Unexpected();
  }
  Result<std::optional<DaemonRecord>> GetDaemon(const std::string&) override {
    return Unexpected();
  }
  Result<std::string> SharedSecret(const std::string&, const std::string&) override {
    return Unexpected();
  }

  // Waits for round `n` to have made its last call.
  bool WaitRounds(int n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 60s, [&] { return rounds >= n; });
  }

 private:
  static Status Unreachable() { return Error(ErrorCode::kUnavailable, "the store is unreachable"); }
  static Status Unexpected() { return Error(ErrorCode::kInternal, "not called by the keeper"); }
};

// A lease outlives a runtime's own stop by a period (ttl - renew_every = 1 h), and periods are
// long enough (2 h) that the steps below never reach the next one.
OwnershipOptions Options() {
  OwnershipOptions options;
  options.daemon_id = "daemon-a";
  options.url = "local://a";
  options.ttl = 3h;
  options.renew_every = 2h;
  options.clock = [] { return TimestampMs{1'700'000'000'000}; };
  return options;
}

// What the keeper reported, from its thread.
struct Reports {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<SessionId> lost;
  std::vector<std::pair<SessionId, OwnerLease>> expired;

  LeaseKeeper::Callbacks Callbacks() {
    LeaseKeeper::Callbacks callbacks;
    callbacks.lost = [this](std::vector<SessionId> sessions) {
      std::lock_guard lock(mu);
      for (SessionId& s : sessions) lost.push_back(std::move(s));
      cv.notify_all();
    };
    callbacks.expired = [this](std::vector<std::pair<SessionId, OwnerLease>> leases) {
      std::lock_guard lock(mu);
      for (auto& lease : leases) expired.push_back(std::move(lease));
      cv.notify_all();
    };
    return callbacks;
  }
  bool Wait(const std::function<bool()>& pred) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 60s, pred);
  }
};

using Overdue = std::vector<std::pair<SessionId, std::uint64_t>>;

TEST(LeaseKeeper, ALeaseIsOverdueOnlyOnceItWentUnrenewedForTtlLessThePeriod) {
  process::ManualTimers clock;
  ScriptedStore store;
  Reports reports;
  LeaseKeeper keeper(store, clock, Options(), reports.Callbacks());
  ASSERT_TRUE(store.WaitRounds(1));
  const SessionId s("s");
  keeper.Track(s, 1, clock.Now());
  clock.Advance(1h);
  EXPECT_EQ(keeper.Overdue(clock.Now()), Overdue{});
  clock.Advance(1ms);
  EXPECT_EQ(keeper.Overdue(clock.Now()), (Overdue{{s, 1}}));
  // A renewal, sent now, puts it back on time for another hour.
  keeper.Poke();
  ASSERT_TRUE(store.WaitRounds(2));
  EXPECT_EQ(keeper.Overdue(clock.Now()), Overdue{});
  clock.Advance(1h);
  EXPECT_EQ(keeper.Overdue(clock.Now()), Overdue{});
  clock.Advance(1ms);
  EXPECT_EQ(keeper.Overdue(clock.Now()), (Overdue{{s, 1}}));
  std::lock_guard lock(store.mu);
  ASSERT_EQ(store.renewals.size(), 1u);  // the first round had nothing to renew
  EXPECT_EQ(store.renewals[0], (Overdue{{s, 1}}));
}

TEST(LeaseKeeper, AFailedRenewalLeavesTheLeaseToFallOverdue) {
  process::ManualTimers clock;
  ScriptedStore store;
  Reports reports;
  LeaseKeeper keeper(store, clock, Options(), reports.Callbacks());
  ASSERT_TRUE(store.WaitRounds(1));
  const SessionId s("s");
  keeper.Track(s, 1, clock.Now());
  clock.Advance(30min);
  {
    std::lock_guard lock(store.mu);
    store.reachable = false;
  }
  keeper.Poke();  // fails: the lease stays renewed as of its grant
  ASSERT_TRUE(store.WaitRounds(2));
  clock.Advance(30min);
  EXPECT_EQ(keeper.Overdue(clock.Now()), Overdue{});
  clock.Advance(1ms);
  EXPECT_EQ(keeper.Overdue(clock.Now()), (Overdue{{s, 1}}));
  // Untracked (the runtime stopped), it is no one's concern.
  keeper.Untrack(s, 2);  // another generation: a no-op
  EXPECT_EQ(keeper.Overdue(clock.Now()), (Overdue{{s, 1}}));
  keeper.Untrack(s, 1);
  EXPECT_EQ(keeper.Overdue(clock.Now()), Overdue{});
}

TEST(LeaseKeeper, ALostLeaseIsReportedAndNotCountedAsRenewed) {
  process::ManualTimers clock;
  ScriptedStore store;
  Reports reports;
  LeaseKeeper keeper(store, clock, Options(), reports.Callbacks());
  ASSERT_TRUE(store.WaitRounds(1));
  const SessionId kept("kept"), lost("lost");
  keeper.Track(kept, 1, clock.Now());
  keeper.Track(lost, 4, clock.Now());
  clock.Advance(1h);
  {
    std::lock_guard lock(store.mu);
    store.lose = {lost};
  }
  keeper.Poke();
  ASSERT_TRUE(reports.Wait([&] { return !reports.lost.empty(); }));
  EXPECT_EQ(reports.lost, std::vector<SessionId>{lost});
  ASSERT_TRUE(store.WaitRounds(2));
  clock.Advance(1ms);
  // `kept` was renewed an hour after its grant; `lost` was not.
  EXPECT_EQ(keeper.Overdue(clock.Now()), (Overdue{{lost, 4}}));
}

TEST(LeaseKeeper, HeartbeatsCarryTheStartTimeAndTheLatestUrlAndExpiredLeasesAreReported) {
  process::ManualTimers clock;
  ScriptedStore store;
  const SessionId orphan("orphan");
  store.expired = {{orphan, OwnerLease{}}};
  Reports reports;
  LeaseKeeper keeper(store, clock, Options(), reports.Callbacks());
  ASSERT_TRUE(store.WaitRounds(1));
  ASSERT_TRUE(reports.Wait([&] { return !reports.expired.empty(); }));
  EXPECT_EQ(reports.expired.front().first, orphan);
  clock.Advance(1h);
  keeper.SetUrl("local://a2");  // runs a round
  ASSERT_TRUE(store.WaitRounds(2));
  std::lock_guard lock(store.mu);
  ASSERT_EQ(store.heartbeats.size(), 2u);
  for (const DaemonRecord& beat : store.heartbeats) {
    EXPECT_EQ(beat.id, "daemon-a");
    EXPECT_EQ(beat.started_ms, 1'700'000'000'000);  // by the injected wall clock, once
  }
  EXPECT_EQ(store.heartbeats[0].url, "local://a");
  EXPECT_EQ(store.heartbeats[1].url, "local://a2");
}

}  // namespace
}  // namespace agentstream::runtime
