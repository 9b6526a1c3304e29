// JSON of the consumer endpoints (docs/consumers.md): a consumer's spec (secret redacted), its
// counters and its progress per session, lag included.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>

#include "consumers/consumer_state.h"

namespace agentstream::api {

// {"id", "spec": {...}, "deliveries", "eventsDelivered", "failures", "parked": n,
//  "lagEvents": max, "lagSeconds": max, "sessions": [{"session", "position": "E:S",
//  "tail": "E:S", "lagEvents", "lagSeconds", "parked", "lastError", "attempts", "generation",
//  "leaseOwner"}]}
boost::json::object ConsumerStateToJson(const consumers::ConsumerState& state);

// A consumer's lag: the largest over its sessions, and how many sessions are parked.
struct ConsumerLag {
  std::uint64_t events = 0;
  double seconds = 0;
  std::uint64_t parked = 0;
};
ConsumerLag SummarizeLag(const consumers::ConsumerState& state);

}  // namespace agentstream::api
