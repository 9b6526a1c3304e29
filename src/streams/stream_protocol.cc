#include "streams/stream_protocol.h"

#include <algorithm>
#include <random>

#include "net/base64.h"
#include "net/http_url.h"
#include "streams/json_mode.h"
#include "streams/subscriptions.h"
#include "system/wall_clock.h"

namespace agentstream::streams {

namespace {

constexpr std::int64_t kCursorEpochSeconds = 1728432000;  // 2024-10-09T00:00:00Z
constexpr std::int64_t kCursorIntervalSeconds = 20;
constexpr std::uint64_t kMaxSafeInteger = 9007199254740991;  // 2^53 - 1, as clients parse it

// Every value of `key` in a raw query string.
std::vector<std::string> QueryValues(std::string_view query, std::string_view key) {
  std::vector<std::string> values;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (net::PercentDecodeLenient(pair.substr(0, eq)) != key) continue;
    values.push_back(eq == std::string_view::npos ? std::string()
                                                  : net::PercentDecodeLenient(pair.substr(eq + 1)));
  }
  return values;
}

StreamResponse Text(int status, std::string body) {
  StreamResponse r;
  r.status = status;
  r.headers.emplace_back("content-type", "text/plain");
  r.body = std::move(body);
  return r;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "0" or digits without a leading zero.
bool CanonicalInteger(std::string_view s) {
  return AllDigits(s) && (s.size() == 1 || s[0] != '0') && s.size() <= 15;
}

std::optional<std::uint64_t> SafeInteger(std::string_view s) {
  if (!AllDigits(s) || s.size() > 16) return std::nullopt;
  const std::uint64_t v = std::stoull(std::string(s));
  if (v > kMaxSafeInteger) return std::nullopt;
  return v;
}

bool TextCompatible(const std::string& content_type) {
  const std::string t = NormalizeContentType(content_type);
  return t.rfind("text/", 0) == 0 || t == "application/json";
}

bool ValidContentType(std::string_view ct) {
  // ^[\w-]+/[\w-]+ as other servers check it.
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  };
  std::size_t i = 0;
  while (i < ct.size() && word(ct[i])) ++i;
  if (i == 0 || i >= ct.size() || ct[i] != '/') return false;
  return i + 1 < ct.size() && word(ct[i + 1]);
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

std::string Etag(const std::string& path, const std::string& start, const std::string& end,
                 bool closed) {
  return "\"" + net::EncodeBase64(path) + ":" + start + ":" + end + (closed ? ":c" : "") + "\"";
}

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

std::optional<std::int64_t> DaysFromCivil(int y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return static_cast<std::int64_t>(era) * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void HandleCreate(StreamStore& store, const StreamRequest& req, const std::string& base_url,
                  std::function<void(Outcome)>& done);
void HandleAppend(StreamStore& store, const StreamRequest& req, std::function<void(Outcome)>& done);
void AnswerAppend(StreamStore& store, const OpResult& result,
                  const std::optional<ProducerArgs>& producer, bool has_body, bool close,
                  std::function<void(Outcome)>& done);
void HandleRead(StreamStore& store, const StreamRequest& req, std::function<void(Outcome)>& done);

// Answers `response` once everything changed so far is durable.
void AfterDurable(StreamStore& store, StreamResponse response, std::function<void(Outcome)>& done) {
  store.WhenDurable([done = std::move(done), response = std::move(response)](bool ok) mutable {
    if (ok) return done(std::move(response));
    done(Text(500, "Storage failed; the outcome of this write is unknown"));
  });
}

}  // namespace

std::optional<std::string> StreamRequest::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers)
    if (name == lower_name) return value;
  return std::nullopt;
}

void AddCommonHeaders(StreamResponse* r) {
  Set(r, "access-control-allow-origin", "*");
  Set(r, "access-control-allow-methods", "GET, POST, PUT, DELETE, HEAD, OPTIONS");
  Set(r, "access-control-allow-headers",
      "content-type, authorization, if-none-match, Stream-Seq, Stream-TTL, Stream-Expires-At, "
      "Stream-Closed, Producer-Id, Producer-Epoch, Producer-Seq, Stream-Forked-From, "
      "Stream-Fork-Offset, Stream-Fork-Sub-Offset");
  Set(r, "access-control-expose-headers",
      "Stream-Next-Offset, Stream-Cursor, Stream-Up-To-Date, Stream-Closed, Producer-Epoch, "
      "Producer-Seq, Producer-Expected-Seq, Producer-Received-Seq, etag, content-type, "
      "content-encoding, vary, location, Stream-TTL, Stream-Expires-At");
  Set(r, "x-content-type-options", "nosniff");
  Set(r, "cross-origin-resource-policy", "cross-origin");
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

std::optional<std::int64_t> ParseIsoTime(std::string_view s) {
  auto num = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
    if (pos + len > s.size() || !AllDigits(s.substr(pos, len))) return std::nullopt;
    return std::stoi(std::string(s.substr(pos, len)));
  };
  auto year = num(0, 4), month = num(5, 2), day = num(8, 2);
  if (!year || !month || !day || s.size() < 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31) return std::nullopt;
  std::int64_t ms =
      *DaysFromCivil(*year, static_cast<unsigned>(*month), static_cast<unsigned>(*day)) * 86400000;
  if (s.size() == 10) return ms;
  if (s[10] != 'T' && s[10] != 't' && s[10] != ' ') return std::nullopt;
  auto hour = num(11, 2), minute = num(14, 2);
  if (!hour || !minute || s.size() < 16 || s[13] != ':' || *hour > 23 || *minute > 59)
    return std::nullopt;
  ms += (*hour * 3600LL + *minute * 60LL) * 1000;
  std::size_t i = 16;
  if (i < s.size() && s[i] == ':') {
    auto second = num(17, 2);
    if (!second || *second > 60) return std::nullopt;
    ms += *second * 1000LL;
    i = 19;
    if (i < s.size() && s[i] == '.') {
      std::size_t j = i + 1;
      std::int64_t frac = 0;
      int digits = 0;
      while (j < s.size() && s[j] >= '0' && s[j] <= '9') {
        if (digits < 3) frac = frac * 10 + (s[j] - '0'), ++digits;
        ++j;
      }
      if (j == i + 1) return std::nullopt;
      while (digits < 3) frac *= 10, ++digits;
      ms += frac;
      i = j;
    }
  }
  if (i == s.size()) return ms;  // local time: taken as UTC
  if ((s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) return ms;
  if ((s[i] == '+' || s[i] == '-') && i + 6 == s.size() && s[i + 3] == ':') {
    auto oh = num(i + 1, 2), om = num(i + 4, 2);
    if (!oh || !om) return std::nullopt;
    const std::int64_t off = (*oh * 60LL + *om) * 60000;
    return s[i] == '+' ? ms - off : ms + off;
  }
  return std::nullopt;
}

void HandleStreamRequest(StreamStore& store, SubscriptionManager* subscriptions,
                         const StreamRequest& req, const std::string& base_url,
                         std::function<void(Outcome)> done) {
  if (req.method == "OPTIONS") return done(Text(204, ""));
  if (req.path.rfind("/v1/stream/__ds/", 0) == 0 || req.path == "/v1/stream/__ds") {
    if (subscriptions == nullptr) return done(Text(404, "Subscriptions are not enabled"));
    // Answered once the subscription's journaled state is durable (an ack is not lost).
    StreamResponse response = subscriptions->Handle(req, base_url);
    return store.WhenDurable([done = std::move(done), response = std::move(response)](bool ok) {
      if (ok) return done(response);
      done(Text(500, "Storage failed; the outcome of this request is unknown"));
    });
  }
  if (req.method == "PUT") return HandleCreate(store, req, base_url, done);
  if (req.method == "POST") return HandleAppend(store, req, done);
  if (req.method == "GET") return HandleRead(store, req, done);
  if (req.method == "HEAD") {
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
    return done(std::move(r));
  }
  if (req.method == "DELETE") {
    return store.DeleteAsync(req.path,
                             [&store, done = std::move(done)](const OpResult& result) mutable {
                               if (result.code != Code::kOk) return done(FromCode(result.code));
                               StreamResponse r;
                               r.status = 204;
                               AfterDurable(store, std::move(r), done);
                             });
  }
  done(Text(405, "Method not allowed"));
}

namespace {

void HandleCreate(StreamStore& store, const StreamRequest& req, const std::string& base_url,
                  std::function<void(Outcome)>& done) {
  CreateArgs args;
  args.path = req.path;
  args.forked_from = req.Header("stream-forked-from");
  std::string ct = req.Header("content-type").value_or("");
  if (!ValidContentType(ct)) ct = args.forked_from ? "" : "application/octet-stream";
  args.content_type = ct;
  const auto ttl = req.Header("stream-ttl");
  const auto expires = req.Header("stream-expires-at");
  args.closed = req.Header("stream-closed") == "true";
  if (ttl && expires)
    return done(Text(400, "Cannot specify both Stream-TTL and Stream-Expires-At"));
  if (ttl) {
    if (!CanonicalInteger(*ttl)) return done(Text(400, "Invalid Stream-TTL value"));
    args.ttl_seconds = std::stoll(*ttl);
  }
  if (expires) {
    auto ms = ParseIsoTime(*expires);
    if (!ms) return done(Text(400, "Invalid Stream-Expires-At timestamp"));
    args.expires_at = *expires;
    args.expires_at_ms = *ms;
  }
  if (auto fork_offset = req.Header("stream-fork-offset"); fork_offset && !fork_offset->empty()) {
    args.fork_offset = ParseOffset(*fork_offset);
    if (!args.fork_offset) return done(Text(400, "Invalid Stream-Fork-Offset format"));
  }
  if (auto sub = req.Header("stream-fork-sub-offset")) {
    if (!args.forked_from)
      return done(Text(400, "Stream-Fork-Sub-Offset requires Stream-Forked-From"));
    if (!CanonicalInteger(*sub)) return done(Text(400, "Invalid Stream-Fork-Sub-Offset format"));
    args.fork_sub_offset = std::stoull(*sub);
  }
  args.body = req.body;
  store.CreateAsync(std::move(args), [&store, location = base_url + req.path,
                                      done = std::move(done)](const OpResult& result) mutable {
    if (result.code != Code::kCreated && result.code != Code::kOk)
      return done(FromCode(result.code));
    StreamResponse r;
    r.status = result.code == Code::kCreated ? 201 : 200;
    Set(&r, "content-type",
        result.info.content_type.empty() ? "application/octet-stream" : result.info.content_type);
    Set(&r, "Stream-Next-Offset", FormatOffset(result.info.tail));
    if (result.code == Code::kCreated) Set(&r, "location", location);
    if (result.info.closed) Set(&r, "Stream-Closed", "true");
    AfterDurable(store, std::move(r), done);
  });
}

void HandleAppend(StreamStore& store, const StreamRequest& req,
                  std::function<void(Outcome)>& done) {
  AppendArgs args;
  args.path = req.path;
  args.close = req.Header("stream-closed") == "true";
  args.stream_seq = req.Header("stream-seq");
  const auto id = req.Header("producer-id");
  const auto epoch = req.Header("producer-epoch");
  const auto seq = req.Header("producer-seq");
  if (id || epoch || seq) {
    if (!id || !epoch || !seq)
      return done(Text(400,
                       "All producer headers (Producer-Id, Producer-Epoch, Producer-Seq) "
                       "must be provided together"));
    if (id->empty()) return done(Text(400, "Invalid Producer-Id: must not be empty"));
    const auto e = SafeInteger(*epoch);
    if (!e) return done(Text(400, "Invalid Producer-Epoch: must be a non-negative integer"));
    const auto s = SafeInteger(*seq);
    if (!s) return done(Text(400, "Invalid Producer-Seq: must be a non-negative integer"));
    args.producer = ProducerArgs{*id, *e, *s};
  }
  args.body = req.body;
  if (args.body.empty() && !args.close) return done(Text(400, "Empty body"));
  args.content_type = req.Header("content-type").value_or("");
  if (!args.body.empty() && args.content_type.empty())
    return done(Text(400, "Content-Type header is required"));
  const std::optional<ProducerArgs> producer = args.producer;
  const bool has_body = !args.body.empty();
  const bool close = args.close;
  store.AppendAsync(std::move(args), [&store, producer, has_body, close,
                                      done = std::move(done)](const OpResult& result) mutable {
    AnswerAppend(store, result, producer, has_body, close, done);
  });
}

void AnswerAppend(StreamStore& store, const OpResult& result,
                  const std::optional<ProducerArgs>& producer, bool has_body, bool close,
                  std::function<void(Outcome)>& done) {
  StreamResponse r;
  auto producer_headers = [&](std::uint64_t seq_value) {
    Set(&r, "Producer-Epoch", std::to_string(producer->epoch));
    Set(&r, "Producer-Seq", std::to_string(seq_value));
  };
  switch (result.code) {
    case Code::kOk:
      r.status = producer && has_body ? 200 : 204;
      Set(&r, "Stream-Next-Offset", FormatOffset(result.offset));
      if (producer) producer_headers(producer->seq);
      if (close) Set(&r, "Stream-Closed", "true");
      return AfterDurable(store, std::move(r), done);
    case Code::kDuplicate:
      r.status = 204;
      if (result.info.closed) {
        Set(&r, "Stream-Next-Offset", FormatOffset(result.info.tail));
        Set(&r, "Stream-Closed", "true");
      }
      producer_headers(result.producer_seq);
      return AfterDurable(store, std::move(r), done);
    case Code::kClosed:
      r = Text(409, "Stream is closed");
      Set(&r, "Stream-Closed", "true");
      Set(&r, "Stream-Next-Offset", FormatOffset(result.info.tail));
      return done(std::move(r));
    case Code::kStaleEpoch:
      r = Text(403, "Stale producer epoch");
      Set(&r, "Producer-Epoch", std::to_string(result.current_epoch));
      return done(std::move(r));
    case Code::kSequenceGap:
      r = Text(409, "Producer sequence gap");
      Set(&r, "Producer-Expected-Seq", std::to_string(result.expected_seq));
      Set(&r, "Producer-Received-Seq", std::to_string(result.received_seq));
      return done(std::move(r));
    default:
      return done(FromCode(result.code));
  }
}

void HandleRead(StreamStore& store, const StreamRequest& req, std::function<void(Outcome)>& done) {
  const OpResult head = store.Head(req.path, /*touch=*/true);
  if (head.code != Code::kOk) return done(FromCode(head.code));
  const std::vector<std::string> offsets = QueryValues(req.query, "offset");
  const std::vector<std::string> lives = QueryValues(req.query, "live");
  const std::vector<std::string> cursors = QueryValues(req.query, "cursor");
  const std::string live = lives.empty() ? "" : lives.back();
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

}  // namespace

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
