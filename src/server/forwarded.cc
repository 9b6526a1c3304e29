#include "server/forwarded.h"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/ascii.h"
#include "server/security.h"

namespace agentstream::server {

namespace {

constexpr std::string_view kSpaces = " \t";

std::string_view Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(kSpaces);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpaces) - first + 1);
}

// An address literal's bytes: IPv4 in the first 4 (v4 set), IPv4-mapped IPv6 read as IPv4.
struct Address {
  bool v4 = false;
  std::array<std::uint8_t, 16> bytes{};
};

std::optional<Address> ParseAddress(std::string_view text) {
  if (text.size() > 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  if (const std::size_t zone = text.find('%'); zone != std::string_view::npos)
    text = text.substr(0, zone);
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string copy(text);
  Address out;
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, copy.c_str(), &v4) == 1) {
    out.v4 = true;
    std::copy_n(reinterpret_cast<const std::uint8_t*>(&v4.s_addr), 4, out.bytes.begin());
    return out;
  }
  if (inet_pton(AF_INET6, copy.c_str(), &v6) != 1) return std::nullopt;
  if (IN6_IS_ADDR_V4MAPPED(&v6)) {
    out.v4 = true;
    std::copy_n(v6.s6_addr + 12, 4, out.bytes.begin());
    return out;
  }
  std::copy_n(v6.s6_addr, 16, out.bytes.begin());
  return out;
}

std::string Spell(const Address& address) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  if (address.v4) {
    in_addr v4{};
    std::copy_n(address.bytes.begin(), 4, reinterpret_cast<std::uint8_t*>(&v4.s_addr));
    return inet_ntop(AF_INET, &v4, buf.data(), buf.size()) != nullptr ? buf.data() : "";
  }
  in6_addr v6{};
  std::copy_n(address.bytes.begin(), 16, v6.s6_addr);
  return inet_ntop(AF_INET6, &v6, buf.data(), buf.size()) != nullptr ? buf.data() : "";
}

// Whether the first `prefix` bits of `a` and `b` are equal.
bool SamePrefix(const std::array<std::uint8_t, 16>& a, const std::array<std::uint8_t, 16>& b,
                int prefix) {
  for (int i = 0; prefix > 0; ++i, prefix -= 8) {
    const int bits = std::min(prefix, 8);
    const auto mask = static_cast<std::uint8_t>(0xFF << (8 - bits));
    if (((a[i] ^ b[i]) & mask) != 0) return false;
  }
  return true;
}

Status Malformed(std::string_view header, std::string_view value, std::string_view why) {
  return Error(ErrorCode::kInvalidArgument, "malformed " + std::string(header) + " \"" +
                                                std::string(value) +
                                                "\" from a trusted proxy: " + std::string(why));
}

// A header's only value: its one field line, not a list; nullopt when absent.
Result<std::optional<std::string_view>> OneValue(const std::vector<std::string_view>& lines,
                                                 std::string_view header) {
  if (lines.empty()) return std::optional<std::string_view>();
  if (lines.size() > 1) return Malformed(header, lines[1], "more than one value");
  const std::string_view value = Trim(lines.front());
  if (value.find(',') != std::string_view::npos)
    return Malformed(header, value, "more than one value");
  if (value.empty()) return Malformed(header, value, "empty");
  return std::optional<std::string_view>(value);
}

// The client of X-Forwarded-For (see ResolveForwarded); `lines` is not empty.
Result<std::string> ForwardedClient(const TrustedProxies& proxies,
                                    const std::vector<std::string_view>& lines) {
  std::string leftmost;
  // Right to left: the last line first, each line's last element first.
  for (auto line = lines.rbegin(); line != lines.rend(); ++line) {
    std::string_view rest = *line;
    while (true) {
      const std::size_t comma = rest.rfind(',');
      const std::string_view element =
          Trim(comma == std::string_view::npos ? rest : rest.substr(comma + 1));
      const std::optional<Address> address = ParseAddress(element);
      if (!address || (element.find('%') != std::string_view::npos))
        return Malformed("X-Forwarded-For", element, "not an IP address");
      std::string spelled = Spell(*address);
      if (!proxies.Contains(spelled)) return spelled;
      leftmost = std::move(spelled);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(0, comma);
    }
  }
  return leftmost;
}

}  // namespace

Result<AddressRange> ParseAddressRange(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kInvalidArgument,
                 "bad address range \"" + std::string(text) + "\": " + std::string(why));
  };
  const std::size_t slash = text.find('/');
  const std::string_view address_text = text.substr(0, slash);
  if (address_text.find('%') != std::string_view::npos)
    return bad("an IPv6 zone (%...) cannot be part of a range");
  const std::optional<Address> address = ParseAddress(address_text);
  // "::ffff:10.0.0.1" is read as IPv4; its prefix is then the IPv4 one.
  if (!address) return bad("not an IPv4 or IPv6 address, or ADDRESS/PREFIX");
  AddressRange range;
  range.v4 = address->v4;
  range.bytes = address->bytes;
  const int max = range.v4 ? 32 : 128;
  range.prefix = max;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    int prefix = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (digits.empty() || digits.size() > 3 || ec != std::errc() ||
        end != digits.data() + digits.size() || prefix < 0 || prefix > max)
      return bad("the prefix length must be 0 to " + std::to_string(max));
    range.prefix = prefix;
  }
  AddressRange network = range;
  for (int bit = range.prefix; bit < max; ++bit)
    network.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80U >> (bit % 8)));
  if (network.bytes != range.bytes) {
    Address spelled{range.v4, network.bytes};
    return bad("bits are set past the prefix length (the network is " + Spell(spelled) + "/" +
               std::to_string(range.prefix) + ")");
  }
  return range;
}

std::string CanonicalAddress(std::string_view text) {
  const std::optional<Address> address = ParseAddress(text);
  return address ? Spell(*address) : std::string();
}

Result<TrustedProxies> TrustedProxies::Parse(const std::vector<std::string>& entries) {
  TrustedProxies out;
  for (const std::string& entry : entries) {
    AS_ASSIGN_OR_RETURN(AddressRange range, ParseAddressRange(entry));
    out.ranges_.push_back(range);
  }
  return out;
}

bool TrustedProxies::Contains(std::string_view address) const {
  const std::optional<Address> parsed = ParseAddress(address);
  if (!parsed) return false;
  return std::any_of(ranges_.begin(), ranges_.end(), [&](const AddressRange& range) {
    return range.v4 == parsed->v4 && SamePrefix(range.bytes, parsed->bytes, range.prefix);
  });
}

Result<EffectiveRequest> ResolveForwarded(const TrustedProxies& proxies,
                                          const ForwardedInput& input) {
  EffectiveRequest out;
  out.scheme = input.tls ? "https" : "http";
  out.host = std::string(input.host);
  out.client_address = CanonicalAddress(input.peer);
  if (out.client_address.empty() || !proxies.Contains(out.client_address)) return out;
  out.forwarded = true;
  AS_ASSIGN_OR_RETURN(const std::optional<std::string_view> proto,
                      OneValue(input.forwarded_proto, "X-Forwarded-Proto"));
  if (proto) {
    std::string lower = AsciiLowered(*proto);
    if (lower != "http" && lower != "https")
      return Malformed("X-Forwarded-Proto", *proto, "not http or https");
    out.scheme = std::move(lower);
  }
  AS_ASSIGN_OR_RETURN(const std::optional<std::string_view> host,
                      OneValue(input.forwarded_host, "X-Forwarded-Host"));
  if (host) {
    if (!HostOfHeader(*host)) return Malformed("X-Forwarded-Host", *host, "not a host[:port]");
    out.host = std::string(*host);
  }
  if (!input.forwarded_for.empty()) {
    AS_ASSIGN_OR_RETURN(out.client_address, ForwardedClient(proxies, input.forwarded_for));
  }
  return out;
}

std::string OriginOf(std::string_view scheme, std::string_view host) {
  if (scheme != "http" && scheme != "https") return "";
  const std::optional<std::string> name = HostOfHeader(host);
  if (!name) return "";
  // The port follows the host (and an IPv6 literal's closing bracket), after a ':'.
  const std::size_t end = host.front() == '[' ? host.find(']') + 1 : host.find(':');
  std::string_view port = end == std::string_view::npos || end >= host.size()
                              ? std::string_view()
                              : host.substr(end + 1);
  while (port.size() > 1 && port.front() == '0') port.remove_prefix(1);
  if ((scheme == "http" && port == "80") || (scheme == "https" && port == "443")) port = {};
  const bool v6 = name->find(':') != std::string::npos;
  std::string origin = std::string(scheme) + "://" + (v6 ? "[" + *name + "]" : *name);
  if (!port.empty()) origin += ":" + std::string(port);
  return origin;
}

}  // namespace agentstream::server
