// Property tests: every policy over many random swarms (sizes 0..2000,
// random seeder share, both families, random quarantined / unreachable /
// stalled / poor flags). Each test prints its seed (SK_TEST_SEED replays).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tracker/allocation.hpp"
#include "swarm_gen.hpp"

namespace sk {
namespace {

using test::peer_info;
using test::swarm;
using test::unit;

bool family_ok(family_filter f, const peer_info& p) {
  return f == family_filter::both || (f == family_filter::v6_only) == p.ep.ip.v6;
}

/// A random health report: none, healthy, or with flash / few-seeders signs.
health_report random_report(fast_rng& rng, const swarm& s, bool& present) {
  health_report h;
  h.seeders = s.table->seeders();
  h.leechers = s.table->leechers();
  const std::uint32_t kind = rng.below(4);
  present = kind != 0;
  if (kind == 2) {
    h.state = swarm_health::degraded;
    h.reasons = reason_few_seeders;
  } else if (kind == 3) {
    h.state = swarm_health::critical;
    h.reasons = reason_flash_crowd | reason_stalled_leechers;
  }
  return h;
}

/// Runs `rounds` random requests of `policy` against `swarms` random swarms
/// and checks every property that holds for that policy.
void check_policy(policy_kind policy, int swarms, int rounds) {
  const std::uint64_t seed = test::test_seed();
  fast_rng rng(seed);
  const allocation_config cfg;
  const bool role_based = policy != policy_kind::random;
  const bool reach_rule =
      policy == policy_kind::reachability_aware || policy == policy_kind::adaptive;
  const bool weighted =
      policy == policy_kind::contribution_weighted || policy == policy_kind::adaptive;
  std::size_t returned_total = 0;

  for (int sw = 0; sw < swarms; ++sw) {
    const test::swarm_shape shape = test::random_shape(rng);
    swarm s = test::make_swarm(rng, shape, rng.next());
    allocator alloc(cfg, rng.next());
    bool report_present = false;
    const health_report report = random_report(rng, s, report_present);
    const health_report* rep = report_present ? &report : nullptr;

    for (int round = 0; round < rounds; ++round) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " swarm " << sw << " (" << shape.peers
                                      << " peers) round " << round);
      // Requester: a stored peer, or one the table does not hold.
      peer_info me;
      std::size_t self = SIZE_MAX;
      if (!s.peers.empty() && rng.below(8) != 0) {
        self = rng.below(static_cast<std::uint32_t>(s.peers.size()));
        me = s.peers[self];
      } else {
        me.ep = test::endpoint_of(900000 + rng.below(1000), rng.below(2) == 0);
        me.key = peer_key{test::pid(900000), me.ep.ip};
        me.seeder = rng.below(3) == 0;
        me.flags = static_cast<std::uint8_t>(rng.below(32) & ~flag_quarantined);
      }
      peer_traits tr;
      tr.flags = me.flags;
      tr.progress = me.progress;
      allocation_request req;
      req.requester = me.key;
      req.requester_seeder = me.seeder;
      req.requester_traits = rng.below(10) == 0 ? nullptr : &tr;
      req.numwant = rng.below(4) == 0 ? rng.below(8) : rng.below(201);
      const std::uint32_t fam = rng.below(4);
      req.family = fam == 1 ? family_filter::v4_only
                   : fam == 2 ? family_filter::v6_only
                              : family_filter::both;
      req.compact = rng.below(2) == 0;

      // Expected count.
      const bool poor = req.requester_traits != nullptr && me.has(flag_poor_contributor);
      std::size_t n_eff = req.numwant;
      if (weighted && poor) {
        n_eff = std::min(req.numwant,
                         std::max(std::min(cfg.contribution_floor, req.numwant),
                                  static_cast<std::size_t>(std::floor(
                                      static_cast<double>(req.numwant) * cfg.contribution_weight))));
      }
      ASSERT_EQ(alloc.effective_numwant(policy, req), n_eff);
      if (weighted && poor) {
        ASSERT_GE(n_eff, std::min(cfg.contribution_floor, req.numwant));
      }

      std::vector<std::size_t> got;
      if (req.compact) {
        std::string p4 = "x";  // appends, keeps what was there
        std::string p6;
        const std::size_t k = alloc.select_compact(*s.table, policy, req, rep, p4, p6);
        ASSERT_EQ(p4[0], 'x');
        got = test::decode(s, p4.substr(1), p6);
        ASSERT_EQ(k, got.size());
        if (req.family == family_filter::v4_only) {
          ASSERT_TRUE(p6.empty());
        }
        if (req.family == family_filter::v6_only) {
          ASSERT_EQ(p4.size(), 1u);
        }
      } else {
        std::vector<peer_entry> out;
        const std::size_t k = alloc.select_entries(*s.table, policy, req, rep, out);
        got = test::decode(s, out);
        ASSERT_EQ(k, got.size());
      }
      returned_total += got.size();

      // Universal properties.
      ASSERT_LE(got.size(), n_eff);
      ASSERT_LE(got.size(), req.numwant);
      std::set<std::size_t> seen;
      const bool avoid_unreachable =
          reach_rule && req.requester_traits != nullptr && me.has(flag_unreachable);
      for (const std::size_t i : got) {
        ASSERT_NE(i, SIZE_MAX) << "reply holds bytes of no stored peer";
        ASSERT_NE(i, self) << "requester returned to itself";
        ASSERT_TRUE(seen.insert(i).second) << "duplicate peer " << i;
        const peer_info& p = s.peers[i];
        ASSERT_FALSE(p.has(flag_quarantined)) << "quarantined peer " << i;
        ASSERT_TRUE(family_ok(req.family, p)) << "family filter broken by peer " << i;
        if (role_based && me.seeder) {
          ASSERT_FALSE(p.seeder) << "seeder handed a seeder";
        }
        if (avoid_unreachable) {
          ASSERT_FALSE(p.has(flag_unreachable)) << "two unreachable peers paired";
        }
      }

      // Counts: exact where no refusal beyond self / duplicates can occur.
      std::size_t eligible_all = 0;
      std::size_t eligible_leechers = 0;
      for (std::size_t i = 0; i < s.peers.size(); ++i) {
        const peer_info& p = s.peers[i];
        if (i == self || p.has(flag_quarantined) || !family_ok(req.family, p)) {
          continue;
        }
        ++eligible_all;
        eligible_leechers += !p.seeder;
      }
      const policy_kind concrete = alloc.resolve(policy, req, rep);
      if (!role_based) {
        ASSERT_EQ(got.size(), std::min(n_eff, eligible_all));
      } else if (!avoid_unreachable) {
        if (concrete == policy_kind::flash_crowd) {
          ASSERT_GE(got.size(), std::min(n_eff, eligible_leechers));
        } else if (me.seeder) {
          ASSERT_EQ(got.size(), std::min(n_eff, eligible_leechers));
        } else {
          ASSERT_EQ(got.size(), std::min(n_eff, eligible_all));
        }
      }
    }
    ASSERT_TRUE(s.table->check_invariants());
  }
  EXPECT_GT(returned_total, 0u);
}

TEST(AllocationProperty, Random) { check_policy(policy_kind::random, 60, 25); }
TEST(AllocationProperty, RoleAware) { check_policy(policy_kind::role_aware, 60, 25); }
TEST(AllocationProperty, SeederRotation) { check_policy(policy_kind::seeder_rotation, 60, 25); }
TEST(AllocationProperty, StalledBoost) { check_policy(policy_kind::stalled_boost, 60, 25); }
TEST(AllocationProperty, FlashCrowd) { check_policy(policy_kind::flash_crowd, 60, 25); }
TEST(AllocationProperty, ReachabilityAware) {
  check_policy(policy_kind::reachability_aware, 60, 25);
}
TEST(AllocationProperty, ContributionWeighted) {
  check_policy(policy_kind::contribution_weighted, 60, 25);
}
TEST(AllocationProperty, Adaptive) { check_policy(policy_kind::adaptive, 60, 25); }

// Under seeder rotation, with S seeders a leecher reply of numwant n carries
// r = min(ceil(n × share), S) of them from the cursor, so every seeder is
// handed out within k = ceil(S / r) consecutive leecher announces (same
// family filter, stable seeder set).
TEST(AllocationProperty, RotationServesEverySeederWithinK) {
  const std::uint64_t seed = test::test_seed();
  fast_rng rng(seed);
  const allocation_config cfg;
  int checked = 0;
  for (int sw = 0; sw < 40; ++sw) {
    const test::swarm_shape shape = test::random_shape(rng, 600);
    swarm s = test::make_swarm(rng, shape, rng.next());
    allocator alloc(cfg, rng.next());
    const std::uint32_t fam = rng.below(3);
    const family_filter filter = static_cast<family_filter>(fam);
    std::vector<std::size_t> seeders;
    std::vector<std::size_t> leechers;
    for (std::size_t i = 0; i < s.peers.size(); ++i) {
      const peer_info& p = s.peers[i];
      if (p.seeder && !p.has(flag_quarantined) && family_ok(filter, p)) {
        seeders.push_back(i);
      }
      if (!p.seeder) {
        leechers.push_back(i);
      }
    }
    if (seeders.empty()) {
      continue;
    }
    const std::size_t n = 1 + rng.below(60);
    const std::size_t q = static_cast<std::size_t>(std::ceil(n * cfg.leecher_seeder_share));
    const std::size_t r = std::min(q, seeders.size());
    const std::size_t k = (seeders.size() + r - 1) / r;
    const std::size_t announces = 3 * k + 5;
    SCOPED_TRACE(testing::Message() << "seed " << seed << " swarm " << sw << " S=" << seeders.size()
                                    << " n=" << n << " k=" << k);
    std::vector<std::vector<std::size_t>> served_at(s.peers.size());
    for (std::size_t j = 0; j < announces; ++j) {
      allocation_request req;
      if (!leechers.empty() && rng.below(5) != 0) {
        const peer_info& me = s.peers[leechers[rng.below(static_cast<std::uint32_t>(leechers.size()))]];
        req.requester = me.key;
      } else {
        req.requester = peer_key{test::pid(999999), test::endpoint_of(999999, false).ip};
      }
      req.requester_seeder = false;
      req.numwant = n;
      req.family = filter;
      std::string p4, p6;
      alloc.select_compact(*s.table, policy_kind::seeder_rotation, req, nullptr, p4, p6);
      for (const std::size_t i : test::decode(s, p4, p6)) {
        ASSERT_NE(i, SIZE_MAX);
        served_at[i].push_back(j);
      }
    }
    for (const std::size_t i : seeders) {
      const auto& at = served_at[i];
      ASSERT_FALSE(at.empty()) << "seeder " << i << " never served";
      ASSERT_LT(at.front(), k) << "seeder " << i << " first served too late";
      for (std::size_t x = 1; x < at.size(); ++x) {
        ASSERT_LE(at[x] - at[x - 1], k) << "seeder " << i << " waited too long";
      }
      ASSERT_LT(announces - 1 - at.back(), k) << "seeder " << i << " idle at the end";
    }
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// Flash crowd over random swarms: within one round (as many leecher
// announces as the swarm has leechers) no seeder is revealed to more than
// flash_crowd_reveal leechers, and no leecher reply carries more than
// flash_crowd_seeders_per_reply seeders while leechers suffice.
TEST(AllocationProperty, FlashCrowdRevealBudgetPerRound) {
  const std::uint64_t seed = test::test_seed();
  fast_rng rng(seed);
  allocation_config cfg;
  cfg.flash_crowd_reveal = 1 + rng.below(10);
  int checked = 0;
  for (int sw = 0; sw < 30; ++sw) {
    test::swarm_shape shape = test::random_shape(rng, 800);
    shape.seeder_fraction = 0.03 * unit(rng);
    swarm s = test::make_swarm(rng, shape, rng.next());
    const std::size_t leechers = s.table->leechers();
    std::size_t open_leechers = 0;  // not quarantined
    for (const peer_info& p : s.peers) {
      open_leechers += !p.seeder && !p.has(flag_quarantined);
    }
    if (leechers < 20) {
      continue;
    }
    allocator alloc(cfg, rng.next());
    SCOPED_TRACE(testing::Message() << "seed " << seed << " swarm " << sw);
    for (int round = 0; round < 3; ++round) {
      std::vector<std::size_t> reveals(s.peers.size(), 0);
      // The round counter starts with the first flash announce, so round
      // boundaries fall every `leechers` announces.
      for (std::size_t j = 0; j < leechers; ++j) {
        std::size_t me;
        do {
          me = rng.below(static_cast<std::uint32_t>(s.peers.size()));
        } while (s.peers[me].seeder);
        allocation_request req;
        req.requester = s.peers[me].key;
        req.numwant = 1 + rng.below(50);
        std::string p4, p6;
        alloc.select_compact(*s.table, policy_kind::flash_crowd, req, nullptr, p4, p6);
        std::size_t seeders_here = 0;
        std::size_t leechers_here = 0;
        for (const std::size_t i : test::decode(s, p4, p6)) {
          ASSERT_NE(i, SIZE_MAX);
          if (s.peers[i].seeder) {
            ++reveals[i];
            ++seeders_here;
          } else {
            ++leechers_here;
          }
        }
        // Top-up seeders are allowed only when leechers run short.
        const std::size_t others = open_leechers - !s.peers[me].has(flag_quarantined);
        if (others >= req.numwant) {
          ASSERT_LE(seeders_here, cfg.flash_crowd_seeders_per_reply);
          ASSERT_EQ(seeders_here + leechers_here, req.numwant);
        }
      }
      for (std::size_t i = 0; i < s.peers.size(); ++i) {
        ASSERT_LE(reveals[i], cfg.flash_crowd_reveal) << "seeder " << i << " round " << round;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 5);
}

}  // namespace
}  // namespace sk
