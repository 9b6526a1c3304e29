#include "mcp_server/mcp_protocol.h"

#include <boost/json.hpp>

#include "mcp_server/mcp_tools.h"

namespace agentstream::mcp_server {

namespace json = boost::json;
using jsonrpc::RpcMessage;

namespace {

constexpr std::string_view kInstructions =
    "agentstream runs coding agents and records their sessions. agents_list shows them; "
    "agent_create starts one; agent_send prompts it (wait: true returns when its turn ends, with "
    "its last message); agent_timeline and agent_last_message read what it did; agent_interrupt "
    "and permission_answer steer it. notifyParent (true, when agentstream runs you; or your own "
    "agent id) has a child's turn ends delivered into your session.";

json::object InitializeResult(std::string_view protocol, std::string_view version) {
  return {{"protocolVersion", protocol},
          {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
          {"serverInfo", json::object{{"name", "agentstream"}, {"version", version}}},
          {"instructions", kInstructions}};
}

Dispatch Line(std::string line) { return Dispatch{std::move(line), std::nullopt}; }

}  // namespace

std::string_view NegotiateVersion(std::string_view requested) {
  for (std::string_view v : kProtocolVersions)
    if (v == requested) return v;
  return kProtocolVersions.front();
}

Dispatch McpProtocol::OnMessage(const RpcMessage& m) {
  const json::object* params = m.params.is_object() ? &m.params.as_object() : nullptr;
  if (m.kind == RpcMessage::Kind::kNotification && m.method == "notifications/cancelled" &&
      params && params->contains("requestId"))
    return Dispatch{std::nullopt, std::nullopt, jsonrpc::RpcId::FromValue(params->at("requestId"))};
  if (m.kind != RpcMessage::Kind::kRequest) return {};  // notifications/initialized, responses
  if (m.id.is_null())
    return Line(jsonrpc::ErrorLine(jsonrpc::RpcId(), jsonrpc::kInvalidRequest,
                                   "Invalid Request: an MCP request id is a string or an integer"));
  if (m.method == "initialize") {
    const json::value* asked = params ? params->if_contains("protocolVersion") : nullptr;
    if (!asked || !asked->is_string())
      return Line(jsonrpc::ErrorLine(m.id, jsonrpc::kInvalidParams, "protocolVersion is required"));
    initialized_ = true;
    protocol_version_ = NegotiateVersion(asked->as_string());
    return Line(jsonrpc::ResultLine(m.id, InitializeResult(protocol_version_, version_)));
  }
  if (m.method == "ping") return Line(jsonrpc::ResultLine(m.id, json::object{}));
  if (!initialized_)
    return Line(jsonrpc::ErrorLine(m.id, jsonrpc::kInvalidRequest, "initialize first"));
  if (m.method == "tools/list") return Line(jsonrpc::ResultLine(m.id, ToolsList()));
  if (m.method != "tools/call")
    return Line(
        jsonrpc::ErrorLine(m.id, jsonrpc::kMethodNotFound, "method not found: " + m.method));
  const json::value* name = params ? params->if_contains("name") : nullptr;
  if (!name || !name->is_string())
    return Line(jsonrpc::ErrorLine(m.id, jsonrpc::kInvalidParams, "name is required"));
  if (!IsTool(name->as_string()))
    return Line(jsonrpc::ErrorLine(m.id, jsonrpc::kInvalidParams,
                                   "unknown tool: " + std::string(name->as_string())));
  const json::value* arguments = params->if_contains("arguments");
  if (arguments && !arguments->is_object() && !arguments->is_null())
    return Line(jsonrpc::ErrorLine(m.id, jsonrpc::kInvalidParams, "arguments must be an object"));
  return Dispatch{std::nullopt, ToolInvocation{m.id, std::string(name->as_string()),
                                               arguments ? *arguments : json::value(nullptr)}};
}

std::string ToolReplyLine(const jsonrpc::RpcId& id, const Result<json::object>& result) {
  if (!result.ok()) {
    const Status& s = result.status();
    const std::string text = s.message().empty() ? s.ToString() : s.message();
    return jsonrpc::ResultLine(
        id, json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                         {"isError", true}});
  }
  return jsonrpc::ResultLine(
      id, json::object{{"content", json::array{json::object{{"type", "text"},
                                                            {"text", json::serialize(*result)}}}},
                       {"structuredContent", *result}});
}

}  // namespace agentstream::mcp_server
