// What a consumer's state reads as (ConsumerService::Get, the consumer endpoints): its spec and
// its progress per session. Plain values, for the service and for the JSON that shows them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "consumers/consumer_spec.h"
#include "core/ids.h"

namespace agentstream::consumers {

struct SessionProgress {
  SessionId session;
  Cursor position;               // the last event acknowledged ({epoch, 0}: none yet)
  Cursor tail;                   // the session's tail when the state was read
  std::uint64_t lag_events = 0;  // events after position through tail, in the current epoch
  double lag_seconds = 0;        // age of the oldest unacknowledged event (0 when caught up)
  bool parked = false;
  std::string last_error;
  int attempts = 0;  // failures of the current delivery
  std::uint64_t generation = 0;
  std::string lease_owner;
};

struct ConsumerState {
  ConsumerSpec spec;
  std::vector<SessionProgress> sessions;
  // Counters since this service started (not durable).
  std::uint64_t deliveries = 0;        // deliveries acknowledged by the sink
  std::uint64_t events_delivered = 0;  // log events those deliveries covered
  std::uint64_t failures = 0;          // delivery attempts that failed
};

}  // namespace agentstream::consumers
