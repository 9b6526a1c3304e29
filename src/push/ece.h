// Web Push message encryption (RFC 8291) in the `aes128gcm` content coding (RFC 8188): what the
// daemon sends a push service is readable only by the browser whose subscription keys it was
// encrypted to. One record of at most kRecordSize bytes, so a body is at most 4096 bytes, the
// size every push service accepts (docs/notifications.md, "Web Push"). Pure but for the fresh
// key and salt of EncryptPayload; thread-safe. OpenSSL 3 underneath.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::push {

inline constexpr std::size_t kRecordSize = 4096;  // the header's rs, and the body's bound
// salt (16) + rs (4) + idlen (1) + the sender's public key (65).
inline constexpr std::size_t kEceHeaderBytes = 86;
inline constexpr std::size_t kEceTagBytes = 16;
// The largest plaintext: one record of 4096 bytes less the header, the tag and the padding
// delimiter.
inline constexpr std::size_t kMaxPlaintextBytes = kRecordSize - kEceHeaderBytes - kEceTagBytes - 1;
static_assert(kMaxPlaintextBytes == 3993);

// Encrypts `plaintext` for a subscription: `ua_public` its 65-byte uncompressed P-256 point
// (p256dh), `auth_secret` its 16-byte secret (auth). A fresh ephemeral key pair and a fresh
// 16-byte salt each call. Returns the whole body: header, then one record (plaintext, the
// delimiter 0x02, no further padding). kInvalidArgument for a plaintext over kMaxPlaintextBytes
// or keys of the wrong size or off the curve; kInternal when OpenSSL fails.
Result<std::string> EncryptPayload(std::string_view plaintext, std::string_view ua_public,
                                   std::string_view auth_secret);

// The same with the sender's 32-byte private scalar and the 16-byte salt given, so that a test
// can reproduce a known body (RFC 8291 section 5). Never reuse either outside tests.
Result<std::string> EncryptPayloadWith(std::string_view plaintext, std::string_view ua_public,
                                       std::string_view auth_secret,
                                       std::string_view sender_private, std::string_view salt);

// The user agent's side: reads a body of EncryptPayload's form (any record size the header names,
// one or more records) with the subscription's 32-byte private scalar `ua_private` and its
// `auth_secret`, and returns the plaintext. kInvalidArgument for a malformed header, a record that
// does not authenticate, bad padding or a body over 64 KiB. For tests and fuzzing; the daemon
// itself only encrypts.
Result<std::string> DecryptPayload(std::string_view body, std::string_view ua_private,
                                   std::string_view auth_secret);

}  // namespace agentstream::push
