// The PostgreSQL log as several daemons use it: two logs (two daemons) on one database, a lost
// server connection, and the schema version check. Needs a server: AGENTSTREAM_TEST_PG (a libpq
// connection string; tools/test.sh starts a throw-away cluster). The conformance suite runs
// against this backend too (event_log_conformance_test.cc).
#include "store/postgres/postgres_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "pg/pg.h"
#include "pg/testing/scratch_schema.h"
#include "store/postgres/postgres_log_impl.h"
#include "store/testing/events.h"
#include "system/wall_clock.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

std::string TextOf(const EventRecord& record) {
  auto event = DecodeRecord(record);
  return event.ok() ? std::get<Notice>(event->payload).text : "<" + event.status().ToString() + ">";
}

AppendRequest Batch(const SessionId& session, std::vector<NewEvent> events) {
  AppendRequest request;
  request.session = session;
  request.events = std::move(events);
  return request;
}

// A session's events from seq 1 (up to 1,000).
Result<ReadResult> ReadAll(EventLog& log, const SessionId& session) {
  ReadRequest read;
  read.session = session;
  read.from = Seq(1);
  read.max_items = 1000;
  return log.Read(read);
}

class PostgresLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> server = pg::testing::ScratchSchema::Server();
    if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
    auto scratch = pg::testing::ScratchSchema::Create(*server, "pg");
    ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
    scratch_ = std::move(scratch).value();
  }
  void TearDown() override {
    a_.reset();
    b_.reset();
    scratch_.reset();
  }

  Result<std::unique_ptr<EventLog>> Open() {
    PostgresLogOptions options;
    options.conninfo = scratch_->conninfo();
    options.schema = scratch_->name();
    return OpenPostgresEventLog(options);
  }
  // Two daemons sharing the database.
  void OpenBoth() {
    auto a = Open();
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    a_ = std::move(*a);
    auto b = Open();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    b_ = std::move(*b);
  }

  std::unique_ptr<pg::testing::ScratchSchema> scratch_;  // dropped after the stores close
  std::unique_ptr<EventLog> a_;
  std::unique_ptr<EventLog> b_;
};

TEST_F(PostgresLogTest, TwoDaemonsAppendingToOneSessionKeepItsSeqsDense) {
  OpenBoth();
  const SessionId s("ses_shared");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", "shared"}, {}).ok());
  constexpr int kWriters = 4;
  constexpr int kAppends = 40;
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      EventLog& log = w % 2 == 0 ? *a_ : *b_;
      for (int i = 0; i < kAppends; ++i) {
        auto r = log.Append(Batch(s, {Note(std::to_string(w) + ":" + std::to_string(i))}));
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& t : writers) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto got = ReadAll(*b_, s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->events.size(), static_cast<std::size_t>(kWriters * kAppends));
  std::set<std::string> texts;
  for (std::size_t i = 0; i < got->events.size(); ++i) {
    EXPECT_EQ(got->events[i].seq, Seq(i + 1));
    texts.insert(TextOf(got->events[i]));
  }
  EXPECT_EQ(texts.size(), static_cast<std::size_t>(kWriters * kAppends));  // each exactly once
  EXPECT_EQ(a_->Tail(s)->seq, Seq(kWriters * kAppends));
}

TEST_F(PostgresLogTest, AProducerRetryThroughTheOtherDaemonIsADuplicate) {
  OpenBoth();
  const SessionId s("ses_producer");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {}).ok());
  AppendRequest first = Batch(s, {Note("once"), Note("twice?")});
  first.producer = ProducerStamp{ProducerId("pump"), 1, 0};
  auto stored = a_->Append(first);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_FALSE(stored->duplicate);
  auto retried = b_->Append(first);
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_TRUE(retried->duplicate);
  EXPECT_EQ(retried->first_seq, stored->first_seq);
  EXPECT_EQ(retried->last_seq, stored->last_seq);
  EXPECT_EQ(b_->Tail(s)->seq, Seq(2));
}

TEST_F(PostgresLogTest, AnExpectedTailRacesAcrossDaemonsAndOneWins) {
  OpenBoth();
  const SessionId s("ses_expected");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {Note("start")}).ok());
  AppendRequest from_a = Batch(s, {Note("a")});
  from_a.expected_tail = Seq(1);
  AppendRequest from_b = Batch(s, {Note("b")});
  from_b.expected_tail = Seq(1);
  ASSERT_TRUE(a_->Append(from_a).ok());
  EXPECT_EQ(b_->Append(from_b).status().code(), ErrorCode::kConflict);
  EXPECT_EQ(a_->Tail(s)->seq, Seq(2));
}

// A batch's ops take their locks in their order, so two writers can deadlock; the server then
// aborts one. The batch it aborted runs again: its ops succeed instead of failing for nothing
// they did. Here the other writer is a plain connection that waits longer before it looks for
// deadlocks, so the log's writer is the one aborted.
TEST_F(PostgresLogTest, ABatchTheServerAbortedInADeadlockRunsAgain) {
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  const SessionId s0("ses_dl0"), s1("ses_dl1"), s2("ses_dl2");
  for (const SessionId& s : {s0, s1, s2})
    ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {}).ok());
  auto connect = [&]() {
    Result<pg::Conn> conn = pg::Conn::Open(scratch_->conninfo());
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    EXPECT_TRUE(conn->ExecScript("SET search_path TO " + scratch_->name()).ok());
    return std::move(*conn);
  };
  const std::string lock = "SELECT 1 FROM sessions WHERE id=$1 FOR UPDATE";
  pg::Conn gate = connect(), other = connect();
  // The writer waits on s0 while the next two updates queue up behind it: one batch.
  ASSERT_TRUE(gate.ExecScript("BEGIN").ok());
  ASSERT_TRUE(gate.Exec(lock, {s0.str()}).ok());
  auto update = [&](const SessionId& s) {
    return std::async(std::launch::async, [&, s] {
      return a_->UpdateSessionMeta(s, SessionMetaUpdate{std::nullopt, "{}"});
    });
  };
  auto first = update(s0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto second = update(s1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto third = update(s2);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The other writer holds s2; the batch takes s1, then waits for s2.
  ASSERT_TRUE(other.ExecScript("SET deadlock_timeout = '20s'; BEGIN").ok());
  ASSERT_TRUE(other.Exec(lock, {s2.str()}).ok());
  ASSERT_TRUE(gate.ExecScript("COMMIT").ok());
  ASSERT_TRUE(first.get().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Now the other writer wants s1: a deadlock, which the writer finds first (after 1 s).
  const auto asked = std::chrono::steady_clock::now();
  ASSERT_TRUE(other.Exec(lock, {s1.str()}).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::seconds(15));
  ASSERT_TRUE(other.ExecScript("COMMIT").ok());
  const Status second_done = second.get(), third_done = third.get();
  EXPECT_TRUE(second_done.ok()) << second_done.ToString();
  EXPECT_TRUE(third_done.ok()) << third_done.ToString();
  for (const SessionId& s : {s1, s2}) {
    Result<SessionInfo> info = a_->GetSession(s);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->meta.status_snapshot, "{}");
  }
}

TEST_F(PostgresLogTest, OnlyOneDaemonHoldsAConsumerLease) {
  OpenBoth();
  const ConsumerId c("export");
  const SessionId s("ses_lease");
  auto held = a_->consumers().AcquireLease(c, s, "daemon-a", 1000, 60000);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(b_->consumers().AcquireLease(c, s, "daemon-b", 1100, 60000).status().code(),
            ErrorCode::kConflict);
  ASSERT_TRUE(a_->consumers().ReleaseLease(c, s, held->generation).ok());
  auto taken = b_->consumers().AcquireLease(c, s, "daemon-b", 1200, 60000);
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_GT(taken->generation, held->generation);
  EXPECT_EQ(a_->consumers()
                .CommitConsumerPosition(c, s, held->generation, Cursor{Epoch(1), Seq(1)},
                                        std::nullopt, 1300)
                .code(),
            ErrorCode::kFenced);
}

// Consumer leases are judged by the database's clock: a daemon whose clock runs an hour ahead
// cannot take a lease another daemon holds, nor can one an hour behind keep committing with a
// lease that has lapsed.
TEST_F(PostgresLogTest, AConsumerLeaseIsJudgedByTheDatabasesClock) {
  OpenBoth();
  const ConsumerId c("export");
  const SessionId s("ses_clock");
  const TimestampMs now = system::WallClockMs();
  constexpr TimestampMs kHour = 3600 * 1000;
  auto held = a_->consumers().AcquireLease(c, s, "daemon-a", now, 60000);
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(b_->consumers().AcquireLease(c, s, "daemon-b", now + kHour, 60000).status().code(),
            ErrorCode::kConflict);

  auto brief = b_->consumers().AcquireLease(ConsumerId("brief"), s, "daemon-b", now, 200);
  ASSERT_TRUE(brief.ok()) << brief.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(b_->consumers()
                .CommitConsumerPosition(ConsumerId("brief"), s, brief->generation,
                                        Cursor{Epoch(1), Seq(1)}, std::nullopt, now - kHour)
                .code(),
            ErrorCode::kFenced);
}

// The server ends every connection of the log between two appends, as a restart or a failover
// would: each writer finds its connection ended before its next batch and opens a new one, so the
// next append is not lost to it (a connection lost during a batch fails only that batch:
// CommitOutcomeTest).
TEST_F(PostgresLogTest, AConnectionTheServerEndedBetweenBatchesIsReopenedFirst) {
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  const SessionId s("ses_reconnect");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {Note("before")}).ok());
  ASSERT_TRUE(a_->Tail(s).ok());  // a reader connection exists too
  const std::string name = "agentstream:" + scratch_->name();
  auto killed = scratch_->admin().Exec(
      "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1",
      {name});
  ASSERT_TRUE(killed.ok()) << killed.status().ToString();
  EXPECT_GE(killed->Int(0, 0), 4);  // two writers, the listener, a reader
  // The ended server processes are gone once their sockets are closed.
  for (int i = 0; i < 100; ++i) {
    auto left = scratch_->admin().Exec(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", {name});
    ASSERT_TRUE(left.ok()) << left.status().ToString();
    if (left->Int(0, 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto after = a_->Append(Batch(s, {Note("after")}));
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->first_seq, Seq(2));
  EXPECT_TRUE(a_->Tail(s).ok());  // the reader replaces its ended connection too
  EXPECT_TRUE(a_->Health().ok());
  auto got = ReadAll(*a_, s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->events.size(), 2u);
  EXPECT_EQ(TextOf(got->events[1]), "after");
}

// A daemon cut off from the server in the middle of a commit, by a partition the server does not
// see (its end of the connection stays open), would hold the rows it locked until the server's
// TCP keepalive gives up, hours later: no other daemon could write to those sessions. The server
// ends a writer connection's transaction that waits too long for its next statement.
TEST_F(PostgresLogTest, AWriterTransactionLeftIdleLetsGoOfItsLocks) {
  PostgresLogOptions options;
  options.conninfo = scratch_->conninfo();
  options.schema = scratch_->name();
  options.writer_idle_in_transaction = std::chrono::milliseconds(300);
  auto opened = OpenPostgresEventLog(options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  const SessionId s("ses_locked");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {Note("first")}).ok());
  // A writer connection like the log's own, stopped after locking the session's row.
  auto stalled = pg::Connect(options, /*writer=*/true);
  ASSERT_TRUE(stalled.ok()) << stalled.status().ToString();
  ASSERT_TRUE(stalled->ExecScript("BEGIN").ok());
  ASSERT_TRUE(stalled->Exec("SELECT key FROM sessions WHERE id = $1 FOR UPDATE", {s.str()}).ok());
  auto append =
      std::async(std::launch::async, [&] { return a_->Append(Batch(s, {Note("next")})); });
  if (append.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    (void)stalled->ExecScript("ROLLBACK");  // lets the append finish, then fails
    ADD_FAILURE() << "the append still waits for the stalled transaction's lock";
  }
  auto appended = append.get();
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(appended->first_seq, Seq(2));
  // The stalled connection was ended with its transaction: nothing it did holds.
  auto after = stalled->Exec("SELECT 1");
  EXPECT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), ErrorCode::kUnavailable) << after.status().ToString();
}

TEST_F(PostgresLogTest, ASchemaNewerThanThisBuildIsRefused) {
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  opened->reset();
  ASSERT_TRUE(scratch_->admin()
                  .ExecScript("UPDATE " + scratch_->name() + ".agentstream_schema SET version = 99")
                  .ok());
  auto again = Open();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), ErrorCode::kUnsupportedVersion);
  EXPECT_NE(again.status().message().find("99"), std::string::npos);
}

// A database laid out by a build of schema version 1 (before agent ownership) is brought to the
// current version in place when a daemon opens it, keeping its sessions.
TEST_F(PostgresLogTest, AVersionOneDatabaseIsMigratedInPlace) {
  {
    auto current = Open();
    ASSERT_TRUE(current.ok()) << current.status().ToString();
    ASSERT_TRUE((*current)
                    ->CreateSession(SessionId("ses_old"), {"scripted", "/w", "old"}, {Note("a")})
                    .ok());
  }
  // Back to version 1: what versions 2 and 3 added is dropped.
  ASSERT_TRUE(
      scratch_->admin()
          .ExecScript(
              "SET search_path TO " + scratch_->name() +
              "; ALTER TABLE sessions DROP COLUMN owner, DROP COLUMN "
              "owner_generation, DROP COLUMN owner_expires_ms, DROP COLUMN usage; ALTER TABLE "
              "events "
              "DROP COLUMN writer; DROP TABLE owner_history, daemons, secrets, checkpoints, "
              "timeline_items, timeline_index, search_documents, search_state, pairings, "
              "devices, presence, schedules, schedule_firings; "
              "UPDATE agentstream_schema SET version = 1; RESET search_path")
          .ok());
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  auto version =
      scratch_->admin().Exec("SELECT version FROM " + scratch_->name() + ".agentstream_schema");
  ASSERT_TRUE(version.ok());
  ASSERT_EQ(version->size(), 1);
  EXPECT_EQ(version->Int(0, 0), kPostgresSchemaVersion);
  auto old = a_->GetSession(SessionId("ses_old"));
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->meta.title, "old");
  EXPECT_FALSE(old->meta.usage.has_value());  // stored before version 6 counted it
  auto grant = a_->coordination().AcquireOwnership(SessionId("ses_old"), "daemon-a", 10000);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  EXPECT_EQ(grant->lease.generation, 1u);
  // The timeline and search indexes of versions 4 and 5 are there, empty.
  EXPECT_FALSE(a_->item_index()->LoadItemState(SessionId("ses_old"), Epoch(1))->has_value());
  SearchIndexStore& search = *a_->search_index();
  EXPECT_FALSE(search.LoadSearchState(SessionId("ses_old"))->has_value());
  ASSERT_TRUE(search
                  .CommitDocuments(
                      {SessionId("ses_old"),
                       std::nullopt,
                       Cursor{Epoch(1), Seq(1)},
                       {SearchDocument{Cursor{Epoch(1), Seq(1)}, 0, "user.message", "old words"}}})
                  .ok());
  EXPECT_EQ(search.Search(SearchQuery{{"words"}, SessionId("ses_old"), 5})->size(), 1u);
  // The devices' tables of version 8 and the schedules' of version 10 are there, empty.
  EXPECT_TRUE(a_->devices().ListDevices()->empty());
  EXPECT_TRUE(a_->schedules().ListSchedules()->empty());
}

// A pairing code given to two daemons at once pairs one device; a device revoked through one
// daemon is found revoked through the other, which polls for it.
TEST_F(PostgresLogTest, ACodeUsedOnTwoDaemonsAtOncePairsOneDevice) {
  OpenBoth();
  for (int round = 0; round < 5; ++round) {
    const std::string code(32, static_cast<char>('a' + round));
    ASSERT_TRUE(a_->devices().AddPairing(PairingRecord{code, "phone", 1000, 1'000'000}).ok());
    std::atomic<int> paired{0};
    std::atomic<int> refused{0};
    auto use = [&](EventLog& log, const std::string& id) {
      // 32 bytes, distinct per device: "dev_a0" and "dev_b0" end in "a0" and "b0".
      DeviceRecord device{id, "x", std::string(30, static_cast<char>('A' + round)) + id.substr(4),
                          1000};
      auto r = log.devices().UsePairing(code, device, 2000);
      if (r.ok()) ++paired;
      if (r.status().code() == ErrorCode::kNotFound) ++refused;
    };
    std::thread on_a([&] { use(*a_, "dev_a" + std::to_string(round)); });
    std::thread on_b([&] { use(*b_, "dev_b" + std::to_string(round)); });
    on_a.join();
    on_b.join();
    EXPECT_EQ(paired.load(), 1);
    EXPECT_EQ(refused.load(), 1);
  }
  auto devices = b_->devices().ListDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 5u);
  ASSERT_TRUE(a_->devices().RevokeDevice(devices->front().id, 5000).ok());
  EXPECT_EQ(*b_->devices().RevokedSince(4000), std::vector<std::string>{devices->front().id});
  EXPECT_TRUE(b_->devices().GetDevice(devices->front().id)->revoked());
}

// A schedule claimed by two daemons at once is leased to one of them; the other cannot advance it
// until the lease expires and it takes the schedule over, after which the first advances nothing.
TEST_F(PostgresLogTest, AScheduleClaimedOnTwoDaemonsAtOnceIsLeasedToOne) {
  OpenBoth();
  constexpr std::int64_t kTtl = 30'000;
  for (int round = 0; round < 5; ++round) {
    const std::string id = "race" + std::to_string(round);
    ASSERT_TRUE(a_->schedules().AddSchedule(ScheduleRecord{.id = id, .definition = "{}"}).ok());
    std::atomic<int> granted{0};
    std::atomic<int> refused{0};
    auto claim = [&](EventLog& log, const std::string& owner) {
      auto r = log.schedules().ClaimSchedule(id, owner, 1000, kTtl);
      if (r.ok()) ++granted;
      if (r.status().code() == ErrorCode::kConflict) ++refused;
    };
    std::thread on_a([&] { claim(*a_, "daemon-a"); });
    std::thread on_b([&] { claim(*b_, "daemon-b"); });
    on_a.join();
    on_b.join();
    EXPECT_EQ(granted.load(), 1);
    EXPECT_EQ(refused.load(), 1);
    auto held = b_->schedules().GetSchedule(id);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    const bool a_holds = held->lease_owner == "daemon-a";
    EventLog& holder = a_holds ? *a_ : *b_;
    EventLog& other = a_holds ? *b_ : *a_;
    const std::string loser = a_holds ? "daemon-b" : "daemon-a";
    EXPECT_EQ(other.schedules().AdvanceSchedule(id, loser, 60'000, 0, {}).code(),
              ErrorCode::kConflict);
    ASSERT_TRUE(holder.schedules().AdvanceSchedule(id, held->lease_owner, 1000, 60'000, {}).ok());
    // Expired: taken over; the pending tick is the new holder's to fire.
    auto taken = other.schedules().ClaimSchedule(id, loser, 1000 + kTtl, kTtl);
    ASSERT_TRUE(taken.ok()) << taken.status().ToString();
    EXPECT_EQ(taken->pending_tick_ms, 60'000);
    EXPECT_EQ(holder.schedules().AdvanceSchedule(id, held->lease_owner, 60'000, 0, {}).code(),
              ErrorCode::kConflict);
  }
}

// A database of schema version 6 kept the search documents in one table: version 7 makes the
// table anew, hash-partitioned, and forgets what was indexed, so that every session is indexed
// again.
TEST_F(PostgresLogTest, AVersionSixSearchIndexIsMadeAnewInPartitions) {
  {
    auto current = Open();
    ASSERT_TRUE(current.ok()) << current.status().ToString();
  }
  ASSERT_TRUE(scratch_->admin()
                  .ExecScript("SET search_path TO " + scratch_->name() +
                              "; DROP TABLE search_documents; CREATE TABLE search_documents("
                              "id bigserial PRIMARY KEY, session text NOT NULL, epoch bigint NOT "
                              "NULL, seq bigint NOT NULL, at bigint NOT NULL, kind text NOT NULL, "
                              "body text NOT NULL, words tsvector GENERATED ALWAYS AS "
                              "(to_tsvector('simple', body)) STORED); INSERT INTO "
                              "search_documents(session, epoch, seq, at, kind, body) VALUES("
                              "'ses_old', 1, 1, 0, 'user.message', 'stale words'); INSERT INTO "
                              "search_state VALUES('ses_old', 1, 1); UPDATE agentstream_schema "
                              "SET version = 6; RESET search_path")
                  .ok());
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  auto parts = scratch_->admin().Exec("SELECT count(*) FROM pg_inherits WHERE inhparent = '" +
                                      scratch_->name() + ".search_documents'::regclass");
  ASSERT_TRUE(parts.ok()) << parts.status().ToString();
  EXPECT_EQ(parts->Int(0, 0), static_cast<std::int64_t>(kSearchPartitions));
  SearchIndexStore& search = *a_->search_index();
  EXPECT_FALSE(search.LoadSearchState(SessionId("ses_old"))->has_value());
  EXPECT_TRUE(search.Search(SearchQuery{{"stale"}, std::nullopt, 5})->empty());
  std::vector<SearchDocument> docs;
  for (std::uint64_t i = 1; i <= 40; ++i)
    docs.push_back(
        SearchDocument{Cursor{Epoch(1), Seq(i)}, TimestampMs(i), "user.message", "fresh words"});
  ASSERT_TRUE(
      search.CommitDocuments({SessionId("ses_old"), std::nullopt, Cursor{Epoch(1), Seq(40)}, docs})
          .ok());
  // Spread over every partition, found newest first.
  auto spread = scratch_->admin().Exec("SELECT count(DISTINCT tableoid) FROM " + scratch_->name() +
                                       ".search_documents");
  ASSERT_TRUE(spread.ok());
  EXPECT_EQ(spread->Int(0, 0), static_cast<std::int64_t>(kSearchPartitions));
  auto hits = search.Search(SearchQuery{{"fresh"}, SessionId("ses_old"), 3});
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 3u);
  EXPECT_EQ((*hits)[0].cursor.seq, Seq(40));
  EXPECT_EQ((*hits)[2].cursor.seq, Seq(38));
}

// Each part's GIN index keeps new entries in a pending list that every search reads through; the
// log moves them into the indexes within about a second of the documents' commit, so searches do
// not read through megabytes of them (autovacuum would wait for a fifth of the table to change).
TEST_F(PostgresLogTest, NewSearchDocumentsLeaveTheIndexesPendingLists) {
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  // pgstattuple ships with the server (postgresql-15); it reads an index's pending list.
  ASSERT_TRUE(scratch_->admin()
                  .ExecScript("CREATE EXTENSION IF NOT EXISTS pgstattuple SCHEMA public")
                  .ok());
  auto pending_pages = [&]() -> std::int64_t {
    auto r = scratch_->admin().Exec(
        "SELECT coalesce(sum((public.pgstatginindex(inhrelid)).pending_pages), 0)::bigint FROM "
        "pg_inherits WHERE inhparent = '" +
        scratch_->name() + ".search_documents_words'::regclass");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->Int(0, 0) : -1;
  };
  SearchIndexStore& search = *a_->search_index();
  for (std::uint64_t batch = 0; batch < 3; ++batch) {
    std::vector<SearchDocument> docs;
    for (std::uint64_t i = batch * 100 + 1; i <= batch * 100 + 100; ++i)
      docs.push_back(SearchDocument{Cursor{Epoch(1), Seq(i)}, TimestampMs(i), "user.message",
                                    "pending words " + std::to_string(i)});
    std::optional<Cursor> expected;
    if (batch > 0) expected = Cursor{Epoch(1), Seq(batch * 100)};
    ASSERT_TRUE(search
                    .CommitDocuments({SessionId("ses_pending"), expected,
                                      Cursor{Epoch(1), Seq(batch * 100 + 100)}, docs})
                    .ok());
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (pending_pages() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(pending_pages(), 0);
  auto hits = search.Search(SearchQuery{{"pending"}, std::nullopt, 5});
  ASSERT_TRUE(hits.ok()) << hits.status().ToString();
  ASSERT_EQ(hits->size(), 5u);
  EXPECT_EQ((*hits)[0].cursor.seq, Seq(300));
}

// A backlog on the first writer connection sends sessions without pending writes to the second
// (both commit), while a session's writes stay on one writer as long as any is pending: each
// session's events land, and are announced, in the order they were queued, across rounds that
// may put the session on either writer. A commit listener runs on a writer's thread, so a write
// it would wait for is refused at once on whichever writer it would go to, rather than waiting
// for a writer that may be waiting for it.
TEST_F(PostgresLogTest, ABacklogSpillsOntoTheSecondWriterAndEachSessionKeepsItsOrder) {
  auto opened = Open();  // two writer connections, the default
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  constexpr int kSessions = 300;
  constexpr int kRounds = 3;
  constexpr int kPerRound = 4;  // appends queued to each session in a round, in this order
  std::vector<SessionId> sessions;
  for (int s = 0; s < kSessions; ++s) {
    sessions.emplace_back("ses_spill_" + std::to_string(s));
    ASSERT_TRUE(a_->CreateSession(sessions.back(), SessionMeta{"scripted", "/w", ""}, {}).ok());
  }
  std::mutex mu;
  std::map<std::string, std::vector<CommitNotice>> heard;
  int waits_allowed = 0;  // writes a listener waited for that were not refused
  ListenerRegistration subscription = a_->SubscribeCommits([&](const CommitNotice& notice) {
    // Goes to the first writer (the daemon registry belongs to no session).
    const Status waited = a_->coordination().Heartbeat(DaemonRecord{.id = "d1"}, 10000);
    std::lock_guard lock(mu);
    heard[notice.session.str()].push_back(notice);
    if (waited.code() != ErrorCode::kInternal) ++waits_allowed;
  });
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<int> pending{kSessions * kPerRound};
    std::atomic<int> failures{0};
    std::promise<void> all;
    std::future<void> acknowledged = all.get_future();
    for (int k = 0; k < kPerRound; ++k) {
      for (const SessionId& s : sessions) {
        a_->AppendAsync(Batch(s, {Note(std::to_string(round * kPerRound + k))}),
                        [&](Result<AppendResult> r) {
                          if (!r.ok()) ++failures;
                          if (--pending == 0) all.set_value();
                        });
      }
    }
    ASSERT_EQ(acknowledged.wait_for(std::chrono::seconds(60)), std::future_status::ready);
    EXPECT_EQ(failures.load(), 0);
  }
  for (const SessionId& s : sessions) {
    auto got = ReadAll(*a_, s);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->events.size(), static_cast<std::size_t>(kRounds * kPerRound)) << s.str();
    for (std::size_t i = 0; i < got->events.size(); ++i)
      ASSERT_EQ(TextOf(got->events[i]), std::to_string(i)) << s.str() << " seq " << i + 1;
  }
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(waits_allowed, 0);
    for (const SessionId& s : sessions) {
      Seq last(0);
      for (const CommitNotice& n : heard[s.str()]) {
        ASSERT_GT(n.tail.value(), last.value()) << s.str() << ": a notice out of order";
        if (n.records) {
          EXPECT_EQ(n.records->front().seq, last.next()) << s.str();
        }
        last = n.tail;
      }
      EXPECT_EQ(last, Seq(kRounds * kPerRound)) << s.str();
    }
  }
  // Each writer connection stamps its own commits (pg/commit_outcome.h): both committed.
  auto writers = scratch_->admin().Exec("SELECT count(*) FROM " + scratch_->name() +
                                        ".commit_stamps WHERE batch > 0");
  ASSERT_TRUE(writers.ok()) << writers.status().ToString();
  EXPECT_EQ(writers->Int(0, 0), 2);
}

TEST_F(PostgresLogTest, ADaemonHearsTheOtherDaemonsCommitsAndItsOwnOnce) {
  OpenBoth();
  std::mutex mu;
  std::condition_variable cv;
  std::vector<CommitNotice> heard;
  ListenerRegistration subscription = b_->SubscribeCommits([&](const CommitNotice& notice) {
    std::lock_guard lock(mu);
    heard.push_back(notice);
    cv.notify_all();
  });
  const SessionId s("ses_heard");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", ""}, {}).ok());
  ASSERT_TRUE(a_->Append(Batch(s, {Note("1"), Note("2")})).ok());
  auto heard_tail = [&](Seq tail) {
    return std::any_of(heard.begin(), heard.end(), [&](const CommitNotice& n) {
      return n.session == s && n.epoch == Epoch(1) && n.tail == tail;
    });
  };
  {
    std::unique_lock lock(mu);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return heard_tail(Seq(2)); }))
        << "daemon b never heard of daemon a's commit";
  }
  ASSERT_TRUE(b_->Append(Batch(s, {Note("3")})).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its own NOTIFY would be here
  std::lock_guard lock(mu);
  EXPECT_EQ(std::count_if(heard.begin(), heard.end(),
                          [&](const CommitNotice& n) { return n.tail == Seq(3); }),
            1);
}

TEST_F(PostgresLogTest, TextPostgresCannotHoldIsRefusedAndTheLogGoesOn) {
  auto opened = Open();
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  a_ = std::move(*opened);
  const std::string nul("a\0b", 3);
  const std::string not_utf8 = "\xC5";
  for (const std::string& title : {nul, not_utf8}) {
    auto created =
        a_->CreateSession(SessionId("ses_bad"), SessionMeta{"scripted", "/w", title}, {});
    EXPECT_EQ(created.status().code(), ErrorCode::kInvalidArgument) << created.status().ToString();
  }
  const SessionId s("ses_good");
  ASSERT_TRUE(a_->CreateSession(s, SessionMeta{"scripted", "/w", "ok"}, {}).ok());
  EXPECT_EQ(a_->UpdateSessionMeta(s, SessionMetaUpdate{nul, std::nullopt}).code(),
            ErrorCode::kInvalidArgument);
  AppendRequest stamped = Batch(s, {Note("x")});
  stamped.producer = ProducerStamp{ProducerId(nul), 1, 0};
  EXPECT_EQ(a_->Append(stamped).status().code(), ErrorCode::kInvalidArgument);
  auto appended = a_->Append(Batch(s, {Note("fine")}));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(appended->first_seq, Seq(1));
  EXPECT_EQ(a_->GetSession(s)->meta.title, "ok");
  EXPECT_EQ(a_->GetSession(SessionId("ses_bad")).status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(a_->Health().ok());
}

TEST(PostgresLogOpen, AnUnreachableServerIsAClearError) {
  PostgresLogOptions options;
  options.conninfo = "host=127.0.0.1 port=1 user=nobody dbname=none connect_timeout=2";
  auto opened = OpenPostgresEventLog(options);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(opened.status().message().find("cannot connect to PostgreSQL"), std::string::npos)
      << opened.status().ToString();
}

}  // namespace
}  // namespace agentstream
