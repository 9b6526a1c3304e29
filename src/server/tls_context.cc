#include "server/tls_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <boost/system/system_error.hpp>
#include <utility>

#include "log/log.h"

namespace agentstream::server::internal {

namespace ssl = boost::asio::ssl;

namespace {

// OpenSSL's reason for the last failure of the calling thread, its error queue cleared.
std::string OpenSslReason(const boost::system::error_code& ec) {
  std::string reason = ec.message();
  ERR_clear_error();
  return reason;
}

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const std::string& cert_file,
                                                           const std::string& key_file) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  boost::system::error_code ec;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1 | ssl::context::single_dh_use,
                       ec);
  SSL_CTX* native = context->native_handle();
  if (ec || SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION) != 1)
    return Error(ErrorCode::kInternal, "cannot set up TLS: " + OpenSslReason(ec));
  SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE);
  context->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot load the TLS certificate " + cert_file + " (PEM): " + OpenSslReason(ec));
  }
  context->use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) {
    return Error(ErrorCode::kInvalidArgument,
                 "cannot load the TLS key " + key_file + " (PEM): " + OpenSslReason(ec));
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    ERR_clear_error();
    return Error(ErrorCode::kInvalidArgument,
                 "the TLS key " + key_file + " does not match the certificate " + cert_file);
  }
  return context;
}

TlsCertificates::TlsCertificates(std::string cert_file, std::string key_file)
    : cert_file_(std::move(cert_file)), key_file_(std::move(key_file)) {}

Result<std::unique_ptr<TlsCertificates>> TlsCertificates::Load(std::string cert_file,
                                                               std::string key_file) {
  std::unique_ptr<TlsCertificates> certificates(
      new TlsCertificates(std::move(cert_file), std::move(key_file)));
  certificates->stamps_ = certificates->ReadStamps();
  AS_ASSIGN_OR_RETURN(certificates->current_,
                      MakeServerTlsContext(certificates->cert_file_, certificates->key_file_));
  return certificates;
}

std::shared_ptr<ssl::context> TlsCertificates::Current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

TlsCertificates::Stamps TlsCertificates::ReadStamps() const {
  auto read = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Stamp{};
    return Stamp{st.st_ino, st.st_size,
                 static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec};
  };
  return Stamps{read(cert_file_), read(key_file_)};
}

bool TlsCertificates::Reload(bool force) {
  const Stamps stamps = ReadStamps();
  {
    std::lock_guard lock(mutex_);
    if (!force && stamps == stamps_) return false;
    stamps_ = stamps;
  }
  // Loaded outside the lock: connections keep starting with the current one meanwhile.
  auto context = MakeServerTlsContext(cert_file_, key_file_);
  if (!context.ok()) {
    log::Warn("server.tls_reload_failed",
              {{"cert", cert_file_}, {"key", key_file_}, {"error", context.status().message()}});
    return false;
  }
  std::lock_guard lock(mutex_);
  current_ = std::move(*context);
  log::Info("server.tls_reloaded", {{"cert", cert_file_}, {"key", key_file_}});
  return true;
}

}  // namespace agentstream::server::internal
