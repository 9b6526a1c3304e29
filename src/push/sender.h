// Sending one notification: a Web Push message to a browser's push service (RFC 8030, encrypted
// with ece.h and identified with vapid.h), or a plain-text message to an ntfy server (ntfy's
// publish API). Each send is one HTTPS request bounded by a timeout and a 4 KiB reply, and ends in
// a PushOutcome the caller acts on: delivered, gone (forget the subscription), retry later
// (after retry_after_ms when the service said), or rejected (do not retry this message). See
// docs/notifications.md, "Web Push". Thread-safe: each call uses its own connection; the calls
// block the calling thread for at most the timeout.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "push/subscription.h"
#include "push/vapid.h"

namespace agentstream::push {

inline constexpr std::size_t kMaxReplyBytes = 4096;          // a push service's reply body
inline constexpr std::size_t kMaxDetailBytes = 200;          // of it, kept in PushOutcome::detail
inline constexpr std::int64_t kMaxRetryAfterMs = 3600000;    // Retry-After is capped at 1 h
inline constexpr std::int64_t kVapidTokenLifetimeS = 43200;  // the JWT's exp: now + 12 h
inline constexpr std::int64_t kDefaultTtlS = 86400;          // a message kept 24 h undelivered
inline constexpr std::int64_t kMaxTtlS = 2419200;            // 28 days, what services keep at most
inline constexpr std::size_t kMaxTopicChars = 32;            // RFC 8030 section 5.4

struct PushMessage {
  std::string payload;  // at most kMaxPlaintextBytes (ece.h); encrypted before it is sent
  std::int64_t ttl_s = kDefaultTtlS;  // 0..kMaxTtlS: how long the service keeps it undelivered
  // "" or at most 32 characters of the base64url alphabet: a newer message of one topic replaces
  // an older undelivered one (TopicFor makes one from any key).
  std::string topic;
  std::string urgency = "normal";  // "very-low", "low", "normal" or "high"
};

// A topic for any key (an agent id): base64url of its SHA-256, cut to 32 characters.
std::string TopicFor(std::string_view key);

struct PushOutcome {
  enum Kind {
    kDelivered,  // the service took the message (200, 201, 202)
    kGone,       // 404 or 410: the subscription is no more; remove it
    kRetry,      // 429, 5xx, a timeout, a connection failure or a reply that is not HTTP
    kRejected,   // another status, or a message this module refuses to send; do not retry it
  };
  Kind kind = kRejected;
  int status = 0;                   // the HTTP status; 0 when there was none
  std::int64_t retry_after_ms = 0;  // kRetry: the service's Retry-After, capped; 0: none said
  // Why, for the log: the reply body's first 200 bytes as printable ASCII (other bytes become
  // '?'), or the transport's or this module's error message.
  std::string detail;
};

// Sends `message` to `subscription`: encrypts the payload, signs a VAPID JWT for the endpoint's
// origin (`subject`: the contact, "mailto:..." or "https://..."; exp now + 12 h) and POSTs with
// TTL, Topic (when set), Urgency, Content-Encoding: aes128gcm and Content-Type:
// application/octet-stream, within `timeout`. `ca_file`: a PEM file trusted besides the system's
// (tests); empty: none.
PushOutcome SendPush(const PushSubscription& subscription, const VapidKey& key,
                     std::string_view subject, const PushMessage& message,
                     std::chrono::milliseconds timeout, const std::string& ca_file = "");

// An ntfy server and topic (https://docs.ntfy.sh/publish/).
struct NtfyTarget {
  std::string url;    // an absolute http(s) URL of the server, "https://ntfy.sh"
  std::string topic;  // 1..64 of [A-Za-z0-9_-]

  friend bool operator==(const NtfyTarget&, const NtfyTarget&) = default;
};

inline constexpr std::size_t kMaxNtfyTopicChars = 64;
inline constexpr std::size_t kMaxNtfyTitleBytes = 256;
inline constexpr std::size_t kMaxNtfyBodyBytes = 4096;

// OK for a target SendNtfy can send to; kInvalidArgument naming the field otherwise (a URL with
// a query or fragment, or over kMaxEndpointBytes, is refused).
Status ValidateNtfyTarget(const NtfyTarget& target);
// Reads `{"url":"https://ntfy.sh","topic":"..."}` (no other member) and validates it.
Result<NtfyTarget> NtfyTargetFromJson(const boost::json::value& json);
boost::json::value NtfyTargetToJson(const NtfyTarget& target);

// POSTs `body` to `{url}/{topic}` with the headers Title, Priority (1..5, clamped) and Click (when
// `click_url` is not empty), within `timeout`. The title and body are made single-line (line
// breaks become spaces) and cut at a UTF-8 boundary to kMaxNtfyTitleBytes and kMaxNtfyBodyBytes;
// a title that is not ASCII is sent RFC 2047-encoded, as ntfy reads it. Classified as SendPush.
PushOutcome SendNtfy(const NtfyTarget& target, std::string_view title, std::string_view body,
                     int priority, std::string_view click_url, std::chrono::milliseconds timeout,
                     const std::string& ca_file = "");

// The delay a Retry-After header value asks for (delay-seconds, or an HTTP date compared with
// `now_unix_ms`), capped at kMaxRetryAfterMs; 0 when absent, unreadable or in the past.
std::int64_t RetryAfterMs(std::string_view value, std::int64_t now_unix_ms);

}  // namespace agentstream::push
