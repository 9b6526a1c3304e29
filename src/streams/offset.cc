#include "streams/offset.h"

#include <charconv>

#include "fmt/format.h"

namespace agentstream::streams {

namespace {

bool ParseDigits(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 19) return false;
  for (const char c : text)
    if (c < '0' || c > '9') return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

std::string FormatOffset(Offset offset) {
  return fmt::format("{:016}_{:016}", offset.read_seq, offset.byte_pos);
}

std::optional<Offset> ParseOffset(std::string_view text) {
  const std::size_t sep = text.find('_');
  if (sep == std::string_view::npos) return std::nullopt;
  Offset offset;
  if (!ParseDigits(text.substr(0, sep), &offset.read_seq) ||
      !ParseDigits(text.substr(sep + 1), &offset.byte_pos))
    return std::nullopt;
  return offset;
}

Offset Advance(Offset tail, std::uint64_t data_bytes) {
  return Offset{tail.read_seq, tail.byte_pos + kFrameOverhead + data_bytes};
}

}  // namespace agentstream::streams
