#include "push/endpoint.h"

#include <algorithm>

#include "core/ascii.h"
#include "push/subscription.h"

namespace agentstream::push::internal {

Result<net::HttpUrl> CheckSendUrl(std::string_view url, std::string_view field, bool allow_http) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kInvalidArgument, std::string(field) + ": " + std::string(why));
  };
  if (url.size() > kMaxEndpointBytes) {
    return bad("a URL of at most " + std::to_string(kMaxEndpointBytes) + " bytes, not " +
               std::to_string(url.size()));
  }
  if (!std::all_of(url.begin(), url.end(), [](char c) { return c > ' ' && c < '\x7f'; })) {
    return bad("a URL of printable ASCII without spaces");
  }
  if (url.find('#') != std::string_view::npos) return bad("a URL without a fragment");
  Result<net::HttpUrl> parsed = net::ParseHttpUrl(url);
  if (!parsed.ok()) return bad(parsed.status().message());
  if (!parsed->tls && !allow_http) return bad("an https:// URL");
  const std::size_t start = url.find("://") + 3;
  const std::string_view authority = url.substr(start, url.find('/', start) - start);
  if (authority.find_first_of("@?") != std::string_view::npos) {
    return bad("a URL without user information, and a path before its query");
  }
  return parsed;
}

std::string OriginOf(const net::HttpUrl& url) {
  std::string host = AsciiLowered(url.host);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  const bool default_port = url.port == (url.tls ? 443 : 80);
  return (url.tls ? "https://" : "http://") + host +
         (default_port ? "" : ":" + std::to_string(url.port));
}

}  // namespace agentstream::push::internal
