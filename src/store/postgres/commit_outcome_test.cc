// A COMMIT whose answer is lost, on a real server: the log's connection runs through a proxy
// (pg/testing/fault_proxy.h) that cuts it at the writer's next COMMIT, either before the server
// has it (nothing committed) or after the server answered (committed, answer lost). The log
// must look the outcome up instead of guessing: acknowledge the batch that landed, fail the one
// that did not with kUnavailable, and keep taking writes without a reopen; a retry with the same
// producer stamp then leaves every event in the log exactly once. Needs AGENTSTREAM_TEST_PG on a
// Unix socket (tools/test.sh); skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pg/testing/fault_proxy.h"
#include "store/postgres/postgres_log.h"
#include "store/testing/events.h"

namespace agentstream {
namespace {

using agentstream::testing::Note;

using pg::testing::FaultProxy;

std::string TextOf(const EventRecord& record) {
  auto event = DecodeRecord(record);
  return event.ok() ? std::get<Notice>(event->payload).text : "<" + event.status().ToString() + ">";
}

AppendRequest Produced(const SessionId& session, std::uint64_t seq, const std::string& text) {
  AppendRequest request;
  request.session = session;
  request.producer = ProducerStamp{ProducerId("p1"), 0, seq};
  request.events.push_back(Note(text));
  return request;
}

class CommitOutcomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = pg::testing::ProxiedScratch::Start("co");
    if (!db.ok() && pg::testing::ProxiedScratch::Skips(db.status()))
      GTEST_SKIP() << db.status().ToString();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    PostgresLogOptions options;
    options.conninfo = db_->proxy->conninfo();
    options.schema = db_->schema->name();
    auto opened = OpenPostgresEventLog(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    log_ = std::move(opened).value();
    ASSERT_TRUE(log_->CreateSession(session_, SessionMeta{"scripted", "/w", ""}, {}).ok());
  }
  void TearDown() override {
    log_.reset();
    db_.reset();
  }

  std::vector<std::string> Texts() {
    ReadRequest read;
    read.session = session_;
    read.from = Seq(1);
    auto got = log_->Read(read);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::string> out;
    if (got.ok())
      for (const EventRecord& r : got->events) out.push_back(TextOf(r));
    return out;
  }

  const SessionId session_{"ses_outcome"};
  std::unique_ptr<pg::testing::ProxiedScratch> db_;  // dropped after the log closes
  std::unique_ptr<EventLog> log_;
};

TEST_F(CommitOutcomeTest, ACommitThatLandedIsAcknowledgedAfterItsAnswerWasLost) {
  ASSERT_TRUE(log_->Append(Produced(session_, 0, "first")).ok());
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  auto landed = log_->Append(Produced(session_, 1, "second"));
  EXPECT_EQ(db_->proxy->cuts(), 1);
  ASSERT_TRUE(landed.ok()) << landed.status().ToString();
  EXPECT_EQ(landed->first_seq, Seq(2));
  EXPECT_FALSE(landed->duplicate);
  EXPECT_TRUE(log_->Health().ok());
  // A client that retried anyway (its answer could have been lost too) gets a duplicate.
  auto retried = log_->Append(Produced(session_, 1, "second"));
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_TRUE(retried->duplicate);
  auto next = log_->Append(Produced(session_, 2, "third"));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->first_seq, Seq(3));
  EXPECT_EQ(Texts(), (std::vector<std::string>{"first", "second", "third"}));
}

TEST_F(CommitOutcomeTest, ACommitThatDidNotLandFailsRetryablyAndTheLogGoesOn) {
  ASSERT_TRUE(log_->Append(Produced(session_, 0, "first")).ok());
  db_->proxy->CutNextCommit(FaultProxy::Cut::kBeforeCommit);
  auto lost = log_->Append(Produced(session_, 1, "second"));
  EXPECT_EQ(db_->proxy->cuts(), 1);
  ASSERT_FALSE(lost.ok());
  EXPECT_EQ(lost.status().code(), ErrorCode::kUnavailable) << lost.status().ToString();
  EXPECT_NE(lost.status().message().find("did not land"), std::string::npos)
      << lost.status().ToString();
  EXPECT_TRUE(log_->Health().ok()) << "not sticky";
  auto retried = log_->Append(Produced(session_, 1, "second"));
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_FALSE(retried->duplicate);
  EXPECT_EQ(retried->first_seq, Seq(2));
  EXPECT_EQ(Texts(), (std::vector<std::string>{"first", "second"}));
}

// A batch of many appends from several producers, cut after the commit: each is acknowledged
// with the seqs it got, once.
TEST_F(CommitOutcomeTest, EveryAppendOfALandedBatchIsAcknowledgedOnce) {
  constexpr int kAppends = 50;
  ASSERT_TRUE(log_->Append(Produced(session_, 0, "first")).ok());
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  std::atomic<int> ok{0}, failed{0}, pending{kAppends};
  std::mutex mu;
  std::set<std::uint64_t> seqs;
  for (int i = 0; i < kAppends; ++i) {
    AppendRequest r = Produced(session_, 0, "burst");
    r.producer->id = ProducerId("q" + std::to_string(i));
    log_->AppendAsync(std::move(r), [&](Result<AppendResult> got) {
      if (got.ok()) {
        std::lock_guard lock(mu);
        seqs.insert(got->first_seq.value());
        ++ok;
      } else {
        ++failed;
      }
      --pending;
    });
  }
  while (pending.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(db_->proxy->cuts(), 1);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), kAppends);
  EXPECT_EQ(seqs.size(), static_cast<std::size_t>(kAppends)) << "each its own seq";
  EXPECT_EQ(Texts().size(), static_cast<std::size_t>(kAppends) + 1);
}

}  // namespace
}  // namespace agentstream
