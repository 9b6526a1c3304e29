// ASCII case for protocol text: header names, URL schemes and hosts, content types, hex digests,
// tool names. Only A-Z and a-z change; every other byte (UTF-8 included) is kept as it is, and
// the C library's locale plays no part. Pure functions.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace agentstream {

constexpr char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

constexpr char AsciiUpper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

inline void AsciiLowerInPlace(std::string& text) {
  for (char& c : text) c = AsciiLower(c);
}

inline std::string AsciiLowered(std::string_view text) {
  std::string out(text);
  AsciiLowerInPlace(out);
  return out;
}

inline std::string AsciiUppered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = AsciiUpper(c);
  return out;
}

// True when `a` and `b` differ at most in the case of ASCII letters.
constexpr bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

}  // namespace agentstream
