#include "acp_server/acp_shapes.h"

#include <fmt/core.h>
#include <time.h>

#include <algorithm>
#include <boost/json.hpp>
#include <charconv>
#include <tuple>

#include "api/api_json.h"
#include "core/json_hygiene.h"

namespace agentstream::acp_server {

namespace json = boost::json;
using jsonrpc::ErrorLine;

namespace {

std::string Str(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

// "2026-05-01T12:00:00.000Z" for milliseconds since the Unix epoch.
std::string Iso8601(TimestampMs ms) {
  const time_t seconds = static_cast<time_t>(ms / 1000);
  struct tm utc {};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms % 1000);
}

json::object SessionInfo(const api::AgentSnapshot& a) {
  json::object info{
      {"sessionId", a.id.str()}, {"cwd", a.cwd}, {"updatedAt", Iso8601(a.created_ms)}};
  info["title"] = a.title.empty() ? json::value(nullptr) : json::value(a.title);
  info["_meta"] = json::object{{"agentstream", json::object{{"provider", a.provider},
                                                            {"model", a.model},
                                                            {"mode", a.mode},
                                                            {"status", api::StatusName(a.status)},
                                                            {"cursor", FormatCursor(a.cursor)}}}};
  return info;
}

// Newest first; ties by id, so that the order (and a cursor into it) is total.
auto OrderKey(const api::AgentSnapshot& a) {
  return std::make_tuple(-a.created_ms, std::string_view(a.id.str()));
}

}  // namespace

json::object InitializeResult(std::string_view version) {
  return {{"protocolVersion", kProtocolVersion},
          {"agentCapabilities",
           {{"loadSession", true},
            {"promptCapabilities", {{"image", true}, {"audio", false}, {"embeddedContext", true}}},
            {"mcpCapabilities", {{"http", false}, {"sse", false}}},
            {"sessionCapabilities",
             {{"list", json::object{}}, {"resume", json::object{}}, {"close", json::object{}}}}}},
          {"authMethods", json::array{}},
          {"agentInfo", {{"name", "agentstream"}, {"title", "agentstream"}, {"version", version}}}};
}

Result<Submission> ReadPrompt(const json::value& prompt) {
  if (!prompt.is_array() || prompt.as_array().empty())
    return Error(ErrorCode::kInvalidArgument, "prompt must be a non-empty array of content blocks");
  Submission out;
  auto add_text = [&out](std::string_view text) {
    if (text.empty()) return;
    if (!out.text.empty()) out.text += "\n\n";
    out.text += text;
  };
  for (const json::value& block : prompt.as_array()) {
    if (!block.is_object())
      return Error(ErrorCode::kInvalidArgument, "a content block is an object");
    const json::object& b = block.as_object();
    const std::string type = Str(b, "type");
    if (type == "text") {
      add_text(Str(b, "text"));
    } else if (type == "image") {
      Attachment a{.kind = "image", .mime_type = Str(b, "mimeType")};
      if (const std::string data = Str(b, "data"); !data.empty()) a.data = data;
      if (const std::string uri = Str(b, "uri"); !uri.empty()) a.uri = uri;
      if (!a.data && !a.uri)
        return Error(ErrorCode::kInvalidArgument, "an image needs data or a uri");
      out.attachments.push_back(std::move(a));
    } else if (type == "resource_link") {
      const std::string name = Str(b, "name"), uri = Str(b, "uri");
      add_text("[" + (name.empty() ? uri : name) + "](" + uri + ")");
    } else if (type == "resource") {
      const json::value* r = b.if_contains("resource");
      if (!r || !r->is_object())
        return Error(ErrorCode::kInvalidArgument, "a resource block needs a resource");
      const std::string uri = Str(r->as_object(), "uri");
      if (r->as_object().contains("text")) {
        add_text("<resource uri=\"" + uri + "\">\n" + Str(r->as_object(), "text") +
                 "\n</resource>");
      } else {
        add_text(fmt::format("[{0}]({0})", uri));
      }
    } else {
      return Error(ErrorCode::kInvalidArgument, "unsupported content block type \"" + type + "\"");
    }
  }
  if (out.text.empty() && out.attachments.empty())
    return Error(ErrorCode::kInvalidArgument, "the prompt is empty");
  return out;
}

std::optional<TurnEnd> TurnEndOf(const Payload& payload) {
  if (const auto* done = std::get_if<TurnCompleted>(&payload)) {
    const std::string reason = done->stop_reason.value_or("end_turn");
    const bool known = reason == "end_turn" || reason == "max_tokens" ||
                       reason == "max_turn_requests" || reason == "refusal";
    return TurnEnd{TurnEnd::Kind::kCompleted, known ? reason : "end_turn", "", ""};
  }
  if (std::holds_alternative<TurnCanceled>(payload))
    return TurnEnd{TurnEnd::Kind::kCanceled, "", "", ""};
  if (const auto* failed = std::get_if<TurnFailed>(&payload))
    return TurnEnd{TurnEnd::Kind::kFailed, "", failed->code, failed->message};
  return std::nullopt;
}

std::string PromptAnswerLine(const jsonrpc::RpcId& id, const TurnEnd& end) {
  switch (end.kind) {
    case TurnEnd::Kind::kCompleted:
      return jsonrpc::ResultLine(id, json::object{{"stopReason", end.stop_reason}});
    case TurnEnd::Kind::kCanceled:
      return jsonrpc::ResultLine(id, json::object{{"stopReason", "cancelled"}});
    case TurnEnd::Kind::kFailed:
      break;
  }
  return ErrorLine(id, jsonrpc::kInternalError,
                   "the turn failed: " + end.code + (end.message.empty() ? "" : ": " + end.message),
                   json::object{{"code", end.code}, {"message", end.message}});
}

int RpcCodeFor(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kNotFound:
      return jsonrpc::kResourceNotFound;
    case ErrorCode::kInvalidArgument:
      return jsonrpc::kInvalidParams;
    default:
      return jsonrpc::kInternalError;
  }
}

Result<json::object> ListPage(std::vector<api::AgentSnapshot> agents, const std::string& cwd,
                              const std::string& cursor, std::size_t page_size) {
  std::optional<std::tuple<TimestampMs, std::string>> after;
  if (!cursor.empty()) {  // "<createdAt>:<id>" of the last session of the previous page
    const std::size_t colon = cursor.find(':');
    TimestampMs created = 0;
    const char* end = cursor.data() + (colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || std::from_chars(cursor.data(), end, created).ptr != end ||
        colon + 1 >= cursor.size())
      return Error(ErrorCode::kInvalidArgument, "not a session/list cursor: " + cursor);
    after = std::make_tuple(-created, cursor.substr(colon + 1));
  }
  std::erase_if(agents, [&](const api::AgentSnapshot& a) {
    if (a.closed || (!cwd.empty() && a.cwd != cwd)) return true;
    if (!after) return false;
    return OrderKey(a) <=
           std::make_tuple(std::get<0>(*after), std::string_view(std::get<1>(*after)));
  });
  std::sort(agents.begin(), agents.end(),
            [](const auto& a, const auto& b) { return OrderKey(a) < OrderKey(b); });
  json::array sessions;
  for (std::size_t i = 0; i < agents.size() && i < page_size; ++i)
    sessions.push_back(SessionInfo(agents[i]));
  json::object page{{"sessions", std::move(sessions)}};
  if (agents.size() > page_size) {
    const api::AgentSnapshot& last = agents[page_size - 1];
    page["nextCursor"] = std::to_string(last.created_ms) + ":" + last.id.str();
  }
  return page;
}

Result<std::string> StringParam(const json::value& params, std::string_view name) {
  const json::value* v = params.is_object() ? params.as_object().if_contains(name) : nullptr;
  if (!v || !v->is_string() || v->as_string().empty())
    return Error(ErrorCode::kInvalidArgument,
                 "params." + std::string(name) + " must be a non-empty string");
  return std::string(v->as_string());
}

}  // namespace agentstream::acp_server
