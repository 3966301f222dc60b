#pragma once
/// Random swarms for the allocation tests: a peer_table plus the truth about
/// every peer (role, family, flags, progress), and a decoder from a reply
/// back to peer indices.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tracker/allocation.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/random.hpp"
#include "test_util.hpp"

namespace sk::test {

struct peer_info {
  peer_key key;
  endpoint ep;
  bool seeder = false;
  std::uint8_t flags = 0;
  float progress = -1.0f;
  bool has(peer_flag f) const noexcept { return (flags & f) != 0; }
};

/// A unique endpoint per peer number, each at an address of its own (the
/// per-address rules count an IPv6 /64 as one address): IPv4 10.a.b.c or
/// IPv6 2001:db8:ab:cd::1.
inline endpoint endpoint_of(std::uint32_t n, bool ipv6) {
  if (ipv6) {
    std::uint8_t raw[16] = {0x20, 0x01, 0x0d, 0xb8};
    raw[4] = static_cast<std::uint8_t>(n >> 24);
    raw[5] = static_cast<std::uint8_t>(n >> 16);
    raw[6] = static_cast<std::uint8_t>(n >> 8);
    raw[7] = static_cast<std::uint8_t>(n);
    raw[15] = 1;
    return endpoint{ip_address::make_v6(raw), static_cast<std::uint16_t>(1000 + n % 50000)};
  }
  return endpoint{ip_address::make_v4(0x0a000000u + n), static_cast<std::uint16_t>(1000 + n % 50000)};
}

/// Probabilities of a random swarm's peer properties.
struct swarm_shape {
  std::uint32_t peers = 0;
  double seeder_fraction = 0.0;
  double v6_fraction = 0.0;
  double quarantined = 0.0;
  double unreachable = 0.0;
  double stalled = 0.0;
  double poor = 0.0;
};

inline double unit(fast_rng& rng) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }

/// A random shape: 0..max_peers peers; fractions picked so that the edge
/// cases (no seeders, only seeders, one family, no flags) all occur.
inline swarm_shape random_shape(fast_rng& rng, std::uint32_t max_peers = 2000) {
  swarm_shape s;
  s.peers = rng.below(max_peers + 1);
  const std::uint32_t sf = rng.below(6);
  s.seeder_fraction = sf == 0 ? 0.0 : sf == 1 ? 1.0 : sf == 2 ? 0.02 * unit(rng) : unit(rng);
  const std::uint32_t vf = rng.below(4);
  s.v6_fraction = vf == 0 ? 0.0 : vf == 1 ? 1.0 : unit(rng);
  auto flag_p = [&] { return rng.below(3) == 0 ? 0.0 : 0.5 * unit(rng); };
  s.quarantined = flag_p();
  s.unreachable = rng.below(4) == 0 ? 0.9 * unit(rng) : flag_p();
  s.stalled = flag_p();
  s.poor = flag_p();
  return s;
}

/// A table filled per `shape`, with the truth kept alongside.
struct swarm {
  std::unique_ptr<peer_table> table;
  std::vector<peer_info> peers;
  std::map<std::string, std::size_t> by_compact;

  std::size_t index_of(const endpoint& ep) const {
    auto it = by_compact.find(compact(ep));
    return it == by_compact.end() ? SIZE_MAX : it->second;
  }
};

inline swarm make_swarm(fast_rng& rng, const swarm_shape& shape, std::uint64_t table_seed) {
  swarm s;
  s.table = std::make_unique<peer_table>(table_seed);
  for (std::uint32_t n = 0; n < shape.peers; ++n) {
    peer_info p;
    const bool ipv6 = unit(rng) < shape.v6_fraction;
    p.ep = endpoint_of(n, ipv6);
    p.key = peer_key{pid(n), p.ep.ip};
    p.seeder = unit(rng) < shape.seeder_fraction;
    if (unit(rng) < shape.quarantined) p.flags |= flag_quarantined;
    if (unit(rng) < shape.unreachable) p.flags |= flag_unreachable;
    if (!p.seeder && unit(rng) < shape.stalled) p.flags |= flag_stalled;
    if (unit(rng) < shape.poor) p.flags |= flag_poor_contributor;
    p.progress = p.seeder ? 1.0f : (rng.below(5) == 0 ? -1.0f : static_cast<float>(unit(rng)));
    auto [ch, tr] = s.table->announce_ex(p.key.id, p.ep, p.seeder ? 0 : 1000,
                                         announce_event::started, at(1));
    EXPECT_EQ(ch, peer_table::change::added);
    tr->flags = p.flags;
    tr->progress = p.progress;
    s.by_compact.emplace(compact(p.ep), s.peers.size());
    s.peers.push_back(p);
  }
  s.table->sync();
  return s;
}

/// Peer indices of a compact reply (IPv4 part, then IPv6 part); SIZE_MAX for
/// bytes that match no peer.
inline std::vector<std::size_t> decode(const swarm& s, const std::string& p4,
                                       const std::string& p6) {
  std::vector<std::size_t> out;
  EXPECT_EQ(p4.size() % 6, 0u);
  EXPECT_EQ(p6.size() % 18, 0u);
  for (std::size_t i = 0; i + 6 <= p4.size(); i += 6) {
    auto it = s.by_compact.find(p4.substr(i, 6));
    out.push_back(it == s.by_compact.end() ? SIZE_MAX : it->second);
  }
  for (std::size_t i = 0; i + 18 <= p6.size(); i += 18) {
    auto it = s.by_compact.find(p6.substr(i, 18));
    out.push_back(it == s.by_compact.end() ? SIZE_MAX : it->second);
  }
  return out;
}

inline std::vector<std::size_t> decode(const swarm& s, const std::vector<peer_entry>& entries) {
  std::vector<std::size_t> out;
  for (const auto& e : entries) {
    const std::size_t i = s.index_of(e.ep);
    out.push_back(i);
    if (i != SIZE_MAX) {
      EXPECT_EQ(e.id, s.peers[i].key.id);
    }
  }
  return out;
}

/// A seed per test run, printed so a failure can be replayed (set
/// SK_TEST_SEED to force one).
inline std::uint64_t test_seed() {
  std::uint64_t seed = 0;
  if (const char* env = std::getenv("SK_TEST_SEED")) {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    seed = static_cast<std::uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
  }
  std::printf("[ seed     ] SK_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace sk::test
