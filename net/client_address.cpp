#include "net/client_address.hpp"

#include <algorithm>
#include <charconv>

#include "protocol/text.hpp"

namespace sk {

namespace {

/// Clears every bit of `a` after the first `prefix` bits.
void clear_host_bits(ip_address& a, unsigned prefix) noexcept {
  const unsigned total = static_cast<unsigned>(a.length()) * 8;
  for (unsigned bit = prefix; bit < total; ++bit)
    a.bytes[bit / 8] &= static_cast<std::uint8_t>(~(0x80u >> (bit % 8)));
}

}  // namespace

std::optional<address_block> address_block::parse(std::string_view text) {
  text = trim(text);
  const auto slash = text.find('/');
  const std::string_view addr_text = text.substr(0, slash);
  // An IPv4-mapped block written as IPv6 (::ffff:10.0.0.0/104) comes out of
  // ip_address::parse as IPv4; its prefix then counts from bit 96.
  const bool written_as_v6 = addr_text.find(':') != std::string_view::npos;
  address_block b;
  if (!ip_address::parse(addr_text, b.base)) return std::nullopt;
  const unsigned written_bits = written_as_v6 ? 128 : 32;
  unsigned prefix = written_bits;
  if (slash != std::string_view::npos) {
    const std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3) return std::nullopt;
    const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
    if (ec != std::errc{} || end != p.data() + p.size() || prefix > written_bits)
      return std::nullopt;
  }
  if (written_as_v6 && !b.base.v6) {
    if (prefix < 96) return std::nullopt;  // would span more than the mapped range
    prefix -= 96;
  }
  b.prefix = prefix;
  clear_host_bits(b.base, prefix);
  return b;
}

bool address_block::contains(const ip_address& a) const noexcept {
  if (a.v6 != base.v6) return false;
  const unsigned full_bytes = prefix / 8;
  if (!std::equal(a.bytes.begin(), a.bytes.begin() + full_bytes, base.bytes.begin())) return false;
  const unsigned rest = prefix % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xffu << (8 - rest));
  return (a.bytes[full_bytes] & mask) == base.bytes[full_bytes];
}

std::string address_block::to_string() const {
  return base.to_string() + "/" + std::to_string(prefix);
}

bool trusted_proxies::contains(const ip_address& a) const noexcept {
  return std::any_of(blocks_.begin(), blocks_.end(),
                     [&](const address_block& b) { return b.contains(a); });
}

bool parse_forwarded_address(std::string_view text, ip_address& out) noexcept {
  text = trim(text);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']')
    text = text.substr(1, text.size() - 2);
  return ip_address::parse(text, out);
}

ip_address resolve_client_address(const ip_address& socket_peer, std::string_view x_forwarded_for,
                                  std::string_view x_real_ip, const trusted_proxies& proxies) {
  if (proxies.empty() || !proxies.contains(socket_peer)) return socket_peer;
  if (!trim(x_forwarded_for).empty()) {
    // Walk right to left: each proxy appends the address it received from.
    std::optional<ip_address> leftmost_trusted;
    std::string_view rest = x_forwarded_for;
    while (!rest.empty()) {
      const auto comma = rest.rfind(',');
      const std::string_view hop = comma == std::string_view::npos ? rest : rest.substr(comma + 1);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(0, comma);
      ip_address a;
      if (!parse_forwarded_address(hop, a)) {
        // A hop we cannot read: anything left of it came through a party we
        // cannot vouch for, so stop at the last hop we could verify.
        break;
      }
      if (!proxies.contains(a)) return a;
      leftmost_trusted = a;
    }
    if (leftmost_trusted) return *leftmost_trusted;
  }
  ip_address real;
  if (!trim(x_real_ip).empty() && parse_forwarded_address(x_real_ip, real)) return real;
  return socket_peer;
}

}  // namespace sk
