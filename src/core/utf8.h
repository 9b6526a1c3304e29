// UTF-8 hygiene for text that enters the log. Agent processes may print any bytes; the log stores
// only valid UTF-8 (JSON requires it), so text is repaired where it enters, and bounded text is
// cut on a character boundary. Pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace agentstream {

// The default bound of tool output entering the log (BoundUtf8 cuts on a UTF-8 boundary).
inline constexpr std::size_t kMaxToolOutputBytes = std::size_t{64} * 1024;

// True when `text` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool IsValidUtf8(std::string_view text);

// `text` with every ill-formed sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

struct BoundedText {
  std::string text;
  bool truncated = false;
};

// Sanitizes `text` and cuts it to at most `max_bytes` bytes without splitting a character.
BoundedText BoundUtf8(std::string_view text, std::size_t max_bytes = kMaxToolOutputBytes);

}  // namespace agentstream
