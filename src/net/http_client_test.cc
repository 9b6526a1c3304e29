// The HTTP client against a real TLS server on loopback: a self-signed certificate made for the
// test (EC P-256, subject alternative name DNS:localhost only), served with OpenSSL.
#include "net/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace agentstream::net {
namespace {

// A certificate for "localhost" with its key, and its PEM file (the test's trusted CA).
struct Certificate {
  Certificate() {
    key.reset(EVP_EC_gen("P-256"));
    cert.reset(X509_new());
    X509* x = cert.get();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key.get());
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    X509_EXTENSION* san = X509V3_EXT_conf_nid(nullptr, &ctx, NID_subject_alt_name, "DNS:localhost");
    X509_add_ext(x, san, -1);
    X509_EXTENSION_free(san);
    X509_sign(x, key.get(), EVP_sha256());
    FILE* f = std::fopen(pem_path.c_str(), "w");
    PEM_write_X509(f, x);
    std::fclose(f);
  }
  ~Certificate() { std::filesystem::remove(pem_path); }

  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> cert{nullptr, X509_free};
  const std::string pem_path = (std::filesystem::temp_directory_path() /
                                ("http_client_test_" + std::to_string(::getpid()) + ".pem"))
                                   .string();
};

// Serves TLS on 127.0.0.1: reads one request per connection (header and Content-Length body),
// keeps it, and answers `reply`.
class TlsServer {
 public:
  TlsServer(const Certificate& certificate, std::string reply) : reply_(std::move(reply)) {
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx_.get(), certificate.cert.get());
    SSL_CTX_use_PrivateKey(ctx_.get(), certificate.key.get());
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    listen(listener_, 8);
    socklen_t length = sizeof address;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TlsServer() {
    shutdown(listener_, SHUT_RDWR);  // accept() returns
    thread_.join();
    close(listener_);
  }

  int port() const { return port_; }
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  int failed_handshakes() const { return failed_handshakes_; }

 private:
  void Serve() {
    for (;;) {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      SSL* ssl = SSL_new(ctx_.get());
      SSL_set_fd(ssl, fd);
      if (SSL_accept(ssl) == 1) {
        std::string request = Read(ssl);
        {
          std::lock_guard lock(mu_);
          requests_.push_back(std::move(request));
        }
        SSL_write(ssl, reply_.data(), static_cast<int>(reply_.size()));
        SSL_shutdown(ssl);
      } else {
        ++failed_handshakes_;
      }
      SSL_free(ssl);
      close(fd);
    }
  }

  static std::string Read(SSL* ssl) {
    std::string in;
    char buf[4096];
    for (;;) {
      const std::size_t end = in.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t length = 0;
        const std::size_t at = in.find("Content-Length: ");
        if (at != std::string::npos && at < end) length = std::stoul(in.substr(at + 16));
        if (in.size() >= end + 4 + length) return in;
      }
      const int n = SSL_read(ssl, buf, sizeof buf);
      if (n <= 0) return in;
      in.append(buf, static_cast<std::size_t>(n));
    }
  }

  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx_{nullptr, SSL_CTX_free};
  const std::string reply_;
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::atomic<int> failed_handshakes_{0};
};

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

TEST(HttpUrl, HttpsDefaultsToPort443) {
  Result<HttpUrl> url = ParseHttpUrl("https://hooks.example.com/a?b=1");
  ASSERT_TRUE(url.ok());
  EXPECT_TRUE(url->tls);
  EXPECT_EQ(url->port, 443);
  EXPECT_EQ(url->host, "hooks.example.com");
  EXPECT_EQ(url->target, "/a?b=1");
  Result<HttpUrl> plain = ParseHttpUrl("http://[::1]:8080");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls);
  EXPECT_EQ(plain->port, 8080);
  EXPECT_FALSE(ParseHttpUrl("ftp://x/").ok());
}

}  // namespace
}  // namespace agentstream::net
