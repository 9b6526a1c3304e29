// Test-only: one request through the protocol layer (stream_protocol.h), answered at once.
#pragma once

#include <utility>
#include <variant>

#include "streams/stream_protocol.h"
#include "streams/stream_store.h"

namespace agentstream::streams::testing {

// Handles `req` on `store` (no subscriptions, base URL "http://h") and returns its response.
// For requests answered before HandleStreamRequest returns: a memory store without a journal, and
// not a read that waits (a LiveRead is a programmer error here).
inline StreamResponse Call(StreamStore& store, StreamRequest req) {
  Outcome result;
  HandleStreamRequest(store, nullptr, req, "http://h", [&](Outcome o) { result = std::move(o); });
  return std::get<StreamResponse>(result);
}

}  // namespace agentstream::streams::testing
