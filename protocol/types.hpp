#pragma once
/// Strong types shared by every layer: info_hash, peer_id, endpoints, events.
///
/// Pure C++17 (see ARCHITECTURE.md): no CAF, Asio, Beast or spdlog here.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

namespace sk {

/// A 20-byte identifier (SHA-1 info_hash or peer_id); compared bytewise.
template <class Tag>
struct id20 {
  static constexpr std::size_t size = 20;
  std::array<std::uint8_t, size> bytes{};

  /// Builds from exactly 20 raw bytes; the caller checks the length.
  static id20 from_bytes(std::string_view raw) noexcept {
    id20 x;
    std::memcpy(x.bytes.data(), raw.data(), size);
    return x;
  }
  std::string_view view() const noexcept {
    return {reinterpret_cast<const char*>(bytes.data()), size};
  }
  /// Lower-case hex, 40 characters (logs, admin API, opentracker whitelist).
  std::string hex() const {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out(2 * size, '0');
    for (std::size_t i = 0; i < size; ++i) {
      out[2 * i] = digits[bytes[i] >> 4];
      out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    return out;
  }
  friend bool operator==(const id20& a, const id20& b) noexcept { return a.bytes == b.bytes; }
  friend bool operator!=(const id20& a, const id20& b) noexcept { return a.bytes != b.bytes; }
  friend bool operator<(const id20& a, const id20& b) noexcept { return a.bytes < b.bytes; }
};

struct info_hash_tag {};
struct peer_id_tag {};
using info_hash = id20<info_hash_tag>;
using peer_id = id20<peer_id_tag>;

/// An IP address, v4 or v6. IPv4-mapped IPv6 (::ffff:a.b.c.d) is normalised
/// to v4 by `make_v6`, so one client never appears under two families.
struct ip_address {
  bool v6 = false;
  /// v4 uses bytes[0..3]; v6 uses all 16. Network byte order.
  std::array<std::uint8_t, 16> bytes{};

  static ip_address make_v4(const std::uint8_t (&b)[4]) noexcept {
    ip_address a;
    std::memcpy(a.bytes.data(), b, 4);
    return a;
  }
  static ip_address make_v4(std::uint32_t host_order) noexcept {
    ip_address a;
    a.bytes[0] = static_cast<std::uint8_t>(host_order >> 24);
    a.bytes[1] = static_cast<std::uint8_t>(host_order >> 16);
    a.bytes[2] = static_cast<std::uint8_t>(host_order >> 8);
    a.bytes[3] = static_cast<std::uint8_t>(host_order);
    return a;
  }
  static ip_address make_v6(const std::uint8_t (&b)[16]) noexcept {
    static constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    ip_address a;
    if (std::memcmp(b, mapped, 12) == 0) {
      std::memcpy(a.bytes.data(), b + 12, 4);
      return a;
    }
    a.v6 = true;
    std::memcpy(a.bytes.data(), b, 16);
    return a;
  }
  std::size_t length() const noexcept { return v6 ? 16 : 4; }
  /// The raw address bytes (4 or 16), e.g. for BEP 24 `external ip`.
  std::string_view raw() const noexcept {
    return {reinterpret_cast<const char*>(bytes.data()), length()};
  }
  /// Longest text `to_chars` writes: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".
  static constexpr std::size_t max_text_length = 45;
  /// Writes the `to_string` text to `out` (room for `max_text_length`
  /// chars, no terminator) and returns its length. Allocates nothing: the
  /// reply encoder uses it per peer.
  std::size_t to_chars(char* out) const noexcept;
  /// Dotted quad or RFC 5952 text (lower-case hex, longest run of two or
  /// more zero groups as "::", the first one on a tie; an IPv4-mapped
  /// address that was not normalised prints as ::ffff:a.b.c.d).
  std::string to_string() const;
  /// Parses dotted-quad IPv4 or textual IPv6; false on anything else.
  /// Strict: IPv4 is exactly four decimal parts 0..255 without leading
  /// zeros ("010" is octal to some parsers, so it is refused rather than
  /// guessed); IPv6 is RFC 4291 text (hex groups of 1..4 digits, at most one
  /// "::", an optional dotted-quad tail) without zone id or brackets. An
  /// IPv4-mapped IPv6 address comes out as IPv4 (see `make_v6`). `out` is
  /// untouched on failure.
  static bool parse(std::string_view text, ip_address& out) noexcept;

  friend bool operator==(const ip_address& a, const ip_address& b) noexcept {
    return a.v6 == b.v6 && a.bytes == b.bytes;
  }
  friend bool operator!=(const ip_address& a, const ip_address& b) noexcept { return !(a == b); }
};

/// An address and port as a peer is reachable at.
struct endpoint {
  ip_address ip;
  std::uint16_t port = 0;
  friend bool operator==(const endpoint& a, const endpoint& b) noexcept {
    return a.ip == b.ip && a.port == b.port;
  }
  friend bool operator!=(const endpoint& a, const endpoint& b) noexcept { return !(a == b); }
};

/// The announce `event` parameter. `none` is an ordinary re-announce.
/// Announce events. `paused` is BEP 21's partial seed (HTTP `event=paused`,
/// UDP event 4 as libtorrent sends it); the values 0..3 are BEP 15's.
enum class announce_event : std::uint8_t {
  none = 0,
  completed = 1,
  started = 2,
  stopped = 3,
  paused = 4
};

/// The per-process secret key of `id20_hasher`: 16 bytes from the OS's
/// random source, drawn once (thread-safe) on first use.
const std::array<std::uint8_t, 16>& id20_hash_key() noexcept;

/// SipHash-2-4 of 20 bytes under `key` (protocol/siphash.hpp).
std::uint64_t id20_keyed_hash(const std::array<std::uint8_t, 16>& key,
                              const unsigned char* bytes) noexcept;

/// Hash for unordered containers of info_hashes and peer_ids: SipHash-2-4
/// under a per-process secret key. Both are chosen by clients, and an
/// unkeyed mix lets anyone compute ids that collide (with odd multipliers
/// every 64-bit collision can be solved for directly) and turn each lookup
/// of a directory stripe or supervisor map into a scan of one bucket. The
/// key is copied into the hasher, so a hash reads no global; results differ
/// between processes (nothing observable may iterate such a container in
/// hash order).
struct id20_hasher {
  id20_hasher() noexcept : key_(id20_hash_key()) {}
  template <class Tag>
  std::size_t operator()(const id20<Tag>& x) const noexcept {
    return static_cast<std::size_t>(id20_keyed_hash(key_, x.bytes.data()));
  }

 private:
  std::array<std::uint8_t, 16> key_;
};

}  // namespace sk
