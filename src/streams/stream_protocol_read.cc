// The reads of the protocol layer (stream_protocol_internal.h): GET (a catch-up read, or the
// start of a long-poll or SSE read), HEAD, and each attempt of a long-poll. The ETag of a read
// names the stream, its start and end offsets, and whether it ended the stream.
#include "net/base64.h"
#include "streams/json_mode.h"
#include "streams/stream_protocol.h"
#include "streams/stream_protocol_internal.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

using protocol_internal::FromCode;
using protocol_internal::Set;
using protocol_internal::Text;

namespace {

// True when SSE sends the stream's messages as they are (else in base64).
bool TextCompatible(const std::string& content_type) {
  const std::string t = NormalizeContentType(content_type);
  return t.rfind("text/", 0) == 0 || t == "application/json";
}

std::string Etag(const std::string& path, const std::string& start, const std::string& end,
                 bool closed) {
  return "\"" + net::EncodeBase64(path) + ":" + start + ":" + end + (closed ? ":c" : "") + "\"";
}

// The body of a read: the messages one after the other, or one JSON array in JSON mode.
std::string Body(const ReadResult& read) {
  std::string body;
  if (read.json) {
    body = "[";
    for (const Message& m : read.messages) AppendJsonElements(*m.data, &body);
    body += "]";
    return body;
  }
  std::size_t size = 0;
  for (const Message& m : read.messages) size += m.data->size();
  body.reserve(size);
  for (const Message& m : read.messages) body += *m.data;
  return body;
}

// The 200 answer of a read with data (or an empty catch-up read).
StreamResponse ReadResponse(const std::string& path, const ReadResult& read,
                            const std::string& start, const std::string* cursor,
                            const std::string& if_none_match) {
  StreamResponse r;
  if (!read.info.content_type.empty()) Set(&r, "content-type", read.info.content_type);
  const Offset next = read.messages.empty() ? read.info.tail : read.messages.back().offset;
  const std::string next_text = FormatOffset(next);
  Set(&r, "Stream-Next-Offset", next_text);
  if (cursor != nullptr) Set(&r, "Stream-Cursor", ResponseCursor(*cursor, system::WallClockMs()));
  if (read.up_to_date) Set(&r, "Stream-Up-To-Date", "true");
  const bool closed = read.info.closed && next == read.info.tail && read.up_to_date;
  if (closed) Set(&r, "Stream-Closed", "true");
  const std::string etag = Etag(path, start, next_text, closed);
  if (!if_none_match.empty() && if_none_match == etag) {
    StreamResponse not_modified;
    not_modified.status = 304;
    Set(&not_modified, "etag", etag);
    return not_modified;
  }
  Set(&r, "etag", etag);
  r.body = Body(read);
  return r;
}

}  // namespace

namespace protocol_internal {

void HandleRead(StreamStore& store, const StreamRequest& req, Done& done) {
  const OpResult head = store.Head(req.path, /*touch=*/true);
  if (head.code != Code::kOk) return done(FromCode(head.code));
  const std::vector<std::string> offsets = QueryValues(req.query, "offset");
  const std::vector<std::string> lives = QueryValues(req.query, "live");
  const std::vector<std::string> cursors = QueryValues(req.query, "cursor");
  if (lives.size() > 1) return done(Text(400, "Multiple live parameters not allowed"));
  const std::string live = lives.empty() ? "" : lives.back();
  // A mode this server does not know is refused, not served as a catch-up read.
  if (!lives.empty() && live != "long-poll" && live != "sse")
    return done(Text(400, "Invalid live parameter: long-poll or sse"));
  std::optional<std::string> offset;
  if (!offsets.empty()) {
    if (offsets.size() > 1) return done(Text(400, "Multiple offset parameters not allowed"));
    offset = offsets.front();
    if (offset->empty()) return done(Text(400, "Empty offset parameter"));
    if (*offset != "-1" && *offset != "now" && !ParseOffset(*offset))
      return done(Text(400, "Invalid offset format"));
  }
  const bool long_poll = live == "long-poll";
  if ((long_poll || live == "sse") && !offset)
    return done(
        Text(400, std::string(long_poll ? "Long-poll" : "SSE") + " requires offset parameter"));
  LiveRead read;
  read.path = req.path;
  read.cursor = cursors.empty() ? "" : cursors.back();
  read.etag_start = offset.value_or("-1");
  read.if_none_match = req.Header("if-none-match").value_or("");
  if (offset == "now") {
    read.after = head.info.tail;
  } else if (offset && *offset != "-1") {
    read.after = ParseOffset(*offset);
  }
  if (live == "sse") {
    read.sse = true;
    read.base64 = !TextCompatible(head.info.content_type);
    return done(std::move(read));
  }
  if (offset == "now" && !long_poll) {
    StreamResponse r;
    if (!head.info.content_type.empty()) Set(&r, "content-type", head.info.content_type);
    Set(&r, "Stream-Next-Offset", FormatOffset(head.info.tail));
    Set(&r, "Stream-Up-To-Date", "true");
    Set(&r, "cache-control", "no-store");
    if (head.info.closed) Set(&r, "Stream-Closed", "true");
    if (NormalizeContentType(head.info.content_type) == "application/json") r.body = "[]";
    return done(std::move(r));
  }
  const ReadResult result = store.Read(req.path, read.after);
  if (result.code != Code::kOk) return done(FromCode(result.code));
  if (long_poll && result.messages.empty() &&
      (offset == "now" || (read.after && *read.after == result.info.tail))) {
    if (result.info.closed) {
      StreamResponse r;
      r.status = 204;
      Set(&r, "Stream-Next-Offset", FormatOffset(result.info.tail));
      Set(&r, "Stream-Up-To-Date", "true");
      Set(&r, "Stream-Closed", "true");
      return done(std::move(r));
    }
    return done(std::move(read));
  }
  done(ReadResponse(req.path, result, read.etag_start, long_poll ? &read.cursor : nullptr,
                    read.if_none_match));
}

void HandleHead(StreamStore& store, const StreamRequest& req, Done& done) {
  const OpResult head = store.Head(req.path);
  if (head.code != Code::kOk) {
    StreamResponse r = FromCode(head.code);
    r.body.clear();
    return done(std::move(r));
  }
  StreamResponse r;
  const std::string tail = FormatOffset(head.info.tail);
  Set(&r, "Stream-Next-Offset", tail);
  Set(&r, "cache-control", "no-store");
  if (!head.info.content_type.empty()) Set(&r, "content-type", head.info.content_type);
  if (head.info.closed) Set(&r, "Stream-Closed", "true");
  if (head.info.ttl_seconds) Set(&r, "Stream-TTL", std::to_string(*head.info.ttl_seconds));
  if (head.info.expires_at) Set(&r, "Stream-Expires-At", *head.info.expires_at);
  Set(&r, "etag", Etag(req.path, "-1", tail, head.info.closed));
  done(std::move(r));
}

}  // namespace protocol_internal

std::optional<StreamResponse> PollLongPoll(StreamStore& store, const LiveRead& read,
                                           bool timed_out) {
  const ReadResult result = store.Read(read.path, read.after);
  if (result.code != Code::kOk) return FromCode(result.code);
  if (!result.messages.empty())
    return ReadResponse(read.path, result, read.etag_start, &read.cursor, read.if_none_match);
  if (!result.info.closed && !timed_out) return std::nullopt;
  StreamResponse r;
  r.status = 204;
  Set(&r, "Stream-Next-Offset", FormatOffset(read.after.value_or(result.info.tail)));
  Set(&r, "Stream-Up-To-Date", "true");
  Set(&r, "Stream-Cursor", ResponseCursor(read.cursor, system::WallClockMs()));
  if (result.info.closed) Set(&r, "Stream-Closed", "true");
  return r;
}

}  // namespace agentstream::streams
