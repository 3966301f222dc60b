#pragma once
/// Which address an announce comes from: the socket peer, or — only when
/// that peer is a configured trusted proxy — what the proxy says in
/// `X-Forwarded-For` / `X-Real-IP`.
///
/// Security reasoning: a tracker hands the address it records to every other
/// peer of the swarm. If any client could name an address, it could point a
/// swarm at a victim (BEP 3 `ip=` abuse, reflected connection floods). So
/// headers are believed only from proxies the operator listed, and the `ip`
/// query parameter only when the operator opted in (`http.trust-ip-param`).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/types.hpp"

namespace sk {

/// An address block such as `10.0.0.0/8` or `fd00::/8`; a bare address is a
/// block of one (/32 or /128).
struct address_block {
  ip_address base;  ///< host bits already cleared
  unsigned prefix = 0;

  /// Parses `ADDR` or `ADDR/PREFIX`. IPv4-mapped IPv6 text is normalised to
  /// IPv4 (prefix reduced by 96). Nullopt on anything malformed.
  static std::optional<address_block> parse(std::string_view text);
  /// True if `a` lies inside this block (same family only).
  bool contains(const ip_address& a) const noexcept;
  /// `ADDR/PREFIX` text.
  std::string to_string() const;
};

/// The proxies whose forwarding headers are believed.
class trusted_proxies {
 public:
  trusted_proxies() = default;
  explicit trusted_proxies(std::vector<address_block> blocks) : blocks_(std::move(blocks)) {}

  bool empty() const noexcept { return blocks_.empty(); }
  bool contains(const ip_address& a) const noexcept;
  const std::vector<address_block>& blocks() const noexcept { return blocks_; }

 private:
  std::vector<address_block> blocks_;
};

/// Parses one textual address as it appears in a forwarding header: trims
/// blanks, accepts `[v6]`; false on anything else (ports, obfuscated ids).
bool parse_forwarded_address(std::string_view text, ip_address& out) noexcept;

/// The client's address.
///
/// When `socket_peer` is not a trusted proxy the headers are ignored. When it
/// is, `X-Forwarded-For` is walked from the right (the hop nearest to us)
/// past every trusted proxy; the first untrusted hop is the client (a client
/// can prepend whatever it likes, so the leftmost entry proves nothing). If
/// every hop is trusted, the leftmost is used. Without a usable
/// `X-Forwarded-For`, `X-Real-IP` is used; without either, the socket peer.
/// `x_forwarded_for` is every X-Forwarded-For field joined by commas.
ip_address resolve_client_address(const ip_address& socket_peer, std::string_view x_forwarded_for,
                                  std::string_view x_real_ip, const trusted_proxies& proxies);

}  // namespace sk
