// Rendezvous ownership, member-list merging and the cluster config pieces:
// pure functions, no CAF, no network.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "cluster/cluster_config.hpp"
#include "cluster/membership.hpp"
#include "cluster/ownership.hpp"

namespace sk::cluster {
namespace {

std::vector<info_hash> random_hashes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<info_hash> out(n);
  for (auto& h : out)
    for (auto& b : h.bytes) b = static_cast<std::uint8_t>(rng());
  return out;
}

std::vector<std::string> nodes(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back("node-" + std::to_string(i));
  return out;
}

TEST(Rendezvous, OwnerIsTheHighestWeight) {
  const auto names = nodes(5);
  for (const auto& h : random_hashes(200, 1)) {
    const std::size_t o = rendezvous_owner(h, names);
    ASSERT_LT(o, names.size());
    for (const auto& n : names) EXPECT_GE(rendezvous_weight(h, names[o]), rendezvous_weight(h, n));
  }
}

TEST(Rendezvous, StableAcrossCallsAndMemberOrder) {
  auto names = nodes(7);
  auto shuffled = names;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (const auto& h : random_hashes(500, 2)) {
    EXPECT_EQ(names[rendezvous_owner(h, names)], shuffled[rendezvous_owner(h, shuffled)]);
    EXPECT_EQ(rendezvous_owner(h, names), rendezvous_owner(h, names));
  }
}

TEST(Rendezvous, KnownValueIsPinned) {
  // Changing the weight function moves every swarm of a running cluster
  // on upgrade: this pins it.
  info_hash h;
  for (std::size_t i = 0; i < 20; ++i) h.bytes[i] = static_cast<std::uint8_t>(i);
  const auto w = rendezvous_weight(h, "a");
  EXPECT_EQ(w, rendezvous_weight(h, "a"));
  EXPECT_NE(w, rendezvous_weight(h, "b"));
  EXPECT_NE(rendezvous_weight(h, "ab"), rendezvous_weight(h, "a"));
}

TEST(Rendezvous, EmptyMembersHaveNoOwner) {
  EXPECT_EQ(rendezvous_owner(info_hash{}, {}), 0u);
  EXPECT_TRUE(rendezvous_rank(info_hash{}, {}).empty());
}

TEST(Rendezvous, Balanced) {
  const auto names = nodes(4);
  const auto hashes = random_hashes(40000, 3);
  std::map<std::size_t, std::size_t> count;
  for (const auto& h : hashes) ++count[rendezvous_owner(h, names)];
  // Expected 10000 each; binomial sd ~87: within 5 % is ~11 sd.
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_GT(count[i], 9500u) << names[i];
    EXPECT_LT(count[i], 10500u) << names[i];
  }
}

TEST(Rendezvous, JoinMovesOnlyToTheNewMember) {
  auto before = nodes(4);
  auto after = before;
  after.push_back("node-new");
  const auto hashes = random_hashes(20000, 4);
  std::size_t moved = 0;
  for (const auto& h : hashes) {
    const auto& a = before[rendezvous_owner(h, before)];
    const auto& b = after[rendezvous_owner(h, after)];
    if (a != b) {
      EXPECT_EQ(b, "node-new");  // never between two old members
      ++moved;
    }
  }
  // About 1/5 move (4000; sd ~57).
  EXPECT_GT(moved, 3600u);
  EXPECT_LT(moved, 4400u);
}

TEST(Rendezvous, LeaveMovesOnlyTheLeaversSwarms) {
  const auto before = nodes(5);
  auto after = before;
  after.erase(after.begin() + 2);  // node-2 leaves
  for (const auto& h : random_hashes(20000, 5)) {
    const auto& a = before[rendezvous_owner(h, before)];
    const auto& b = after[rendezvous_owner(h, after)];
    if (a != "node-2") {
      EXPECT_EQ(a, b);
    } else {
      // The leaver's swarms go to the node that ranked second: the replica
      // target, which already holds them.
      const auto r = rendezvous_rank(h, before);
      EXPECT_EQ(b, before[r[1]]);
    }
  }
}

TEST(Rendezvous, RankIsAPermutationOwnerFirst) {
  const auto names = nodes(6);
  for (const auto& h : random_hashes(100, 6)) {
    const auto r = rendezvous_rank(h, names);
    ASSERT_EQ(r.size(), names.size());
    EXPECT_EQ(r.front(), rendezvous_owner(h, names));
    std::set<std::size_t> seen(r.begin(), r.end());
    EXPECT_EQ(seen.size(), names.size());
    for (std::size_t i = 1; i < r.size(); ++i)
      EXPECT_GE(rendezvous_weight(h, names[r[i - 1]]), rendezvous_weight(h, names[r[i]]));
  }
}

TEST(Members, MergeAddsNewNamesSorted) {
  std::vector<member_info> known{{"b", "10.0.0.2", 7000, 1}};
  auto changed = merge_members(known, {{"c", "10.0.0.3", 7000, 1}, {"a", "10.0.0.1", 7000, 1}});
  ASSERT_EQ(known.size(), 3u);
  EXPECT_EQ(known[0].name, "a");
  EXPECT_EQ(known[1].name, "b");
  EXPECT_EQ(known[2].name, "c");
  EXPECT_EQ(changed.size(), 2u);
}

TEST(Members, NewerIncarnationReplacesOlderNever) {
  std::vector<member_info> known{{"a", "10.0.0.1", 7000, 5}};
  EXPECT_TRUE(merge_members(known, {{"a", "10.0.0.9", 7001, 4}}).empty());
  EXPECT_EQ(known[0].host, "10.0.0.1");
  EXPECT_EQ(merge_members(known, {{"a", "10.0.0.9", 7001, 6}}).size(), 1u);
  EXPECT_EQ(known[0].host, "10.0.0.9");
  EXPECT_EQ(known[0].port, 7001);
  EXPECT_TRUE(merge_members(known, {{"a", "10.0.0.9", 7001, 6}}).empty());
}

TEST(Members, InvalidEntriesIgnored) {
  std::vector<member_info> known;
  EXPECT_TRUE(merge_members(known, {{"", "h", 1, 1}, {"x", "h", 0, 1}}).empty());
  EXPECT_TRUE(known.empty());
}

TEST(Members, GossipConverges) {
  // Five nodes, each knowing itself and one seed; rounds of pairwise
  // exchange over a ring reach the same list everywhere.
  std::vector<std::vector<member_info>> lists(5);
  for (std::size_t i = 0; i < 5; ++i) {
    lists[i].push_back({"n" + std::to_string(i), "10.0.0." + std::to_string(i), 7000, 1});
    merge_members(lists[i], {{"n0", "10.0.0.0", 7000, 1}});
  }
  for (int round = 0; round < 5; ++round)
    for (std::size_t i = 0; i < 5; ++i) {
      merge_members(lists[(i + 1) % 5], lists[i]);
      merge_members(lists[i], lists[(i + 1) % 5]);
    }
  for (const auto& l : lists) {
    EXPECT_EQ(l, lists[0]);
    EXPECT_EQ(member_names(l).size(), 5u);
  }
}

TEST(Seeds, Parses) {
  std::string err;
  auto s = parse_seeds("10.0.0.1:7000, host.example:7001,[::1]:7002", &err);
  ASSERT_TRUE(s) << err;
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0], (host_port{"10.0.0.1", 7000}));
  EXPECT_EQ((*s)[1], (host_port{"host.example", 7001}));
  EXPECT_EQ((*s)[2], (host_port{"::1", 7002}));
  EXPECT_EQ((*s)[2].to_string(), "[::1]:7002");
  auto empty = parse_seeds("  ", &err);
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(Seeds, RejectsBadItemsNamingThem) {
  for (const char* bad : {"host", "host:", "host:0", "host:65536", ":7000", "::1:7000",
                          "[::1]7000", "a:1,,b:2", "host:12x"}) {
    std::string err;
    EXPECT_FALSE(parse_seeds(bad, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  std::string err;
  parse_seeds("a:1,b:99999", &err);
  EXPECT_NE(err.find("b:99999"), std::string::npos) << err;
}

TEST(ClusterConfig, Validates) {
  cluster_config c;
  EXPECT_EQ(c.validate(), "");  // off
  c.port = 7000;
  EXPECT_NE(c.validate().find("cluster.secret"), std::string::npos);
  c.secret = "0123456789abcdef";
  EXPECT_EQ(c.validate(), "");
  c.bind = "0.0.0.0";
  EXPECT_NE(c.validate().find("cluster.advertise"), std::string::npos);
  c.advertise = "10.0.0.1";
  EXPECT_EQ(c.validate(), "");
  EXPECT_EQ(c.advertised_host(), "10.0.0.1");
  c.connection_timeout = c.heartbeat_interval;
  EXPECT_NE(c.validate().find("cluster.connection-timeout"), std::string::npos);
  c.connection_timeout = 3 * c.heartbeat_interval;
  c.node_name = "has space";
  EXPECT_NE(c.validate().find("cluster.node-name"), std::string::npos);
}

}  // namespace
}  // namespace sk::cluster
