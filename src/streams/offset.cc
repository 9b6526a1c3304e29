#include "streams/offset.h"

#include "core/offset_text.h"

namespace agentstream::streams {

std::string FormatOffset(Offset offset) {
  return FormatOffsetPair(offset.read_seq, offset.byte_pos);
}

std::optional<Offset> ParseOffset(std::string_view text) {
  const auto pair = ParseOffsetPair(text);
  if (!pair) return std::nullopt;
  return Offset{pair->first, pair->second};
}

Offset Advance(Offset tail, std::uint64_t data_bytes) {
  return Offset{tail.read_seq, tail.byte_pos + kFrameOverhead + data_bytes};
}

}  // namespace agentstream::streams
