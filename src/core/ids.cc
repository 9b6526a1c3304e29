#include "core/ids.h"

#include <charconv>
#include <string>

namespace agentstream {

std::string FormatCursor(Cursor cursor) {
  return std::to_string(cursor.epoch.value()) + ":" + std::to_string(cursor.seq.value());
}

namespace {
// At least 16 digits, zeros in front.
std::string Padded(std::uint64_t value) {
  std::string digits = std::to_string(value);
  if (digits.size() < 16) digits.insert(0, 16 - digits.size(), '0');
  return digits;
}
}  // namespace

std::string FormatStreamOffset(Cursor cursor) {
  return Padded(cursor.epoch.value()) + "_" + Padded(cursor.seq.value());
}

namespace {
bool ParseU64(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}
}  // namespace

bool ParseCursor(std::string_view text, Cursor* out) {
  auto colon = text.find_first_of(":_");
  if (colon == std::string_view::npos) return false;
  std::uint64_t epoch = 0, seq = 0;
  if (!ParseU64(text.substr(0, colon), &epoch) || !ParseU64(text.substr(colon + 1), &seq)) {
    return false;
  }
  if (epoch == 0) return false;
  *out = Cursor{Epoch(epoch), Seq(seq)};
  return true;
}

}  // namespace agentstream
