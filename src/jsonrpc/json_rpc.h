// JSON-RPC 2.0 as newline-delimited lines, the framing of the Agent Client Protocol and of
// `codex app-server`: one message per line, classified into request, notification or response,
// and the builders of the lines this side writes. Pure functions over bytes and Boost.JSON values:
// no I/O, thread-safe. Used by the ACP client (providers/acp/), the codex provider, the ACP agent
// that fronts the daemon (acp_server/) and the MCP server (mcp_server/); the framing of a byte
// stream into lines is process::LineFramer.
//
// Ids are the one thing kept as text: a request id is echoed in its response byte for byte
// (JSON-RPC 2.0 section 5: "the same as the value of the id member in the Request Object"), also
// an integer beyond 64 bits or a string with escapes, which a parsed JSON value would change.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::jsonrpc {

// A JSON-RPC id: a string, an integer of any size, or null, held as its JSON text exactly as the
// peer wrote it (a string with its quotes and escapes). A number with a fraction or an exponent
// (1.5, 1e3), or any other JSON value, is no id. Default: null. A value type; thread-compatible.
class RpcId {
 public:
  RpcId() = default;
  explicit RpcId(std::int64_t n) : kind_(Kind::kInteger), json_(std::to_string(n)) {}
  // The string id `s` (JSON-encoded).
  static RpcId String(std::string_view s);
  // The id whose JSON text is `text` (no surrounding white space): nullopt unless it is a JSON
  // string, an integer (-?(0|[1-9][0-9]*)) or null.
  static std::optional<RpcId> FromJson(std::string_view text);
  // The id a parsed value holds (an id inside params: notifications/cancelled's requestId): a
  // string, an integer (int64 or uint64) or null; nullopt for anything else. A parsed value has
  // lost the text of an integer beyond 64 bits (it is a double): nullopt.
  static std::optional<RpcId> FromValue(const boost::json::value& value);

  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_integer() const { return kind_ == Kind::kInteger; }
  // The JSON text, as received ("null" for null).
  const std::string& json() const { return json_; }
  // The integer, when it is one that fits in 64 bits.
  std::optional<std::int64_t> int64() const;
  // The decoded string, when it is a string.
  std::optional<std::string> string() const;
  // A canonical text: equal for the same JSON value however it was escaped ("a", "\u0061").
  std::string Key() const;

  // Same JSON value (Key()).
  friend bool operator==(const RpcId& a, const RpcId& b) { return a.Key() == b.Key(); }

 private:
  enum class Kind { kNull, kString, kInteger };
  RpcId(Kind kind, std::string json) : kind_(kind), json_(std::move(json)) {}
  Kind kind_ = Kind::kNull;
  std::string json_ = "null";
};

// One decoded JSON-RPC message.
struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kNotification;
  RpcId id;  // request / response id; null for notifications (and a request whose id is null)
  std::string method;
  boost::json::value params;         // request / notification params
  boost::json::value result;         // response result
  std::optional<std::string> error;  // response error: "code: message"
  std::int64_t error_code = 0;
};

// Why a line is not a message, as the JSON-RPC error that answers it.
struct RpcFault {
  int code = 0;  // kParseError or kInvalidRequest
  std::string message;
  RpcId id;  // the message's id when it had a valid one, else null
};

// One line read: exactly one of the two is set.
struct RpcRead {
  std::optional<RpcMessage> message;
  std::optional<RpcFault> fault;
};

// How `line` reads (JSON-RPC 2.0 sections 4 and 5):
// - text that is not JSON: kParseError "Parse error: invalid JSON at byte N (why)", id null (the
//   message never names a library or a source file);
// - not an object (a batch included: not supported), or an "id" that is not a string, an
//   integer or null: kInvalidRequest, id null;
// - a "method" that is no string, or no method and neither "result" nor a non-null "error":
//   kInvalidRequest with the message's id;
// - with `strict` (servers: acp_server, mcp_server), also "jsonrpc" other than "2.0" and
//   "params" that is neither an object nor an array: kInvalidRequest with the message's id.
// A method with an "id" member (null included) is a request, without one a notification; no
// method and an id is a response. Numbers in params or a result beyond the range of a double
// read as null (NullNonFinite, core/json_hygiene.h); the id keeps its text.
RpcRead ReadRpc(std::string_view line, bool strict);

// ReadRpc(line, /*strict=*/false) as a Result: the fault's message as kInvalidArgument.
Result<RpcMessage> ParseRpc(std::string_view line);

// The lines this side writes (without the '\n'). The id is written as its text.
std::string RequestLine(std::int64_t id, std::string_view method, boost::json::value params);
std::string NotificationLine(std::string_view method, boost::json::value params);
std::string ResultLine(const RpcId& id, const boost::json::value& result);
std::string ErrorLine(const RpcId& id, int code, std::string_view message);
// With `data`, the error's optional "data" member.
std::string ErrorLine(const RpcId& id, int code, std::string_view message,
                      const boost::json::value& data);
// The answer to a fault: ErrorLine(fault.id, fault.code, fault.message).
std::string FaultLine(const RpcFault& fault);
// `members` as one JSON object with "id" first: for peers whose lines carry no "jsonrpc"
// member (codex app-server).
std::string LineWithId(const RpcId& id, const boost::json::object& members);

// JSON-RPC 2.0 error codes, and the ones ACP adds.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kServerBusy = -32000;        // implementation-defined: a bound was reached
inline constexpr int kRequestCancelled = -32800;  // ACP: `$/cancel_request`
inline constexpr int kResourceNotFound = -32002;  // ACP: no such session

}  // namespace agentstream::jsonrpc
