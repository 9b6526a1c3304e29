// The HTTP semantics of generic Durable Streams (PROTOCOL.md of durable-streams/durable-streams)
// over StreamStore, free of any transport: a request in, either a response or a live read (long-
// poll or SSE) out. A live read becomes a LiveSource (live_source.h) whose waiting is the
// transport's (src/server/stream_http.cc); each wake-up calls back into PollLongPoll / SseStep.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "streams/stream_store.h"

namespace agentstream::streams {

class SubscriptionManager;

struct StreamRequest {
  std::string method;                                        // upper case
  std::string path;                                          // decoded, without the query
  std::string query;                                         // raw, after '?'
  std::vector<std::pair<std::string, std::string>> headers;  // names lower case
  std::string body;
  // The header's value; nullopt when absent.
  std::optional<std::string> Header(std::string_view lower_name) const;
};

struct StreamResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // including content-type
  std::string body;
};

// A read that waits: the transport watches `path` and calls PollLongPoll / SseStep.
struct LiveRead {
  bool sse = false;
  std::string path;
  std::optional<Offset> after;  // nullopt: from the start
  std::string cursor;           // the client's cursor, for the response cursor
  std::string etag_start;       // the offset parameter as given, for the ETag
  std::string if_none_match;
  bool base64 = false;   // SSE of a binary stream
  bool started = false;  // SSE: the first step is done
};

using Outcome = std::variant<StreamResponse, LiveRead>;

// Headers on every /v1/stream response (CORS for any origin, browser hardening), as constants
// the transport writes without copying, and added to `response`.
std::span<const std::pair<std::string_view, std::string_view>> CommonHeaders();
void AddCommonHeaders(StreamResponse* response);

// Handles one request. `done` runs once, at once or (for writes) from the journal's thread after
// the change is durable. `base_url` ("http://host:port") makes the Location of a created stream.
// Requests under /v1/stream/__ds/ go to `subscriptions` (404 when null).
void HandleStreamRequest(StreamStore& store, SubscriptionManager* subscriptions,
                         const StreamRequest& request, const std::string& base_url,
                         std::function<void(Outcome)> done);

// One attempt of a long-poll: the response, or nullopt to keep waiting (no data yet and not
// timed out).
std::optional<StreamResponse> PollLongPoll(StreamStore& store, const LiveRead& read,
                                           bool timed_out);

// One step of an SSE read: the events to send (data events each followed by a control event)
// and whether the stream ended (closed at the tail, or deleted). `timed_out`: the idle interval
// passed, so a keep-alive control event is due.
struct SseOutput {
  std::string events;
  bool end = false;
  bool more = false;  // a read limit cut the step short: call again once the events are sent
};
SseOutput SseStep(StreamStore& store, LiveRead& read, bool timed_out);

// A control event of an SSE read (docs/protocol.md), for both kinds of stream: where the stream
// goes on, the response cursor and whether the reader is at the tail; or that the stream ended.
struct StreamControl {
  std::string next_offset;  // streamNextOffset
  std::string cursor;       // streamCursor (ResponseCursor); not sent once closed
  bool up_to_date = false;  // "upToDate":true; not sent while behind the tail
  bool closed = false;      // {"streamNextOffset":...,"streamClosed":true}, nothing else
  bool reset = false;       // "reset":true: a session log rewound, the reader starts over
};
// The whole event ("event: control", its data line and the blank line).
std::string FormatControlEvent(const StreamControl& control);

// Headers of the SSE response (status 200).
std::string SseResponseHead(const LiveRead& read);

// Durable Streams' interval cursor: 20 s intervals since 2024-10-09, moved past the client's
// cursor when the client already holds the current interval.
std::string ResponseCursor(std::string_view client_cursor, std::int64_t now_ms);

// ISO 8601 ("2025-01-01T00:00:00.000Z", offsets "+02:00", or a date) to Unix milliseconds.
std::optional<std::int64_t> ParseIsoTime(std::string_view text);

}  // namespace agentstream::streams
