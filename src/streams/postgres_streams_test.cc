// The generic streams on PostgreSQL as several daemons use them: two stores (two daemons) on one
// database keep idempotent producers, Stream-Seq checks, forks and deletion exact; a live reader
// on one is woken by an append through the other; a subscription's claim is fenced across them
// and its wake made once; connections the server ended are reopened, one lost during a request
// fails it; bad text is refused. Needs a server: AGENTSTREAM_TEST_PG (a libpq connection string;
// tools/test.sh starts a throw-away cluster). Each test has a schema of its own.
#include "streams/postgres_streams.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <chrono>
#include <future>
#include <set>
#include <thread>

#include "pg/pg.h"
#include "pg/testing/scratch_schema.h"
#include "streams/postgres_streams_internal.h"
#include "streams/subscriptions.h"

namespace agentstream::streams {
namespace {

namespace json = boost::json;
using namespace std::chrono_literals;

class PostgresStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<std::string> server = pg::testing::ScratchSchema::Server();
    if (!server) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
    auto scratch = pg::testing::ScratchSchema::Create(*server, "ds");
    ASSERT_TRUE(scratch.ok()) << scratch.status().ToString();
    scratch_ = std::move(scratch).value();
  }
  void TearDown() override {
    sub_a_.reset();
    sub_b_.reset();
    a_.reset();
    b_.reset();
    scratch_.reset();
  }

  PostgresStreamsOptions Options() const {
    PostgresStreamsOptions options;
    options.conninfo = scratch_->conninfo();
    options.schema = scratch_->name();
    return options;
  }
  std::unique_ptr<StreamStore> Open() {
    auto store = OpenPostgresStreamStore(Options());
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }
  // Two daemons sharing the database.
  void OpenBoth() {
    a_ = Open();
    b_ = Open();
    ASSERT_TRUE(a_ && b_);
  }
  // And their subscription managers, each hooked to its own store.
  void OpenSubscriptions() {
    for (auto [store, manager] : {std::pair{a_.get(), &sub_a_}, std::pair{b_.get(), &sub_b_}}) {
      auto records = OpenPostgresSubscriptionRecords(Options());
      ASSERT_TRUE(records.ok()) << records.status().ToString();
      *manager = std::make_unique<SubscriptionManager>(*store, std::move(*records));
      ASSERT_TRUE((*manager)->Restore().ok());
      store->SetChangeHook([m = manager->get()](const std::string& p) { m->OnStreamChanged(p); });
    }
  }
  void CloseSubscriptions() {
    a_->SetChangeHook({});
    b_->SetChangeHook({});
    sub_a_.reset();
    sub_b_.reset();
  }

  static OpResult Create(StreamStore& store, const std::string& path,
                         const std::string& type = "text/plain", std::string body = "") {
    CreateArgs args;
    args.path = path;
    args.content_type = type;
    args.body = std::move(body);
    return store.Create(args);
  }
  static OpResult Append(StreamStore& store, const std::string& path, std::string body,
                         std::optional<ProducerArgs> producer = {},
                         std::optional<std::string> stream_seq = {}) {
    AppendArgs args;
    args.path = path;
    args.body = std::move(body);
    args.producer = std::move(producer);
    args.stream_seq = std::move(stream_seq);
    return store.Append(args);
  }
  static std::vector<std::string> Messages(StreamStore& store, const std::string& path) {
    std::vector<std::string> out;
    std::optional<Offset> after;
    for (;;) {
      ReadResult r = store.Read(path, after);
      EXPECT_EQ(r.code, Code::kOk);
      for (const Message& m : r.messages) out.push_back(*m.data);
      if (!r.messages.empty()) after = r.messages.back().offset;
      if (r.code != Code::kOk || r.up_to_date) return out;
    }
  }
  std::int64_t Count(const std::string& sql) {
    auto r = scratch_->admin().Exec("SELECT (" + sql + ")::bigint");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->Int(0, 0) : -1;
  }

  static StreamResponse Call(SubscriptionManager& m, const std::string& method,
                             const std::string& path, const std::string& body,
                             const std::string& token = "") {
    StreamRequest req;
    req.method = method;
    req.path = "/v1/stream/__ds/" + path;
    req.body = body;
    if (!token.empty()) req.headers.emplace_back("authorization", "Bearer " + token);
    return m.Handle(req, "http://127.0.0.1:1");
  }

  std::unique_ptr<pg::testing::ScratchSchema> scratch_;  // dropped after the stores close
  std::unique_ptr<StreamStore> a_;
  std::unique_ptr<StreamStore> b_;
  std::unique_ptr<SubscriptionManager> sub_a_;
  std::unique_ptr<SubscriptionManager> sub_b_;
};

TEST_F(PostgresStreamsTest, WhatOneDaemonWritesTheOtherServes) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/s", "text/plain", "a").code, Code::kCreated);
  EXPECT_EQ(Create(*b_, "/s", "text/plain; charset=utf-8").code, Code::kOk);
  EXPECT_EQ(Create(*b_, "/s", "application/json").code, Code::kConfigConflict);
  const OpResult appended = Append(*b_, "/s", "bc");
  ASSERT_EQ(appended.code, Code::kOk);
  EXPECT_EQ(appended.offset, Advance(Advance(Offset{}, 1), 2));
  EXPECT_EQ(Messages(*a_, "/s"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(a_->Head("/s").info.tail, appended.offset);
  EXPECT_EQ(Append(*a_, "/missing", "x").code, Code::kNotFound);
  // Closing through one daemon closes for both.
  AppendArgs close;
  close.path = "/s";
  close.close = true;
  ASSERT_EQ(a_->Append(close).code, Code::kOk);
  EXPECT_EQ(Append(*b_, "/s", "late").code, Code::kClosed);
  EXPECT_TRUE(b_->Head("/s").info.closed);
  EXPECT_EQ(b_->Append(close).code, Code::kOk);  // closing again is idempotent
}

TEST_F(PostgresStreamsTest, JsonModeAndLargeReadsInPages) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/j", "application/json", "[1,2]").code, Code::kCreated);
  AppendArgs bad;
  bad.path = "/j";
  bad.body = "{oops";
  EXPECT_EQ(b_->Append(bad).code, Code::kInvalidJson);
  bad.body = "[]";
  EXPECT_EQ(b_->Append(bad).code, Code::kEmptyArray);
  EXPECT_EQ(Messages(*b_, "/j"), (std::vector<std::string>{"1,2,"}));

  ASSERT_EQ(Create(*a_, "/big", "application/octet-stream").code, Code::kCreated);
  std::string expected;
  for (int i = 0; i < 30; ++i) {
    std::string chunk(std::size_t{100} * 1024, static_cast<char>('a' + i % 26));
    chunk[0] = '\0';  // any bytes
    expected += chunk;
    ASSERT_EQ(Append(i % 2 ? *a_ : *b_, "/big", chunk).code, Code::kOk);
  }
  ReadResult first = a_->Read("/big", std::nullopt);
  EXPECT_FALSE(first.up_to_date);         // max_read_bytes cut it short
  EXPECT_EQ(first.messages.size(), 11U);  // up to 1 MiB, then one more started below it
  std::string all;
  for (const std::string& m : Messages(*b_, "/big")) all += m;
  EXPECT_EQ(all, expected);
}

// One idempotent producer writing through both daemons at once: each seq is accepted exactly
// once, the other daemon's copy is a duplicate, and the stream holds each message once, in order.
TEST_F(PostgresStreamsTest, ConcurrentProducerRetriesThroughBothDaemonsAreExact) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/p").code, Code::kCreated);
  constexpr int kSeqs = 150;
  std::atomic<int> accepted{0}, duplicates{0}, other{0};
  auto writer = [&](StreamStore* store) {
    for (int seq = 0; seq < kSeqs; ++seq) {
      const OpResult r =
          Append(*store, "/p", std::to_string(seq), ProducerArgs{"w", 0, std::uint64_t(seq)});
      if (r.code == Code::kOk) {
        ++accepted;
      } else if (r.code == Code::kDuplicate) {
        ++duplicates;
      } else {
        ++other;
      }
    }
  };
  std::thread t1(writer, a_.get()), t2(writer, b_.get());
  t1.join();
  t2.join();
  EXPECT_EQ(accepted, kSeqs);
  EXPECT_EQ(duplicates, kSeqs);
  EXPECT_EQ(other, 0);
  const std::vector<std::string> messages = Messages(*a_, "/p");
  ASSERT_EQ(messages.size(), std::size_t{kSeqs});
  for (int i = 0; i < kSeqs; ++i) EXPECT_EQ(messages[i], std::to_string(i));
  // A skipped seq is a gap, whichever daemon sees it; an older epoch is fenced.
  const OpResult gap = Append(*b_, "/p", "x", ProducerArgs{"w", 0, kSeqs + 5});
  EXPECT_EQ(gap.code, Code::kSequenceGap);
  EXPECT_EQ(gap.expected_seq, std::uint64_t{kSeqs});
  EXPECT_EQ(gap.received_seq, std::uint64_t{kSeqs + 5});
  EXPECT_EQ(Append(*a_, "/p", "x", ProducerArgs{"w", 1, 0}).code, Code::kOk);
  const OpResult stale = Append(*b_, "/p", "x", ProducerArgs{"w", 0, kSeqs});
  EXPECT_EQ(stale.code, Code::kStaleEpoch);
  EXPECT_EQ(stale.current_epoch, 1U);
  EXPECT_EQ(Append(*b_, "/p", "x", ProducerArgs{"w", 2, 1}).code, Code::kInvalidEpochSeq);
}

// Many producers and plain Stream-Seq writers on one stream through both daemons: nothing lost,
// nothing doubled, every producer's messages in its own order, each Stream-Seq accepted once.
TEST_F(PostgresStreamsTest, ManyWritersOnOneStreamThroughBothDaemons) {
  OpenBoth();
  ASSERT_EQ(Create(*b_, "/m").code, Code::kCreated);
  constexpr int kProducers = 6, kEach = 60;
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      StreamStore& store = p % 2 ? *a_ : *b_;
      for (int seq = 0; seq < kEach; ++seq)
        EXPECT_EQ(Append(store, "/m", "p" + std::to_string(p) + ":" + std::to_string(seq),
                         ProducerArgs{"p" + std::to_string(p), 0, std::uint64_t(seq)})
                      .code,
                  Code::kOk);
    });
  }
  for (auto& t : threads) t.join();
  std::map<std::string, int> next;
  const std::vector<std::string> messages = Messages(*a_, "/m");
  ASSERT_EQ(messages.size(), std::size_t{kProducers * kEach});
  for (const std::string& m : messages) {
    const std::string producer = m.substr(0, m.find(':'));
    EXPECT_EQ(m.substr(m.find(':') + 1), std::to_string(next[producer]++)) << m;
  }

  ASSERT_EQ(Create(*a_, "/seq").code, Code::kCreated);
  std::atomic<int> ok{0}, conflicts{0};
  auto seq_writer = [&](StreamStore* store) {
    for (int i = 0; i < 80; ++i) {
      char seq[8];
      std::snprintf(seq, sizeof seq, "%05d", i);
      const Code code = Append(*store, "/seq", seq, std::nullopt, std::string(seq)).code;
      if (code == Code::kOk) ++ok;
      if (code == Code::kSeqConflict) ++conflicts;
    }
  };
  std::thread t1(seq_writer, a_.get()), t2(seq_writer, b_.get());
  t1.join();
  t2.join();
  EXPECT_EQ(ok + conflicts, 160);
  EXPECT_EQ(static_cast<int>(Messages(*b_, "/seq").size()), ok.load());
  const std::vector<std::string> seqs = Messages(*b_, "/seq");
  EXPECT_TRUE(std::is_sorted(seqs.begin(), seqs.end()));
  EXPECT_EQ(std::set<std::string>(seqs.begin(), seqs.end()).size(), seqs.size());
}

// A commit of more appends than one statement's parameters can carry is split into several
// statements of one transaction: every append lands, in order.
TEST_F(PostgresStreamsTest, ABatchPastTheParameterLimitIsWrittenWhole) {
  PostgresStreamsOptions options = Options();
  options.max_batch_ops = 100000;
  auto store = OpenPostgresStreamStore(options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  a_ = std::move(*store);
  ASSERT_EQ(Create(*a_, "/many").code, Code::kCreated);
  // The stream's row is held, so the writer's first batch waits and the rest queue behind it.
  ASSERT_TRUE(scratch_->admin().ExecScript("BEGIN").ok());
  ASSERT_TRUE(
      scratch_->admin().Exec("SELECT id FROM " + scratch_->name() + ".ds_streams FOR UPDATE").ok());
  constexpr int kAppends = 20000;  // 4 parameters each: past 65,535 in one statement
  std::atomic<int> ok{0}, answered{0};
  std::promise<void> all;
  for (int i = 0; i < kAppends; ++i) {
    AppendArgs args;
    args.path = "/many";
    args.body = std::to_string(i) + ",";
    a_->AppendAsync(std::move(args), [&](OpResult r) {
      if (r.code == Code::kOk) ++ok;
      if (++answered == kAppends) all.set_value();
    });
  }
  std::this_thread::sleep_for(200ms);
  ASSERT_TRUE(scratch_->admin().ExecScript("COMMIT").ok());
  ASSERT_EQ(all.get_future().wait_for(60s), std::future_status::ready);
  EXPECT_EQ(ok, kAppends);
  std::string expected, got;
  for (int i = 0; i < kAppends; ++i) expected += std::to_string(i) + ",";
  for (const std::string& m : Messages(*a_, "/many")) got += m;
  EXPECT_EQ(got, expected);
}

TEST_F(PostgresStreamsTest, ALiveReaderOnOneDaemonIsWokenByAnAppendThroughTheOther) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/live").code, Code::kCreated);
  const Offset tail = b_->Head("/live").info.tail;
  std::promise<void> woken;
  std::atomic<bool> once{false};
  const std::uint64_t watch = b_->Watch("/live", [&] {
    if (!once.exchange(true)) woken.set_value();
  });
  ASSERT_NE(watch, 0U);
  ASSERT_EQ(Append(*a_, "/live", "news").code, Code::kOk);
  ASSERT_EQ(woken.get_future().wait_for(5s), std::future_status::ready)
      << "daemon b did not hear daemon a's commit";
  b_->Unwatch("/live", watch);
  const ReadResult r = b_->Read("/live", tail);
  ASSERT_EQ(r.messages.size(), 1U);
  EXPECT_EQ(*r.messages[0].data, "news");
}

TEST_F(PostgresStreamsTest, ForksReadThroughAndDeletionAcrossDaemons) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/src", "text/plain", "base").code, Code::kCreated);
  CreateArgs fork;
  fork.path = "/fork";
  fork.content_type = "text/plain";
  fork.forked_from = "/src";
  ASSERT_EQ(b_->Create(fork).code, Code::kCreated);
  ASSERT_EQ(Append(*a_, "/src", "+src").code, Code::kOk);
  ASSERT_EQ(Append(*b_, "/fork", "+fork").code, Code::kOk);
  EXPECT_EQ(Messages(*a_, "/fork"), (std::vector<std::string>{"base", "+fork"}));
  // The source is deleted through a: soft, while the fork reads through it.
  ASSERT_EQ(a_->Delete("/src").code, Code::kOk);
  EXPECT_EQ(b_->Head("/src").code, Code::kGone);
  EXPECT_EQ(Create(*b_, "/src").code, Code::kHasForks);
  EXPECT_EQ(b_->Create(fork).code, Code::kOk);
  CreateArgs second = fork;
  second.path = "/fork2";
  EXPECT_EQ(a_->Create(second).code, Code::kSourceGone);
  EXPECT_EQ(Messages(*a_, "/fork"), (std::vector<std::string>{"base", "+fork"}));
  // The last fork goes through b: the source goes with it.
  ASSERT_EQ(b_->Delete("/fork").code, Code::kOk);
  EXPECT_EQ(a_->Head("/src").code, Code::kNotFound);
  EXPECT_EQ(a_->Head("/fork").code, Code::kNotFound);
  EXPECT_EQ(Count("SELECT count(*) FROM " + scratch_->name() + ".ds_streams"), 0);
  EXPECT_EQ(Create(*a_, "/src", "text/plain", "new").code, Code::kCreated);
  EXPECT_EQ(Messages(*b_, "/src"), (std::vector<std::string>{"new"}));
}

// TTLs run on the database's clock; expired streams are removed and their messages purged.
TEST_F(PostgresStreamsTest, ExpiredStreamsAreGoneForBothAndSweptAway) {
  OpenBoth();
  CreateArgs ttl;
  ttl.path = "/ttl";
  ttl.content_type = "text/plain";
  ttl.ttl_seconds = 3;  // time for the next commits on a slow disk before it expires
  ttl.body = "short-lived";
  ASSERT_EQ(a_->Create(ttl).code, Code::kCreated);
  ASSERT_EQ(Create(*a_, "/keep", "text/plain", "kept").code, Code::kCreated);
  EXPECT_EQ(b_->Head("/ttl").code, Code::kOk);
  std::this_thread::sleep_for(3200ms);
  EXPECT_EQ(b_->Head("/ttl").code, Code::kNotFound);
  EXPECT_EQ(Append(*a_, "/ttl", "x").code, Code::kNotFound);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Count("SELECT count(*) FROM " + scratch_->name() + ".ds_messages") > 1 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  EXPECT_EQ(Count("SELECT count(*) FROM " + scratch_->name() + ".ds_streams"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM " + scratch_->name() + ".ds_messages"), 1);
  ttl.body = "again";
  EXPECT_EQ(b_->Create(ttl).code, Code::kCreated);
  EXPECT_EQ(Messages(*a_, "/ttl"), (std::vector<std::string>{"again"}));
}

// An expiry at or before the database's clock would make a stream expired at once: refused.
TEST_F(PostgresStreamsTest, ACreateExpiredAlreadyIsRefused) {
  OpenBoth();
  CreateArgs old;
  old.path = "/old";
  old.content_type = "text/plain";
  old.expires_at = "1970-01-01T00:00:00Z";
  old.expires_at_ms = 0;
  EXPECT_EQ(a_->Create(old).code, Code::kExpiresInPast);
  EXPECT_EQ(b_->Head("/old").code, Code::kNotFound);
  EXPECT_EQ(Count("SELECT count(*) FROM " + scratch_->name() + ".ds_streams"), 0);
}

// A restart or failover of the server ends the store's idle connections: the next request opens
// new ones instead of failing, and the listener comes back too.
TEST_F(PostgresStreamsTest, ConnectionsTheServerEndedWhileIdleAreReopened) {
  OpenBoth();
  ASSERT_EQ(Create(*a_, "/c", "text/plain", "0").code, Code::kCreated);
  ASSERT_EQ(Messages(*a_, "/c").size(), 1U);
  ASSERT_TRUE(scratch_->admin()
                  .Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                        "application_name = $1",
                        {"agentstream-ds:" + scratch_->name()})
                  .ok());
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(Append(*a_, "/c", "1").code, Code::kOk);
  EXPECT_EQ(a_->Read("/c", std::nullopt).code, Code::kOk);
  EXPECT_EQ(Messages(*a_, "/c"), (std::vector<std::string>{"0", "1"}));
  // b hears a's appends again.
  std::promise<void> woken;
  std::atomic<bool> once{false};
  const std::uint64_t watch = b_->Watch("/c", [&] {
    if (!once.exchange(true)) woken.set_value();
  });
  std::future<void> heard = woken.get_future();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (heard.wait_for(0s) != std::future_status::ready &&
         std::chrono::steady_clock::now() < deadline) {
    (void)Append(*a_, "/c", "again");
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_EQ(heard.wait_for(0s), std::future_status::ready);
  b_->Unwatch("/c", watch);
}

// A connection lost in the middle of a request fails that request, before anything was
// committed (kStorageDown), and the next request reconnects.
TEST_F(PostgresStreamsTest, AConnectionLostDuringARequestFailsItAndTheNextReconnects) {
  a_ = Open();
  ASSERT_TRUE(a_);
  ASSERT_EQ(Create(*a_, "/c", "text/plain", "0").code, Code::kCreated);
  // The writer will wait for the stream's row, which another transaction holds.
  pg::Conn& admin = scratch_->admin();
  ASSERT_TRUE(admin.ExecScript("BEGIN").ok());
  ASSERT_TRUE(
      admin.Exec("SELECT id FROM " + scratch_->name() + ".ds_streams WHERE path = '/c' FOR UPDATE")
          .ok());
  auto lost = std::async(std::launch::async, [&] { return Append(*a_, "/c", "lost").code; });
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    auto r = admin.Exec(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = "
        "$1 AND wait_event_type = 'Lock'",
        {"agentstream-ds:" + scratch_->name()});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ended = r->Int(0, 0) > 0;
    if (!ended) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(admin.ExecScript("ROLLBACK").ok());
  ASSERT_TRUE(ended) << "the writer never waited for the row";
  EXPECT_EQ(lost.get(), Code::kStorageDown);
  EXPECT_EQ(Append(*a_, "/c", "1").code, Code::kOk);
  EXPECT_EQ(Messages(*a_, "/c"), (std::vector<std::string>{"0", "1"}));
}

// The writer's connection has the server end a transaction left idle (a partition the server
// does not see), so that no other daemon waits for its locks.
TEST_F(PostgresStreamsTest, TheWritersIdleTransactionsAreEndedByTheServer) {
  auto writer = pgs::Connect(Options(), /*writer=*/true);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  auto shown = writer->Exec("SHOW idle_in_transaction_session_timeout");
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_EQ(shown->Text(0, 0), "5s");
}

TEST_F(PostgresStreamsTest, TextTheDatabaseCannotHoldIsRefusedAndNothingIsWritten) {
  a_ = Open();
  ASSERT_TRUE(a_);
  EXPECT_EQ(Create(*a_, std::string("/bad\xff")).code, Code::kInvalidText);
  ASSERT_EQ(Create(*a_, "/ok").code, Code::kCreated);
  EXPECT_EQ(Append(*a_, "/ok", "x", ProducerArgs{std::string("p\0q", 3), 0, 0}).code,
            Code::kInvalidText);
  EXPECT_EQ(Append(*a_, "/ok", "x", std::nullopt, std::string("\xc3")).code, Code::kInvalidText);
  EXPECT_EQ(a_->Head(std::string("/bad\xff")).code, Code::kNotFound);
  EXPECT_TRUE(Messages(*a_, "/ok").empty());
  EXPECT_EQ(Count("SELECT count(*) FROM " + scratch_->name() + ".ds_streams"), 1);
}

TEST_F(PostgresStreamsTest, ANewerSchemaIsRefused) {
  a_ = Open();
  ASSERT_TRUE(a_);
  a_.reset();
  ASSERT_TRUE(scratch_->admin()
                  .ExecScript("INSERT INTO " + scratch_->name() + ".ds_schema VALUES (99)")
                  .ok());
  auto store = OpenPostgresStreamStore(Options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), ErrorCode::kUnsupportedVersion);
}

// A pull-wake subscription used through both daemons: one wake per change (not one per
// daemon), a claim through one daemon holds off the other, a token issued by one is accepted by
// the other, and a lapsed lease (the database's clock) fences the old holder.
TEST_F(PostgresStreamsTest, SubscriptionClaimsAreFencedAcrossDaemons) {
  OpenBoth();
  OpenSubscriptions();
  EXPECT_EQ(sub_a_->kid(), sub_b_->kid());  // one signing key for every daemon
  ASSERT_EQ(Create(*a_, "/v1/stream/jobs/a", "application/json").code, Code::kCreated);
  ASSERT_EQ(Create(*a_, "/v1/stream/wakes", "application/json").code, Code::kCreated);
  ASSERT_EQ(Call(*sub_a_, "PUT", "subscriptions/s1",
                 R"({"type":"pull-wake","streams":["jobs/a"],"wake_stream":"wakes",)"
                 R"("lease_ttl_ms":3000})")
                .status,
            201);
  EXPECT_EQ(Call(*sub_b_, "GET", "subscriptions/s1", "").status, 200);
  ASSERT_EQ(Append(*b_, "/v1/stream/jobs/a", R"({"job":1})").code, Code::kOk);
  // Both daemons hear the change (b its own, a through NOTIFY); one wake is made.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Messages(*a_, "/v1/stream/wakes").empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  std::this_thread::sleep_for(500ms);
  const std::vector<std::string> wakes = Messages(*a_, "/v1/stream/wakes");
  ASSERT_EQ(wakes.size(), 1U) << wakes[0] << " / " << wakes[1];
  EXPECT_NE(wakes[0].find("\"generation\":1"), std::string::npos) << wakes[0];

  const StreamResponse claim =
      Call(*sub_a_, "POST", "subscriptions/s1/claim", R"({"worker":"w1"})");
  ASSERT_EQ(claim.status, 200) << claim.body;
  const json::object c = json::parse(claim.body).as_object();
  const std::string token(c.at("token").as_string());
  const std::string wake_id(c.at("wake_id").as_string());
  const std::int64_t generation = c.at("generation").as_int64();
  const StreamResponse busy = Call(*sub_b_, "POST", "subscriptions/s1/claim", R"({"worker":"w2"})");
  EXPECT_EQ(busy.status, 409);
  EXPECT_NE(busy.body.find("ALREADY_CLAIMED"), std::string::npos) << busy.body;
  // a's token through b.
  const std::string tail(c.at("streams").as_array()[0].as_object().at("tail_offset").as_string());
  const json::object ack{
      {"wake_id", wake_id},
      {"generation", generation},
      {"acks", json::array{json::object{{"stream", "jobs/a"}, {"offset", tail}}}}};
  EXPECT_EQ(Call(*sub_b_, "POST", "subscriptions/s1/ack", json::serialize(ack), token).status, 200);

  // The lease lapses; w2 claims through b; w1's token is fenced through a.
  ASSERT_EQ(Append(*a_, "/v1/stream/jobs/a", R"({"job":2})").code, Code::kOk);
  std::this_thread::sleep_for(3200ms);
  const StreamResponse again =
      Call(*sub_b_, "POST", "subscriptions/s1/claim", R"({"worker":"w2"})");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_GT(json::parse(again.body).as_object().at("generation").as_int64(), generation);
  const StreamResponse fenced =
      Call(*sub_a_, "POST", "subscriptions/s1/ack", json::serialize(ack), token);
  EXPECT_EQ(fenced.status, 409);
  EXPECT_NE(fenced.body.find("FENCED"), std::string::npos) << fenced.body;
  CloseSubscriptions();
}

// Workers racing to claim through both daemons: exactly one holds each wake.
TEST_F(PostgresStreamsTest, RacingClaimsThroughBothDaemonsGrantOneHolder) {
  OpenBoth();
  OpenSubscriptions();
  ASSERT_EQ(Create(*a_, "/v1/stream/q", "application/json").code, Code::kCreated);
  ASSERT_EQ(Create(*a_, "/v1/stream/w", "application/json").code, Code::kCreated);
  ASSERT_EQ(Call(*sub_b_, "PUT", "subscriptions/race",
                 R"({"type":"pull-wake","streams":["q"],"wake_stream":"w"})")
                .status,
            201);
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(Append(*a_, "/v1/stream/q", "1").code, Code::kOk);
    std::atomic<int> granted{0}, refused{0};
    std::vector<std::string> tokens(8);
    std::vector<std::thread> workers;
    for (int w = 0; w < 8; ++w) {
      workers.emplace_back([&, w] {
        SubscriptionManager& m = w % 2 ? *sub_a_ : *sub_b_;
        const StreamResponse r = Call(m, "POST", "subscriptions/race/claim",
                                      R"({"worker":"w)" + std::to_string(w) + R"("})");
        if (r.status == 200) {
          ++granted;
          tokens[w] = r.body;
        } else if (r.status == 409) {
          ++refused;
        }
      });
    }
    for (auto& t : workers) t.join();
    ASSERT_EQ(granted, 1) << "round " << round;
    EXPECT_EQ(refused, 7);
    for (const std::string& body : tokens) {
      if (body.empty()) continue;
      const json::object c = json::parse(body).as_object();
      const json::object done{
          {"wake_id", c.at("wake_id")}, {"generation", c.at("generation")}, {"done", true}};
      const std::string token(c.at("token").as_string());
      // Done without acks: the stream stays pending, so the next round's claim has work.
      EXPECT_EQ(
          Call(*sub_a_, "POST", "subscriptions/race/release", json::serialize(done), token).status,
          204);
    }
  }
  CloseSubscriptions();
}

}  // namespace
}  // namespace agentstream::streams
