#include "consumers/lane.h"

#include <algorithm>
#include <boost/json.hpp>

namespace agentstream::consumers {

namespace {

namespace json = boost::json;

// The unsigned number at `key`, or 0 when it is missing or not one.
std::uint64_t UintOrZero(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  if (v == nullptr) return 0;
  if (v->is_uint64()) return v->as_uint64();
  if (v->is_int64() && v->as_int64() >= 0) return static_cast<std::uint64_t>(v->as_int64());
  return 0;
}

bool SameRecord(const EventRecord& a, const EventRecord& b) {
  return a.kind == b.kind && a.time == b.time && a.turn == b.turn && a.payload == b.payload;
}

// The event at `seq` of (session, epoch).
Result<EventRecord> ReadOne(EventLog& log, const SessionId& session, Epoch epoch, Seq seq) {
  AS_ASSIGN_OR_RETURN(ReadResult page, log.Read(ReadRequest{session, epoch, ReadDirection::kForward,
                                                            seq, 1, std::size_t{16} << 20}));
  if (page.events.empty() || page.events.front().seq != seq)
    return Error(ErrorCode::kNotFound, "event " + std::to_string(seq.value()) + " is missing");
  return std::move(page.events.front());
}

}  // namespace

std::string EncodeLaneRecord(const LaneRecord& r) {
  json::object o;
  o["v"] = 1;
  o["state"] = r.sink_state;
  o["ordinalEpoch"] = r.ordinal_epoch;
  o["nextOrdinal"] = r.next_ordinal;
  if (r.inflight) {
    o["inflight"] = json::object{{"ordinal", r.inflight->ordinal},
                                 {"epoch", r.inflight->epoch.value()},
                                 {"seqStart", r.inflight->seq_start.value()},
                                 {"seqEnd", r.inflight->seq_end.value()},
                                 {"coalesced", r.inflight->coalesced},
                                 {"prepared", r.inflight->prepared}};
  } else {
    o["inflight"] = nullptr;
  }
  o["parked"] = r.parked;
  o["error"] = r.error;
  return json::serialize(o);
}

Result<LaneRecord> DecodeLaneRecord(std::string_view text) {
  LaneRecord r;
  if (text.empty()) return r;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec || !v.is_object() || UintOrZero(v.as_object(), "v") != 1)
    return Error(ErrorCode::kCorruption,
                 "a consumer position holds state this build did not write");
  const json::object& o = v.as_object();
  if (const json::value* s = o.if_contains("state")) r.sink_state = *s;
  r.ordinal_epoch = UintOrZero(o, "ordinalEpoch");
  r.next_ordinal = UintOrZero(o, "nextOrdinal");
  if (const json::value* f = o.if_contains("inflight"); f != nullptr && f->is_object()) {
    const json::object& fo = f->as_object();
    InflightPlan p;
    p.ordinal = UintOrZero(fo, "ordinal");
    p.epoch = Epoch(UintOrZero(fo, "epoch"));
    p.seq_start = Seq(UintOrZero(fo, "seqStart"));
    p.seq_end = Seq(UintOrZero(fo, "seqEnd"));
    const json::value* c = fo.if_contains("coalesced");
    p.coalesced = c != nullptr && c->is_bool() && c->as_bool();
    if (const json::value* prepared = fo.if_contains("prepared")) p.prepared = *prepared;
    if (p.epoch.value() == 0 || p.seq_start.value() == 0 || p.seq_end < p.seq_start)
      return Error(ErrorCode::kCorruption, "a consumer's journaled delivery has a bad range");
    r.inflight = std::move(p);
  }
  const json::value* parked = o.if_contains("parked");
  r.parked = parked != nullptr && parked->is_bool() && parked->as_bool();
  if (const json::value* e = o.if_contains("error"); e != nullptr && e->is_string())
    r.error = std::string(e->as_string());
  return r;
}

Result<std::vector<EventRecord>> ReadRange(EventLog& log, const SessionId& session, Epoch epoch,
                                           Seq from, Seq to, std::size_t max_events,
                                           std::size_t max_bytes) {
  std::vector<EventRecord> out;
  std::size_t bytes = 0;
  Seq next = from;
  while (next <= to && out.size() < max_events && bytes < max_bytes) {
    const std::size_t want =
        std::min<std::uint64_t>(max_events - out.size(), to.value() - next.value() + 1);
    AS_ASSIGN_OR_RETURN(ReadResult page,
                        log.Read(ReadRequest{session, epoch, ReadDirection::kForward, next, want,
                                             std::max<std::size_t>(max_bytes - bytes, 1)}));
    if (page.events.empty()) break;
    for (auto& e : page.events) {
      if (e.seq > to) break;
      bytes += e.payload.size();
      out.push_back(std::move(e));
    }
    next = out.back().seq.next();
    if (!page.has_newer) break;
  }
  return out;
}

Result<Cursor> ResolvePosition(EventLog& log, const SessionId& session, Cursor position,
                               Epoch current, Seq tail) {
  if (position.epoch == current) return position;
  // Binary search for the last seq where both epochs hold the same record: the shared prefix.
  std::uint64_t lo = 0;  // known shared
  std::uint64_t hi = std::min(position.seq.value(), tail.value());
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    AS_ASSIGN_OR_RETURN(EventRecord a, ReadOne(log, session, position.epoch, Seq(mid)));
    AS_ASSIGN_OR_RETURN(EventRecord b, ReadOne(log, session, current, Seq(mid)));
    if (SameRecord(a, b)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return Cursor{current, Seq(lo)};
}

}  // namespace agentstream::consumers
