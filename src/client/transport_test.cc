#include "client/transport.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "client/testing/canned_server.h"
#include "net/tls_test_server.h"

namespace agentstream::client {
namespace {

TEST(HttpClientTest, RefusedConnectionSaysTheDaemonIsNotRunning) {
  const net::test_support::RefusingPort closed;
  const std::string url = "http://127.0.0.1:" + std::to_string(closed.port());
  auto http = Transport::Create({.url = url});
  ASSERT_TRUE(http.ok());
  auto reply = (*http)->Request("GET", "/v1/agents");
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("cannot reach the daemon at " + url), std::string::npos)
      << reply.status().message();
  EXPECT_NE(reply.status().message().find("is `agentstream serve` running?"), std::string::npos);
}

TEST(HttpClientTest, SendsTheTokenAndJsonAndReadsTheReply) {
  CannedServer server({JsonReply(404, R"({"error":{"code":"not_found","message":"no"}})")});
  auto http = Transport::Create({.url = server.url() + "/prefix", .token = "s3cret"});
  ASSERT_TRUE(http.ok());
  auto reply = (*http)->Request("POST", "/v1/agents", R"({"provider":"scripted"})");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 404);
  EXPECT_EQ(reply->body, R"({"error":{"code":"not_found","message":"no"}})");
  EXPECT_EQ(reply->Header("content-type"), "application/json");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_TRUE(requests[0].starts_with("POST /prefix/v1/agents HTTP/1.1\r\n")) << requests[0];
  EXPECT_NE(requests[0].find("Authorization: Bearer s3cret\r\n"), std::string::npos);
  EXPECT_NE(requests[0].find("Content-Type: application/json\r\n"), std::string::npos);
}

TEST(HttpClientTest, SilentDaemonTimesOut) {
  std::uint16_t port = 0;
  const int listener = ListenOnLoopback(4, &port);  // accepts via the backlog, never answers
  auto http = Transport::Create({.url = "http://127.0.0.1:" + std::to_string(port),
                                 .request_timeout = std::chrono::milliseconds(200)});
  ASSERT_TRUE(http.ok());
  auto reply = (*http)->Request("GET", "/v1/agents");
  ::close(listener);
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("did not answer"), std::string::npos)
      << reply.status().message();
}

TEST(HttpClientTest, BodyOverTheLimitIsRefused) {
  CannedServer server({JsonReply(200, std::string(100, ' ') + "{}")});
  auto http = Transport::Create({.url = server.url(), .max_body_bytes = 10});
  ASSERT_TRUE(http.ok());
  EXPECT_EQ((*http)->Request("GET", "/v1/agents").status().code(), ErrorCode::kTooLarge);
}

TEST(HttpClientTest, StreamDeliversBodyBytesAsTheyCome) {
  CannedServer server({SseReply("event: data\ndata: []\n\n", true)});
  auto http = Transport::Create({.url = server.url()});
  ASSERT_TRUE(http.ok());
  int status = 0;
  std::string body;
  const Status result = (*http)->Stream("/v1/x", "text/event-stream",
                                        {.on_head = [&](const HttpResponse& head) -> Result<bool> {
                                           status = head.status;
                                           return true;
                                         },
                                         .on_data = [&](std::string_view bytes) -> Result<bool> {
                                           body.append(bytes);
                                           return true;
                                         }});
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(body, "event: data\ndata: []\n\n");
}

// Trusts `pem` as the system's store (OpenSSL's SSL_CERT_FILE) while it lives.
class TrustedCertificates {
 public:
  explicit TrustedCertificates(const std::string& pem) {
    ::setenv("SSL_CERT_FILE", pem.c_str(), 1);
  }
  ~TrustedCertificates() { ::unsetenv("SSL_CERT_FILE"); }
};

TEST(HttpClientTest, SpeaksHttpsToAProxyTheSystemTrusts) {
  net::test_support::Certificate certificate;
  net::test_support::TlsServer server(certificate, JsonReply(200, R"({"agents":[]})"));
  TrustedCertificates trusted(certificate.pem_path);
  auto http = Transport::Create(
      {.url = "https://localhost:" + std::to_string(server.port()) + "/prefix", .token = "t0k"});
  ASSERT_TRUE(http.ok());
  auto reply = (*http)->Request("GET", "/v1/agents");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, R"({"agents":[]})");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_TRUE(requests[0].starts_with("GET /prefix/v1/agents HTTP/1.1\r\n")) << requests[0];
  EXPECT_NE(requests[0].find("Authorization: Bearer t0k\r\n"), std::string::npos);
}

TEST(HttpClientTest, StreamsOverHttps) {
  net::test_support::Certificate certificate;
  net::test_support::TlsServer server(certificate, SseReply("event: data\ndata: []\n\n", true));
  TrustedCertificates trusted(certificate.pem_path);
  auto http = Transport::Create({.url = "https://localhost:" + std::to_string(server.port())});
  ASSERT_TRUE(http.ok());
  std::string content_type;
  std::string body;
  const Status result = (*http)->Stream("/v1/x", "text/event-stream",
                                        {.on_head = [&](const HttpResponse& head) -> Result<bool> {
                                           content_type = head.Header("Content-Type");
                                           return true;
                                         },
                                         .on_data = [&](std::string_view bytes) -> Result<bool> {
                                           body.append(bytes);
                                           return true;
                                         }});
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(content_type, "text/event-stream");
  EXPECT_EQ(body, "event: data\ndata: []\n\n");
}

TEST(HttpClientTest, RefusesAProxyWhoseCertificateIsNotTrusted) {
  net::test_support::Certificate certificate;
  net::test_support::TlsServer server(certificate, JsonReply(200, "{}"));
  auto http = Transport::Create({.url = "https://localhost:" + std::to_string(server.port())});
  ASSERT_TRUE(http.ok());
  auto reply = (*http)->Request("GET", "/v1/agents");
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("TLS handshake"), std::string::npos)
      << reply.status().message();
  EXPECT_TRUE(server.requests().empty());
}

TEST(HttpClientTest, AHandlersErrorEndsTheStreamWithIt) {
  CannedServer server({SseReply("event: data\ndata: []\n\n", true)});
  auto http = Transport::Create({.url = server.url()});
  ASSERT_TRUE(http.ok());
  const Status result =
      (*http)->Stream("/v1/x", "text/event-stream",
                      {.on_head = [](const HttpResponse&) -> Result<bool> { return true; },
                       .on_data = [](std::string_view) -> Result<bool> {
                         return Error(ErrorCode::kCorruption, "a bad frame");
                       }});
  EXPECT_EQ(result.code(), ErrorCode::kCorruption);
  EXPECT_EQ(result.message(), "a bad frame");
}

}  // namespace
}  // namespace agentstream::client
