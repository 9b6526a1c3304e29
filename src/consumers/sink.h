// Internal to the consumers module: the sinks a delivery is handed to.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "consumers/consumer_spec.h"
#include "consumers/delivery.h"
#include "core/status.h"

namespace agentstream::consumers {

// A failed attempt after which the receiver said when to try again (an HTTP Retry-After).
struct NotDelivered {
  std::string error;
  std::int64_t retry_after_ms = 0;  // the next attempt is not made sooner (nor before back-off)
};

// What a sink returns for an acknowledged delivery, or for a failed attempt with a retry time.
struct SinkAck {
  std::optional<boost::json::value> state;  // new adapter state, when the sink returned one
  // Set: the delivery was not acknowledged; a failed attempt (counted towards parking) whose
  // next attempt waits at least retry_after_ms.
  std::optional<NotDelivered> not_delivered;
};

// Thread-safe: the service may call Send for different sessions of one consumer at once.
class Sink {
 public:
  virtual ~Sink() = default;
  // Runs before the delivery's plan is journaled; returns what the sink needs to make a
  // redelivery of the same plan idempotent (the JSONL sink's file offset), or null.
  virtual Result<boost::json::value> Prepare(const Delivery& delivery) {
    return boost::json::value();
  }
  // Delivers. `prepared` is what Prepare returned when the plan was journaled, possibly in an
  // earlier process. Returns within about the sink's timeout; an error is a failed attempt.
  virtual Result<SinkAck> Send(const Delivery& delivery, const boost::json::value& prepared) = 0;
};

using SinkFactory = std::function<Result<std::unique_ptr<Sink>>(const ConsumerSpec&)>;

}  // namespace agentstream::consumers
