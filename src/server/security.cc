#include "server/security.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "core/ascii.h"

namespace agentstream::server {

namespace {

std::string_view StripBrackets(std::string_view host) {
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    return host.substr(1, host.size() - 2);
  return host;
}

// RFC 3986 reg-name and IPv4 characters: unreserved, sub-delims and '%' of a pct-encoding.
bool RegNameChar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c)) != 0) return true;
  return std::string_view("-._~!$&'()*+,;=%").find(c) != std::string_view::npos;
}

bool Ipv6Char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
}

bool ValidPort(std::string_view port) {
  return !port.empty() && port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// An address literal in one spelling (inet_ntop's), so that equal addresses compare equal;
// anything else lower-cased.
std::string Canonical(std::string_view host) {
  const std::string text(StripBrackets(host));
  in_addr v4{};
  in6_addr v6{};
  std::array<char, INET6_ADDRSTRLEN> buf{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1 &&
      inet_ntop(AF_INET, &v4, buf.data(), buf.size()) != nullptr)
    return buf.data();
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1 &&
      inet_ntop(AF_INET6, &v6, buf.data(), buf.size()) != nullptr)
    return buf.data();
  return AsciiLowered(text);
}

}  // namespace

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  const std::string text(StripBrackets(host));
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

bool IsIpLiteral(std::string_view host) {
  const std::string text(StripBrackets(host));
  in_addr v4{};
  in6_addr v6{};
  return inet_pton(AF_INET, text.c_str(), &v4) == 1 || inet_pton(AF_INET6, text.c_str(), &v6) == 1;
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

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoringAsciiCase(authorization.substr(0, kScheme.size()), kScheme) ||
      authorization[kScheme.size()] != ' ')
    return std::nullopt;
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

Access CheckAccess(const SecurityOptions& options, std::string_view authorization,
                   std::string_view query_token, std::string_view origin,
                   std::string_view client_address) {
  if (!origin.empty()) {
    const bool allowed = std::any_of(options.allowed_origins.begin(), options.allowed_origins.end(),
                                     [&](const std::string& o) { return o == origin; });
    if (!allowed) return Access::kForbiddenOrigin;
  }
  if (options.token.empty())
    return IsLoopbackHost(client_address) ? Access::kAllowed : Access::kUnauthorized;
  if (const auto bearer = BearerToken(authorization);
      bearer && ConstantTimeEquals(*bearer, options.token))
    return Access::kAllowed;
  if (!query_token.empty() && ConstantTimeEquals(query_token, options.token))
    return Access::kAllowed;
  return Access::kUnauthorized;
}

std::optional<std::string> HostOfHeader(std::string_view value) {
  std::string_view host;
  std::string_view rest;
  if (!value.empty() && value.front() == '[') {
    const std::size_t close = value.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = value.substr(1, close - 1);
    rest = value.substr(close + 1);
    if (!std::all_of(host.begin(), host.end(), Ipv6Char)) return std::nullopt;
  } else {
    const std::size_t colon = value.find(':');
    host = value.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : value.substr(colon);
    if (!std::all_of(host.begin(), host.end(), RegNameChar)) return std::nullopt;
  }
  if (host.empty()) return std::nullopt;
  if (!rest.empty() && (rest.front() != ':' || !ValidPort(rest.substr(1)))) return std::nullopt;
  return AsciiLowered(host);
}

bool HostAllowed(const SecurityOptions& options, std::string_view host_header) {
  const std::optional<std::string> host = HostOfHeader(host_header);
  if (!host) return false;
  if (IsLoopbackHost(*host)) return true;
  if (options.allow_ip_literal_hosts && IsIpLiteral(*host)) return true;
  const std::string canonical = Canonical(*host);
  return std::any_of(options.allowed_hosts.begin(), options.allowed_hosts.end(),
                     [&](const std::string& allowed) {
                       // An entry may be written as a Host value ("name:port", "[::1]:7600").
                       const std::string name =
                           IsIpLiteral(allowed) ? allowed : HostOfHeader(allowed).value_or(allowed);
                       return Canonical(name) == canonical;
                     });
}

}  // namespace agentstream::server
