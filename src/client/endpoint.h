// The daemon's address as the client commands take it (--url / AGENTSTREAM_URL) and the
// percent-encoding of the path and query pieces the commands build. Pure functions.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http_url.h"

namespace agentstream::client {

struct Endpoint {
  net::HttpUrl server;    // scheme, host and port (its target is the base path as given)
  std::string base_path;  // "" or "/prefix" (no trailing slash), prepended to every target
  std::string url;        // the URL as given, for messages

  // The URL of `target` ("/v1/agents") on the daemon.
  std::string UrlOf(std::string_view target) const;
};

// Parses "http://HOST[:PORT][/PREFIX]" ("http://[::1]:7600" for IPv6), or the same with https://
// (a TLS-terminating proxy in front of the daemon). kInvalidArgument for another scheme, an empty
// host, a bad port, or a query or fragment in the prefix.
Result<Endpoint> ParseEndpoint(std::string_view url);

using net::PercentEncode;  // net/http_url.h

}  // namespace agentstream::client
