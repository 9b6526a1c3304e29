// Requests through a trusted reverse proxy (forwarded.h) as the server applies them over real
// sockets: the proxy is a connection from 127.0.0.2 (`--trusted-proxy 127.0.0.2`), any other
// loopback address a client that is not one. The parsing rules themselves are tested in
// forwarded_test.cc; a real Caddy in front of the daemon in tests/tls/caddy_e2e_test.sh.
#include <string>

#include "server/testing/http_fixtures.h"

namespace agentstream::server::testing {
namespace {

constexpr const char* kProxy = "127.0.0.2";

class ProxyTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& o) override {
    auto proxies = TrustedProxies::Parse({kProxy});
    ASSERT_TRUE(proxies.ok());
    o.trusted_proxies = *proxies;
    o.security.allowed_hosts = {"agents.example.com"};
    o.streams = &streams_;
  }

  // One request from `local` (its Host 127.0.0.1 plus `headers`, CRLF-terminated lines); the
  // whole answer.
  std::string Exchange(const std::string& local, const std::string& method,
                       const std::string& target, const std::string& headers) {
    RawConnection raw;
    EXPECT_TRUE(raw.Connect(port_, local));
    raw.Send(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port_) +
             "\r\nConnection: close\r\nContent-Length: 0\r\n" + headers + "\r\n");
    return raw.ReadUntilClosed();
  }
  static int Status(const std::string& answer) {
    return answer.size() > 12 ? std::stoi(answer.substr(9, 3)) : 0;
  }

  streams::MemoryStreamStore streams_{streams::StreamLimits{}, nullptr};
};

constexpr const char* kForwarded =
    "X-Forwarded-Proto: https\r\nX-Forwarded-Host: agents.example.com\r\n";

// Without a token a loopback client is the owner; through a proxy, only a client the proxy says is
// on loopback too.
TEST_F(ProxyTest, AClientForwardedFromElsewhereIsNotTheOwner) {
  std::string answer = Exchange(kProxy, "GET", "/v1/agents",
                                std::string(kForwarded) + "X-Forwarded-For: 203.0.113.5\r\n");
  EXPECT_EQ(Status(answer), 401) << answer;
  EXPECT_NE(answer.find("no --token"), std::string::npos) << answer;
  // A forged loopback address on the left does not help: the proxy appended the real client.
  answer = Exchange(kProxy, "GET", "/v1/agents",
                    std::string(kForwarded) + "X-Forwarded-For: 127.0.0.1, 203.0.113.5\r\n");
  EXPECT_EQ(Status(answer), 401) << answer;
  answer = Exchange(kProxy, "GET", "/ws",
                    std::string(kForwarded) +
                        "X-Forwarded-For: 203.0.113.5\r\nUpgrade: websocket\r\nConnection: "
                        "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                        "Sec-WebSocket-Version: 13\r\n");
  EXPECT_EQ(Status(answer), 401) << answer;
  // A browser on the proxy's own machine, and the proxy's machine connecting directly.
  answer = Exchange(kProxy, "GET", "/v1/agents",
                    std::string(kForwarded) + "X-Forwarded-For: 127.0.0.1\r\n");
  EXPECT_EQ(Status(answer), 200) << answer;
  EXPECT_EQ(Status(Exchange(kProxy, "GET", "/v1/agents", "")), 200);
  // The page's assets are public either way.
  EXPECT_NE(Status(Exchange(kProxy, "GET", "/",
                            std::string(kForwarded) + "X-Forwarded-For: 203.0.113.5\r\n")),
            401);
}

TEST_F(ProxyTest, HeadersFromAnUntrustedPeerChangeNothing) {
  for (const std::string& forged :
       {std::string("X-Forwarded-For: 203.0.113.5\r\n"),
        std::string("X-Forwarded-For: not-an-address\r\nX-Forwarded-Proto: gopher\r\n"),
        std::string("X-Forwarded-Host: evil.example\r\nX-Forwarded-Host: b.example\r\n")}) {
    const std::string answer = Exchange("127.0.0.1", "GET", "/v1/agents", forged);
    EXPECT_EQ(Status(answer), 200) << forged << answer;
  }
  // The Origin of a proxied page is not this connection's own.
  const std::string answer =
      Exchange("127.0.0.1", "GET", "/v1/agents",
               std::string(kForwarded) + "Origin: https://agents.example.com\r\n");
  EXPECT_EQ(Status(answer), 403) << answer;
}

TEST_F(ProxyTest, MalformedForwardedValuesAreRefused) {
  for (const std::string& bad :
       {std::string("X-Forwarded-For: 203.0.113.5, nonsense\r\n"),
        std::string("X-Forwarded-For: 203.0.113.5:4711\r\n"),
        std::string("X-Forwarded-Proto: gopher\r\n"),
        std::string("X-Forwarded-Proto: https\r\nX-Forwarded-Proto: http\r\n"),
        std::string("X-Forwarded-Host: agents.example.com, evil.example\r\n"),
        std::string("X-Forwarded-Host: agents.example.com\r\nX-Forwarded-Host: x.example\r\n"),
        std::string("X-Forwarded-Host: bad/host\r\n")}) {
    const std::string answer = Exchange(kProxy, "GET", "/v1/agents", bad);
    EXPECT_EQ(Status(answer), 400) << bad << answer;
    EXPECT_NE(answer.find("X-Forwarded-"), std::string::npos) << answer;
  }
}

TEST_F(ProxyTest, TheForwardedHostIsCheckedAndNamesThePage) {
  // The allow-list reads the forwarded Host, not the proxy's Host header (127.0.0.1 here).
  std::string answer = Exchange(kProxy, "GET", "/v1/agents",
                                "X-Forwarded-Host: evil.example\r\nX-Forwarded-For: 127.0.0.1\r\n");
  EXPECT_EQ(Status(answer), 403) << answer;
  EXPECT_NE(answer.find("misdirected host evil.example"), std::string::npos) << answer;
  // The page of https://agents.example.com calls the API with its own Origin.
  const std::string client = "X-Forwarded-For: 127.0.0.1\r\n";
  answer = Exchange(kProxy, "GET", "/v1/agents",
                    kForwarded + client + "Origin: https://agents.example.com\r\n");
  EXPECT_EQ(Status(answer), 200) << answer;
  for (const char* other :
       {"http://agents.example.com", "https://agents.example.com:8443", "https://evil.example"}) {
    answer =
        Exchange(kProxy, "GET", "/v1/agents", kForwarded + client + "Origin: " + other + "\r\n");
    EXPECT_EQ(Status(answer), 403) << other << answer;
  }
  // A created stream's Location names the origin the client used.
  answer = Exchange(kProxy, "PUT", "/v1/stream/proxied", kForwarded + client);
  EXPECT_EQ(Status(answer), 201) << answer;
  EXPECT_NE(answer.find("location: https://agents.example.com/v1/stream/proxied\r\n"),
            std::string::npos)
      << answer;
  answer = Exchange("127.0.0.1", "PUT", "/v1/stream/direct", kForwarded);
  EXPECT_EQ(Status(answer), 201) << answer;
  EXPECT_NE(
      answer.find("location: http://127.0.0.1:" + std::to_string(port_) + "/v1/stream/direct\r\n"),
      std::string::npos)
      << answer;
}

class ProxyTokenTest : public ProxyTest {
 protected:
  void Configure(ServerOptions& o) override {
    ProxyTest::Configure(o);
    o.security.token = "t0ken";
  }
};

TEST_F(ProxyTokenTest, AForwardedClientWithTheTokenIsTheOwner) {
  const std::string from = std::string(kForwarded) + "X-Forwarded-For: 203.0.113.5\r\n";
  EXPECT_EQ(Status(Exchange(kProxy, "GET", "/v1/agents", from)), 401);
  const std::string answer =
      Exchange(kProxy, "GET", "/v1/agents", from + "Authorization: Bearer t0ken\r\n");
  EXPECT_EQ(Status(answer), 200) << answer;
}

}  // namespace
}  // namespace agentstream::server::testing
