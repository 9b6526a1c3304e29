// The HTTP surface over real sockets: agents, messages, timeline pages, the events endpoint as a
// Durable Stream (catch-up, long-poll, SSE), access control.
#include <set>

#include "server/server_test_fixture.h"
#include "streams/memory_stream_store.h"

namespace agentstream::server::testing {
namespace {

// Seqs dense from `first` with no duplicate.
void ExpectDense(const std::vector<std::uint64_t>& seqs, std::uint64_t first = 1) {
  for (std::size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], first + i) << "at " << i;
}

class HttpTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override { o.long_poll_timeout = 300ms; }
};

TEST_F(HttpTest, CreateSendPageAndReadEvents) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  json::value reply = Call("POST", "/v1/agents/" + id + "/messages",
                           R"({"text":"hello there","clientMessageId":"c1"})");
  EXPECT_EQ(reply.at("accepted"), true);
  EXPECT_EQ(reply.at("outcome"), "accepted");
  EXPECT_TRUE(reply.at("turnId").is_string());
  ASSERT_TRUE(WaitIdle(id));

  json::value page = Call("GET", "/v1/agents/" + id + "/timeline?direction=tail&limit=50");
  const json::array& items = page.at("items").as_array();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].at("kind"), "user_message");
  EXPECT_EQ(items[0].at("text"), "hello there");
  bool assistant = false;
  for (const auto& item : items) assistant |= item.at("kind") == "assistant_message";
  EXPECT_TRUE(assistant);
  EXPECT_EQ(page.at("hasNewer"), false);

  json::array events = AllEvents(id);
  std::vector<std::uint64_t> seqs;
  for (const auto& e : events) seqs.push_back(SeqOf(e));
  ExpectDense(seqs);
  EXPECT_EQ(Kind(events.front()), "session.created");
  json::value snapshot = Snapshot(id);
  EXPECT_EQ(snapshot.at("cursor"), json::value("1:" + std::to_string(seqs.back())));

  TestResponse res = HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=now");
  EXPECT_EQ(res.body, "[]");
  EXPECT_EQ(res.Header("stream-next-offset"), FormatStreamOffset({Epoch(1), Seq(seqs.back())}));
  EXPECT_EQ(res.Header("stream-up-to-date"), "true");

  // Paging before the newest items reaches the first one.
  json::value older = Call("GET", "/v1/agents/" + id + "/timeline?direction=before&cursor=" +
                                      std::string(page.at("endCursor").as_string()) + "&limit=1");
  EXPECT_EQ(older.at("items").as_array().size(), 1u);
  Call("GET", "/v1/agents/" + id + "/timeline?direction=sideways", "", 400);
  Call("GET", "/v1/agents/nope/events?offset=-1", "", 404);
  Call("GET", "/v1/agents/" + id + "/events?offset=9:9:9", "", 400);
}

TEST_F(HttpTest, ResendWithTheSameClientMessageIdIsRecordedOnce) {
  const std::string id = CreateAgent();
  const std::string body = R"({"text":"once","clientMessageId":"same"})";
  json::value first = Call("POST", "/v1/agents/" + id + "/messages", body);
  EXPECT_EQ(first.at("accepted"), true);
  json::value second = Call("POST", "/v1/agents/" + id + "/messages", body);
  EXPECT_EQ(second.at("outcome"), "duplicate");
  EXPECT_EQ(second.at("turnId"), first.at("turnId"));
  ASSERT_TRUE(WaitIdle(id));
  int user_messages = 0;
  for (const auto& e : AllEvents(id)) user_messages += Kind(e) == "user.message";
  EXPECT_EQ(user_messages, 1);
  Call("POST", "/v1/agents/" + id + "/messages", R"({"text":"no id"})", 400);
  Call("POST", "/v1/agents/" + id + "/messages", "{not json", 400);
}

TEST_F(HttpTest, EventsResumeFromOffsetsWithoutGapOrDuplicateWhileStreaming) {
  const std::string id = CreateAgent();
  std::atomic<bool> sent{false};
  std::thread sender([&] {
    for (int i = 0; i < 3; ++i) {
      HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
               R"({"text":"turn )" + std::to_string(i) + R"(","clientMessageId":"r)" +
                   std::to_string(i) + R"(","whileRunning":"queue"})");
    }
    sent = true;
  });
  std::vector<std::uint64_t> seqs;
  std::string offset = "-1";
  bool idle_seen = false;
  for (int i = 0; i < 5000 && !idle_seen; ++i) {
    TestResponse res = HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=" + offset);
    ASSERT_EQ(res.status, 200);
    for (auto& e : ArrayOf(res.body)) seqs.push_back(SeqOf(e));
    offset = res.Header("stream-next-offset");
    if (sent && res.Header("stream-up-to-date") == "true") {
      json::value s = Snapshot(id);
      Cursor at;
      ASSERT_TRUE(ParseCursor(offset, &at)) << offset;
      idle_seen = s.at("status") == "idle" && s.at("queue").as_array().empty() &&
                  s.at("cursor") == json::value(FormatCursor(at));
    }
  }
  sender.join();
  ASSERT_TRUE(idle_seen);
  ExpectDense(seqs);
  EXPECT_EQ(seqs.size(), AllEvents(id).size());
}

TEST_F(HttpTest, LongPollWakesOnCommitAndTimesOutWith204) {
  const std::string id = CreateAgent();
  const std::string tail = std::string(Snapshot(id).at("cursor").as_string());
  TestResponse idle =
      HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=now&live=long-poll");
  EXPECT_EQ(idle.status, 204);
  Cursor tail_cursor;
  ASSERT_TRUE(ParseCursor(tail, &tail_cursor));
  EXPECT_EQ(idle.Header("stream-next-offset"), FormatStreamOffset(tail_cursor));
  EXPECT_EQ(idle.Header("stream-up-to-date"), "true");
  EXPECT_FALSE(idle.Header("stream-cursor").empty());

  auto waiting = std::async(std::launch::async, [&] {
    return HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=" + tail + "&live=long-poll",
                    "", {}, 10s);
  });
  // The long-poll is parked; a prompt commits events that wake it (retry: the poll may time
  // out before the prompt commits, then a 204 is also correct and we poll again).
  HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
           R"({"text":"wake up","clientMessageId":"w1"})");
  TestResponse woke = waiting.get();
  if (woke.status == 204) {
    woke =
        HttpCall(port_, "GET", "/v1/agents/" + id + "/events?offset=" + tail + "&live=long-poll");
  }
  ASSERT_EQ(woke.status, 200);
  json::value events = ParseOrNull(woke.body);
  ASSERT_FALSE(events.as_array().empty());
  Cursor first;
  ASSERT_TRUE(ParseCursor(tail, &first));
  EXPECT_EQ(SeqOf(events.as_array()[0]), first.seq.value() + 1);
}

TEST_F(HttpTest, SseDeliversHistoryThenLiveEvents) {
  const std::string id = CreateAgent();
  SseClient sse;
  ASSERT_EQ(sse.Open(port_, "/v1/agents/" + id + "/events?offset=-1&live=sse"), 200);
  std::vector<std::uint64_t> seqs;
  bool up_to_date = false;
  while (!up_to_date) {
    auto event = sse.Next();
    ASSERT_TRUE(event.has_value());
    if (event->event == "data") {
      for (auto& e : ArrayOf(event->data)) seqs.push_back(SeqOf(e));
    } else {
      ASSERT_EQ(event->event, "control");
      up_to_date = ParseOrNull(event->data).at("upToDate") == true;
    }
  }
  HttpCall(port_, "POST", "/v1/agents/" + id + "/messages",
           R"({"text":"live please","clientMessageId":"s1"})");
  bool completed = false;
  std::string last_offset;
  while (!completed) {
    auto event = sse.Next();
    ASSERT_TRUE(event.has_value());
    if (event->event == "data") {
      for (auto& e : ArrayOf(event->data)) {
        seqs.push_back(SeqOf(e));
        completed |= Kind(e) == "turn.completed";
      }
    } else {
      last_offset = std::string(ParseOrNull(event->data).at("streamNextOffset").as_string());
    }
  }
  ExpectDense(seqs);
  auto control = sse.Next();
  ASSERT_TRUE(control.has_value());
  EXPECT_EQ(control->event, "control");
  EXPECT_EQ(ParseOrNull(control->data).at("streamNextOffset"),
            json::value(FormatStreamOffset({Epoch(1), Seq(seqs.back())})));
}

TEST_F(HttpTest, QueueInterruptAndSteerWhileRunning) {
  const std::string id = CreateAgent();
  const std::string messages = "/v1/agents/" + id + "/messages";
  json::value first = Call("POST", messages, R"({"text":"first","clientMessageId":"q1"})");
  ASSERT_EQ(first.at("accepted"), true);
  json::value queued =
      Call("POST", messages, R"({"text":"second","clientMessageId":"q2","whileRunning":"queue"})");
  // The first turn may already have finished on a fast machine; then the second starts at once.
  EXPECT_TRUE(queued.at("outcome") == "queued" || queued.at("outcome") == "accepted");
  ASSERT_TRUE(WaitIdle(id));

  json::value third = Call("POST", messages, R"({"text":"third","clientMessageId":"q3"})");
  ASSERT_EQ(third.at("accepted"), true);
  Call("POST", "/v1/agents/" + id + "/interrupt", "{}");
  json::value steer =
      Call("POST", messages, R"({"text":"fourth","clientMessageId":"q4","whileRunning":"steer"})");
  EXPECT_EQ(steer.at("accepted"), true);
  ASSERT_TRUE(WaitIdle(id));

  std::set<std::string> prompts;
  int terminals = 0, starts = 0;
  for (const auto& e : AllEvents(id)) {
    const std::string kind = Kind(e);
    if (kind == "user.message") prompts.insert(std::string(e.at("payload").at("text").as_string()));
    starts += kind == "turn.started";
    terminals += kind == "turn.completed" || kind == "turn.canceled" || kind == "turn.failed";
  }
  EXPECT_EQ(prompts, (std::set<std::string>{"first", "second", "third", "fourth"}));
  EXPECT_EQ(starts, 4);
  EXPECT_EQ(terminals, 4);
}

TEST_F(HttpTest, HealthMetricsAndUnknownRoutes) {
  EXPECT_EQ(Call("GET", "/healthz").at("status"), "ok");
  TestResponse metrics = HttpCall(port_, "GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("agentstream_connections_open"), std::string::npos);
  EXPECT_NE(metrics.body.find("agentstream_http_requests_total{route=\"/healthz\",status=\"200\"}"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("agentstream_log_events_total"), std::string::npos);
  json::value error = Call("GET", "/v2/nothing", "", 404);
  EXPECT_EQ(error.at("error").at("code"), "not_found");
  // A body over the limit is refused before it is parsed.
  // A body over the limit is refused before it is parsed; the server drains the rest before
  // closing, so the client reads the 413 even while it was still writing.
  TestResponse big = HttpCall(port_, "POST", "/v1/agents", std::string(2 << 20, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(Call("GET", "/v1/agents", "", 200).at("agents").as_array().size(), 0u);
}

class SlowSseTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override { o.max_queue_bytes = std::size_t{64} * 1024; }
};

// A reader that stops reading fills the kernel's socket buffers, then the server's send
// queue; past the queue's bound the server drops the stream instead of growing.
TEST_F(SlowSseTest, AStalledSseReaderIsDisconnectedAtTheQueueBound) {
  const SessionId session("ses_slow");
  ASSERT_TRUE(log_.CreateSession(session, SessionMeta{"scripted", "/", "slow"},
                                 {MakeNewEvent(SessionCreated{"scripted", "/", "slow", std::nullopt,
                                                              std::nullopt})})
                  .ok());
  SseClient sse;  // opened, then never read
  ASSERT_EQ(sse.Open(port_, "/v1/agents/ses_slow/events?offset=-1&live=sse"), 200);
  const std::string text(std::size_t{32} * 1024, 'x');
  // At most 64 MiB: far beyond the loopback socket buffers plus the 64 KiB bound.
  for (int i = 0; i < 256 && server_->metrics().slow_clients_dropped() == 0; ++i) {
    AppendRequest request{session, std::nullopt, std::nullopt, std::nullopt, {}};
    for (int k = 0; k < 8; ++k)
      request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, text}));
    ASSERT_TRUE(log_.Append(std::move(request)).ok());
  }
  EXPECT_TRUE(Eventually([&] { return server_->metrics().slow_clients_dropped() == 1; }));
  // The server is still serving; the client would resume from its last streamNextOffset.
  EXPECT_EQ(Call("GET", "/healthz").at("status"), "ok");
}

class TokenTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.host = "0.0.0.0";
    o.security.token = "t0ken";
  }
};

TEST_F(TokenTest, ATokenIsRequiredAndAnyOtherBindWithoutOneIsRefused) {
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents").status, 401);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Authorization", "Bearer wrong"}}).status,
            401);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Authorization", "Bearer t0ken"}}).status,
            200);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents?token=t0ken").status, 200);
  // Authentication schemes are case-insensitive (RFC 9110 section 11.1).
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Authorization", "bearer t0ken"}}).status,
            200);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Authorization", "BEARER t0ken"}}).status,
            200);
  WsClient ws;
  EXPECT_EQ(ws.Connect(port_, "/ws"), 401);
  WsClient ws_ok;
  EXPECT_EQ(ws_ok.Connect(port_, "/ws?token=t0ken"), 101);

  ServerOptions open;
  open.host = "0.0.0.0";
  open.port = 0;
  Server refused(*manager_, log_, open);
  EXPECT_EQ(refused.Start().code(), ErrorCode::kInvalidArgument);
}

// With a token, the page's static files are served without it (they hold no data: docs/web.md
// says why) and cannot be framed; everything that holds data needs the token.
TEST_F(TokenTest, ThePageLoadsWithoutTheTokenAndNothingElseDoes) {
  const TestResponse page = HttpCall(port_, "GET", "/");
  EXPECT_NE(page.status, 401);
  EXPECT_EQ(page.Header("x-frame-options"), "DENY");
  EXPECT_EQ(page.Header("referrer-policy"), "no-referrer");
  for (const char* target : {"/v1/agents", "/metrics", "/healthz", "/v1/agents/x/events"})
    EXPECT_EQ(HttpCall(port_, "GET", target).status, 401) << target;
  WsClient ws;
  EXPECT_EQ(ws.Connect(port_, "/ws"), 401);
}

TEST_F(HttpTest, CrossOriginRequestsAndWebSocketsAreRefused) {
  const std::string own = "http://127.0.0.1:" + std::to_string(port_);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Origin", "http://evil.example"}}).status,
            403);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {{"Origin", own}}).status, 200);
  WsClient evil;
  EXPECT_EQ(evil.Connect(port_, "/ws", {{"Origin", "http://evil.example"}}), 403);
  WsClient same;
  EXPECT_EQ(same.Connect(port_, "/ws", {{"Origin", own}}), 101);
}

// A 404 quoting a client's bytes (the session id of the path) is valid UTF-8 JSON.
TEST_F(HttpTest, ErrorBodiesAreValidUtf8WhateverThePathHolds) {
  const TestResponse res = HttpCall(port_, "GET", "/v1/agents/%ff/events");
  EXPECT_EQ(res.status, 404);
  EXPECT_EQ(res.body.find('\xff'), std::string::npos);
  const json::value body = ParseOrNull(res.body);  // Boost.JSON refuses ill-formed UTF-8
  ASSERT_TRUE(body.is_object()) << res.body;
  EXPECT_EQ(body.at("error").at("code"), "not_found");
  const TestResponse origin =
      HttpCall(port_, "GET", "/v1/agents", "", {{"Origin", "http://\"x\xfe"}});
  EXPECT_EQ(origin.status, 403);
  EXPECT_TRUE(ParseOrNull(origin.body).is_object()) << origin.body;
}

// An unknown transfer coding leaves the body's length unknown: whatever Content-Length says, the
// request is refused and the connection closed, so the bytes after it are never a request.
TEST_F(HttpTest, AnUnknownTransferCodingIsRefusedAndTheConnectionClosed) {
  RawConnection smuggle;
  ASSERT_TRUE(smuggle.Connect(port_));
  smuggle.Send(
      "POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: xchunked\r\n"
      "Content-Length: 2\r\n\r\n{}GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string answer = smuggle.ReadUntilClosed();
  EXPECT_TRUE(smuggle.closed());
  EXPECT_EQ(answer.rfind("HTTP/1.1 400 ", 0), 0u) << answer;
  EXPECT_EQ(answer.find("HTTP/1.1 ", 1), std::string::npos) << answer;  // one answer only
  RawConnection gzip;
  ASSERT_TRUE(gzip.Connect(port_));
  gzip.Send(
      "POST /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
      "0\r\n\r\n");
  EXPECT_EQ(gzip.ReadUntilClosed().rfind("HTTP/1.1 501 ", 0), 0u);
  EXPECT_TRUE(gzip.closed());
  EXPECT_EQ(Call("GET", "/v1/agents").at("agents").as_array().size(), 0u);
}

// A malformed request head is answered with 400 before the connection closes.
TEST_F(HttpTest, AMalformedRequestIsAnswered) {
  RawConnection bad;
  ASSERT_TRUE(bad.Connect(port_));
  bad.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n");
  EXPECT_EQ(bad.ReadUntilClosed().rfind("HTTP/1.1 400 ", 0), 0u);
  RawConnection no_host;
  ASSERT_TRUE(no_host.Connect(port_));
  no_host.Send("GET /healthz HTTP/1.1\r\n\r\n");
  EXPECT_EQ(no_host.ReadUntilClosed().rfind("HTTP/1.1 400 ", 0), 0u);
  RawConnection http10;  // HTTP/1.0 needs no Host (health checkers send none)
  ASSERT_TRUE(http10.Connect(port_));
  http10.Send("GET /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(http10.ReadUntilClosed().rfind("HTTP/1.0 200 ", 0), 0u);
}

class HostTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.security.allowed_hosts = {"lb.example"};
    o.streams = &streams_;
  }
  streams::MemoryStreamStore streams_{streams::StreamLimits{}, nullptr};
};

// DNS rebinding: a page on evil.example.com whose name was rebound to 127.0.0.1 sends same-origin
// requests, without an Origin header, naming its own host.
TEST_F(HostTest, ARequestNamingAnotherHostIsRefused) {
  const std::string id = CreateAgent();
  ASSERT_FALSE(id.empty());
  const std::string port = std::to_string(port_);
  const std::string evil = "evil.example.com:" + port;
  for (const std::string& target :
       {std::string("/v1/agents"), "/v1/agents/" + id + "/events?offset=-1",
        "/v1/agents/" + id + "/events?offset=-1&live=long-poll", std::string("/metrics"),
        std::string("/healthz"), std::string("/"), std::string("/v1/stream/x")}) {
    const TestResponse res = HttpCall(port_, "GET", target, "", {{"Host", evil}});
    EXPECT_EQ(res.status, 403) << target;
    EXPECT_NE(res.body.find("misdirected host"), std::string::npos) << target << ": " << res.body;
    EXPECT_EQ(res.body.find(id), std::string::npos) << target;
  }
  WsClient ws;
  EXPECT_EQ(ws.Connect(port_, "/ws", {{"Host", evil}}), 403);
  // This daemon's own names, any port.
  for (const std::string& host : {"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port,
                                  std::string("LB.example"), std::string("lb.example:8443")}) {
    const TestResponse res = HttpCall(port_, "GET", "/v1/agents", "", {{"Host", host}});
    EXPECT_EQ(res.status, 200) << host;
    EXPECT_NE(res.body.find(id), std::string::npos) << host;
  }
  WsClient own;
  EXPECT_EQ(own.Connect(port_, "/ws", {{"Host", "localhost:" + port}}), 101);
}

TEST_F(HostTest, LocationNamesTheConfiguredAddressNotTheClientsHost) {
  const TestResponse res = HttpCall(port_, "PUT", "/v1/stream/loc", "", {{"Host", "lb.example:1"}});
  EXPECT_EQ(res.status, 201);
  EXPECT_EQ(res.Header("location"), "http://127.0.0.1:" + std::to_string(port_) + "/v1/stream/loc");
  // A path whose decoded form would end the Location header early is refused.
  const TestResponse split = HttpCall(port_, "PUT", "/v1/stream/a%0d%0aSet-Cookie:%20x=1", "", {});
  EXPECT_EQ(split.status, 400);
  EXPECT_EQ(split.Header("set-cookie"), "");
}

class SlowClientsTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.max_connections = 64;
    o.max_waiting_per_address = 8;
    o.request_head_timeout = 60s;  // only the bound per address is at work here
  }
};

// Many connections from one address each sending half a request head (a "slowloris") hold at
// most max_waiting_per_address places: another client is still served.
TEST_F(SlowClientsTest, HalfSentHeadsFromOneAddressDoNotLockOthersOut) {
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 80; ++i) {
    auto connection = std::make_unique<RawConnection>();
    ASSERT_TRUE(connection->Connect(port_, "127.0.0.2"));
    connection->Send("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    slow.push_back(std::move(connection));
  }
  int open = 0;
  for (auto& connection : slow) {
    connection->ReadUntilClosed(100ms);
    open += connection->closed() ? 0 : 1;
  }
  EXPECT_EQ(open, 8);
  const TestResponse res = HttpCall(port_, "GET", "/v1/agents");  // from 127.0.0.1
  EXPECT_EQ(res.status, 200);
  // Keep-alive connections of an address at its bound wait for no further request.
  RawConnection another;
  ASSERT_TRUE(another.Connect(port_, "127.0.0.2"));
  another.ReadUntilClosed(2000ms);
  EXPECT_TRUE(another.closed());
}

class HeadDeadlineTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.request_head_timeout = 300ms;
    o.idle_timeout = 60s;
  }
};

// The request head must arrive whole within request_head_timeout; an idle keep-alive connection
// waits idle_timeout for its next request, then has the same time for that request's head.
TEST_F(HeadDeadlineTest, AHalfSentHeadIsCutOffWhileAnIdleKeepAliveWaits) {
  RawConnection half;
  ASSERT_TRUE(half.Connect(port_));
  half.Send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(half.ReadUntilClosed(10s), "");
  EXPECT_TRUE(half.closed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

  RawConnection silent;  // a new connection sending nothing has the head's time too
  ASSERT_TRUE(silent.Connect(port_));
  silent.ReadUntilClosed(10s);
  EXPECT_TRUE(silent.closed());

  RawConnection idle;
  ASSERT_TRUE(idle.Connect(port_));
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  idle.Send(request);
  ASSERT_TRUE(idle.ReadUntil("{\"status\":\"ok\"}"));
  std::this_thread::sleep_for(900ms);  // three times the head's deadline, idle
  idle.Send(request);
  EXPECT_TRUE(idle.ReadUntil("{\"status\":\"ok\"}", 5s));  // the second answer
  EXPECT_FALSE(idle.closed());
}

}  // namespace
}  // namespace agentstream::server::testing
