// The HTTP transport (http_server.cc) over real sockets: the live reads of the events endpoint
// (long-poll, server-sent events) and the bound on an SSE reader's send queue, request framing
// and malformed heads, the request head's deadline, and the bound on connections waiting for a
// request from one address.
#include "server/testing/http_fixtures.h"

namespace agentstream::server::testing {
namespace {

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

// A keep-alive connection may carry a long-poll and then a server-sent events read: the stream
// must flow (it once sent its head and then nothing, for ever).
TEST_F(HttpTest, AnSseReadAfterALongPollOnTheSameConnectionStreams) {
  const std::string id = CreateAgent();
  RawConnection connection;
  ASSERT_TRUE(connection.Connect(port_));
  connection.Send("GET /v1/agents/" + id +
                  "/events?offset=now&live=long-poll HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  ASSERT_TRUE(connection.ReadUntil("HTTP/1.1 204 ")) << connection.received();
  connection.Send("GET /v1/agents/" + id +
                  "/events?offset=-1&live=sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  ASSERT_TRUE(connection.ReadUntil("text/event-stream")) << connection.received();
  EXPECT_TRUE(connection.ReadUntil("event: data", 5s)) << connection.received();
  EXPECT_TRUE(connection.ReadUntil("event: control", 5s)) << connection.received();
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
      // Durable Streams: "upToDate" is there, true, once the reader reached the tail.
      const auto* flag = ParseOrNull(event->data).as_object().if_contains("upToDate");
      up_to_date = flag != nullptr && *flag == true;
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

// A stream opened at the session's tail says "up to date" once: the frame after that first
// control is the next event's data, not a second control.
TEST_F(HttpTest, SseAtTheTailSendsOneUpToDateControl) {
  const SessionId session("ses_tail");
  ASSERT_TRUE(log_.CreateSession(session, SessionMeta{"scripted", "/", "tail"},
                                 {MakeNewEvent(SessionCreated{"scripted", "/", "tail", std::nullopt,
                                                              std::nullopt})})
                  .ok());
  SseClient sse;
  ASSERT_EQ(sse.Open(port_, "/v1/agents/ses_tail/events?offset=now&live=sse"), 200);
  auto first = sse.Next();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->event, "control");
  EXPECT_EQ(ParseOrNull(first->data).at("streamNextOffset"),
            json::value(FormatStreamOffset({Epoch(1), Seq(1)})));
  AppendRequest request{session, std::nullopt, std::nullopt, std::nullopt, {}};
  request.events.push_back(MakeNewEvent(Notice{NoticeLevel::kInfo, "next"}));
  ASSERT_TRUE(log_.Append(std::move(request)).ok());
  auto second = sse.Next();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->event, "data") << second->data;
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

// A /v1 request that waits (here the catalog, held until released) runs on a request thread,
// not on the I/O thread: with one I/O thread, other connections are still answered meanwhile.
class SlowApiRequestTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    o.threads = 1;
    o.request_threads = 2;
    o.catalog = [this] {
      entered_.set_value();
      released_.wait();
      return json::value(json::array());
    };
  }
  void TearDown() override {
    Release();  // a failed assertion must not leave the request thread waiting
    ServerFixture::TearDown();
  }
  void Release() {
    if (!release_set_.exchange(true)) release_.set_value();
  }

  std::promise<void> entered_;
  std::promise<void> release_;
  std::shared_future<void> released_ = release_.get_future().share();
  std::atomic<bool> release_set_{false};
};

TEST_F(SlowApiRequestTest, AWaitingApiRequestHoldsUpNoOtherConnection) {
  auto slow = std::async(std::launch::async, [&] { return HttpCall(port_, "GET", "/v1/catalog"); });
  ASSERT_EQ(entered_.get_future().wait_for(10s), std::future_status::ready);
  // Meanwhile the one I/O thread reads and answers other connections, whose requests the second
  // request thread runs.
  EXPECT_EQ(HttpCall(port_, "GET", "/healthz", "", {}, 5s).status, 200);
  EXPECT_EQ(HttpCall(port_, "GET", "/v1/agents", "", {}, 5s).status, 200);
  Release();
  const TestResponse answered = slow.get();
  EXPECT_EQ(answered.status, 200);
  EXPECT_EQ(answered.body, "[]");
}

}  // namespace
}  // namespace agentstream::server::testing
