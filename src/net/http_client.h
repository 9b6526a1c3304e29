// A synchronous HTTP/1.1 client for one request per connection (`Connection: close`), with a
// time limit on the whole exchange and a bound on the reply body. Plain HTTP only (TLS needs a
// terminating proxy). Used by the webhook sink of durable consumers.
//
// Errors are values: kInvalidArgument for a bad URL, kUnavailable when the peer cannot be
// reached, the connection breaks or the time limit passes, kTooLarge for a reply body over the
// bound. An HTTP error status is not an error here: the caller reads it.
// Thread-safe: each call uses its own connection and I/O context.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
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
};

// Parses "http://HOST[:PORT][/PATH]" ("http://[::1]:8080/hook" for IPv6).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type = "application/json";
  std::string body;
  std::chrono::milliseconds timeout{10000};            // connect, send and read, all together
  std::size_t max_reply_bytes = std::size_t{1} << 20;  // a larger reply body is refused
};

struct HttpReply {
  int status = 0;
  std::string body;
};

Result<HttpReply> SendHttpRequest(const HttpRequest& request);

}  // namespace agentstream::net
