// NotifyRoutes: a device's notification settings and the daemon's VAPID public key
// (docs/protocol.md, "Notifications"; docs/notifications.md).
//
//   GET    /v1/devices/{id}/notifications   the settings (defaults when none were saved)
//   PUT    /v1/devices/{id}/notifications   replace them; creates or deletes the device's consumer
//   DELETE /v1/devices/{id}/notifications   clear them and delete the consumer
//   GET    /v1/notifications/vapid          {"publicKey": base64url of the 65-byte P-256 point}
//
// The owner may name any device; a device only itself (its id, or `self`): another id is 403.
// Transport-free, like ConsumerRoutes; the calls block briefly on the store, on the calling
// (I/O) thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "notify/notifications.h"
#include "server/http_types.h"

namespace agentstream::server {

class NotifyRoutes {
 public:
  // `notifications` may be null (the endpoints then answer 404); it outlives the routes.
  explicit NotifyRoutes(notify::Notifications* notifications);

  // Handles the request when it is one of the routes above (true); else leaves it (false).
  // `caller_device`: the id of the device making the request, "" for the owner.
  bool Handle(const HttpRequest& request, const std::vector<std::string>& seg,
              const std::string& caller_device, const std::function<void(HttpResponse)>& reply);

 private:
  notify::Notifications* notifications_;
};

}  // namespace agentstream::server
