// The frames of an agent's event stream (GET /v1/agents/{id}/events, a Durable Stream in JSON
// mode) and the de-duplication that lets `follow` resume after a disconnect with no gap and no
// duplicate. Pure: no I/O.
//
// With live=sse the stream is a sequence of server-sent events: `event: data` whose data is a
// JSON array of event envelopes (core/event_codec.h), and `event: control` whose data is
// {"streamNextOffset":"E:S","upToDate":bool}. A catch-up read answers the same JSON array as its
// body, with the next offset in the Stream-Next-Offset header.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event_codec.h"
#include "core/ids.h"
#include "core/status.h"
#include "net/sse_parser.h"

namespace agentstream::client {

using net::SseEvent;

// What one server-sent event of the stream says. Events of other types decode to an empty frame.
struct StreamFrame {
  std::vector<EventRecord> events;         // from a data frame, in stream order
  std::optional<std::string> next_offset;  // from a control frame: where to resume
  bool up_to_date = false;                 // from a control frame: the reader is at the tail
};

// Decodes one server-sent event. kInvalidArgument for malformed JSON or a malformed envelope,
// kUnsupportedVersion for an envelope newer than this build, kUnavailable for a control frame
// that reports a read error of the daemon ({"error":"IoError"}; the stream ends after it).
Result<StreamFrame> DecodeStreamFrame(const SseEvent& event);

// Decodes a JSON array of envelopes (the body of a catch-up read). Errors as DecodeStreamFrame.
Result<std::vector<EventRecord>> DecodeEnvelopeArray(std::string_view json);

// Admits each (epoch, seq) once: an event is new when its seq is above the highest seq admitted
// for its epoch. Stream order within an epoch is ascending, so this drops exactly the replays a
// resumed read delivers. Remembers at most kMaxEpochs epochs (the lowest is forgotten first).
// Not thread-safe.
class CursorDeduper {
 public:
  static constexpr std::size_t kMaxEpochs = 1024;

  // True the first time `cursor` (or any higher seq of its epoch) is seen.
  bool Admit(Cursor cursor);
  // The highest seq admitted for `epoch`, or 0.
  Seq HighWater(Epoch epoch) const;

 private:
  std::map<Epoch, Seq> high_;
};

}  // namespace agentstream::client
