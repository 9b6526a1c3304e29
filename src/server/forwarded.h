// Requests that reach the daemon through a reverse proxy (docs/operations.md, "Behind a reverse
// proxy"): which TCP peers are trusted proxies (`serve --trusted-proxy CIDR`), and what a trusted
// proxy's X-Forwarded-Proto, X-Forwarded-For and X-Forwarded-Host say the request's scheme, client
// address and Host are. The transport (http_server.cc) resolves every request through
// ResolveForwarded before its Host, Origin and credential checks, and puts the result on
// HttpRequest (scheme, effective_host, client_address). Pure functions over header values: no
// I/O; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace agentstream::server {

// An IPv4 or IPv6 network: its address and prefix length ("10.0.0.0/8", "fd00::/8").
struct AddressRange {
  bool v4 = false;
  std::array<std::uint8_t, 16> bytes{};  // the network address; IPv4 uses the first 4 bytes
  int prefix = 0;                        // 0..32 (IPv4) or 0..128 (IPv6)
};

// Parses "ADDRESS/PREFIX" or a plain address (a /32 or /128): IPv4 dotted quads or IPv6 (brackets
// allowed, "[::1]/128"). kInvalidArgument naming `text` for anything else: a malformed address, a
// prefix that is not 0..32 (IPv4) or 0..128 (IPv6) in decimal digits, or an address with bits
// set past the prefix ("10.0.0.1/8", which the message suggests writing as "10.0.0.0/8").
Result<AddressRange> ParseAddressRange(std::string_view text);

// The address literal `text` in one spelling (inet_ntop's), without brackets or an IPv6 zone
// ("%eth0"); an IPv4-mapped IPv6 address (::ffff:a.b.c.d, as a dual-stack listener reports an
// IPv4 peer) as its IPv4 address. "" when `text` is not an address literal.
std::string CanonicalAddress(std::string_view text);

// The TCP peers whose X-Forwarded-* headers are honoured; empty: none (the default). A value type;
// const methods are thread-safe.
class TrustedProxies {
 public:
  TrustedProxies() = default;
  // Each entry parsed by ParseAddressRange; the first bad one's error (naming it) otherwise.
  static Result<TrustedProxies> Parse(const std::vector<std::string>& entries);

  bool empty() const { return ranges_.empty(); }
  // True when the address literal `address` (any spelling CanonicalAddress reads) lies in one of
  // the ranges. False for anything that is not an address literal.
  bool Contains(std::string_view address) const;

 private:
  std::vector<AddressRange> ranges_;
};

// What the transport knows of a request before any X-Forwarded-* header is read.
struct ForwardedInput {
  std::string_view peer;  // the TCP peer's address
  bool tls = false;       // the connection is TLS
  std::string_view host;  // the Host header; "" when absent
  // Each header's field lines in the order received; empty when the header is absent.
  std::vector<std::string_view> forwarded_for;
  std::vector<std::string_view> forwarded_proto;
  std::vector<std::string_view> forwarded_host;
};

// The request as its client made it.
struct EffectiveRequest {
  std::string scheme;          // "http" or "https"
  std::string host;            // a Host header value ("name", "name:port", "[::1]:7600"), or ""
  std::string client_address;  // CanonicalAddress of the client; "" when the peer is unknown
  bool forwarded = false;      // the peer is a trusted proxy, so its headers were read
};

// The scheme, Host and client address of a request.
//
// From a peer that is not a trusted proxy: the connection's scheme ("https" with TLS), the Host
// header and the peer; every X-Forwarded-* header is ignored, whatever it holds.
//
// From a trusted proxy:
// - scheme: X-Forwarded-Proto, exactly one value, "http" or "https" (any case); absent: the
//   connection's scheme.
// - host: X-Forwarded-Host, exactly one value that is a well-formed Host value (HostOfHeader);
//   absent: the Host header.
// - client: X-Forwarded-For read from the right (its lines joined with ","): the right-most
//   address that is not itself a trusted proxy; when every one is, the left-most. Each element
//   is an address literal (IPv6 possibly in brackets), spaces around it allowed. Absent: the
//   peer (a client on the proxy's own machine connecting directly).
// kInvalidArgument, its message naming the header, when one of them is malformed: several
// values (two field lines, or a list), an empty or unknown proto, a bad Host value, an element of
// X-Forwarded-For that is not an address. The transport answers it with 400.
Result<EffectiveRequest> ResolveForwarded(const TrustedProxies& proxies,
                                          const ForwardedInput& input);

// The origin (RFC 6454) of a request to `host` (a Host header value) over `scheme`:
// "https://example.com", "http://127.0.0.1:7600", "http://[::1]:7600"; lower-cased, without the
// scheme's default port (80 for http, 443 for https). "" when `host` is malformed or `scheme` is
// neither http nor https. A browser's Origin header of a page served through the same host and
// scheme equals it.
std::string OriginOf(std::string_view scheme, std::string_view host);

}  // namespace agentstream::server
