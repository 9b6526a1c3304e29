#include "system/random_id.h"

#include <sodium.h>

#include <array>
#include <cstdlib>
#include <vector>

namespace agentstream::system {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void Init() {
  static const bool kReady = sodium_init() >= 0;
  if (!kReady) std::abort();
}

// The `digits` high-nibble-first hex digits of `bytes`.
void AppendHex(const unsigned char* bytes, std::size_t digits, std::string* out) {
  for (std::size_t i = 0; i < digits; ++i) {
    const unsigned char byte = bytes[i / 2];
    *out += kHex[i % 2 == 0 ? byte >> 4 : byte & 0xf];
  }
}

}  // namespace

std::string RandomHex(std::size_t digits) {
  if (digits == 0) return std::string();  // libsodium takes no null buffer, even of no bytes
  Init();
  std::vector<unsigned char> bytes((digits + 1) / 2);
  randombytes_buf(bytes.data(), bytes.size());
  std::string hex;
  hex.reserve(digits);
  AppendHex(bytes.data(), digits, &hex);
  sodium_memzero(bytes.data(), bytes.size());
  return hex;
}

std::string RandomId(std::string_view prefix, std::size_t digits) {
  std::string id(prefix);
  id += '_';
  id += RandomHex(digits);
  return id;
}

std::string RandomUuid() {
  Init();
  std::array<unsigned char, 16> bytes{};
  randombytes_buf(bytes.data(), bytes.size());
  bytes[6] = (bytes[6] & 0x0f) | 0x40;  // version 4
  bytes[8] = (bytes[8] & 0x3f) | 0x80;  // variant 10xx: the first digit of the group is 8 to b
  std::string uuid;
  uuid.reserve(36);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid += '-';
    AppendHex(&bytes[i], 2, &uuid);
  }
  return uuid;
}

}  // namespace agentstream::system
