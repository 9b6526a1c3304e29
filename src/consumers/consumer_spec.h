// ConsumerSpec: what a durable consumer reads (its filter), where it delivers (its sink) and how
// it retries. Pure data and its JSON codec; no I/O. The JSON shape is the body of
// POST /v1/consumers and the text a consumer is stored as (docs/consumers.md).
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/ids.h"
#include "core/status.h"

namespace agentstream::consumers {

enum class SinkKind { kWebhook, kCommand, kParentSession, kJsonl, kNotify };

// "webhook", "command", "parent", "jsonl", "notify" (a device's notifications,
// docs/notifications.md).
std::string_view SinkKindName(SinkKind kind);

struct SinkSpec {
  SinkKind kind = SinkKind::kWebhook;
  std::string url;     // webhook: http:// or https://host:port/path
  std::string secret;  // webhook: HMAC-SHA256 key; never returned in full by the API
  std::vector<std::pair<std::string, std::string>> headers;  // webhook: extra request headers
  std::int64_t timeout_ms = 10000;  // webhook request / command acknowledgement time limit
  std::vector<std::string> argv;    // command
  SessionId parent;                 // parent session
  std::string path;                 // jsonl file
  std::string device;               // notify: the paired device ("dev_...") notified
  friend bool operator==(const SinkSpec&, const SinkSpec&) = default;
};

// Empty lists match everything; a non-empty list matches any of its entries.
struct ConsumerFilter {
  std::vector<std::string> providers;  // SessionMeta::provider
  std::vector<SessionId> sessions;
  std::vector<std::string> kinds;  // event kind names ("assistant.message.delta", ...)
  friend bool operator==(const ConsumerFilter&, const ConsumerFilter&) = default;
};

struct RetryPolicy {
  int max_attempts = 8;  // failures of one delivery before the (consumer, session) parks
  std::int64_t initial_backoff_ms = 500;
  std::int64_t max_backoff_ms = 60000;
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

struct ConsumerSpec {
  ConsumerId id;
  ConsumerFilter filter;
  SinkSpec sink;
  RetryPolicy retry;
  bool coalesce = true;   // merge runs of high-frequency kinds when behind
  bool from_now = false;  // start each session existing at creation at its tail
  friend bool operator==(const ConsumerSpec&, const ConsumerSpec&) = default;
};

// Limits on a spec, checked by ConsumerSpecFromJson.
inline constexpr std::size_t kMaxConsumerIdBytes = 128;
inline constexpr std::size_t kMaxFilterEntries = 256;
inline constexpr std::size_t kMaxSinkHeaders = 32;
inline constexpr std::size_t kMaxCommandArgs = 256;
inline constexpr int kMaxAttemptsLimit = 1000;
inline constexpr std::int64_t kMaxTimeoutMs = 600000;

// Parses and validates a spec. kInvalidArgument with a message naming the field.
Result<ConsumerSpec> ConsumerSpecFromJson(const boost::json::value& v);
// The spec as JSON; with `redact_secret` the webhook secret is replaced by "***" plus its last
// two characters (or removed when shorter than 8).
boost::json::object ConsumerSpecToJson(const ConsumerSpec& spec, bool redact_secret);

// True when `kind` of an event in a session with `provider` passes the filter.
bool FilterMatchesSession(const ConsumerFilter& filter, const SessionId& session,
                          const std::string& provider);
bool FilterMatchesKind(const ConsumerFilter& filter, std::uint16_t kind);

}  // namespace agentstream::consumers
