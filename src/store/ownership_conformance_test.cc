// The Coordination conformance suite (store/coordination.h): agent ownership leases, the fence
// they put on appends and metadata, the ownership history, the daemon registry. Every backend
// passes it unchanged. Leases are judged by the store's own clock, so expiry is tested with short
// real leases.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "store/test_backend.h"
#include "store/testing/events.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

using namespace std::chrono_literals;

// Long enough never to expire during a test, short ones to expire at once.
constexpr std::int64_t kLongTtl = 600000;
constexpr std::int64_t kShortTtl = 1;

class OwnershipConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  }
  EventLog& log() { return backend_->log(); }
  Coordination& owners() { return log().coordination(); }

  SessionId NewSession(const std::string& id, int events = 1) {
    std::vector<NewEvent> initial;
    for (int i = 0; i < events; ++i) initial.push_back(Note(id + std::to_string(i)));
    EXPECT_TRUE(
        log().CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id}, initial).ok());
    return SessionId(id);
  }

  Result<AppendResult> AppendAs(const SessionId& s, std::optional<std::uint64_t> generation,
                                const std::string& text) {
    AppendRequest request;
    request.session = s;
    request.owner_generation = generation;
    request.events = {Note(text)};
    return log().Append(request);
  }

  // Lets a lease granted with kShortTtl expire by the store's clock.
  static void LetExpire() { std::this_thread::sleep_for(20ms); }

  std::unique_ptr<testing::Backend> backend_;
};

TEST_P(OwnershipConformance, AFreeSessionIsGrantedAndAHeldOneIsRefused) {
  const SessionId s = NewSession("s1");
  auto free = owners().GetOwnership(s);
  ASSERT_TRUE(free.ok()) << free.status().ToString();
  EXPECT_FALSE(free->live());
  EXPECT_EQ(free->generation, 0u);

  auto a = owners().AcquireOwnership(s, "daemon-a", kLongTtl);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->lease.owner, "daemon-a");
  EXPECT_EQ(a->lease.generation, 1u);
  EXPECT_TRUE(a->lease.live());
  EXPECT_TRUE(a->previous.owner.empty());

  auto b = owners().AcquireOwnership(s, "daemon-b", kLongTtl);
  EXPECT_EQ(b.status().code(), ErrorCode::kConflict);
  EXPECT_NE(b.status().message().find("daemon-a"), std::string::npos) << b.status().message();

  auto read = owners().GetOwnership(s);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->owner, "daemon-a");
  EXPECT_EQ(read->generation, 1u);
  EXPECT_TRUE(read->live());
  EXPECT_EQ(owners().AcquireOwnership(SessionId("nope"), "daemon-a", kLongTtl).status().code(),
            ErrorCode::kNotFound);
}

TEST_P(OwnershipConformance, AnExpiredLeaseIsTakenOverWithTheNextGeneration) {
  const SessionId s = NewSession("s1");
  ASSERT_TRUE(owners().AcquireOwnership(s, "daemon-a", kShortTtl).ok());
  LetExpire();
  auto expired = owners().ListExpiredOwnerships(100);
  ASSERT_TRUE(expired.ok()) << expired.status().ToString();
  ASSERT_EQ(expired->size(), 1u);
  EXPECT_EQ(expired->front().first, s);
  EXPECT_EQ(expired->front().second.owner, "daemon-a");

  auto b = owners().AcquireOwnership(s, "daemon-b", kLongTtl);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->lease.generation, 2u);
  EXPECT_EQ(b->previous.owner, "daemon-a");
  EXPECT_EQ(b->previous.generation, 1u);
  EXPECT_FALSE(b->previous.live());
  EXPECT_TRUE(owners().ListExpiredOwnerships(100)->empty());
}

TEST_P(OwnershipConformance, TheSameOwnerTakesItsLeaseBackAtOnceAsANewGeneration) {
  const SessionId s = NewSession("s1");
  ASSERT_TRUE(owners().AcquireOwnership(s, "daemon-a", kLongTtl).ok());
  auto again = owners().AcquireOwnership(s, "daemon-a", kLongTtl);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->lease.generation, 2u);
  EXPECT_EQ(again->previous.owner, "daemon-a");
  EXPECT_TRUE(again->previous.live());
}

TEST_P(OwnershipConformance, AStaleGenerationIsFencedInTheAppendsTransaction) {
  const SessionId s = NewSession("s1");
  auto a = owners().AcquireOwnership(s, "daemon-a", kShortTtl);
  ASSERT_TRUE(a.ok());
  auto by_a = AppendAs(s, a->lease.generation, "a1");
  ASSERT_TRUE(by_a.ok()) << by_a.status().ToString();
  LetExpire();
  // Expired but not taken over: no other runtime exists, so the owner may still append.
  ASSERT_TRUE(AppendAs(s, a->lease.generation, "a2").ok());
  auto b = owners().AcquireOwnership(s, "daemon-b", kLongTtl);
  ASSERT_TRUE(b.ok());
  auto stale = AppendAs(s, a->lease.generation, "a3");
  EXPECT_EQ(stale.status().code(), ErrorCode::kFenced);
  EXPECT_NE(stale.status().message().find("daemon-b"), std::string::npos);
  ASSERT_TRUE(AppendAs(s, b->lease.generation, "b1").ok());
  ASSERT_TRUE(AppendAs(s, std::nullopt, "outside any runtime").ok());
  EXPECT_EQ(AppendAs(s, 99, "future").status().code(), ErrorCode::kFenced);

  // Each event carries the generation that wrote it; the history says who held it and from where.
  auto page = log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(1), 100});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->events.size(), 5u);
  EXPECT_EQ(page->events[0].owner_generation, 0u);  // created before any grant
  EXPECT_EQ(page->events[1].owner_generation, 1u);
  EXPECT_EQ(page->events[2].owner_generation, 1u);
  EXPECT_EQ(page->events[3].owner_generation, 2u);
  EXPECT_EQ(page->events[4].owner_generation, 0u);
  auto history = owners().OwnershipHistory(s);
  ASSERT_TRUE(history.ok()) << history.status().ToString();
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].generation, 1u);
  EXPECT_EQ((*history)[0].owner, "daemon-a");
  EXPECT_EQ((*history)[0].at, (Cursor{Epoch(1), Seq(1)}));
  EXPECT_EQ((*history)[1].generation, 2u);
  EXPECT_EQ((*history)[1].owner, "daemon-b");
  EXPECT_EQ((*history)[1].at, (Cursor{Epoch(1), Seq(3)}));
}

TEST_P(OwnershipConformance, AStaleGenerationCannotUpdateMetadata) {
  const SessionId s = NewSession("s1");
  auto a = owners().AcquireOwnership(s, "daemon-a", kShortTtl);
  ASSERT_TRUE(a.ok());
  SessionMetaUpdate update;
  update.status_snapshot = R"({"status":"running"})";
  update.owner_generation = a->lease.generation;
  ASSERT_TRUE(log().UpdateSessionMeta(s, update).ok());
  LetExpire();
  ASSERT_TRUE(owners().AcquireOwnership(s, "daemon-b", kLongTtl).ok());
  update.status_snapshot = R"({"status":"idle"})";
  EXPECT_EQ(log().UpdateSessionMeta(s, update).code(), ErrorCode::kFenced);
  EXPECT_EQ(log().GetSession(s)->meta.status_snapshot, R"({"status":"running"})");
}

TEST_P(OwnershipConformance, RenewalKeepsTheGenerationAndReportsLostLeases) {
  const SessionId s1 = NewSession("s1");
  const SessionId s2 = NewSession("s2");
  auto a1 = owners().AcquireOwnership(s1, "daemon-a", kShortTtl);
  auto a2 = owners().AcquireOwnership(s2, "daemon-a", kShortTtl);
  ASSERT_TRUE(a1.ok() && a2.ok());
  LetExpire();
  ASSERT_TRUE(owners().AcquireOwnership(s2, "daemon-b", kLongTtl).ok());
  auto lost = owners().RenewOwnerships(
      "daemon-a", {{s1, a1->lease.generation}, {s2, a2->lease.generation}, {SessionId("gone"), 1}},
      kLongTtl);
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  ASSERT_EQ(lost->size(), 2u);
  EXPECT_EQ((*lost)[0], s2);
  EXPECT_EQ((*lost)[1], SessionId("gone"));
  auto renewed = owners().GetOwnership(s1);
  ASSERT_TRUE(renewed.ok());
  EXPECT_TRUE(renewed->live()) << "renewed although it had expired: nobody took it";
  EXPECT_EQ(renewed->generation, a1->lease.generation);
  EXPECT_EQ(owners().AcquireOwnership(s1, "daemon-b", kLongTtl).status().code(),
            ErrorCode::kConflict);
}

TEST_P(OwnershipConformance, AReleasedLeaseIsFreeAndKeepsItsGeneration) {
  const SessionId s = NewSession("s1");
  auto a = owners().AcquireOwnership(s, "daemon-a", kLongTtl);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(owners().ReleaseOwnership(s, a->lease.generation + 1).code(), ErrorCode::kFenced);
  ASSERT_TRUE(owners().ReleaseOwnership(s, a->lease.generation).ok());
  auto read = owners().GetOwnership(s);
  ASSERT_TRUE(read.ok());
  EXPECT_FALSE(read->live());
  EXPECT_EQ(read->generation, 1u);
  EXPECT_TRUE(owners().ListExpiredOwnerships(100)->empty()) << "a released lease is not expired";
  auto b = owners().AcquireOwnership(s, "daemon-b", kLongTtl);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->lease.generation, 2u);
  EXPECT_EQ(owners().ReleaseOwnership(s, a->lease.generation).code(), ErrorCode::kFenced);
}

TEST_P(OwnershipConformance, LeasesAndHistorySurviveReopen) {
  const SessionId s = NewSession("s1");
  auto a = owners().AcquireOwnership(s, "daemon-a", kLongTtl);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(AppendAs(s, a->lease.generation, "a1").ok());
  backend_->Reopen();
  auto read = owners().GetOwnership(s);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->owner, "daemon-a");
  EXPECT_EQ(read->generation, 1u);
  EXPECT_EQ(owners().AcquireOwnership(s, "daemon-b", kLongTtl).status().code(),
            ErrorCode::kConflict);
  ASSERT_EQ(owners().OwnershipHistory(s)->size(), 1u);
  auto page = log().Read(ReadRequest{s, std::nullopt, ReadDirection::kBackward, Seq(0), 1});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->events.back().owner_generation, 1u);
}

TEST_P(OwnershipConformance, ARegisteredDaemonIsFoundAndItsIdCannotBeClaimedTwice) {
  DaemonRecord a{"daemon-a", "http://127.0.0.1:1", "host-1", "/data/a", 5, 0, 0};
  ASSERT_TRUE(owners().Heartbeat(a, kLongTtl).ok());
  auto found = owners().GetDaemon("daemon-a");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->url, "http://127.0.0.1:1");
  EXPECT_EQ((*found)->started_ms, 5);
  EXPECT_GT((*found)->heartbeat_ms, 0);
  EXPECT_GE((*found)->now_ms, (*found)->heartbeat_ms);
  EXPECT_FALSE(owners().GetDaemon("daemon-z")->has_value());

  a.url = "http://127.0.0.1:2";  // restarted on the same data directory: fine
  ASSERT_TRUE(owners().Heartbeat(a, kLongTtl).ok());
  EXPECT_EQ((*owners().GetDaemon("daemon-a"))->url, "http://127.0.0.1:2");
  DaemonRecord impostor{"daemon-a", "http://127.0.0.1:3", "host-2", "/data/a", 6, 0, 0};
  EXPECT_EQ(owners().Heartbeat(impostor, kLongTtl).code(), ErrorCode::kAlreadyExists);
  LetExpire();
  EXPECT_TRUE(owners().Heartbeat(impostor, kShortTtl).ok()) << "the old holder stopped beating";
}

INSTANTIATE_TEST_SUITE_P(Backends, OwnershipConformance,
                         ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace agentstream
