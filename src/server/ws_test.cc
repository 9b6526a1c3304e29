// The WebSocket app protocol over real sockets: hello, the replies' ids, subscribe with and
// without a resume cursor, identical sequences on two clients, epoch reset, control notices; and
// the slow-client bound on a fake transport.
#include "server/testing/recording_ws_output.h"
#include "server/testing/server_test_fixture.h"
#include "server/ws_app.h"

namespace agentstream::server::testing {
namespace {

// Reads messages until `done(msg)`; collects event seqs of `agent` on the way.
struct Collector {
  std::vector<std::uint64_t> seqs;
  std::vector<json::value> others;
  bool completed = false;
  bool ReadUntil(WsClient& ws, const std::function<bool(const json::value&)>& done) {
    for (int i = 0; i < 10000; ++i) {
      auto text = ws.Read();
      if (!text) return false;
      json::value msg = ParseOrNull(*text);
      if (msg.at("type") == "events") {
        for (auto& e : msg.at("events").as_array()) {
          seqs.push_back(e.at("seq").to_number<std::uint64_t>());
          completed |= e.at("kind") == "turn.completed";
        }
      } else {
        others.push_back(msg);
      }
      if (done(msg)) return true;
    }
    return false;
  }
};

class WsTest : public ServerFixture {
 protected:
  json::value Request(WsClient& ws, const std::string& text, Collector* c = nullptr) {
    EXPECT_TRUE(ws.Send(text));
    const std::string id = std::string(ParseOrNull(text).at("id").as_string());
    Collector local;
    Collector& col = c ? *c : local;
    json::value reply;
    col.ReadUntil(ws, [&](const json::value& m) {
      if (m.as_object().contains("id") && m.at("id") == json::value(id)) reply = m;
      return !reply.is_null();
    });
    return reply;
  }
};

TEST_F(WsTest, HelloAnnouncesFeaturesAndLimits) {
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  json::value info = Request(ws, R"({"type":"hello","id":"h"})");
  EXPECT_EQ(info.at("type"), "server_info");
  EXPECT_EQ(info.at("features").at("selectiveAgentTimeline"), true);
  EXPECT_EQ(info.at("limits").at("unsubscribeGraceMs"), 30000);
  json::value bad = Request(ws, R"({"type":"fly","id":"x"})");
  EXPECT_EQ(bad.at("type"), "error");
  EXPECT_EQ(bad.at("error").at("code"), "invalid_argument");
}

TEST_F(WsTest, RepliesEchoTheRequestsIdAndNoneWithoutOne) {
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  json::value with = Request(ws, R"({"type":"agents.list","id":"l1"})");
  EXPECT_EQ(with.at("type"), "agents");
  // Without an id, each kind of reply carries none (the list, a search, an error).
  for (const char* request :
       {R"({"type":"agents.list"})", R"({"type":"search","q":"x"})", R"({"type":"fly"})"}) {
    ASSERT_TRUE(ws.Send(request));
    auto text = ws.Read();
    ASSERT_TRUE(text.has_value()) << request;
    const json::value reply = ParseOrNull(*text);
    ASSERT_TRUE(reply.is_object()) << *text;
    EXPECT_FALSE(reply.as_object().contains("id")) << request << " -> " << *text;
  }
}

TEST_F(WsTest, AMemberOfTheWrongTypeOrAnUnknownOneIsAnError) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  const std::string cursor(Snapshot(id).at("cursor").as_string());
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  const std::pair<std::string, std::string> cases[] = {
      {R"({"type":"search","id":"s1","q":"x","agent":5})", "agent must be a string"},
      {R"({"type":"search","id":"s2","q":["x"]})", "q must be a string"},
      // An integer beyond 64 bits is an error, not an exception that ends the daemon.
      {R"({"type":"search","id":"s3","q":"x","limit":18446744073709551615})", "limit must be"},
      {R"({"type":"timeline.fetch","id":"t1","agent":")" + id +
           R"(","limit":18446744073709551615})",
       "limit must be"},
      {R"({"type":"timeline.fetch","id":"t2","agent":")" + id + R"(","limit":"1"})",
       "limit must be an integer"},
      {R"({"type":"timeline.fetch","id":"t3","agent":")" + id + R"(","maxBytes":1.5})",
       "maxBytes must be an integer"},
      {R"({"type":"timeline.fetch","id":"t4","agent":")" + id + R"(","direction":5})",
       "direction must be a string"},
      {R"({"type":"agents.list","id":"l1","includeClosed":"yes"})",
       "includeClosed must be a boolean"},
      {R"({"type":"agents.create","id":"c1","agent":{"provider":"scripted","cwd":"/tmp",)"
       R"("worktre":true}})",
       "unknown field \"worktre\" in the agent config"},
      {R"({"type":"agents.create","id":"c2","agent":{"provider":"scripted","cwd":"/tmp"},)"
       R"("title":"t"})",
       "unknown field \"title\" in an agents.create message"},
      {R"({"type":"agents.create","id":"c3","provider":"scripted","cwd":"/tmp","tilte":"t"})",
       "unknown field \"tilte\" in the agent config"},
      {R"({"type":"send","id":"m1","agent":")" + id +
           R"(","text":"hi","clientMessageId":"c1","whileRuning":"steer"})",
       "unknown field \"whileRuning\" in the message"},
      {R"({"type":"permission.reply","id":"p1","agent":")" + id +
           R"(","requestId":"r","decision":"allow","optionID":"o"})",
       "unknown field \"optionID\" in the permission reply"},
      {R"({"type":"mode.set","id":"o1","agent":")" + id + R"(","mode":"plan","x":1})",
       "unknown field \"x\" in the body"},
      {R"({"type":"rewind","id":"r1","agent":")" + id + R"(","cursor":")" + cursor +
           R"(","to":"1:1"})",
       "unknown field \"to\" in the body"},
  };
  for (const auto& [request, message] : cases) {
    const json::value reply = Request(ws, request);
    ASSERT_TRUE(reply.is_object()) << request;
    EXPECT_EQ(reply.at("type"), "error") << request;
    const std::string got(reply.at("error").at("message").as_string());
    EXPECT_EQ(got.rfind(message, 0), 0u) << request << " -> " << got;
  }
  // Nothing was created or sent; the web page's own shapes are accepted.
  const json::value list = Request(ws, R"({"type":"agents.list","id":"l2","includeClosed":false})");
  EXPECT_EQ(list.at("agents").as_array().size(), 1u);
  EXPECT_EQ(Snapshot(id).at("cursor"), json::value(cursor));
  const json::value created = Request(
      ws, R"({"type":"agents.create","id":"c4","agent":{"provider":"scripted","cwd":"/tmp",)"
          R"("title":"t","clientRequestId":"web_1"}})");
  EXPECT_EQ(created.at("type"), "agent") << created;
  const json::value sent = Request(ws, R"({"type":"send","id":"m2","agent":")" + id +
                                           R"(","text":"hi","clientMessageId":"c9",)"
                                           R"("whileRunning":"queue","attachments":[{"kind":)"
                                           R"("image","mimeType":"image/png","name":"a.png",)"
                                           R"("data":"iVBOR"}]})");
  EXPECT_EQ(sent.at("type"), "send.reply") << sent;
}

TEST_F(WsTest, TwoSubscribersReceiveIdenticalSequencesAndNotices) {
  WsClient a, b;
  ASSERT_EQ(a.Connect(port_), 101);
  ASSERT_EQ(b.Connect(port_), 101);
  json::value created = Request(
      a, R"({"type":"agents.create","id":"c","agent":{"provider":"scripted","cwd":"/tmp"}})");
  ASSERT_EQ(created.at("type"), "agent");
  const std::string id = std::string(created.at("agent").at("id").as_string());
  Collector ca, cb;
  EXPECT_EQ(
      Request(a, R"({"type":"subscribe","id":"s","agent":")" + id + R"(","cursor":"1:0"})", &ca)
          .at("type"),
      "subscribed");
  EXPECT_EQ(
      Request(b, R"({"type":"subscribe","id":"s","agent":")" + id + R"(","cursor":"1:0"})", &cb)
          .at("type"),
      "subscribed");
  json::value reply = Request(
      a, R"({"type":"send","id":"m","agent":")" + id + R"(","text":"hi","clientMessageId":"w1"})",
      &ca);
  EXPECT_EQ(reply.at("type"), "send.reply");
  EXPECT_EQ(reply.at("accepted"), true);
  ASSERT_TRUE(ca.completed || ca.ReadUntil(a, [&](const json::value&) { return ca.completed; }));
  ASSERT_TRUE(cb.ReadUntil(b, [&](const json::value&) { return cb.completed; }));
  ASSERT_TRUE(WaitIdle(id));
  // Both replay from the start; compare the common prefix through turn.completed.
  const std::size_t n = std::min(ca.seqs.size(), cb.seqs.size());
  ASSERT_GT(n, 3u);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(ca.seqs[i], i + 1);
    ASSERT_EQ(cb.seqs[i], i + 1);
  }
  // b saw the live status notices of the agent it did not create.
  bool status_notice = false;
  for (const auto& m : cb.others) status_notice |= m.at("type") == "agent.status";
  EXPECT_TRUE(status_notice);
}

// Control notices go to the clients that asked for the agent list, and to the subscribers of the
// agent they are about; a client that did neither hears of no agent.
TEST_F(WsTest, NoticesGoToListersAndToTheAgentsSubscribers) {
  WsClient quiet, lister, follower;  // connected in this order: their watchers run in this order
  ASSERT_EQ(quiet.Connect(port_), 101);
  ASSERT_EQ(lister.Connect(port_), 101);
  ASSERT_EQ(follower.Connect(port_), 101);
  const std::string a = CreateAgent();
  const std::string b = CreateAgent();
  EXPECT_EQ(Request(lister, R"({"type":"agents.list","id":"l"})").at("type"), "agents");
  EXPECT_EQ(Request(follower, R"({"type":"subscribe","id":"s","agent":")" + a + R"("})").at("type"),
            "subscribed");
  Call("POST", "/v1/agents/" + b + "/title", R"({"title":"bee"})");
  Call("POST", "/v1/agents/" + a + "/title", R"({"title":"ay"})");
  auto titled = [](const json::value& m, const std::string& agent, const char* title) {
    return m.at("type") == "agent.status" && m.at("agent").at("id") == json::value(agent) &&
           m.at("agent").at("title") == title;
  };
  Collector listed;
  bool saw_b = false;
  ASSERT_TRUE(listed.ReadUntil(lister, [&](const json::value& m) {
    saw_b |= titled(m, b, "bee");
    return titled(m, a, "ay");
  }));
  EXPECT_TRUE(saw_b) << "the lister hears of every agent";
  Collector followed;
  ASSERT_TRUE(
      followed.ReadUntil(follower, [&](const json::value& m) { return titled(m, a, "ay"); }));
  for (const json::value& m : followed.others)
    EXPECT_FALSE(m.at("type") == "agent.status" && m.at("agent").at("id") == json::value(b)) << m;
  // The quiet client's watcher ran before the lister's: anything it was sent is ahead of this
  // reply.
  Collector heard;
  EXPECT_EQ(Request(quiet, R"({"type":"hello","id":"h"})", &heard).at("type"), "server_info");
  for (const json::value& m : heard.others) EXPECT_NE(m.at("type"), "agent.status") << m;
}

TEST_F(WsTest, SubscribeWithAResumeCursorContinuesWithoutGapOrDuplicate) {
  const std::string id = CreateAgent();
  Call("POST", "/v1/agents/" + id + "/messages", R"({"text":"one","clientMessageId":"a1"})");
  ASSERT_TRUE(WaitIdle(id));
  const std::uint64_t mid = 4;
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  Collector c;
  json::value sub =
      Request(ws, R"({"type":"subscribe","id":"s","agent":")" + id + R"(","cursor":"1:4"})", &c);
  ASSERT_EQ(sub.at("cursor"), "1:4");
  // A second turn streams while the replay of the first may still be in flight.
  HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
           R"({"text":"two","clientMessageId":"a2"})");
  ASSERT_TRUE(WaitIdle(id));
  Cursor tail;
  ASSERT_TRUE(ParseCursor(std::string(Snapshot(id).at("cursor").as_string()), &tail));
  ASSERT_TRUE(c.ReadUntil(ws, [&](const json::value&) {
    return !c.seqs.empty() && c.seqs.back() >= tail.seq.value();
  }));
  for (std::size_t i = 0; i < c.seqs.size(); ++i) ASSERT_EQ(c.seqs[i], mid + 1 + i);
  EXPECT_EQ(c.seqs.back(), tail.seq.value());
}

TEST_F(WsTest, ACursorOfARewoundEpochGetsAResetAndATailPage) {
  const std::string id = CreateAgent();
  Call("POST", "/v1/agents/" + id + "/messages", R"({"text":"one","clientMessageId":"b1"})");
  ASSERT_TRUE(WaitIdle(id));
  json::value rewound = Call("POST", "/v1/agents/" + id + "/rewind", R"({"cursor":"1:1"})");
  ASSERT_TRUE(rewound.is_object());
  EXPECT_EQ(std::string(rewound.at("cursor").as_string()).substr(0, 2), "2:");
  WsClient ws;
  ASSERT_EQ(ws.Connect(port_), 101);
  Collector c;
  Request(ws, R"({"type":"subscribe","id":"s","agent":")" + id + R"(","cursor":"1:5"})", &c);
  json::value reset;
  ASSERT_TRUE(c.ReadUntil(ws, [&](const json::value& m) {
    if (m.at("type") == "reset") reset = m;
    return !reset.is_null();
  }));
  EXPECT_EQ(reset.at("epoch"), 2);
  EXPECT_EQ(reset.at("page").at("reset"), false);
  EXPECT_TRUE(c.seqs.empty());  // nothing of the stale epoch was replayed
}

TEST_F(WsTest, ASlowClientIsDisconnectedWhenItsQueueExceedsTheBound) {
  const std::string id = CreateAgent();
  Metrics metrics;
  TimelineService timeline(log_);
  std::deque<std::function<void()>> posted;
  std::mutex mu;
  Poster post = [&](std::function<void()> fn) {
    std::lock_guard lock(mu);
    posted.push_back(std::move(fn));
  };
  Hub hub(log_, post);
  RecordingWsOutput out(/*written=*/false);  // never writes: its queue only grows
  WsLimits limits;
  limits.max_queue_bytes = 2048;
  auto app = std::make_shared<WsApp>(*manager_, log_, timeline, hub, metrics, out, post, limits);
  app->OnMessage(R"({"type":"subscribe","agent":")" + id + R"("})");
  EXPECT_FALSE(out.closed);
  HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
           R"({"text":"flood","clientMessageId":"f1"})");
  ASSERT_TRUE(WaitIdle(id));
  // Run what the hub posted (batches, then their delivery) on this thread, as a strand would.
  for (int round = 0; round < 100; ++round) {
    std::deque<std::function<void()>> batch;
    {
      std::lock_guard lock(mu);
      batch.swap(posted);
    }
    if (batch.empty()) break;
    for (auto& fn : batch) fn();
  }
  EXPECT_NE(out.close_reason.find("slow client"), std::string::npos) << out.queued_bytes();
  EXPECT_EQ(metrics.slow_clients_dropped(), 1u);
  app->Shutdown();
  hub.Stop();
}

}  // namespace
}  // namespace agentstream::server::testing
