#pragma once
/// Peers per address in one swarm: the keyed address hash, and the counts
/// the per-address bound of a peer table reads (tracker/peer_table.hpp).
///
/// "Address" is what one host or one NAT gateway owns: an IPv4 address, or
/// the /64 prefix of an IPv6 address (one subscriber's network: an address
/// per peer there costs an attacker nothing).

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tracker/page_allocator.hpp"
#include "protocol/types.hpp"

namespace sk {

/// The counted part of `ip`: the IPv4 address, or the IPv6 /64 prefix, as
/// one word (network byte order in memory); the family is kept apart.
inline std::uint64_t address_bits(const ip_address& ip) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, ip.bytes.data(), ip.v6 ? 8 : 4);
  return w;
}

/// Keyed hash of `ip`'s address (IPv4, or IPv6 /64) under `seed` and a
/// per-process secret: addresses are chosen by clients, and an unkeyed hash
/// would let one aim many addresses at one bucket (or one selection tag).
std::uint64_t address_hash(const ip_address& ip, std::uint64_t seed) noexcept;

/// A 16-bit tag of `ip`'s address (the top bits of `address_hash`), for
/// selection's per-reply share: peers of one address share a tag; two
/// addresses share one with probability 2^-16 (then they share a quota).
inline std::uint16_t address_tag(const ip_address& ip, std::uint64_t seed) noexcept {
  return static_cast<std::uint16_t>(address_hash(ip, seed) >> 48);
}

/// address -> number of peers of one table: per family, open addressing
/// with linear probing over two parallel power-of-two arrays,
///
///   keys[s]   : the IPv4 address (4 bytes) / the IPv6 /64 prefix (8 bytes)
///   counts[s] : peers (0: empty slot)
///
/// 6 bytes per IPv4 slot (10 per IPv6 slot) at load <= 3/4, deletion by
/// backward shift (no tombstones). Counts saturate at `max_count`: a bound
/// above it cannot be enforced, so the schema keeps the bound at or below
/// it.
///
/// Only tables that can hold an address at its bound keep one (a table of
/// fewer peers than the bound cannot): most swarms never allocate it.
class address_counts {
 public:
  static constexpr std::uint32_t max_count = 0xffff;

  /// Keys the hash (the table's seed; see `address_hash`).
  explicit address_counts(std::uint64_t seed = 0) noexcept : seed_(seed) {}

  /// Peers counted at `ip`'s address.
  std::uint32_t count(const ip_address& ip) const noexcept {
    return ip.v6 ? v6_.count(address_bits(ip), hash_of(ip)) : v4_.count(key4(ip), hash_of(ip));
  }
  /// One more peer at `ip`'s address.
  void add(const ip_address& ip);
  /// One peer less at `ip`'s address (which must be counted).
  void remove(const ip_address& ip) noexcept;
  /// Distinct addresses counted.
  std::size_t size() const noexcept { return v4_.size + v6_.size; }
  std::size_t heap_bytes() const noexcept { return v4_.heap_bytes() + v6_.heap_bytes(); }

 private:
  /// One family's map; `Key` holds the counted bits.
  template <class Key>
  struct family_map {
    peer_array<Key> keys;
    peer_array<std::uint16_t> counts;
    std::uint32_t mask = 0;
    std::size_t size = 0;

    /// Slot of `key`, or the empty slot where it would go (`h`: its hash).
    std::uint32_t find(Key key, std::uint64_t h) const noexcept {
      for (std::uint32_t s = static_cast<std::uint32_t>(h) & mask;; s = (s + 1) & mask) {
        if (counts[s] == 0 || keys[s] == key) return s;
      }
    }
    std::uint32_t count(Key key, std::uint64_t h) const noexcept {
      return size == 0 ? 0 : counts[find(key, h)];
    }
    std::size_t heap_bytes() const noexcept {
      return keys.capacity() * sizeof(Key) + counts.capacity() * sizeof(std::uint16_t);
    }
  };

  static std::uint32_t key4(const ip_address& ip) noexcept {
    return static_cast<std::uint32_t>(address_bits(ip));
  }
  std::uint64_t hash_of(const ip_address& ip) const noexcept { return address_hash(ip, seed_); }
  /// The hash of a stored key of family `v6` (rehash, backward shift).
  std::uint64_t hash_of_key(std::uint64_t bits, bool v6) const noexcept {
    ip_address ip;
    ip.v6 = v6;
    std::memcpy(ip.bytes.data(), &bits, v6 ? 8 : 4);
    return address_hash(ip, seed_);
  }
  template <class Key>
  void add_to(family_map<Key>& m, Key key, std::uint64_t h, bool v6);
  template <class Key>
  void remove_from(family_map<Key>& m, Key key, std::uint64_t h, bool v6) noexcept;
  template <class Key>
  void grow(family_map<Key>& m, bool v6);

  family_map<std::uint32_t> v4_;
  family_map<std::uint64_t> v6_;
  std::uint64_t seed_;
};

}  // namespace sk
