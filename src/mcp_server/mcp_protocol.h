// The Model Context Protocol as agentstream's MCP server speaks it (docs/mcp.md), apart from any
// transport: one JSON-RPC message in, what to answer out. It negotiates the protocol version
// (the newest one @modelcontextprotocol/sdk 1.32.2 knows, 2025-11-25, or an older one the client
// asks for), answers initialize, ping and tools/list itself and hands tools/call to the caller,
// who runs the tool (it blocks on the daemon) and answers with ToolReplyLine.
//
// Pure: no I/O. One McpProtocol per client connection; not thread-safe (the connection's thread).
#pragma once

#include <array>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "jsonrpc/json_rpc.h"

namespace agentstream::mcp_server {

// The protocol versions spoken, newest first.
inline constexpr std::array<std::string_view, 4> kProtocolVersions = {"2025-11-25", "2025-06-18",
                                                                      "2025-03-26", "2024-11-05"};

// The version to answer a client that asked for `requested`: the same when it is spoken, else
// the newest (the client then decides whether it can go on).
std::string_view NegotiateVersion(std::string_view requested);

// A tools/call to run.
struct ToolInvocation {
  jsonrpc::RpcId id;  // the request's id, as received
  std::string name;
  boost::json::value arguments;  // an object, or null
};

// What one message asks for: a line to write at once, a tool to run, the request a client gave
// up on (notifications/cancelled: its requestId, when it is a string or an integer), or nothing
// (another notification, a response).
struct Dispatch {
  std::optional<std::string> reply_line;
  std::optional<ToolInvocation> tool;
  std::optional<jsonrpc::RpcId> cancel;
};

class McpProtocol {
 public:
  // `stateless`: every message stands alone (the streamable HTTP transport without sessions),
  // so tools need no initialize first.
  explicit McpProtocol(std::string version, bool stateless = false)
      : version_(std::move(version)), initialized_(stateless) {}

  // initialize: the negotiated version, {tools: {listChanged: false}}, serverInfo; ping: {};
  // tools/list: ToolsList(); tools/call of a known tool: a ToolInvocation (-32602 for an unknown
  // one, a missing name or arguments that are not an object); other requests -32601; requests
  // other than initialize and ping before initialize: -32600; a request whose id is null
  // (MCP: "the ID MUST NOT be null"): -32600 with id null; notifications/cancelled: its
  // requestId. Other notifications and responses are ignored.
  Dispatch OnMessage(const jsonrpc::RpcMessage& message);

  bool initialized() const { return initialized_; }
  const std::string& protocol_version() const { return protocol_version_; }

 private:
  std::string version_;
  bool initialized_ = false;
  std::string protocol_version_;
};

// The answer to tools/call `id`: a CallToolResult whose structuredContent is `result` and whose
// one text block is its JSON, or, for an error, {isError: true} with the error's message as text
// (a tool error the calling model reads and can correct, not a protocol error).
std::string ToolReplyLine(const jsonrpc::RpcId& id, const Result<boost::json::object>& result);

}  // namespace agentstream::mcp_server
