// The writes of the protocol layer (stream_protocol_internal.h): PUT creates a stream (or forks
// one), POST appends (with idempotent producers, or closes), DELETE deletes. Each is answered
// once the store made the change durable.
#include "streams/stream_protocol.h"
#include "streams/stream_protocol_internal.h"

namespace agentstream::streams::protocol_internal {

namespace {

void AnswerAppend(StreamStore& store, const OpResult& result,
                  const std::optional<ProducerArgs>& producer, bool has_body, bool close,
                  Done& done) {
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

}  // namespace

void HandleCreate(StreamStore& store, const StreamRequest& req, const std::string& base_url,
                  Done& done) {
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

void HandleAppend(StreamStore& store, const StreamRequest& req, Done& done) {
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

void HandleDelete(StreamStore& store, const StreamRequest& req, Done& done) {
  store.DeleteAsync(req.path, [&store, done = std::move(done)](const OpResult& result) mutable {
    if (result.code != Code::kOk) return done(FromCode(result.code));
    StreamResponse r;
    r.status = 204;
    AfterDurable(store, std::move(r), done);
  });
}

}  // namespace agentstream::streams::protocol_internal
