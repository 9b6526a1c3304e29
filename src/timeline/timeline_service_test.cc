// TimelineService keeps its indexes within a byte budget, dropping the least recently paged; the
// background indexer on SQLite and on a PostgreSQL database two daemons share (skipped unless
// AGENTSTREAM_TEST_PG names a server).
#include "timeline/timeline_service.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "pg/testing/scratch_schema.h"
#include "store/forwarding_log.h"
#include "store/memory_log.h"
#include "store/postgres/postgres_log.h"
#include "store/sqlite/sqlite_log.h"

namespace agentstream {
namespace {

// Appends user messages "WORD number I", I from `from`, `n` of them, to `session` in one request.
void Say(EventLog& log, const SessionId& session, int from, int n, const std::string& word) {
  AppendRequest request;
  request.session = session;
  for (int i = from; i < from + n; ++i) {
    const std::string k = std::to_string(i);
    request.events.push_back(
        MakeNewEvent(UserMessage{MessageId("u" + k), "c" + k, word + " number " + k}));
  }
  ASSERT_TRUE(log.Append(std::move(request)).ok());
}

// Whether `pred` holds within 10 s.
bool Eventually(const std::function<bool()>& pred) {
  for (int i = 0; i < 1000 && !pred(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return pred();
}

class TimelineServiceTest : public ::testing::Test {
 protected:
  // A session of `notices` notices (one timeline item each).
  SessionId Session(const std::string& id, int notices) {
    std::vector<NewEvent> events;
    for (int i = 0; i < notices; ++i)
      events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n" + std::to_string(i)}));
    EXPECT_TRUE(log_.CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id}, {}).ok());
    AppendRequest request;
    request.session = SessionId(id);
    request.events = std::move(events);
    EXPECT_TRUE(log_.Append(std::move(request)).ok());
    return SessionId(id);
  }
  static std::string Keys(const timeline::Page& page) {
    std::string out;
    for (const timeline::ProjectedItem& item : page.items) out += item.key + ",";
    return out;
  }

  MemoryEventLog log_;
};

TEST_F(TimelineServiceTest, IndexesStayWithinTheBudgetAndADroppedOneIsRebuilt) {
  const SessionId a = Session("a", 3000), b = Session("b", 3000), c = Session("c", 3000);
  TimelineService measure(log_);
  ASSERT_TRUE(measure.Page(a, {}).ok());
  const std::size_t one = measure.IndexBytes();
  ASSERT_GT(one, 3000u * sizeof(timeline::ItemSpan));  // at least a span per item

  TimelineService service(log_, 256, 2 * one + one / 2);  // room for two
  Result<timeline::Page> first = service.Page(a, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(service.Page(b, {}).ok());
  EXPECT_EQ(service.IndexBytes(), 2 * one);
  ASSERT_TRUE(service.Page(c, {}).ok());  // drops a's, the least recently paged
  EXPECT_EQ(service.IndexBytes(), 2 * one);
  Result<timeline::Page> again = service.Page(a, {});  // rebuilt; drops b's
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Keys(*again), Keys(*first));
  EXPECT_EQ(service.IndexBytes(), 2 * one);

  // A budget smaller than one index keeps the one being paged, alone.
  TimelineService tiny(log_, 256, 1);
  ASSERT_TRUE(tiny.Page(a, {}).ok());
  ASSERT_TRUE(tiny.Page(b, {}).ok());
  EXPECT_EQ(tiny.IndexBytes(), one);
}

TEST_F(TimelineServiceTest, AnIndexGrowsWithItsSessionAndIsAccountedAtEachPage) {
  const SessionId a = Session("a", 100);
  TimelineService service(log_);
  ASSERT_TRUE(service.Page(a, {}).ok());
  const std::size_t small = service.IndexBytes();
  AppendRequest more;
  more.session = a;
  for (int i = 0; i < 2000; ++i)
    more.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "m"}));
  ASSERT_TRUE(log_.Append(std::move(more)).ok());
  ASSERT_TRUE(service.Page(a, {}).ok());
  EXPECT_GT(service.IndexBytes(), small + 2000 * sizeof(timeline::ItemSpan));
}

// A SQLite log file in a directory of the test's own, removed at the end.
class TimelineServiceStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/agentstream-timeline-XXXXXX";
    dir_ = mkdtemp(tmpl);
    options_.path = dir_ + "/log.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
  SqliteLogOptions options_;
};

// On a store, pages come from the durable index; rows damaged on disk are dropped and rebuilt
// from the log, and the pages stay what they were.
TEST_F(TimelineServiceStoreTest, DamagedIndexRowsAreRebuiltNotServed) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const SessionId session("s");
  ASSERT_TRUE((*log)->CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
  AppendRequest request;
  request.session = session;
  for (int i = 0; i < 300; ++i) {
    const MessageId m("m" + std::to_string(i));
    request.events.push_back(MakeNewEvent(AssistantMessageStart{m}));
    request.events.push_back(MakeNewEvent(AssistantMessageDelta{m, "text " + std::to_string(i)}));
    request.events.push_back(MakeNewEvent(AssistantMessageEnd{m}));
  }
  ASSERT_TRUE((*log)->Append(std::move(request)).ok());
  auto text = [](const timeline::Page& page) {
    boost::json::array items;
    for (const timeline::ProjectedItem& item : page.items) items.push_back(ItemToJson(item));
    return boost::json::serialize(items);
  };
  std::string before;
  {
    TimelineService service(**log);
    Result<timeline::Page> page = service.Page(session, {});
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_EQ(page->items.size(), 50u);
    before = text(*page);
  }
  auto count_rows = [&] {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM timeline_items", -1, &s, nullptr);
    sqlite3_step(s);
    const int n = sqlite3_column_int(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  };
  EXPECT_EQ(count_rows(), 300);  // the index is stored
  for (const char* damage :
       {"UPDATE timeline_items SET ranges = 'x' WHERE ordinal = 299",
        "UPDATE timeline_items SET ranges = '898-899', seq_start = 898 WHERE ordinal = 299",
        "UPDATE timeline_items SET kind = 99 WHERE ordinal = 298",
        // Well-formed, but names an event of another item: the pager's count disagrees.
        "UPDATE timeline_items SET ranges = '897-900', seq_start = 897 WHERE ordinal = 299"}) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(options_.path.c_str(), &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    ASSERT_EQ(sqlite3_exec(db, damage, nullptr, nullptr, nullptr), SQLITE_OK) << damage;
    sqlite3_close(db);
    TimelineService service(**log);
    Result<timeline::Page> page = service.Page(session, {});
    ASSERT_TRUE(page.ok()) << damage << ": " << page.status().ToString();
    EXPECT_EQ(text(*page), before) << damage;
    EXPECT_EQ(count_rows(), 300) << damage;  // rebuilt
  }
  log->reset();
}

// The pages of the test below, on the reopened log: each decodes fewer than 300 events.
void CheckPagesAfterRestart(EventLog& inner, const SessionId& session, int turns) {
  agentstream::testing::ReadCountingLog log(inner);
  TimelineService service(log);
  timeline::PageRequest tail;
  Result<timeline::Page> page = service.Page(session, tail);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->items.size(), 50u);
  EXPECT_LT(log.events_read.load(), 300u) << "of " << turns * 15 << " events";
  log.events_read = 0;
  timeline::PageRequest middle;
  middle.direction = timeline::PageDirection::kBefore;
  middle.cursor = Cursor{Epoch(1), Seq(turns * 15 / 2)};
  page = service.Page(session, middle);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->items.size(), 50u);
  EXPECT_LT(log.events_read.load(), 300u);
  // New commits: the next page indexes those and reads its own.
  AppendRequest more;
  more.session = session;
  for (int i = 0; i < 20; ++i) more.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n"}));
  ASSERT_TRUE(log.Append(std::move(more)).ok());
  log.events_read = 0;
  page = service.Page(session, tail);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.back().key, "#" + std::to_string(turns * 15 + 20));
  EXPECT_LT(log.events_read.load(), 300u);
}

// After a restart (a new service and a reopened log), a page decodes only its own items'
// events: the tail page and a `before` page in the middle of 60,000 events read under 300 events
// each, the index built before is not rebuilt, and a page after new commits indexes only them.
TEST_F(TimelineServiceStoreTest, APageAfterARestartDecodesOnlyThePage) {
  const SessionId session("s");
  constexpr int kTurns = 4000;  // 15 events and 3 items each
  {
    auto log = OpenSqliteEventLog(options_);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    ASSERT_TRUE((*log)->CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
    for (int chunk = 0; chunk < kTurns / 100; ++chunk) {
      AppendRequest request;
      request.session = session;
      for (int turn = chunk * 100; turn < (chunk + 1) * 100; ++turn) {
        const std::string n = std::to_string(turn);
        const MessageId m("m" + n);
        request.events.push_back(MakeNewEvent(UserMessage{MessageId("u" + n), "c" + n, "go"}));
        request.events.push_back(MakeNewEvent(AssistantMessageStart{m}));
        for (int d = 0; d < 10; ++d)
          request.events.push_back(MakeNewEvent(AssistantMessageDelta{m, "x"}));
        request.events.push_back(MakeNewEvent(AssistantMessageEnd{m}));
        request.events.push_back(MakeNewEvent(ToolCallStart{ToolCallId("t" + n), "Bash"}));
        request.events.push_back(MakeNewEvent(ToolCallEnd{ToolCallId("t" + n)}));
      }
      ASSERT_TRUE((*log)->Append(std::move(request)).ok());
    }
    TimelineService service(**log);
    ASSERT_TRUE(service.Page(session, {}).ok());  // builds the index once
    // And the search index, which a restart would otherwise go on building.
    ASSERT_TRUE(service.Search(SearchQuery{{"go"}, session, 1}).ok());
  }
  auto reopened = OpenSqliteEventLog(options_);
  ASSERT_TRUE(reopened.ok());
  CheckPagesAfterRestart(**reopened, session, kTurns);
  reopened->reset();
}

// A session no daemon indexed is indexed in the background from the start, with no page.
TEST_F(TimelineServiceStoreTest, AnUnindexedSessionIsIndexedFromTheStart) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const SessionId session("s");
  ASSERT_TRUE((*log)->CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
  for (int chunk = 0; chunk < 10; ++chunk) {
    AppendRequest request;
    request.session = session;
    for (int i = 0; i < 1000; ++i)
      request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n" + std::to_string(i)}));
    ASSERT_TRUE((*log)->Append(std::move(request)).ok());
  }
  ItemIndexStore& store = *(*log)->item_index();
  ASSERT_FALSE(store.LoadItemState(session, Epoch(1))->has_value());
  {
    TimelineService service(**log);
    bool indexed = false;
    for (int i = 0; i < 2000 && !indexed; ++i) {
      Result<std::optional<ItemIndexState>> state = store.LoadItemState(session, Epoch(1));
      indexed = state.ok() && *state && (*state)->watermark == Seq(10000);
      if (!indexed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(indexed);
    EXPECT_EQ((*store.LoadItemState(session, Epoch(1)))->items, 10000u);
  }
  log->reset();
}

// Search: sessions stored before the daemon started are indexed at its start, later commits by
// the background indexer, and a query naming a session is current to its tail at once.
TEST_F(TimelineServiceStoreTest, SearchFindsStoredAndNewTextWithinItsLimit) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const SessionId old_session("old"), other("other");
  ASSERT_TRUE((*log)->CreateSession(old_session, SessionMeta{"scripted", "/w"}, {}).ok());
  ASSERT_TRUE((*log)->CreateSession(other, SessionMeta{"scripted", "/w"}, {}).ok());
  Say(**log, old_session, 0, 30, "archived");
  TimelineService service(**log);
  auto find = [&](const std::string& word, std::optional<SessionId> session, std::size_t limit) {
    Result<SearchResult> found = service.Search(SearchQuery{{word}, session, limit});
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    return found.ok() ? *found : SearchResult{};
  };
  EXPECT_TRUE(Eventually([&] { return find("archived", std::nullopt, 200).hits.size() == 30; }));
  const SearchResult page = find("archived", std::nullopt, 10);
  EXPECT_EQ(page.hits.size(), 10u);
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.hits[0].cursor, (Cursor{Epoch(1), Seq(30)}));  // newest first
  EXPECT_FALSE(find("archived", std::nullopt, 30).truncated);

  Say(**log, other, 0, 3, "fresh");
  EXPECT_EQ(find("fresh", other, 20).hits.size(), 3u);  // caught up by the query itself
  Say(**log, other, 3, 2, "later");
  EXPECT_TRUE(Eventually([&] { return find("later", std::nullopt, 20).hits.size() == 2; }));
  EXPECT_EQ(service.Search(SearchQuery{{"x"}, std::nullopt, 0}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(service.Search(SearchQuery{{"x"}, SessionId("missing"), 5}).status().code(),
            ErrorCode::kNotFound);
}

// The background indexer takes the records of this daemon's commits from their notices instead
// of reading them back from the log.
TEST_F(TimelineServiceStoreTest, TheIndexerTakesTheRecordsOfItsOwnCommitsFromTheirNotices) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const SessionId session("0s");
  struct CountingReads : testing::ForwardingLog {
    using ForwardingLog::ForwardingLog;
    Result<ReadResult> Read(const ReadRequest& request) override {
      if (request.session == SessionId("0s")) ++reads;
      return ForwardingLog::Read(request);
    }
    std::atomic<int> reads{0};
  } counting(**log);
  // A stored session: once the start-up pass, which lists the sessions in id order, indexed it,
  // that pass is past "0s".
  ASSERT_TRUE((*log)->CreateSession(SessionId("a"), SessionMeta{"scripted", "/w"}, {}).ok());
  AppendRequest stored;
  stored.session = SessionId("a");
  stored.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "n"}));
  ASSERT_TRUE((*log)->Append(std::move(stored)).ok());
  TimelineService service(counting);
  ASSERT_TRUE(Eventually([&] { return service.EventsIndexed() == 1; }));
  auto hits = [&](const std::string& word) {
    Result<SearchResult> found = service.Search(SearchQuery{{word}, std::nullopt, 100});
    return found.ok() ? found->hits.size() : 0;
  };
  // A session's creation carries no records: its first events are read back.
  ASSERT_TRUE(counting.CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
  Say(counting, session, 0, 1, "warmup");
  ASSERT_TRUE(Eventually([&] { return hits("warmup") == 1; }));
  counting.reads = 0;
  Say(counting, session, 1, 9, "fresh");
  EXPECT_TRUE(Eventually([&] { return hits("fresh") == 9; }));
  EXPECT_TRUE(Eventually([&] {
    Result<std::optional<ItemIndexState>> state =
        (*log)->item_index()->LoadItemState(session, Epoch(1));
    return state.ok() && *state && (*state)->watermark == Seq(10);
  }));
  EXPECT_EQ(service.EventsIndexed(), 11u);
  EXPECT_EQ(counting.reads.load(), 0);
}

// A round of the background indexer commits what it indexed of all its sessions together: one
// transaction for the timeline index and one for the search index, not two per session.
TEST_F(TimelineServiceStoreTest, ARoundCommitsTheIndexesOfAllItsSessionsTogether) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  TimelineService service(**log);
  constexpr int kSessions = 20;
  std::vector<SessionId> sessions;
  for (int i = 0; i < kSessions; ++i) {
    sessions.emplace_back("s" + std::to_string(i));
    ASSERT_TRUE((*log)->CreateSession(sessions.back(), SessionMeta{"scripted", "/w"}, {}).ok());
    Say(**log, sessions.back(), 0, 1, "first");
  }
  auto indexed_through = [&](Seq seq) {
    for (const SessionId& session : sessions) {
      Result<std::optional<ItemIndexState>> items =
          (*log)->item_index()->LoadItemState(session, Epoch(1));
      Result<std::optional<Cursor>> text = (*log)->search_index()->LoadSearchState(session);
      if (!items.ok() || !*items || (*items)->watermark != seq) return false;
      if (!text.ok() || !*text || (*text)->seq != seq) return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return indexed_through(Seq(1)); }));
  // One append to each session, all in one commit: their notices reach one round.
  std::atomic<int> acknowledged{0};
  for (const SessionId& session : sessions) {
    AppendRequest request;
    request.session = session;
    request.events.push_back(MakeNewEvent(UserMessage{MessageId("u"), "c", "second words"}));
    (*log)->AppendAsync(std::move(request), [&](Result<AppendResult> r) {
      EXPECT_TRUE(r.ok());
      ++acknowledged;
    });
  }
  ASSERT_TRUE(Eventually([&] { return acknowledged.load() == kSessions; }));
  const std::uint64_t commits = (*log)->Stats().commits;
  ASSERT_TRUE(Eventually([&] { return indexed_through(Seq(2)); }));
  // Two, or four when the appends' commits straddled the start of a round; one commit per
  // session and index would be 40.
  EXPECT_LE((*log)->Stats().commits - commits, 4u);
  Result<SearchResult> found = service.Search(SearchQuery{{"second"}, std::nullopt, 100});
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->hits.size(), static_cast<std::size_t>(kSessions));
}

// What is pending when the service stops is indexed before it ends, the search index too: the
// next start finds both current.
TEST_F(TimelineServiceStoreTest, WhatIsPendingAtAStopIsIndexedBeforeTheServiceEnds) {
  auto log = OpenSqliteEventLog(options_);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const SessionId session("s");
  ASSERT_TRUE((*log)->CreateSession(session, SessionMeta{"scripted", "/w"}, {}).ok());
  auto indexed_through = [&](Seq seq) {
    Result<std::optional<ItemIndexState>> items =
        (*log)->item_index()->LoadItemState(session, Epoch(1));
    Result<std::optional<Cursor>> text = (*log)->search_index()->LoadSearchState(session);
    return items.ok() && *items && (*items)->watermark == seq && text.ok() && *text &&
           (*text)->seq == seq;
  };
  {
    TimelineService service(**log);
    Say(**log, session, 0, 1, "first");
    ASSERT_TRUE(Eventually([&] { return indexed_through(Seq(1)); }));
    // Within the interval between two rounds: the stop's own round indexes it.
    Say(**log, session, 1, 2, "second");
  }
  EXPECT_TRUE(indexed_through(Seq(3)));
}

// Two daemons on one database: each indexes its own commits. Another daemon's it leaves to that
// daemon, and indexes them itself only once the session has been quiet for kRemoteIndexingDelay:
// what a daemon that stopped before indexing left behind.
TEST(TimelineServiceSharedTest, ADaemonIndexesAnotherDaemonsCommitsOnlyOnceTheyWentQuiet) {
  const std::optional<std::string> server = pg::testing::ScratchSchema::Server();
  if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  auto scratch = pg::testing::ScratchSchema::Create(*server, "tl");
  ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
  auto open = [&] {
    PostgresLogOptions options;
    options.conninfo = (*scratch)->conninfo();
    options.schema = (*scratch)->name();
    return OpenPostgresEventLog(options);
  };
  auto a = open();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = open();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  {
    TimelineService b_service(**b);
    auto hits = [&](const std::string& word) {
      Result<SearchResult> found = b_service.Search(SearchQuery{{word}, std::nullopt, 100});
      EXPECT_TRUE(found.ok()) << found.status().ToString();
      return found.ok() ? found->hits.size() : 0;
    };
    // b's indexer has run: its start-up pass over the stored sessions, which lists them in id
    // order, is past every session below.
    const SessionId own("zz-own");
    ASSERT_TRUE((*b)->CreateSession(own, SessionMeta{"scripted", "/w"}, {}).ok());
    Say(**b, own, 0, 1, "mine");
    ASSERT_TRUE(Eventually([&] { return b_service.EventsIndexed() == 1; }));

    // Daemon a commits and indexes nothing (it stops before its indexer's turn).
    const SessionId left("left");
    ASSERT_TRUE((*a)->CreateSession(left, SessionMeta{"scripted", "/w"}, {}).ok());
    const auto committed = std::chrono::steady_clock::now();
    Say(**a, left, 0, 20, "orphaned");
    std::this_thread::sleep_until(committed + TimelineService::kRemoteIndexingDelay / 2);
    EXPECT_EQ(b_service.EventsIndexed(), 1u);
    EXPECT_EQ(hits("orphaned"), 0u);
    EXPECT_TRUE(Eventually([&] { return hits("orphaned") == 20; }));
    EXPECT_EQ(b_service.EventsIndexed(), 21u);

    // Daemon a indexes its own commits; b, once the session is quiet, finds nothing left to do.
    TimelineService a_service(**a);
    const SessionId busy("busy");
    ASSERT_TRUE((*a)->CreateSession(busy, SessionMeta{"scripted", "/w"}, {}).ok());
    Say(**a, busy, 0, 5, "current");
    EXPECT_TRUE(Eventually([&] { return hits("current") == 5; }));
    EXPECT_TRUE(Eventually([&] { return a_service.EventsIndexed() == 5; }));
    std::this_thread::sleep_for(TimelineService::kRemoteIndexingDelay * 3 / 2);
    EXPECT_EQ(b_service.EventsIndexed(), 21u);
  }
  a->reset();
  b->reset();
}

}  // namespace
}  // namespace agentstream
