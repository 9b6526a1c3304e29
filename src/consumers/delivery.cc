#include "consumers/delivery.h"

#include <boost/json.hpp>
#include <optional>

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

// How a record may merge with the run before it: records with the same merge key (kind, turn and
// the id the kind names) form one run.
struct MergeKey {
  std::uint16_t kind = 0;
  std::string turn;
  std::string id;
  bool operator==(const MergeKey&) const = default;
};

// The merge key of a mergeable record, or nullopt. `payload` receives the parsed payload.
std::optional<MergeKey> KeyOf(const EventRecord& r, json::object& payload) {
  const auto kind = static_cast<EventKind>(r.kind);
  const char* id_field = nullptr;
  switch (kind) {
    case EventKind::kAssistantMessageDelta:
    case EventKind::kReasoning:
      id_field = "messageId";
      break;
    case EventKind::kToolCallOutput:
      id_field = "callId";
      break;
    case EventKind::kPlan:
      id_field = "";  // a plan replaces the previous one whole
      break;
    default:
      return std::nullopt;
  }
  boost::system::error_code ec;
  json::value v = json::parse(r.payload, ec);
  if (ec || !v.is_object()) return std::nullopt;
  payload = std::move(v.as_object());
  MergeKey key{r.kind, r.turn ? r.turn->str() : std::string(), {}};
  if (*id_field != '\0') {
    const json::value* id = payload.if_contains(id_field);
    if (id == nullptr || !id->is_string()) return std::nullopt;
    key.id = std::string(id->as_string());
  }
  return key;
}

// Merges `next` (same key) into `run`: text kinds concatenate their text, a plan replaces.
void MergeInto(json::object& run, const json::object& next, std::uint16_t kind) {
  if (static_cast<EventKind>(kind) == EventKind::kPlan) {
    run = next;
    return;
  }
  const json::value* text = next.if_contains("text");
  json::value* into = run.if_contains("text");
  if (text != nullptr && text->is_string() && into != nullptr && into->is_string())
    into->as_string().append(text->as_string());
  if (static_cast<EventKind>(kind) == EventKind::kToolCallOutput) {
    const json::value* t = next.if_contains("truncated");
    if (t != nullptr && t->is_bool() && t->as_bool()) run["truncated"] = true;
  }
}

Status Bad(std::string_view field) {
  return Error(ErrorCode::kInvalidArgument,
               "delivery field \"" + std::string(field) + "\" is missing or malformed");
}

Result<std::uint64_t> U64(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return Bad(key);
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64() && v->as_int64() >= 0) return static_cast<std::uint64_t>(v->as_int64());
  return Bad(key);
}

Result<std::string> Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr || !v->is_string()) return Bad(key);
  return std::string(v->as_string());
}

}  // namespace

std::string IdempotencyKey(const ConsumerId& consumer, const SessionId& session, Epoch epoch,
                           Seq seq_end) {
  return consumer.str() + "/" + session.str() + "/" + std::to_string(epoch.value()) + "/" +
         std::to_string(seq_end.value());
}

ProducerId ParentProducerId(const ConsumerId& consumer, const SessionId& child) {
  return ProducerId("consumer:" + consumer.str() + "/" + child.str());
}

std::string DeliveryToJson(const Delivery& d) {
  json::object o;
  o["consumer"] = d.consumer.str();
  o["session"] = d.session.str();
  o["epoch"] = d.epoch.value();
  o["seqStart"] = d.seq_start.value();
  o["seqEnd"] = d.seq_end.value();
  o["ordinal"] = d.ordinal;
  o["idempotencyKey"] = d.idempotency_key;
  o["coalesced"] = d.coalesced;
  o["state"] = d.state;
  json::array events;
  events.reserve(d.events.size());
  for (std::size_t i = 0; i < d.events.size(); ++i) {
    json::object e = EnvelopeToJson(d.events[i]);
    if (i < d.first_seqs.size() && d.first_seqs[i] != d.events[i].seq)
      e["firstSeq"] = d.first_seqs[i].value();
    events.emplace_back(std::move(e));
  }
  o["events"] = std::move(events);
  return json::serialize(o);
}

Result<Delivery> DeliveryFromJson(std::string_view body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec || !v.is_object()) return Bad("(body)");
  const json::object& o = v.as_object();
  Delivery d;
  AS_ASSIGN_OR_RETURN(std::string consumer, Str(o, "consumer"));
  AS_ASSIGN_OR_RETURN(std::string session, Str(o, "session"));
  d.consumer = ConsumerId(std::move(consumer));
  d.session = SessionId(std::move(session));
  AS_ASSIGN_OR_RETURN(std::uint64_t epoch, U64(o, "epoch"));
  AS_ASSIGN_OR_RETURN(std::uint64_t seq_start, U64(o, "seqStart"));
  AS_ASSIGN_OR_RETURN(std::uint64_t seq_end, U64(o, "seqEnd"));
  AS_ASSIGN_OR_RETURN(d.ordinal, U64(o, "ordinal"));
  AS_ASSIGN_OR_RETURN(d.idempotency_key, Str(o, "idempotencyKey"));
  d.epoch = Epoch(epoch);
  d.seq_start = Seq(seq_start);
  d.seq_end = Seq(seq_end);
  if (d.seq_end < d.seq_start || epoch == 0) return Bad("seqEnd");
  const json::value* coalesced = o.if_contains("coalesced");
  if (coalesced == nullptr || !coalesced->is_bool()) return Bad("coalesced");
  d.coalesced = coalesced->as_bool();
  if (const json::value* state = o.if_contains("state")) d.state = *state;
  const json::value* events = o.if_contains("events");
  if (events == nullptr || !events->is_array()) return Bad("events");
  for (const auto& e : events->as_array()) {
    if (!e.is_object()) return Bad("events");
    AS_ASSIGN_OR_RETURN(EventRecord record, DecodeEnvelope(json::serialize(e)));
    if (record.session != d.session || record.epoch != d.epoch || record.seq < d.seq_start ||
        record.seq > d.seq_end)
      return Bad("events");
    Seq first = record.seq;
    if (const json::value* f = e.as_object().if_contains("firstSeq")) {
      if (!f->is_number()) return Bad("events.firstSeq");
      first = Seq(f->to_number<std::uint64_t>(ec));
      if (ec || first > record.seq || first < d.seq_start) return Bad("events.firstSeq");
    }
    d.events.push_back(std::move(record));
    d.first_seqs.push_back(first);
  }
  return d;
}

Result<std::vector<NewEvent>> SubagentEventsFor(const Delivery& d) {
  std::vector<NewEvent> out;
  out.reserve(d.events.size());
  for (const auto& r : d.events) {
    boost::system::error_code ec;
    json::value payload = json::parse(r.payload, ec);
    if (ec) return Error(ErrorCode::kInvalidArgument, "a delivered payload is not JSON");
    SubagentEvent wrapped;
    wrapped.child = d.session;
    wrapped.child_epoch = r.epoch;
    wrapped.child_seq = r.seq;
    wrapped.child_kind = std::string(EventKindName(static_cast<EventKind>(r.kind)));
    wrapped.child_turn = r.turn;
    wrapped.payload = std::move(payload);
    out.push_back(MakeNewEvent(wrapped));
  }
  return out;
}

Contents BuildContents(const std::vector<EventRecord>& records, const ConsumerFilter& filter,
                       bool coalesce, const DeliveryBounds& bounds) {
  Contents out;
  std::size_t bytes = 0;
  std::optional<MergeKey> run_key;  // the key of out.events.back() while it can grow
  json::object run_payload;
  std::size_t run_bytes = 0;  // upper bound of the run's payload size
  bool run_merged = false;
  auto close_run = [&] {
    // A run of one keeps the stored payload bytes as they are.
    if (run_key && run_merged) out.events.back().payload = json::serialize(run_payload);
    run_key.reset();
    run_merged = false;
  };
  for (const EventRecord& r : records) {
    if (!FilterMatchesKind(filter, r.kind)) {
      ++out.consumed;
      continue;
    }
    json::object payload;
    std::optional<MergeKey> key = coalesce ? KeyOf(r, payload) : std::nullopt;
    if (key && run_key && *key == *run_key) {
      // The merged size is bounded by the sum of the payloads (a replace only shrinks it), so
      // the bounds are checked on that sum without serializing the run on every merge.
      const bool replace = static_cast<EventKind>(r.kind) == EventKind::kPlan;
      const std::size_t after = replace ? r.payload.size() : run_bytes + r.payload.size();
      if (after <= kMaxMergedPayloadBytes && bytes - run_bytes + after <= bounds.max_bytes) {
        bytes = bytes - run_bytes + after;
        run_bytes = after;
        MergeInto(run_payload, payload, r.kind);
        EventRecord& last = out.events.back();
        last.seq = r.seq;
        last.time = r.time;
        out.coalesced = true;
        run_merged = true;
        ++out.consumed;
        continue;
      }
    }
    // A new event in the delivery.
    if (!out.events.empty() &&
        (out.events.size() + 1 > bounds.max_events || bytes + r.payload.size() > bounds.max_bytes))
      break;
    close_run();
    out.events.push_back(r);
    out.first_seqs.push_back(r.seq);
    bytes += r.payload.size();
    ++out.consumed;
    if (key) {
      run_key = std::move(key);
      run_payload = std::move(payload);
      run_bytes = r.payload.size();
    }
  }
  close_run();
  return out;
}

}  // namespace agentstream::consumers
