// libFuzzer target: address text as it reaches the tracker from clients and
// proxies — ip_address::parse (protocol/types.hpp; the announce `ip=`
// parameter), and net/client_address.hpp: address blocks (trusted proxies),
// forwarding-header addresses and the client address resolution — plus the
// connection-id key text of the config (protocol/connection_id.hpp).
//
// Input: up to three fields separated by '\n': an address text, an
// X-Forwarded-For value, an X-Real-IP value. Every single-address parser
// runs on each field.
//
// Invariants checked besides "no sanitizer report":
// - parse -> to_string -> parse is the identity, the text fits
//   max_text_length, to_chars writes what to_string returns, and a failed
//   parse leaves its output untouched;
// - an address block is in range, contains its own base, and round-trips
//   through to_string;
// - the resolved client is the socket peer unless that is a trusted proxy,
//   and otherwise one of the addresses the headers name (or the peer);
// - a connection-id key parses only from exactly 32 hex digits.

#include <cstddef>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "net/client_address.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/types.hpp"

namespace {

using sk::address_block;
using sk::ip_address;

ip_address sentinel() {
  ip_address a;
  a.v6 = true;
  a.bytes.fill(0xa5);
  return a;
}

void check_address(std::string_view text) {
  ip_address a = sentinel();
  if (!ip_address::parse(text, a)) {
    FUZZ_CHECK(a == sentinel());
  } else {
    const std::string shown = a.to_string();
    FUZZ_CHECK(!shown.empty() && shown.size() <= ip_address::max_text_length);
    char buf[ip_address::max_text_length];
    FUZZ_CHECK(std::string_view(buf, a.to_chars(buf)) == shown);
    ip_address back;
    FUZZ_CHECK(ip_address::parse(shown, back) && back == a);
    if (a.v6) {
      // Normalised: an IPv4-mapped address never comes out as IPv6.
      static constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      FUZZ_CHECK(std::memcmp(a.bytes.data(), mapped, 12) != 0);
    } else {
      for (std::size_t i = 4; i < a.bytes.size(); ++i) FUZZ_CHECK(a.bytes[i] == 0);
    }
  }

  ip_address f = sentinel();
  if (sk::parse_forwarded_address(text, f)) {
    ip_address back;
    FUZZ_CHECK(sk::parse_forwarded_address(f.to_string(), back) && back == f);
    FUZZ_CHECK(sk::parse_forwarded_address("[" + f.to_string() + "]", back) && back == f);
  } else {
    FUZZ_CHECK(f == sentinel());
  }

  if (const auto block = address_block::parse(text)) {
    FUZZ_CHECK(block->prefix <= (block->base.v6 ? 128u : 32u));
    FUZZ_CHECK(block->contains(block->base));
    const auto back = address_block::parse(block->to_string());
    FUZZ_CHECK(back && back->base == block->base && back->prefix == block->prefix);
    if (ip_address::parse(text, f)) FUZZ_CHECK(block->contains(f));
  }

  sk::connection_id_key key{};
  key.fill(0x5a);
  const sk::connection_id_key before = key;
  if (sk::parse_connection_id_key(text, key)) {
    FUZZ_CHECK(text.size() == 32);
    for (const char c : text) FUZZ_CHECK(std::isxdigit(static_cast<unsigned char>(c)) != 0);
  } else {
    FUZZ_CHECK(key == before);
  }
}

const sk::trusted_proxies& proxies() {
  static const sk::trusted_proxies p({*address_block::parse("10.0.0.0/8"),
                                      *address_block::parse("192.168.0.0/16"),
                                      *address_block::parse("fd00::/8"),
                                      *address_block::parse("::1")});
  return p;
}

/// Every address the headers name, as resolve_client_address would read them.
std::vector<ip_address> named_addresses(std::string_view xff, std::string_view real) {
  std::vector<ip_address> out;
  while (true) {
    const auto comma = xff.find(',');
    ip_address a;
    if (sk::parse_forwarded_address(xff.substr(0, comma), a)) out.push_back(a);
    if (comma == std::string_view::npos) break;
    xff.remove_prefix(comma + 1);
  }
  ip_address a;
  if (sk::parse_forwarded_address(real, a)) out.push_back(a);
  return out;
}

bool one_of(const ip_address& a, const std::vector<ip_address>& set) {
  for (const auto& b : set)
    if (a == b) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view text, headers, xff, real;
  sk::fuzz::split_once(input, '\n', text, headers);
  sk::fuzz::split_once(headers, '\n', xff, real);
  check_address(text);
  check_address(xff);
  check_address(real);

  const ip_address untrusted = ip_address::make_v4(0xc6336401u);  // 198.51.100.1
  FUZZ_CHECK(sk::resolve_client_address(untrusted, xff, real, proxies()) == untrusted);
  const ip_address proxy = ip_address::make_v4(0x0a000001u);  // 10.0.0.1
  const ip_address client = sk::resolve_client_address(proxy, xff, real, proxies());
  FUZZ_CHECK(client == proxy || one_of(client, named_addresses(xff, real)));
  const ip_address none = sk::resolve_client_address(proxy, "", "", proxies());
  FUZZ_CHECK(none == proxy);
  return 0;
}
