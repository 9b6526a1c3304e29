// The notification sink: a durable consumer per device (sink kind `notify`) hands each delivery
// of a session's classified events here; the sink works out the notifications they call for
// (classify.h), drops those the device's settings switch off and those about an agent a visible
// client is showing (routing.h), and sends the rest by Web Push and/or ntfy. The consumer engine
// gives it a durable position, a lease (one daemon sends), retries with back-off, Retry-After and
// parking (docs/notifications.md, "Delivery").
//
// Outcomes: every send delivered (or nothing to send) acknowledges, with the session's Track as
// the adapter state; a push service's 404/410 removes the subscription from the device's settings
// and acknowledges; 429/5xx/a timeout is a failed attempt that waits for Retry-After; any other
// refusal is a failed attempt. Threading: Send may run for different sessions at once; it blocks
// its worker for at most one send timeout per target and notification.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "consumers/consumer_spec.h"
#include "consumers/sink.h"
#include "push/vapid.h"
#include "store/device_store.h"
#include "store/event_log.h"
#include "system/wall_clock.h"

namespace agentstream::notify {

struct NotifySinkOptions {
  push::VapidKey vapid;  // the daemon's (shared) VAPID key
  // The VAPID contact ("mailto:..." or "https://..."): the public URL when it is https.
  std::string subject;
  // The page's public base URL ("https://host:port"), for ntfy's Click header; "": no Click.
  std::string public_url;
  std::string ca_file;  // a PEM file trusted besides the system's (tests); "": none
  system::WallClock clock;
};

// `log` and `devices` outlive the sinks. `spec.sink.device` names the device.
consumers::SinkFactory MakeNotifySinkFactory(EventLog& log, DeviceStore& devices,
                                             std::shared_ptr<const NotifySinkOptions> options);

}  // namespace agentstream::notify
