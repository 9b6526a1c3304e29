// A browser's Web Push subscription (the Push API's `PushSubscription.toJSON()`): where to send
// (the push service's endpoint URL) and the keys to encrypt to. Read from client JSON with every
// field checked, so that what is stored can always be sent to (docs/notifications.md, "Web
// Push"). Pure; thread-safe.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::push {

inline constexpr std::size_t kMaxEndpointBytes = 2048;

struct PushSubscription {
  std::string endpoint;  // an absolute https:// URL (http:// only by SubscriptionPolicy)
  std::string p256dh;    // 65 raw bytes: an uncompressed point on P-256
  std::string auth;      // 16 raw bytes

  friend bool operator==(const PushSubscription&, const PushSubscription&) = default;
};

struct SubscriptionPolicy {
  // Accept http:// endpoints (a local test push service; `serve --push-allow-http`).
  bool allow_http_endpoints = false;
};

// Reads `{"endpoint":"https://...","expirationTime":null|<ms>,"keys":{"p256dh":"...",
// "auth":"..."}}`: the endpoint an absolute https URL of at most kMaxEndpointBytes, p256dh
// base64url (padding tolerated) of a 65-byte uncompressed point on the P-256 curve, auth base64url
// of exactly 16 bytes. `expirationTime` is accepted and ignored. kInvalidArgument naming the field
// for anything else, a member not named here included.
Result<PushSubscription> SubscriptionFromJson(const boost::json::value& json,
                                              const SubscriptionPolicy& policy);

// The same shape (keys in base64url without padding, `expirationTime` null).
boost::json::value SubscriptionToJson(const PushSubscription& subscription);

// Whether `point` is a 65-byte uncompressed point on P-256 (checked with OpenSSL).
bool IsP256Point(std::string_view point);

}  // namespace agentstream::push
