#include "tracker/peer_index_address.hpp"

#include <algorithm>
#include <cassert>
#include <random>

#include "tracker/random.hpp"

namespace sk {

namespace {

/// Drawn once per process from the OS, so the hash depends on more than the
/// table's seed (which also seeds the observable selection PRNG).
std::uint64_t address_secret() {
  static const std::uint64_t secret = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return secret;
}

/// 64x64 -> 128-bit multiply, folded (the wyhash mixing step).
inline std::uint64_t mum(std::uint64_t a, std::uint64_t b) noexcept {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

}  // namespace

std::uint64_t address_hash(const ip_address& ip, std::uint64_t seed) noexcept {
  std::uint64_t s = seed ^ 0xadd7'e55e'5eedULL ^ address_secret();
  const std::uint64_t k0 = splitmix64(s);
  const std::uint64_t k1 = splitmix64(s) | 1;
  // The folded product of the word and the family under secret keys mixes
  // every input bit into every output bit.
  const std::uint64_t h = mum(address_bits(ip) ^ k0, k1 ^ (ip.v6 ? 0x9e3779b97f4a7c15ULL : 0));
  return mum(h, k1 ^ 0xbf58476d1ce4e5b9ULL);
}

template <class Key>
void address_counts::grow(family_map<Key>& m, bool v6) {
  const std::size_t cap = m.keys.empty() ? 16 : m.keys.size() * 2;
  peer_array<Key> keys(cap, 0);
  peer_array<std::uint16_t> counts(cap, 0);
  keys.swap(m.keys);
  counts.swap(m.counts);
  m.mask = static_cast<std::uint32_t>(cap - 1);
  for (std::size_t s = 0; s < keys.size(); ++s) {
    if (counts[s] == 0) continue;
    std::uint32_t t = static_cast<std::uint32_t>(hash_of_key(keys[s], v6)) & m.mask;
    while (m.counts[t] != 0) t = (t + 1) & m.mask;
    m.keys[t] = keys[s];
    m.counts[t] = counts[s];
  }
}

template <class Key>
void address_counts::add_to(family_map<Key>& m, Key key, std::uint64_t h, bool v6) {
  // Load <= 3/4 after this insert.
  if (4 * (m.size + 1) > 3 * m.keys.size()) {
    grow(m, v6);
  }
  const std::uint32_t s = m.find(key, h);
  if (m.counts[s] == 0) {
    m.keys[s] = key;
    m.counts[s] = 1;
    ++m.size;
  } else if (m.counts[s] < max_count) {
    ++m.counts[s];
  }
}

template <class Key>
void address_counts::remove_from(family_map<Key>& m, Key key, std::uint64_t h,
                                 bool v6) noexcept {
  if (m.size == 0) {
    return;
  }
  std::uint32_t s = m.find(key, h);
  assert(m.counts[s] != 0);
  if (m.counts[s] == 0) {
    return;
  }
  if (m.counts[s] > 1) {
    --m.counts[s];
    return;
  }
  // Backward-shift deletion: an entry later in the run moves into the hole
  // unless its home lies (cyclically) after the hole and up to itself.
  m.counts[s] = 0;
  --m.size;
  for (std::uint32_t j = (s + 1) & m.mask; m.counts[j] != 0; j = (j + 1) & m.mask) {
    const std::uint32_t home = static_cast<std::uint32_t>(hash_of_key(m.keys[j], v6)) & m.mask;
    const bool stays = s <= j ? (s < home && home <= j) : (s < home || home <= j);
    if (!stays) {
      m.keys[s] = m.keys[j];
      m.counts[s] = m.counts[j];
      m.counts[j] = 0;
      s = j;
    }
  }
}

void address_counts::add(const ip_address& ip) {
  if (ip.v6) {
    add_to(v6_, address_bits(ip), hash_of(ip), true);
  } else {
    add_to(v4_, key4(ip), hash_of(ip), false);
  }
}

void address_counts::remove(const ip_address& ip) noexcept {
  if (ip.v6) {
    remove_from(v6_, address_bits(ip), hash_of(ip), true);
  } else {
    remove_from(v4_, key4(ip), hash_of(ip), false);
  }
}

}  // namespace sk
