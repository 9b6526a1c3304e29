// Internal to the consumers module: the durable record of one (consumer, session) lane, stored as
// the position's adapter_state, and the log reads a lane needs.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_codec.h"
#include "core/ids.h"
#include "core/status.h"
#include "store/event_log.h"

namespace agentstream::consumers {

// A delivery plan journaled before it is sent: a redelivery resends exactly this.
struct InflightPlan {
  std::uint64_t ordinal = 0;
  Epoch epoch;
  Seq seq_start, seq_end;
  bool coalesced = false;       // whether the plan was built with coalescing on
  boost::json::value prepared;  // what the sink's Prepare returned
};

// {"v":1,"state":...,"ordinalEpoch":E,"nextOrdinal":N,"inflight":{...}|null,"parked":b,
//  "error":"..."}
struct LaneRecord {
  boost::json::value sink_state;    // the sink's adapter state; null when none
  std::uint64_t ordinal_epoch = 0;  // the epoch next_ordinal counts in
  std::uint64_t next_ordinal = 0;
  std::optional<InflightPlan> inflight;
  bool parked = false;
  std::string error;  // why it parked
};

std::string EncodeLaneRecord(const LaneRecord& record);
// An empty text is a fresh lane. kCorruption for text this build did not write.
Result<LaneRecord> DecodeLaneRecord(std::string_view text);

// Reads events [from, to] of (session, epoch) in pages; stops early at `max_events` or once
// `max_bytes` of payload were read (always returning at least one event when one exists).
Result<std::vector<EventRecord>> ReadRange(EventLog& log, const SessionId& session, Epoch epoch,
                                           Seq from, Seq to, std::size_t max_events,
                                           std::size_t max_bytes);

// Where a consumer at `position` continues in `current` (epoch) whose tail is `tail`: the same
// cursor in the same epoch; else the end of the history both epochs share (their common
// prefix), found by comparing stored events (a prefix is read from where it was first written,
// so shared events are identical records).
Result<Cursor> ResolvePosition(EventLog& log, const SessionId& session, Cursor position,
                               Epoch current, Seq tail);

}  // namespace agentstream::consumers
