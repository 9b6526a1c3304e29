// The one text form of a Durable Streams offset, for both kinds of stream the daemon serves: a
// session log's offsets are (epoch, seq) (FormatStreamOffset in core/ids.h), a generic stream's
// (read sequence, byte position) (streams/offset.h). Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace agentstream {

// "AAAAAAAAAAAAAAAA_BBBBBBBBBBBBBBBB": each counter in at least 16 digits, zeros in front, so that
// offsets compare as strings the way their pairs compare (every counter the daemon writes stays
// below 10^16).
std::string FormatOffsetPair(std::uint64_t first, std::uint64_t second);

// Two counters of 1 to 20 decimal digits each, within 64 bits, separated by the first character
// of `text` found in `separators`; nullopt on anything else (no sign, no space, no partial parse).
std::optional<std::pair<std::uint64_t, std::uint64_t>> ParseOffsetPair(
    std::string_view text, std::string_view separators = "_");

}  // namespace agentstream
