// Offsets of generic Durable Streams: "RRRRRRRRRRRRRRRR_BBBBBBBBBBBBBBBB", a zero-padded 16-digit
// read sequence and a zero-padded 16-digit byte position. Fixed width, so that byte-wise string
// order is stream order (the protocol requires lexicographically sortable offsets).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace agentstream::streams {

inline constexpr std::string_view kZeroOffset = "0000000000000000_0000000000000000";
// Bytes every message adds to the byte position besides its data (a length prefix and a
// separator in the framing the offsets were designed for; kept so offsets match other servers).
inline constexpr std::uint64_t kFrameOverhead = 5;

struct Offset {
  std::uint64_t read_seq = 0;
  std::uint64_t byte_pos = 0;
  friend auto operator<=>(const Offset&, const Offset&) = default;
};

// The text form is core/offset_text.h's, the same as a session log's offsets.
std::string FormatOffset(Offset offset);
// Accepts "DIGITS_DIGITS" (any width up to 20 digits each, within 64 bits); nullopt otherwise.
std::optional<Offset> ParseOffset(std::string_view text);
// The offset after appending `data_bytes` at `tail`.
Offset Advance(Offset tail, std::uint64_t data_bytes);

}  // namespace agentstream::streams
