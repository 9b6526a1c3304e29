// Deliveries: what a consumer hands its sink, their JSON form, and the coalescing of runs of
// high-frequency events. Pure functions (no I/O).
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "consumers/consumer_spec.h"
#include "core/event_codec.h"
#include "core/ids.h"
#include "core/status.h"

namespace agentstream::consumers {

// One delivery as sent to every sink (the webhook body; one JSON line for command and jsonl):
// {"consumer","session","epoch","seqStart","seqEnd","ordinal","idempotencyKey","coalesced",
//  "state":<adapter state or null>,"events":[envelopes as in GET /v1/agents/{id}/events]}
// An envelope that stands for a merged run carries "firstSeq", the seq of the run's first event;
// its "seq" is the run's last.
struct Delivery {
  ConsumerId consumer;
  SessionId session;
  Epoch epoch;
  Seq seq_start, seq_end;       // the log range covered (inclusive)
  std::uint64_t ordinal = 0;    // dense from 0 per (consumer, session, epoch)
  std::string idempotency_key;  // IdempotencyKey(consumer, session, epoch, seq_end)
  bool coalesced = false;
  std::vector<EventRecord> events;
  std::vector<Seq> first_seqs;  // parallel to events: the first seq each one covers
  boost::json::value state;     // the sink's stored adapter state; null when none
};

std::string DeliveryToJson(const Delivery& d);
// kInvalidArgument naming the field.
Result<Delivery> DeliveryFromJson(std::string_view body);
// "{consumer}/{session}/{epoch}/{seqEnd}".
std::string IdempotencyKey(const ConsumerId& consumer, const SessionId& session, Epoch epoch,
                           Seq seq_end);
// The producer id under which the parent-session sink appends a child's events:
// "consumer:{consumer}/{child}". The stamp's epoch is the child's epoch, its seq the ordinal.
ProducerId ParentProducerId(const ConsumerId& consumer, const SessionId& child);
// The delivery's events wrapped as SubagentEvent for the parent's log (one per event, in order).
Result<std::vector<NewEvent>> SubagentEventsFor(const Delivery& d);

// Bounds of one delivery's contents.
struct DeliveryBounds {
  std::size_t max_events = 500;                  // events after coalescing
  std::size_t max_bytes = std::size_t{4} << 20;  // payload bytes after coalescing
};
// A merged run stops growing at this payload size and a new run starts.
inline constexpr std::size_t kMaxMergedPayloadBytes = std::size_t{256} << 10;

struct Contents {
  std::vector<EventRecord> events;
  std::vector<Seq> first_seqs;
  bool coalesced = false;    // at least one run was merged
  std::size_t consumed = 0;  // records of the input the contents cover (a prefix)
};

// Builds a delivery's contents from consecutive `records`: drops kinds the filter excludes,
// merges runs when `coalesce` (see docs/consumers.md), and stops before the record that would
// break `bounds` (always taking at least one record). Deterministic: the same records give the
// same contents, so a redelivery of a journaled range is byte-identical.
Contents BuildContents(const std::vector<EventRecord>& records, const ConsumerFilter& filter,
                       bool coalesce, const DeliveryBounds& bounds);

}  // namespace agentstream::consumers
