// Internal to src/server: the daemon's TLS certificate (--tls-cert, --tls-key) as an OpenSSL
// server context, and its reload when the files change (docs/operations.md, "TLS").
#pragma once

#include <sys/types.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"

namespace agentstream::server::internal {

// A server context for the PEM certificate chain in `cert_file` and the PEM private key in
// `key_file`: TLS 1.2 and later only, the server's cipher preference, OpenSSL's default ciphers.
// kInvalidArgument naming the file and OpenSSL's reason when a file cannot be read, is not PEM of
// the right kind, or the key does not match the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const std::string& cert_file, const std::string& key_file);

// The certificate new connections present, and its reload. Thread-safe: Current runs on every
// I/O thread, Reload on the reload timer and on SIGHUP.
class TlsCertificates {
 public:
  // Loads both files (MakeServerTlsContext's errors).
  static Result<std::unique_ptr<TlsCertificates>> Load(std::string cert_file, std::string key_file);

  // The context for a new connection; a connection keeps the one it started with.
  std::shared_ptr<boost::asio::ssl::context> Current() const;

  // Reads both files again when `force`, or when either changed since the last load (its inode,
  // size or modification time). A new certificate replaces the current one for new connections
  // (logged as server.tls_reloaded); one that fails to load leaves the current one in place and
  // logs server.tls_reload_failed with the reason (once per change of the files). True when
  // the certificate was replaced.
  bool Reload(bool force);

 private:
  // What identifies a file's content without reading it.
  struct Stamp {
    ino_t inode = 0;
    off_t size = 0;
    long long mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  struct Stamps {
    Stamp cert;
    Stamp key;
    bool operator==(const Stamps&) const = default;
  };
  TlsCertificates(std::string cert_file, std::string key_file);
  Stamps ReadStamps() const;

  const std::string cert_file_;
  const std::string key_file_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // guarded by mutex_
  Stamps stamps_;                                       // guarded by mutex_; of the last attempt
};

}  // namespace agentstream::server::internal
