#include "push/vapid.h"

#include <openssl/crypto.h>

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "push/crypto.h"
#include "system/wall_clock.h"

namespace agentstream::push {

VapidKey::~VapidKey() { OPENSSL_cleanse(private_scalar_.data(), private_scalar_.size()); }

Result<VapidKey> GenerateVapidKey() {
  AS_ASSIGN_OR_RETURN(std::string scalar, internal::RandomP256Scalar());
  AS_ASSIGN_OR_RETURN(internal::P256Pair pair, internal::P256FromScalar(scalar));
  return VapidKey(std::move(scalar), std::move(pair.point));
}

std::string VapidKeyToText(const VapidKey& key) {
  return internal::EncodeBase64Url(key.private_scalar());
}

Result<VapidKey> VapidKeyFromText(std::string_view text) {
  std::optional<std::string> scalar = internal::DecodeBase64Url(text);
  if (!scalar || scalar->size() != internal::kScalarBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "a VAPID key is base64url of a 32-byte P-256 private key");
  }
  Result<internal::P256Pair> pair = internal::P256FromScalar(*scalar);
  if (!pair.ok()) {
    return Error(ErrorCode::kInvalidArgument, "VAPID key: " + pair.status().message());
  }
  return VapidKey(std::move(*scalar), std::move(pair->point));
}

std::string VapidPublicKey(const VapidKey& key) {
  return internal::EncodeBase64Url(key.public_point());
}

Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view audience_origin,
                                       std::string_view subject, std::int64_t expires_unix_s,
                                       std::int64_t now_unix_s) {
  if (audience_origin.empty() || subject.empty()) {
    return Error(ErrorCode::kInvalidArgument, "a VAPID token needs an audience and a subject");
  }
  if (expires_unix_s <= now_unix_s || expires_unix_s - now_unix_s > kMaxVapidLifetimeS) {
    return Error(ErrorCode::kInvalidArgument,
                 "a VAPID token expires within 24 hours from now (exp " +
                     std::to_string(expires_unix_s) + ", now " + std::to_string(now_unix_s) + ")");
  }
  const boost::json::object claims = {
      {"aud", audience_origin}, {"exp", expires_unix_s}, {"sub", subject}};
  const std::string signing_input = internal::EncodeBase64Url(R"({"typ":"JWT","alg":"ES256"})") +
                                    "." + internal::EncodeBase64Url(boost::json::serialize(claims));
  AS_ASSIGN_OR_RETURN(internal::P256Pair pair, internal::P256FromScalar(key.private_scalar()));
  AS_ASSIGN_OR_RETURN(std::string signature, internal::SignEs256(pair.key.get(), signing_input));
  return "vapid t=" + signing_input + "." + internal::EncodeBase64Url(signature) +
         ", k=" + VapidPublicKey(key);
}

Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view audience_origin,
                                       std::string_view subject, std::int64_t expires_unix_s) {
  return VapidAuthorization(key, audience_origin, subject, expires_unix_s,
                            system::WallClockMs() / 1000);
}

}  // namespace agentstream::push
