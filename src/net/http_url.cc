#include "net/http_url.h"

#include <charconv>

namespace agentstream::net {

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  auto bad = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, "bad URL \"" + std::string(url) + "\": " + why);
  };
  HttpUrl out;
  std::string_view rest;
  if (url.starts_with(kHttp)) {
    rest = url.substr(kHttp.size());
  } else if (url.starts_with(kHttps)) {
    rest = url.substr(kHttps.size());
    out.tls = true;
    out.port = 443;
  } else {
    return bad("only http:// and https:// are supported");
  }
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  out.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  std::string_view port;
  bool has_port = false;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed [");
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after ]");
      port = after.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    has_port = colon != std::string_view::npos;
    if (has_port) port = authority.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  if (has_port) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
        value > 65535)
      return bad("bad port");
    out.port = static_cast<std::uint16_t>(value);
  }
  return out;
}

std::string HostAndPort(const HttpUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
}

std::string UrlOf(const HttpUrl& url, std::string_view target) {
  return (url.tls ? "https://" : "http://") + HostAndPort(url) + std::string(target);
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The byte of the escape at in[i] ('%'), or -1 when it is malformed.
int EscapedByte(std::string_view in, std::size_t i) {
  if (i + 2 >= in.size()) return -1;
  const int hi = HexValue(in[i + 1]);
  const int lo = HexValue(in[i + 2]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

bool PercentDecode(std::string_view in, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      const int byte = EscapedByte(in, i);
      if (byte < 0) return false;
      c = static_cast<char>(byte);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return false;
    out->push_back(c);
  }
  return true;
}

std::string PercentDecodeLenient(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const int byte = in[i] == '%' ? EscapedByte(in, i) : -1;
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
      i += 2;
    } else {
      out.push_back(in[i] == '+' ? ' ' : in[i]);
    }
  }
  return out;
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

}  // namespace agentstream::net
