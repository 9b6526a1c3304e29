// The parser of the `claude` CLI's stream-json stdout (docs/providers.md, "stdout mapping"): one
// line in, normalized provider events (core/turn/provider_event.h) plus the control-protocol facts
// the provider needs out. Pure: no I/O, no clock; tested on recorded lines (testdata/).
//
// Mapping (every line yields something or is on the short list of lines with no meaning for the
// log: status "requesting", keep_alive, content_block_start/stop):
//   system/init               -> ProviderTurnBegan (and `init` facts; it repeats every turn)
//   stream_event message_start / text_delta / thinking_delta / message_stop
//                             -> ProviderMessageStart / ProviderTextDelta / ProviderReasoningDelta
//                                / ProviderMessageStop, keyed by the message id
//   assistant                 -> tool_use blocks: ProviderToolStart; text not already streamed
//                                (no partial messages, synthetic error messages): start, delta,
//                                stop
//   user                      -> tool_result blocks: ProviderToolEnd; text: ProviderUserEcho
//                                (a replay of our prompt also sets `replayed_uuid`)
//   result                    -> ProviderUsage, then ProviderTurnResult (completed; canceled when
//                                aborted by an interrupt; failed on any other error)
//   control_request can_use_tool -> ProviderPermissionRequest (+ `control_request`)
//   system task_started / task_notification -> ProviderTaskStarted / ProviderTaskNotification
//   system status with a new permissionMode -> ProviderModeChanged
//   control_response / control_cancel_request -> `control_response` / `cancel_request_id`
//   anything else             -> ProviderUnknown (kept as metadata, never dropped)
//   not JSON / not an object  -> ProviderError "protocol_garbage" (not fatal)
// Invalid UTF-8 anywhere in a line is repaired (U+FFFD) before anything leaves the parser.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/turn/provider_event.h"

namespace agentstream::providers::claude {

struct InitInfo {
  std::string session_id;
  std::string model;
  std::string permission_mode;
  std::string version;
  std::vector<std::string> slash_commands;
};

// A control_request sent by the CLI (can_use_tool, hook callbacks, ...).
struct ControlRequestIn {
  std::string request_id;
  std::string subtype;
  boost::json::object request;
};

// The CLI's answer to one of our control requests.
struct ControlResponseIn {
  std::string request_id;
  bool success = false;
  std::string error;
  boost::json::value response;
};

struct ParsedLine {
  std::vector<turn::ProviderEvent> events;
  std::optional<InitInfo> init;
  std::optional<ControlRequestIn> control_request;
  std::optional<ControlResponseIn> control_response;
  std::optional<std::string> cancel_request_id;  // the CLI stopped waiting on this request
  bool turn_result = false;                      // a `result` line: the CLI's turn ended
  // The uuid of one of our prompts the CLI replayed (isReplay): it took the prompt in now.
  std::optional<std::string> replayed_uuid;
};

// Stateful only across the lines of one process (the current message id of partial messages,
// which messages already streamed their text, the current permission mode). Not thread-safe.
class ClaudeStreamParser {
 public:
  ParsedLine Parse(std::string_view line);
  // A stdout line longer than the framing limit: a non-fatal ProviderError "protocol_oversize".
  ParsedLine Oversize(std::size_t kept_bytes, std::size_t dropped_bytes) const;

 private:
  void OnStreamEvent(const boost::json::object& o, ParsedLine& out);
  void OnAssistant(const boost::json::object& o, ParsedLine& out);
  void OnUser(const boost::json::object& o, ParsedLine& out);
  void OnControlRequest(const boost::json::object& o, ParsedLine& out);
  void OnSystem(const boost::json::object& o, ParsedLine& out);
  void OnResult(const boost::json::object& o, ParsedLine& out);

  std::string current_message_;
  std::optional<std::string> stop_reason_;
  std::set<std::string> streamed_;  // message ids whose text came as partial deltas
  std::set<std::string> started_;   // message ids a start was emitted for
  std::string mode_;
};

// Parses a JSON text accepting invalid UTF-8, then repairs every string (keys and values) and
// turns a number beyond the range of a double into null (wire::NullNonFinite). nullopt when
// `text` is not JSON.
std::optional<boost::json::value> ParseJsonRepaired(std::string_view text);

// Plain text of a message `content`: a string, or the text blocks of an array, concatenated.
std::string ContentText(const boost::json::value& content);

}  // namespace agentstream::providers::claude
