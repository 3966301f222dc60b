// The swarm actor under CAF's deterministic scheduler.

#include "runtime/swarm_actor.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::compact;
using test::pid;
using test::v4;
using test::v6;

swarm_config short_config() { return test::short_config(1); }

/// `a` asking for a compact reply or not, and for `numwant` peers.
swarm_announce asking(swarm_announce a, bool compact_reply, std::int32_t numwant = -1) {
  a.request.compact = compact_reply;
  a.request.numwant = numwant;
  return a;
}

/// Records the erase calls a swarm makes when it ends.
struct recording_registry : swarm_registry {
  std::vector<std::pair<info_hash, caf::actor_addr>> calls;
  bool erase_if_owner(const info_hash& h, const caf::actor_addr& who) override {
    calls.emplace_back(h, who);
    return true;
  }
};

class SwarmActor : public test::caf_fixture {
 protected:
  const info_hash hash = test::ih(0x11);
  swarm_config cfg = short_config();

  caf::actor spawn(std::weak_ptr<swarm_registry> reg = {}) {
    auto a = track(test::untyped(spawn_swarm(*sys, hash, cfg, 42, std::move(reg))));
    run();
    return a;
  }

  announce_result announce(const caf::actor& swarm, const swarm_announce& a) {
    auto r = test::announce_by_ticket(swarm, a, [this] { run(); });
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : announce_result{};
  }

  swarm_stats scrape(const caf::actor& swarm) {
    auto r = test::scrape_by_ticket(swarm, [this] { run(); });
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : swarm_stats{};
  }
};

TEST_F(SwarmActor, AnnounceRepliesWithCountsIntervalsAndPeers) {
  // Re-announces here come at once: warn, never refuse (refusal is tested
  // in tests/runtime/supervision).
  cfg.behaviour.early_refuse_after = 0;
  auto swarm = spawn();
  const endpoint a_ep = v4(10, 0, 0, 1, 6881);
  const endpoint b_ep = v6(0, 2, 6882);
  auto r = announce(swarm, test::swarm_announce_of(hash, 1, a_ep, 100, announce_event::started));
  EXPECT_EQ(r.interval, 60);
  EXPECT_EQ(r.min_interval, 30);
  EXPECT_EQ(r.stats.complete, 0);
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_TRUE(r.peers4.empty());  // alone: never itself
  EXPECT_TRUE(r.peers6.empty());

  r = announce(swarm, test::swarm_announce_of(hash, 2, b_ep, 0, announce_event::started));
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_EQ(r.peers4, compact(a_ep));
  EXPECT_TRUE(r.peers6.empty());
  EXPECT_TRUE(r.peers.empty());

  // Compact request from A: B is IPv6, so it comes in peers6.
  r = announce(swarm, test::swarm_announce_of(hash, 1, a_ep, 100));
  EXPECT_TRUE(r.peers4.empty());
  EXPECT_EQ(r.peers6, compact(b_ep));

  // Non-compact: peers with ids.
  r = announce(swarm,
               asking(test::swarm_announce_of(hash, 1, a_ep, 50, announce_event::none), false));
  ASSERT_EQ(r.peers.size(), 1u);
  EXPECT_EQ(r.peers[0].id, pid(2));
  EXPECT_EQ(r.peers[0].ep, b_ep);
  EXPECT_TRUE(r.peers4.empty());

  // A completes: a seeder is never handed seeders (default adaptive policy).
  r = announce(swarm,
               asking(test::swarm_announce_of(hash, 1, a_ep, 0, announce_event::completed), false));
  EXPECT_TRUE(r.peers.empty());
  EXPECT_EQ(r.stats.complete, 2);
  EXPECT_EQ(r.stats.incomplete, 0);
  EXPECT_EQ(r.stats.downloaded, 1);
}

TEST_F(SwarmActor, NumwantIsHonouredAndCapped) {
  cfg.behaviour.early_refuse_after = 0;  // peer 0 re-announces at once
  cfg.max_numwant = 5;
  cfg.default_numwant = 3;
  auto swarm = spawn();
  for (std::uint8_t i = 0; i < 20; ++i) {
    announce(swarm,
             test::swarm_announce_of(hash, i, v4(10, 0, 0, i, 1), 1, announce_event::started));
  }
  auto peers_for = [&](std::int32_t numwant) {
    return announce(swarm, asking(test::swarm_announce_of(hash, 0, v4(10, 0, 0, 0, 1), 1,
                                                          announce_event::none),
                                  true, numwant))
               .peers4.size() /
           6;
  };
  EXPECT_EQ(peers_for(-1), 3u);
  EXPECT_EQ(peers_for(0), 0u);
  EXPECT_EQ(peers_for(4), 4u);
  EXPECT_EQ(peers_for(50), 5u);
}

TEST_F(SwarmActor, StoppedRemovesThePeerAndGetsNoPeers) {
  auto swarm = spawn();
  announce(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::started));
  announce(swarm, test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 5, announce_event::started));
  auto r = announce(
      swarm, test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 5, announce_event::stopped));
  EXPECT_TRUE(r.peers4.empty());
  EXPECT_EQ(r.stats.incomplete, 1);
  auto s = scrape(swarm);
  EXPECT_EQ(s.complete, 0);
  EXPECT_EQ(s.incomplete, 1);
}

TEST_F(SwarmActor, ScrapeReportsCounts) {
  auto swarm = spawn();
  auto s = scrape(swarm);
  EXPECT_EQ(s.complete, 0);
  EXPECT_EQ(s.incomplete, 0);
  EXPECT_EQ(s.downloaded, 0);
  announce(swarm,
           test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 0, announce_event::completed));
  announce(swarm, test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 9, announce_event::started));
  s = scrape(swarm);
  EXPECT_EQ(s.complete, 1);
  EXPECT_EQ(s.incomplete, 1);
  EXPECT_EQ(s.downloaded, 1);
}

TEST_F(SwarmActor, AnnounceForAnotherHashIsRefused) {
  auto swarm = spawn();
  auto r = test::announce_by_ticket(
      swarm, test::swarm_announce_of(test::ih(0x22), 1, v4(10, 0, 0, 1, 1), 5), [this] { run(); });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), caf::sec::invalid_argument) << "the ticket failed";
  EXPECT_EQ(scrape(swarm).incomplete, 0);
}

TEST_F(SwarmActor, ATicketToAnEndedSwarmIsDroppedUnread) {
  auto swarm = spawn();
  watch(swarm);
  caf::anon_send_exit(swarm, caf::exit_reason::user_shutdown);
  run();
  ASSERT_TRUE(exited(swarm));
  auto r = test::announce_by_ticket(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5),
                                    [this] { run(); });
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), caf::sec::request_receiver_down);
  auto s = test::scrape_by_ticket(swarm, [this] { run(); });
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error(), caf::sec::request_receiver_down);
}

TEST_F(SwarmActor, SweepTimerExpiresSilentPeers) {
  auto swarm = spawn();
  announce(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::started));
  advance(seconds(100));
  announce(swarm, test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 0, announce_event::started));
  EXPECT_EQ(scrape(swarm).incomplete, 1);
  // Peer 1 was seen at 0: gone once a sweep runs at or after 150 (sweeps at
  // 10 s steps, so by 160). Peer 2 (seen at 100) stays until 250..260.
  advance(seconds(45));  // t = 145
  EXPECT_EQ(scrape(swarm).incomplete, 1);
  advance(seconds(15));  // t = 160
  auto s = scrape(swarm);
  EXPECT_EQ(s.incomplete, 0);
  EXPECT_EQ(s.complete, 1);
  advance(seconds(100));  // t = 260
  EXPECT_EQ(scrape(swarm).complete, 0);
}

TEST_F(SwarmActor, SweepOfABigTableIsSplitButCompletes) {
  cfg.sweep_batch = 3;
  auto swarm = spawn();
  for (std::uint8_t i = 0; i < 50; ++i) {
    announce(swarm,
             test::swarm_announce_of(hash, i, v4(10, 0, 1, i, 1), 1, announce_event::started));
  }
  EXPECT_EQ(scrape(swarm).incomplete, 50);
  // One timer tick after the timeout: the continuation messages (17 batches
  // of at most 3) all run before the next tick.
  sched->advance_time(seconds(155));
  run();
  EXPECT_EQ(scrape(swarm).incomplete, 0);
  // The sweep chain is still alive: a new peer expires as well.
  announce(swarm,
           test::swarm_announce_of(hash, 99, v4(10, 0, 2, 1, 1), 1, announce_event::started));
  advance(seconds(170), seconds(10));
  EXPECT_EQ(scrape(swarm).incomplete, 0);
}

TEST_F(SwarmActor, IdleSwarmEndsAndLeavesItsRegistry) {
  auto reg = std::make_shared<recording_registry>();
  auto swarm = spawn(reg);
  watch(swarm);
  announce(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::started));
  advance(seconds(200));  // never empty long enough: the peer lives to 150
  EXPECT_FALSE(exited(swarm));
  // Emptied by expiry at 150; empty for 100 s by 250 (+ one sweep period).
  advance(seconds(45));  // t = 245
  EXPECT_FALSE(exited(swarm));
  EXPECT_TRUE(reg->calls.empty());
  advance(seconds(20));  // t = 265
  caf::error reason;
  EXPECT_TRUE(exited(swarm, &reason));
  EXPECT_EQ(reason, caf::exit_reason::normal);
  ASSERT_EQ(reg->calls.size(), 1u);
  EXPECT_EQ(reg->calls[0].first, hash);
  EXPECT_EQ(reg->calls[0].second, swarm.address());
}

TEST_F(SwarmActor, IdleSwarmWhoseRegistryIsGoneStillEnds) {
  auto reg = std::make_shared<recording_registry>();
  auto swarm = spawn(reg);
  watch(swarm);
  reg.reset();  // the directory went away first (held weakly)
  advance(seconds(115));
  EXPECT_TRUE(exited(swarm));
}

TEST_F(SwarmActor, StoppedLastPeerStartsTheIdleClockAndAnAnnounceStopsIt) {
  auto swarm = spawn();
  watch(swarm);
  announce(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::started));
  advance(seconds(10));
  announce(swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::stopped));
  advance(seconds(90));  // empty for 90 s
  // A new peer arrives just in time: the swarm lives on.
  announce(swarm, test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 5, announce_event::started));
  advance(seconds(100));
  EXPECT_FALSE(exited(swarm));
  EXPECT_EQ(scrape(swarm).incomplete, 1);
}

TEST_F(SwarmActor, SwarmNeverAnnouncedToEndsToo) {
  auto swarm = spawn();
  watch(swarm);
  advance(seconds(95));
  EXPECT_FALSE(exited(swarm));
  advance(seconds(20));
  EXPECT_TRUE(exited(swarm));
}

TEST_F(SwarmActor, SwarmCoreWithoutCaf) {
  // The announce logic is also callable without an actor (simulator, tests).
  swarm_core core(hash, cfg, 1);
  announce_result out;
  ASSERT_TRUE(core.announce(
      test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 0, announce_event::started), test::at(0),
      out));
  EXPECT_EQ(out.stats.complete, 1);
  EXPECT_EQ(out.interval, 60);
  announce_result other;
  EXPECT_FALSE(core.announce(test::swarm_announce_of(test::ih(9), 2, v4(10, 0, 0, 2, 1), 0),
                             test::at(0), other));
  EXPECT_EQ(core.table().size(), 1u);
}

TEST_F(SwarmActor, TicketAnnounceIsServedAndScratchIsReset) {
  struct ticket final : announce_ticket {
    using announce_ticket::announce_ticket;
    void complete(const announce_result& r) override { results.push_back(r); }
    void fail() override { ++failures; }
    std::vector<announce_result> results;
    int failures = 0;
  };
  auto swarm = spawn();
  auto t1 = std::make_shared<ticket>(
      test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 1), 5, announce_event::started));
  auto t2 = std::make_shared<ticket>(
      test::swarm_announce_of(hash, 2, v4(10, 0, 0, 2, 1), 5, announce_event::started));
  auto bad =
      std::make_shared<ticket>(test::swarm_announce_of(test::ih(9), 3, v4(10, 0, 0, 3, 1), 5));
  caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(t1));
  caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(t2));
  caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(bad));
  run();
  ASSERT_EQ(t1->results.size(), 1u);
  ASSERT_EQ(t2->results.size(), 1u);
  EXPECT_TRUE(t1->results[0].peers4.empty());
  EXPECT_EQ(t2->results[0].peers4, compact(v4(10, 0, 0, 1, 1)));
  EXPECT_EQ(t2->results[0].stats.incomplete, 2);
  EXPECT_EQ(bad->failures, 1);
  EXPECT_TRUE(bad->results.empty());
}

TEST_F(SwarmActor, PolicyAndKnobsCanBeReadAndSet) {
  auto swarm = spawn();
  auto p = ask<std::string>(swarm, policy_atom::value, caf::get_atom::value);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, "adaptive");
  auto prev =
      ask<std::string>(swarm, policy_atom::value, caf::put_atom::value, std::string("role-aware"));
  ASSERT_TRUE(prev);
  EXPECT_EQ(*prev, "adaptive");
  auto bad = ask<std::string>(swarm, policy_atom::value, caf::put_atom::value,
                              std::string("no-such-policy"));
  EXPECT_FALSE(bad);
  auto k = ask<swarm_knobs>(swarm, knobs_atom::value, caf::get_atom::value);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->policy, policy_kind::role_aware);
  // "default": the config's default policy.
  prev = ask<std::string>(swarm, policy_atom::value, caf::put_atom::value, std::string("default"));
  ASSERT_TRUE(prev);
  EXPECT_EQ(*prev, "role-aware");
  k = ask<swarm_knobs>(swarm, knobs_atom::value, caf::get_atom::value);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->policy, cfg.default_policy);
  ASSERT_TRUE(
      ask<std::string>(swarm, policy_atom::value, caf::put_atom::value, std::string("role-aware")));
  k = ask<swarm_knobs>(swarm, knobs_atom::value, caf::get_atom::value);
  ASSERT_TRUE(k);
  swarm_knobs next = *k;
  next.interval_scale = 9.0;  // out of range
  EXPECT_FALSE(ask<swarm_knobs>(swarm, knobs_atom::value, caf::put_atom::value, next));
  next.interval_scale = 2.0;
  next.seeder_warning = true;
  ASSERT_TRUE(ask<swarm_knobs>(swarm, knobs_atom::value, caf::put_atom::value, next));
  auto status = ask<swarm_status>(swarm, status_atom::value);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->knobs, next);
  EXPECT_FALSE(status->evaluated);
  EXPECT_EQ(status->hash, hash);
}

TEST_F(SwarmActor, HealthTickEvaluatesAndReportsToTheObserver) {
  cfg.health_tick = seconds(5);
  auto swarm = spawn();
  EXPECT_FALSE(ask<health_report>(swarm, health_atom::value, caf::get_atom::value));
  for (std::uint8_t i = 0; i < 6; ++i) {
    announce(swarm,
             test::swarm_announce_of(hash, i, v4(10, 0, 0, i, 1), 100, announce_event::started));
  }
  auto seen = std::make_shared<std::vector<health_report>>();
  auto observer = sys->spawn([seen](health_observer::pointer) -> health_observer::behavior_type {
    return {[seen](health_atom, const info_hash&, const health_report& r) { seen->push_back(r); }};
  });
  track(test::untyped(observer));
  caf::anon_send(swarm, observer_atom::value, observer);
  advance(seconds(5));
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ(seen->back().state, swarm_health::critical);
  auto r = ask<health_report>(swarm, health_atom::value, caf::get_atom::value);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->state, swarm_health::critical);  // leechers, no seeder
  EXPECT_NE(r->reasons & reason_no_seeders, 0u);
  EXPECT_EQ(r->leechers, 6u);
}

TEST_F(SwarmActor, CrashHookThrowsOnlyWhenEnabled) {
  auto quiet = spawn();
  watch(quiet);
  caf::anon_send(quiet, crash_atom::value);
  run();
  EXPECT_FALSE(exited(quiet));
  cfg.test_hooks = true;
  auto fragile = spawn();
  watch(fragile);
  caf::anon_send(fragile, crash_atom::value);
  run();
  caf::error reason;
  ASSERT_TRUE(exited(fragile, &reason));
  EXPECT_NE(reason, caf::exit_reason::normal);
}

}  // namespace
}  // namespace sk
