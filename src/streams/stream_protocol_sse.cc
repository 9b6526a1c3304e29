// The SSE reads of the protocol layer (stream_protocol.h): each step sends the messages since
// the last one as data events, each followed by a control event (the next offset, the cursor,
// up-to-date and closed), base64 for a binary stream.
#include "net/base64.h"
#include "streams/json_mode.h"
#include "streams/stream_protocol.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

namespace {

std::string SseData(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 16);
  out += "data:";
  for (std::size_t i = 0; i < payload.size(); ++i) {
    const char c = payload[i];
    if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < payload.size() && payload[i + 1] == '\n') ++i;
      out += "\ndata:";
    } else {
      out += c;
    }
  }
  out += "\n\n";
  return out;
}

std::string Control(const Offset& offset, const std::string& cursor, bool up_to_date, bool closed) {
  std::string json = R"({"streamNextOffset":")" + FormatOffset(offset) + "\"";
  if (closed) {
    json += R"(,"streamClosed":true})";
  } else {
    json += R"(,"streamCursor":")" + ResponseCursor(cursor, system::WallClockMs()) + "\"";
    if (up_to_date) json += R"(,"upToDate":true)";
    json += "}";
  }
  return "event: control\n" + SseData(json);
}

}  // namespace

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
    out.events += "event: data\n";
    out.events += SseData(payload);
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
