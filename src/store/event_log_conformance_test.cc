// The EventLog conformance suite: every backend must pass every test here unchanged.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "store/memory_log.h"
#include "store/sqlite/sqlite_log.h"
#include "store/test_backend.h"
#include "store/testing/events.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

using testing::Backend;

std::string TextOf(const EventRecord& record) {
  auto event = DecodeRecord(record);
  EXPECT_TRUE(event.ok()) << event.status().ToString();
  return event.ok() ? std::get<Notice>(event->payload).text : "";
}

AppendRequest Batch(const SessionId& session, std::vector<NewEvent> events) {
  AppendRequest request;
  request.session = session;
  request.events = std::move(events);
  return request;
}

class EventLogConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = testing::MakeBackend(GetParam());
    if (!backend_) GTEST_SKIP() << "AGENTSTREAM_TEST_PG names no PostgreSQL server";
  }
  EventLog& log() { return backend_->log(); }

  SessionId NewSession(const std::string& id, int events = 0) {
    std::vector<NewEvent> initial;
    for (int i = 1; i <= events; ++i) initial.push_back(Note(id + "#" + std::to_string(i)));
    auto created =
        log().CreateSession(SessionId(id), SessionMeta{"scripted", "/w", id}, std::move(initial));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return SessionId(id);
  }

  std::vector<EventRecord> ReadAll(const SessionId& session,
                                   std::optional<Epoch> epoch = std::nullopt) {
    std::vector<EventRecord> out;
    Seq from(1);
    while (true) {
      auto page =
          log().Read(ReadRequest{session, epoch, ReadDirection::kForward, from, 1000, 1 << 20});
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok() || page->events.empty()) return out;
      for (auto& e : page->events) out.push_back(e);
      from = out.back().seq.next();
      if (!page->has_newer) return out;
    }
  }

  std::unique_ptr<Backend> backend_;
};

TEST_P(EventLogConformance, SeqsAreDenseFromOne) {
  const SessionId s = NewSession("s1", 1);
  auto appended = log().Append(Batch(s, {Note("a"), Note("b"), Note("c")}));
  ASSERT_TRUE(appended.ok()) << appended.status().ToString();
  EXPECT_EQ(appended->epoch, Epoch(1));
  EXPECT_EQ(appended->first_seq, Seq(2));
  EXPECT_EQ(appended->last_seq, Seq(4));
  auto all = ReadAll(s);
  ASSERT_EQ(all.size(), 4u);
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].seq, Seq(i + 1));
    EXPECT_EQ(all[i].session, s);
    EXPECT_GT(all[i].time, 0);
  }
  EXPECT_EQ(TextOf(all[1]), "a");
  EXPECT_EQ(TextOf(all[3]), "c");
  auto tail = log().Tail(s);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, (Cursor{Epoch(1), Seq(4)}));
}

TEST_P(EventLogConformance, TurnIdsAreStored) {
  const SessionId s = NewSession("s1");
  ASSERT_TRUE(log().Append(Batch(s, {Note("x", TurnId("turn_1")), Note("y")})).ok());
  auto all = ReadAll(s);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].turn, TurnId("turn_1"));
  EXPECT_FALSE(all[1].turn.has_value());
}

TEST_P(EventLogConformance, UnknownAndDuplicateSessions) {
  NewSession("s1");
  auto again = log().CreateSession(SessionId("s1"), {}, {});
  EXPECT_EQ(again.status().code(), ErrorCode::kAlreadyExists);
  EXPECT_EQ(log().Append(Batch(SessionId("nope"), {Note("x")})).status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(log().Read(ReadRequest{SessionId("nope")}).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(log().Tail(SessionId("nope")).status().code(), ErrorCode::kNotFound);
}

TEST_P(EventLogConformance, ExpectedSeqConflict) {
  const SessionId s = NewSession("s1", 4);
  AppendRequest stale = Batch(s, {Note("late")});
  stale.expected_tail = Seq(1);
  auto refused = log().Append(stale);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kConflict);
  EXPECT_NE(refused.status().message().find("is at 4"), std::string::npos)
      << refused.status().message();
  AppendRequest current = Batch(s, {Note("next")});
  current.expected_tail = Seq(4);
  auto ok = log().Append(current);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->first_seq, Seq(5));
}

TEST_P(EventLogConformance, ProducerDedupSurvivesReopen) {
  const SessionId s = NewSession("s1");
  auto stamped = [&](std::uint64_t epoch, std::uint64_t seq, const std::string& text) {
    AppendRequest r = Batch(s, {Note(text), Note(text + "'")});
    r.producer = ProducerStamp{ProducerId("p"), epoch, seq};
    return log().Append(r);
  };
  auto first = stamped(0, 0, "a");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->duplicate);
  auto retry = stamped(0, 0, "a");
  ASSERT_TRUE(retry.ok());
  EXPECT_TRUE(retry->duplicate);
  EXPECT_EQ(retry->first_seq, first->first_seq);
  EXPECT_EQ(retry->last_seq, first->last_seq);
  EXPECT_EQ(stamped(0, 2, "gap").status().code(), ErrorCode::kSequenceGap);

  backend_->Reopen();
  auto after = stamped(0, 0, "a");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE(after->duplicate);
  auto next = stamped(0, 1, "b");
  ASSERT_TRUE(next.ok());
  EXPECT_FALSE(next->duplicate);
  EXPECT_EQ(next->first_seq, Seq(3));
  ASSERT_TRUE(stamped(1, 0, "new epoch").ok());
  EXPECT_EQ(stamped(0, 2, "zombie").status().code(), ErrorCode::kFenced);
  EXPECT_EQ(stamped(2, 5, "bad start").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReadAll(s).size(), 6u) << "duplicates appended nothing";
  AppendRequest fresh = Batch(s, {Note("x")});
  fresh.producer = ProducerStamp{ProducerId("q"), 0, 3};
  EXPECT_EQ(log().Append(fresh).status().code(), ErrorCode::kSequenceGap);
}

TEST_P(EventLogConformance, ForkReadsTheParentPrefixWithoutCopying) {
  const SessionId parent = NewSession("parent", 10);
  auto forked = log().Fork(parent, Cursor{Epoch(1), Seq(6)}, SessionId("child"),
                           SessionMeta{"scripted", "/w", "child"},
                           {MakeNewEvent(SessionForked{parent, Epoch(1), Seq(6)})});
  ASSERT_TRUE(forked.ok()) << forked.status().ToString();
  EXPECT_EQ(forked->epoch, Epoch(1));
  EXPECT_EQ(forked->first_seq, Seq(7));
  ASSERT_TRUE(log().Append(Batch(parent, {Note("parent#11")})).ok());
  ASSERT_TRUE(log().Append(Batch(SessionId("child"), {Note("child#8")})).ok());

  auto child = ReadAll(SessionId("child"));
  ASSERT_EQ(child.size(), 8u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(TextOf(child[i]), "parent#" + std::to_string(i + 1));
    EXPECT_EQ(child[i].session, SessionId("child"));
  }
  EXPECT_EQ(child[6].kind, static_cast<std::uint16_t>(EventKind::kSessionForked));
  EXPECT_EQ(TextOf(child[7]), "child#8");
  EXPECT_EQ(ReadAll(parent).size(), 11u);

  auto grandchild = log().Fork(SessionId("child"), Cursor{Epoch(1), Seq(7)},
                               SessionId("grandchild"), {}, {Note("gc")});
  ASSERT_TRUE(grandchild.ok());
  auto gc = ReadAll(SessionId("grandchild"));
  ASSERT_EQ(gc.size(), 8u);
  EXPECT_EQ(TextOf(gc[2]), "parent#3");
  EXPECT_EQ(TextOf(gc[7]), "gc");

  auto info = log().GetSession(SessionId("child"));
  ASSERT_TRUE(info.ok());
  ASSERT_TRUE(info->forked_from.has_value());
  EXPECT_EQ(*info->forked_from, (HistoryBase{parent, Epoch(1), Seq(6)}));
  EXPECT_EQ(log().Fork(parent, Cursor{Epoch(1), Seq(99)}, SessionId("x"), {}, {}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(log().Fork(parent, Cursor{Epoch(7), Seq(1)}, SessionId("x"), {}, {}).status().code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(
      log().Fork(parent, Cursor{Epoch(1), Seq(1)}, SessionId("child"), {}, {}).status().code(),
      ErrorCode::kAlreadyExists);
}

TEST_P(EventLogConformance, RewindStartsANewEpochAndKeepsOldOnes) {
  const SessionId s = NewSession("s1", 10);
  auto rewound = log().Rewind(s, Cursor{Epoch(1), Seq(4)},
                              {MakeNewEvent(SessionRewound{Epoch(1), Epoch(1), Seq(4)})});
  ASSERT_TRUE(rewound.ok()) << rewound.status().ToString();
  EXPECT_EQ(rewound->epoch, Epoch(2));
  EXPECT_EQ(rewound->first_seq, Seq(5));
  ASSERT_TRUE(log().Append(Batch(s, {Note("new#6")})).ok());

  auto now = ReadAll(s);
  ASSERT_EQ(now.size(), 6u);
  EXPECT_EQ(TextOf(now[3]), "s1#4");
  EXPECT_EQ(now[3].epoch, Epoch(2));
  EXPECT_EQ(TextOf(now[5]), "new#6");
  auto old = ReadAll(s, Epoch(1));
  ASSERT_EQ(old.size(), 10u);
  EXPECT_EQ(TextOf(old[9]), "s1#10");

  AppendRequest to_old = Batch(s, {Note("stale")});
  to_old.epoch = Epoch(1);
  EXPECT_EQ(log().Append(to_old).status().code(), ErrorCode::kFenced);
  auto tail = log().Tail(s);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(*tail, (Cursor{Epoch(2), Seq(6)}));

  // Rewinding to a prefix of an old epoch, and reading across two hops.
  ASSERT_TRUE(log().Rewind(s, Cursor{Epoch(2), Seq(5)}, {}).ok());
  auto third = ReadAll(s);
  ASSERT_EQ(third.size(), 5u);
  EXPECT_EQ(TextOf(third[0]), "s1#1");
  EXPECT_EQ(third[4].kind, static_cast<std::uint16_t>(EventKind::kSessionRewound));
  EXPECT_EQ(log().Read(ReadRequest{s, Epoch(9)}).status().code(), ErrorCode::kNotFound);
  backend_->Reopen();
  EXPECT_EQ(ReadAll(s, Epoch(1)).size(), 10u);
  EXPECT_EQ(ReadAll(s, Epoch(2)).size(), 6u);
  EXPECT_EQ(ReadAll(s).size(), 5u);
}

TEST_P(EventLogConformance, PagesReassembleExactlyInBothDirections) {
  const SessionId parent = NewSession("p", 0);
  std::vector<NewEvent> events;
  for (int i = 1; i <= 300; ++i)
    events.push_back(Note(std::string(i % 17 * 7, 'x') + std::to_string(i)));
  ASSERT_TRUE(log().Append(Batch(parent, std::move(events))).ok());
  ASSERT_TRUE(log().Fork(parent, Cursor{Epoch(1), Seq(200)}, SessionId("c"), {}, {}).ok());
  std::vector<NewEvent> more;
  for (int i = 201; i <= 350; ++i) more.push_back(Note("c" + std::to_string(i)));
  ASSERT_TRUE(log().Append(Batch(SessionId("c"), std::move(more))).ok());

  for (const SessionId& s : {parent, SessionId("c")}) {
    const std::vector<EventRecord> all = ReadAll(s);
    // Forward.
    std::vector<EventRecord> forward;
    Seq from(1);
    bool has_newer = true;
    while (has_newer) {
      auto page = log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, from, 37, 900});
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ASSERT_FALSE(page->events.empty());
      EXPECT_LE(page->events.size(), 37u);
      EXPECT_EQ(page->has_older, page->events.front().seq > Seq(1));
      for (auto& e : page->events) forward.push_back(e);
      from = forward.back().seq.next();
      has_newer = page->has_newer;
    }
    // Backward from the tail.
    std::vector<EventRecord> backward;
    Seq before(0);
    bool has_older = true;
    while (has_older) {
      auto page =
          log().Read(ReadRequest{s, std::nullopt, ReadDirection::kBackward, before, 41, 700});
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      ASSERT_FALSE(page->events.empty());
      backward.insert(backward.begin(), page->events.begin(), page->events.end());
      before = page->events.front().seq;
      has_older = page->has_older;
    }
    ASSERT_EQ(forward.size(), all.size());
    ASSERT_EQ(backward.size(), all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
      EXPECT_EQ(forward[i].seq, Seq(i + 1));
      EXPECT_EQ(forward[i].payload, all[i].payload);
      EXPECT_EQ(backward[i].seq, Seq(i + 1));
      EXPECT_EQ(backward[i].payload, all[i].payload);
    }
  }
  EXPECT_EQ(ReadAll(SessionId("c")).size(), 350u);
}

TEST_P(EventLogConformance, ByteBudgetAlwaysMakesProgress) {
  const SessionId s = NewSession("s", 3);
  auto page = log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(1), 100, 1});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->events.size(), 1u);
  EXPECT_TRUE(page->has_newer);
  auto beyond =
      log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(10), 100, 1 << 20});
  ASSERT_TRUE(beyond.ok());
  EXPECT_TRUE(beyond->events.empty());
  EXPECT_FALSE(beyond->has_newer);
  EXPECT_EQ(beyond->tail, Seq(3));
}

TEST_P(EventLogConformance, BadInputIsRefusedAndStoresNothing) {
  const SessionId s = NewSession("s", 2);
  NewEvent huge = Note(std::string(2 << 20, 'x'));
  EXPECT_EQ(log().Append(Batch(s, {huge})).status().code(), ErrorCode::kTooLarge);
  NewEvent garbage{EventKind::kNotice, std::nullopt, "{\"level\":"};
  EXPECT_EQ(log().Append(Batch(s, {Note("fine"), garbage})).status().code(),
            ErrorCode::kInvalidArgument);
  NewEvent wrong_schema{EventKind::kUserMessage, std::nullopt, R"({"text":"no ids"})"};
  auto schema = log().Append(Batch(s, {wrong_schema}));
  EXPECT_EQ(schema.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(schema.status().message().find("messageId"), std::string::npos)
      << schema.status().message();
  NewEvent unknown_kind{static_cast<EventKind>(4242), std::nullopt, "{}"};
  EXPECT_EQ(log().Append(Batch(s, {unknown_kind})).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(log().Append(Batch(s, {})).status().code(), ErrorCode::kInvalidArgument);
  std::vector<NewEvent> too_many(5000, Note("x"));
  EXPECT_EQ(log().Append(Batch(s, too_many)).status().code(), ErrorCode::kTooLarge);
  EXPECT_EQ(log().CreateSession(SessionId(""), {}, {}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReadAll(s).size(), 2u);
  EXPECT_TRUE(log().Health().ok());
  ASSERT_TRUE(log().Append(Batch(s, {Note("after")})).ok());
  EXPECT_EQ(ReadAll(s).size(), 3u);
}

TEST_P(EventLogConformance, CorruptRowsAndNewerVersionsAreReportedNotServed) {
  const SessionId s = NewSession("s", 5);
  const SessionId other = NewSession("other", 2);
  auto all = ReadAll(s);
  EventRecord damaged = all[2];  // seq 3
  damaged.payload = "{\"level\":\"info\",\"text\":\"tampered\"}";
  backend_->InjectRaw(damaged, /*checksum=*/12345);
  auto read =
      log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(1), 10, 1 << 20});
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), ErrorCode::kCorruption);
  EXPECT_NE(read.status().message().find("1:3"), std::string::npos) << read.status().message();
  auto before =
      log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(1), 2, 1 << 20});
  ASSERT_TRUE(before.ok()) << "rows before the damage stay readable";
  EXPECT_EQ(before->events.size(), 2u);
  EXPECT_EQ(ReadAll(other).size(), 2u);

  EventRecord newer = all[3];  // seq 4
  newer.format = kEventFormatVersion + 1;
  backend_->InjectRaw(newer, std::nullopt);
  auto version =
      log().Read(ReadRequest{s, std::nullopt, ReadDirection::kForward, Seq(4), 10, 1 << 20});
  ASSERT_FALSE(version.ok());
  EXPECT_EQ(version.status().code(), ErrorCode::kUnsupportedVersion);
  EXPECT_TRUE(log().Health().ok()) << "bad rows do not stop writes";
}

TEST_P(EventLogConformance, SyncFailureIsStickyUntilReopen) {
  if (!backend_->CanFailSyncs()) GTEST_SKIP() << "backend has no sync to fail";
  const SessionId s = NewSession("s", 3);
  backend_->FailSyncs(true);
  auto failed = log().Append(Batch(s, {Note("in doubt")}));
  backend_->FailSyncs(false);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), ErrorCode::kIoError);
  auto refused = log().Append(Batch(s, {Note("after")}));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable);
  EXPECT_FALSE(log().Health().ok());
  EXPECT_EQ(log().CreateSession(SessionId("t"), {}, {}).status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(ReadAll(s).size(), 3u) << "reads keep working, and never serve the append in doubt";
  auto tail = log().Tail(s);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->seq, Seq(3));

  backend_->Reopen();
  EXPECT_TRUE(log().Health().ok());
  auto kept = ReadAll(s);
  ASSERT_GE(kept.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(TextOf(kept[i]), "s#" + std::to_string(i + 1));
  auto resumed = log().Append(Batch(s, {Note("resumed")}));
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ(resumed->first_seq, Seq(kept.size() + 1));
}

TEST_P(EventLogConformance, SyncFailureDuringABurstAcknowledgesNothing) {
  if (!backend_->CanFailSyncs()) GTEST_SKIP() << "backend has no sync to fail";
  const SessionId s = NewSession("s", 2);
  constexpr int kBurst = 600;  // large commits, synced off the writer thread where a backend can
  std::atomic<int> ok{0}, failed{0}, pending{kBurst};
  backend_->FailSyncs(true);
  for (int i = 0; i < kBurst; ++i) {
    log().AppendAsync(Batch(s, {Note("burst")}), [&](Result<AppendResult> r) {
      const ErrorCode code = r.status().code();
      if (r.ok())
        ++ok;
      else if (code == ErrorCode::kIoError || code == ErrorCode::kUnavailable)
        ++failed;
      --pending;
    });
  }
  while (pending.load() > 0) std::this_thread::yield();
  backend_->FailSyncs(false);
  EXPECT_EQ(ok.load(), 0) << "nothing is acknowledged without a successful sync";
  EXPECT_EQ(failed.load(), kBurst);
  EXPECT_FALSE(log().Health().ok());
  EXPECT_EQ(ReadAll(s).size(), 2u) << "events in doubt are not served";
  backend_->Reopen();
  EXPECT_TRUE(log().Health().ok());
  EXPECT_GE(ReadAll(s).size(), 2u);
  ASSERT_TRUE(log().Append(Batch(s, {Note("after")})).ok());
}

TEST_P(EventLogConformance, CommitListenersSeeEveryCommit) {
  const SessionId s = NewSession("s");
  std::mutex mu;
  std::vector<CommitNotice> seen;
  ListenerRegistration sub = log().SubscribeCommits([&](const CommitNotice& n) {
    std::lock_guard lock(mu);
    seen.push_back(n);
  });
  ASSERT_TRUE(log().Append(Batch(s, {Note("a"), Note("b")})).ok());
  ASSERT_TRUE(log().Append(Batch(s, {Note("c")})).ok());
  {
    std::lock_guard lock(mu);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().session, s);
    EXPECT_EQ(seen.back().tail, Seq(3));
  }
  sub.Reset();
  const std::size_t count = seen.size();
  ASSERT_TRUE(log().Append(Batch(s, {Note("d")})).ok());
  EXPECT_EQ(seen.size(), count) << "no notices after the subscription ended";
}

// A notice that carries the commit's records (the hub encodes them instead of reading them back)
// carries exactly what a read returns: the same seqs, time, kind, turn, payload and writer.
TEST_P(EventLogConformance, ANoticesRecordsAreWhatAReadReturns) {
  const SessionId s = NewSession("r", 2);
  std::mutex mu;
  std::vector<CommitNotice> seen;
  ListenerRegistration sub = log().SubscribeCommits([&](const CommitNotice& n) {
    std::lock_guard lock(mu);
    if (n.session == s) seen.push_back(n);
  });
  AppendRequest first = Batch(s, {Note("a"), Note("b")});
  first.events[1].turn = TurnId("turn_7");
  std::atomic<int> pending = 2;
  log().AppendAsync(std::move(first), [&](const Result<AppendResult>&) { --pending; });
  log().AppendAsync(Batch(s, {Note("c")}), [&](const Result<AppendResult>&) { --pending; });
  while (pending > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(log().Append(Batch(s, {Note("d")})).ok());
  sub.Reset();
  const std::vector<EventRecord> stored = ReadAll(s);
  ASSERT_EQ(stored.size(), 6u);
  std::size_t carried = 0;
  for (const CommitNotice& notice : seen) {
    if (!notice.records) continue;  // a log may always leave the reading to the listener
    ASSERT_FALSE(notice.records->empty());
    EXPECT_EQ(notice.records->back().seq, notice.tail);
    for (const EventRecord& record : *notice.records) {
      ++carried;
      ASSERT_GE(record.seq.value(), 1u);
      ASSERT_LE(record.seq.value(), stored.size());
      const EventRecord& read = stored[record.seq.value() - 1];
      EXPECT_EQ(record.session, read.session);
      EXPECT_EQ(record.epoch, notice.epoch);
      EXPECT_EQ(record.epoch, read.epoch);
      EXPECT_EQ(record.time, read.time);
      EXPECT_EQ(record.kind, read.kind);
      EXPECT_EQ(record.turn, read.turn);
      EXPECT_EQ(record.format, read.format);
      EXPECT_EQ(record.payload, read.payload);
      EXPECT_EQ(record.owner_generation, read.owner_generation);
    }
  }
  // The backends with a writer thread carry the records of their own appends; the memory log
  // leaves them to reads.
  if (GetParam() != "memory") {
    EXPECT_EQ(carried, 4u);
  }
}

TEST_P(EventLogConformance, CheckpointsAreDurableReplacedAndCheckedAgainstTheHistory) {
  const SessionId s = NewSession("s1", 10);
  auto none = log().LoadCheckpoint(s);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(log().SaveCheckpoint(s, Checkpoint{Epoch(1), Seq(4), "{\"a\":1}"}).ok());
  ASSERT_TRUE(log().SaveCheckpoint(s, Checkpoint{Epoch(1), Seq(10), "{\"a\":2}"}).ok());
  backend_->Reopen();
  auto loaded = log().LoadCheckpoint(s);
  ASSERT_TRUE(loaded.ok() && loaded->has_value()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->epoch, Epoch(1));
  EXPECT_EQ((*loaded)->seq, Seq(10));
  EXPECT_EQ((*loaded)->body, "{\"a\":2}");

  // Refused, and the stored one kept: past the tail, an unknown session, too large, and an epoch
  // a rewind replaced.
  EXPECT_EQ(log().SaveCheckpoint(s, Checkpoint{Epoch(1), Seq(11), "x"}).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(log().SaveCheckpoint(SessionId("nope"), Checkpoint{Epoch(1), Seq(0), "x"}).code(),
            ErrorCode::kNotFound);
  EXPECT_EQ(log().LoadCheckpoint(SessionId("nope")).status().code(), ErrorCode::kNotFound);
  const std::string huge(LogLimits{}.max_checkpoint_bytes + 1, 'x');
  EXPECT_EQ(log().SaveCheckpoint(s, Checkpoint{Epoch(1), Seq(10), huge}).code(),
            ErrorCode::kTooLarge);
  ASSERT_TRUE(log().Rewind(s, Cursor{Epoch(1), Seq(4)}, {}).ok());
  EXPECT_EQ(log().SaveCheckpoint(s, Checkpoint{Epoch(1), Seq(4), "x"}).code(),
            ErrorCode::kConflict);
  loaded = log().LoadCheckpoint(s);
  ASSERT_TRUE(loaded.ok() && loaded->has_value());
  EXPECT_EQ((*loaded)->body, "{\"a\":2}");  // of epoch 1: its reader sees it is not current
  ASSERT_TRUE(log().SaveCheckpoint(s, Checkpoint{Epoch(2), Seq(4), "{\"a\":3}"}).ok());
  EXPECT_EQ((*log().LoadCheckpoint(s))->epoch, Epoch(2));
}

TEST_P(EventLogConformance, SessionMetadataAndListing) {
  for (const char* id : {"b", "a", "c"}) NewSession(id, 1);
  ASSERT_TRUE(log()
                  .UpdateSessionMeta(SessionId("b"), SessionMetaUpdate{"{\"resume\":\"x\"}",
                                                                       "{\"status\":\"idle\"}"})
                  .ok());
  EXPECT_EQ(log().UpdateSessionMeta(SessionId("zz"), {}).code(), ErrorCode::kNotFound);
  backend_->Reopen();
  auto b = log().GetSession(SessionId("b"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->meta.title, "b");
  EXPECT_EQ(b->meta.provider, "scripted");
  EXPECT_EQ(b->meta.cwd, "/w");
  EXPECT_EQ(b->meta.persistence_handle, "{\"resume\":\"x\"}");
  EXPECT_EQ(b->meta.status_snapshot, "{\"status\":\"idle\"}");
  EXPECT_GT(b->meta.created_ms, 0);
  EXPECT_EQ(b->tail, Seq(1));
  auto first = log().ListSessions("", 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].id, SessionId("a"));
  EXPECT_EQ((*first)[1].id, SessionId("b"));
  auto rest = log().ListSessions("b", 10);
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].id, SessionId("c"));
}

// The title and usage totals follow the appended events, in the append's own transaction: a
// rewind keeps what was spent, a fork starts at zero, a duplicate counts once.
TEST_P(EventLogConformance, TitlesAndUsageTotalsFollowTheAppendedEvents) {
  const SessionId s = NewSession("s", 2);
  auto zero = log().GetSession(s);
  ASSERT_TRUE(zero.ok());
  ASSERT_TRUE(zero->meta.usage.has_value());
  EXPECT_EQ(zero->meta.usage->input_tokens, 0);
  EXPECT_FALSE(zero->meta.usage->cost_usd.has_value());
  AppendRequest spend = Batch(s, {MakeNewEvent(Usage{100, 20, 5, 1, 0.25}),
                                  MakeNewEvent(SessionTitled{"first"}), Note("between")});
  spend.producer = ProducerStamp{ProducerId("p"), 1, 0};
  ASSERT_TRUE(log().Append(spend).ok());
  ASSERT_TRUE(log().Append(spend).value().duplicate);
  ASSERT_TRUE(log()
                  .Append(Batch(s, {MakeNewEvent(Usage{1, 2, 0, 0, std::nullopt}),
                                    MakeNewEvent(SessionTitled{"second"})}))
                  .ok());
  auto forked = log().Fork(s, Cursor{Epoch(1), Seq(4)}, SessionId("child"),
                           SessionMeta{"scripted", "/w", "child"},
                           {MakeNewEvent(Usage{7, 0, 0, 0, std::nullopt})});
  ASSERT_TRUE(forked.ok()) << forked.status().ToString();
  ASSERT_TRUE(
      log().Rewind(s, Cursor{Epoch(1), Seq(2)}, {MakeNewEvent(SessionTitled{"rewound"})}).ok());
  backend_->Reopen();
  auto after = log().GetSession(s);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->meta.title, "rewound");
  ASSERT_TRUE(after->meta.usage.has_value());
  EXPECT_EQ(after->meta.usage->input_tokens, 101);
  EXPECT_EQ(after->meta.usage->output_tokens, 22);
  EXPECT_EQ(after->meta.usage->cache_read_tokens, 5);
  EXPECT_EQ(after->meta.usage->cache_write_tokens, 1);
  EXPECT_DOUBLE_EQ(after->meta.usage->cost_usd.value_or(-1), 0.25);
  auto child = log().GetSession(SessionId("child"));
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(child->meta.title, "child");
  ASSERT_TRUE(child->meta.usage.has_value());
  EXPECT_EQ(child->meta.usage->input_tokens, 7);
  // Appends after the reopen add to the stored totals.
  ASSERT_TRUE(log().Append(Batch(s, {MakeNewEvent(Usage{1, 0, 0, 0, 0.5})})).ok());
  auto listed = log().ListSessions("", 10);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[1].id, s);
  ASSERT_TRUE((*listed)[1].meta.usage.has_value());
  EXPECT_EQ((*listed)[1].meta.usage->input_tokens, 102);
  EXPECT_DOUBLE_EQ((*listed)[1].meta.usage->cost_usd.value_or(-1), 0.75);
}

TEST_P(EventLogConformance, ConcurrentAppendersKeepEachSessionDense) {
  constexpr int kThreads = 8, kPerThread = 150, kSessions = 4;
  for (int i = 0; i < kSessions; ++i) NewSession("s" + std::to_string(i));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::atomic<int> pending{0};
      for (int i = 0; i < kPerThread; ++i) {
        ++pending;
        log().AppendAsync(Batch(SessionId("s" + std::to_string(t % kSessions)),
                                {Note(std::to_string(t) + ":" + std::to_string(i))}),
                          [&](Result<AppendResult> r) {
                            if (!r.ok()) ++failures;
                            --pending;
                          });
      }
      while (pending.load() > 0) std::this_thread::yield();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  for (int i = 0; i < kSessions; ++i) {
    auto all = ReadAll(SessionId("s" + std::to_string(i)));
    ASSERT_EQ(all.size(), static_cast<std::size_t>(kThreads / kSessions * kPerThread));
    std::map<std::string, int> last;  // per writer thread, appends stay in order
    for (std::size_t k = 0; k < all.size(); ++k) {
      EXPECT_EQ(all[k].seq, Seq(k + 1));
      const std::string text = TextOf(all[k]);
      const auto colon = text.find(':');
      const int n = std::stoi(text.substr(colon + 1));
      auto [it, fresh] = last.emplace(text.substr(0, colon), n);
      if (!fresh) {
        EXPECT_GT(n, it->second);
        it->second = n;
      }
    }
  }
}

// Turns a current file back into `version` as an older build left it.
void Downgrade(const std::string& path, int version) {
  // Before version 11 no schedule was defined.
  std::string sql = "DROP TABLE schedule_firings; DROP TABLE schedules;";
  // Before version 10 no device was paired.
  if (version < 10) sql += "DROP TABLE presence; DROP TABLE devices; DROP TABLE pairings;";
  // Before version 9 the search index was one table (version 6 with token positions): a session
  // it indexed must be indexed again.
  if (version < 9) {
    sql +=
        "DROP TABLE search_documents_0; DROP TABLE search_documents_1; DROP TABLE "
        "search_documents_2; DROP TABLE search_documents_3;";
  }
  if (version >= 9) {
    // The search index as it is.
  } else if (version >= 6) {
    sql += std::string(
               "CREATE VIRTUAL TABLE search_documents USING fts5(body, session, epoch UNINDEXED, "
               "seq UNINDEXED, kind UNINDEXED, tokenize = 'unicode61 remove_diacritics 2'") +
           (version >= 7 ? ", detail = column);" : ");") +
           "INSERT INTO search_documents(body, session, epoch, seq, kind) VALUES('stale', 's', 1, "
           "1, 'user.message'); INSERT INTO search_state VALUES('s', 1, 1);";
  } else {
    sql += "DROP TABLE search_state;";
  }
  if (version < 8) sql += "ALTER TABLE sessions DROP COLUMN usage;";
  if (version < 5) sql += "DROP TABLE timeline_items; DROP TABLE timeline_index;";
  if (version < 4) sql += "DROP TABLE checkpoints;";
  if (version < 3) {
    sql +=
        "DROP INDEX sessions_by_owner_expiry; ALTER TABLE sessions DROP COLUMN owner; "
        "ALTER TABLE sessions DROP COLUMN owner_generation; "
        "ALTER TABLE sessions DROP COLUMN owner_expires_ms; ALTER TABLE events DROP COLUMN "
        "writer; DROP TABLE owner_history; DROP TABLE daemons;";
  }
  if (version < 2) sql += "DROP TABLE consumers;";
  sql += "PRAGMA user_version = " + std::to_string(version) + ";";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// An older file is migrated in place and keeps its data: version 1 (before consumer
// definitions), version 2 (before agent ownership), version 3 (before checkpoints), version 4
// (before the timeline index), version 5 (before the search index), version 6 (a search index
// with token positions, made anew) and version 7 (before usage totals: a session stored before
// has none), version 9 (before paired devices) and version 10 (before schedules).
TEST(SqliteSchema, OlderVersionsAreMigratedInPlace) {
  for (int version : {1, 2, 3, 4, 5, 6, 7, 9, 10}) {
    char tmpl[] = "/tmp/agentstream-migrate-XXXXXX";
    const std::string dir = mkdtemp(tmpl);
    const std::string path = dir + "/log.db";
    {
      auto opened = OpenSqliteEventLog(SqliteLogOptions{.path = path});
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      ASSERT_TRUE((*opened)
                      ->CreateSession(SessionId("s"), SessionMeta{"p", "/", "t"},
                                      {MakeNewEvent(Notice{NoticeLevel::kInfo, "old"})})
                      .ok());
    }
    Downgrade(path, version);
    {
      auto opened = OpenSqliteEventLog(SqliteLogOptions{.path = path});
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      if (version < 8) {
        EXPECT_FALSE((*opened)->GetSession(SessionId("s"))->meta.usage.has_value());
      }
      ASSERT_TRUE((*opened)->consumers().SaveConsumer(ConsumerId("c"), "{}").ok());
      EXPECT_TRUE((*opened)->devices().ListDevices()->empty());
      EXPECT_TRUE(
          (*opened)->devices().AddPairing(PairingRecord{std::string(32, 'c'), "p", 1, 2}).ok());
      EXPECT_TRUE((*opened)->schedules().ListSchedules()->empty());
      EXPECT_TRUE(
          (*opened)->schedules().AddSchedule(ScheduleRecord{.id = "s", .definition = "{}"}).ok());
      EXPECT_EQ((*opened)->consumers().ListConsumers()->size(), 1u);
      auto old = (*opened)->Read(ReadRequest{SessionId("s")});
      ASSERT_TRUE(old.ok()) << old.status().ToString();
      EXPECT_EQ(old->events.at(0).owner_generation, 0u);
      auto lease = (*opened)->coordination().GetOwnership(SessionId("s"));
      ASSERT_TRUE(lease.ok()) << lease.status().ToString();
      EXPECT_FALSE(lease->live());
      EXPECT_TRUE((*opened)->coordination().AcquireOwnership(SessionId("s"), "d", 1000).ok());
      EXPECT_FALSE((*opened)->LoadCheckpoint(SessionId("s"))->has_value());
      EXPECT_TRUE(
          (*opened)->SaveCheckpoint(SessionId("s"), Checkpoint{Epoch(1), Seq(1), "{}"}).ok());
      ItemIndexStore& index = *(*opened)->item_index();
      EXPECT_FALSE(index.LoadItemState(SessionId("s"), Epoch(1))->has_value());
      EXPECT_TRUE(index
                      .CommitItems({SessionId("s"),
                                    Epoch(1),
                                    std::nullopt,
                                    ItemIndexState{1, Seq(1), 1, 0},
                                    {ItemRow{0, 7, "#1", false, Seq(1), Seq(1), "1"}}})
                      .ok());
      EXPECT_EQ(index.ItemsBetween(SessionId("s"), Epoch(1), 0, 5)->size(), 1u);
      SearchIndexStore& search = *(*opened)->search_index();
      EXPECT_FALSE(search.LoadSearchState(SessionId("s"))->has_value());
      EXPECT_TRUE(search
                      .CommitDocuments({SessionId("s"),
                                        std::nullopt,
                                        Cursor{Epoch(1), Seq(1)},
                                        {SearchDocument{Cursor{Epoch(1), Seq(1)}, 0, "user.message",
                                                        "old words"}}})
                      .ok());
      EXPECT_EQ(search.Search(SearchQuery{{"old"}, std::nullopt, 5})->size(), 1u);
      EXPECT_TRUE(search.Search(SearchQuery{{"stale"}, std::nullopt, 5})->empty());
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int(stmt, 0), kSqliteSchemaVersion);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    std::filesystem::remove_all(dir);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, EventLogConformance,
                         ::testing::ValuesIn(testing::BackendNames()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace agentstream
