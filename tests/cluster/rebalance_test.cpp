// The rebalancing decision (cluster/rebalance.hpp): a pure function,
// no CAF, no clock.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "cluster/cluster_config.hpp"
#include "cluster/rebalance.hpp"

namespace sk::cluster {
namespace {

using moved_map = std::unordered_map<info_hash, std::uint64_t, id20_hasher>;

info_hash hash_of(std::uint8_t n) {
  info_hash h;
  h.bytes.fill(0);
  h.bytes[0] = n;
  return h;
}

std::vector<swarm_rate> rates(std::initializer_list<double> rs) {
  std::vector<swarm_rate> out;
  std::uint8_t i = 0;
  for (double r : rs) out.push_back(swarm_rate{hash_of(i++), r});
  return out;
}

double sum(const std::vector<swarm_rate>& s) {
  double t = 0;
  for (const auto& x : s) t += x.rate;
  return t;
}

TEST(Rebalance, BalancedClusterMovesNothing) {
  const rebalance_config cfg;
  const auto mine = rates({60, 50, 40, 30});  // 180/s
  EXPECT_TRUE(plan_rebalance("a", {{"a", 180}, {"b", 170}, {"c", 190}}, mine, {}, 10, cfg).empty());
  // Above the mean, but not factor x mean (mean 140, threshold 210).
  EXPECT_TRUE(plan_rebalance("a", {{"a", 180}, {"b", 120}, {"c", 120}}, mine, {}, 10, cfg).empty());
  // Alone: nobody to move to.
  EXPECT_TRUE(plan_rebalance("a", {{"a", 180}}, mine, {}, 10, cfg).empty());
  // This node's load unknown: no decision.
  EXPECT_TRUE(plan_rebalance("a", {{"b", 0}, {"c", 0}}, mine, {}, 10, cfg).empty());
}

TEST(Rebalance, HotNodeMovesItsHottestSwarmsToTheCoolest) {
  const rebalance_config cfg;  // factor 1.5, min 50/s, 2 moves
  const auto mine = rates({80, 200, 70, 150, 100});
  ASSERT_EQ(sum(mine), 600);
  // Mean 700/3, threshold 350: the hottest (200) goes to the coolest (c),
  // then 150 to b, which is the coolest after the first move.
  const auto moves = plan_rebalance("a", {{"a", 600}, {"b", 60}, {"c", 40}}, mine, {}, 10, cfg);
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].hash, hash_of(1));
  EXPECT_EQ(moves[0].to, "c");
  EXPECT_DOUBLE_EQ(moves[0].rate, 200);
  EXPECT_EQ(moves[1].hash, hash_of(3));
  EXPECT_EQ(moves[1].to, "b");
  // A cool node decides nothing even though the cluster is unbalanced.
  EXPECT_TRUE(
      plan_rebalance("b", {{"a", 600}, {"b", 60}, {"c", 40}}, rates({60}), {}, 10, cfg).empty());
}

TEST(Rebalance, StopsOnceBelowTheThreshold) {
  rebalance_config cfg;
  cfg.max_moves = 10;
  // Mean 200, threshold 300: after moving 150 this node is at 300, done.
  const auto moves =
      plan_rebalance("a", {{"a", 450}, {"b", 150}, {"c", 0}}, rates({150, 100, 100, 100}), {}, 1,
                     cfg);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].to, "c");
}

TEST(Rebalance, FloorKeepsQuietClustersStill) {
  rebalance_config cfg;
  cfg.min_rate = 50;
  // The same shape as above at 1/100 of the rate: far below the floor.
  EXPECT_TRUE(plan_rebalance("a", {{"a", 6}, {"b", 0.6}, {"c", 0.4}}, rates({0.8, 2, 0.7, 1.5, 1}),
                             {}, 10, cfg)
                  .empty());
  cfg.min_rate = 1;
  EXPECT_EQ(plan_rebalance("a", {{"a", 6}, {"b", 0.6}, {"c", 0.4}}, rates({0.8, 2, 0.7, 1.5, 1}),
                           {}, 10, cfg)
                .size(),
            2u);
}

TEST(Rebalance, MaxMovesBoundsEachRound) {
  rebalance_config cfg;
  const std::map<std::string, double> loads{{"a", 1000}, {"b", 0}, {"c", 0}, {"d", 0}};
  const auto mine = rates({100, 100, 100, 100, 100, 100, 100, 100, 100, 100});
  for (std::uint32_t max : {0u, 1u, 2u, 5u}) {
    cfg.max_moves = max;
    EXPECT_EQ(plan_rebalance("a", loads, mine, {}, 10, cfg).size(), max) << max;
  }
  // Spread over the cool nodes, one each while they are equally cool.
  cfg.max_moves = 3;
  std::set<std::string> targets;
  for (const auto& m : plan_rebalance("a", loads, mine, {}, 10, cfg)) targets.insert(m.to);
  EXPECT_EQ(targets, (std::set<std::string>{"b", "c", "d"}));
}

TEST(Rebalance, SkipsAMoveThatWouldInvertTheImbalance) {
  rebalance_config cfg;
  // One swarm carries all the load: moving it just moves the hot spot.
  EXPECT_TRUE(plan_rebalance("a", {{"a", 300}, {"b", 0}}, rates({300}), {}, 10, cfg).empty());
  // The big one is skipped, the small one fits (b 50 < a 250).
  const auto moves = plan_rebalance("a", {{"a", 300}, {"b", 0}}, rates({250, 50}), {}, 10, cfg);
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_EQ(moves[0].hash, hash_of(1));
  // Equal afterwards counts as hotter-or-equal: not worth a move (mean
  // 200, threshold 240: a is hot, but 100 moved leaves both at 200).
  cfg.factor = 1.2;
  EXPECT_TRUE(plan_rebalance("a", {{"a", 300}, {"b", 100}}, rates({100, 100, 100}), {}, 10, cfg)
                  .empty());
}

TEST(Rebalance, RecentlyMovedSwarmsStayPut) {
  rebalance_config cfg;
  cfg.max_moves = 1;
  cfg.hysteresis_periods = 4;
  const std::map<std::string, double> loads{{"a", 600}, {"b", 0}, {"c", 0}};
  const auto mine = rates({200, 150, 100, 100, 50});
  // Hash 0 (the hottest) moved in during period 7: periods 7..10 skip it.
  const moved_map moved{{hash_of(0), 7}};
  for (std::uint64_t p : {7u, 8u, 10u}) {
    const auto m = plan_rebalance("a", loads, mine, moved, p, cfg);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].hash, hash_of(1)) << p;
  }
  const auto later = plan_rebalance("a", loads, mine, moved, 11, cfg);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].hash, hash_of(0));
}

// Repeated rounds over a whole cluster, each node deciding on the loads of
// the round before (as gossip delivers them): the moves settle, no swarm
// ever returns to a node it left, and every node ends up within the factor
// of the mean or with nothing it could move.
TEST(Rebalance, NoPingPongOverRepeatedRounds) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    rebalance_config cfg;
    cfg.min_rate = 10;
    cfg.hysteresis_periods = 2;
    const std::vector<std::string> names{"a", "b", "c", "d"};
    std::map<info_hash, std::pair<std::string, double>> where;  // hash -> node, rate
    // Node a is hot: most swarms and the heaviest; the others get a few.
    for (std::uint8_t i = 0; i < 60; ++i) {
      const bool hot = i < 40;
      const std::string node = hot ? "a" : names[1 + rng() % 3];
      where[hash_of(i)] = {node, static_cast<double>(1 + rng() % (hot ? 40 : 10))};
    }
    std::map<info_hash, std::set<std::string>> left;  // nodes each swarm left
    moved_map moved;
    std::size_t last_round_with_moves = 0;
    for (std::uint64_t round = 1; round <= 60; ++round) {
      std::map<std::string, double> loads;
      for (const auto& n : names) loads[n] = 0;
      for (const auto& [h, w] : where) loads[w.first] += w.second;
      std::vector<rebalance_move> all;
      std::vector<std::string> from;
      for (const auto& n : names) {
        std::vector<swarm_rate> mine;
        for (const auto& [h, w] : where)
          if (w.first == n) mine.push_back(swarm_rate{h, w.second});
        for (auto& m : plan_rebalance(n, loads, mine, moved, round, cfg)) {
          all.push_back(m);
          from.push_back(n);
        }
      }
      for (std::size_t i = 0; i < all.size(); ++i) {
        const auto& m = all[i];
        ASSERT_EQ(where[m.hash].first, from[i]);
        ASSERT_NE(m.to, from[i]);
        ASSERT_EQ(left[m.hash].count(m.to), 0u)
            << "seed " << seed << " round " << round << ": a swarm went back to a node it left";
        left[m.hash].insert(from[i]);
        where[m.hash].first = m.to;
        moved[m.hash] = round;
        last_round_with_moves = round;
      }
    }
    EXPECT_LT(last_round_with_moves, 40u) << "seed " << seed << ": still moving";
    // Settled: a node still above factor x mean has nothing that fits.
    std::map<std::string, double> loads;
    for (const auto& n : names) loads[n] = 0;
    for (const auto& [h, w] : where) loads[w.first] += w.second;
    for (const auto& n : names) {
      std::vector<swarm_rate> mine;
      for (const auto& [h, w] : where)
        if (w.first == n) mine.push_back(swarm_rate{h, w.second});
      EXPECT_TRUE(plan_rebalance(n, loads, mine, {}, 1000, cfg).empty()) << "seed " << seed;
    }
    EXPECT_LT(loads["a"], 1.5 * 0.25 * (loads["a"] + loads["b"] + loads["c"] + loads["d"]) + 40)
        << "seed " << seed;
  }
}

TEST(Rebalance, ConfigChecksNameTheOption) {
  cluster_config c;
  c.port = 7000;
  c.secret = "0123456789abcdef0123";
  ASSERT_EQ(c.validate(), "");
  auto bad = [&](auto change, const char* option) {
    cluster_config x = c;
    change(x);
    EXPECT_NE(x.validate().find(option), std::string::npos) << option << ": " << x.validate();
  };
  bad([](cluster_config& x) { x.rebalance_factor = 1.0; }, "cluster.rebalance-factor");
  bad([](cluster_config& x) { x.rebalance_factor = std::nan(""); }, "cluster.rebalance-factor");
  bad([](cluster_config& x) { x.rebalance_min_rate = -1; }, "cluster.rebalance-min-rate");
  bad([](cluster_config& x) { x.rebalance_max_moves = 0; }, "cluster.rebalance-max-moves");
  bad([](cluster_config& x) { x.rebalance_period = std::chrono::milliseconds(-1); },
      "cluster.rebalance-period");
  c.rebalance_period = std::chrono::milliseconds(0);  // off is fine
  EXPECT_EQ(c.validate(), "");
}

}  // namespace
}  // namespace sk::cluster
