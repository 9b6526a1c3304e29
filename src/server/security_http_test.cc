// Access control (security.h) as the server applies it over real sockets: the bearer token and
// the bind it is required for, the Origin and Host checks. The rules themselves, without a
// server, are tested in security_test.cc.
#include "server/testing/http_fixtures.h"

namespace agentstream::server::testing {
namespace {

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

// Which of two Origin headers a check (or a proxy in front) would read is unknown: both refused.
TEST_F(HttpTest, ARequestWithTwoOriginHeadersIsRefused) {
  const std::string own = "http://127.0.0.1:" + std::to_string(port_);
  for (const std::string& second : {std::string("http://evil.example"), own}) {
    RawConnection raw;
    ASSERT_TRUE(raw.Connect(port_));
    raw.Send("GET /v1/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + own +
             "\r\nOrigin: " + second + "\r\n\r\n");
    const std::string answer = raw.ReadUntilClosed();
    EXPECT_EQ(answer.rfind("HTTP/1.1 403 ", 0), 0u) << answer;
    EXPECT_NE(answer.find("more than one Origin header"), std::string::npos) << answer;
  }
  RawConnection ws;
  ASSERT_TRUE(ws.Connect(port_));
  ws.Send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: " + own +
          "\r\nOrigin: http://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  EXPECT_EQ(ws.ReadUntilClosed().rfind("HTTP/1.1 403 ", 0), 0u);
}

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

}  // namespace
}  // namespace agentstream::server::testing
