#include "core/ids.h"

#include <string>

#include "core/offset_text.h"

namespace agentstream {

std::string FormatCursor(Cursor cursor) {
  return std::to_string(cursor.epoch.value()) + ":" + std::to_string(cursor.seq.value());
}

std::string FormatStreamOffset(Cursor cursor) {
  return FormatOffsetPair(cursor.epoch.value(), cursor.seq.value());
}

bool ParseCursor(std::string_view text, Cursor* out) {
  const auto pair = ParseOffsetPair(text, ":_");
  if (!pair || pair->first == 0) return false;
  *out = Cursor{Epoch(pair->first), Seq(pair->second)};
  return true;
}

}  // namespace agentstream
