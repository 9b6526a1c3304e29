// The normalized provider event vocabulary: what every provider adapter (claude, acp, codex,
// opencode, scripted) emits after parsing its own wire format, and the only provider input the
// turn engine (engine.h) understands.
//
// Providers never assign turn ids: they report identifiers of their own (message ids, tool call
// ids, background task ids, request ids) and the engine routes each event to a turn (router.h).
// Text fields may hold any bytes; the engine sanitizes them and bounds tool output (64 KiB, cut
// on a UTF-8 boundary) before anything is appended. Plain values: copyable, no I/O.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/event.h"
#include "core/ids.h"

namespace agentstream::turn {

// The provider began processing a turn (e.g. Claude's system/init). Never opens a turn by itself:
// a stale "began" after a terminal must not flip a session back to running.
struct ProviderTurnBegan {
  std::optional<std::string> task_id;
};

struct ProviderMessageStart {
  MessageId message_id;
  std::optional<MessageId> parent_message_id;
  std::optional<std::string> task_id;
};

struct ProviderTextDelta {
  MessageId message_id;
  std::string text;
  std::optional<MessageId> parent_message_id;
  std::optional<std::string> task_id;
};

struct ProviderMessageStop {
  MessageId message_id;
  std::optional<std::string> stop_reason;
};

struct ProviderReasoningDelta {
  MessageId message_id;
  std::string text;
  std::optional<MessageId> parent_message_id;
};

// The provider replayed a user message (an echo of our prompt, usually with an id the provider
// assigned itself). De-duplicated by the engine against the prompt it recorded.
struct ProviderUserEcho {
  std::optional<MessageId> message_id;           // the provider's id, when it has one
  std::optional<std::string> client_message_id;  // when the provider preserved ours
  std::string text;
};

struct ProviderToolStart {
  ToolCallId call_id;
  std::string name;
  std::optional<std::string> title;
  boost::json::value input;
  std::optional<MessageId> parent_message_id;
  std::optional<std::string> task_id;
};

struct ProviderToolOutput {
  ToolCallId call_id;
  std::string text;  // any length: bounded to kMaxToolOutputBytes by the engine
};

struct ProviderToolEnd {
  ToolCallId call_id;
  ToolCallStatus status = ToolCallStatus::kCompleted;
  std::optional<std::string> output;  // any length: bounded by the engine
  std::optional<std::string> error;
};

struct ProviderPermissionRequest {
  RequestId request_id;
  std::optional<ToolCallId> call_id;
  std::string title;
  std::optional<std::string> tool_name;
  boost::json::value input;
  std::vector<PermissionOption> options;
};

// The provider settled a permission request itself (timeout, another client, ...).
struct ProviderPermissionResolved {
  RequestId request_id;
  PermissionDecision decision = PermissionDecision::kDeny;
  std::optional<std::string> option_id;
  std::optional<std::string> message;
};

struct ProviderPlan {
  std::vector<PlanEntry> entries;
};

// Background task bookkeeping: metadata only, never a lifecycle dependency (router.h).
struct ProviderTaskStarted {
  std::string task_id;
  std::string description;
};
struct ProviderTaskNotification {
  std::string task_id;
  std::string status;
  std::string summary;
};

enum class TurnOutcome { kCompleted, kCanceled, kFailed };

// The provider finished its current turn (Claude's `result`). Does not mean the session is idle:
// a background task may wake the agent later.
struct ProviderTurnResult {
  TurnOutcome outcome = TurnOutcome::kCompleted;
  std::optional<std::string> stop_reason;
  std::string error_code;  // for kFailed
  std::string message;     // for kFailed / kCanceled, for a person
  std::optional<std::string> task_id;
};

struct ProviderError {
  std::string code;
  std::string message;
  bool fatal = false;  // the provider cannot go on: every open turn fails
};

struct ProviderUsage {
  Usage usage;
};
struct ProviderModeChanged {
  std::string mode;
};
struct ProviderModelChanged {
  std::string model;
};

// A provider message no adapter maps: kept as metadata, never dropped silently.
struct ProviderUnknown {
  std::string type;
  boost::json::value data;
};

// The provider process ended (crash, exit, kill). Every open turn fails.
struct ProviderExited {
  std::string message;
};

using ProviderEvent =
    std::variant<ProviderTurnBegan, ProviderMessageStart, ProviderTextDelta, ProviderMessageStop,
                 ProviderReasoningDelta, ProviderUserEcho, ProviderToolStart, ProviderToolOutput,
                 ProviderToolEnd, ProviderPermissionRequest, ProviderPermissionResolved,
                 ProviderPlan, ProviderTaskStarted, ProviderTaskNotification, ProviderTurnResult,
                 ProviderError, ProviderUsage, ProviderModeChanged, ProviderModelChanged,
                 ProviderUnknown, ProviderExited>;

// Identifiers of an event usable for routing when no foreground turn owns it.
struct RouteKeys {
  std::optional<std::string> task_id;
  std::optional<MessageId> parent_message_id;
  std::optional<MessageId> message_id;
  std::optional<ToolCallId> call_id;
  std::optional<RequestId> request_id;
};

RouteKeys RouteKeysOf(const ProviderEvent& event);

// Metadata events belong to no turn and never open one (task bookkeeping, usage, mode and model
// changes, unknown messages).
bool IsMetadata(const ProviderEvent& event);

// Content that may open a new autonomous turn when nothing else claims it.
bool OpensAutonomousTurn(const ProviderEvent& event);

}  // namespace agentstream::turn
