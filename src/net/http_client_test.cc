// The HTTP client against a real TLS server on loopback (tls_test_server.h) and plain loopback
// sockets.
#include "net/http_client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "net/tls_test_server.h"

namespace agentstream::net {
namespace {

using test_support::Certificate;
using test_support::TlsServer;

constexpr const char* kReply =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
    "Connection: close\r\n\r\n{\"done\":true}";

HttpRequest Post(const std::string& url, const std::string& ca_file) {
  HttpRequest request;
  request.url = url;
  request.body = R"({"wake":1})";
  request.headers.emplace_back("webhook-signature", "t=1,kid=k,ed25519=s");
  request.timeout = std::chrono::milliseconds(5000);
  request.ca_file = ca_file;
  return request;
}

TEST(HttpsClient, PostsToAServerWhoseCertificateIsTrustedAndNamesTheHost) {
  Certificate certificate;
  TlsServer server(certificate, kReply);
  const std::string url = "https://localhost:" + std::to_string(server.port()) + "/hook";
  Result<HttpReply> reply = SendHttpRequest(Post(url, certificate.pem_path));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->body, R"({"done":true})");
  const std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].rfind("POST /hook HTTP/1.1\r\n", 0), 0U) << requests[0];
  EXPECT_NE(requests[0].find("webhook-signature: t=1,kid=k,ed25519=s\r\n"), std::string::npos);
  EXPECT_NE(requests[0].find("\r\n\r\n{\"wake\":1}"), std::string::npos);
}

TEST(HttpsClient, RefusesACertificateNotTrusted) {
  Certificate certificate;
  TlsServer server(certificate, kReply);
  const std::string url = "https://localhost:" + std::to_string(server.port()) + "/hook";
  Result<HttpReply> reply = SendHttpRequest(Post(url, /*ca_file=*/""));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(reply.status().message().find("TLS handshake"), std::string::npos)
      << reply.status().ToString();
  EXPECT_TRUE(server.requests().empty());  // nothing was sent
}

TEST(HttpsClient, RefusesATrustedCertificateForAnotherHost) {
  Certificate certificate;  // names localhost only: 127.0.0.1 is another host
  TlsServer server(certificate, kReply);
  const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/hook";
  Result<HttpReply> reply = SendHttpRequest(Post(url, certificate.pem_path));
  ASSERT_FALSE(reply.ok());
  EXPECT_NE(reply.status().message().find("TLS handshake"), std::string::npos)
      << reply.status().ToString();
  EXPECT_TRUE(server.requests().empty());
}

TEST(HttpsClient, PublicAddressesOnlyRefusesAHostThatResolvesToLoopback) {
  Certificate certificate;
  TlsServer server(certificate, kReply);
  HttpRequest request =
      Post("https://localhost:" + std::to_string(server.port()) + "/hook", certificate.pem_path);
  request.public_addresses_only = true;
  Result<HttpReply> reply = SendHttpRequest(request);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("no public address"), std::string::npos);
  EXPECT_TRUE(server.requests().empty());
  EXPECT_EQ(server.failed_handshakes(), 0);  // not even connected
}

TEST(HttpsClient, PublicAddressesOnlyRefusesEveryNonPublicRange) {
  for (const char* host :
       {"10.1.2.3", "172.20.0.1", "192.168.1.1", "127.0.0.2", "0.0.0.0", "169.254.1.1",
        "100.64.0.1", "224.0.0.1", "[::1]", "[fd00::1]", "[fe80::1]", "[::ffff:192.168.1.1]"}) {
    HttpRequest request = Post(std::string("https://") + host + ":9/hook", "");
    request.public_addresses_only = true;
    Result<HttpReply> reply = SendHttpRequest(request);
    ASSERT_FALSE(reply.ok()) << host;
    EXPECT_EQ(reply.status().code(), ErrorCode::kInvalidArgument) << host;
  }
  // A public address passes the check (and then fails to connect, or times out, here).
  HttpRequest request = Post("https://192.0.2.1:9/hook", "");
  request.public_addresses_only = true;
  request.timeout = std::chrono::milliseconds(300);
  Result<HttpReply> reply = SendHttpRequest(request);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable) << reply.status().ToString();
}

TEST(HttpsClient, AnUnreadableTrustFileIsAClearError) {
  Result<HttpReply> reply =
      SendHttpRequest(Post("https://localhost:1/hook", "/nonexistent/ca.pem"));
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(reply.status().message().find("/nonexistent/ca.pem"), std::string::npos);
}

TEST(StreamHttpGet, OverTlsGivesTheHeadThenTheBodyAsItComes) {
  Certificate certificate;
  TlsServer server(certificate,
                   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nX-Offset: 7\r\n"
                   "Connection: close\r\n\r\nevent: data\ndata: []\n\n");
  HttpRequest request;
  request.url = "https://localhost:" + std::to_string(server.port()) + "/events";
  request.ca_file = certificate.pem_path;
  request.headers.emplace_back("Accept", "text/event-stream");
  std::string content_type;
  std::string body;
  const std::atomic<bool> stop{false};
  Result<HttpReply> end = StreamHttpGet(request,
                                        {.on_head =
                                             [&](const HttpReply& head) {
                                               content_type = head.Header("content-type");
                                               return body.empty();  // the head comes first
                                             },
                                         .on_body =
                                             [&](std::string_view piece) {
                                               body.append(piece);
                                               return true;
                                             }},
                                        stop);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(end->status, 200);
  EXPECT_EQ(end->Header("x-offset"), "7");
  EXPECT_EQ(content_type, "text/event-stream");
  EXPECT_EQ(body, "event: data\ndata: []\n\n");
  const std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 1U);
  EXPECT_EQ(requests[0].rfind("GET /events HTTP/1.1\r\n", 0), 0U) << requests[0];
  EXPECT_NE(requests[0].find("Accept: text/event-stream\r\n"), std::string::npos);
}

// A plain server on 127.0.0.1 that answers one request with `head` and then stays silent.
class SilentAfterHead {
 public:
  explicit SilentAfterHead(std::string head) : head_(std::move(head)) {
    listener_ = test_support::ListenOnLoopback(port_);
    thread_ = std::thread([this] {
      connection_ = accept(listener_, nullptr, nullptr);
      if (connection_ < 0) return;
      char buf[4096];
      (void)read(connection_, buf, sizeof buf);
      (void)write(connection_, head_.data(), head_.size());
    });
  }
  ~SilentAfterHead() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    if (connection_ >= 0) close(connection_);
    close(listener_);
  }
  int port() const { return port_; }

 private:
  std::string head_;
  int listener_ = -1;
  int connection_ = -1;
  int port_ = 0;
  std::thread thread_;
};

TEST(StreamHttpGet, AStreamSilentLongerThanItsIdleTimeoutIsBroken) {
  SilentAfterHead server("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n");
  HttpRequest request;
  request.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/events";
  request.peer = "the test server";
  int heads = 0;
  const std::atomic<bool> stop{false};
  Result<HttpReply> end = StreamHttpGet(request,
                                        {.on_head = [&](const HttpReply&) { return ++heads > 0; },
                                         .on_body = [](std::string_view) { return true; }},
                                        stop, std::chrono::milliseconds(200));
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(end.status().message(), "the test server sent nothing for 0.2 s");
  EXPECT_EQ(heads, 1);
}

TEST(SendHttpRequest, AnUnreachablePeerIsNamedWithTheHint) {
  const test_support::RefusingPort closed;
  const std::string base = "http://127.0.0.1:" + std::to_string(closed.port());
  HttpRequest request;
  request.url = base + "/";
  request.peer = "the daemon at " + base;
  request.unreachable_hint = "(is it running?)";
  Result<HttpReply> reply = SendHttpRequest(request);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), ErrorCode::kUnavailable);
  EXPECT_EQ(reply.status().message().rfind("cannot reach the daemon at " + base + ": ", 0), 0U)
      << reply.status().message();
  EXPECT_TRUE(reply.status().message().ends_with(" (is it running?)")) << reply.status().message();
}

}  // namespace
}  // namespace agentstream::net
