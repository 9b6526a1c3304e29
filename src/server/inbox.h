// Inbox: each session's one delivery address for its whole life, POST /v1/agents/{id}/inbox.
//
// A child's events reach its parent's log through here, whether the child runs on this daemon
// (the parent-session sink calls Append) or on another one (a webhook consumer there, pointed at
// this URL, whose secret is the parent's inbox token). Each delivery's events are appended to the
// parent wrapped as SubagentEvent, under the producer stamp ParentProducerId(consumer, child),
// epoch = the child's epoch, seq = the delivery's ordinal: a redelivery appends nothing.
//
// The token of a session is HMAC-SHA256(daemon inbox key, "inbox/" + session id): derived, never
// stored, never rotated, and valid for the session's whole life. A remote delivery is
// authenticated by its webhook signature made with that token (X-Agentstream-Timestamp within
// kInboxClockSkew of now, X-Agentstream-Signature), so no daemon API token is needed for it.
//
// Threading: every method may be called from any thread; `done` runs on the AgentManager's thread.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "consumers/delivery.h"
#include "core/status.h"
#include "runtime/agent_manager.h"

namespace agentstream::server {

// How far a delivery's timestamp may be from this daemon's clock.
inline constexpr std::chrono::seconds kInboxClockSkew{300};

// Reads the daemon's inbox key from `path` (64 hex characters), creating it (mode 0600, 32
// random bytes) when the file does not exist; an empty path gives a new key that is not stored
// (a daemon on the memory store). kIoError / kCorruption with the path named.
Result<std::string> LoadOrCreateInboxKey(const std::string& path);

struct InboxResult {
  std::size_t appended = 0;  // events appended (0 for a redelivery)
  bool duplicate = false;
  Cursor cursor;  // the parent's tail after the append
};

class Inbox {
 public:
  // `key`: the daemon's inbox key (LoadOrCreateInboxKey). `agents` outlives the inbox.
  Inbox(runtime::AgentManager& agents, std::string key);

  // The session's inbox token (64 hex characters).
  std::string TokenFor(const SessionId& session) const;

  // A remote delivery: checks the signature (kUnauthenticated when missing, stale or wrong),
  // parses the body (kInvalidArgument), then appends as Append does.
  void Accept(const SessionId& parent, std::string_view timestamp, std::string_view signature,
              std::string_view body, std::function<void(Result<InboxResult>)> done,
              std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

  // A delivery from this daemon (the parent-session sink): no signature. kInvalidArgument for a
  // delivery whose child is the parent itself; the AgentManager's errors (kNotFound, ...).
  void Append(const SessionId& parent, const consumers::Delivery& delivery,
              std::function<void(Result<InboxResult>)> done);

 private:
  runtime::AgentManager& agents_;
  std::string key_;
};

}  // namespace agentstream::server
