// Subscriptions survive a restart of the daemon: their configuration, the offsets a worker
// acknowledged, the wake a worker holds (its token still valid), and the signing key.
#include <unistd.h>

#include <gtest/gtest.h>
#include <boost/json.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "streams/memory_stream_store.h"
#include "streams/subscriptions.h"

namespace agentstream::streams {
namespace {

namespace json = boost::json;

class SubscriptionStateTest : public ::testing::Test {
 protected:
  void SetUp() override { Cleanup(); }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    std::filesystem::remove(db_);
    std::filesystem::remove(db_ + "-wal");
    std::filesystem::remove(keys_);
  }

  // One daemon run: the store and the subscription manager over the same files.
  struct Run {
    Run() = default;
    Run(Run&&) = default;
    ~Run() {
      if (store) store->SetChangeHook({});  // as the daemon does, before the manager goes
    }
    std::unique_ptr<MemoryStreamStore> store;
    std::unique_ptr<SubscriptionManager> subscriptions;
  };
  Run Start() {
    Run run;
    auto store = MemoryStreamStore::Open(db_, StreamLimits{});
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    run.store = std::move(*store);
    run.subscriptions = std::make_unique<SubscriptionManager>(
        *run.store, MakeMemorySubscriptionRecords(*run.store, keys_));
    const Status restored = run.subscriptions->Restore();
    EXPECT_TRUE(restored.ok()) << restored.ToString();
    run.store->SetChangeHook(
        [s = run.subscriptions.get()](const std::string& path) { s->OnStreamChanged(path); });
    return run;
  }

  static StreamResponse Call(Run& run, const std::string& method, const std::string& path,
                             const std::string& body, const std::string& token = "") {
    StreamRequest req;
    req.method = method;
    req.path = "/v1/stream/__ds/" + path;
    req.body = body;
    if (!token.empty()) req.headers.emplace_back("authorization", "Bearer " + token);
    StreamResponse response = run.subscriptions->Handle(req, "http://127.0.0.1:1");
    std::promise<bool> durable;
    run.store->WhenDurable([&](bool ok) { durable.set_value(ok); });
    EXPECT_TRUE(durable.get_future().get());
    return response;
  }

  static void CreateStream(Run& run, const std::string& path) {
    CreateArgs args;
    args.path = "/v1/stream/" + path;
    args.content_type = "application/json";
    ASSERT_EQ(run.store->Create(args).code, Code::kCreated);
  }

  // Streams jobs/a and wakes, and the pull-wake subscription s1 of jobs/a that wakes on wakes.
  static void SubscribeToJobs(Run& run) {
    CreateStream(run, "jobs/a");
    CreateStream(run, "wakes");
    ASSERT_EQ(Call(run, "PUT", "subscriptions/s1",
                   R"({"type":"pull-wake","streams":["jobs/a"],"wake_stream":"wakes"})")
                  .status,
              201);
  }

  static Offset AppendTo(Run& run, const std::string& path) {
    AppendArgs args;
    args.path = "/v1/stream/" + path;
    args.body = R"({"job":1})";
    args.content_type = "application/json";
    const OpResult r = run.store->Append(args);
    EXPECT_EQ(r.code, Code::kOk);
    return r.offset;
  }

  const std::string db_ = (std::filesystem::temp_directory_path() /
                           ("subscription_state_" + std::to_string(::getpid()) + ".db"))
                              .string();
  const std::string keys_ = db_ + ".key";
};

TEST_F(SubscriptionStateTest, ConfigurationAcksHeldWakeAndKeysSurviveARestart) {
  std::string kid, token, wake_id, acked;
  std::int64_t generation = 0;
  {
    Run run = Start();
    SubscribeToJobs(run);
    AppendTo(run, "jobs/a");
    const StreamResponse claim = Call(run, "POST", "subscriptions/s1/claim", R"({"worker":"w1"})");
    ASSERT_EQ(claim.status, 200) << claim.body;
    const json::object c = json::parse(claim.body).as_object();
    token = std::string(c.at("token").as_string());
    wake_id = std::string(c.at("wake_id").as_string());
    generation = c.at("generation").as_int64();
    acked = FormatOffset(AppendTo(run, "jobs/a"));
    const json::object ack{
        {"wake_id", wake_id},
        {"generation", generation},
        {"acks", json::array{json::object{{"stream", "jobs/a"}, {"offset", acked}}}}};
    ASSERT_EQ(Call(run, "POST", "subscriptions/s1/ack", json::serialize(ack), token).status, 200);
    kid = run.subscriptions->kid();
  }
  {
    Run run = Start();
    EXPECT_EQ(run.subscriptions->kid(), kid);  // webhook receivers keep trusting the same key
    const StreamResponse got = Call(run, "GET", "subscriptions/s1", "");
    ASSERT_EQ(got.status, 200) << got.body;
    const json::object s = json::parse(got.body).as_object();
    EXPECT_EQ(s.at("type").as_string(), "pull-wake");
    ASSERT_EQ(s.at("streams").as_array().size(), 1U);
    EXPECT_EQ(s.at("streams").as_array()[0].as_object().at("acked_offset").as_string(), acked);
    // The worker that held the wake before the restart still holds it, with the same token.
    EXPECT_EQ(Call(run, "POST", "subscriptions/s1/claim", R"({"worker":"w2"})").status, 409);
    const json::object done{{"wake_id", wake_id}, {"generation", generation}, {"done", true}};
    EXPECT_EQ(Call(run, "POST", "subscriptions/s1/ack", json::serialize(done), token).status, 200);
    // A deletion is journaled too.
    EXPECT_EQ(Call(run, "DELETE", "subscriptions/s1", "").status, 204);
  }
  Run after = Start();
  EXPECT_EQ(Call(after, "GET", "subscriptions/s1", "").status, 404);
}

// A daemon restarted with subscriptions but no subscription request yet still wakes them: the
// first append to a subscribed stream appends a wake event to the wake stream.
TEST_F(SubscriptionStateTest, ARestoredSubscriptionIsWokenByTheNextAppend) {
  {
    Run run = Start();
    SubscribeToJobs(run);
  }
  Run run = Start();
  AppendTo(run, "jobs/a");
  // The wake is appended by the subscriptions' own thread: wait for it (at most 10 s).
  ReadResult wakes;
  for (int i = 0; i < 1000 && wakes.messages.empty(); ++i) {
    wakes = run.store->Read("/v1/stream/wakes", std::nullopt);
    if (wakes.messages.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(wakes.messages.size(), 1U);
  EXPECT_NE(wakes.messages[0].data->find("jobs/a"), std::string::npos) << *wakes.messages[0].data;
}

}  // namespace
}  // namespace agentstream::streams
