// The http:// and https:// URLs the project's HTTP client takes (webhooks, the opencode server,
// the command-line client's daemon). Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace agentstream::net {

struct HttpUrl {
  std::string host;  // a name or an address; IPv6 without brackets
  std::uint16_t port = 80;
  std::string target;  // path and query, "/" when the URL has none
  bool tls = false;    // https
};

// Parses "http://HOST[:PORT][/PATH]" ("http://[::1]:8080/hook" for IPv6), and the same with
// https:// (port 443 by default). kInvalidArgument for another scheme, an empty host, or a port
// that is empty after its colon, not a number, 0 or over 65535.
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// "HOST:PORT" for a Host header ("[::1]:8080" for IPv6), and the URL of `target` on `url`'s
// host ("https://HOST:PORT" + target).
std::string HostAndPort(const HttpUrl& url);
std::string UrlOf(const HttpUrl& url, std::string_view target);

// Percent-encodes every byte outside the RFC 3986 unreserved set and ':' (which a path segment
// and a query value may hold as is, so a cursor "1:5" stays readable), so an id or a cursor is
// one path segment or query value whatever it contains ("a b/c" -> "a%20b%2Fc").
std::string PercentEncode(std::string_view text);

// Percent-decodes `in` (%XX, hex digits of either case; '+' is a space where `plus_is_space`, as
// in a query). Strict, for requests the daemon routes: false for a malformed escape ("%4", "%zz")
// or a decoded NUL byte, and `out` is then unspecified.
bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out);

// Lenient, for the query parameters of the Durable Streams protocol, read as its reference
// server reads them: '+' is a space, and a malformed escape stays as written ("%zz" -> "%zz").
std::string PercentDecodeLenient(std::string_view in);

}  // namespace agentstream::net
