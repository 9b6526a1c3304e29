// The SSE reads of the protocol layer (stream_protocol.h): each step sends the messages since
// the last one as data events, each followed by a control event (the next offset, the cursor,
// up-to-date and closed), base64 for a binary stream.
#include "net/base64.h"
#include "net/sse_writer.h"
#include "streams/json_mode.h"
#include "streams/stream_protocol.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

namespace {

std::string Control(const Offset& offset, const std::string& cursor, bool up_to_date, bool closed) {
  return FormatControlEvent({.next_offset = FormatOffset(offset),
                             .cursor = closed ? "" : ResponseCursor(cursor, system::WallClockMs()),
                             .up_to_date = up_to_date,
                             .closed = closed});
}

}  // namespace

std::string FormatControlEvent(const StreamControl& control) {
  std::string json = R"({"streamNextOffset":")" + control.next_offset + "\"";
  if (control.closed) {
    json += R"(,"streamClosed":true)";
  } else {
    json += R"(,"streamCursor":")" + control.cursor + "\"";
    if (control.up_to_date) json += R"(,"upToDate":true)";
    if (control.reset) json += R"(,"reset":true)";
  }
  json += "}";
  return net::FormatSseEvent("control", json);
}

SseOutput SseStep(StreamStore& store, LiveRead& read, bool timed_out) {
  SseOutput out;
  const ReadResult result = store.Read(read.path, read.after);
  if (result.code != Code::kOk) {
    out.end = true;
    return out;
  }
  const bool first = !read.started;
  read.started = true;
  for (std::size_t i = 0; i < result.messages.size(); ++i) {
    const Message& m = result.messages[i];
    std::string payload;
    if (read.base64) {
      payload = net::EncodeBase64(*m.data);
    } else if (result.json) {
      payload = "[";
      AppendJsonElements(*m.data, &payload);
      payload += "]";
    } else {
      payload = *m.data;
    }
    net::AppendSseEvent("data", payload, &out.events);
    const bool last = i + 1 == result.messages.size();
    const bool closed =
        last && result.up_to_date && result.info.closed && m.offset == result.info.tail;
    out.events += Control(m.offset, read.cursor, last && result.up_to_date, closed);
    read.after = m.offset;
    if (closed) out.end = true;
  }
  out.more = !result.up_to_date;
  if (!result.messages.empty()) return out;
  const Offset at = read.after.value_or(result.info.tail);
  read.after = at;
  if (result.info.closed) {
    out.events += Control(at, read.cursor, true, true);
    out.end = true;
  } else if (first || timed_out) {
    out.events += Control(at, read.cursor, true, false);
  }
  return out;
}

std::string SseResponseHead(const LiveRead& read) {
  StreamResponse r;
  AddCommonHeaders(&r);
  std::string head =
      "HTTP/1.1 200 OK\r\nServer: agentstream\r\ncontent-type: text/event-stream\r\n"
      "cache-control: no-cache\r\nconnection: close\r\n";
  if (read.base64) head += "Stream-SSE-Data-Encoding: base64\r\n";
  for (const auto& [name, value] : r.headers)
    head.append(name).append(": ").append(value).append("\r\n");
  return head + "\r\n";
}

}  // namespace agentstream::streams
