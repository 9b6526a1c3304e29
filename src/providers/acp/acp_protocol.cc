#include "providers/acp/acp_protocol.h"

#include <array>
#include <filesystem>

#include "providers/wire_fields.h"

namespace agentstream::providers::acp {

namespace json = boost::json;
namespace fs = std::filesystem;
using turn::ProviderEvent;

namespace {

using wire::Obj;
using wire::Str;

// The text of a tool call's content list ([{type:"content",content:Block}|{type:"diff"}|...]).
std::string ToolContentText(const json::value& content) {
  if (!content.is_array()) return {};
  std::string out;
  for (const json::value& item : content.as_array()) {
    if (!item.is_object()) continue;
    const json::object& o = item.as_object();
    const std::string type = Str(o, "type");
    std::string piece;
    if (type == "content" && o.contains("content")) piece = ContentText(o.at("content"));
    if (type == "diff") piece = "diff " + Str(o, "path");
    if (type == "terminal") piece = "terminal " + Str(o, "terminalId");
    if (piece.empty()) continue;
    if (!out.empty()) out += "\n";
    out += piece;
  }
  return out;
}

// rawOutput as text: a string as is, {output|stdout|content: string} by that field, else JSON.
std::string RawOutputText(const json::value& raw) {
  if (raw.is_string()) return std::string(raw.as_string());
  if (raw.is_object())
    for (const char* key : {"output", "stdout", "content"})
      if (const json::value* v = raw.as_object().if_contains(key); v && v->is_string())
        return std::string(v->as_string());
  if (raw.is_null()) return {};
  return json::serialize(raw);
}

}  // namespace

Result<AgentCommand> Preset(const std::string& name, const std::optional<std::string>& model,
                            const std::string& program) {
  AgentCommand c;
  c.name = "acp:" + name;
  if (name == "gemini") {
    c.argv = {"gemini", "--acp"};
    if (model && !model->empty()) c.argv.insert(c.argv.end(), {"-m", *model});
  } else if (name == "opencode") {
    c.argv = {"opencode", "acp"};
  } else if (name == "claude" || name == "claude-agent") {
    c.argv = {name == "claude" ? "claude-code-acp" : "claude-agent-acp"};
    // The Claude ACP adapters run the claude CLI, whose transcript (what session/load reads) is
    // written as the turn ends; the adapter exits at stdin EOF and its process group goes with
    // it, the CLI's last writes too.
    c.settle_after_turn = std::chrono::milliseconds(1000);
  } else if (name == "codex") {
    c.argv = {"codex-acp"};
    if (model && !model->empty()) c.argv.insert(c.argv.end(), {"-c", "model=\"" + *model + "\""});
    // codex-acp 0.16.0 answers a prompt whose model request failed before its turn has ended;
    // a prompt sent in between is accepted and never run (no model request follows).
    c.settle_after_failed_turn = std::chrono::milliseconds(1000);
  } else if (name == "qwen") {
    c.argv = {"qwen", "--acp"};
    if (model && !model->empty()) c.argv.insert(c.argv.end(), {"-m", *model});
    // qwen-code 0.15.10 appends a turn's reply to its chat file (what session/load replays) only
    // after it answered session/prompt; at stdin EOF it exits without that write.
    c.settle_after_turn = std::chrono::milliseconds(1000);
  } else {
    return Error(ErrorCode::kNotFound, "no ACP preset named \"" + name + "\"");
  }
  if (!program.empty()) c.argv[0] = program;
  return c;
}

std::vector<std::string> PresetNames() {
  return {"claude", "claude-agent", "codex", "gemini", "opencode", "qwen"};
}

Result<std::string> ConfinePath(const std::string& root, const std::string& path) {
  const fs::path p(path);
  if (!p.is_absolute()) return Error(ErrorCode::kInvalidArgument, "path is not absolute: " + path);
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::path(root), ec);
  if (ec) return Error(ErrorCode::kInvalidArgument, "bad working directory " + root);
  // weakly_canonical resolves the symlinks of the existing prefix and normalizes the rest.
  const fs::path full = fs::weakly_canonical(p, ec);
  if (ec) return Error(ErrorCode::kInvalidArgument, "bad path " + path);
  const fs::path rel = full.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    std::string message = "path ";
    message.append(path).append(" is outside the session's working directory ").append(root);
    return Error(ErrorCode::kInvalidArgument, std::move(message));
  }
  return full.string();
}

std::string ContentText(const json::value& block) {
  if (!block.is_object()) return {};
  const json::object& o = block.as_object();
  const std::string type = Str(o, "type");
  if (type == "text") return Str(o, "text");
  if (type == "resource_link") return "[" + Str(o, "uri") + "]";
  if (type == "resource") {
    if (const json::object* r = Obj(o, "resource")) {
      if (r->contains("text")) return Str(*r, "text");
      return "[" + Str(*r, "uri") + "]";
    }
  }
  if (!type.empty()) return "[" + type + "]";
  return {};
}

std::optional<std::string> ChooseOption(const std::vector<AcpOption>& options, bool allow) {
  // Named arrays: a conditional over two braced lists would copy a list whose array ends with the
  // full-expression, before the loop reads it.
  static constexpr std::array<const char*, 2> kAllow = {"allow_once", "allow_always"};
  static constexpr std::array<const char*, 2> kReject = {"reject_once", "reject_always"};
  for (const char* kind : allow ? kAllow : kReject)
    for (const AcpOption& o : options)
      if (o.kind == kind) return o.id;
  return std::nullopt;
}

MessageId AcpUpdateMapper::NewMessageId(std::string_view kind) {
  return MessageId(prefix_ + "_" + std::string(kind) + "_" + std::to_string(next_id_++));
}

std::vector<ProviderEvent> AcpUpdateMapper::CloseMessage(std::optional<std::string> stop_reason) {
  std::vector<ProviderEvent> out;
  if (open_message_)
    out.push_back(turn::ProviderMessageStop{*open_message_, std::move(stop_reason)});
  open_message_.reset();
  open_source_.reset();
  open_thought_.reset();
  return out;
}

std::vector<ProviderEvent> AcpUpdateMapper::CloseTools(ToolCallStatus status) {
  std::vector<ProviderEvent> out;
  for (const std::string& id : tools_started_)
    if (!tools_ended_.count(id)) {
      auto it = tool_output_.find(id);
      std::optional<std::string> output;
      if (it != tool_output_.end()) output = it->second;
      out.push_back(turn::ProviderToolEnd{ToolCallId(id), status, output, std::nullopt});
    }
  tools_started_.clear();
  tools_ended_.clear();
  tool_output_.clear();
  tool_kind_.clear();
  return out;
}

void AcpUpdateMapper::Chunk(const json::object& u, bool thought, std::vector<ProviderEvent>& out) {
  const json::value* content = u.if_contains("content");
  const std::string text = content ? ContentText(*content) : std::string();
  const std::string source = Str(u, "messageId");
  if (text.empty()) return;  // some agents open every message with an empty chunk
  if (thought) {
    if (!open_thought_) open_thought_ = NewMessageId("thought");
    out.push_back(turn::ProviderReasoningDelta{*open_thought_, text, std::nullopt});
    return;
  }
  if (open_message_ && !source.empty() && open_source_ && *open_source_ != source) {
    for (ProviderEvent& e : CloseMessage("end_turn")) out.push_back(std::move(e));
  }
  if (!open_message_) {
    open_message_ = NewMessageId("msg");
    if (!source.empty()) open_source_ = source;
    out.push_back(turn::ProviderMessageStart{*open_message_, std::nullopt, std::nullopt});
  }
  out.push_back(turn::ProviderTextDelta{*open_message_, text, std::nullopt, std::nullopt});
}

void AcpUpdateMapper::Tool(const json::object& u, std::vector<ProviderEvent>& out) {
  const std::string id = Str(u, "toolCallId");
  if (id.empty()) return;
  if (tools_ended_.count(id)) return;  // late updates of a finished call add nothing
  if (!tools_started_.count(id)) {
    // Text streamed before the tool call is a message of its own.
    for (ProviderEvent& e : CloseMessage("tool_use")) out.push_back(std::move(e));
    tools_started_.insert(id);
    std::string kind = Str(u, "kind");
    tool_kind_[id] = kind;
    const std::string title = Str(u, "title");
    json::value input = u.contains("rawInput") ? u.at("rawInput") : json::value(json::object{});
    out.push_back(
        turn::ProviderToolStart{ToolCallId(id), kind.empty() ? "other" : kind,
                                title.empty() ? std::nullopt : std::optional<std::string>(title),
                                std::move(input), std::nullopt, std::nullopt});
  }
  // The latest content replaces the earlier one (agents resend it whole); rawOutput stands in
  // when the content says nothing.
  if (const json::value* c = u.if_contains("content")) tool_output_[id] = ToolContentText(*c);
  if (auto it = tool_output_.find(id); it == tool_output_.end() || it->second.empty())
    if (const json::value* raw = u.if_contains("rawOutput"))
      if (std::string text = RawOutputText(*raw); !text.empty()) tool_output_[id] = text;
  const std::string status = Str(u, "status");
  if (status == "completed" || status == "failed") {
    tools_ended_.insert(id);
    std::optional<std::string> output;
    if (auto it = tool_output_.find(id); it != tool_output_.end() && !it->second.empty())
      output = it->second;
    std::optional<std::string> error;
    if (status == "failed") error = output.value_or("the tool call failed");
    out.push_back(turn::ProviderToolEnd{
        ToolCallId(id), status == "failed" ? ToolCallStatus::kFailed : ToolCallStatus::kCompleted,
        output, error});
    tool_output_.erase(id);
  }
}

std::vector<ProviderEvent> AcpUpdateMapper::EndTool(const std::string& id, ToolCallStatus status,
                                                    std::string error) {
  std::vector<ProviderEvent> out;
  if (!tools_started_.count(id) || tools_ended_.count(id)) return out;
  tools_ended_.insert(id);
  tool_output_.erase(id);
  out.push_back(turn::ProviderToolEnd{ToolCallId(id), status, std::nullopt, std::move(error)});
  return out;
}

std::vector<ProviderEvent> AcpUpdateMapper::AnnounceToolCall(const json::object& tool_call) {
  std::vector<ProviderEvent> out;
  json::object pending = tool_call;
  pending.erase("status");  // the request does not end the call
  Tool(pending, out);
  return out;
}

std::vector<ProviderEvent> AcpUpdateMapper::Map(const json::value& params) {
  std::vector<ProviderEvent> out;
  const json::object* p = params.is_object() ? &params.as_object() : nullptr;
  const json::object* u = p ? Obj(*p, "update") : nullptr;
  if (!u) {
    out.push_back(turn::ProviderUnknown{"acp.session/update.malformed", params});
    return out;
  }
  const std::string kind = Str(*u, "sessionUpdate");
  if (kind == "agent_message_chunk") {
    Chunk(*u, false, out);
  } else if (kind == "agent_thought_chunk") {
    Chunk(*u, true, out);
  } else if (kind == "user_message_chunk") {
    const json::value* content = u->if_contains("content");
    std::optional<MessageId> id;
    if (std::string m = Str(*u, "messageId"); !m.empty()) id = MessageId(m);
    out.push_back(
        turn::ProviderUserEcho{id, std::nullopt, content ? ContentText(*content) : std::string()});
  } else if (kind == "tool_call" || kind == "tool_call_update") {
    Tool(*u, out);
  } else if (kind == "plan") {
    turn::ProviderPlan plan;
    if (const json::value* entries = u->if_contains("entries"); entries && entries->is_array())
      for (const json::value& e : entries->as_array()) {
        if (!e.is_object()) continue;
        PlanEntry entry;
        entry.content = Str(e.as_object(), "content");
        const std::string st = Str(e.as_object(), "status");
        entry.status = st == "completed"     ? PlanEntryStatus::kCompleted
                       : st == "in_progress" ? PlanEntryStatus::kInProgress
                                             : PlanEntryStatus::kPending;
        if (std::string pr = Str(e.as_object(), "priority"); !pr.empty()) entry.priority = pr;
        plan.entries.push_back(std::move(entry));
      }
    out.push_back(std::move(plan));
  } else if (kind == "available_commands_update") {
    commands_.clear();
    if (const json::value* list = u->if_contains("availableCommands"); list && list->is_array())
      for (const json::value& c : list->as_array())
        if (c.is_object())
          commands_.push_back({Str(c.as_object(), "name"), Str(c.as_object(), "description")});
    out.push_back(turn::ProviderUnknown{"acp." + kind, *u});
  } else if (kind == "current_mode_update") {
    mode_ = Str(*u, "currentModeId");
    out.push_back(turn::ProviderModeChanged{mode_});
  } else {
    // usage_update, config_option_update, session_info_update, ...: kept as metadata.
    out.push_back(
        turn::ProviderUnknown{"acp." + (kind.empty() ? std::string("update") : kind), *u});
  }
  return out;
}

}  // namespace agentstream::providers::acp
