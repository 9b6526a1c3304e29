// The hub and live reader rule: every event after the cursor exactly once, in order, whatever the
// batches do (late, early, overlapping, missing), and a reset for a replaced epoch.
#include "server/live_reader.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <deque>
#include <mutex>

#include "core/event_codec.h"
#include "server/hub.h"
#include "store/forwarding_log.h"
#include "store/memory_log.h"
#include "store/sqlite/sqlite_log.h"
#include "testing/temp_dir.h"

namespace agentstream::server {
namespace {

namespace json = boost::json;

class FollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(log_.CreateSession(session_, SessionMeta{"scripted", "/", "", 0, "", ""},
                                   {MakeNewEvent(Notice{NoticeLevel::kInfo, "e1"})})
                    .ok());
  }
  void Append(int n) {
    for (int i = 0; i < n; ++i) {
      AppendRequest request;
      request.session = session_;
      request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "x"}));
      ASSERT_TRUE(log_.Append(std::move(request)).ok());
    }
  }
  // The seqs inside a batch's JSON.
  static std::vector<std::uint64_t> Seqs(const EventBatch& batch) {
    std::vector<std::uint64_t> out;
    const json::value parsed = json::parse(*batch.json);
    for (const auto& e : parsed.as_array())
      out.push_back(e.as_object().at("seq").to_number<std::uint64_t>());
    return out;
  }
  // Drains the reader's catch-up into `got`.
  static void Drain(LiveReader& f, std::vector<std::uint64_t>& got) {
    while (f.catching_up()) {
      auto batch = f.Pull();
      ASSERT_TRUE(batch.ok()) << batch.status().ToString();
      if (!*batch) break;
      for (auto s : Seqs(**batch)) got.push_back(s);
    }
  }

  MemoryEventLog log_;
  SessionId session_{"ses_f"};
};

TEST_F(FollowerTest, CatchUpThenLiveWithoutGapOrDuplicate) {
  Append(9);  // seqs 1..10
  BatchLimits small{3, 1 << 20};
  LiveReader f(log_, session_, Cursor{Epoch(1), Seq(4)}, small);
  std::vector<std::uint64_t> got;
  Drain(f, got);
  EXPECT_FALSE(f.catching_up());
  EXPECT_EQ(got, (std::vector<std::uint64_t>{5, 6, 7, 8, 9, 10}));

  // A live batch that starts exactly at the next seq is delivered as is.
  Append(2);
  bool newer = false;
  auto live = ReadBatch(log_, session_, Epoch(1), Seq(11), small, &newer);
  ASSERT_TRUE(live.ok());
  auto delivered = f.OnLive(*live);
  ASSERT_NE(delivered, nullptr);
  EXPECT_EQ(delivered.get(), live->get());  // shared, not copied
  // The same batch again (a duplicate) is dropped.
  EXPECT_EQ(f.OnLive(*live), nullptr);
  EXPECT_FALSE(f.catching_up());
  EXPECT_EQ(f.position(), (Cursor{Epoch(1), Seq(12)}));
}

TEST_F(FollowerTest, AGapSwitchesToTheLogAndAnOverlapIsNotDuplicated) {
  LiveReader f(log_, session_, Cursor{Epoch(1), Seq(1)});
  std::vector<std::uint64_t> got;
  Drain(f, got);
  EXPECT_TRUE(got.empty());
  Append(5);  // 2..6; pretend the hub's batch for 2..3 was lost and 4..6 arrives
  bool newer = false;
  auto late = ReadBatch(log_, session_, Epoch(1), Seq(4), {}, &newer);
  EXPECT_EQ(f.OnLive(*late), nullptr);
  EXPECT_TRUE(f.catching_up());
  Drain(f, got);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{2, 3, 4, 5, 6}));
  // An overlapping batch (5..7) after 7 was committed: only 7 is new; read from the log.
  Append(1);
  auto overlap = ReadBatch(log_, session_, Epoch(1), Seq(5), {}, &newer);
  EXPECT_EQ(f.OnLive(*overlap), nullptr);
  Drain(f, got);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{2, 3, 4, 5, 6, 7}));
}

TEST_F(FollowerTest, ABatchSeenDuringCatchUpIsNotLost) {
  Append(3);  // 1..4
  BatchLimits one{1, 1 << 20};
  LiveReader f(log_, session_, Cursor{Epoch(1), Seq(0)}, one);
  std::vector<std::uint64_t> got;
  auto first = f.Pull();
  ASSERT_TRUE(first.ok() && *first);
  for (auto s : Seqs(**first)) got.push_back(s);
  Append(1);  // 5, announced while the reader is still replaying
  bool newer = false;
  auto live = ReadBatch(log_, session_, Epoch(1), Seq(5), {}, &newer);
  EXPECT_EQ(f.OnLive(*live), nullptr);
  Drain(f, got);
  EXPECT_EQ(got, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
}

TEST_F(FollowerTest, AReplacedEpochNeedsAReset) {
  Append(3);
  ASSERT_TRUE(log_.Rewind(session_, Cursor{Epoch(1), Seq(2)},
                          {MakeNewEvent(Notice{NoticeLevel::kInfo, "after rewind"})})
                  .ok());
  LiveReader stale(log_, session_, Cursor{Epoch(1), Seq(3)});
  auto batch = stale.Pull();
  ASSERT_TRUE(batch.ok());
  EXPECT_EQ(*batch, nullptr);
  EXPECT_TRUE(stale.reset_needed());

  LiveReader live(log_, session_, Cursor{Epoch(2), Seq(0)});
  std::vector<std::uint64_t> got;
  Drain(live, got);
  EXPECT_FALSE(live.reset_needed());
  EXPECT_FALSE(got.empty());

  auto marker = std::make_shared<EventBatch>();
  marker->session = session_;
  marker->epoch = Epoch(3);
  EXPECT_EQ(live.OnLive(marker), nullptr);
  EXPECT_TRUE(live.reset_needed());
}

TEST_F(FollowerTest, ACursorPastTheTailIsRefused) {
  LiveReader f(log_, session_, Cursor{Epoch(1), Seq(50)});
  EXPECT_EQ(f.Pull().status().code(), ErrorCode::kInvalidArgument);
}

TEST_F(FollowerTest, HubReadsEachCommitOnceForEverySubscriber) {
  std::deque<std::function<void()>> posted;
  Hub hub(log_, [&](std::function<void()> fn) { posted.push_back(std::move(fn)); });
  std::vector<std::shared_ptr<const EventBatch>> a, b, other;
  auto ta = hub.Subscribe(session_, [&](auto batch) { a.push_back(batch); });
  auto tb = hub.Subscribe(session_, [&](auto batch) { b.push_back(batch); });
  Append(2);
  while (!posted.empty()) {
    auto fn = std::move(posted.front());
    posted.pop_front();
    fn();
  }
  // Both commits were read by the first notice (it reads through the current tail).
  ASSERT_EQ(a.size(), b.size());
  std::vector<std::uint64_t> seqs;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].get(), b[i].get());  // one encoded buffer shared by both subscribers
    for (auto s : Seqs(*a[i])) seqs.push_back(s);
  }
  EXPECT_EQ(seqs, (std::vector<std::uint64_t>{2, 3}));
  const std::size_t before = a.size();
  EXPECT_EQ(hub.Stats().subscribers, 2u);
  tb.Reset();
  EXPECT_EQ(hub.Stats().subscribers, 1u);
  Append(1);
  while (!posted.empty()) {
    auto fn = std::move(posted.front());
    posted.pop_front();
    fn();
  }
  EXPECT_EQ(a.size(), before + 1);
  EXPECT_EQ(b.size(), before);
  ta.Reset();
  hub.Stop();
}

// A commit of this process's own appends carries its records: the hub encodes those, split by the
// batch limits, and reads nothing back. The frames are byte for byte those a read would make.
TEST(HubCommitRecords, ACommitsOwnRecordsAreEncodedWithoutAReadBack) {
  const test_support::TempDir dir("hub-records");
  auto sqlite = OpenSqliteEventLog({.path = dir.path() + "/log.db"});
  ASSERT_TRUE(sqlite.ok()) << sqlite.status().ToString();
  testing::ReadCountingLog log(**sqlite);
  const SessionId session("ses_h");
  ASSERT_TRUE(log.CreateSession(session, SessionMeta{"scripted", "/", "", 0, "", ""},
                                {MakeNewEvent(Notice{NoticeLevel::kInfo, "e1"})})
                  .ok());
  std::mutex mu;
  std::deque<std::function<void()>> posted;
  const BatchLimits small{2, 1 << 20};
  Hub hub(
      log,
      [&](std::function<void()> fn) {
        std::lock_guard lock(mu);
        posted.push_back(std::move(fn));
      },
      small);
  std::vector<std::shared_ptr<const EventBatch>> got;
  auto token = hub.Subscribe(session, [&](auto batch) { got.push_back(batch); });
  AppendRequest request;
  request.session = session;
  for (int i = 0; i < 5; ++i)
    request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "x" + std::to_string(i)}));
  request.events[3].turn = TurnId("turn_1");
  ASSERT_TRUE(log.Append(std::move(request)).ok());
  std::deque<std::function<void()>> run;
  {
    std::lock_guard lock(mu);
    run.swap(posted);
  }
  for (auto& fn : run) fn();
  EXPECT_EQ(log.reads.load(), 0) << "the hub read back what the commit carried";
  ASSERT_EQ(got.size(), 3u);  // seqs 2..6 in batches of at most two
  Seq from(2);
  for (const auto& batch : got) {
    bool newer = false;
    auto read = ReadBatch(log, session, Epoch(1), from, small, &newer);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    EXPECT_EQ(batch->first, (*read)->first);
    EXPECT_EQ(batch->last, (*read)->last);
    EXPECT_EQ(batch->count, (*read)->count);
    EXPECT_EQ(*batch->json, *(*read)->json);
    from = batch->last.next();
  }
  EXPECT_EQ(from, Seq(7));
  token.Reset();
  hub.Stop();
}

}  // namespace
}  // namespace agentstream::server
