// Reachability probe decisions of swarm_core without CAF or sockets
// (injected time): when a peer is probed, how many at once, and what each
// outcome does to its flags and to every allocation policy.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tracker/swarm_core.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::at;
using test::compact;
using test::pid;
using test::v4;

const info_hash hash = test::ih(0x51);

swarm_announce make(std::uint64_t peer, const endpoint& ep, std::uint64_t left = 100,
                    announce_event ev = announce_event::none) {
  swarm_announce a;
  a.request.hash = hash;
  a.request.id = pid(peer);
  a.request.port = ep.port;
  a.request.left = left;
  a.request.event = ev;
  a.request.compact = true;
  a.request.numwant = 50;
  a.peer = ep;
  return a;
}

/// Probing on, re-probe after 1 h, at most 2 outstanding; announces every
/// 20 min are on time (min interval 10 min).
swarm_config config(std::size_t max_outstanding = 2) {
  swarm_config c;
  c.announce_interval = seconds(1200);
  c.min_interval = seconds(600);
  c.peer_timeout = seconds(3000);
  c.rng_seed = 9;
  c.probe.enabled = true;
  c.probe.reprobe_after = seconds(3600);
  c.probe.max_outstanding = max_outstanding;
  c.probe.result_timeout = seconds(300);
  return c;
}

announce_result announce(swarm_core& core, const swarm_announce& a, std::int64_t t) {
  announce_result r;
  EXPECT_TRUE(core.announce(a, at(t), r));
  return r;
}

peer_key key_of(std::uint64_t peer, const endpoint& ep) { return peer_key{pid(peer), ep.ip}; }

std::set<std::string> peers_of(const announce_result& r) {
  std::set<std::string> out;
  for (std::size_t i = 0; i + 6 <= r.peers4.size(); i += 6) out.insert(r.peers4.substr(i, 6));
  return out;
}

TEST(ProbeDecisions, NothingIsProbedUnlessEnabledAndAttached) {
  auto off = config();
  off.probe.enabled = false;
  swarm_core a(hash, off, 1);
  a.set_probing(true);  // a prober, but probing is off in the config
  EXPECT_FALSE(a.probing());
  announce(a, make(1, v4(10, 0, 0, 1, 6881)), 0);
  EXPECT_FALSE(a.has_probe_requests());

  swarm_core b(hash, config(), 1);  // enabled, but no prober attached
  announce(b, make(1, v4(10, 0, 0, 1, 6881)), 0);
  EXPECT_FALSE(b.has_probe_requests());
  EXPECT_EQ(b.outstanding_probes(), 0u);
}

TEST(ProbeDecisions, ANewPeerIsProbedOnceThenAgainAfterThePeriod) {
  swarm_core core(hash, config(), 1);
  core.set_probing(true);
  const auto ep = v4(10, 0, 0, 1, 6881);
  announce(core, make(1, ep), 0);
  auto reqs = core.take_probe_requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].hash, hash);
  EXPECT_EQ(reqs[0].id, pid(1));
  EXPECT_EQ(reqs[0].target, ep);
  EXPECT_TRUE(core.take_probe_requests().empty()) << "taken requests are gone";
  EXPECT_TRUE(core.apply_probe_result(key_of(1, ep), ep.port, probe_outcome::reachable, at(1)));
  EXPECT_EQ(core.outstanding_probes(), 0u);

  // Re-announces within the period: no new probe.
  announce(core, make(1, ep), 1200);
  announce(core, make(1, ep), 2400);
  EXPECT_FALSE(core.has_probe_requests());
  // The period has passed: probed again.
  announce(core, make(1, ep), 3600);
  EXPECT_EQ(core.take_probe_requests().size(), 1u);
  EXPECT_EQ(core.counters().probes_requested, 2u);
}

TEST(ProbeDecisions, AnotherPortIsProbedAgainAndForgetsTheOldVerdict) {
  swarm_core core(hash, config(), 1);
  core.set_probing(true);
  const auto ep = v4(10, 0, 0, 1, 6881);
  announce(core, make(1, ep), 0);
  core.take_probe_requests();
  core.apply_probe_result(key_of(1, ep), ep.port, probe_outcome::unreachable, at(1));
  ASSERT_TRUE(core.table().traits(key_of(1, ep))->has(flag_unreachable));
  const auto moved = v4(10, 0, 0, 1, 7000);
  announce(core, make(1, moved), 1200);
  auto reqs = core.take_probe_requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].target.port, 7000);
  EXPECT_FALSE(core.table().traits(key_of(1, moved))->has(flag_unreachable));
  // A late answer about the old port changes nothing.
  EXPECT_FALSE(core.apply_probe_result(key_of(1, moved), 6881, probe_outcome::bogus, at(1201)));
  EXPECT_FALSE(core.table().traits(key_of(1, moved))->has(flag_quarantined));
}

TEST(ProbeDecisions, OutstandingProbesAreBoundedPerSwarm) {
  swarm_core core(hash, config(2), 1);
  core.set_probing(true);
  for (std::uint8_t i = 1; i <= 5; ++i) announce(core, make(i, v4(10, 0, 0, i, 6881)), 0);
  auto reqs = core.take_probe_requests();
  EXPECT_EQ(reqs.size(), 2u);
  EXPECT_EQ(core.outstanding_probes(), 2u);
  EXPECT_TRUE(core.check_invariants());
  // One answer frees one slot; the next announce of a waiting peer takes it.
  core.apply_probe_result(key_of(1, v4(10, 0, 0, 1, 6881)), 6881, probe_outcome::reachable, at(10));
  // (Within the result timeout, so peer 2's probe still holds its slot; the
  // early announces only earn a warning.)
  announce(core, make(3, v4(10, 0, 0, 3, 6881)), 200);
  announce(core, make(4, v4(10, 0, 0, 4, 6881)), 200);
  reqs = core.take_probe_requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].id, pid(3));
  EXPECT_EQ(core.outstanding_probes(), 2u);
}

TEST(ProbeDecisions, UnansweredProbesExpireAndFreeTheirSlot) {
  swarm_core core(hash, config(1), 1);
  core.set_probing(true);
  announce(core, make(1, v4(10, 0, 0, 1, 6881)), 0);
  announce(core, make(2, v4(10, 0, 0, 2, 6881)), 0);
  EXPECT_EQ(core.take_probe_requests().size(), 1u);
  core.tick(at(299));
  EXPECT_EQ(core.outstanding_probes(), 1u);
  core.tick(at(300));
  EXPECT_EQ(core.outstanding_probes(), 0u);
  EXPECT_EQ(core.counters().probes_expired, 1u);
  announce(core, make(2, v4(10, 0, 0, 2, 6881)), 1200);
  EXPECT_EQ(core.take_probe_requests().size(), 1u);
}

TEST(ProbeDecisions, UnreachableIsFlaggedButNeverQuarantined) {
  swarm_core core(hash, config(8), 1);
  core.set_probing(true);
  const auto a = v4(10, 0, 0, 1, 6881);
  const auto b = v4(10, 0, 0, 2, 6881);
  announce(core, make(1, a), 0);
  announce(core, make(2, b), 0);
  core.take_probe_requests();
  ASSERT_TRUE(core.apply_probe_result(key_of(1, a), a.port, probe_outcome::unreachable, at(1)));
  const auto* t = core.table().traits(key_of(1, a));
  EXPECT_TRUE(t->has(flag_unreachable));
  EXPECT_FALSE(t->has(flag_reachable));
  EXPECT_FALSE(t->has(flag_quarantined));
  EXPECT_EQ(core.table().quarantined_count(), 0u);
  // A reachable peer still gets it.
  ASSERT_TRUE(core.apply_probe_result(key_of(2, b), b.port, probe_outcome::reachable, at(1)));
  const auto r = announce(core, make(2, b), 1200);
  EXPECT_EQ(peers_of(r).count(compact(a)), 1u);
  EXPECT_TRUE(core.check_invariants());
}

TEST(ProbeDecisions, TwoUnreachablePeersAreNeverPairedByDefault) {
  swarm_core core(hash, config(8), 1);
  core.set_probing(true);
  const auto a = v4(10, 0, 0, 1, 6881);
  const auto b = v4(10, 0, 0, 2, 6881);
  const auto c = v4(10, 0, 0, 3, 6881);
  for (std::uint8_t i = 1; i <= 3; ++i) announce(core, make(i, v4(10, 0, 0, i, 6881)), 0);
  core.take_probe_requests();
  core.apply_probe_result(key_of(1, a), a.port, probe_outcome::unreachable, at(1));
  core.apply_probe_result(key_of(2, b), b.port, probe_outcome::unreachable, at(1));
  core.apply_probe_result(key_of(3, c), c.port, probe_outcome::reachable, at(1));
  ASSERT_EQ(core.policy(), policy_kind::adaptive);
  for (int i = 0; i < 20; ++i) {
    const auto r = announce(core, make(1, a), 1200 + 1200 * i);
    const auto got = peers_of(r);
    EXPECT_EQ(got.count(compact(b)), 0u) << "unreachable given unreachable";
    EXPECT_EQ(got.count(compact(c)), 1u);
  }
}

TEST(ProbeDecisions, BogusIsQuarantinedAndNeverReturnedByAnyPolicy) {
  swarm_core core(hash, config(8), 1);
  core.set_probing(true);
  const auto bogus = v4(10, 0, 0, 9, 6881);
  announce(core, make(9, bogus, 0), 0);  // a "seeder", so every policy wants it
  for (std::uint8_t i = 1; i <= 4; ++i) announce(core, make(i, v4(10, 0, 0, i, 6881)), 0);
  core.take_probe_requests();
  ASSERT_TRUE(core.apply_probe_result(key_of(9, bogus), bogus.port, probe_outcome::bogus, at(1)));
  EXPECT_TRUE(core.table().traits(key_of(9, bogus))->has(flag_quarantined));
  EXPECT_EQ(core.table().quarantined_count(), 1u) << "placed out of the sampling sets at once";
  EXPECT_TRUE(core.check_invariants());
  for (int p = 0; p < policy_kind_count; ++p) {
    core.set_policy(static_cast<policy_kind>(p));
    for (std::uint8_t i = 1; i <= 4; ++i) {
      const auto r = announce(core, make(i, v4(10, 0, 0, i, 6881)), 1200 * (p + 1));
      EXPECT_EQ(peers_of(r).count(compact(bogus)), 0u)
          << "policy " << to_string(static_cast<policy_kind>(p));
    }
  }
  // Quarantined peers are not probed again.
  announce(core, make(9, bogus, 0), 20000);
  for (const auto& r : core.take_probe_requests()) EXPECT_NE(r.id, pid(9));
}

TEST(ProbeDecisions, SkippedChangesNoFlagAndUnknownPeersAreIgnored) {
  swarm_core core(hash, config(), 1);
  core.set_probing(true);
  const auto ep = v4(10, 0, 0, 1, 6881);
  announce(core, make(1, ep), 0);
  core.take_probe_requests();
  EXPECT_TRUE(core.apply_probe_result(key_of(1, ep), ep.port, probe_outcome::skipped, at(1)));
  EXPECT_EQ(core.table().traits(key_of(1, ep))->flags & (flag_reachable | flag_unreachable), 0);
  EXPECT_EQ(core.outstanding_probes(), 0u);
  EXPECT_FALSE(
      core.apply_probe_result(key_of(7, v4(10, 0, 0, 7, 1)), 1, probe_outcome::bogus, at(2)));
}

TEST(ProbeDecisions, HealthCountsUnreachableAmongProbedPeers) {
  auto c = config(16);
  c.health.min_peers = 4;
  swarm_core core(hash, c, 1);
  core.set_probing(true);
  for (std::uint8_t i = 1; i <= 6; ++i)
    announce(core, make(i, v4(10, 0, 0, i, 6881), i == 1 ? 0 : 100), 0);
  core.take_probe_requests();
  for (std::uint8_t i = 1; i <= 6; ++i) {
    core.apply_probe_result(key_of(i, v4(10, 0, 0, i, 6881)), 6881,
                            i <= 4 ? probe_outcome::unreachable : probe_outcome::reachable, at(1));
  }
  core.tick(at(60));
  ASSERT_NE(core.last_report(), nullptr);
  EXPECT_NE(core.last_report()->reasons & reason_unreachable_peers, 0u)
      << reasons_to_string(core.last_report()->reasons);
}

TEST(ProbeDecisions, ACopyKeepsOutstandingProbes) {
  swarm_core core(hash, config(), 1);
  core.set_probing(true);
  const auto ep = v4(10, 0, 0, 1, 6881);
  announce(core, make(1, ep), 0);
  core.take_probe_requests();
  swarm_core copy = core;  // what the supervisor restarts from
  EXPECT_EQ(copy.outstanding_probes(), 1u);
  EXPECT_TRUE(copy.apply_probe_result(key_of(1, ep), ep.port, probe_outcome::reachable, at(1)));
  EXPECT_TRUE(copy.table().traits(key_of(1, ep))->has(flag_reachable));
}

TEST(ProbeDecisions, UnreachableLeechersComeBackSooner) {
  // Nobody can dial an unreachable leecher: it meets later arrivals only by
  // announcing, so its interval is x unreachable_leecher_scale (0.5), never
  // below min interval; reachable leechers and seeders keep the interval.
  swarm_core core(hash, config(8), 1);
  core.set_probing(true);
  const endpoint a = v4(10, 0, 0, 1, 6881), b = v4(10, 0, 0, 2, 6881), c = v4(10, 0, 0, 3, 6881);
  announce(core, make(1, a, 100, announce_event::started), 0);
  announce(core, make(2, b, 100, announce_event::started), 0);
  announce(core, make(3, c, 0, announce_event::started), 0);
  core.apply_probe_result(key_of(1, a), a.port, probe_outcome::unreachable, at(1));
  core.apply_probe_result(key_of(2, b), b.port, probe_outcome::reachable, at(1));
  core.apply_probe_result(key_of(3, c), c.port, probe_outcome::unreachable, at(1));
  EXPECT_EQ(announce(core, make(1, a), 1200).interval, 600);  // 1200 x 0.5
  EXPECT_EQ(announce(core, make(2, b), 1200).interval, 1200);
  EXPECT_EQ(announce(core, make(3, c, 0), 1200).interval, 1200);  // a seeder
  swarm_config off = config(8);
  off.intervals.unreachable_leecher_scale = 1.0;
  swarm_core plain(hash, off, 1);
  plain.set_probing(true);
  announce(plain, make(1, a, 100, announce_event::started), 0);
  plain.apply_probe_result(key_of(1, a), a.port, probe_outcome::unreachable, at(1));
  EXPECT_EQ(announce(plain, make(1, a), 1200).interval, 1200);
  swarm_config bad = config(8);
  bad.intervals.unreachable_leecher_scale = 0.0;
  EXPECT_FALSE(bad.validate().empty());
}

}  // namespace
}  // namespace sk
