// Internal to the consumers module: the sinks a delivery is handed to.
#pragma once

#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <optional>

#include "consumers/consumer_spec.h"
#include "consumers/delivery.h"
#include "core/status.h"

namespace agentstream::consumers {

// What a sink returns for an acknowledged delivery.
struct SinkAck {
  std::optional<boost::json::value> state;  // new adapter state, when the sink returned one
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
