// The daemon's address as the client commands take it (--url / AGENTSTREAM_URL) and the
// percent-encoding of the path and query pieces the commands build. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::cli::client {

struct Endpoint {
  std::string host;         // a name or an address; IPv6 without brackets
  std::uint16_t port = 80;  // 80 when the URL names none
  std::string base_path;    // "" or "/prefix" (no trailing slash), prepended to every target
  std::string url;          // the URL as given, for messages
};

// Parses "http://HOST[:PORT][/PREFIX]" ("http://[::1]:7600" for IPv6). kInvalidArgument for
// another scheme (https needs a TLS-terminating proxy), an empty host, or a bad port.
Result<Endpoint> ParseEndpoint(std::string_view url);

// Percent-encodes every byte outside the RFC 3986 unreserved set and ':' (which a path segment
// and a query value may hold as is, so a cursor "1:5" stays readable), so an id or a cursor is
// one path segment or query value whatever it contains ("a b/c" -> "a%20b%2Fc").
std::string PercentEncode(std::string_view text);

}  // namespace agentstream::cli::client
