#include "core/offset_text.h"

#include <charconv>

namespace agentstream {

namespace {

constexpr std::size_t kMinDigits = 16;
constexpr std::size_t kMaxDigits = 20;  // 2^64 - 1 has 20

void AppendPadded(std::uint64_t value, std::string* out) {
  char digits[kMaxDigits];
  const auto [end, ec] = std::to_chars(digits, digits + kMaxDigits, value);
  const auto length = static_cast<std::size_t>(end - digits);
  if (length < kMinDigits) out->append(kMinDigits - length, '0');
  out->append(digits, length);
}

std::optional<std::uint64_t> ParseCounter(std::string_view text) {
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  std::uint64_t value = 0;
  // from_chars reads digits only for an unsigned type, and fails on overflow.
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string FormatOffsetPair(std::uint64_t first, std::uint64_t second) {
  std::string out;
  out.reserve(2 * kMinDigits + 1);
  AppendPadded(first, &out);
  out += '_';
  AppendPadded(second, &out);
  return out;
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> ParseOffsetPair(
    std::string_view text, std::string_view separators) {
  const std::size_t sep = text.find_first_of(separators);
  if (sep == std::string_view::npos) return std::nullopt;
  const auto first = ParseCounter(text.substr(0, sep));
  const auto second = ParseCounter(text.substr(sep + 1));
  if (!first || !second) return std::nullopt;
  return std::pair{*first, *second};
}

}  // namespace agentstream
