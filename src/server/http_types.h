// The server's plain view of an HTTP exchange: a parsed request and the response to write.
// Beast stays in the transport (http_server.cc); routing and handlers work on these values.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace agentstream::server {

struct HttpRequest {
  std::string method;                        // "GET", "POST", ...
  std::string path;                          // percent-decoded path, without the query
  std::map<std::string, std::string> query;  // percent-decoded; the last value of a repeated key
  std::string origin;                        // the Origin header, empty when absent
  std::string authorization;                 // the Authorization header, empty when absent
  std::string host;                          // the Host header
  std::string remote_address;                // the TCP peer's IP address; empty when unknown
  // The request as its client made it (forwarded.h, ResolveForwarded): from a trusted proxy
  // (`serve --trusted-proxy`), what its X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-For
  // say; from any other peer, the connection's own values. Access control, the Host and Origin
  // checks, absolute URLs and per-client bounds read these, never `host` or `remote_address`.
  std::string scheme = "http";  // "http" or "https"
  std::string effective_host;   // a Host value ("name[:port]"); "" when the request had none
  std::string client_address;   // the client's IP address, one spelling; empty when unknown
  // The principal: the paired device making the request (docs/remote.md), "" for the owner.
  std::string device_id;
  // Other headers a handler reads (names lowercase), as listed in kForwardedHeaders.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // The value of header `name` (lowercase) from `headers`, or "".
  std::string_view Header(std::string_view name) const {
    for (const auto& [n, v] : headers)
      if (n == name) return v;
    return {};
  }
};

// The headers the transport copies into HttpRequest::headers.
inline constexpr std::string_view kForwardedHeaders[] = {"x-agentstream-timestamp",
                                                         "x-agentstream-signature",
                                                         "x-agentstream-forwarded-by",
                                                         "idempotency-key",
                                                         "accept",
                                                         "mcp-session-id",
                                                         "x-hub-signature-256",
                                                         "x-github-delivery",
                                                         "x-github-event"};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  std::string body;
};

// Splits "/a/b?x=1&y=%20" into a decoded path and query map. False on a malformed
// percent-escape, a NUL byte, a control character (below 0x20, or 0x7f) decoded in the path
// (paths are echoed in headers such as Location and ETag), or a path that does not start with
// '/'.
bool ParseTarget(std::string_view target, std::string* path,
                 std::map<std::string, std::string>* query);

// The boolean query parameter `name` of `query`: false when absent; exactly "true" or "1" is
// true, "false" or "0" false. Any other value (an empty one, "TRUE", "yes", "on") is
// kInvalidArgument naming the parameter, so that a client's typo is refused instead of read as
// false. The one parser of boolean query parameters (every route's).
Result<bool> QueryFlag(const std::map<std::string, std::string>& query, std::string_view name);

// Splits "/v1/agents/x/events" into {"v1","agents","x","events"} (empty segments dropped).
std::vector<std::string> PathSegments(std::string_view path);

// True when `value` may be written as a header value: no CR, LF or NUL (which would end the
// header, or the head, early: response splitting).
bool IsSafeHeaderValue(std::string_view value);

// A header field of an answer, as written.
using FieldView = std::pair<std::string_view, std::string_view>;

// What an answer's head says besides its fields.
struct AnswerHead {
  int status = 200;
  std::string_view reason;  // "OK"
  unsigned version = 11;    // of the request: 10 or 11
  bool to_head = false;     // the answer to HEAD: no body, and Content-Length 0
  bool keep_alive = true;
};

// An HTTP/1.x answer as written: its head, then its body when `with_body`.
struct SerializedAnswer {
  std::string head;
  bool with_body = true;  // false for HEAD, 1xx, 204 and 304
};

// The head of an HTTP/1.x answer whose body is `body_size` bytes: the status line; `fields`,
// where a later field of the same name (compared without case) replaces an earlier one, and a
// field with an unsafe value (IsSafeHeaderValue), a name that is not a token, or a name of the
// framing (Content-Length, Connection, Transfer-Encoding) is left out; Content-Length (none for
// 1xx, 204 and 304, whose body is dropped; 0 for HEAD); Connection when `keep_alive` is not the
// version's default. The caller writes the head and the body in one gathered write, so the body
// is never copied. Beast's serializer gathers a buffer per field and steps through them one at a
// time, which for a small answer cost more than the bytes themselves (docs/benchmarks.md).
SerializedAnswer SerializeAnswer(const AnswerHead& head, std::span<const FieldView> fields,
                                 std::size_t body_size);

// Why a request head's body framing is refused (RFC 9112 section 6): the status to answer, after
// which the connection is closed, since where the next request starts is unknown.
struct FramingError {
  int status = 400;  // 400, or 501 for a transfer coding this server does not implement
  std::string message;
};

// Checks the framing of a request head with HTTP version `version` (11 for 1.1). `transfer_
// encoding` is the Transfer-Encoding header (its lines joined with ","; nullopt when absent).
// Accepted: no Transfer-Encoding, or exactly "chunked" on HTTP/1.1. Refused: chunked missing or
// not the final coding (400: the body's length cannot be known, whatever Content-Length says),
// any other coding before a final chunked (501), chunked twice, or Transfer-Encoding on HTTP/1.0
// (400).
std::optional<FramingError> CheckFraming(std::optional<std::string_view> transfer_encoding,
                                         unsigned version);

}  // namespace agentstream::server
