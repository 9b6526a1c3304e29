#include "server/forwarded.h"

#include <gtest/gtest.h>

namespace agentstream::server {
namespace {

TrustedProxies Proxies(const std::vector<std::string>& entries) {
  Result<TrustedProxies> proxies = TrustedProxies::Parse(entries);
  EXPECT_TRUE(proxies.ok()) << proxies.status().ToString();
  return proxies.ok() ? *proxies : TrustedProxies();
}

TEST(ForwardedTest, AddressRangesParseStrictly) {
  for (const char* good : {"127.0.0.1", "127.0.0.1/32", "10.0.0.0/8", "0.0.0.0/0", "::1", "[::1]",
                           "[::1]/128", "fd00::/8", "::/0", "100.64.0.0/10"}) {
    EXPECT_TRUE(ParseAddressRange(good).ok()) << good;
  }
  for (const char* bad : {"", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1",
                          "10.0.0.0/+8", "10.0.0.0/8/8", "10.0.0.0/ 8", "10.0.0", "localhost",
                          "fe80::1%eth0", "10.0.0.0/0008", "1.2.3.4:80"}) {
    EXPECT_EQ(ParseAddressRange(bad).status().code(), ErrorCode::kInvalidArgument) << bad;
  }
  const Result<AddressRange> host_bits = ParseAddressRange("10.0.0.1/8");
  ASSERT_FALSE(host_bits.ok());
  EXPECT_NE(host_bits.status().message().find("10.0.0.0/8"), std::string::npos)
      << host_bits.status().message();
  EXPECT_NE(TrustedProxies::Parse({"127.0.0.1", "nope"}).status().message().find("\"nope\""),
            std::string::npos);
}

TEST(ForwardedTest, ContainsMatchesPrefixesOfOneFamily) {
  const TrustedProxies proxies = Proxies({"10.1.0.0/16", "fd00::/8", "192.168.7.9"});
  EXPECT_TRUE(proxies.Contains("10.1.255.3"));
  EXPECT_FALSE(proxies.Contains("10.2.0.1"));
  EXPECT_TRUE(proxies.Contains("192.168.7.9"));
  EXPECT_FALSE(proxies.Contains("192.168.7.8"));
  EXPECT_TRUE(proxies.Contains("fd12:3456::1"));
  EXPECT_TRUE(proxies.Contains("[fd12::1]"));
  EXPECT_FALSE(proxies.Contains("fe80::1"));
  // A dual-stack listener reports IPv4 peers as IPv4-mapped IPv6.
  EXPECT_TRUE(proxies.Contains("::ffff:10.1.2.3"));
  EXPECT_FALSE(proxies.Contains("localhost"));
  EXPECT_FALSE(proxies.Contains(""));
  EXPECT_FALSE(TrustedProxies().Contains("127.0.0.1"));
  EXPECT_TRUE(Proxies({"0.0.0.0/0"}).Contains("203.0.113.5"));
  EXPECT_FALSE(Proxies({"0.0.0.0/0"}).Contains("::1"));
  EXPECT_TRUE(Proxies({"10.0.0.0/9"}).Contains("10.127.0.1"));
  EXPECT_FALSE(Proxies({"10.0.0.0/9"}).Contains("10.128.0.1"));
}

TEST(ForwardedTest, CanonicalAddressesHaveOneSpelling) {
  EXPECT_EQ(CanonicalAddress("::ffff:127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(CanonicalAddress("[0:0::1]"), "::1");
  EXPECT_EQ(CanonicalAddress("FE80::1%eth0"), "fe80::1");
  EXPECT_EQ(CanonicalAddress("example.com"), "");
}

ForwardedInput Input(std::string_view peer, std::string_view host = "example.com") {
  ForwardedInput in;
  in.peer = peer;
  in.host = host;
  return in;
}

TEST(ForwardedTest, AnUntrustedPeersHeadersAreIgnored) {
  const TrustedProxies proxies = Proxies({"127.0.0.1/32"});
  ForwardedInput in = Input("203.0.113.9", "daemon:7600");
  in.forwarded_for = {"127.0.0.1"};
  in.forwarded_proto = {"https"};
  in.forwarded_host = {"evil.example"};
  const Result<EffectiveRequest> r = ResolveForwarded(proxies, in);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->client_address, "203.0.113.9");
  EXPECT_EQ(r->scheme, "http");
  EXPECT_EQ(r->host, "daemon:7600");
  EXPECT_FALSE(r->forwarded);
  // Malformed values from an untrusted peer are not even read.
  in.forwarded_for = {"not an address"};
  in.forwarded_proto = {"gopher", "ftp"};
  EXPECT_TRUE(ResolveForwarded(proxies, in).ok());
  in.tls = true;
  EXPECT_EQ(ResolveForwarded(proxies, in)->scheme, "https");
  // No proxies at all: a loopback peer's headers are ignored too.
  in.peer = "127.0.0.1";
  EXPECT_EQ(ResolveForwarded(TrustedProxies(), in)->client_address, "127.0.0.1");
}

TEST(ForwardedTest, ATrustedProxyNamesSchemeHostAndClient) {
  const TrustedProxies proxies = Proxies({"127.0.0.1/32", "10.0.0.0/8"});
  ForwardedInput in = Input("127.0.0.1", "127.0.0.1:7600");
  in.forwarded_for = {"198.51.100.7"};
  in.forwarded_proto = {"HTTPS"};
  in.forwarded_host = {"agents.example.com"};
  Result<EffectiveRequest> r = ResolveForwarded(proxies, in);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->forwarded);
  EXPECT_EQ(r->scheme, "https");
  EXPECT_EQ(r->host, "agents.example.com");
  EXPECT_EQ(r->client_address, "198.51.100.7");

  // The right-most address that is not a trusted proxy: a client's forged left part is skipped.
  in.forwarded_for = {"127.0.0.1, 198.51.100.7", "10.2.3.4"};
  EXPECT_EQ(ResolveForwarded(proxies, in)->client_address, "198.51.100.7");
  in.forwarded_for = {" [2001:db8::7] ,10.9.9.9 "};
  EXPECT_EQ(ResolveForwarded(proxies, in)->client_address, "2001:db8::7");
  // Every hop a trusted proxy: the left-most is the client (a browser on the proxy's machine).
  in.forwarded_for = {"127.0.0.1,10.0.0.2"};
  EXPECT_EQ(ResolveForwarded(proxies, in)->client_address, "127.0.0.1");
  in.forwarded_for = {"::ffff:127.0.0.1"};
  EXPECT_EQ(ResolveForwarded(proxies, in)->client_address, "127.0.0.1");

  // Absent headers: the connection's own scheme, Host and peer (a local client, not proxied).
  in.forwarded_for.clear();
  in.forwarded_proto.clear();
  in.forwarded_host.clear();
  r = ResolveForwarded(proxies, in);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->forwarded);
  EXPECT_EQ(r->scheme, "http");
  EXPECT_EQ(r->host, "127.0.0.1:7600");
  EXPECT_EQ(r->client_address, "127.0.0.1");
  in.peer = "::ffff:10.0.0.3";  // a dual-stack listener's spelling of a trusted IPv4 peer
  EXPECT_EQ(ResolveForwarded(proxies, in)->client_address, "10.0.0.3");
}

TEST(ForwardedTest, MalformedValuesFromATrustedProxyAreRefused) {
  const TrustedProxies proxies = Proxies({"127.0.0.1"});
  const auto refused = [&](const ForwardedInput& in, std::string_view header) {
    const Result<EffectiveRequest> r = ResolveForwarded(proxies, in);
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(header), std::string::npos) << r.status().message();
  };
  for (const std::vector<std::string_view>& bad :
       std::vector<std::vector<std::string_view>>{{"1.2.3.4, unknown"},
                                                  {"1.2.3.4,"},
                                                  {""},
                                                  {"1.2.3.4:5678"},
                                                  {"example.com"},
                                                  {"1.2.3.4", "fe80::1%eth0"},
                                                  {"1.2.3.4 5.6.7.8"}}) {
    ForwardedInput in = Input("127.0.0.1");
    in.forwarded_for = bad;
    refused(in, "X-Forwarded-For");
  }
  for (const std::vector<std::string_view>& bad : std::vector<std::vector<std::string_view>>{
           {"ftp"}, {""}, {"https, http"}, {"https", "https"}, {"https:"}}) {
    ForwardedInput in = Input("127.0.0.1");
    in.forwarded_proto = bad;
    refused(in, "X-Forwarded-Proto");
  }
  for (const std::vector<std::string_view>& bad :
       std::vector<std::vector<std::string_view>>{{"a.example, b.example"},
                                                  {"a.example", "b.example"},
                                                  {"a.example:http"},
                                                  {"a/b"},
                                                  {""},
                                                  {"[::1"}}) {
    ForwardedInput in = Input("127.0.0.1");
    in.forwarded_host = bad;
    refused(in, "X-Forwarded-Host");
  }
}

TEST(ForwardedTest, OriginsElideTheDefaultPort) {
  EXPECT_EQ(OriginOf("https", "Example.COM"), "https://example.com");
  EXPECT_EQ(OriginOf("https", "example.com:443"), "https://example.com");
  EXPECT_EQ(OriginOf("http", "example.com:443"), "http://example.com:443");
  EXPECT_EQ(OriginOf("http", "127.0.0.1:80"), "http://127.0.0.1");
  EXPECT_EQ(OriginOf("http", "127.0.0.1:7600"), "http://127.0.0.1:7600");
  EXPECT_EQ(OriginOf("https", "[::1]:8443"), "https://[::1]:8443");
  EXPECT_EQ(OriginOf("https", "[::1]"), "https://[::1]");
  EXPECT_EQ(OriginOf("ftp", "example.com"), "");
  EXPECT_EQ(OriginOf("https", ""), "");
  EXPECT_EQ(OriginOf("https", "a b"), "");
}

}  // namespace
}  // namespace agentstream::server
