// The push module's OpenSSL 3 primitives (internal to src/push/): P-256 keys from raw bytes,
// ECDH, ES256 signatures in JOSE's raw form, HKDF-SHA-256, AES-128-GCM and SHA-256. EVP and the
// EC_GROUP/EC_POINT arithmetic only (no deprecated EC_KEY calls). Every function is pure but for
// RandomP256Scalar; thread-safe. kInvalidArgument for bad input, kInternal when OpenSSL fails.
#pragma once

#include <openssl/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::push::internal {

inline constexpr std::size_t kScalarBytes = 32;  // a P-256 private scalar
inline constexpr std::size_t kPointBytes = 65;   // an uncompressed P-256 point: 0x04 || x || y
inline constexpr std::size_t kAuthBytes = 16;    // a subscription's auth secret (RFC 8291)

struct PkeyFree {
  void operator()(EVP_PKEY* key) const;
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

// A P-256 key pair from its private scalar, with its uncompressed public point.
struct P256Pair {
  PkeyPtr key;
  std::string point;
};

// kInvalidArgument unless `scalar` is 32 bytes and 0 < scalar < the group order.
Result<P256Pair> P256FromScalar(std::string_view scalar);
// `size` bytes from OpenSSL's random generator.
Result<std::string> RandomBytes(std::size_t size);
// 32 random bytes that are a valid scalar (drawn again in the rare case they are not).
Result<std::string> RandomP256Scalar();
// Whether `point` is 65 bytes, uncompressed (0x04) and on the curve.
bool IsOnP256(std::string_view point);
// A public key from a point IsOnP256 accepts; kInvalidArgument otherwise.
Result<PkeyPtr> P256FromPoint(std::string_view point);

// The 32-byte ECDH shared secret (the x coordinate) of `own` and `peer`.
Result<std::string> EcdhP256(EVP_PKEY* own, EVP_PKEY* peer);
// ECDSA P-256 over SHA-256 of `message`: r || s, 32 bytes each (JWS ES256).
Result<std::string> SignEs256(EVP_PKEY* key, std::string_view message);

// HKDF-SHA-256 (RFC 5869), extract and expand: `length` bytes.
Result<std::string> HkdfSha256(std::string_view salt, std::string_view ikm, std::string_view info,
                               std::size_t length);
// AES-128-GCM with a 12-byte nonce and a 16-byte tag appended to the ciphertext.
Result<std::string> Aes128GcmSeal(std::string_view key, std::string_view nonce,
                                  std::string_view plaintext);
// The inverse; kInvalidArgument when the tag does not authenticate.
Result<std::string> Aes128GcmOpen(std::string_view key, std::string_view nonce,
                                  std::string_view sealed);

std::string Sha256(std::string_view bytes);

// Base64url with or without '=' padding (as browsers and people write it); nullopt otherwise.
std::optional<std::string> DecodeBase64Url(std::string_view text);
// Base64url without padding.
std::string EncodeBase64Url(std::string_view bytes);

}  // namespace agentstream::push::internal
