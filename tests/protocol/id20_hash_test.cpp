// id20_hasher against hash flooding: info_hashes and peer_ids are chosen by
// clients, so the containers keyed by them must not let anyone aim keys at
// one bucket.

#include "protocol/types.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace sk {
namespace {

/// The unkeyed mix the containers used before (three odd multipliers and
/// xor-shifts): kept here only to build keys that collide under it.
std::uint64_t legacy_mix(const info_hash& x) {
  std::uint64_t w[3] = {0, 0, 0};
  std::memcpy(w, x.bytes.data(), 20);
  std::uint64_t h = w[0] * 0x9e3779b97f4a7c15ULL;
  h ^= (w[1] + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
  h ^= (w[2] + (h >> 29)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

/// Inverse of an odd 64-bit multiplier (Newton's iteration).
std::uint64_t inverse(std::uint64_t a) {
  std::uint64_t x = a;
  for (int i = 0; i < 6; ++i) x *= 2 - a * x;
  return x;
}

/// `n` distinct info_hashes whose legacy hash is the same full 64-bit value:
/// keep the first stage's result fixed, vary the second word and solve for
/// the first.
std::vector<info_hash> legacy_collisions(std::size_t n) {
  const std::uint64_t target = 0x0123456789abcdefULL;
  const std::uint64_t inv = inverse(0x9e3779b97f4a7c15ULL);
  std::vector<info_hash> out;
  for (std::uint64_t w1 = 1; out.size() < n; ++w1) {
    const std::uint64_t w0 = (target ^ ((w1 + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL)) * inv;
    info_hash h;
    std::memcpy(h.bytes.data(), &w0, 8);
    std::memcpy(h.bytes.data() + 8, &w1, 8);
    out.push_back(h);
  }
  return out;
}

template <class Map>
std::size_t largest_bucket(const Map& m) {
  std::size_t most = 0;
  for (std::size_t b = 0; b < m.bucket_count(); ++b) most = std::max(most, m.bucket_size(b));
  return most;
}

TEST(Id20Hash, KeysThatCollideUnderTheOldMixSpreadOut) {
  const auto keys = legacy_collisions(20000);
  // They really collide under the old function: one value for all.
  std::unordered_set<std::uint64_t> legacy;
  for (const auto& k : keys) legacy.insert(legacy_mix(k));
  ASSERT_EQ(legacy.size(), 1u);

  // Under the keyed hash the same keys spread over the buckets like random
  // ones: the longest bucket (what one lookup may have to walk) stays a
  // handful, where the old mix put all 20000 in one.
  std::unordered_map<info_hash, int, id20_hasher> m;
  for (const auto& k : keys) m.emplace(k, 1);
  ASSERT_EQ(m.size(), keys.size());
  EXPECT_LE(largest_bucket(m), 16u);
  std::unordered_set<std::size_t> hashes;
  for (const auto& k : keys) hashes.insert(id20_hasher{}(k));
  EXPECT_EQ(hashes.size(), keys.size());
}

TEST(Id20Hash, KeyedPerProcessAndStableWithinIt) {
  const info_hash h = info_hash::from_bytes("abcdefghijklmnopqrst");
  EXPECT_EQ(id20_hasher{}(h), id20_hasher{}(h));
  // The key is the process's secret, not a constant: the hash is SipHash
  // under it, and differs from the hash under an all-zero key.
  const std::array<std::uint8_t, 16> zero{};
  EXPECT_NE(id20_hash_key(), zero);
  EXPECT_NE(id20_hasher{}(h), id20_keyed_hash(zero, h.bytes.data()));
  EXPECT_EQ(id20_hasher{}(h), id20_keyed_hash(id20_hash_key(), h.bytes.data()));
}

}  // namespace
}  // namespace sk
