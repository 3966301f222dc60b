// The bounds of one address inside a swarm: the per-address counts, the
// table's per-address bound, the core's refusal, and each address's share
// of one reply.

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tracker/peer_index_address.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/random.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"
#include "announces.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::at;
using test::compact;
using test::pid;
using test::v4;
using test::v6;
using change = peer_table::change;
constexpr auto started = announce_event::started;
constexpr auto none = announce_event::none;
constexpr auto stopped = announce_event::stopped;

const info_hash hash = test::ih(0x5a);

endpoint v6_in(std::uint16_t prefix, std::uint16_t host, std::uint16_t port) {
  std::uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8, static_cast<std::uint8_t>(prefix >> 8),
                        static_cast<std::uint8_t>(prefix), 0, 0, 0, 0, 0, 0, 0, 0,
                        static_cast<std::uint8_t>(host >> 8), static_cast<std::uint8_t>(host)};
  return endpoint{ip_address::make_v6(b), port};
}

// -- address_counts ----------------------------------------------------------------

TEST(AddressCounts, MatchesAReferenceMapUnderRandomAddsAndRemoves) {
  address_counts a(7);
  std::map<std::pair<bool, std::uint64_t>, std::uint32_t> ref;
  std::vector<ip_address> present;
  fast_rng rng(11);
  for (int step = 0; step < 20000; ++step) {
    // Few distinct addresses, so counts go above 1 and back to 0 often.
    const std::uint32_t n = rng.below(300);
    const ip_address ip = n % 3 == 0 ? v6_in(static_cast<std::uint16_t>(n), static_cast<std::uint16_t>(step), 1).ip
                                     : ip_address::make_v4(0x0a000000u + n);
    const auto key = std::make_pair(ip.v6, address_bits(ip));
    if (rng.below(3) != 0 || present.empty()) {
      a.add(ip);
      ++ref[key];
      present.push_back(ip);
    } else {
      const std::size_t k = rng.below(static_cast<std::uint32_t>(present.size()));
      const ip_address gone = present[k];
      present[k] = present.back();
      present.pop_back();
      a.remove(gone);
      const auto gk = std::make_pair(gone.v6, address_bits(gone));
      if (--ref[gk] == 0) ref.erase(gk);
    }
  }
  EXPECT_EQ(a.size(), ref.size());
  for (const auto& [k, n] : ref) {
    ip_address ip;
    ip.v6 = k.first;
    std::memcpy(ip.bytes.data(), &k.second, ip.v6 ? 8 : 4);
    EXPECT_EQ(a.count(ip), n);
  }
  EXPECT_EQ(a.count(ip_address::make_v4(0x0b000001u)), 0u);
}

TEST(AddressCounts, AnIpv6Slash64IsOneAddressAndFamiliesStayApart) {
  address_counts a(1);
  a.add(v6_in(1, 1, 1).ip);
  a.add(v6_in(1, 2, 1).ip);   // same /64, other host
  a.add(v6_in(2, 1, 1).ip);   // other /64
  EXPECT_EQ(a.count(v6_in(1, 99, 1).ip), 2u);
  EXPECT_EQ(a.count(v6_in(2, 1, 1).ip), 1u);
  // An IPv4 address whose bytes equal an IPv6 prefix's first four is
  // another address.
  EXPECT_EQ(a.count(ip_address::make_v4(0x20010db8u)), 0u);
  EXPECT_EQ(a.size(), 2u);
}

// -- the table's per-address bound ---------------------------------------------------------

TEST(AddressBound, ANewPeerBeyondTheBoundIsRejectedKnownPeersAreServed) {
  peer_table t(3, 1000000, peer_table::default_max_addresses_per_id, 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.announce(pid(i), v4(10, 0, 0, 1, static_cast<std::uint16_t>(6000 + i)), 0,
                         started, at(0)),
              change::added);
  }
  EXPECT_TRUE(t.has_address_counts());  // the table reached the bound's size
  EXPECT_TRUE(t.address_full(v4(10, 0, 0, 1, 0).ip));
  EXPECT_EQ(t.announce(pid(9), v4(10, 0, 0, 1, 7000), 0, started, at(1)), change::rejected);
  // Another address is not affected; a known peer of the full one is
  // updated as always.
  EXPECT_EQ(t.announce(pid(9), v4(10, 0, 0, 2, 7000), 0, started, at(1)), change::added);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 6001), 0, none, at(2)), change::updated);
  // A peer that leaves frees its address's slot.
  EXPECT_EQ(t.announce(pid(0), v4(10, 0, 0, 1, 6000), 0, stopped, at(3)), change::removed);
  EXPECT_FALSE(t.address_full(v4(10, 0, 0, 1, 0).ip));
  EXPECT_EQ(t.announce(pid(9), v4(10, 0, 0, 1, 7000), 0, started, at(4)), change::added);
  EXPECT_EQ(t.peers_at(v4(10, 0, 0, 1, 0).ip), 3u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(AddressBound, IPv6PeersOfOneSlash64ShareTheBound) {
  peer_table t(3, 1000000, peer_table::default_max_addresses_per_id, 2);
  EXPECT_EQ(t.announce(pid(1), v6_in(7, 1, 6881), 0, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(2), v6_in(7, 2, 6881), 0, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(3), v6_in(7, 3, 6881), 0, started, at(0)), change::rejected);
  EXPECT_EQ(t.announce(pid(3), v6_in(8, 3, 6881), 0, started, at(0)), change::added);
  EXPECT_TRUE(t.check_invariants());
}

TEST(AddressBound, ExpiryRoamingAndCompactKeepTheCountsExact) {
  peer_table t(5, 1000000, peer_table::default_max_addresses_per_id, 4);
  for (int i = 0; i < 40; ++i) {
    // Ten addresses with four peers each.
    t.announce(pid(i), v4(10, 0, 1, static_cast<std::uint8_t>(i / 4), static_cast<std::uint16_t>(6000 + i)),
               100, started, at(i < 20 ? 0 : 800));
  }
  ASSERT_EQ(t.size(), 40u);
  EXPECT_TRUE(t.check_invariants());
  // Roaming into a full address is refused; into a free one moves the count.
  EXPECT_FALSE(t.roam({pid(0), v4(10, 0, 1, 0, 0).ip}, v4(10, 0, 1, 5, 6000)));
  EXPECT_TRUE(t.roam({pid(0), v4(10, 0, 1, 0, 0).ip}, v4(10, 0, 2, 0, 6000)));
  EXPECT_EQ(t.peers_at(v4(10, 0, 1, 0, 0).ip), 3u);
  EXPECT_EQ(t.peers_at(v4(10, 0, 2, 0, 0).ip), 1u);
  EXPECT_TRUE(t.check_invariants());
  // The first 20 expire; the counts follow every swap-remove.
  auto r = t.sweep(at(1000), seconds(500), 1000);
  EXPECT_TRUE(r.cycle_done);
  EXPECT_EQ(t.size(), 20u);
  EXPECT_TRUE(t.check_invariants());
  // Below half the bound's size, a compact gives the counts back; reaching
  // the bound builds them again.
  t.sweep(at(5000), seconds(500), 1000);
  EXPECT_TRUE(t.empty());
  EXPECT_FALSE(t.has_address_counts());
  for (int i = 0; i < 4; ++i) {
    t.announce(pid(100 + i), v4(10, 0, 3, 1, static_cast<std::uint16_t>(6000 + i)), 0, started,
               at(5001));
  }
  EXPECT_TRUE(t.has_address_counts());
  EXPECT_EQ(t.announce(pid(200), v4(10, 0, 3, 1, 7000), 0, started, at(5001)), change::rejected);
  EXPECT_TRUE(t.check_invariants());
}

TEST(AddressBound, SmallTablesKeepNoCountsAndTheCountCostsLittlePerPeer) {
  // Below the bound's size no table keeps counts (most swarms).
  peer_table small(1, 1000000, peer_table::default_max_addresses_per_id, 256);
  for (int i = 0; i < 255; ++i) {
    small.announce(pid(i), v4(10, 1, static_cast<std::uint8_t>(i / 250), static_cast<std::uint8_t>(i % 250), 6881), 0, started, at(0));
  }
  EXPECT_FALSE(small.has_address_counts());
  // A 1000-peer table of distinct addresses: what the counts add per peer
  // (the keys, counts and the object; the unit-level estimate of the
  // bound's memory cost).
  peer_table with(1, 1000000, peer_table::default_max_addresses_per_id, 256);
  peer_table without(1, 1000000, peer_table::default_max_addresses_per_id, 0);
  for (int i = 0; i < 1000; ++i) {
    const endpoint ep = v4(10, 2, static_cast<std::uint8_t>(i / 250), static_cast<std::uint8_t>(i % 250), 6881);
    with.announce(pid(i), ep, 0, started, at(0));
    without.announce(pid(i), ep, 0, started, at(0));
  }
  ASSERT_TRUE(with.has_address_counts());
  const double per_peer =
      static_cast<double>(with.heap_bytes() - without.heap_bytes()) / 1000.0;
  std::printf("per-address counts: %.1f heap bytes per peer (1000 distinct addresses)\n", per_peer);
  EXPECT_GT(per_peer, 0.0);
  EXPECT_LE(per_peer, 24.0);
}

// -- the swarm core's refusal -----------------------------------------------------------

swarm_announce make(std::uint64_t peer, const endpoint& ep, std::uint64_t left,
                    announce_event ev = announce_event::started, std::int32_t numwant = -1) {
  auto a = test::swarm_announce_of(hash, peer, ep, left, ev);
  a.request.numwant = numwant;
  return a;
}

swarm_config base_config() {
  swarm_config c;
  c.announce_interval = seconds(1200);
  c.min_interval = seconds(600);
  c.peer_timeout = seconds(3000);
  c.rng_seed = 5;
  return c;
}

TEST(AddressBound, TheCoreRefusesANewPeerWithRetryInAndServesKnownOnes) {
  swarm_config cfg = base_config();
  cfg.max_peers_per_address = 4;
  ASSERT_EQ(cfg.validate(), "");
  swarm_core core(hash, cfg, 1);
  for (int i = 0; i < 4; ++i) {
    announce_result r;
    ASSERT_TRUE(core.announce(make(i, v4(10, 9, 9, 9, static_cast<std::uint16_t>(7000 + i)), 0), at(0), r));
    EXPECT_TRUE(r.failure_reason.empty());
  }
  announce_result other;
  ASSERT_TRUE(core.announce(make(50, v4(10, 8, 8, 8, 7000), 100), at(0), other));
  announce_result refused;
  ASSERT_TRUE(core.announce(make(99, v4(10, 9, 9, 9, 7100), 100), at(1), refused));
  EXPECT_EQ(refused.failure_reason, address_full_reason);
  EXPECT_EQ(refused.retry_in_minutes, cfg.address_full_retry_in_minutes);
  EXPECT_EQ(refused.refused_at_cap, 0);
  EXPECT_TRUE(refused.peers4.empty());
  EXPECT_EQ(refused.stats.complete, 4);  // nothing stored
  EXPECT_EQ(core.table().size(), 5u);
  EXPECT_EQ(core.counters().address_refused, 1u);
  // A known peer of the full address is served as always (with peers).
  announce_result known;
  ASSERT_TRUE(core.announce(make(2, v4(10, 9, 9, 9, 7002), 0, none), at(700), known));
  EXPECT_TRUE(known.failure_reason.empty());
  EXPECT_FALSE(known.peers4.empty());
  EXPECT_TRUE(core.check_invariants());
}

TEST(AddressBound, ValidateRejectsABoundTheCountsCannotHold) {
  swarm_config cfg = base_config();
  cfg.max_peers_per_address = address_counts::max_count + 1;
  EXPECT_NE(cfg.validate(), "");
  cfg.max_peers_per_address = 0;  // unbounded
  EXPECT_EQ(cfg.validate(), "");
}

// -- each address's share of one reply ------------------------------------------------------

/// A swarm of `crowd` peers at 10.66.0.1 (half seeders) and `others`
/// leechers at addresses of their own, on policy `p`.
swarm_core crowded_swarm(policy_kind p, int crowd, int others) {
  swarm_config cfg = base_config();
  cfg.max_peers_per_address = 0;  // the share is what is tested here
  cfg.max_numwant = 200;
  cfg.default_policy = p;
  swarm_core core(hash, cfg, 9);
  announce_result r;
  for (int i = 0; i < crowd; ++i) {
    r = {};
    core.announce(make(i, v4(10, 66, 0, 1, static_cast<std::uint16_t>(1024 + i)), i % 2 == 0 ? 0 : 100), at(0), r);
  }
  for (int i = 0; i < others; ++i) {
    r = {};
    core.announce(make(10000 + i, v4(10, 77, static_cast<std::uint8_t>(i / 200), static_cast<std::uint8_t>(i % 200 + 1), 6881), 100), at(0), r);
  }
  EXPECT_EQ(core.table().size(), static_cast<std::size_t>(crowd + others));
  return core;
}

std::vector<std::string> entries(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 6 <= s.size(); i += 6) out.push_back(s.substr(i, 6));
  return out;
}

constexpr policy_kind all_policies[] = {
    policy_kind::random,          policy_kind::role_aware,         policy_kind::seeder_rotation,
    policy_kind::stalled_boost,   policy_kind::flash_crowd,        policy_kind::reachability_aware,
    policy_kind::contribution_weighted, policy_kind::adaptive};

TEST(AddressShare, AReplyOf50HoldsAllFiveOtherPeersBesideAThousandFromOneAddress) {
  for (const policy_kind p : all_policies) {
    for (const bool requester_seeder : {false, true}) {
      SCOPED_TRACE(std::string(to_string(p)) + (requester_seeder ? " seeder" : " leecher"));
      swarm_core core = crowded_swarm(p, 1000, 5);
      announce_result r;
      ASSERT_TRUE(core.announce(make(77777, v4(10, 99, 0, 1, 6881), requester_seeder ? 0 : 100,
                                     started, 50),
                                at(1), r));
      const auto got = entries(r.peers4);
      EXPECT_EQ(got.size(), 50u);  // filled from the crowd once the others are in
      std::set<std::string> set(got.begin(), got.end());
      EXPECT_EQ(set.size(), got.size());
      for (int i = 0; i < 5; ++i) {
        EXPECT_EQ(set.count(compact(v4(10, 77, 0, static_cast<std::uint8_t>(i + 1), 6881))), 1u)
            << "other peer " << i;
      }
      EXPECT_TRUE(core.check_invariants());
    }
  }
}

TEST(AddressShare, OneAddressGetsAtMostItsShareWhileOthersRemain) {
  for (const policy_kind p : all_policies) {
    SCOPED_TRACE(to_string(p));
    swarm_core core = crowded_swarm(p, 1000, 300);
    for (int k = 0; k < 20; ++k) {
      announce_result r;
      ASSERT_TRUE(core.announce(make(50000 + k, v4(10, 99, 1, static_cast<std::uint8_t>(k + 1), 6881),
                                     100, started, 50),
                                at(1), r));
      const auto got = entries(r.peers4);
      EXPECT_EQ(got.size(), 50u);
      std::size_t crowd = 0;
      for (const auto& e : got) crowd += e.compare(0, 4, compact(v4(10, 66, 0, 1, 0)), 0, 4) == 0;
      // max(1, 50 / 8) = 6.
      EXPECT_LE(crowd, 6u);
    }
  }
}

TEST(AddressShare, ASwarmBehindOneAddressStillGetsFullReplies) {
  for (const policy_kind p : all_policies) {
    SCOPED_TRACE(to_string(p));
    swarm_core core = crowded_swarm(p, 300, 0);
    announce_result r;
    ASSERT_TRUE(core.announce(make(1, v4(10, 66, 0, 1, 1025), 100, none, 50), at(700), r));
    EXPECT_EQ(entries(r.peers4).size(), 50u);
  }
}

TEST(AddressShare, AShareOfOneTurnsItOff) {
  swarm_config cfg = base_config();
  cfg.allocation.max_address_share = 1.0;
  ASSERT_EQ(cfg.validate(), "");
  cfg.allocation.max_address_share = 0.0;
  EXPECT_NE(cfg.validate(), "");
}

}  // namespace
}  // namespace sk
