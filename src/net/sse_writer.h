// The writer of what SseParser reads (net/sse_parser.h): server-sent events as the daemon sends
// them on both of its SSE reads, a session's events and a generic Durable Stream
// (docs/protocol.md). Pure: no I/O.
//
// An event is "event: NAME", the payload as "data:" lines, and the blank line that dispatches it.
// A line break in the payload (CRLF, LF or CR) starts another data line, so a parser gives the
// payload back with LF line breaks. The line follows "data:" directly (Durable Streams clients
// look for `data:{`), except that a line starting with a space gets one more, the one the
// standard's parser removes.
#pragma once

#include <string>
#include <string_view>

namespace agentstream::net {

// Appends the event to `out`. `name` holds no line break.
void AppendSseEvent(std::string_view name, std::string_view payload, std::string* out);
std::string FormatSseEvent(std::string_view name, std::string_view payload);

// The same event in three parts, for a payload sent from a buffer of its own (a gathered write).
// Only for a payload of one line that does not start with a space (JSON as the daemon writes
// it): SseEventHead(name) + payload + kSseEventEnd == FormatSseEvent(name, payload).
std::string SseEventHead(std::string_view name);
inline constexpr std::string_view kSseEventEnd = "\n\n";

// A comment, which parsers skip: sent on an idle stream so that proxies keep it open.
inline constexpr std::string_view kSseKeepAlive = ": keep-alive\n\n";

}  // namespace agentstream::net
