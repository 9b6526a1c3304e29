// JSON-RPC 2.0 as newline-delimited lines, the framing of the Agent Client Protocol and of
// `codex app-server`: one message per line, classified into request, notification or response,
// and the builders of the lines this side writes. Pure functions over bytes and Boost.JSON values:
// no I/O, thread-safe. Used by the ACP client (providers/acp/), the codex provider and the ACP
// agent that fronts the daemon (acp_server/); the framing of a byte stream into lines is
// process::LineFramer.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::jsonrpc {

// One decoded JSON-RPC message.
struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kNotification;
  boost::json::value id;  // request / response id (number or string); null for notifications
  std::string method;
  boost::json::value params;         // request / notification params
  boost::json::value result;         // response result
  std::optional<std::string> error;  // response error: "code: message"
  std::int64_t error_code = 0;
};

// The message `value` holds. kInvalidArgument when it is not a JSON-RPC 2.0 object of one of the
// three kinds (the peer's fault: JSON-RPC's "invalid request").
Result<RpcMessage> ParseRpcValue(boost::json::value value);

// `line` parsed as JSON, then as ParseRpcValue. kInvalidArgument for text that is not JSON (the
// message starts with "not JSON") or not a message. A number beyond the range of a double reads as
// null (NullNonFinite, core/json_hygiene.h).
Result<RpcMessage> ParseRpc(std::string_view line);

// The lines this side writes (without the '\n').
std::string RequestLine(std::int64_t id, std::string_view method, boost::json::value params);
std::string NotificationLine(std::string_view method, boost::json::value params);
std::string ResultLine(const boost::json::value& id, boost::json::value result);
std::string ErrorLine(const boost::json::value& id, int code, std::string_view message);
// With `data`, the error's optional "data" member.
std::string ErrorLine(const boost::json::value& id, int code, std::string_view message,
                      boost::json::value data);

// JSON-RPC 2.0 error codes, and the ones ACP adds.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kRequestCancelled = -32800;  // ACP: `$/cancel_request`
inline constexpr int kResourceNotFound = -32002;  // ACP: no such session

}  // namespace agentstream::jsonrpc
