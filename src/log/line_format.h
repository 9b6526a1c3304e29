// How a log line reads (log.h). Pure functions: no I/O, no clock, thread-safe.
//
// Text, one line per event:
//   2026-12-01T17:00:00.123Z INFO process.exited pid=123 signal=SIGKILL stderr_tail="boom\n"
// The time is UTC with milliseconds; the level is TRACE, DEBUG, INFO, WARN or ERROR. A value is
// written bare when it is a number, a boolean, or text of letters, digits and `-_.:/@+,`; any
// other text (empty, spaces, quotes, `=`, control or non-ASCII characters) is quoted and escaped
// as a JSON string.
//
// JSON, one object per line, its keys in this order:
//   {"ts":"2026-12-01T17:00:00.123Z","level":"info","event":"process.exited","pid":123,...}
//
// Every string value is made valid UTF-8 (U+FFFD for bad bytes), masked (every occurrence of a
// secret becomes "***") and cut to kMaxValueBytes ("..." marks a cut).
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log/log.h"

namespace agentstream::log {

// The part of a line after its time and level: `event k=v ...` (text) or
// `"event":"...","k":v,...` (JSON, without the braces). `scope` comes first; a key that both
// have takes its value from `fields`.
std::string FormatBody(Format format, std::string_view event, std::span<const Field> scope,
                       std::span<const Field> fields, std::span<const std::string> secrets);

// The whole line, newline included, of `body` (from FormatBody) logged at `time` and `level`.
std::string FormatLine(Format format, std::chrono::system_clock::time_point time, Level level,
                       std::string_view body);

// "info" (JSON) or "INFO" (text).
std::string_view LevelName(Level level, Format format);

}  // namespace agentstream::log
