#include "providers/claude/claude_parser.h"

#include <boost/json.hpp>

#include "core/utf8.h"
#include "providers/wire_fields.h"

namespace agentstream::providers::claude {

namespace json = boost::json;
using namespace agentstream::turn;  // NOLINT(google-build-using-namespace): the event vocabulary

namespace {

void Repair(json::value& v) {
  if (v.is_string()) {
    const json::string& s = v.as_string();
    if (!IsValidUtf8(std::string_view(s.data(), s.size())))
      v = json::string(SanitizeUtf8(std::string_view(s.data(), s.size())));
  } else if (v.is_array()) {
    for (json::value& e : v.as_array()) Repair(e);
  } else if (v.is_object()) {
    json::object& o = v.as_object();
    bool bad_key = false;
    for (auto& kv : o) {
      Repair(kv.value());
      bad_key = bad_key || !IsValidUtf8(std::string_view(kv.key().data(), kv.key().size()));
    }
    if (bad_key) {
      json::object fixed;
      for (auto& kv : o)
        fixed[SanitizeUtf8(std::string_view(kv.key().data(), kv.key().size()))] = kv.value();
      v = std::move(fixed);
    }
  }
}

using wire::Bool;
using wire::Int;
using wire::Obj;
using wire::Str;

ProviderUnknown Unknown(std::string type, const json::object& o) {
  return ProviderUnknown{std::move(type), json::value(o)};
}
std::string Clip(std::string_view s, std::size_t n) {
  return BoundUtf8(s.substr(0, std::min(s.size(), n + 4)), n).text;
}

}  // namespace

std::optional<json::value> ParseJsonRepaired(std::string_view text) {
  json::parse_options options;
  options.allow_invalid_utf8 = true;
  boost::system::error_code ec;
  json::value v = json::parse(text, ec, {}, options);
  if (ec) return std::nullopt;
  Repair(v);
  wire::NullNonFinite(v);
  return v;
}

std::string ContentText(const json::value& content) {
  if (content.is_string()) return std::string(content.as_string());
  std::string out;
  if (!content.is_array()) return out;
  for (const json::value& b : content.as_array()) {
    if (!b.is_object()) continue;
    if (Str(b.as_object(), "type") == "text") out += Str(b.as_object(), "text");
  }
  return out;
}

ParsedLine ClaudeStreamParser::Oversize(std::size_t kept_bytes, std::size_t dropped_bytes) const {
  ParsedLine out;
  out.events.push_back(ProviderError{"protocol_oversize",
                                     "a stdout line of " +
                                         std::to_string(kept_bytes + dropped_bytes) +
                                         " bytes exceeded the limit and was discarded",
                                     false});
  return out;
}

ParsedLine ClaudeStreamParser::Parse(std::string_view line) {
  ParsedLine out;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.find_first_not_of(" \t") == std::string_view::npos) return out;
  std::optional<json::value> parsed = ParseJsonRepaired(line);
  if (!parsed || !parsed->is_object()) {
    out.events.push_back(
        ProviderError{"protocol_garbage", "unparseable stdout line: " + Clip(line, 200), false});
    return out;
  }
  const json::object& o = parsed->as_object();
  const std::string type = Str(o, "type");
  if (type == "stream_event") {
    OnStreamEvent(o, out);
  } else if (type == "assistant") {
    OnAssistant(o, out);
  } else if (type == "user") {
    OnUser(o, out);
  } else if (type == "system") {
    OnSystem(o, out);
  } else if (type == "result") {
    OnResult(o, out);
  } else if (type == "control_request") {
    OnControlRequest(o, out);
  } else if (type == "control_response") {
    const json::object* r = Obj(o, "response");
    ControlResponseIn in;
    if (r) {
      in.request_id = Str(*r, "request_id");
      in.success = Str(*r, "subtype") == "success";
      in.error = Str(*r, "error");
      if (const json::value* body = r->if_contains("response")) in.response = *body;
    }
    out.control_response = std::move(in);
  } else if (type == "control_cancel_request") {
    out.cancel_request_id = Str(o, "request_id");
  } else if (type != "keep_alive") {
    out.events.push_back(Unknown(type.empty() ? "untyped" : type, o));
  }
  return out;
}

void ClaudeStreamParser::OnUser(const json::object& o, ParsedLine& out) {
  const json::object* msg = Obj(o, "message");
  const json::value* content = msg ? msg->if_contains("content") : nullptr;
  if (content && content->is_array()) {
    for (const json::value& b : content->as_array()) {
      if (!b.is_object() || Str(b.as_object(), "type") != "tool_result") continue;
      const json::object& r = b.as_object();
      const json::value* rc = r.if_contains("content");
      const bool error = Bool(r, "is_error");
      ProviderToolEnd end{ToolCallId(Str(r, "tool_use_id")),
                          error ? ToolCallStatus::kFailed : ToolCallStatus::kCompleted};
      std::string text = rc ? ContentText(*rc) : std::string();
      if (error) end.error = text;
      end.output = std::move(text);
      out.events.push_back(std::move(end));
    }
  }
  const std::string text = content ? ContentText(*content) : std::string();
  if (Bool(o, "isReplay") && !Str(o, "uuid").empty()) out.replayed_uuid = Str(o, "uuid");
  if (!text.empty()) {
    std::optional<MessageId> id;
    if (!Str(o, "uuid").empty()) id = MessageId(Str(o, "uuid"));
    out.events.push_back(ProviderUserEcho{id, std::nullopt, text});
  }
}

void ClaudeStreamParser::OnControlRequest(const json::object& o, ParsedLine& out) {
  const json::object* req = Obj(o, "request");
  ControlRequestIn in{Str(o, "request_id"), req ? Str(*req, "subtype") : "",
                      req ? *req : json::object()};
  if (in.subtype == "can_use_tool") {
    ProviderPermissionRequest p;
    p.request_id = RequestId(in.request_id);
    if (!Str(in.request, "tool_use_id").empty())
      p.call_id = ToolCallId(Str(in.request, "tool_use_id"));
    p.tool_name = Str(in.request, "tool_name");
    const std::string what = Str(in.request, "description");
    p.title = *p.tool_name + (what.empty() ? "" : ": " + what);
    if (const json::value* input = in.request.if_contains("input")) p.input = *input;
    p.options = {{"allow", PermissionOptionKind::kAllowOnce, "Allow"},
                 {"deny", PermissionOptionKind::kRejectOnce, "Deny"}};
    out.events.push_back(std::move(p));
  } else {
    out.events.push_back(Unknown("control_request/" + in.subtype, o));
  }
  out.control_request = std::move(in);
}

void ClaudeStreamParser::OnStreamEvent(const json::object& o, ParsedLine& out) {
  const json::object* ev = Obj(o, "event");
  if (!ev) return out.events.push_back(Unknown("stream_event", o));
  const std::string type = Str(*ev, "type");
  if (type == "message_start") {
    const json::object* msg = Obj(*ev, "message");
    current_message_ = msg ? Str(*msg, "id") : "";
    stop_reason_.reset();
    started_.insert(current_message_);
    out.events.push_back(ProviderMessageStart{MessageId(current_message_)});
  } else if (type == "content_block_delta") {
    const json::object* d = Obj(*ev, "delta");
    const std::string dt = d ? Str(*d, "type") : "";
    if (dt == "text_delta") {
      streamed_.insert(current_message_);
      out.events.push_back(ProviderTextDelta{MessageId(current_message_), Str(*d, "text")});
    } else if (dt == "thinking_delta") {
      streamed_.insert(current_message_);
      out.events.push_back(
          ProviderReasoningDelta{MessageId(current_message_), Str(*d, "thinking")});
    }  // input_json_delta / signature_delta: the complete input comes with `assistant`
  } else if (type == "message_delta") {
    const json::object* d = Obj(*ev, "delta");
    if (d && !Str(*d, "stop_reason").empty()) stop_reason_ = Str(*d, "stop_reason");
  } else if (type == "message_stop") {
    out.events.push_back(ProviderMessageStop{MessageId(current_message_), stop_reason_});
  } else if (type != "content_block_start" && type != "content_block_stop" && type != "ping") {
    out.events.push_back(Unknown("stream_event/" + type, o));
  }
}

void ClaudeStreamParser::OnAssistant(const json::object& o, ParsedLine& out) {
  const json::object* msg = Obj(o, "message");
  if (!msg) return out.events.push_back(Unknown("assistant", o));
  const std::string id = Str(*msg, "id");
  const json::value* content = msg->if_contains("content");
  if (!content || !content->is_array()) return;
  const bool streamed = streamed_.count(id) > 0;
  std::string text;
  for (const json::value& b : content->as_array()) {
    if (!b.is_object()) continue;
    const json::object& block = b.as_object();
    const std::string bt = Str(block, "type");
    if (bt == "text" && !streamed) {
      text += Str(block, "text");
    } else if (bt == "thinking" && !streamed) {
      out.events.push_back(ProviderReasoningDelta{MessageId(id), Str(block, "thinking")});
    } else if (bt == "tool_use") {
      ProviderToolStart t{ToolCallId(Str(block, "id")), Str(block, "name")};
      if (const json::value* input = block.if_contains("input")) t.input = *input;
      if (const json::object* in = Obj(block, "input"); in && !Str(*in, "description").empty())
        t.title = Str(*in, "description");
      t.parent_message_id = MessageId(id);
      out.events.push_back(std::move(t));
    }
  }
  if (text.empty()) return;
  // Not streamed as partial messages (a synthetic API-error message, or partials disabled).
  if (started_.insert(id).second) out.events.push_back(ProviderMessageStart{MessageId(id)});
  out.events.push_back(ProviderTextDelta{MessageId(id), std::move(text)});
  std::optional<std::string> stop;
  if (!Str(*msg, "stop_reason").empty()) stop = Str(*msg, "stop_reason");
  out.events.push_back(ProviderMessageStop{MessageId(id), stop});
}

void ClaudeStreamParser::OnSystem(const json::object& o, ParsedLine& out) {
  const std::string subtype = Str(o, "subtype");
  if (subtype == "init") {
    InitInfo info{Str(o, "session_id"),
                  Str(o, "model"),
                  Str(o, "permissionMode"),
                  Str(o, "claude_code_version"),
                  {}};
    if (const json::value* cmds = o.if_contains("slash_commands"); cmds && cmds->is_array())
      for (const json::value& c : cmds->as_array())
        if (c.is_string()) info.slash_commands.emplace_back(c.as_string());
    if (!info.permission_mode.empty() && info.permission_mode != mode_) {
      if (!mode_.empty()) out.events.push_back(ProviderModeChanged{info.permission_mode});
      mode_ = info.permission_mode;
    }
    out.events.push_back(ProviderTurnBegan{});
    out.init = std::move(info);
  } else if (subtype == "status") {
    const std::string mode = Str(o, "permissionMode");
    if (!mode.empty() && mode != mode_) {
      mode_ = mode;
      out.events.push_back(ProviderModeChanged{mode});
    }
  } else if (subtype == "task_started") {
    out.events.push_back(ProviderTaskStarted{Str(o, "task_id"), Str(o, "description")});
  } else if (subtype == "task_notification") {
    out.events.push_back(
        ProviderTaskNotification{Str(o, "task_id"), Str(o, "status"), Str(o, "summary")});
  } else {
    out.events.push_back(Unknown("system/" + subtype, o));
  }
}

void ClaudeStreamParser::OnResult(const json::object& o, ParsedLine& out) {
  out.turn_result = true;
  if (const json::object* u = Obj(o, "usage")) {
    Usage usage;
    usage.input_tokens = Int(*u, "input_tokens");
    usage.output_tokens = Int(*u, "output_tokens");
    usage.cache_read_tokens = Int(*u, "cache_read_input_tokens");
    usage.cache_write_tokens = Int(*u, "cache_creation_input_tokens");
    if (const json::value* c = o.if_contains("total_cost_usd"); c && c->is_number())
      usage.cost_usd = c->to_number<double>();
    out.events.push_back(ProviderUsage{usage});
  }
  const std::string subtype = Str(o, "subtype");
  ProviderTurnResult r;
  if (!Str(o, "stop_reason").empty()) r.stop_reason = Str(o, "stop_reason");
  const bool error = Bool(o, "is_error") || subtype != "success";
  if (error && Str(o, "terminal_reason").rfind("aborted", 0) == 0) {
    r.outcome = TurnOutcome::kCanceled;
    r.message = "interrupted";
  } else if (error) {
    r.outcome = TurnOutcome::kFailed;
    const std::int64_t status = Int(o, "api_error_status");
    r.error_code = status ? "api_error_" + std::to_string(status) : subtype;
    r.message = Str(o, "result");
    if (const json::value* errs = o.if_contains("errors"); errs && errs->is_array())
      for (const json::value& e : errs->as_array())
        if (e.is_string())
          r.message += (r.message.empty() ? "" : "; ") + std::string(e.as_string());
  }
  out.events.push_back(std::move(r));
  streamed_.clear();  // message ids do not repeat across turns: keep memory bounded
  started_.clear();
}

}  // namespace agentstream::providers::claude
