#include "consumers/signature.h"

#include <sodium.h>

#include <array>

namespace agentstream::consumers {

std::string HmacSha256Hex(std::string_view key, std::string_view message) {
  static const int kInit = sodium_init();  // idempotent; < 0 only when no randomness exists
  (void)kInit;
  std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(key.data()),
                              key.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(message.data()),
                                message.size());
  crypto_auth_hmacsha256_final(&state, mac.data());
  std::array<char, crypto_auth_hmacsha256_BYTES * 2 + 1> hex{};
  sodium_bin2hex(hex.data(), hex.size(), mac.data(), mac.size());
  return std::string(hex.data(), hex.size() - 1);
}

std::string WebhookSignature(std::string_view secret, std::string_view timestamp,
                             std::string_view body) {
  std::string message;
  message.reserve(timestamp.size() + 1 + body.size());
  message.append(timestamp).append(".").append(body);
  return "v1=" + HmacSha256Hex(secret, message);
}

}  // namespace agentstream::consumers
