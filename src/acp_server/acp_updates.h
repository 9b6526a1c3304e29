// The mapping of a session log's events to Agent Client Protocol `session/update` notifications
// (docs/acp.md lists every event kind and what it becomes), and of permission requests to
// `session/request_permission` and back. Pure: events in, JSON out; no I/O, no clock.
//
// Every notification carries `_meta.agentstream = {cursor: "E:S", kind}` naming the log event it
// came from, so an editor (or a test) can tie each update to the log. Message chunks carry the
// timeline item key as their `messageId` ("a:<message>", "r:<message>", "#<seq>"), and tool calls
// their call id, so the updates of one timeline item can be told from the others.
//
// Threading: an UpdateMapper belongs to one session and is used by one thread.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/status.h"
#include "core/timeline/item.h"

namespace agentstream::acp_server {

// What a session's mode, model and thinking option are, and which values the editor is offered:
// the lists the agent's runtime reported (its last capabilities.changed), plus the current value,
// the `acp` command's defaults and every value the log has shown.
struct SessionSettings {
  std::string model;  // empty until known
  std::string mode;
  std::string thinking;  // empty: the runtime's default
  std::vector<Choice> known_models;
  std::vector<Choice> known_modes;
  std::vector<Choice> thinking_options;
  std::vector<CommandInfo> commands;

  void SetModel(const std::string& value);  // also adds it to known_models
  void SetMode(const std::string& value);
  // The runtime's lists replace the known ones (the current values stay offered).
  void Offer(const CapabilitiesChanged& capabilities);
};

// The `configOptions` of a session: a "model" and a "mode" select (each only once its current
// value is known), and a "thinking" select (category thought_level) once the runtime listed
// thinking options (its current value the one set, else the first option).
boost::json::array ConfigOptionsJson(const SessionSettings& settings);
// A SessionModeState {currentModeId, availableModes}, or null while the mode is unknown.
boost::json::value ModesJson(const SessionSettings& settings);
// An available_commands_update's update object: the runtime's slash commands.
boost::json::object CommandsUpdateJson(const SessionSettings& settings);

// The ACP ToolKind for a tool name ("Bash" -> "execute", "Read" -> "read", ...; else "other").
std::string_view ToolKindFor(std::string_view tool_name);

// Tool call state as ACP says it: pending, in_progress, completed, failed (canceled is failed).
std::string_view ToolStatusName(timeline::ToolCallState state);

// What an editor's answer to `session/request_permission` decides.
struct PermissionAnswer {
  bool allow = false;
  std::optional<std::string> option_id;  // the request's option chosen, if it offered options
  std::string message;                   // for the agent ("" when none)
};

// Reads a RequestPermissionResponse ({outcome: {outcome: "selected", optionId} | {outcome:
// "cancelled"}}) against the request it answers: an option of an allow kind allows, anything else
// (a reject option, "cancelled") denies. kInvalidArgument for a malformed result or an option the
// request did not offer.
Result<PermissionAnswer> ReadPermissionAnswer(const PermissionRequested& request,
                                              const boost::json::value& result);

// Maps one session's events, in log order. Keeps the open tool calls (at most kMaxOpenTools; the
// oldest is forgotten first), folded with the timeline's own assembler so that a tool call's
// status and bounded output are exactly the timeline item's.
class UpdateMapper {
 public:
  static constexpr std::size_t kMaxOpenTools = 1024;

  UpdateMapper(std::string session_id, SessionSettings settings)
      : session_id_(std::move(session_id)), settings_(std::move(settings)) {}

  // The `session/update` params ({sessionId, update, _meta}) `event` becomes: none, one or a few.
  std::vector<boost::json::object> Map(const Event& event);

  // The `session/request_permission` params for `request`. Its options are the request's (their
  // ids are the agent's); a request without options is offered allow_once "allow" and
  // reject_once "deny".
  boost::json::object PermissionParams(const PermissionRequested& request) const;

  const SessionSettings& settings() const { return settings_; }
  SessionSettings& settings() { return settings_; }

 private:
  boost::json::object Notification(const Event& event, boost::json::object update) const;
  boost::json::object ToolUpdate(const timeline::ProjectedItem& item, bool first) const;
  // Folds a tool call event into its open call and appends the update it makes.
  void FoldTool(const Event& event, std::vector<boost::json::object>& out);
  void MapPermission(const Event& event, const PermissionRequested& p,
                     std::vector<boost::json::object>& out);
  void MapPermissionResolved(const Event& event, const PermissionResolved& p,
                             std::vector<boost::json::object>& out);

  std::string session_id_;
  SessionSettings settings_;
  std::map<std::string, timeline::ProjectedItem> tools_;  // open tool calls by call id
  std::vector<std::string> tool_order_;                   // their ids, oldest first
  // Pending permissions (at most kMaxOpenTools): request id -> the tool call id their updates
  // name, and whether that call is the agent's own (else the permission is a call of its own).
  std::map<std::string, std::pair<std::string, bool>> permission_calls_;
};

}  // namespace agentstream::acp_server
