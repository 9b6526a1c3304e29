// Access control of the daemon's HTTP and WebSocket surface: loopback by default, a
// bearer token for any other bind, a browser Origin allow-list against cross-site requests
// (including WebSocket hijacking of a local daemon), and a Host allow-list against DNS
// rebinding (a page of another site whose name was rebound to this daemon's address). Pure
// functions over header values; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::server {

struct SecurityOptions {
  // When non-empty, every request needs `Authorization: Bearer TOKEN` or `?token=TOKEN`.
  std::string token;
  // Browser origins allowed to call the API and open WebSockets ("http://127.0.0.1:7600").
  // Requests without an Origin header (command-line clients) are not affected.
  std::vector<std::string> allowed_origins;
  // Host names a request's Host header may carry besides "localhost" and the loopback literals
  // (127.0.0.0/8, [::1]), which are always allowed: compared case-insensitively, without the port
  // (an entry written with a port matches any port). Server::Start adds its listen address;
  // `serve --allow-host` adds more (a load balancer's name). Any other name is refused
  // (HostAllowed), so a page whose domain was rebound to this daemon's address cannot talk to it.
  std::vector<std::string> allowed_hosts;
  // True: any IP literal is allowed as Host too. Server::Start sets it for a wildcard listen
  // address (0.0.0.0, ::), whose addresses it does not know; a rebound page always names a
  // domain, never an address literal.
  bool allow_ip_literal_hosts = false;
};

enum class Access { kAllowed, kUnauthorized, kForbiddenOrigin };

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

// True for an IPv4 or IPv6 address literal (brackets around IPv6 allowed).
bool IsIpLiteral(std::string_view host);

// kInvalidArgument when `host` is not a loopback address and `token` is empty: the daemon must
// not serve an unauthenticated API beyond this machine.
Status CheckBind(std::string_view host, std::string_view token);

// The origins of pages served by this daemon itself: http://127.0.0.1:PORT, http://localhost:PORT
// (and http://[::1]:PORT).
std::vector<std::string> SameHostOrigins(std::uint16_t port);

// Compares in time that depends only on the lengths, never on where the bytes differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The token of an `Authorization: Bearer TOKEN` header: the scheme is matched
// case-insensitively (RFC 9110 section 11.1) and followed by one or more spaces. nullopt for
// another scheme, or no token.
std::optional<std::string_view> BearerToken(std::string_view authorization);

// Checks one request. `authorization` is the Authorization header, `query_token` the `token`
// query parameter, `origin` the Origin header (each empty when absent; the transport passes an
// empty one for a page of the request's own origin, forwarded.h OriginOf), `client_address` the
// request's effective client address (HttpRequest::client_address). Without a token only a
// loopback client is allowed: a client that a trusted proxy forwards from another machine (or
// an unknown one) is kUnauthorized, so a proxy on this machine cannot expose a daemon that has
// no token.
Access CheckAccess(const SecurityOptions& options, std::string_view authorization,
                   std::string_view query_token, std::string_view origin,
                   std::string_view client_address);

// The host of a Host header value ("name", "name:port", "1.2.3.4:port", "[::1]:port"), lower-
// cased, without the port or the brackets of an IPv6 literal. nullopt when malformed: empty, a
// port that is not 1 to 5 digits, a bracket without its pair, or a character outside RFC 3986's
// host syntax.
std::optional<std::string> HostOfHeader(std::string_view host_header);

// True when the Host header names this daemon: localhost, a loopback literal, a name of
// `options.allowed_hosts`, or (allow_ip_literal_hosts) any address literal. Address literals
// compare by value ("[::0:1]" is "[::1]"). False for a malformed value.
bool HostAllowed(const SecurityOptions& options, std::string_view host_header);

}  // namespace agentstream::server
