// Test support: a self-signed certificate for "localhost" (EC P-256, subject alternative name
// DNS:localhost only) with its PEM file, and a TLS server on 127.0.0.1 that answers every
// connection with one canned reply, served with OpenSSL; a loopback listener for other test
// servers; a loopback port that refuses connections. Header-only; tests link OpenSSL.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace agentstream::net::test_support {

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

  inline static std::atomic<int> counter{0};
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{nullptr, EVP_PKEY_free};
  std::unique_ptr<X509, decltype(&X509_free)> cert{nullptr, X509_free};
  const std::string pem_path =
      (std::filesystem::temp_directory_path() /
       ("tls_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".pem"))
          .string();
};

// A listening TCP socket on 127.0.0.1 with a free port, which goes to `port`.
inline int ListenOnLoopback(int& port) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address);
  (void)listen(listener, 8);
  socklen_t length = sizeof address;
  (void)getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return listener;
}

// A port on 127.0.0.1 where a connection is refused: bound by a socket that does not listen, so
// the kernel answers a connect with a reset, and held as long as this object, so no other
// process can bind it meanwhile (a port closed after binding could be taken by the next server).
class RefusingPort {
 public:
  RefusingPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    (void)getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() { close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Serves TLS on 127.0.0.1: reads one request per connection (header and Content-Length body),
// keeps it, and answers `reply`.
class TlsServer {
 public:
  TlsServer(const Certificate& certificate, std::string reply) : reply_(std::move(reply)) {
    ctx_.reset(SSL_CTX_new(TLS_server_method()));
    SSL_CTX_use_certificate(ctx_.get(), certificate.cert.get());
    SSL_CTX_use_PrivateKey(ctx_.get(), certificate.key.get());
    listener_ = ListenOnLoopback(port_);
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

}  // namespace agentstream::net::test_support
