// Base64 (RFC 4648), the project's one: the standard alphabet with padding (HTTP Basic
// credentials, binary Durable Streams data over SSE) and the URL-safe one without padding
// (subscription tokens). libsodium's codec underneath.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace agentstream::net {

enum class Base64Alphabet {
  kStandard,          // A-Z a-z 0-9 + /, padded with '='
  kUrlSafeNoPadding,  // A-Z a-z 0-9 - _, no padding
};

std::string EncodeBase64(std::string_view bytes,
                         Base64Alphabet alphabet = Base64Alphabet::kStandard);

// nullopt when `text` is not Base64 of `alphabet` (a character outside it, bad padding, or
// trailing bits that are not zero).
std::optional<std::string> DecodeBase64(std::string_view text,
                                        Base64Alphabet alphabet = Base64Alphabet::kStandard);

}  // namespace agentstream::net
