// The URLs the push module sends to (internal to src/push/): a push service's endpoint and an
// ntfy server. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http_url.h"

namespace agentstream::push::internal {

// Parses an absolute http(s) URL of at most kMaxEndpointBytes (subscription.h) made of printable
// ASCII, with no user information, query-only authority or fragment. kInvalidArgument naming
// `field` otherwise, and for http:// unless `allow_http`.
Result<net::HttpUrl> CheckSendUrl(std::string_view url, std::string_view field, bool allow_http);

// The URL's origin as RFC 6454 serializes it: "https://push.example.net", with the port only
// when it is not the scheme's default.
std::string OriginOf(const net::HttpUrl& url);

}  // namespace agentstream::push::internal
