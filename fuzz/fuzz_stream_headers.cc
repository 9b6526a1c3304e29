// libFuzzer target: what the generic Durable Streams read from a client's request
// (streams/offset.h, streams/stream_protocol.h): offsets, the Stream-* and Producer-* headers,
// Stream-Expires-At dates, the Stream-Cursor and the read query. The first byte says which
// headers are present; the rest is split at '\n' into their values, a query and a body.
//
// Each value goes to the parsers directly: an offset round-trips through FormatOffset, reads and
// writes the same as a session log's (core/offset_text.h: one codec) (and keeps
// string order = stream order at the documented width), a date lands within years 0000..9999
// (offsets aside) and round-trips through a formatted UTC time, a response cursor is digits and
// moves past a client's current cursor by at most an hour. Then the same values make a PUT, a
// POST, a GET (and its long-poll or SSE step) and a HEAD against a memory store: each answers
// exactly once with a documented status, every Stream-Next-Offset is a canonical offset, a JSON
// stream reads back as one JSON array and an SSE step parses as server-sent events.
#include <array>
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/ids.h"
#include "fuzz_check.h"
#include "net/sse_parser.h"
#include "streams/memory_stream_store.h"
#include "streams/offset.h"
#include "streams/stream_protocol.h"

namespace agentstream::streams {
namespace {

constexpr std::int64_t kNowMs = 1748736000000;             // 2025-06-01T00:00:00Z
constexpr std::int64_t kMaxOffsetPart = 9999999999999999;  // 16 digits: the documented width

using fuzzing::Check;

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

void CheckOffset(std::string_view text) {
  const std::optional<Offset> o = ParseOffset(text);
  // One codec for both kinds of stream: a session log reads the same text as the same pair
  // (its epochs start at 1), and writes the same text for it.
  Cursor cursor;
  const bool session = ParseCursor(text, &cursor);
  if (text.find(':') == std::string_view::npos) Check(session == (o && o->read_seq != 0));
  if (!o) return;
  const std::string formatted = FormatOffset(*o);
  Check(ParseOffset(formatted) == o);
  if (session) {
    Check(cursor.epoch.value() == o->read_seq && cursor.seq.value() == o->byte_pos);
    Check(FormatStreamOffset(cursor) == formatted);
  }
  if (o->read_seq <= kMaxOffsetPart && o->byte_pos <= kMaxOffsetPart) {
    Check(formatted.size() == kZeroOffset.size());
    if (text.size() == kZeroOffset.size() && text[16] == '_') Check(formatted == text);
  }
}

void CheckOffsetOrder(std::string_view a, std::string_view b) {
  const std::optional<Offset> x = ParseOffset(a), y = ParseOffset(b);
  if (!x || !y) return;
  for (const Offset& o : {*x, *y})
    if (o.read_seq > kMaxOffsetPart || o.byte_pos > kMaxOffsetPart) return;
  Check((*x < *y) == (FormatOffset(*x) < FormatOffset(*y)));
}

// "YYYY-MM-DDTHH:MM:SS.mmmZ" of Unix milliseconds (H. Hinnant's civil_from_days).
std::string FormatUtc(std::int64_t ms) {
  std::int64_t days = ms / 86400000, rem = ms % 86400000;
  if (rem < 0) rem += 86400000, --days;
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  if (y < 0 || y > 9999) return {};
  char out[32];
  std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", static_cast<int>(y),
                static_cast<int>(m), static_cast<int>(d), static_cast<int>(rem / 3600000),
                static_cast<int>(rem / 60000 % 60), static_cast<int>(rem / 1000 % 60),
                static_cast<int>(rem % 1000));
  return out;
}

void CheckDate(std::string_view text) {
  const std::optional<std::int64_t> ms = ParseIsoTime(text);
  if (!ms) return;
  constexpr std::int64_t kMaxZone = (99 * 60 + 99) * 60000;  // "+99:99", as far as it reads
  Check(*ms >= -62167219200000 - kMaxZone);                  // 0000-01-01T00:00:00Z
  Check(*ms < 253402300800000 + 1000 + kMaxZone);            // 10000-01-01, a leap second
  if (const std::string utc = FormatUtc(*ms); !utc.empty()) Check(ParseIsoTime(utc) == ms);
  if (text.size() == 10) Check(ParseIsoTime(std::string(text) + "T00:00:00Z") == ms);
  if (text.back() == 'Z' || text.back() == 'z') {
    std::string zone(text.substr(0, text.size() - 1));
    Check(ParseIsoTime(zone) == ms && ParseIsoTime(zone + "+00:00") == ms);
  }
}

void CheckCursor(std::string_view client) {
  const std::string next = ResponseCursor(client, kNowMs);
  Check(AllDigits(next));
  const std::int64_t current = (kNowMs / 1000 - 1728432000) / 20;
  const std::int64_t value = std::stoll(next);
  Check(value >= current);
  if (AllDigits(client) && client.size() <= 15 && std::stoll(std::string(client)) >= current) {
    const std::int64_t held = std::stoll(std::string(client));
    Check(value > held && value <= held + 3600 / 20);
  }
}

void CheckResponse(const StreamResponse& r) {
  static constexpr std::array kStatuses = {200, 201, 204, 304, 400, 403,
                                           404, 405, 409, 410, 500, 503};
  bool known = false;
  for (const int s : kStatuses) known = known || s == r.status;
  Check(known);
  for (const auto& [name, value] : r.headers) {
    if (name != "Stream-Next-Offset") continue;
    const std::optional<Offset> o = ParseOffset(value);
    Check(o && FormatOffset(*o) == value);
  }
}

// An SSE step's text parses as server-sent events whose control events name a canonical offset.
void CheckSse(const std::string& events) {
  net::SseParser parser;
  std::vector<net::SseEvent> parsed;
  Check(parser.Feed(events, parsed).ok());
  for (const net::SseEvent& e : parsed) {
    Check(e.event == "data" || e.event == "control");
    if (e.event != "control") continue;
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(e.data, ec);
    Check(!ec && v.is_object());
    const boost::json::value* next = v.as_object().if_contains("streamNextOffset");
    Check(next && next->is_string() && ParseOffset(std::string(next->as_string())));
  }
}

// Runs one request; the store answers a memory-only request before HandleStreamRequest returns.
Outcome Handle(StreamStore& store, StreamRequest request) {
  std::optional<Outcome> outcome;
  int calls = 0;
  HandleStreamRequest(store, nullptr, request, "http://127.0.0.1:7600", [&](Outcome o) {
    ++calls;
    outcome = std::move(o);
  });
  Check(calls == 1);
  if (const auto* response = std::get_if<StreamResponse>(&*outcome)) CheckResponse(*response);
  return std::move(*outcome);
}

enum Present : unsigned {
  kContentType = 1,
  kTtl = 2,
  kExpires = 4,
  kFork = 8,
  kProducer = 16,
  kStreamSeq = 32,
  kClosed = 64,
  kIfNoneMatch = 128,
};

void FuzzRequests(unsigned present, const std::array<std::string_view, 10>& f) {
  MemoryStreamStore store(StreamLimits{}, nullptr, [] { return kNowMs; });
  const std::string source = "/v1/stream/src", path = "/v1/stream/t";
  Check(std::get<StreamResponse>(
            Handle(store, {"PUT", source, "", {{"content-type", "text/plain"}}, "hello"}))
            .status == 201);
  (void)Handle(store, {"POST", source, "", {{"content-type", "text/plain"}}, "world"});

  StreamRequest put{"PUT", path, "", {}, std::string(f[9])};
  // Adds the header when the input's first byte has `flag`.
  auto add = [present](StreamRequest& r, unsigned flag, std::string name, std::string_view value) {
    if ((present & flag) != 0) r.headers.emplace_back(std::move(name), std::string(value));
  };
  add(put, kContentType, "content-type", f[0]);
  add(put, kTtl, "stream-ttl", f[1]);
  add(put, kExpires, "stream-expires-at", f[2]);
  add(put, kFork, "stream-forked-from", source);
  add(put, kFork, "stream-fork-offset", f[3]);
  add(put, kFork, "stream-fork-sub-offset", f[4]);
  add(put, kClosed, "stream-closed", "true");
  (void)Handle(store, put);

  StreamRequest post{"POST", path, "", {}, std::string(f[9])};
  add(post, kContentType, "content-type", f[0]);
  add(post, kProducer, "producer-id", "p1");
  add(post, kProducer, "producer-epoch", f[5]);
  add(post, kProducer, "producer-seq", f[6]);
  add(post, kStreamSeq, "stream-seq", f[7]);
  add(post, kClosed, "stream-closed", "true");
  (void)Handle(store, post);

  StreamRequest get{"GET", path, std::string(f[8]), {}, ""};
  add(get, kIfNoneMatch, "if-none-match", f[7]);
  Outcome read = Handle(store, get);
  if (const auto* r = std::get_if<StreamResponse>(&read); r && r->status == 200) {
    // A JSON stream's read is one JSON array.
    for (const auto& [name, value] : r->headers) {
      if (name != "content-type" || NormalizeContentType(value) != "application/json") continue;
      boost::system::error_code ec;
      Check(boost::json::parse(r->body, ec).is_array() && !ec);
    }
  }
  if (auto* live = std::get_if<LiveRead>(&read)) {
    Check(live->path == path);
    if (live->sse) {
      const SseOutput step = SseStep(store, *live, /*timed_out=*/true);
      CheckSse(step.events);
    } else if (const std::optional<StreamResponse> r = PollLongPoll(store, *live, true)) {
      CheckResponse(*r);
    } else {
      Check(false);  // a timed-out long-poll always answers
    }
  }
  (void)Handle(store, {"HEAD", path, "", {}, ""});
}

}  // namespace
}  // namespace agentstream::streams

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace streams = agentstream::streams;
  if (size < 1) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::array<std::string_view, 10> fields{};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::size_t newline = i + 1 < fields.size() ? rest.find('\n') : std::string_view::npos;
    fields[i] = rest.substr(0, newline);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  }
  for (std::string_view field : fields) {
    streams::CheckOffset(field);
    streams::CheckDate(field);
    streams::CheckCursor(field);
  }
  streams::CheckOffsetOrder(fields[3], fields[4]);
  streams::FuzzRequests(data[0], fields);
  return 0;
}
