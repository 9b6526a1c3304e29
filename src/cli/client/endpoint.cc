#include "cli/client/endpoint.h"

#include <charconv>

namespace agentstream::cli::client {

Result<Endpoint> ParseEndpoint(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument,
                 "bad daemon URL \"" + std::string(url) + "\": " + why);
  };
  if (!url.starts_with(kScheme)) {
    if (url.starts_with("https://")) return bad("https is not supported; use http://");
    return bad("expected http://HOST:PORT");
  }
  Endpoint endpoint;
  endpoint.url = std::string(url);
  std::string_view rest = url.substr(kScheme.size());
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (path.ends_with('/')) path.remove_suffix(1);
    endpoint.base_path = std::string(path);
  }
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed [ in the host");
    endpoint.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (!after.starts_with(':')) return bad("expected :PORT after the host");
      port_text = after.substr(1);
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    endpoint.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
    if (colon == std::string_view::npos) endpoint.host = std::string(authority);
  }
  if (endpoint.host.empty()) return bad("no host");
  if (!port_text.empty() || authority.ends_with(':')) {
    unsigned port = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      return bad("bad port");
    }
    endpoint.port = static_cast<std::uint16_t>(port);
  }
  return endpoint;
}

std::string PercentEncode(std::string_view text) {
  constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                            (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' ||
                            byte == '_' || byte == '~' || byte == ':';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

}  // namespace agentstream::cli::client
