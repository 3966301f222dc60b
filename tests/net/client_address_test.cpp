#include "net/client_address.hpp"

#include <gtest/gtest.h>

namespace sk {
namespace {

ip_address ip(const char* text) {
  ip_address a;
  EXPECT_TRUE(ip_address::parse(text, a)) << text;
  return a;
}

trusted_proxies proxies(std::initializer_list<const char*> blocks) {
  std::vector<address_block> out;
  for (const char* b : blocks) {
    auto parsed = address_block::parse(b);
    EXPECT_TRUE(parsed.has_value()) << b;
    if (parsed) out.push_back(*parsed);
  }
  return trusted_proxies{std::move(out)};
}

TEST(AddressBlock, ParsesAddressesAndPrefixes) {
  EXPECT_EQ(address_block::parse("10.0.0.0/8")->to_string(), "10.0.0.0/8");
  EXPECT_EQ(address_block::parse("10.1.2.3/8")->to_string(), "10.0.0.0/8") << "host bits cleared";
  EXPECT_EQ(address_block::parse("127.0.0.1")->to_string(), "127.0.0.1/32");
  EXPECT_EQ(address_block::parse("::1")->to_string(), "::1/128");
  EXPECT_EQ(address_block::parse("fd00::/8")->to_string(), "fd00::/8");
  EXPECT_EQ(address_block::parse(" 192.168.1.0/24 ")->to_string(), "192.168.1.0/24");
  // IPv4-mapped IPv6 becomes IPv4 (prefix counted from bit 96).
  EXPECT_EQ(address_block::parse("::ffff:10.0.0.0/104")->to_string(), "10.0.0.0/8");
  EXPECT_EQ(address_block::parse("0.0.0.0/0")->to_string(), "0.0.0.0/0");
}

TEST(AddressBlock, RejectsMalformedText) {
  for (const char* bad : {"", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0/8",
                          "host.example", "10.0.0.0/8/8", "::ffff:10.0.0.0/64", "10.0.0.0/-1"})
    EXPECT_FALSE(address_block::parse(bad).has_value()) << bad;
}

TEST(AddressBlock, ContainsRespectsPrefixAndFamily) {
  const auto b = *address_block::parse("10.20.0.0/14");
  EXPECT_TRUE(b.contains(ip("10.20.0.1")));
  EXPECT_TRUE(b.contains(ip("10.23.255.255")));
  EXPECT_FALSE(b.contains(ip("10.24.0.0")));
  EXPECT_FALSE(b.contains(ip("2001:db8::1"))) << "other family";
  const auto v6 = *address_block::parse("2001:db8::/32");
  EXPECT_TRUE(v6.contains(ip("2001:db8:1::5")));
  EXPECT_FALSE(v6.contains(ip("2001:db9::")));
  EXPECT_FALSE(v6.contains(ip("10.0.0.1")));
  EXPECT_TRUE(address_block::parse("0.0.0.0/0")->contains(ip("203.0.113.9")));
  EXPECT_FALSE(address_block::parse("0.0.0.0/0")->contains(ip("::1")));
}

TEST(ClientAddress, HeadersAreIgnoredFromUntrustedPeers) {
  const auto socket_peer = ip("203.0.113.7");
  EXPECT_EQ(resolve_client_address(socket_peer, "10.1.1.1", "10.2.2.2", proxies({})), socket_peer);
  EXPECT_EQ(resolve_client_address(socket_peer, "10.1.1.1", "10.2.2.2", proxies({"127.0.0.1"})),
            socket_peer);
}

TEST(ClientAddress, RightmostUntrustedHopWins) {
  const auto p = proxies({"127.0.0.1", "10.0.0.0/8"});
  const auto proxy = ip("127.0.0.1");
  EXPECT_EQ(resolve_client_address(proxy, "198.51.100.1", "", p), ip("198.51.100.1"));
  EXPECT_EQ(resolve_client_address(proxy, "6.6.6.6, 198.51.100.1", "", p), ip("198.51.100.1"));
  EXPECT_EQ(resolve_client_address(proxy, "198.51.100.1, 10.0.0.5", "", p), ip("198.51.100.1"));
  EXPECT_EQ(resolve_client_address(proxy, " [2001:db8::7] ", "", p), ip("2001:db8::7"));
  // Every hop trusted: the leftmost is the best we know.
  EXPECT_EQ(resolve_client_address(proxy, "10.0.0.9, 10.0.0.5", "", p), ip("10.0.0.9"));
  // An unreadable hop stops the walk at the last verified hop.
  EXPECT_EQ(resolve_client_address(proxy, "garbage, 10.0.0.5", "", p), ip("10.0.0.5"));
  EXPECT_EQ(resolve_client_address(proxy, "garbage", "", p), proxy);
  // Mapped addresses are normalised like socket addresses.
  EXPECT_EQ(resolve_client_address(proxy, "::ffff:198.51.100.2", "", p), ip("198.51.100.2"));
}

TEST(ClientAddress, RealIpIsTheFallback) {
  const auto p = proxies({"127.0.0.1"});
  const auto proxy = ip("127.0.0.1");
  EXPECT_EQ(resolve_client_address(proxy, "", "198.51.100.3", p), ip("198.51.100.3"));
  EXPECT_EQ(resolve_client_address(proxy, "198.51.100.1", "198.51.100.3", p), ip("198.51.100.1"));
  EXPECT_EQ(resolve_client_address(proxy, "", "nonsense", p), proxy);
  EXPECT_EQ(resolve_client_address(proxy, "", "", p), proxy);
}

}  // namespace
}  // namespace sk
