// A synchronous HTTP/1.1 client for one request per connection (`Connection: close`), with a
// time limit on the whole exchange and a bound on the reply body. `http://` and `https://`
// (TLS 1.2 or later; the peer's certificate must chain to the system's trust store or to
// `HttpRequest::ca_file` and name the URL's host). Used by the webhook sink of durable
// consumers, the webhooks of stream subscriptions and the opencode provider, which also reads a
// server-sent event stream with StreamHttpGet.
//
// Errors are values: kInvalidArgument for a bad URL, kUnavailable when the peer cannot be
// reached, the connection breaks or the time limit passes, kTooLarge for a reply body over the
// bound. An HTTP error status is not an error here: the caller reads it.
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

namespace agentstream::net {

struct HttpUrl {
  std::string host;  // a name or an address; IPv6 without brackets
  std::uint16_t port = 80;
  std::string target;  // path and query, "/" when the URL has none
  bool tls = false;    // https
};

// Parses "http://HOST[:PORT][/PATH]" ("http://[::1]:8080/hook" for IPv6), and the same with
// https:// (port 443 by default).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;
  std::chrono::milliseconds timeout{10000};            // connect, send and read, all together
  std::size_t max_reply_bytes = std::size_t{1} << 20;  // a larger reply body is refused
  // https: a PEM file of certificates trusted besides the system's (a private CA); empty: none.
  std::string ca_file;
  // Connects only to public addresses of the host (not loopback, private, shared, link-local,
  // unspecified or multicast ones): kInvalidArgument when it has none. For URLs a remote
  // party chose (webhooks), so that a public name cannot point the daemon at its own network.
  bool public_addresses_only = false;
};

struct HttpReply {
  int status = 0;
  std::string body;
};

Result<HttpReply> SendHttpRequest(const HttpRequest& request);

// For an IP address literal (IPv6 without brackets): whether it is public in the sense of
// `public_addresses_only`. nullopt for anything else (a name).
std::optional<bool> IsPublicAddressLiteral(std::string_view host);

// A streaming GET (server-sent events, chunked or close-delimited bodies): `request.timeout`
// bounds connecting, sending and reading the reply header; the body then streams without a time
// limit, each received piece passed to `on_body` as it arrives (the client keeps no body buffer;
// `max_reply_bytes` does not apply). Ends when the peer closes the body, when `on_body` returns
// false, or when `stop` becomes true (checked at least every 100 ms). Returns the reply status
// with an empty body: OK when the stream ended by the peer's close, by `on_body` or by `stop`,
// kUnavailable when it could not be opened or broke. Blocks the calling thread throughout.
Result<HttpReply> StreamHttpGet(const HttpRequest& request,
                                const std::function<bool(std::string_view)>& on_body,
                                const std::atomic<bool>& stop);

}  // namespace agentstream::net
