// ConsumerService: durable consumers of the session log (docs/consumers.md).
//
// A consumer reads every session its filter selects, in order per session, and hands the events
// to its sink in deliveries. Delivery is at least once and survives crashes: the position per
// (consumer, session) is stored in the log, under a lease with fencing
// (ConsumerStore::AcquireLease), and a delivery's plan is journaled before it is sent, so a
// redelivery after a crash resends exactly the same range with the same ordinal and idempotency
// key. Failures are retried with exponential back-off and jitter; after RetryPolicy::max_attempts
// failures the (consumer, session) parks on that delivery until Resume(). Other sessions keep
// going.
//
// Threading: every method may be called from any thread and may block briefly on the log.
// Deliveries run on the service's own worker threads (ConsumerServiceOptions::workers).
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "consumers/consumer_spec.h"
#include "consumers/consumer_state.h"
#include "consumers/delivery.h"
#include "core/event_codec.h"
#include "core/ids.h"
#include "core/status.h"
#include "store/event_log.h"
#include "system/wall_clock.h"

namespace agentstream::consumers {

class Sink;  // consumers/sink.h

struct ConsumerServiceOptions {
  std::string owner;  // this process's lease owner name; must be unique among live services
  std::int64_t lease_ttl_ms = 15000;
  int workers = 4;                                 // delivery threads
  std::size_t max_consumers = 1000;                // Create beyond this: kResourceExhausted
  std::size_t max_sessions_per_consumer = 100000;  // sessions tracked per consumer
  std::size_t max_delivery_events = 500;           // events (after coalescing) in one delivery
  std::size_t max_delivery_bytes = std::size_t{4} << 20;  // payload bytes in one delivery
  std::size_t max_scan_events = 10000;     // log events one delivery may cover (coalescing)
  std::size_t max_state_bytes = 64 << 10;  // sink adapter state kept per session
  std::int64_t idle_poll_ms = 2000;        // the scheduler looks at every lane at least this often
  std::int64_t rescan_ms = 60000;  // full listing of sessions (commit notices cover the rest)
  // The wall clock of leases, lane records and lag, called from the service's threads; empty:
  // the system's (system/wall_clock.h). When set, it is also the scheduler's time (back-off,
  // Retry-After, rescans, idle polls), which otherwise follows the steady clock: a test that sets
  // it steps all of them by hand, and the scheduler sees a step within idle_poll_ms.
  system::WallClock clock;
  // Tests: builds the sink of a consumer instead of the built-in sinks (see sink.h).
  std::function<Result<std::unique_ptr<Sink>>(const ConsumerSpec&)> sink_factory;
  // Builds the sink of a `notify` consumer (src/notify/, which depends on this module); empty:
  // such consumers are refused with kInvalidArgument.
  std::function<Result<std::unique_ptr<Sink>>(const ConsumerSpec&)> notify_sink_factory;
};

// Parent-session sink: the lead wires this to the AgentManager (the only writer of session
// logs). It must append the delivery's events to `parent` wrapped as SubagentEvent with
// ProducerStamp{ParentProducerId(consumer, session), epoch, ordinal}, then call `done` once.
using ParentAppender = std::function<void(const SessionId& parent, const Delivery& delivery,
                                          std::function<void(Status)> done)>;

class ConsumerService {
 public:
  ConsumerService(EventLog& log, ConsumerServiceOptions options, ParentAppender parent);
  ~ConsumerService();  // Stop()s
  ConsumerService(const ConsumerService&) = delete;
  ConsumerService& operator=(const ConsumerService&) = delete;

  // Loads the stored consumers and starts delivering.
  Status Start();
  // Stops delivering, waits for the deliveries in flight, releases the leases.
  void Stop();

  // Idempotent for an equal spec; kAlreadyExists for a different one with the same id;
  // kInvalidArgument for a bad spec; kResourceExhausted beyond max_consumers.
  Result<ConsumerState> Create(ConsumerSpec spec);
  Result<std::vector<ConsumerState>> List();
  Result<ConsumerState> Get(const ConsumerId& id);  // kNotFound
  Status Delete(const ConsumerId& id);              // kNotFound
  // Unparks one session, or every parked session when `session` is absent. kNotFound.
  Status Resume(const ConsumerId& id, const std::optional<SessionId>& session);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace agentstream::consumers
