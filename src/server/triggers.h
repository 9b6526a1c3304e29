// Triggers (docs/automation.md): an outside event, POST /v1/triggers/{id}, becomes a prompt to an
// agent or to a new agent made from a template. This file holds the pure parts: the triggers'
// definitions (a JSON file the daemon reads at start), the prompt template over the event's JSON
// payload, and the check of a GitHub-style signature. No I/O but what the caller passes in.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/agent_types.h"
#include "core/ids.h"
#include "core/status.h"

namespace agentstream::server {

// Bounds of a triggers file and of what a delivery makes.
inline constexpr std::size_t kMaxTriggersFileBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxTriggers = 100;
inline constexpr std::size_t kMaxTemplateBytes = std::size_t{16} << 10;
inline constexpr std::size_t kMaxPlaceholders = 100;
inline constexpr std::size_t kMaxRenderedBytes = std::size_t{64} << 10;  // a prompt or a title
inline constexpr std::size_t kMaxValueBytes = std::size_t{16} << 10;     // one placeholder's value
inline constexpr std::size_t kMaxDeliveryIdBytes = 160;
inline constexpr std::size_t kMaxMissingListed = 20;
inline constexpr std::size_t kMaxRenderedTitleBytes = 200;

// A new agent per delivery: what POST /v1/agents would take. `title` is a template too.
struct AgentTemplate {
  std::string provider;
  std::string cwd;
  bool worktree = false;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> title;
};

// True for 1 to 64 letters, digits, '_' and '-': a trigger's or a schedule's id.
bool IsAutomationId(std::string_view id);

// Reads a template {"provider", "cwd" (absolute), "worktree"?, "model"?, "mode"?, "title"?};
// kInvalidArgument prefixed with `where` for anything else.
Result<AgentTemplate> ParseAgentTemplate(const boost::json::value& v, const std::string& where);
boost::json::object AgentTemplateToJson(const AgentTemplate& t);
// The agent a template makes, its title rendered over `fields` on one line (control characters
// become spaces), at most kMaxRenderedTitleBytes.
api::AgentConfig AgentTemplateConfig(const AgentTemplate& t, const boost::json::value& fields);

struct Trigger {
  std::string id;  // [A-Za-z0-9_-], 1 to 64 bytes: the URL's {id}
  // The HMAC-SHA256 key of X-Hub-Signature-256; empty: only the owner's or a device's token.
  std::string secret;
  // Where the prompt goes: an existing agent, or a new agent per delivery.
  std::optional<SessionId> agent;
  std::optional<AgentTemplate> create;
  std::string prompt;               // the template of the prompt
  std::vector<std::string> events;  // X-GitHub-Event values taken; empty: any
};

// A triggers file: {"triggers": [{"id", "secret" | "secretFile", "agent" | "template",
// "prompt", "events"?}]}. A "secretFile" is read through `read_file` (path -> contents; its
// trailing newline dropped). kInvalidArgument naming the trigger and the member for a file that
// is not that: an unknown member, a missing or duplicate id, both or neither of agent and
// template, a template placeholder that is not a path, a bound passed.
Result<std::vector<Trigger>> ParseTriggers(
    std::string_view text,
    const std::function<Result<std::string>(const std::string& path)>& read_file);

// A prompt template: text with placeholders `{{path}}`, a path being member names and array
// indexes joined by dots (`issue.title`, `commits.0.id`). No expressions, no code.
struct Rendered {
  std::string text;                  // at most kMaxRenderedBytes (cut on a UTF-8 boundary)
  bool truncated = false;            // a value or the whole text was cut
  std::vector<std::string> missing;  // the placeholders whose path the payload lacks
};

// Checks a template: its size, its placeholders (at most kMaxPlaceholders, each a path of at
// most 16 names of [A-Za-z0-9_-]), no `{{` left open.
Status CheckTemplate(std::string_view text);

// Renders `text` over `payload`: a string value as it is, a number, boolean or null as JSON, an
// object or array as compact JSON; each value cut at kMaxValueBytes. A missing path renders
// empty and is listed in `missing`.
Rendered RenderTemplate(std::string_view text, const boost::json::value& payload);

// True when `header` is "sha256=" + hex HMAC-SHA256(secret, body) (GitHub's X-Hub-Signature-256),
// compared in constant time.
bool SignatureMatches(std::string_view secret, std::string_view body, std::string_view header);

// The delivery id of a request: X-GitHub-Delivery, else Idempotency-Key. kInvalidArgument when
// neither is given, or it is not 1 to kMaxDeliveryIdBytes printable ASCII characters without
// spaces (it becomes part of a client request id and a client message id).
Result<std::string> DeliveryId(std::string_view github_delivery, std::string_view idempotency_key);

}  // namespace agentstream::server
