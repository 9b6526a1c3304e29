// VAPID (RFC 8292): the application server's identity towards Web Push services. One ECDSA P-256
// key pair per daemon (shared by every daemon of one store, so a browser's subscription works
// through any of them); its public key is what a browser subscribes with
// (`applicationServerKey`), and every push request carries a short-lived JWT signed with it
// (docs/notifications.md, "Web Push"). OpenSSL 3 underneath. Pure but for the random key of
// GenerateVapidKey; thread-safe (a VapidKey is an immutable value).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace agentstream::push {

// An ECDSA P-256 key pair: the 32-byte private scalar and its 65-byte uncompressed public point.
// Made only by GenerateVapidKey and VapidKeyFromText, so it always holds a valid pair. Copyable;
// the private scalar is wiped when a copy is destroyed.
class VapidKey {
 public:
  VapidKey(const VapidKey&) = default;
  VapidKey(VapidKey&&) noexcept = default;
  VapidKey& operator=(const VapidKey&) = default;
  VapidKey& operator=(VapidKey&&) noexcept = default;
  ~VapidKey();

  const std::string& private_scalar() const { return private_scalar_; }  // 32 raw bytes
  const std::string& public_point() const { return public_point_; }      // 65 raw bytes, 0x04..

 private:
  VapidKey(std::string private_scalar, std::string public_point)
      : private_scalar_(std::move(private_scalar)), public_point_(std::move(public_point)) {}
  friend Result<VapidKey> GenerateVapidKey();
  friend Result<VapidKey> VapidKeyFromText(std::string_view text);

  std::string private_scalar_;
  std::string public_point_;
};

// A fresh key pair from OpenSSL's random generator. kInternal when OpenSSL fails.
Result<VapidKey> GenerateVapidKey();

// The key's stable text form, to keep as a secret: base64url (no padding) of the 32-byte private
// scalar (43 characters). The public key is derived from it.
std::string VapidKeyToText(const VapidKey& key);

// Reads VapidKeyToText's form (padding tolerated). kInvalidArgument when the text is not
// base64url of 32 bytes or is not a valid P-256 private scalar (0, or not below the group order).
Result<VapidKey> VapidKeyFromText(std::string_view text);

// The public key as a browser takes it: base64url (no padding) of the 65-byte uncompressed point.
std::string VapidPublicKey(const VapidKey& key);

// The longest a VAPID JWT may live (RFC 8292 section 2: at most 24 hours ahead).
inline constexpr std::int64_t kMaxVapidLifetimeS = 86400;  // 24 hours

// The `Authorization` header value of RFC 8292 section 3: `vapid t=<JWT>, k=<public key>`, where
// the JWT (ES256, header {"typ":"JWT","alg":"ES256"}) claims `aud` = `audience_origin` (the push
// endpoint's origin, "https://push.example.net"), `exp` = `expires_unix_s` and `sub` = `subject`
// (a "mailto:" or "https:" contact). `now_unix_s` is the current time: kInvalidArgument when
// `expires_unix_s` is not after it or is more than kMaxVapidLifetimeS ahead of it, or when the
// audience or subject is empty. kInternal when OpenSSL fails.
Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view audience_origin,
                                       std::string_view subject, std::int64_t expires_unix_s,
                                       std::int64_t now_unix_s);

// The same, with the system clock's now.
Result<std::string> VapidAuthorization(const VapidKey& key, std::string_view audience_origin,
                                       std::string_view subject, std::int64_t expires_unix_s);

}  // namespace agentstream::push
