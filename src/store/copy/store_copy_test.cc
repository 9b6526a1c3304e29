// `store copy` between every pair of backends (SQLite, and PostgreSQL when AGENTSTREAM_TEST_PG
// names a server): a store with forks, a rewind, producers, a checkpoint, ownership history,
// consumers, devices and schedules is copied and read back through the destination's EventLog; a
// second run writes nothing; an interrupted copy is finished; the refusals (other sessions,
// differing sessions, a newer schema, a store in use) change nothing; a copy onto a full disk fails
// and the next run finishes it.
#include "store/copy/store_copy.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/event_codec.h"
#include "pg/testing/scratch_schema.h"
#include "sqlite/db.h"
#include "store/copy/copy_conn.h"
#include "store/log_factory.h"
#include "store/testing/events.h"
#include "testing/file_size_limit.h"
#include "testing/temp_dir.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

// One store of the test: a SQLite file or a PostgreSQL schema of its own.
struct TestStore {
  std::string url;
  std::unique_ptr<pg::testing::ScratchSchema> schema;
};

std::unique_ptr<EventLog> OpenLog(const std::string& url) {
  auto opened = OpenEventLog(StoreConfig{.url = url, .durability = Durability::kOs});
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  return opened.ok() ? std::move(*opened) : nullptr;
}

Result<std::int64_t> SessionRows(const std::string& url, const std::string& sql) {
  AS_ASSIGN_OR_RETURN(auto conn, store_copy::OpenCopyConn(url, false));
  AS_ASSIGN_OR_RETURN(auto rows, conn->Query(sql, {}, {store_copy::ColumnKind::kInt}, {}));
  return rows[0][0].integer;
}

Status Exec(const std::string& url, const std::string& sql) {
  AS_ASSIGN_OR_RETURN(auto conn, store_copy::OpenCopyConn(url, false));
  return conn->Exec(sql, {}, {});
}

// Session "a": 5 events, 3 more from a producer, rewound to 1:3 with 2 new ones and 2 after, a
// checkpoint and an ownership grant; "b": forked from a at 1:4, then 600 appends of one event
// each (more batches than one chunk holds) and one from a producer; "c": one event. A consumer with
// a position, a device, a pairing code and a presence row. A paused schedule with a pending tick,
// a lease and two firings.
void Fill(EventLog& log) {
  ASSERT_TRUE(log.CreateSession(SessionId("a"), SessionMeta{"scripted", "/w", "A"},
                                {Note("a1"), Note("a2"), Note("a3"), Note("a4"), Note("a5")})
                  .ok());
  AppendRequest produced{.session = SessionId("a"),
                         .producer = ProducerStamp{ProducerId("p"), 1, 0},
                         .events = {Note("p1"), Note("p2"), Note("p3")}};
  ASSERT_TRUE(log.Append(produced).ok());
  auto grant = log.coordination().AcquireOwnership(SessionId("a"), "daemon-x", 1);
  ASSERT_TRUE(grant.ok()) << grant.status().ToString();
  ASSERT_TRUE(log.Rewind(SessionId("a"), Cursor{Epoch(1), Seq(3)}, {Note("r1"), Note("r2")}).ok());
  ASSERT_TRUE(log.Append({.session = SessionId("a"), .events = {Note("r3"), Note("r4")}}).ok());
  ASSERT_TRUE(log.SaveCheckpoint(SessionId("a"), {Epoch(2), Seq(5), R"({"turns":2})"}).ok());
  ASSERT_TRUE(log.Fork(SessionId("a"), Cursor{Epoch(1), Seq(4)}, SessionId("b"),
                       SessionMeta{"scripted", "/w", "B"}, {Note("b1")})
                  .ok());
  for (int i = 0; i < 600; ++i)
    ASSERT_TRUE(
        log.Append({.session = SessionId("b"), .events = {Note("b" + std::to_string(i))}}).ok());
  ASSERT_TRUE(
      log.CreateSession(SessionId("c"), SessionMeta{"scripted", "/w", "C"}, {Note("c")}).ok());
  auto produced_b = log.Append({.session = SessionId("b"),
                                .producer = ProducerStamp{ProducerId("q"), 1, 0},
                                .events = {Note("q1")}});
  ASSERT_TRUE(produced_b.ok()) << produced_b.status().ToString();
  ASSERT_FALSE(produced_b->duplicate);
  ASSERT_TRUE(log.consumers().SaveConsumer(ConsumerId("hook"), R"({"sink":"jsonl"})").ok());
  auto lease = log.consumers().AcquireLease(ConsumerId("hook"), SessionId("a"), "d", 0, 60000);
  ASSERT_TRUE(lease.ok());
  ASSERT_TRUE(log.consumers()
                  .CommitConsumerPosition(ConsumerId("hook"), SessionId("a"), lease->generation,
                                          Cursor{Epoch(2), Seq(4)}, "state", 0)
                  .ok());
  ASSERT_TRUE(log.devices().AddPairing({std::string(32, 'k'), "phone", 1, 4102444800000}).ok());
  ASSERT_TRUE(log.devices().ReportPresence({"client-1", "", true, "a", 5, 4102444800000}).ok());
  ASSERT_TRUE(log.schedules()
                  .AddSchedule({.id = "nightly",
                                .definition = R"({"cron":"0 3 * * *"})",
                                .created_ms = 10,
                                .updated_ms = 10,
                                .last_tick_ms = 10})
                  .ok());
  ASSERT_TRUE(log.schedules().ClaimSchedule("nightly", "daemon-x", 100, 60000).ok());
  ASSERT_TRUE(log.schedules()
                  .AdvanceSchedule("nightly", "daemon-x", 3000, 4000,
                                   {{.schedule_id = "nightly",
                                     .tick_ms = 2000,
                                     .first_tick_ms = 1000,
                                     .ticks = 2,
                                     .recorded_ms = 2100,
                                     .outcome = "skipped",
                                     .detail = "missed"},
                                    {.schedule_id = "nightly",
                                     .tick_ms = 3000,
                                     .first_tick_ms = 3000,
                                     .recorded_ms = 3100,
                                     .outcome = "fired",
                                     .agent = "a",
                                     .client_message_id = "m-3",
                                     .turn_id = "t-3"}})
                  .ok());
  ASSERT_TRUE(log.schedules().SetSchedulePaused("nightly", true, 5000).ok());
}

// Every event of every epoch of `id`, as read through the log.
std::vector<EventRecord> History(EventLog& log, const SessionId& id) {
  std::vector<EventRecord> out;
  auto info = log.GetSession(id);
  EXPECT_TRUE(info.ok()) << info.status().ToString();
  if (!info.ok()) return out;
  for (std::uint64_t epoch = 1; epoch <= info->epoch.value(); ++epoch) {
    Seq from(1);
    while (true) {
      auto page = log.Read({id, Epoch(epoch), ReadDirection::kForward, from, 1000, 1 << 24});
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok() || page->events.empty()) break;
      for (const EventRecord& e : page->events) out.push_back(e);
      if (!page->has_newer) break;
      from = page->events.back().seq.next();
    }
  }
  return out;
}

// The rows of a table both stores keep alike (no session keys in them), in order.
std::string Rows(const std::string& url, const std::string& sql, std::size_t columns) {
  auto conn = store_copy::OpenCopyConn(url, false);
  EXPECT_TRUE(conn.ok());
  if (!conn.ok()) return "";
  auto rows = (*conn)->Query(
      sql, {}, std::vector<store_copy::ColumnKind>(columns, store_copy::ColumnKind::kText), {});
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::string out;
  for (const auto& row : rows.ok() ? *rows : std::vector<store_copy::Row>()) {
    for (const auto& v : row) out += (v.null ? "NULL" : v.bytes) + "|";
    out += "\n";
  }
  return out;
}

void ExpectSameRows(const std::string& from, const std::string& to) {
  const std::string producers =
      "SELECT s.id, p.producer, p.epoch, p.seq, p.first_seq, p.last_seq FROM producers p JOIN "
      "sessions s ON s.key = p.session ORDER BY 1, 2";
  EXPECT_FALSE(Rows(from, producers, 6).empty());
  EXPECT_EQ(Rows(to, producers, 6), Rows(from, producers, 6));
  const std::string sessions =
      "SELECT id, title, status, persistence, usage, current_epoch, owner_generation FROM "
      "sessions ORDER BY id";
  EXPECT_EQ(Rows(to, sessions, 7), Rows(from, sessions, 7));
}

void ExpectSameStores(EventLog& want, EventLog& have) {
  auto sessions = want.ListSessions("", 100);
  ASSERT_TRUE(sessions.ok());
  auto copied = have.ListSessions("", 100);
  ASSERT_TRUE(copied.ok());
  ASSERT_EQ(copied->size(), sessions->size());
  for (std::size_t i = 0; i < sessions->size(); ++i) {
    const SessionInfo& w = (*sessions)[i];
    const SessionInfo& h = (*copied)[i];
    EXPECT_EQ(h.id, w.id);
    EXPECT_EQ(h.epoch, w.epoch);
    EXPECT_EQ(h.tail, w.tail);
    EXPECT_EQ(h.forked_from, w.forked_from);
    EXPECT_EQ(h.meta.title, w.meta.title);
    EXPECT_EQ(h.meta.created_ms, w.meta.created_ms);
    EXPECT_FALSE(h.owner.live());
    const auto we = History(want, w.id);
    const auto he = History(have, w.id);
    ASSERT_EQ(he.size(), we.size()) << w.id.str();
    for (std::size_t j = 0; j < we.size(); ++j) {
      EXPECT_EQ(he[j].cursor(), we[j].cursor());
      EXPECT_EQ(he[j].time, we[j].time);
      EXPECT_EQ(he[j].payload, we[j].payload);
      EXPECT_EQ(he[j].owner_generation, we[j].owner_generation);
    }
  }
  auto checkpoint = have.LoadCheckpoint(SessionId("a"));
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->body, R"({"turns":2})");
  auto history = have.coordination().OwnershipHistory(SessionId("a"));
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 1u);
  auto positions = have.consumers().ListConsumerPositions(ConsumerId("hook"));
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].position, (Cursor{Epoch(2), Seq(4)}));
  EXPECT_EQ((*positions)[0].adapter_state, "state");
  auto presence = have.devices().ListPresence(0);
  ASSERT_TRUE(presence.ok());
  ASSERT_EQ(presence->size(), 1u);
  EXPECT_TRUE((*presence)[0].visible);
  auto schedule = have.schedules().GetSchedule("nightly");
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  EXPECT_EQ(schedule->definition, R"({"cron":"0 3 * * *"})");
  EXPECT_TRUE(schedule->paused);
  EXPECT_EQ(schedule->created_ms, 10);
  EXPECT_EQ(schedule->updated_ms, 5000);
  EXPECT_EQ(schedule->last_tick_ms, 3000);
  EXPECT_EQ(schedule->pending_tick_ms, 4000);
  EXPECT_EQ(schedule->lease_owner, "daemon-x");
  EXPECT_EQ(schedule->lease_expires_ms, 60100);
  auto firings = have.schedules().ListFirings("nightly", 10);
  ASSERT_TRUE(firings.ok()) << firings.status().ToString();
  ASSERT_EQ(firings->size(), 2u);
  EXPECT_EQ((*firings)[0].tick_ms, 3000);
  EXPECT_EQ((*firings)[0].turn_id, "t-3");
  EXPECT_EQ((*firings)[0].client_message_id, "m-3");
  EXPECT_EQ((*firings)[1].first_tick_ms, 1000);
  EXPECT_EQ((*firings)[1].ticks, 2);
  EXPECT_EQ((*firings)[1].detail, "missed");
}

class StoreCopyTest : public ::testing::TestWithParam<std::pair<std::string, std::string>> {
 protected:
  // A new, empty store of `kind` ("sqlite" or "postgres"); nullopt skips.
  std::optional<std::string> NewStore(const std::string& kind) {
    if (kind == "sqlite") return dir_.File(std::to_string(files_++) + ".db");
    const auto server = pg::testing::ScratchSchema::Server();
    if (!server || server->find("://") == std::string::npos) return std::nullopt;
    auto schema = pg::testing::ScratchSchema::Create(*server, "copy");
    EXPECT_TRUE(schema.ok()) << schema.status().ToString();
    if (!schema.ok()) return std::nullopt;
    EXPECT_TRUE((*schema)->admin().ExecScript("CREATE SCHEMA " + (*schema)->name()).ok());
    const std::string url = *server + (server->find('?') == std::string::npos ? "?" : "&") +
                            "options=-csearch_path%3D" + (*schema)->name();
    stores_.push_back(std::move(*schema));
    return url;
  }

  void SetUp() override {
    auto from = NewStore(GetParam().first);
    auto to = NewStore(GetParam().second);
    if (!from || !to) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
    from_ = *from;
    to_ = *to;
    auto log = OpenLog(from_);
    ASSERT_TRUE(log);
    Fill(*log);
  }

  test_support::TempDir dir_{"store-copy"};
  int files_ = 0;
  std::vector<std::unique_ptr<pg::testing::ScratchSchema>> stores_;
  std::string from_;
  std::string to_;
};

TEST_P(StoreCopyTest, CopiesEverythingAndASecondRunWritesNothing) {
  auto report = CopyStore(from_, to_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->sessions, 3);
  EXPECT_EQ(report->sessions_copied, 3);
  EXPECT_EQ(report->events, report->events_copied);
  ASSERT_EQ(report->digests.size(), 3u);
  EXPECT_EQ(report->digests[0].events, 12);   // a's two epochs
  EXPECT_EQ(report->digests[1].events, 602);  // b's own
  EXPECT_EQ(report->digests[2].events, 1);
  ASSERT_EQ(report->digests.size(), 3u);
  EXPECT_EQ(report->digests[0].session, "a");
  EXPECT_EQ(report->digests[0].sha256.size(), 64u);
  EXPECT_NE(report->digests[0].sha256, report->digests[1].sha256);
  EXPECT_GE(report->table_rows, 4);

  auto again = CopyStore(from_, to_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->sessions_copied, 0);
  EXPECT_EQ(again->events_copied, 0);
  EXPECT_EQ(again->digests[1].sha256, report->digests[1].sha256);

  ExpectSameRows(from_, to_);
  auto want = OpenLog(from_);
  auto have = OpenLog(to_);
  ASSERT_TRUE(want && have);
  ExpectSameStores(*want, *have);
}

TEST_P(StoreCopyTest, AnInterruptedCopyIsFinishedByTheNextRun) {
  ASSERT_TRUE(CopyStore(from_, to_).ok());
  // As a kill between two chunks leaves it: the last batches of b gone, a's producers too.
  ASSERT_TRUE(Exec(to_,
                   "DELETE FROM events WHERE session = (SELECT key FROM sessions WHERE id = "
                   "'b') AND first_seq > 300")
                  .ok());
  ASSERT_TRUE(Exec(to_, "DELETE FROM producers").ok());
  ASSERT_TRUE(Exec(to_, "DELETE FROM checkpoints").ok());
  auto report = CopyStore(from_, to_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->sessions_copied, 2);
  EXPECT_EQ(report->events_copied, 306);  // b's seqs 301 to 606
  ExpectSameRows(from_, to_);
  auto want = OpenLog(from_);
  auto have = OpenLog(to_);
  ASSERT_TRUE(want && have);
  ExpectSameStores(*want, *have);
}

TEST_P(StoreCopyTest, ACopyOntoAFullDiskFailsAndIsFinishedByTheNextRun) {
  if (GetParam().second != "sqlite")
    GTEST_SKIP() << "a full disk is the destination's: the PostgreSQL server's is not ours to fill";
  // The room the whole copy takes, measured on a scratch copy; the disk gets 90% of it (most of
  // a small store is its schema, which comes first).
  const std::string scratch = dir_.File("scratch.db");
  ASSERT_TRUE(CopyStore(from_, scratch).ok());
  const auto room = std::filesystem::file_size(scratch);
  auto failed = [&] {
    test_support::FileSizeLimit full(room * 9 / 10);
    return CopyStore(from_, to_);
  }();
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kIoError) << failed.status().ToString();
  EXPECT_NE(failed.status().message().find(to_), std::string::npos) << "names the destination";
  // Whole transactions were left: the next run, with room, copies the rest and verifies.
  auto report = CopyStore(from_, to_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_GT(report->events_copied, 0);
  ExpectSameRows(from_, to_);
  auto want = OpenLog(from_);
  auto have = OpenLog(to_);
  ASSERT_TRUE(want && have);
  ExpectSameStores(*want, *have);
}

TEST_P(StoreCopyTest, OtherSessionsNeedMergeAndDifferingOnesAreRefusedByName) {
  {
    auto dest = OpenLog(to_);
    ASSERT_TRUE(dest);
    ASSERT_TRUE(
        dest->CreateSession(SessionId("z"), SessionMeta{"scripted", "/w", "Z"}, {Note("z")}).ok());
  }
  auto refused = CopyStore(from_, to_);
  ASSERT_EQ(refused.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("(z)"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(*SessionRows(to_, "SELECT count(*) FROM sessions"), 1);

  auto merged = CopyStore(from_, to_, {.merge = true});
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(*SessionRows(to_, "SELECT count(*) FROM sessions"), 4);

  // A session "c" of other content at the destination: refused by name, nothing written.
  {
    auto dest = OpenLog(to_);
    ASSERT_TRUE(dest);
    ASSERT_TRUE(dest->Append({.session = SessionId("c"), .events = {Note("only here")}}).ok());
  }
  const auto events_before = *SessionRows(to_, "SELECT count(*) FROM events");
  auto conflict = CopyStore(from_, to_, {.merge = true});
  ASSERT_EQ(conflict.status().code(), ErrorCode::kConflict);
  EXPECT_NE(conflict.status().message().find("(c)"), std::string::npos)
      << conflict.status().message();
  EXPECT_EQ(*SessionRows(to_, "SELECT count(*) FROM events"), events_before);
}

TEST_P(StoreCopyTest, ANewerSourceIsRefused) {
  const std::string bump = GetParam().first == "sqlite"
                               ? "PRAGMA user_version = 99"
                               : "UPDATE agentstream_schema SET version = 99";
  ASSERT_TRUE(Exec(from_, bump).ok());
  auto refused = CopyStore(from_, to_);
  ASSERT_EQ(refused.status().code(), ErrorCode::kUnsupportedVersion);
  EXPECT_NE(refused.status().message().find("schema version 99"), std::string::npos);
}

TEST_P(StoreCopyTest, AStoreInUseIsRefused) {
  auto serving = OpenLog(from_);
  ASSERT_TRUE(serving);
  // A daemon of a PostgreSQL store shows itself by its heartbeat; of a SQLite one by the file.
  ASSERT_TRUE(serving->coordination()
                  .Heartbeat({"daemon-1", "http://x", "host-1", "/d", 0, 0}, 10000)
                  .ok() ||
              GetParam().first == "sqlite");
  auto refused = CopyStore(from_, to_);
  ASSERT_EQ(refused.status().code(), ErrorCode::kUnavailable) << refused.status().ToString();
  EXPECT_NE(refused.status().message().find(GetParam().first == "sqlite" ? "in use" : "daemon-1"),
            std::string::npos)
      << refused.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Backends, StoreCopyTest,
    ::testing::Values(std::pair{"sqlite", "sqlite"}, std::pair{"sqlite", "postgres"},
                      std::pair{"postgres", "sqlite"}, std::pair{"postgres", "postgres"}),
    [](const auto& info) { return info.param.first + "_to_" + info.param.second; });

}  // namespace
}  // namespace agentstream
