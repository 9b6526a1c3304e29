#include "core/ids.h"

#include <charconv>
#include <cstdio>
#include <string>

namespace agentstream {

std::string FormatCursor(Cursor cursor) {
  return std::to_string(cursor.epoch.value()) + ":" + std::to_string(cursor.seq.value());
}

std::string FormatStreamOffset(Cursor cursor) {
  char out[34];
  std::snprintf(out, sizeof out, "%016llu_%016llu",
                static_cast<unsigned long long>(cursor.epoch.value()),
                static_cast<unsigned long long>(cursor.seq.value()));
  return out;
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
