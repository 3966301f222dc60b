// swarm_map: the directory stripe's table, checked against std::map under
// random inserts, lookups and erasures (probe runs shifted back, the last
// item moved into each gap), erasure while iterating, and memory given
// back when most items are gone.

#include "runtime/swarm_map.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

namespace sk {
namespace {

info_hash hash_of(std::uint64_t n) {
  info_hash h;
  std::memcpy(h.bytes.data() + 4, &n, sizeof n);
  h.bytes[19] = static_cast<std::uint8_t>(n * 31);
  return h;
}

std::string key(const info_hash& h) { return std::string(h.view()); }

TEST(SwarmMap, MatchesAnOrderedMapUnderRandomChurn) {
  swarm_map<std::unique_ptr<std::uint64_t>> m;
  std::map<std::string, std::uint64_t> ref;
  std::mt19937_64 rng(11);
  // Keys from a small space, so inserts hit present keys and erasures hit
  // absent ones often.
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 500; ++i) {
      const std::uint64_t n = rng() % 3000;
      const info_hash h = hash_of(n);
      switch (rng() % 3) {
        case 0: {  // insert
          auto [it, added] = m.emplace(h, std::make_unique<std::uint64_t>(n));
          ASSERT_EQ(added, ref.emplace(key(h), n).second);
          ASSERT_EQ(*it->second, n);
          break;
        }
        case 1: {  // erase
          auto it = m.find(h);
          ASSERT_EQ(it != m.end(), ref.count(key(h)) == 1);
          if (it != m.end()) {
            m.erase(it);
            ref.erase(key(h));
          }
          break;
        }
        default: {  // lookup, with the hash handed in
          auto it = m.find(h, m.hash(h));
          ASSERT_EQ(it != m.end(), ref.count(key(h)) == 1);
          if (it != m.end()) {
            ASSERT_EQ(*it->second, n);
          }
          break;
        }
      }
    }
    ASSERT_TRUE(m.check()) << "round " << round;
    ASSERT_EQ(m.size(), ref.size());
    for (const auto& [k, n] : ref) {
      auto it = m.find(hash_of(n));
      ASSERT_NE(it, m.end());
      ASSERT_EQ(key(it->first), k);
      ASSERT_EQ(*it->second, n);
    }
  }
}

TEST(SwarmMap, PrefetchHintsChangeNothing) {
  swarm_map<std::uint64_t> m;
  // An empty map has no slots to look at.
  m.prefetch_slot(m.hash(hash_of(1)));
  m.prefetch_item(m.hash(hash_of(1)));
  for (std::uint64_t n = 0; n < 1000; ++n) m.emplace(hash_of(n), n);
  // Present keys, absent ones, and hashes whose probe runs end anywhere.
  for (std::uint64_t n = 0; n < 3000; ++n) {
    const std::uint64_t hv = m.hash(hash_of(n));
    m.prefetch_slot(hv);
    m.prefetch_item(hv);
    m.prefetch_item(~hv);
  }
  ASSERT_TRUE(m.check());
  ASSERT_EQ(m.size(), 1000u);
  for (std::uint64_t n = 0; n < 1000; ++n) {
    auto it = m.find(hash_of(n));
    ASSERT_NE(it, m.end());
    ASSERT_EQ(it->second, n);
  }
  // Emptied (the arrays freed): no slot read.
  m.clear();
  m.prefetch_slot(m.hash(hash_of(1)));
  m.prefetch_item(m.hash(hash_of(1)));
  EXPECT_TRUE(m.check());
}

TEST(SwarmMap, ErasingWhileIteratingVisitsEveryItemOnce) {
  // Four in five erased: the arrays are rebuilt smaller during the walk.
  swarm_map<std::uint64_t> m;
  for (std::uint64_t n = 0; n < 5000; ++n) m.emplace(hash_of(n), n);
  const std::size_t room = m.heap_bytes();
  std::set<std::uint64_t> seen;
  std::size_t erased = 0;
  for (auto it = m.begin(); it != m.end();) {
    ASSERT_TRUE(seen.insert(it->second).second) << "visited twice: " << it->second;
    if (it->second % 5 != 0) {
      it = m.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  EXPECT_EQ(seen.size(), 5000u);
  EXPECT_EQ(m.size(), 5000u - erased);
  EXPECT_LT(m.heap_bytes(), room) << "no rebuild happened during the walk";
  ASSERT_TRUE(m.check());
  for (std::uint64_t n = 0; n < 5000; ++n) EXPECT_EQ(m.find(hash_of(n)) != m.end(), n % 5 == 0);
}

TEST(SwarmMap, GivesMemoryBackWhenMostItemsAreGone) {
  swarm_map<std::uint64_t> m;
  for (std::uint64_t n = 0; n < 100000; ++n) m.emplace(hash_of(n), n);
  const std::size_t full = m.heap_bytes();
  EXPECT_GE(m.slot_count() * 3, m.size() * 4);
  for (std::uint64_t n = 100; n < 100000; ++n) m.erase(m.find(hash_of(n)));
  ASSERT_TRUE(m.check());
  EXPECT_EQ(m.size(), 100u);
  EXPECT_LT(m.heap_bytes() * 100, full) << "a flood that expired must not keep its room";
  for (std::uint64_t n = 0; n < 100; ++n) ASSERT_NE(m.find(hash_of(n)), m.end());
  m.clear();
  EXPECT_EQ(m.heap_bytes(), 0u);
  EXPECT_EQ(m.find(hash_of(1)), m.end());
}

TEST(SwarmMap, AReservedInsertAllocatesNothing) {
  // The directory reserves before it spawns a swarm, so that the insert
  // after the spawn cannot fail: reserve_one must leave room for exactly
  // that insert at every size, growth boundaries included.
  swarm_map<std::uint64_t> m;
  for (std::uint64_t n = 0; n < 3000; ++n) {
    m.reserve_one();
    const std::size_t room = m.heap_bytes();
    const std::size_t slots = m.slot_count();
    ASSERT_TRUE(m.emplace(hash_of(n), n).second);
    ASSERT_EQ(m.heap_bytes(), room) << "insert " << n << " grew an array";
    ASSERT_EQ(m.slot_count(), slots);
  }
  ASSERT_TRUE(m.check());
}

}  // namespace
}  // namespace sk
