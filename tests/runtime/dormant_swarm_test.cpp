// Quiet swarms kept as data (swarm_config::hibernate_after): the directory
// takes a quiet swarm's state over from its actor, keeps its counts in the
// node's gauges and census while it sleeps, wakes it on the next request
// with its peers and counters, and drops it when its peers have timed out.
// Deterministic, on CAF's test scheduler.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "runtime/directory.hpp"
#include "runtime/placement.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::v4;

/// sweep 10 s, peer timeout 150 s, idle lifetime 100 s, asleep after 30 s.
swarm_config sleepy_config() {
  auto c = test::short_config(11);
  c.hibernate_after = seconds(30);
  return c;
}

class DormantSwarms : public test::caf_fixture {
 protected:
  DormantSwarms() { dir->start_supervisor(supervisor_config{}); }
  ~DormantSwarms() override {
    if (dir) dir->stop_all();
    run();
  }

  /// Announces through the directory (which wakes a sleeping swarm).
  announce_result announce(std::uint64_t peer, std::uint64_t left, announce_event ev) {
    auto r = test::announce_by_ticket(
        dir->route_swarm(h),
        test::swarm_announce_of(h, peer, v4(10, 0, 0, static_cast<std::uint8_t>(peer), 6881),
                                left, ev),
        [this] { run(); });
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : announce_result{};
  }

  std::int64_t seeders() const { return dir->totals().seeders.load(); }
  std::int64_t leechers() const { return dir->totals().leechers.load(); }
  std::int64_t dormant() const { return dir->totals().dormant.load(); }
  std::int64_t census_peers() const { return dir->census()->peers(); }

  /// Replaces the directory with one on `cfg` (with `p` as its placement
  /// when given) and a supervisor.
  void new_directory(const swarm_config& cfg, placement_ptr p = nullptr) {
    dir->stop_all();
    run();
    dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
    if (p) dir->set_placement(std::move(p));
    dir->start_supervisor(supervisor_config{});
  }

  /// `n` swarms (hashes first_byte, first_byte + 1, ...) of one seeder each
  /// (10.0.`subnet`.i+1), announced at the same instant; their actors,
  /// watched. Empty after a failed announce (reported).
  std::vector<caf::actor> one_peer_swarms(int n, std::uint8_t first_byte, std::uint8_t subnet) {
    std::vector<caf::actor> actors;
    for (int i = 0; i < n; ++i) {
      const info_hash hash = test::ih(static_cast<std::uint8_t>(first_byte + i));
      auto r = test::announce_by_ticket(
          dir->route_swarm(hash),
          test::swarm_announce_of(hash, 1, v4(10, 0, subnet, static_cast<std::uint8_t>(i + 1), 6881),
                                  0, announce_event::started),
          [this] { run(); });
      EXPECT_TRUE(r) << sys->render(r.error());
      if (!r) return {};
      actors.push_back(dir->find(hash));
      watch(actors.back());
    }
    return actors;
  }

  const info_hash h = test::ih(0x51);
  std::unique_ptr<swarm_directory> dir = std::make_unique<swarm_directory>(*sys, sleepy_config(), 8);
};

TEST_F(DormantSwarms, NoMoreSwarmsFallAsleepPerSecondThanTheNodeAllows) {
  // Two a second; twenty quiet swarms whose sweeps come at the same instants.
  constexpr int n = 20;
  auto cfg = sleepy_config();
  cfg.hibernations_per_second = 2;
  new_directory(cfg);
  const std::vector<caf::actor> actors = one_peer_swarms(n, 0x60, 1);
  ASSERT_EQ(actors.size(), static_cast<std::size_t>(n));
  const auto asleep = [&] {
    return std::count_if(actors.begin(), actors.end(), [&](const caf::actor& a) { return exited(a); });
  };
  // The first sweep past 30 s quiet, all at one instant: the bucket holds a
  // hundredth of a second's worth (at least one), so one sleeps and the others
  // are deferred to sweeps between 1/6 and 1/2 of the period later (all of
  // them within 31.7 to 35 s: unbounded, every one would sleep by then).
  advance(seconds(30));
  EXPECT_EQ(asleep(), 1);
  EXPECT_EQ(dir->totals().hibernations_deferred.load(), static_cast<std::uint64_t>(n - 1));
  // From then on, looked at every 100 ms: never more than one plus two per
  // second since, and all asleep within a minute.
  for (int step = 1; step <= 600 && asleep() < n; ++step) {
    sched->advance_time(std::chrono::milliseconds(100));
    run();
    EXPECT_LE(asleep(), 1 + 2 * step / 10) << "after " << step * 100 << " ms";
  }
  EXPECT_EQ(asleep(), n);
  EXPECT_EQ(dormant(), n);
  EXPECT_EQ(dir->totals().hibernated.load(), static_cast<std::uint64_t>(n));
  EXPECT_GT(dir->totals().hibernations_deferred.load(), static_cast<std::uint64_t>(n - 1))
      << "some deferred sweeps came before a token did";
  // Every one of them is still the node's, with its peer.
  EXPECT_EQ(dir->size(), static_cast<std::size_t>(n));
  EXPECT_EQ(census_peers(), n);
}

TEST_F(DormantSwarms, SwarmsWokenByRequestsFallAsleepAgainAsFastAsTheyWereWoken) {
  // Two a second for a population falling asleep; twenty woken at once by
  // requests may sleep again at once (each wake earned one sleep), or under
  // clients' steady announces the node would wake more swarms a second than
  // it may put to sleep, and the awake population would grow without end.
  constexpr int n = 20;
  auto cfg = sleepy_config();
  cfg.hibernations_per_second = 2;
  new_directory(cfg);
  const std::vector<caf::actor> first = one_peer_swarms(n, 0x80, 3);
  ASSERT_EQ(first.size(), static_cast<std::size_t>(n));
  advance(seconds(30));
  for (int s = 0; s < 60 && dormant() < n; ++s) advance(seconds(1));
  ASSERT_EQ(dormant(), n);
  const std::uint64_t deferred = dir->totals().hibernations_deferred.load();
  EXPECT_GT(deferred, 0u) << "the first wave went at the node's rate";

  // A new peer for each: twenty wakes at one instant.
  for (int i = 0; i < n; ++i) {
    const info_hash hash = test::ih(static_cast<std::uint8_t>(0x80 + i));
    auto r = test::announce_by_ticket(
        dir->route_swarm(hash),
        test::swarm_announce_of(hash, 2, v4(10, 0, 4, static_cast<std::uint8_t>(i + 1), 6881), 1000,
                                announce_event::started),
        [this] { run(); });
    ASSERT_TRUE(r) << sys->render(r.error());
    EXPECT_EQ(r->stats.complete, 1) << "woken with its peer";
  }
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().woken.load(), static_cast<std::uint64_t>(n));

  // Quiet for 30 s again: all twenty sleep at the same sweep, none deferred.
  advance(seconds(31));
  EXPECT_EQ(dormant(), n);
  EXPECT_EQ(dir->totals().hibernations_deferred.load(), deferred);
  EXPECT_EQ(census_peers(), 2 * n);
}

/// Placement of a node whose view names no owner yet: every swarm stays
/// local, and the directory knows it is a cluster member.
class no_remote_placement final : public placement {
 public:
  remote_swarm_interface spawn_remote(const info_hash&, const std::string&, const caf::actor&,
                                      std::weak_ptr<placement_host>,
                                      const local_swarm_actor&) override {
    return {};
  }
};

TEST_F(DormantSwarms, AClusterMembersQuietSwarmsStayAwakeWithoutTakingTheNodesHibernations) {
  auto cfg = sleepy_config();
  cfg.hibernations_per_second = 1;
  new_directory(cfg, std::make_shared<no_remote_placement>());
  const std::vector<caf::actor> actors = one_peer_swarms(3, 0x70, 2);
  ASSERT_EQ(actors.size(), 3u);
  advance(seconds(90));
  for (const auto& a : actors) EXPECT_FALSE(exited(a));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().hibernated.load(), 0u);
  // None asked for a slot: three at one instant with one a second would
  // have deferred two at every sweep.
  EXPECT_EQ(dir->totals().hibernations_deferred.load(), 0u);
}

TEST_F(DormantSwarms, ASwarmThatFallsAsleepIsFreedAtOnceNotWhenItsNextTimerWouldFire) {
  // Its wake-ups are in the node's wheel (runtime/swarm_timers.hpp), which
  // holds no reference: once the actor quits, nothing keeps it. (A CAF
  // delayed message would have kept it until its health tick, 60 s on.)
  announce(1, 0, announce_event::started);
  caf::actor_addr addr;
  {
    // Not watched: the down message's sender would be a reference too.
    const caf::actor first = dir->find(h);
    ASSERT_TRUE(first);
    addr = first.address();
  }
  advance(seconds(31));
  ASSERT_EQ(dormant(), 1);
  EXPECT_FALSE(caf::actor_cast<caf::strong_actor_ptr>(addr))
      << "the actor of a sleeping swarm is still referenced";
}

TEST_F(DormantSwarms, AQuietSwarmSleepsAsDataAndWakesWithItsPeersAndCounts) {
  announce(1, 0, announce_event::completed);  // a seeder that just finished
  announce(2, 1000, announce_event::started);
  const caf::actor first = dir->find(h);
  ASSERT_TRUE(first);
  watch(first);
  EXPECT_EQ(seeders(), 1);
  EXPECT_EQ(leechers(), 1);
  EXPECT_EQ(census_peers(), 2);

  // Sweeps every 10 s; quiet for 30 s from the last announce on.
  advance(seconds(25));
  EXPECT_FALSE(exited(first));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->dormant(h), nullptr);
  advance(seconds(20));
  ASSERT_TRUE(exited(first));
  EXPECT_EQ(dormant(), 1);
  EXPECT_EQ(dir->totals().hibernated.load(), 1u);
  // Still one of the node's swarms, with its peers in every gauge.
  EXPECT_EQ(dir->size(), 1u);
  EXPECT_EQ(dir->census()->swarms(), 1);
  EXPECT_EQ(census_peers(), 2);
  EXPECT_EQ(seeders(), 1);
  EXPECT_EQ(leechers(), 1);
  EXPECT_EQ(dir->totals().swarms_by_health[static_cast<std::size_t>(swarm_health::unevaluated)]
                .load(),
            1);
  const dormant_ptr data = dir->dormant(h);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->peers, 2u);
  swarm_snapshot decoded;
  ASSERT_TRUE(unpack_snapshot(data->bytes, data->raw_size, decoded));
  EXPECT_LT(data->bytes.size(), data->raw_size) << "compressed";
  EXPECT_EQ(decoded.hash, h);
  EXPECT_EQ(decoded.peers.size(), 2u);
  EXPECT_EQ(decoded.downloaded, 1u);
  const auto entries = dir->local_entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_FALSE(entries[0].actor);
  EXPECT_EQ(entries[0].dormant, data);

  // A scrape wakes it: a new actor with the same counts.
  const caf::actor second = dir->find(h);
  ASSERT_TRUE(second);
  EXPECT_NE(second, first);
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().woken.load(), 1u);
  EXPECT_EQ(dir->dormant(h), nullptr);
  auto stats = test::scrape_by_ticket(second, [this] { run(); });
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->complete, 1);
  EXPECT_EQ(stats->incomplete, 1);
  EXPECT_EQ(stats->downloaded, 1);
  // Counted once: the woken actor's share replaced the sleeping one's.
  EXPECT_EQ(seeders(), 1);
  EXPECT_EQ(leechers(), 1);
  EXPECT_EQ(census_peers(), 2);
  EXPECT_EQ(dir->totals().swarms_by_health[static_cast<std::size_t>(swarm_health::unevaluated)]
                .load(),
            1);

  // A new leecher gets both peers back from the woken swarm.
  const auto r = announce(3, 500, announce_event::started);
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 2);
  EXPECT_EQ(r.peers4.size(), 2u * 6u);
  EXPECT_EQ(dir->find(h), second);
  EXPECT_EQ(census_peers(), 3);
}

TEST_F(DormantSwarms, ASwarmSleepsHibernateAfterItsLastRequestNotAtALaterSweep) {
  // Sweeps a minute apart, asleep after 30 s quiet: the swarm sweeps when
  // its quiet time is up instead of waiting for the next whole period.
  auto cfg = sleepy_config();
  cfg.sweep_period = seconds(60);
  new_directory(cfg);
  announce(1, 1000, announce_event::started);
  const caf::actor a = dir->find(h);
  ASSERT_TRUE(a);
  watch(a);
  advance(seconds(20));
  announce(2, 1000, announce_event::started);  // quiet from here on
  advance(seconds(29));
  EXPECT_FALSE(exited(a)) << "29 s after its last request";
  EXPECT_EQ(dormant(), 0);
  advance(seconds(2));
  EXPECT_TRUE(exited(a)) << "31 s after its last request (the next whole sweep: 60 s)";
  EXPECT_EQ(dormant(), 1);
  EXPECT_EQ(census_peers(), 2);
}

TEST_F(DormantSwarms, ASwarmIsEvaluatedBeforeItSleepsAndStaysAwakeWhenThatFindsItUnhealthy) {
  // The health tick is far off: only the evaluation at the sleep can see
  // that the last seeder left five leechers behind.
  auto cfg = sleepy_config();
  cfg.health_tick = seconds(600);
  new_directory(cfg);
  announce(1, 0, announce_event::started);
  for (std::uint64_t p = 2; p <= 6; ++p) announce(p, 1000, announce_event::started);
  announce(1, 0, announce_event::stopped);
  const caf::actor a = dir->find(h);
  ASSERT_TRUE(a);
  watch(a);
  const auto critical = [this] {
    return dir->totals().swarms_by_health[static_cast<std::size_t>(swarm_health::critical)].load();
  };
  EXPECT_EQ(critical(), 0) << "not evaluated yet";
  advance(seconds(45));
  EXPECT_FALSE(exited(a));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().hibernated.load(), 0u);
  EXPECT_EQ(critical(), 1) << "no seeders, five leechers: evaluated when it would have slept";
  EXPECT_EQ(leechers(), 5);
}

TEST_F(DormantSwarms, PrefetchingAHashWakesNothingAndCreatesNothing) {
  // The UDP transport prefetches the hashes of a round before routing them;
  // a hint must neither wake a sleeping swarm nor make one for an unknown
  // hash (a forged datagram's).
  announce(1, 0, announce_event::started);
  const caf::actor first = dir->find(h);
  ASSERT_TRUE(first);
  watch(first);
  const info_hash awake = test::ih(0x52);
  ASSERT_TRUE(dir->route_swarm(awake));
  run();
  advance(seconds(45));
  ASSERT_TRUE(exited(first));
  ASSERT_EQ(dormant(), 1);
  const std::size_t swarms = dir->size();

  const info_hash unknown = test::ih(0x53);
  const std::vector<info_hash> round{h, unknown, awake, h, unknown};
  dir->prefetch(round.data(), round.size());
  dir->prefetch(round.data(), 0);
  run();
  EXPECT_EQ(dormant(), 1);
  EXPECT_NE(dir->dormant(h), nullptr);
  EXPECT_EQ(dir->totals().woken.load(), 0u);
  EXPECT_EQ(dir->size(), swarms);
  EXPECT_EQ(dir->census()->swarms(), static_cast<std::int64_t>(swarms));
  EXPECT_FALSE(dir->find(unknown));

  // A round longer than the directory's own batch of hints.
  std::vector<info_hash> many;
  for (int i = 0; i < 100; ++i) many.push_back(test::ih(static_cast<std::uint8_t>(0x60 + i)));
  many.push_back(h);
  dir->prefetch(many.data(), many.size());
  EXPECT_EQ(dormant(), 1);
  EXPECT_EQ(dir->size(), swarms);
}

TEST_F(DormantSwarms, ASleepingSwarmWhosePeersTimedOutIsDroppedWithItsCounts) {
  announce(1, 1000, announce_event::started);
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  EXPECT_EQ(leechers(), 1);
  // Peer timeout 150 s after the announce, then idle lifetime 100 s; the
  // directory's sweeper passes every 10 s.
  advance(seconds(180));
  EXPECT_EQ(dormant(), 1) << "dropped before the swarm would have ended";
  advance(seconds(60));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->size(), 0u);
  EXPECT_EQ(dir->census()->swarms(), 0);
  EXPECT_EQ(census_peers(), 0);
  EXPECT_EQ(leechers(), 0);
  EXPECT_FALSE(dir->find(h));
}

TEST_F(DormantSwarms, WakingLeavesOutPeersWhoseTimeoutPassedWhileItSlept) {
  announce(1, 1000, announce_event::started);
  advance(seconds(100));
  announce(2, 1000, announce_event::started);  // wakes it; peer 1 is 100 s old
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  advance(seconds(20));  // peer 1 is 165 s old now: past its 150 s
  auto stats = test::scrape_by_ticket(dir->find_swarm(h), [this] { run(); });
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->incomplete, 1);
  EXPECT_EQ(census_peers(), 1);
  EXPECT_EQ(leechers(), 1);
}

TEST_F(DormantSwarms, EndingASleepingSwarmGivesBackItsCounts) {
  announce(1, 0, announce_event::started);
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  ASSERT_TRUE(dir->end_swarm(h));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->size(), 0u);
  EXPECT_EQ(seeders(), 0);
  EXPECT_EQ(census_peers(), 0);
  EXPECT_FALSE(dir->find(h));
}

TEST_F(DormantSwarms, StopAllGivesBackTheCountsOfSleepingSwarms) {
  announce(1, 0, announce_event::started);
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  dir->stop_all();
  run();
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->census()->swarms(), 0);
  EXPECT_EQ(census_peers(), 0);
  EXPECT_EQ(seeders(), 0);
}

TEST_F(DormantSwarms, ABusySwarmAndAnEmptyOneNeverSleep) {
  announce(1, 1000, announce_event::started);
  for (int i = 0; i < 8; ++i) {
    advance(seconds(20));
    announce(1, 1000, announce_event::none);  // every 20 s: never quiet for 30
  }
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().hibernated.load(), 0u);
  // Stopped: empty, so it ends idle (after 100 s) instead of sleeping.
  announce(1, 1000, announce_event::stopped);
  const caf::actor a = dir->find(h);
  watch(a);
  advance(seconds(60));
  EXPECT_EQ(dormant(), 0);
  advance(seconds(60));
  EXPECT_TRUE(exited(a));
  EXPECT_EQ(dir->size(), 0u);
  EXPECT_EQ(dir->totals().hibernated.load(), 0u);
}

TEST_F(DormantSwarms, AnOperatorsPinnedPolicyStaysThroughASleep) {
  announce(1, 1000, announce_event::started);
  const caf::actor sup = dir->supervisor();
  auto changed =
      ask<policy_change>(sup, policy_atom::value, caf::put_atom::value, h, std::string("random"));
  ASSERT_TRUE(changed) << sys->render(changed.error());
  ASSERT_TRUE(changed->pinned);
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  auto pinned = ask<bool>(sup, policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned);
  EXPECT_TRUE(*pinned) << "the pin went with the actor";
  // Woken: the same history, its policy and the pin.
  announce(2, 1000, announce_event::started);
  auto policy = ask<std::string>(dir->find(h), policy_atom::value, caf::get_atom::value);
  ASSERT_TRUE(policy);
  EXPECT_EQ(*policy, "random");
  pinned = ask<bool>(sup, policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned);
  EXPECT_TRUE(*pinned);
  // Ended as empty (both peers stop): a later swarm of the hash is new and
  // unpinned, as before.
  announce(1, 1000, announce_event::stopped);
  announce(2, 1000, announce_event::stopped);
  advance(seconds(130));
  EXPECT_EQ(dir->size(), 0u);
  announce(3, 1000, announce_event::started);
  pinned = ask<bool>(sup, policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned);
  EXPECT_FALSE(*pinned);
}

TEST_F(DormantSwarms, APinGoesWithASleepingSwarmThatIsDropped) {
  // Pinned, asleep, and then dropped asleep when its peer times out (peer
  // timeout 150 s, idle lifetime 100 s): the pin is not kept for the
  // hash (the holds of the state file do not name it), so a later swarm of
  // another history starts unpinned.
  announce(1, 1000, announce_event::started);
  const caf::actor sup = dir->supervisor();
  auto changed =
      ask<policy_change>(sup, policy_atom::value, caf::put_atom::value, h, std::string("random"));
  ASSERT_TRUE(changed) << sys->render(changed.error());
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  auto holds = ask<supervisor_holds>(sup, holds_atom::value, caf::get_atom::value);
  ASSERT_TRUE(holds);
  ASSERT_EQ(holds->pinned.size(), 1u) << "kept while it sleeps";
  advance(seconds(260));
  ASSERT_EQ(dir->size(), 0u) << "dropped asleep";
  EXPECT_EQ(dir->totals().woken.load(), 0u);
  holds = ask<supervisor_holds>(sup, holds_atom::value, caf::get_atom::value);
  ASSERT_TRUE(holds);
  EXPECT_TRUE(holds->pinned.empty()) << "the pin outlived its swarm";
  auto pinned = ask<bool>(sup, policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned);
  EXPECT_FALSE(*pinned);
  // The same through an operator's end of the sleeping swarm.
  announce(2, 1000, announce_event::started);
  changed =
      ask<policy_change>(sup, policy_atom::value, caf::put_atom::value, h, std::string("random"));
  ASSERT_TRUE(changed);
  advance(seconds(45));
  ASSERT_EQ(dormant(), 1);
  ASSERT_TRUE(dir->end_swarm(h));
  run();
  holds = ask<supervisor_holds>(sup, holds_atom::value, caf::get_atom::value);
  ASSERT_TRUE(holds);
  EXPECT_TRUE(holds->pinned.empty());
}

TEST_F(DormantSwarms, NoSleepWithHibernateAfterZero) {
  auto cfg = sleepy_config();
  cfg.hibernate_after = seconds(0);
  dir->stop_all();
  run();
  dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
  announce(1, 1000, announce_event::started);
  advance(seconds(120));
  EXPECT_EQ(dormant(), 0);
  EXPECT_EQ(dir->totals().hibernated.load(), 0u);
}

// On the real scheduler: threads announce to a few hashes with pauses long
// enough for swarms to fall asleep between their announces, so sleeps and
// wakes race with announces on other threads. Every announce is answered
// (after at most one route again, as the gateway does), and afterwards every
// swarm holds every peer exactly once in its table, the census and the
// gauges.
TEST(DormantSwarmsConcurrency, SleepsAndWakesRacingAnnouncesLoseNoPeerAndCountNoneTwice) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  register_message_types(cfg);
  caf::actor_system sys{cfg};
  {
    auto sc = test::short_config(5);
    sc.sweep_period = seconds(1);
    sc.hibernate_after = seconds(1);
    swarm_directory dir(sys, sc, 4);
    dir.start_supervisor(supervisor_config{});
    constexpr int threads = 4;
    constexpr int hashes = 12;
    constexpr int rounds = 5;
    std::atomic<int> unanswered{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(t) + 1);
        for (int round = 0; round < rounds; ++round) {
          for (int i = 0; i < hashes; ++i) {
            // Half the hashes rest 1.6 s between rounds (asleep by then),
            // the others are announced to again at once by some thread.
            const auto h = test::ih(0x70, static_cast<std::uint8_t>(i));
            const auto a = test::swarm_announce_of(
                h, static_cast<std::uint64_t>(t * 1000 + i),
                v4(10, 1, static_cast<std::uint8_t>(t), static_cast<std::uint8_t>(i), 6881), 1000,
                round == 0 ? announce_event::started : announce_event::none);
            auto r = test::announce_and_wait(dir.route_swarm(h), a);
            if (!r && r.error() == caf::sec::request_receiver_down)
              r = test::announce_and_wait(dir.route_swarm(h), a);
            if (!r) unanswered.fetch_add(1);
            if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(t % 2 == 0 ? 1600 : 200));
        }
      });
    }
    for (auto& th : pool) th.join();
    EXPECT_EQ(unanswered.load(), 0);
    EXPECT_GT(dir.totals().hibernated.load(), 0u) << "nothing fell asleep: the test tests nothing";
    EXPECT_GT(dir.totals().woken.load(), 0u);
    EXPECT_EQ(dir.size(), static_cast<std::size_t>(hashes));
    for (int i = 0; i < hashes; ++i) {
      const auto h = test::ih(0x70, static_cast<std::uint8_t>(i));
      caf::scoped_actor self{sys};
      std::int64_t incomplete = -1;
      self->request(dir.find_swarm(h), std::chrono::seconds(10), status_atom::value)
          .receive([&](const swarm_status& st) { incomplete = st.stats.incomplete; },
                   [&](const caf::error& e) { ADD_FAILURE() << sys.render(e); });
      EXPECT_EQ(incomplete, threads) << "hash " << i;
    }
    // Asked: every swarm awake again (what sleeps keeps its share too).
    EXPECT_EQ(dir.census()->peers(), threads * hashes);
    EXPECT_EQ(dir.totals().leechers.load(), threads * hashes);
    EXPECT_EQ(dir.census()->swarms(), hashes);
    dir.stop_all();
  }
}

}  // namespace
}  // namespace sk
