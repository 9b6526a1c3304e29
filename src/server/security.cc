#include "server/security.h"

#include <arpa/inet.h>

#include <algorithm>
#include <string>

namespace agentstream::server {

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  std::string text(host);
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;  // 127.0.0.0/8
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    static const in6_addr kLoopback = IN6ADDR_LOOPBACK_INIT;
    return std::equal(std::begin(v6.s6_addr), std::end(v6.s6_addr), std::begin(kLoopback.s6_addr));
  }
  return false;
}

Status CheckBind(std::string_view host, std::string_view token) {
  if (IsLoopbackHost(host) || !token.empty()) return Status::Ok();
  return Error(ErrorCode::kInvalidArgument,
               "refusing to listen on " + std::string(host) +
                   " without a token: pass --token (any non-loopback address needs one)");
}

std::vector<std::string> SameHostOrigins(std::uint16_t port) {
  const std::string p = std::to_string(port);
  return {"http://127.0.0.1:" + p, "http://localhost:" + p, "http://[::1]:" + p};
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Walk the longer length so that the time does not reveal a matching prefix.
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

Access CheckAccess(const SecurityOptions& options, std::string_view authorization,
                   std::string_view query_token, std::string_view origin) {
  if (!origin.empty()) {
    const bool allowed = std::any_of(options.allowed_origins.begin(), options.allowed_origins.end(),
                                     [&](const std::string& o) { return o == origin; });
    if (!allowed) return Access::kForbiddenOrigin;
  }
  if (options.token.empty()) return Access::kAllowed;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer &&
      ConstantTimeEquals(authorization.substr(kBearer.size()), options.token))
    return Access::kAllowed;
  if (!query_token.empty() && ConstantTimeEquals(query_token, options.token))
    return Access::kAllowed;
  return Access::kUnauthorized;
}

}  // namespace agentstream::server
