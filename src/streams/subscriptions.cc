// The subscription manager's lifecycle and its keys: the Ed25519 key that signs webhooks (its
// JWK at __ds/jwks.json) and the key of the HMAC that makes and checks callback tokens.
#include "streams/subscriptions.h"

#include <sodium.h>

#include <algorithm>
#include <boost/json.hpp>

#include "net/base64.h"
#include "streams/subscriptions_internal.h"

namespace agentstream::streams {

using subscriptions_internal::Err;
using subscriptions_internal::Object;
using subscriptions_internal::StrField;

namespace {

constexpr std::int64_t kTokenLifetimeSeconds = 3600;

std::string B64Url(const unsigned char* data, std::size_t size) {
  return net::EncodeBase64({reinterpret_cast<const char*>(data), size},
                           net::Base64Alphabet::kUrlSafeNoPadding);
}

}  // namespace

SubscriptionManager::SubscriptionManager(StreamStore& store,
                                         std::unique_ptr<SubscriptionRecords> records,
                                         SubscriptionLimits limits)
    : store_(store), records_(std::move(records)), limits_(limits) {
  if (sodium_init() < 0) std::abort();
  crypto_sign_keypair(public_key_, secret_key_);
  randombytes_buf(token_key_, sizeof token_key_);
  DeriveKeyId();
  sender_ = std::thread([this] { DeliveryLoop(); });
}

void SubscriptionManager::DeriveKeyId() {
  x_ = B64Url(public_key_, sizeof public_key_);
  const std::string thumb = R"({"crv":"Ed25519","kty":"OKP","x":")" + x_ + "\"}";
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(thumb.data()), thumb.size());
  kid_ = "ds_" + B64Url(digest, sizeof digest);
}

SubscriptionManager::~SubscriptionManager() {
  {
    std::lock_guard lock(queue_mu_);
    stop_ = true;
  }
  queue_cv_.notify_all();
  sender_.join();
}

Status SubscriptionManager::Restore() {
  AS_ASSIGN_OR_RETURN(std::string keys, records_->OpenKeys());
  if (keys.empty()) return Status::Ok();
  if (keys.size() != kSubscriptionSeedBytes + kSubscriptionTokenKeyBytes)
    return Error(ErrorCode::kCorruption, "the stored subscription keys have the wrong size");
  crypto_sign_seed_keypair(public_key_, secret_key_,
                           reinterpret_cast<const unsigned char*>(keys.data()));
  std::copy_n(keys.data() + kSubscriptionSeedBytes, kSubscriptionTokenKeyBytes,
              reinterpret_cast<char*>(token_key_));
  sodium_memzero(keys.data(), keys.size());
  DeriveKeyId();
  return Status::Ok();
}

std::string SubscriptionManager::Sign(const std::string& body, std::int64_t unix_seconds) const {
  const std::string payload = std::to_string(unix_seconds) + "." + body;
  unsigned char sig[crypto_sign_BYTES];
  crypto_sign_detached(sig, nullptr, reinterpret_cast<const unsigned char*>(payload.data()),
                       payload.size(), secret_key_);
  return "t=" + std::to_string(unix_seconds) + ",kid=" + kid_ +
         ",ed25519=" + B64Url(sig, sizeof sig);
}

std::string SubscriptionManager::MakeToken(const std::string& subject, std::int64_t epoch,
                                           std::int64_t now_ms) const {
  unsigned char jti[8];
  randombytes_buf(jti, sizeof jti);
  const std::string payload =
      json::serialize(json::object{{"sub", subject},
                                   {"epoch", epoch},
                                   {"exp", now_ms / 1000 + kTokenLifetimeSeconds},
                                   {"jti", B64Url(jti, sizeof jti)}});
  const std::string p =
      B64Url(reinterpret_cast<const unsigned char*>(payload.data()), payload.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(p.data()), p.size(),
                         token_key_);
  return p + "." + B64Url(mac, sizeof mac);
}

std::optional<StreamResponse> SubscriptionManager::CheckToken(const SubscriptionRecord& s,
                                                              const std::string& token,
                                                              const std::string& body,
                                                              std::int64_t now_ms) const {
  const std::size_t dot = token.find('.');
  if (dot == std::string::npos) return Err(401, "TOKEN_INVALID", "Token invalid");
  const std::string p = token.substr(0, dot);
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256(mac, reinterpret_cast<const unsigned char*>(p.data()), p.size(),
                         token_key_);
  const std::string expected = B64Url(mac, sizeof mac);
  if (expected.size() != token.size() - dot - 1 ||
      sodium_memcmp(expected.data(), token.data() + dot + 1, expected.size()) != 0)
    return Err(401, "TOKEN_INVALID", "Token invalid");
  std::optional<std::string> decoded = net::DecodeBase64(p, net::Base64Alphabet::kUrlSafeNoPadding);
  if (!decoded) return Err(401, "TOKEN_INVALID", "Token invalid");
  const std::string payload = std::move(*decoded);
  boost::system::error_code ec;
  const json::value claims = json::parse(payload, ec);
  const json::object* c = ec ? nullptr : Object(claims);
  if (c == nullptr || StrField(*c, "sub") != "subscription:" + s.id)
    return Err(401, "TOKEN_INVALID", "Token invalid");
  const json::value* exp = c->if_contains("exp");
  if (exp == nullptr || !exp->is_int64() || exp->as_int64() < now_ms / 1000)
    return Err(401, "TOKEN_EXPIRED", "Token expired");
  const json::value req = json::parse(body, ec);
  const json::object* r = ec ? nullptr : Object(req);
  const json::value* epoch = c->if_contains("epoch");
  const json::value* generation = r != nullptr ? r->if_contains("generation") : nullptr;
  if (epoch == nullptr || !epoch->is_int64() || epoch->as_int64() != s.generation ||
      generation == nullptr || !generation->is_int64() || generation->as_int64() != s.generation ||
      s.wake_id.empty() || StrField(*r, "wake_id") != s.wake_id)
    return Err(409, "FENCED", "Wake generation is stale");
  return std::nullopt;
}

}  // namespace agentstream::streams
