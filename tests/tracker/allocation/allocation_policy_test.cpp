// Unit tests of each policy's intent on hand-built swarms, the adaptive
// decision table, the count rules and the config.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "tracker/allocation.hpp"
#include "swarm_gen.hpp"

namespace sk {
namespace {

using test::at;
using test::peer_info;
using test::swarm;

/// A builder for small swarms with chosen roles, flags and progress.
class builder {
 public:
  builder() : s_{std::make_unique<peer_table>(7), {}, {}} {}

  /// Adds a peer and returns its index.
  std::size_t add(bool seeder, std::uint8_t flags = 0, float progress = -1.0f, bool ipv6 = false) {
    peer_info p;
    const auto n = static_cast<std::uint32_t>(s_.peers.size());
    p.ep = test::endpoint_of(n, ipv6);
    p.key = peer_key{test::pid(n), p.ep.ip};
    p.seeder = seeder;
    p.flags = flags;
    p.progress = seeder ? 1.0f : progress;
    auto [ch, tr] = s_.table->announce_ex(p.key.id, p.ep, seeder ? 0 : 100, announce_event::started,
                                          at(1));
    EXPECT_EQ(ch, peer_table::change::added);
    tr->flags = flags;
    tr->progress = p.progress;
    s_.by_compact.emplace(test::compact(p.ep), s_.peers.size());
    s_.peers.push_back(p);
    return s_.peers.size() - 1;
  }
  swarm& get() { return s_; }

 private:
  swarm s_;
};

allocation_request request_of(const swarm& s, std::size_t who, std::size_t numwant,
                              const peer_traits* traits = nullptr) {
  allocation_request req;
  req.requester = s.peers[who].key;
  req.requester_seeder = s.peers[who].seeder;
  req.requester_traits = traits;
  req.numwant = numwant;
  return req;
}

std::vector<std::size_t> run(allocator& a, swarm& s, policy_kind p, const allocation_request& req,
                             const health_report* h = nullptr) {
  std::string p4, p6;
  a.select_compact(*s.table, p, req, h, p4, p6);
  return test::decode(s, p4, p6);
}

peer_traits traits_with(std::uint8_t flags) {
  peer_traits t;
  t.flags = flags;
  return t;
}

// -- config -------------------------------------------------------------------

TEST(AllocationConfig, DefaultsAreValid) { EXPECT_EQ(allocation_config{}.validate(), ""); }

TEST(AllocationConfig, EachBadFieldIsNamed) {
  auto bad = [](auto mutate, const char* field) {
    allocation_config c;
    mutate(c);
    const std::string err = c.validate();
    EXPECT_NE(err.find(field), std::string::npos) << err;
  };
  bad([](allocation_config& c) { c.flash_crowd_seeder_ratio = -0.1; }, "flash_crowd_seeder_ratio");
  bad([](allocation_config& c) { c.flash_crowd_reveal = 0; }, "flash_crowd_reveal");
  bad([](allocation_config& c) { c.flash_crowd_seeders_per_reply = 0; },
      "flash_crowd_seeders_per_reply");
  bad([](allocation_config& c) { c.leecher_seeder_share = 0.0; }, "leecher_seeder_share");
  bad([](allocation_config& c) { c.stalled_boost_fraction = 1.5; }, "stalled_boost_fraction");
  bad([](allocation_config& c) { c.contribution_weight = 2.0; }, "contribution_weight");
  bad([](allocation_config& c) { c.candidate_oversampling = 0; }, "candidate_oversampling");
  bad([](allocation_config& c) { c.flash_crowd_oversampling = 65; }, "flash_crowd_oversampling");
  bad([](allocation_config& c) { c.extra_draws_per_peer = 1000; }, "extra_draws_per_peer");
}

// -- adaptive decision table ----------------------------------------------------

TEST(AllocationAdaptive, FlashConditionFromReport) {
  const allocator a;
  EXPECT_FALSE(a.flash_condition(nullptr));
  health_report h;
  h.seeders = 10;
  h.leechers = 100;
  EXPECT_FALSE(a.flash_condition(&h));  // ratio 0.1 >= 0.05
  h.seeders = 4;
  EXPECT_TRUE(a.flash_condition(&h));  // 4 < 100 × 0.05
  h.leechers = 19;
  h.seeders = 0;
  EXPECT_FALSE(a.flash_condition(&h));  // below flash_crowd_min_leechers
  h.reasons = reason_few_seeders;
  EXPECT_TRUE(a.flash_condition(&h));
  h.reasons = reason_flash_crowd;
  EXPECT_TRUE(a.flash_condition(&h));
  h.reasons = reason_stalled_leechers;
  EXPECT_FALSE(a.flash_condition(&h));
}

TEST(AllocationAdaptive, DecisionTable) {
  const allocator a;
  health_report calm;
  calm.seeders = 50;
  calm.leechers = 50;
  health_report crowd = calm;
  crowd.reasons = reason_flash_crowd;
  const peer_traits stalled = traits_with(flag_stalled);
  const peer_traits plain;
  allocation_request seeder;
  seeder.requester_seeder = true;
  allocation_request leecher;
  leecher.requester_traits = &plain;
  allocation_request stalled_leecher;
  stalled_leecher.requester_traits = &stalled;

  EXPECT_EQ(a.resolve(policy_kind::adaptive, seeder, &crowd), policy_kind::flash_crowd);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, seeder, &calm), policy_kind::role_aware);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, seeder, nullptr), policy_kind::role_aware);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, leecher, &crowd), policy_kind::flash_crowd);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, stalled_leecher, &crowd), policy_kind::flash_crowd);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, stalled_leecher, &calm), policy_kind::stalled_boost);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, leecher, &calm), policy_kind::seeder_rotation);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, leecher, nullptr), policy_kind::seeder_rotation);
  // Swarm-level resolution and explicit policies.
  EXPECT_EQ(a.resolve(policy_kind::adaptive, &crowd), policy_kind::flash_crowd);
  EXPECT_EQ(a.resolve(policy_kind::adaptive, &calm), policy_kind::seeder_rotation);
  for (int i = 0; i < policy_kind_count; ++i) {
    const auto p = static_cast<policy_kind>(i);
    if (p != policy_kind::adaptive) {
      EXPECT_EQ(a.resolve(p, stalled_leecher, &crowd), p);
      EXPECT_EQ(a.resolve(p, &crowd), p);
    }
  }
}

TEST(AllocationAdaptive, AppliesReachabilityRuleAndContributionCount) {
  builder b;
  for (int i = 0; i < 60; ++i) {
    b.add(i % 6 == 0, i % 2 == 0 ? flag_unreachable : 0, 0.5f);
  }
  const std::size_t me = b.add(false, flag_unreachable | flag_poor_contributor, 0.1f);
  swarm& s = b.get();
  allocator a;
  const peer_traits t = traits_with(flag_unreachable | flag_poor_contributor);
  const auto got = run(a, s, policy_kind::adaptive, request_of(s, me, 50, &t));
  EXPECT_EQ(got.size(), 25u);  // 50 × 0.5
  for (const std::size_t i : got) {
    EXPECT_FALSE(s.peers[i].has(flag_unreachable));
  }
}

// -- counts -------------------------------------------------------------------

TEST(AllocationCount, ContributionWeightedCountHasFloor) {
  const allocator a;  // weight 0.5, floor 10
  const peer_traits poor = traits_with(flag_poor_contributor);
  const peer_traits good;
  allocation_request r;
  r.requester_traits = &poor;
  auto eff = [&](std::size_t n, policy_kind p = policy_kind::contribution_weighted) {
    r.numwant = n;
    return a.effective_numwant(p, r);
  };
  EXPECT_EQ(eff(50), 25u);
  EXPECT_EQ(eff(200), 100u);
  EXPECT_EQ(eff(12), 10u);  // floor beats 6
  EXPECT_EQ(eff(5), 5u);    // never more than asked
  EXPECT_EQ(eff(0), 0u);
  EXPECT_EQ(eff(50, policy_kind::adaptive), 25u);
  EXPECT_EQ(eff(50, policy_kind::role_aware), 50u);  // other policies: numwant
  r.requester_traits = &good;
  EXPECT_EQ(eff(50), 50u);
  r.requester_traits = nullptr;
  EXPECT_EQ(eff(50), 50u);
}

TEST(AllocationCount, PoorContributorGetsFewerPeersButTheFloor) {
  builder b;
  for (int i = 0; i < 100; ++i) {
    b.add(i < 10);
  }
  const std::size_t me = b.add(false, flag_poor_contributor);
  swarm& s = b.get();
  allocator a;
  const peer_traits poor = traits_with(flag_poor_contributor);
  EXPECT_EQ(run(a, s, policy_kind::contribution_weighted, request_of(s, me, 50, &poor)).size(), 25u);
  EXPECT_EQ(run(a, s, policy_kind::contribution_weighted, request_of(s, me, 14, &poor)).size(), 10u);
  EXPECT_EQ(run(a, s, policy_kind::contribution_weighted, request_of(s, me, 50)).size(), 50u);
}

TEST(AllocationCount, NumwantZeroReturnsNothing) {
  builder b;
  for (int i = 0; i < 10; ++i) {
    b.add(i < 3);
  }
  swarm& s = b.get();
  allocator a;
  for (int p = 0; p < policy_kind_count; ++p) {
    EXPECT_TRUE(run(a, s, static_cast<policy_kind>(p), request_of(s, 5, 0)).empty());
  }
}

// -- role-aware -----------------------------------------------------------------

TEST(AllocationRoleAware, SeederGetsOnlyLeechers) {
  builder b;
  for (int i = 0; i < 40; ++i) {
    b.add(i < 30);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::role_aware, request_of(s, 0, 50));
  EXPECT_EQ(got.size(), 10u);  // all leechers, and nothing else
  for (const std::size_t i : got) {
    EXPECT_FALSE(s.peers[i].seeder);
  }
}

TEST(AllocationRoleAware, LeecherGetsSeedersFirstUpToTheShareThenLeechers) {
  builder b;
  for (int i = 0; i < 60; ++i) {
    b.add(i < 30);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::role_aware, request_of(s, 45, 10));
  ASSERT_EQ(got.size(), 10u);
  for (std::size_t j = 0; j < 10; ++j) {
    EXPECT_EQ(s.peers[got[j]].seeder, j < 5) << j;  // ceil(10 × 0.5) seeders, in front
  }
}

TEST(AllocationRoleAware, FewSeedersAllGoThenLeechers) {
  builder b;
  for (int i = 0; i < 50; ++i) {
    b.add(i < 2);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::role_aware, request_of(s, 10, 10));
  ASSERT_EQ(got.size(), 10u);
  EXPECT_TRUE(s.peers[got[0]].seeder && s.peers[got[1]].seeder);
  for (std::size_t j = 2; j < 10; ++j) {
    EXPECT_FALSE(s.peers[got[j]].seeder);
  }
}

TEST(AllocationRoleAware, SeedersFillInWhenLeechersRunShort) {
  builder b;
  for (int i = 0; i < 33; ++i) {
    b.add(i < 30);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::role_aware, request_of(s, 31, 10));
  ASSERT_EQ(got.size(), 10u);  // 5 seeders + the 2 other leechers + 3 more seeders
  std::size_t leechers = 0;
  for (const std::size_t i : got) {
    leechers += !s.peers[i].seeder;
  }
  EXPECT_EQ(leechers, 2u);
}

// -- seeder rotation --------------------------------------------------------------

TEST(AllocationRotation, SeedersHandedOutInTurn) {
  builder b;
  for (int i = 0; i < 10; ++i) {
    b.add(true);
  }
  for (int i = 0; i < 20; ++i) {
    b.add(false);
  }
  swarm& s = b.get();
  allocator a;
  // numwant 4 -> 2 seeders per reply -> all 10 seeders every 5 announces.
  for (int cycle = 0; cycle < 3; ++cycle) {
    std::set<std::size_t> seen;
    for (int j = 0; j < 5; ++j) {
      const auto got = run(a, s, policy_kind::seeder_rotation, request_of(s, 10 + j, 4));
      ASSERT_EQ(got.size(), 4u);
      for (const std::size_t i : got) {
        if (s.peers[i].seeder) {
          EXPECT_TRUE(seen.insert(i).second) << "seeder twice in one cycle";
        }
      }
    }
    EXPECT_EQ(seen.size(), 10u) << "cycle " << cycle;
  }
}

TEST(AllocationRotation, SeederRequesterStillGetsOnlyLeechers) {
  builder b;
  for (int i = 0; i < 20; ++i) {
    b.add(i < 15);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::seeder_rotation, request_of(s, 3, 50));
  EXPECT_EQ(got.size(), 5u);
  for (const std::size_t i : got) {
    EXPECT_FALSE(s.peers[i].seeder);
  }
}

// -- stalled boost -------------------------------------------------------------------

TEST(AllocationStalledBoost, StalledRequesterSeesSeedersThenMostComplete) {
  builder b;
  b.add(true);
  b.add(true);
  for (int i = 0; i < 30; ++i) {
    b.add(false, 0, static_cast<float>(i) / 30.0f);  // peer 2 + i has progress i/30
  }
  const std::size_t me = b.add(false, flag_stalled, 0.05f);
  swarm& s = b.get();
  allocation_config cfg;
  cfg.candidate_oversampling = 64;  // the sample covers every leecher: exact top
  allocator a(cfg, 3);
  const peer_traits st = traits_with(flag_stalled);
  const auto got = run(a, s, policy_kind::stalled_boost, request_of(s, me, 10, &st));
  ASSERT_EQ(got.size(), 10u);
  // Boost = ceil(10 × 0.5) = 5: both seeders, then the 3 most complete.
  EXPECT_EQ(std::set<std::size_t>(got.begin(), got.begin() + 2), (std::set<std::size_t>{0, 1}));
  EXPECT_EQ(std::vector<std::size_t>(got.begin() + 2, got.begin() + 5),
            (std::vector<std::size_t>{31, 30, 29}));
}

TEST(AllocationStalledBoost, TopProgressFromASampleOnLargeSwarms) {
  builder b;
  for (int i = 0; i < 2000; ++i) {
    b.add(false, 0, static_cast<float>(i) / 2000.0f);
  }
  const std::size_t me = b.add(false, flag_stalled, 0.0f);
  swarm& s = b.get();
  allocator a({}, 11);
  const peer_traits st = traits_with(flag_stalled);
  double boosted = 0;
  double rest = 0;
  for (int r = 0; r < 50; ++r) {
    const auto got = run(a, s, policy_kind::stalled_boost, request_of(s, me, 20, &st));
    ASSERT_EQ(got.size(), 20u);
    for (std::size_t j = 0; j < 20; ++j) {
      (j < 10 ? boosted : rest) += s.peers[got[j]].progress;
    }
  }
  // Top 10 of a 40-sample: mean about 0.87; uniform leechers: about 0.5.
  EXPECT_GT(boosted / 500, 0.8);
  EXPECT_LT(rest / 500, 0.6);
}

TEST(AllocationStalledBoost, NonStalledRequesterIsRoleAware) {
  builder b;
  for (int i = 0; i < 60; ++i) {
    b.add(i < 30, 0, 0.5f);
  }
  swarm& s = b.get();
  allocator a;
  const peer_traits plain;
  const auto got = run(a, s, policy_kind::stalled_boost, request_of(s, 40, 10, &plain));
  ASSERT_EQ(got.size(), 10u);
  for (std::size_t j = 0; j < 10; ++j) {
    EXPECT_EQ(s.peers[got[j]].seeder, j < 5);
  }
}

// -- flash crowd -----------------------------------------------------------------------

TEST(AllocationFlashCrowd, EachSeederRevealedToABoundedRotatingSubset) {
  builder b;
  for (int i = 0; i < 3; ++i) {
    b.add(true);
  }
  for (int i = 0; i < 200; ++i) {
    b.add(false, 0, static_cast<float>(i % 100) / 100.0f);
  }
  swarm& s = b.get();
  allocator a({}, 5);  // reveal 8 per round, 1 seeder per reply
  health_report crowd;
  crowd.reasons = reason_flash_crowd;
  std::vector<std::set<std::size_t>> audience_by_round;
  fast_rng order(99);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::set<std::size_t>> audience(3);
    for (int j = 0; j < 200; ++j) {  // one round: as many announces as leechers
      const std::size_t me = 3 + order.below(200);
      const auto got = run(a, s, policy_kind::adaptive, request_of(s, me, 30), &crowd);
      ASSERT_EQ(got.size(), 30u);
      std::size_t seeders = 0;
      for (const std::size_t i : got) {
        if (s.peers[i].seeder) {
          ++seeders;
          audience[i].insert(me);
        }
      }
      EXPECT_LE(seeders, 1u);
    }
    std::set<std::size_t> all;
    for (int sd = 0; sd < 3; ++sd) {
      EXPECT_GE(audience[static_cast<std::size_t>(sd)].size(), 1u);
      EXPECT_LE(audience[static_cast<std::size_t>(sd)].size(), 8u) << "seeder " << sd;
      all.insert(audience[static_cast<std::size_t>(sd)].begin(),
                 audience[static_cast<std::size_t>(sd)].end());
    }
    audience_by_round.push_back(all);
  }
  // The subset rotates: each round reveals the seeders to other leechers.
  EXPECT_NE(audience_by_round[0], audience_by_round[1]);
  EXPECT_NE(audience_by_round[1], audience_by_round[2]);
}

TEST(AllocationFlashCrowd, LeechersGetAMixOfProgressLevels) {
  builder b;
  b.add(true);
  for (int i = 0; i < 1000; ++i) {
    b.add(false, 0, static_cast<float>(i) / 1000.0f);
  }
  swarm& s = b.get();
  allocator a({}, 17);
  int low = 0, mid = 0, high = 0;
  for (int r = 0; r < 20; ++r) {
    const auto got = run(a, s, policy_kind::flash_crowd, request_of(s, 1 + r, 20));
    float lo = 2, hi = -1;
    for (const std::size_t i : got) {
      if (!s.peers[i].seeder) {
        lo = std::min(lo, s.peers[i].progress);
        hi = std::max(hi, s.peers[i].progress);
        const float p = s.peers[i].progress;
        (p < 1.0f / 3 ? low : p < 2.0f / 3 ? mid : high)++;
      }
    }
    EXPECT_LT(lo, 0.15f);  // every reply spans the progress range
    EXPECT_GT(hi, 0.85f);
  }
  // Strata evenly represented (each about a third of 20 × 19).
  EXPECT_GT(low, 100);
  EXPECT_GT(mid, 100);
  EXPECT_GT(high, 100);
}

TEST(AllocationFlashCrowd, SeederRequesterGetsLeechersOnly) {
  builder b;
  for (int i = 0; i < 5; ++i) {
    b.add(true);
  }
  for (int i = 0; i < 50; ++i) {
    b.add(false, 0, 0.3f);
  }
  swarm& s = b.get();
  allocator a;
  const auto got = run(a, s, policy_kind::flash_crowd, request_of(s, 2, 20));
  ASSERT_EQ(got.size(), 20u);
  for (const std::size_t i : got) {
    EXPECT_FALSE(s.peers[i].seeder);
  }
}

// -- reachability ------------------------------------------------------------------------

TEST(AllocationReachability, UnreachableRequesterNeverMeetsUnreachablePeers) {
  builder b;
  for (int i = 0; i < 200; ++i) {
    b.add(i < 40, i % 2 != 0 ? flag_unreachable : 0);  // half unreachable
  }
  const std::size_t me = b.add(false, flag_unreachable);
  swarm& s = b.get();
  allocator a;
  const peer_traits un = traits_with(flag_unreachable);
  for (int r = 0; r < 20; ++r) {
    const auto got = run(a, s, policy_kind::reachability_aware, request_of(s, me, 30, &un));
    EXPECT_EQ(got.size(), 30u);  // 100 reachable peers: the budget finds 30
    for (const std::size_t i : got) {
      EXPECT_FALSE(s.peers[i].has(flag_unreachable));
    }
  }
}

TEST(AllocationReachability, ReachableRequesterMayGetAnyone) {
  builder b;
  for (int i = 0; i < 200; ++i) {
    b.add(i < 40, i % 4 != 0 ? flag_unreachable : 0);
  }
  const std::size_t me = b.add(false, flag_reachable);
  swarm& s = b.get();
  allocator a;
  const peer_traits ok = traits_with(flag_reachable);
  std::size_t unreachable = 0;
  for (int r = 0; r < 10; ++r) {
    for (const std::size_t i :
         run(a, s, policy_kind::reachability_aware, request_of(s, me, 30, &ok))) {
      unreachable += s.peers[i].has(flag_unreachable);
    }
  }
  EXPECT_GT(unreachable, 100u);
}

TEST(AllocationReachability, RuleIsOffUnderRoleAware) {
  builder b;
  for (int i = 0; i < 100; ++i) {
    b.add(false, flag_unreachable);
  }
  const std::size_t me = b.add(false, flag_unreachable);
  swarm& s = b.get();
  allocator a;
  const peer_traits un = traits_with(flag_unreachable);
  EXPECT_EQ(run(a, s, policy_kind::role_aware, request_of(s, me, 30, &un)).size(), 30u);
  EXPECT_EQ(run(a, s, policy_kind::reachability_aware, request_of(s, me, 30, &un)).size(), 0u);
}

// -- quarantine, families, bookkeeping ------------------------------------------------------

TEST(Allocation, QuarantinedPeersAreNeverReturnedEvenIfTheyAreAllThereIs) {
  builder b;
  for (int i = 0; i < 30; ++i) {
    b.add(i < 10, flag_quarantined);
  }
  const std::size_t me = b.add(false);
  swarm& s = b.get();
  allocator a;
  for (int p = 0; p < policy_kind_count; ++p) {
    EXPECT_TRUE(run(a, s, static_cast<policy_kind>(p), request_of(s, me, 50)).empty()) << p;
  }
  std::string p4, p6;
  EXPECT_EQ(s.table->select_compact(s.peers[me].key, 50, p4, p6), 0u);
}

TEST(Allocation, QuarantineWrittenThroughTraitsTakesEffectAtTheNextCall) {
  builder b;
  for (int i = 0; i < 20; ++i) {
    b.add(false);
  }
  swarm& s = b.get();
  allocator a;
  // A detector quarantines peer 3 while it announces.
  auto [ch, tr] = s.table->announce_ex(s.peers[3].key.id, s.peers[3].ep, 100,
                                       announce_event::none, at(2));
  ASSERT_EQ(ch, peer_table::change::updated);
  tr->set(flag_quarantined);
  s.peers[3].flags |= flag_quarantined;
  for (int p = 0; p < policy_kind_count; ++p) {
    const auto got = run(a, s, static_cast<policy_kind>(p), request_of(s, 0, 50));
    EXPECT_EQ(got.size(), 18u);
    EXPECT_EQ(std::count(got.begin(), got.end(), 3u), 0);
  }
  // And released again.
  s.table->traits(s.peers[3].key)->set(flag_quarantined, false);
  EXPECT_EQ(run(a, s, policy_kind::random, request_of(s, 0, 50)).size(), 19u);
  EXPECT_TRUE(s.table->check_invariants());
}

TEST(Allocation, FamilyFilterGetsUpToNOfTheRequestersFamily) {
  builder b;
  for (int i = 0; i < 300; ++i) {
    b.add(i % 3 == 0, 0, 0.5f, i % 10 != 0);  // 30 IPv4, 270 IPv6
  }
  swarm& s = b.get();
  allocator a;
  for (int p = 0; p < policy_kind_count; ++p) {
    allocation_request req = request_of(s, 1, 20);
    req.family = family_filter::v4_only;
    const auto got = run(a, s, static_cast<policy_kind>(p), req);
    if (static_cast<policy_kind>(p) != policy_kind::flash_crowd) {
      EXPECT_EQ(got.size(), 20u) << p;
    }
    for (const std::size_t i : got) {
      EXPECT_FALSE(s.peers[i].ep.ip.v6);
    }
  }
}

TEST(Allocation, EverySelectedPeerIsCountedAsServed) {
  builder b;
  for (int i = 0; i < 30; ++i) {
    b.add(i < 10);
  }
  swarm& s = b.get();
  allocator a;
  std::vector<std::uint32_t> expected(30, 0);
  for (int r = 0; r < 20; ++r) {
    for (const std::size_t i : run(a, s, policy_kind::adaptive, request_of(s, 15, 7))) {
      ++expected[i];
    }
  }
  for (std::size_t i = 0; i < 30; ++i) {
    EXPECT_EQ(s.table->traits(s.peers[i].key)->served, expected[i]) << i;
  }
}

// The count lives in the table's hot array; every way the table hands out
// traits shows it: traits() (both overloads), for_each, for_each_mut, the
// sweep callback and last_removed.
TEST(Allocation, ServedCountIsVisibleThroughEveryTraitsAccessor) {
  builder b;
  for (int i = 0; i < 12; ++i) {
    b.add(i < 4);
  }
  swarm& s = b.get();
  allocator a;
  std::vector<std::uint32_t> expected(12, 0);
  for (int r = 0; r < 9; ++r) {
    for (const std::size_t i : run(a, s, policy_kind::random, request_of(s, 11, 5))) {
      ++expected[i];
    }
  }
  const peer_table& ct = *s.table;
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(ct.traits(s.peers[i].key)->served, expected[i]) << i;
  }
  std::size_t seen = 0;
  s.table->for_each([&](const peer_key& k, const endpoint&, bool, const peer_traits& t) {
    for (std::size_t i = 0; i < 12; ++i) {
      if (s.peers[i].key == k) {
        EXPECT_EQ(t.served, expected[i]) << i;
        ++seen;
      }
    }
  });
  s.table->for_each_mut([&](const peer_key& k, const endpoint&, bool, peer_traits& t) {
    for (std::size_t i = 0; i < 12; ++i) {
      if (s.peers[i].key == k) {
        EXPECT_EQ(t.served, expected[i]) << i;
        ++seen;
      }
    }
  });
  EXPECT_EQ(seen, 24u);
  // A leaving peer's copy carries its count.
  const peer_info& gone = s.peers[3];
  auto [c, tr] = s.table->announce_ex(gone.key.id, gone.ep, 0, announce_event::stopped, at(2));
  ASSERT_EQ(c, peer_table::change::removed);
  EXPECT_EQ(tr->served, expected[3]);
  EXPECT_EQ(s.table->last_removed().served, expected[3]);
  // Expired peers too (every other peer expires here).
  std::size_t expired = 0;
  s.table->sweep(at(100000), std::chrono::seconds(1), 100,
                 [&](const peer_key& k, bool, const peer_traits& t) {
                   for (std::size_t i = 0; i < 12; ++i) {
                     if (s.peers[i].key == k) {
                       EXPECT_EQ(t.served, expected[i]) << i;
                       ++expected[i];  // counted once
                       ++expired;
                     }
                   }
                 });
  EXPECT_EQ(expired, 11u);
  EXPECT_TRUE(s.table->check_invariants());
}

TEST(Allocation, DeterministicForASeedAndCompactMatchesEntries) {
  auto once = [](bool compact) {
    fast_rng rng(1234);
    test::swarm_shape shape = test::random_shape(rng, 500);
    shape.peers = 500;
    swarm s = test::make_swarm(rng, shape, 77);
    allocator a({}, 4321);
    std::vector<std::size_t> all;
    for (int r = 0; r < 30; ++r) {
      const auto p = static_cast<policy_kind>(r % policy_kind_count);
      allocation_request req = request_of(s, static_cast<std::size_t>(r) * 7, 25);
      std::vector<std::size_t> got;
      if (compact) {
        got = run(a, s, p, req);
      } else {
        std::vector<peer_entry> out;
        a.select_entries(*s.table, p, req, nullptr, out);
        got = test::decode(s, out);
      }
      // Compact groups IPv4 before IPv6; compare as sets per reply.
      std::sort(got.begin(), got.end());
      all.insert(all.end(), got.begin(), got.end());
      all.push_back(SIZE_MAX);
    }
    return all;
  };
  const auto a = once(true);
  EXPECT_EQ(a, once(true));
  EXPECT_EQ(a, once(false));
}

TEST(Allocation, UnknownRequesterIsServed) {
  builder b;
  for (int i = 0; i < 30; ++i) {
    b.add(i < 10);
  }
  swarm& s = b.get();
  allocator a;
  allocation_request req;
  req.requester = peer_key{test::pid(5000), test::endpoint_of(5000, false).ip};
  req.numwant = 50;
  EXPECT_EQ(run(a, s, policy_kind::adaptive, req).size(), 30u);
}

TEST(Allocation, RandomPolicyIsUniformOverOpenPeers) {
  builder b;
  for (int i = 0; i < 40; ++i) {
    b.add(i < 20, i % 5 == 0 ? flag_quarantined : 0, -1.0f, i % 2 == 0);
  }
  swarm& s = b.get();
  allocator a({}, 8);
  std::vector<int> hits(40, 0);
  const int rounds = 4000;
  for (int r = 0; r < rounds; ++r) {
    for (const std::size_t i : run(a, s, policy_kind::random, request_of(s, 1, 10))) {
      ++hits[i];
    }
  }
  // 31 open peers besides the requester, 10 per reply: 4000 × 10/31 ≈ 1290.
  for (std::size_t i = 0; i < 40; ++i) {
    if (i == 1 || i % 5 == 0) {
      EXPECT_EQ(hits[i], 0);
    } else {
      EXPECT_NEAR(hits[i], 1290, 200) << i;
    }
  }
}

}  // namespace
}  // namespace sk
