// A synchronous HTTP/1.1 client for one request per connection (`Connection: close`), with a
// time limit on the whole exchange and a bound on the reply body. `http://` and `https://`
// (TLS 1.2 or later; the peer's certificate must chain to the system's trust store, which
// OpenSSL's SSL_CERT_FILE and SSL_CERT_DIR replace, or to `HttpRequest::ca_file`, and name the
// URL's host). Used by the webhook sink of durable consumers, the webhooks of stream
// subscriptions, the opencode provider and the command-line client, the last two also for
// streams (StreamHttpGet).
//
// Errors are values: kInvalidArgument for a bad URL, kUnavailable when the peer cannot be
// reached ("cannot reach PEER: why"), the connection breaks or a time limit passes, kTooLarge for
// a reply body over the bound. An HTTP error status is not an error here: the caller reads it.
// Thread-safe: each call uses its own connection and I/O context.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "net/http_url.h"

namespace agentstream::net {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // replace the client's own
  std::string content_type = "application/json";             // sent with a non-empty body
  std::string body;
  std::chrono::milliseconds timeout{10000};  // connect, send and read, all together
  // Resolving, connecting and the TLS handshake, within `timeout`; nullopt: `timeout` only.
  std::optional<std::chrono::milliseconds> connect_timeout;
  std::size_t max_reply_bytes = std::size_t{1} << 20;  // a larger reply body is refused
  // https: a PEM file of certificates trusted besides the system's (a private CA); empty: none.
  std::string ca_file;
  // Connects only to public addresses of the host (not loopback, private, shared, link-local,
  // unspecified or multicast ones): kInvalidArgument when it has none. For URLs a remote
  // party chose (webhooks), so that a public name cannot point the daemon at its own network.
  bool public_addresses_only = false;
  // How error messages name the peer ("the daemon at URL"); empty: the URL.
  std::string peer;
  // Appended to the message when the peer cannot be reached ("(is the server running?)").
  std::string unreachable_hint;
};

struct HttpReply {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // as received, in order
  std::string body;

  // The value of the first header called `name` (case-insensitive), or "".
  std::string Header(std::string_view name) const;
};

Result<HttpReply> SendHttpRequest(const HttpRequest& request);

// For an IP address literal (IPv6 without brackets): whether it is public in the sense of
// `public_addresses_only`. nullopt for anything else (a name).
std::optional<bool> IsPublicAddressLiteral(std::string_view host);

// What a stream's reader is given: `on_head` (optional) once with the status and headers, then
// `on_body` with each received piece of the body as it arrives (chunk framing removed). Either
// returns false to end the stream.
struct StreamReader {
  std::function<bool(const HttpReply& head)> on_head;
  std::function<bool(std::string_view piece)> on_body;
};

// A streaming GET (server-sent events, chunked or close-delimited bodies): `request.timeout`
// bounds connecting, sending and reading the reply header; the body then streams with no time
// limit but `idle_timeout` (a body silent that long is broken), each piece going to the reader
// (the client keeps no body buffer; `max_reply_bytes` does not apply). Ends when the peer closes
// the body, when the reader returns false, or when `stop` becomes true (checked at least every
// 100 ms). Returns the reply's status and headers with an empty body: OK when the stream ended by
// the peer's close, by the reader or by `stop`, kUnavailable when it could not be opened or broke.
// Blocks the calling thread throughout.
Result<HttpReply> StreamHttpGet(const HttpRequest& request, const StreamReader& reader,
                                const std::atomic<bool>& stop,
                                std::optional<std::chrono::milliseconds> idle_timeout = {});

}  // namespace agentstream::net
