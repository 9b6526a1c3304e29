// A COMMIT of a generic stream whose answer is lost, on a real server: the store's connections run
// through a proxy (pg/testing/fault_proxy.h) that cuts the writer's next stamped COMMIT, either
// before the server has it (nothing committed) or after the server answered (committed, answer
// lost). The store must look the outcome up instead of guessing: an append that landed is
// acknowledged (200, or 204 for a producer's), one that did not fails with 503 "nothing was
// written", and a retry with the same Producer-Seq leaves the message in the stream exactly once.
// Also: a database of the streams' schema version 1 (no stamp table) is brought up to date on
// open. Needs AGENTSTREAM_TEST_PG on a Unix socket (tools/test.sh); skipped otherwise.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "pg/testing/fault_proxy.h"
#include "streams/postgres_streams.h"
#include "streams/stream_protocol.h"

namespace agentstream::streams {
namespace {

using pg::testing::FaultProxy;

// The stream's request path, which is also its path in the store.
constexpr const char* kPath = "/v1/stream/s";

class PostgresStreamsOutcomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = pg::testing::ProxiedScratch::Start("dso");
    if (!db.ok() && pg::testing::ProxiedScratch::Skips(db.status()))
      GTEST_SKIP() << db.status().ToString();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
    Open();
  }
  void TearDown() override {
    store_.reset();
    db_.reset();
  }

  void Open() {
    PostgresStreamsOptions options;
    options.conninfo = db_->proxy->conninfo();
    options.schema = db_->schema->name();
    options.outcome_wait = std::chrono::seconds(10);
    auto opened = OpenPostgresStreamStore(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  // One request through the protocol layer, answered from the store's writer thread.
  StreamResponse Call(const std::string& method,
                      std::vector<std::pair<std::string, std::string>> headers, std::string body) {
    StreamRequest req;
    req.method = method;
    req.path = kPath;
    req.headers = std::move(headers);
    req.body = std::move(body);
    std::promise<StreamResponse> answered;
    HandleStreamRequest(*store_, nullptr, req, "http://h", [&](Outcome o) {
      answered.set_value(std::get<StreamResponse>(std::move(o)));
    });
    return answered.get_future().get();
  }
  StreamResponse Produce(std::uint64_t seq, const std::string& body) {
    return Call("POST",
                {{"content-type", "text/plain"},
                 {"producer-id", "p1"},
                 {"producer-epoch", "0"},
                 {"producer-seq", std::to_string(seq)}},
                body);
  }
  StreamResponse Plain(const std::string& body) {
    return Call("POST", {{"content-type", "text/plain"}}, body);
  }
  // The stream's messages, one string per append.
  std::vector<std::string> Messages() {
    std::vector<std::string> out;
    const ReadResult r = store_->Read(kPath, std::nullopt);
    EXPECT_EQ(r.code, Code::kOk);
    EXPECT_TRUE(r.up_to_date);
    for (const Message& m : r.messages) out.push_back(*m.data);
    return out;
  }

  std::unique_ptr<pg::testing::ProxiedScratch> db_;  // dropped after the store closes
  std::unique_ptr<StreamStore> store_;
};

TEST_F(PostgresStreamsOutcomeTest, AnAppendThatLandedIsAcknowledgedAfterItsAnswerWasLost) {
  ASSERT_EQ(Call("PUT", {{"content-type", "text/plain"}}, "").status, 201);
  ASSERT_EQ(Produce(0, "a").status, 200);
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  const StreamResponse landed = Produce(1, "b");
  EXPECT_EQ(db_->proxy->cuts(), 1);
  EXPECT_EQ(landed.status, 200) << landed.body;
  // A client that retried anyway (its answer could have been lost too) gets a duplicate.
  EXPECT_EQ(Produce(1, "b").status, 204);
  // An append without a producer is acknowledged the same way.
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  const StreamResponse plain = Plain("c");
  EXPECT_EQ(db_->proxy->cuts(), 2);
  EXPECT_EQ(plain.status, 204) << plain.body;
  EXPECT_EQ(Produce(2, "d").status, 200);
  EXPECT_EQ(Messages(), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST_F(PostgresStreamsOutcomeTest, AnAppendThatDidNotLandFailsRetryablyAndTheRetryLandsOnce) {
  ASSERT_EQ(Call("PUT", {{"content-type", "text/plain"}}, "").status, 201);
  ASSERT_EQ(Produce(0, "a").status, 200);
  db_->proxy->CutNextCommit(FaultProxy::Cut::kBeforeCommit);
  const StreamResponse lost = Produce(1, "b");
  EXPECT_EQ(db_->proxy->cuts(), 1);
  EXPECT_EQ(lost.status, 503) << lost.body;
  EXPECT_NE(lost.body.find("nothing was written"), std::string::npos) << lost.body;
  EXPECT_EQ(Messages(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(Produce(1, "b").status, 200) << "the retry lands";
  EXPECT_EQ(Produce(1, "b").status, 204) << "once";
  EXPECT_EQ(Messages(), (std::vector<std::string>{"a", "b"}));
}

// A create is a transaction of its own, stamped too: one that landed is answered 201.
TEST_F(PostgresStreamsOutcomeTest, ACreateThatLandedIsAnsweredCreated) {
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  const StreamResponse created = Call("PUT", {{"content-type", "text/plain"}}, "x");
  EXPECT_EQ(db_->proxy->cuts(), 1);
  EXPECT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(Messages(), (std::vector<std::string>{"x"}));
}

// A database the streams of schema version 1 made (no stamp table) is brought to the current
// version when a daemon opens it, and its writes are looked up like any other.
TEST_F(PostgresStreamsOutcomeTest, AVersionOneDatabaseIsUpgradedOnOpen) {
  ASSERT_EQ(Call("PUT", {{"content-type", "text/plain"}}, "").status, 201);
  store_.reset();
  const std::string s = db_->schema->name();
  ASSERT_TRUE(db_->schema->admin()
                  .ExecScript("DROP TABLE " + s + ".ds_commit_stamps; UPDATE " + s +
                              ".ds_schema SET version = 1")
                  .ok());
  Open();
  auto version = db_->schema->admin().Exec("SELECT max(version) FROM " + s + ".ds_schema");
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(version->Int(0, 0), kPostgresStreamsSchemaVersion);
  db_->proxy->CutNextCommit(FaultProxy::Cut::kAfterCommit);
  EXPECT_EQ(Produce(0, "a").status, 200);
  EXPECT_EQ(db_->proxy->cuts(), 1);
  EXPECT_EQ(Messages(), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace agentstream::streams
