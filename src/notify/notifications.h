// Notifications: a device's settings and the durable consumer that delivers its notifications
// (docs/notifications.md). Saving settings with a target (a Web Push subscription or an ntfy
// topic) creates the device's consumer `notify.{device}` (sink kind `notify`, from now on, over
// the event kinds classify.h reads); deleting them, or revoking the device, deletes it.
//
// Threading: every method may be called from any thread; each blocks for a few store round trips.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>

#include "consumers/consumer_service.h"
#include "core/status.h"
#include "notify/settings.h"
#include "push/vapid.h"
#include "store/device_store.h"

namespace agentstream::notify {

// A notification consumer's send timeout: one request to a push service or an ntfy server.
inline constexpr std::int64_t kSendTimeoutMs = 10000;

// The VAPID key kept as a shared secret: 64 hex characters of a 32-byte P-256 private scalar (as
// server::LoadOrCreateInboxKey makes them, and Coordination::SharedSecret shares them).
// kInvalidArgument for other text, or the rare 32 bytes that are not a valid scalar.
Result<push::VapidKey> VapidKeyFromSecret(std::string_view hex);

// The VAPID contact (`sub`) when the daemon has no https public URL to name.
inline constexpr std::string_view kDefaultVapidSubject = "mailto:agentstream@localhost";

// The id of `device`'s consumer: "notify." + device id.
ConsumerId NotifyConsumerId(const std::string& device);
// The consumer that delivers `device`'s notifications.
consumers::ConsumerSpec NotifyConsumerSpec(const std::string& device);

class Notifications {
 public:
  // `devices` and `consumers` outlive this. `allow_http`: `serve --push-allow-http`.
  Notifications(DeviceStore& devices, consumers::ConsumerService& consumers, bool allow_http,
                std::string vapid_public_key);

  // The device's settings (the defaults when none were saved). kNotFound.
  Result<Settings> Get(const std::string& device);
  // Parses and stores `body` (SettingsFromJson: kInvalidArgument naming the member; nothing is
  // changed then), then creates or deletes the device's consumer. kNotFound; kConflict for a
  // revoked device.
  Result<Settings> Put(const std::string& device, const boost::json::value& body);
  // Clears the settings and deletes the consumer. kNotFound.
  Status Delete(const std::string& device);
  // A device was revoked: deletes its consumer (its settings were cleared by the store). Call it
  // from the code that revokes; Start() also sweeps consumers of revoked devices.
  Status Forget(const std::string& device);
  // Deletes the notification consumers of devices that are revoked, gone, or have no target.
  Status Sweep();

  // base64url of the VAPID public key, for `applicationServerKey`.
  const std::string& vapid_public_key() const { return vapid_public_key_; }

 private:
  DeviceStore& devices_;
  consumers::ConsumerService& consumers_;
  const bool allow_http_;
  const std::string vapid_public_key_;
};

}  // namespace agentstream::notify
