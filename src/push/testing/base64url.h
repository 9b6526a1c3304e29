// The URL-safe, unpadded base64 of Web Push keys and bodies (RFC 8291), for the push tests.
#pragma once

#include <string>
#include <string_view>

#include "net/base64.h"

namespace agentstream::push::testing {

inline std::string FromB64(std::string_view text) {
  return net::DecodeBase64(text, net::Base64Alphabet::kUrlSafeNoPadding).value();
}

inline std::string ToB64(std::string_view bytes) {
  return net::EncodeBase64(bytes, net::Base64Alphabet::kUrlSafeNoPadding);
}

}  // namespace agentstream::push::testing
