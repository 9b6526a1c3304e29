#include "acp_server/acp_updates.h"

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/ascii.h"
#include "core/event_codec.h"
#include "core/timeline/assembler.h"

namespace agentstream::acp_server {

namespace json = boost::json;
using timeline::ProjectedItem;
using timeline::ToolCallBody;
using timeline::ToolCallState;

namespace {

void AddKnown(std::vector<Choice>& known, const std::string& value) {
  if (value.empty()) return;
  if (std::none_of(known.begin(), known.end(), [&](const Choice& c) { return c.id == value; }))
    known.push_back(Choice{value, ""});
}

// A choice's name for a person: its label, else its id.
const std::string& NameOf(const Choice& c) { return c.label.empty() ? c.id : c.label; }

json::object Select(std::string_view id, std::string_view name, std::string_view category,
                    const std::string& current, const std::vector<Choice>& known) {
  json::array options;
  for (const Choice& c : known) options.push_back({{"value", c.id}, {"name", NameOf(c)}});
  return {{"id", id},
          {"name", name},
          {"category", category},
          {"type", "select"},
          {"currentValue", current},
          {"options", std::move(options)}};
}

json::object TextBlock(std::string_view text) { return {{"type", "text"}, {"text", text}}; }

json::object Chunk(std::string_view update, std::string_view message_id, json::object content) {
  return {{"sessionUpdate", update}, {"messageId", message_id}, {"content", std::move(content)}};
}

// A payload as its stored JSON object: the names of its enums (a permission option's kind, a plan
// entry's status) are ACP's own, so they are taken from the one table that writes them.
json::object Stored(const Payload& payload) {
  return json::parse(EncodePayload(payload)).as_object();
}

// "Bash: ls -la" from a call's name and its input's command, or its title when it has one.
std::string ToolTitle(const ToolCallBody& tool) {
  if (tool.title && !tool.title->empty()) return *tool.title;
  if (tool.input.is_object()) {
    const json::value* command = tool.input.as_object().if_contains("command");
    if (command && command->is_string())
      return tool.name + ": " + std::string(command->as_string());
  }
  return tool.name.empty() ? std::string("tool") : tool.name;
}

// A user message's attachments as content blocks: images with their data, anything with a URI as
// a resource link; others have nothing an editor could show.
void AttachmentChunks(const UserMessage& message, const std::string& id, json::array& out) {
  for (const Attachment& a : message.attachments) {
    if (a.kind == "image" && a.data) {
      json::object image{{"type", "image"}, {"mimeType", a.mime_type}, {"data", *a.data}};
      if (a.uri) image["uri"] = *a.uri;
      out.push_back(Chunk("user_message_chunk", id, std::move(image)));
    } else if (a.uri) {
      out.push_back(Chunk("user_message_chunk", id,
                          {{"type", "resource_link"},
                           {"uri", *a.uri},
                           {"name", a.name.value_or(*a.uri)},
                           {"mimeType", a.mime_type}}));
    }
  }
}

}  // namespace

void SessionSettings::SetModel(const std::string& value) {
  model = value;
  AddKnown(known_models, value);
}

void SessionSettings::SetMode(const std::string& value) {
  mode = value;
  AddKnown(known_modes, value);
}

void SessionSettings::Offer(const CapabilitiesChanged& capabilities) {
  if (!capabilities.models.empty()) {
    known_models = capabilities.models;
    AddKnown(known_models, model);
  }
  if (!capabilities.modes.empty()) {
    known_modes = capabilities.modes;
    AddKnown(known_modes, mode);
  }
  thinking_options = capabilities.thinking_options;
  AddKnown(thinking_options, thinking);
  commands = capabilities.commands;
}

json::array ConfigOptionsJson(const SessionSettings& s) {
  json::array out;
  if (!s.model.empty()) out.push_back(Select("model", "Model", "model", s.model, s.known_models));
  if (!s.mode.empty()) out.push_back(Select("mode", "Mode", "mode", s.mode, s.known_modes));
  if (!s.thinking_options.empty()) {
    const std::string& current = s.thinking.empty() ? s.thinking_options.front().id : s.thinking;
    out.push_back(Select("thinking", "Thinking", "thought_level", current, s.thinking_options));
  }
  return out;
}

json::value ModesJson(const SessionSettings& s) {
  if (s.mode.empty()) return nullptr;
  json::array modes;
  for (const Choice& c : s.known_modes) modes.push_back({{"id", c.id}, {"name", NameOf(c)}});
  return json::object{{"currentModeId", s.mode}, {"availableModes", std::move(modes)}};
}

json::object CommandsUpdateJson(const SessionSettings& s) {
  json::array commands;
  for (const CommandInfo& c : s.commands)
    commands.push_back({{"name", c.name}, {"description", c.description}});
  return {{"sessionUpdate", "available_commands_update"},
          {"availableCommands", std::move(commands)}};
}

std::string_view ToolKindFor(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 22> kKinds = {{
      {"bash", "execute"},      {"shell", "execute"},
      {"exec", "execute"},      {"exec_command", "execute"},
      {"read", "read"},         {"read_file", "read"},
      {"view", "read"},         {"edit", "edit"},
      {"multiedit", "edit"},    {"write", "edit"},
      {"write_file", "edit"},   {"apply_patch", "edit"},
      {"notebookedit", "edit"}, {"grep", "search"},
      {"glob", "search"},       {"search", "search"},
      {"ls", "search"},         {"webfetch", "fetch"},
      {"fetch", "fetch"},       {"websearch", "fetch"},
      {"todowrite", "think"},   {"think", "think"},
  }};
  const std::string lower = AsciiLowered(name);
  for (const auto& [tool, kind] : kKinds)
    if (lower == tool) return kind;
  return "other";
}

std::string_view ToolStatusName(ToolCallState state) {
  switch (state) {
    case ToolCallState::kPending:
      return "pending";
    case ToolCallState::kRunning:
      return "in_progress";
    case ToolCallState::kCompleted:
      return "completed";
    case ToolCallState::kFailed:
    case ToolCallState::kCanceled:
      return "failed";
  }
  return "failed";
}

Result<PermissionAnswer> ReadPermissionAnswer(const PermissionRequested& request,
                                              const json::value& result) {
  const json::object* outcome = nullptr;
  if (result.is_object()) {
    const json::value* o = result.as_object().if_contains("outcome");
    if (o && o->is_object()) outcome = &o->as_object();
  }
  if (outcome == nullptr)
    return Error(ErrorCode::kInvalidArgument, "a permission answer needs an outcome object");
  const json::value* kind = outcome->if_contains("outcome");
  if (kind && kind->is_string() && kind->as_string() == "cancelled")
    return PermissionAnswer{false, std::nullopt, "cancelled in the editor"};
  const json::value* option = outcome->if_contains("optionId");
  if (!kind || !kind->is_string() || kind->as_string() != "selected" || !option ||
      !option->is_string())
    return Error(ErrorCode::kInvalidArgument,
                 "a permission outcome is {outcome: \"selected\", optionId} or \"cancelled\"");
  const std::string id(option->as_string());
  if (request.options.empty()) {  // the options offered were our own "allow" and "deny"
    if (id != "allow" && id != "deny")
      return Error(ErrorCode::kInvalidArgument, "no permission option " + id);
    return PermissionAnswer{id == "allow", std::nullopt, ""};
  }
  for (const PermissionOption& o : request.options) {
    if (o.id != id) continue;
    const bool allow =
        o.kind == PermissionOptionKind::kAllowOnce || o.kind == PermissionOptionKind::kAllowAlways;
    return PermissionAnswer{allow, id, ""};
  }
  return Error(ErrorCode::kInvalidArgument, "no permission option " + id);
}

json::object UpdateMapper::Notification(const Event& event, json::object update) const {
  json::object meta{{"cursor", FormatCursor(event.cursor())},
                    {"kind", EventKindName(event.kind())}};
  if (event.turn) meta["turn"] = event.turn->str();
  return {{"sessionId", session_id_},
          {"update", std::move(update)},
          {"_meta", json::object{{"agentstream", std::move(meta)}}}};
}

json::object UpdateMapper::ToolUpdate(const ProjectedItem& item, bool first) const {
  const auto& tool = std::get<ToolCallBody>(item.body);
  json::object u{{"sessionUpdate", first ? "tool_call" : "tool_call_update"},
                 {"toolCallId", tool.call_id.str()},
                 {"status", ToolStatusName(tool.state)}};
  if (first) {
    u["title"] = ToolTitle(tool);
    u["kind"] = ToolKindFor(tool.name);
    u["rawInput"] = tool.input;
    if (!tool.name.empty()) u["name"] = tool.name;
  }
  json::array content;
  if (!tool.output.empty())
    content.push_back({{"type", "content"}, {"content", TextBlock(tool.output)}});
  if (tool.error) content.push_back({{"type", "content"}, {"content", TextBlock(*tool.error)}});
  if (!content.empty() || !first) u["content"] = std::move(content);
  if (tool.state != ToolCallState::kRunning && tool.state != ToolCallState::kPending) {
    json::object raw{{"output", tool.output},
                     {"truncated", tool.truncated},
                     {"state", timeline::ToolCallStateName(tool.state)}};
    if (tool.error) raw["error"] = *tool.error;
    u["rawOutput"] = std::move(raw);
  }
  return u;
}

void UpdateMapper::FoldTool(const Event& event, std::vector<json::object>& out) {
  const std::optional<timeline::ItemKey> key = timeline::ItemKeyOf(event);
  if (!key) return;
  const std::string id = key->key.substr(2);  // "t:<call id>"
  auto it = tools_.find(id);
  const bool first = it == tools_.end();
  if (first) {
    if (tools_.size() >= kMaxOpenTools) {  // forget the oldest open call
      tools_.erase(tool_order_.front());
      tool_order_.erase(tool_order_.begin());
    }
    it = tools_.emplace(id, timeline::NewItem(*key, event)).first;
    tool_order_.push_back(id);
  }
  timeline::FoldIntoItem(it->second, event);
  out.push_back(Notification(event, ToolUpdate(it->second, first)));
  if (std::holds_alternative<ToolCallEnd>(event.payload)) {
    tools_.erase(it);
    tool_order_.erase(std::find(tool_order_.begin(), tool_order_.end(), id));
  }
}

json::object UpdateMapper::PermissionParams(const PermissionRequested& p) const {
  json::array options;
  const json::object stored = Stored(p);
  const json::value* list = stored.if_contains("options");
  for (const json::value& o : list && list->is_array() ? list->as_array() : json::array()) {
    const std::string id(o.at("id").as_string()), label(o.at("label").as_string());
    options.push_back(
        {{"optionId", id}, {"name", label.empty() ? id : label}, {"kind", o.at("kind")}});
  }
  if (options.empty()) {
    options.push_back({{"optionId", "allow"}, {"name", "Allow"}, {"kind", "allow_once"}});
    options.push_back({{"optionId", "deny"}, {"name", "Deny"}, {"kind", "reject_once"}});
  }
  const std::string call = p.call_id ? p.call_id->str() : p.request_id.str();
  json::object tool{{"toolCallId", call},
                    {"title", p.title},
                    {"kind", ToolKindFor(p.tool_name.value_or(""))},
                    {"status", "pending"}};
  if (!p.input.is_null()) tool["rawInput"] = p.input;
  return {
      {"sessionId", session_id_},
      {"toolCall", std::move(tool)},
      {"options", std::move(options)},
      {"_meta", json::object{{"agentstream", json::object{{"requestId", p.request_id.str()}}}}}};
}

namespace {

// A plan as ACP's `plan` update: its entries, each with a priority (ACP requires one).
json::object PlanUpdate(const Plan& plan) {
  json::array entries;
  json::object stored = Stored(plan);
  json::value* list = stored.if_contains("entries");
  if (list && list->is_array()) list->as_array().swap(entries);
  for (json::value& e : entries) {
    if (!e.as_object().contains("priority")) e.as_object()["priority"] = "medium";
  }
  return {{"sessionUpdate", "plan"}, {"entries", std::move(entries)}};
}

}  // namespace

// A permission request: a pending update of the tool call that asked, or a tool call of its own.
void UpdateMapper::MapPermission(const Event& event, const PermissionRequested& p,
                                 std::vector<json::object>& out) {
  json::object u{{"sessionUpdate", p.call_id ? "tool_call_update" : "tool_call"},
                 {"toolCallId", p.call_id ? p.call_id->str() : p.request_id.str()},
                 {"status", "pending"},
                 {"title", p.title}};
  if (!p.call_id) u["kind"] = ToolKindFor(p.tool_name.value_or(""));
  if (permission_calls_.size() >= kMaxOpenTools) permission_calls_.erase(permission_calls_.begin());
  permission_calls_[p.request_id.str()] = {p.call_id ? p.call_id->str() : p.request_id.str(),
                                           p.call_id.has_value()};
  out.push_back(Notification(event, std::move(u)));
}

// A permission's answer: a tool call that asked runs on when allowed; a permission of its own is
// then done.
void UpdateMapper::MapPermissionResolved(const Event& event, const PermissionResolved& p,
                                         std::vector<json::object>& out) {
  auto it = permission_calls_.find(p.request_id.str());
  if (it == permission_calls_.end()) return;
  const bool allow = p.decision == PermissionDecision::kAllow;
  const char* status = !allow ? "failed" : it->second.second ? "in_progress" : "completed";
  out.push_back(Notification(event, {{"sessionUpdate", "tool_call_update"},
                                     {"toolCallId", it->second.first},
                                     {"status", status}}));
  permission_calls_.erase(it);
}

std::vector<json::object> UpdateMapper::Map(const Event& event) {
  std::vector<json::object> out;
  const std::string key = [&] {
    auto k = timeline::ItemKeyOf(event);
    return k ? k->key : std::string();
  }();
  auto chunk = [&](std::string_view kind, std::string_view text) {
    if (!text.empty()) out.push_back(Notification(event, Chunk(kind, key, TextBlock(text))));
  };
  auto config = [&] {
    out.push_back(Notification(event, {{"sessionUpdate", "config_option_update"},
                                       {"configOptions", ConfigOptionsJson(settings_)}}));
  };
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, SessionCreated>) {
          if (p.model) settings_.SetModel(*p.model);
          if (p.mode) settings_.SetMode(*p.mode);
          if (p.title && !p.title->empty())
            out.push_back(Notification(
                event, {{"sessionUpdate", "session_info_update"}, {"title", *p.title}}));
        } else if constexpr (std::is_same_v<T, UserMessage>) {
          chunk("user_message_chunk", p.text);
          json::array extra;
          AttachmentChunks(p, key, extra);
          for (json::value& u : extra) out.push_back(Notification(event, std::move(u.as_object())));
        } else if constexpr (std::is_same_v<T, AssistantMessageDelta>) {
          chunk("agent_message_chunk", p.text);
        } else if constexpr (std::is_same_v<T, Reasoning>) {
          chunk("agent_thought_chunk", p.text);
        } else if constexpr (std::is_same_v<T, ToolCallStart> ||
                             std::is_same_v<T, ToolCallOutput> || std::is_same_v<T, ToolCallEnd>) {
          FoldTool(event, out);
        } else if constexpr (std::is_same_v<T, PermissionRequested>) {
          MapPermission(event, p, out);
        } else if constexpr (std::is_same_v<T, PermissionResolved>) {
          MapPermissionResolved(event, p, out);
        } else if constexpr (std::is_same_v<T, Plan>) {
          out.push_back(Notification(event, PlanUpdate(p)));
        } else if constexpr (std::is_same_v<T, ModeChanged>) {
          settings_.SetMode(p.mode);
          out.push_back(Notification(
              event, {{"sessionUpdate", "current_mode_update"}, {"currentModeId", p.mode}}));
          config();
        } else if constexpr (std::is_same_v<T, ModelChanged>) {
          settings_.SetModel(p.model);
          config();
        } else if constexpr (std::is_same_v<T, ThinkingOptionChanged>) {
          settings_.thinking = p.option.value_or("");
          AddKnown(settings_.thinking_options, settings_.thinking);
          config();
        } else if constexpr (std::is_same_v<T, CapabilitiesChanged>) {
          settings_.Offer(p);
          out.push_back(Notification(event, CommandsUpdateJson(settings_)));
          config();
        } else if constexpr (std::is_same_v<T, ErrorEvent>) {
          chunk("agent_message_chunk", "Error (" + p.code + "): " + p.message);
        } else if constexpr (std::is_same_v<T, TurnFailed>) {
          chunk("agent_message_chunk", "Turn failed (" + p.code + "): " + p.message);
        } else if constexpr (std::is_same_v<T, Notice>) {
          chunk("agent_message_chunk",
                (p.level == NoticeLevel::kWarning ? "Warning: " : "Notice: ") + p.text);
        } else if constexpr (std::is_same_v<T, AuthorizationRequired>) {
          chunk("agent_message_chunk",
                "Authorization required: " + p.message + (p.url ? " " + *p.url : std::string()));
        } else if constexpr (std::is_same_v<T, AuthorizationCompleted>) {
          chunk("agent_message_chunk", p.granted ? " (granted)" : " (refused)");
        }
        // Not mapped (docs/acp.md): session.forked, session.rewound, turn.started,
        // turn.completed and turn.canceled (the prompt's answer carries them), prompt.queued,
        // prompt.canceled, assistant.message.start / end, thinking.option.changed, usage,
        // provider.metadata, subagent.event.
      },
      event.payload);
  return out;
}

}  // namespace agentstream::acp_server
