// A session's event log as a read-only Durable Stream source (streams/live_source.h): the
// long-poll and SSE reads of `GET /v1/agents/{id}/events?live=...` (docs/protocol.md).
//
// A long-poll answers at the first commit after the cursor, or at the transport's timeout with
// 204. An SSE stream catches up from the log, then follows the hub: each hub batch that is the
// next thing to deliver is sent as it is, shared with every other reader of the session (its
// JSON is never copied), each data event followed by a control event. A batch that does not fit
// (a gap, an overlap, one that arrived while catching up) sends the reader back to the log
// (LiveReader, live_reader.h), so nothing is lost or sent twice. A rewind resets the reader
// (control event "reset":true). Past `max_queue_bytes` unwritten the reader is dropped and
// resumes from its last streamNextOffset. Hub batches wait for the reader's next step in a
// mailbox of half that bound; batches beyond it are left out and read from the log instead.
//
// Transport-free; owned and called by one connection's thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

#include "server/api_router.h"
#include "server/hub.h"
#include "server/metrics.h"
#include "streams/live_source.h"

namespace agentstream::server {

struct SessionReadOptions {
  BatchLimits batch;                           // one data event at most
  std::chrono::milliseconds keepalive{15000};  // SSE comment line while idle
  std::size_t max_queue_bytes = std::size_t{4} << 20;
};

// The live read `query` (its live mode is long-poll or SSE). Every reference outlives the
// source.
std::unique_ptr<streams::LiveSource> OpenSessionLiveSource(EventLog& log, Hub& hub,
                                                           Metrics& metrics, EventsQuery query,
                                                           SessionReadOptions options);

}  // namespace agentstream::server
