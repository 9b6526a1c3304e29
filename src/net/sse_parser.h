// SseParser: an incremental parser of a server-sent events stream (the text/event-stream format
// of the HTML Living Standard, section 9.2): bytes in, complete events out. Pure: no I/O, no
// clock; the HTTP client feeds it whatever the socket delivered, split anywhere.
//
// Supported: `event:`, `data:` (several lines joined with "\n"), `id:`, comments (lines starting
// with ':'), LF, CRLF and CR line ends (a CRLF split across two feeds counts once), a leading
// UTF-8 byte-order mark, an optional single space after the colon. `retry:` and unknown fields
// are ignored. An event without data is not delivered, as the standard says.
//
// Bounds: one line may hold at most `max_line_bytes`, one event (its data plus its type) at most
// `max_event_bytes`. Past either, Feed fails with kTooLarge and the parser stays failed (the
// stream must be reopened), or, with `skip_oversize`, that event is dropped whole, counted in
// dropped(), and parsing goes on at the next event. Memory is bounded by the two limits.
//
// Threading: not thread-safe; one parser per stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::net {

struct SseEvent {
  std::string event = "message";  // the `event:` field, "message" when absent
  std::string data;               // the `data:` lines joined with "\n"
  std::string id;                 // the last `id:` field seen on the stream, if any
  friend bool operator==(const SseEvent&, const SseEvent&) = default;
};

struct SseLimits {
  std::size_t max_line_bytes = 16u << 20;   // 16 MiB: one data line carries a whole frame
  std::size_t max_event_bytes = 16u << 20;  // 16 MiB
  bool skip_oversize = false;               // drop an oversize event instead of failing
};

class SseParser {
 public:
  explicit SseParser(SseLimits limits = {}) : limits_(limits) {}

  // Parses `bytes` (any split of the stream) and appends every event completed by them to `out`,
  // in stream order. kTooLarge when a line or an event exceeds its limit; after an error every
  // later call returns the same error and appends nothing.
  Status Feed(std::string_view bytes, std::vector<SseEvent>& out);
  // Events dropped for their size (skip_oversize).
  std::size_t dropped() const { return dropped_; }

 private:
  Status EndLine(std::vector<SseEvent>& out);
  Status ProcessField(std::string_view field, std::string_view value);
  // skip_oversize: forgets the event being built; it is counted when it ends.
  void Drop();

  SseLimits limits_;
  Status failed_;
  std::string line_;             // the current line, without its end
  bool after_cr_ = false;        // the previous byte was a CR (a following LF is part of it)
  bool at_stream_start_ = true;  // a BOM may still come
  std::string event_type_;       // of the event being built; empty means "message"
  std::string data_;
  bool has_data_ = false;
  std::string last_id_;
  bool dropping_ = false;   // the current event is being dropped
  bool skip_line_ = false;  // the rest of the current line is ignored
  std::size_t dropped_ = 0;
};

}  // namespace agentstream::net
