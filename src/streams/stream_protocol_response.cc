// Building the answers of the protocol layer (stream_protocol_internal.h): text bodies, the
// response of each store result code, the headers every response carries, the response cursor,
// and answers held until the change is durable.
#include <algorithm>
#include <random>

#include "streams/stream_protocol.h"
#include "streams/stream_protocol_internal.h"

namespace agentstream::streams {

namespace {

constexpr std::int64_t kCursorEpochSeconds = 1728432000;  // 2024-10-09T00:00:00Z
constexpr std::int64_t kCursorIntervalSeconds = 20;

}  // namespace

namespace protocol_internal {

StreamResponse Text(int status, std::string body) {
  StreamResponse r;
  r.status = status;
  r.headers.emplace_back("content-type", "text/plain");
  r.body = std::move(body);
  return r;
}

StreamResponse FromCode(Code code) {
  switch (code) {
    case Code::kNotFound:
      return Text(404, "Stream not found");
    case Code::kGone:
      return Text(410, "Stream is gone");
    case Code::kConfigConflict:
      return Text(409, "Stream already exists with different configuration");
    case Code::kHasForks:
      return Text(409, "stream was deleted but still has active forks");
    case Code::kSourceNotFound:
      return Text(404, "Source stream not found");
    case Code::kSourceGone:
      return Text(409, "source stream was deleted but still has active forks");
    case Code::kBadForkOffset:
      return Text(400, "Fork offset beyond source stream length");
    case Code::kBadSubOffset:
      return Text(400, "Invalid fork sub-offset");
    case Code::kForkTypeMismatch:
      return Text(409, "Content type mismatch with source stream");
    case Code::kInvalidJson:
      return Text(400, "Invalid JSON");
    case Code::kEmptyArray:
      return Text(400, "Empty arrays are not allowed");
    case Code::kTypeMismatch:
      return Text(409, "Content-type mismatch");
    case Code::kSeqConflict:
      return Text(409, "Sequence conflict");
    case Code::kInvalidEpochSeq:
      return Text(400, "New epoch must start with sequence 0");
    case Code::kFull:
      return Text(503, "A limit of this server is reached");
    case Code::kUnavailable:
      return Text(503, "Storage failed; this server refuses writes");
    case Code::kStorageDown:
      return Text(503, "The database is unavailable; nothing was written");
    case Code::kOutcomeUnknown:
      return Text(500, "Storage failed; the outcome of this write is unknown");
    case Code::kInvalidText:
      return Text(400, "Path, content type, Stream-Seq or Producer-Id is not UTF-8 text");
    case Code::kExpiresInPast:
      return Text(400, "Stream-Expires-At is in the past: the stream would be expired at once");
    default:
      return Text(500, "Internal error");
  }
}

void Set(StreamResponse* r, std::string name, std::string value) {
  r->headers.emplace_back(std::move(name), std::move(value));
}

void AfterDurable(StreamStore& store, StreamResponse response, Done& done) {
  store.WhenDurable([done = std::move(done), response = std::move(response)](bool ok) mutable {
    if (ok) return done(std::move(response));
    done(Text(500, "Storage failed; the outcome of this write is unknown"));
  });
}

}  // namespace protocol_internal

using protocol_internal::AllDigits;
using protocol_internal::Set;

std::span<const std::pair<std::string_view, std::string_view>> CommonHeaders() {
  static constexpr std::pair<std::string_view, std::string_view> kHeaders[] = {
      {"access-control-allow-origin", "*"},
      {"access-control-allow-methods", "GET, POST, PUT, DELETE, HEAD, OPTIONS"},
      {"access-control-allow-headers",
       "content-type, authorization, if-none-match, Stream-Seq, Stream-TTL, Stream-Expires-At, "
       "Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, "
       "Stream-Fork-Offset, Stream-Fork-Sub-Offset"},
      {"access-control-expose-headers",
       "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Producer-Epoch, "
       "Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, "
       "content-encoding, vary, location, Stream-TTL, Stream-Expires-At"},
      {"x-content-type-options", "nosniff"},
      {"cross-origin-resource-policy", "cross-origin"},
  };
  return kHeaders;
}

void AddCommonHeaders(StreamResponse* r) {
  for (const auto& [name, value] : CommonHeaders()) Set(r, std::string(name), std::string(value));
}

std::string ResponseCursor(std::string_view client_cursor, std::int64_t now_ms) {
  const std::int64_t current = (now_ms / 1000 - kCursorEpochSeconds) / kCursorIntervalSeconds;
  if (client_cursor.empty() || !AllDigits(client_cursor) || client_cursor.size() > 15)
    return std::to_string(current);
  const std::int64_t client = std::stoll(std::string(client_cursor));
  if (client < current) return std::to_string(current);
  // The client already holds this interval: move on by 1 s to 1 h of jitter, so that a CDN
  // does not collapse its next request into the one it came from.
  thread_local std::mt19937 rng{std::random_device{}()};
  const std::int64_t jitter_seconds = std::uniform_int_distribution<std::int64_t>(1, 3600)(rng);
  return std::to_string(
      client + std::max<std::int64_t>(
                   1, (jitter_seconds + kCursorIntervalSeconds - 1) / kCursorIntervalSeconds));
}

}  // namespace agentstream::streams
