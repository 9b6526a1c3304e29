// The server over TLS (ServerOptions::tls_cert_file, tls_key_file): requests answered over
// https with Strict-Transport-Security, a client that never finishes its handshake closed after
// tls_handshake_timeout, a certificate replaced on disk presented to new connections after
// ReloadTls, and the options refused when incomplete or unreadable.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/pem.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "net/http_client.h"
#include "net/tls_test_server.h"
#include "server/testing/server_test_fixture.h"
#include "testing/temp_dir.h"

namespace agentstream::server::testing {
namespace {

using namespace std::chrono_literals;
using net::test_support::Certificate;

// Writes the certificate and its key as the server reads them.
void WritePem(const Certificate& certificate, const std::string& cert_path,
              const std::string& key_path) {
  std::FILE* cert = std::fopen(cert_path.c_str(), "w");
  ASSERT_NE(cert, nullptr);
  PEM_write_X509(cert, certificate.cert.get());
  std::fclose(cert);
  std::FILE* key = std::fopen(key_path.c_str(), "w");
  ASSERT_NE(key, nullptr);
  PEM_write_PrivateKey(key, certificate.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(key);
}

class HttpsTest : public ServerFixture {
 protected:
  void Configure(ServerOptions& options) override {
    WritePem(first_, cert_path_, key_path_);
    options.tls_cert_file = cert_path_;
    options.tls_key_file = key_path_;
    options.tls_handshake_timeout = 300ms;
    options.tls_reload_interval = 1h;  // reloads in these tests are ReloadTls calls
  }

  // GET `path` over https, trusting `ca` alone.
  Result<net::HttpReply> Get(const std::string& path, const Certificate& ca) {
    net::HttpRequest request;
    request.method = "GET";
    request.url = "https://localhost:" + std::to_string(port_) + path;
    request.ca_file = ca.pem_path;
    return net::SendHttpRequest(request);
  }

  test_support::TempDir dir_{"tls-http"};
  const std::string cert_path_ = dir_.path() + "/cert.pem";
  const std::string key_path_ = dir_.path() + "/key.pem";
  Certificate first_;
  Certificate second_;
};

TEST_F(HttpsTest, AnswersOverTlsWithStrictTransportSecurity) {
  auto reply = Get("/healthz", first_);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 200);
  EXPECT_EQ(reply->Header("Strict-Transport-Security"), "max-age=31536000");
  auto agents = Get("/v1/agents", first_);
  ASSERT_TRUE(agents.ok()) << agents.status().ToString();
  EXPECT_EQ(agents->status, 200);
  EXPECT_EQ(agents->Header("Strict-Transport-Security"), "max-age=31536000");
}

TEST_F(HttpsTest, ClosesAConnectionThatNeverHandshakes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port_);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  timeval guard{5, 0};  // far above the 300 ms limit: a hang fails the test instead
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard));
  const auto start = std::chrono::steady_clock::now();
  char byte = 0;
  const ssize_t n = ::recv(fd, &byte, 1, 0);
  const auto waited = std::chrono::steady_clock::now() - start;
  ::close(fd);
  EXPECT_LE(n, 0);
  EXPECT_LT(waited, 4s) << "the server kept a connection that never handshook";
}

TEST_F(HttpsTest, ReloadServesTheNewCertificateToNewConnections) {
  ASSERT_TRUE(Get("/healthz", first_).ok());
  WritePem(second_, cert_path_, key_path_);
  server_->ReloadTls();
  auto reply = Get("/healthz", second_);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 200);
  EXPECT_FALSE(Get("/healthz", first_).ok()) << "the old certificate is still served";
}

TEST_F(HttpsTest, AFailedReloadKeepsTheCurrentCertificate) {
  std::FILE* broken = std::fopen(cert_path_.c_str(), "w");
  ASSERT_NE(broken, nullptr);
  std::fputs("not a certificate\n", broken);
  std::fclose(broken);
  server_->ReloadTls();
  auto reply = Get("/healthz", first_);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 200);
}

TEST(TlsOptionsTest, RefusesIncompleteOrUnreadableFiles) {
  test_support::TempDir dir("tls-options");
  Certificate certificate;
  const std::string cert = dir.path() + "/cert.pem";
  const std::string key = dir.path() + "/key.pem";
  WritePem(certificate, cert, key);
  EXPECT_TRUE(CheckTlsOptions("", "").ok());
  EXPECT_TRUE(CheckTlsOptions(cert, key).ok());
  EXPECT_EQ(CheckTlsOptions(cert, "").code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(CheckTlsOptions("", key).code(), ErrorCode::kInvalidArgument);
  const Status missing = CheckTlsOptions(cert, dir.path() + "/missing.pem");
  EXPECT_EQ(missing.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(missing.message().find("missing.pem"), std::string::npos) << missing.message();
  EXPECT_EQ(CheckTlsOptions(key, key).code(), ErrorCode::kInvalidArgument);  // a key, not a cert
}

}  // namespace
}  // namespace agentstream::server::testing
