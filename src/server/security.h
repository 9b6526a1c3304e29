// Access control of the daemon's HTTP and WebSocket surface (R-SEC-1): loopback by default, a
// bearer token for any other bind, and a browser Origin allow-list against cross-site requests
// (including WebSocket hijacking of a local daemon). Pure functions; thread-safe.
#pragma once

#include <cstdint>
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
};

enum class Access { kAllowed, kUnauthorized, kForbiddenOrigin };

// True for 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

// kInvalidArgument when `host` is not a loopback address and `token` is empty: the daemon must
// not serve an unauthenticated API beyond this machine.
Status CheckBind(std::string_view host, std::string_view token);

// The origins of pages served by this daemon itself: http://127.0.0.1:PORT, http://localhost:PORT
// (and http://[::1]:PORT).
std::vector<std::string> SameHostOrigins(std::uint16_t port);

// Compares in time that depends only on the lengths, never on where the bytes differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// Checks one request. `authorization` is the Authorization header, `query_token` the `token`
// query parameter, `origin` the Origin header (each empty when absent).
Access CheckAccess(const SecurityOptions& options, std::string_view authorization,
                   std::string_view query_token, std::string_view origin);

}  // namespace agentstream::server
