// The supervisor, remediation and swarm actors together, behind a real
// swarm_directory, on CAF's deterministic test scheduler: crashes and
// restarts, the restart rate limit, and a remediation from an unhealthy
// swarm to its end.

#include "actors/supervisor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "actors/directory.hpp"
#include "caf_fixture.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::pid;
using test::v4;

swarm_announce make(const info_hash& h, std::uint64_t peer, std::uint64_t left,
                    announce_event ev = announce_event::none) {
  swarm_announce a;
  a.request.hash = h;
  a.request.id = pid(peer);
  a.request.port = 6881;
  a.request.left = left;
  a.request.event = ev;
  a.request.compact = true;
  a.peer = v4(10, 0, static_cast<std::uint8_t>(peer >> 8), static_cast<std::uint8_t>(peer), 6881);
  return a;
}

class Supervision : public test::caf_fixture {
 protected:
  Supervision() {
    cfg.test_hooks = true;  // (crash_atom) throws
    cfg.health_tick = seconds(10);
    // Stalled after 2 announces without progress over at least 60 s.
    cfg.behaviour.stall_announces = 2;
    cfg.behaviour.stall_time = seconds(60);
    scfg.max_restarts = 2;
    scfg.restart_window = seconds(60);
    scfg.remediation_cfg.watch_ticks = 2;
    scfg.remediation_cfg.healthy_time = seconds(60);
  }
  ~Supervision() override {
    if (dir) {
      dir->stop_all();
    }
    run();
  }

  void start() {
    dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
    sup = dir->start_supervisor(scfg);
    run();
  }

  announce_result announce(const swarm_announce& a) {
    auto swarm = dir->route(a.request.hash);
    run();
    auto r = ask<announce_result>(swarm, announce_atom::value, a);
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : announce_result{};
  }

  swarm_stats scrape(const info_hash& h) {
    auto r = ask<swarm_stats>(dir->find(h), scrape_atom::value);
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : swarm_stats{};
  }

  swarm_status status(const info_hash& h) {
    auto r = ask<swarm_status>(dir->find(h), status_atom::value);
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : swarm_status{};
  }

  std::vector<supervisor_event> events() {
    auto r = ask<std::vector<supervisor_event>>(sup, events_atom::value);
    EXPECT_TRUE(r);
    return r ? *r : std::vector<supervisor_event>{};
  }

  std::size_t count_events(const std::string& kind) {
    const auto ev = events();
    return static_cast<std::size_t>(std::count_if(
        ev.begin(), ev.end(), [&](const supervisor_event& e) { return e.kind == kind; }));
  }

  std::vector<info_hash> remediating() {
    auto r = ask<std::vector<info_hash>>(sup, remediate_atom::value, caf::get_atom::value);
    EXPECT_TRUE(r);
    return r ? *r : std::vector<info_hash>{};
  }

  /// Crashes the current swarm of `h` and runs the system; returns the
  /// swarm that crashed.
  caf::actor crash(const info_hash& h) {
    auto swarm = dir->find(h);
    EXPECT_TRUE(swarm);
    watch(swarm);
    caf::anon_send(swarm, crash_atom::value);
    run();
    caf::error reason;
    EXPECT_TRUE(exited(swarm, &reason));
    EXPECT_NE(reason, caf::exit_reason::normal);
    return swarm;
  }

  swarm_config cfg = test::short_config(3);
  supervisor_config scfg;
  std::unique_ptr<swarm_directory> dir;
  caf::actor sup;
};

TEST_F(Supervision, KillingASwarmActorLosesNoneOfItsPeers) {
  start();
  const auto h = test::ih(0x51);
  constexpr std::uint64_t n = 20;
  for (std::uint64_t i = 1; i <= n; ++i) {
    announce(make(h, i, i % 5 == 0 ? 0 : 100, announce_event::started));
  }
  ASSERT_TRUE(ask<std::string>(dir->find(h), policy_atom::value, caf::put_atom::value,
                               std::string("seeder-rotation")));
  const auto before = scrape(h);
  const auto dead = crash(h);

  const auto restarted = dir->find(h);
  ASSERT_TRUE(restarted) << "the directory points at the restarted swarm";
  EXPECT_NE(restarted, dead);
  const auto after = scrape(h);
  EXPECT_EQ(after.complete, before.complete);
  EXPECT_EQ(after.incomplete, before.incomplete);
  EXPECT_EQ(after.complete + after.incomplete, static_cast<std::int64_t>(n));
  // The next announce is served as if nothing happened: same peers, same
  // knobs, the known peer is updated rather than added.
  auto r = announce(make(h, 3, 50));
  EXPECT_TRUE(r.failure_reason.empty());
  EXPECT_EQ(r.stats.complete + r.stats.incomplete, static_cast<std::int64_t>(n));
  EXPECT_FALSE(r.peers4.empty());
  auto p = ask<std::string>(restarted, policy_atom::value, caf::get_atom::value);
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, "seeder-rotation");
  r = announce(make(h, n + 1, 100, announce_event::started));
  EXPECT_EQ(r.stats.complete + r.stats.incomplete, static_cast<std::int64_t>(n + 1));
  EXPECT_EQ(count_events("restart"), 1u);
  // The supervisor knows the new actor.
  auto current = ask<caf::actor>(sup, caf::get_atom::value, h);
  ASSERT_TRUE(current);
  EXPECT_EQ(*current, restarted);
}

TEST_F(Supervision, RepeatedCrashesAreRateLimitedAndReported) {
  start();
  const auto h = test::ih(0x52);
  for (std::uint64_t i = 1; i <= 5; ++i) {
    announce(make(h, i, 100, announce_event::started));
  }
  crash(h);
  crash(h);
  EXPECT_EQ(count_events("restart"), 2u);
  EXPECT_EQ(scrape(h).incomplete, 5);
  // Third crash within the window: left down and reported.
  crash(h);
  EXPECT_EQ(count_events("give-up"), 1u);
  EXPECT_EQ(count_events("restart"), 2u);
  EXPECT_FALSE(dir->find(h)) << "the dead entry is gone, so the hash can be served again";
  // The next announce gets a fresh, empty swarm.
  auto r = announce(make(h, 9, 100, announce_event::started));
  EXPECT_EQ(r.stats.incomplete, 1);
  // Still within the window: a crash of the fresh swarm is not restarted ...
  crash(h);
  EXPECT_EQ(count_events("give-up"), 2u);
  // ... but once the window has passed, crashes are restarted again.
  announce(make(h, 10, 100, announce_event::started));
  advance(seconds(61), seconds(61));
  announce(make(h, 10, 100));
  crash(h);
  EXPECT_EQ(count_events("restart"), 3u);
  EXPECT_EQ(scrape(h).incomplete, 1);
}

TEST_F(Supervision, SwarmsThatEndOnPurposeAreNotRestarted) {
  start();
  const auto h = test::ih(0x53);
  auto swarm = dir->route(h);
  run();
  watch(swarm);
  advance(seconds(120));  // never announced: idle after 100 s (+ a sweep)
  caf::error reason;
  ASSERT_TRUE(exited(swarm, &reason));
  EXPECT_EQ(reason, caf::exit_reason::normal);
  EXPECT_FALSE(dir->find(h));
  EXPECT_EQ(count_events("restart"), 0u);
  auto current = ask<caf::actor>(sup, caf::get_atom::value, h);
  ASSERT_TRUE(current);
  EXPECT_FALSE(*current);
}

TEST_F(Supervision, AStarvingSwarmIsRemediatedUntilItRecovers) {
  start();
  const auto h = test::ih(0x54);
  const auto defaults = cfg.default_knobs();
  constexpr std::uint64_t leechers = 10;
  std::uint64_t left = 1000;
  auto leechers_announce = [&](announce_event ev = announce_event::none) {
    for (std::uint64_t i = 1; i <= leechers; ++i) {
      announce(make(h, i, left, ev));
    }
  };
  // No seeders, and the leechers make no progress: stalled after two more
  // announces over 60 s or more.
  leechers_announce(announce_event::started);
  advance(seconds(60));
  leechers_announce();
  advance(seconds(60));
  leechers_announce();
  advance(seconds(30));
  auto st = status(h);
  ASSERT_TRUE(st.evaluated);
  EXPECT_EQ(st.health.state, swarm_health::critical);
  EXPECT_NE(st.health.reasons & reason_no_seeders, 0u);
  EXPECT_NE(st.health.reasons & reason_stalled_leechers, 0u)
      << reasons_to_string(st.health.reasons);
  EXPECT_EQ(st.health.stalled, leechers);

  // One remediation actor, whatever the number of reports since.
  EXPECT_EQ(remediating(), std::vector<info_hash>{h});
  EXPECT_EQ(count_events("remediation-started"), 1u);
  EXPECT_GE(count_events("health"), 2u) << "no-seeders first, then stalled leechers too";
  ASSERT_FALSE(st.history.empty());
  EXPECT_EQ(st.history.front().action, "start");
  const bool applied = std::any_of(st.history.begin(), st.history.end(), [](const auto& r) {
    return (r.action == "apply" || r.action == "escalate") && !r.strategy.empty();
  });
  EXPECT_TRUE(applied);
  EXPECT_NE(st.knobs, defaults) << "a strategy is in force";

  // The swarm actor crashes mid-remediation: restarted, the remediation
  // follows the new actor.
  crash(h);
  EXPECT_EQ(remediating(), std::vector<info_hash>{h});

  // Recovery: seeders arrive, leechers progress.
  for (std::uint64_t s = 100; s < 105; ++s) {
    announce(make(h, s, 0, announce_event::started));
  }
  for (int round = 0; round < 5; ++round) {
    left -= 100;
    leechers_announce();
    for (std::uint64_t s = 100; s < 105; ++s) {
      announce(make(h, s, 0));
    }
    advance(seconds(60));
  }
  st = status(h);
  EXPECT_EQ(st.health.state, swarm_health::healthy) << reasons_to_string(st.health.reasons);
  EXPECT_TRUE(remediating().empty()) << "the remediation ended";
  EXPECT_EQ(count_events("remediation-ended"), 1u);
  EXPECT_EQ(count_events("remediation-started"), 1u);
  EXPECT_EQ(st.knobs, defaults) << "defaults restored";
  ASSERT_FALSE(st.history.empty());
  EXPECT_EQ(st.history.back().action, "end");
  EXPECT_EQ(st.history.back().after.state, swarm_health::healthy);
  EXPECT_EQ(st.history.front().action, "start") << "the history survived the restart";
}

TEST_F(Supervision, SmallOrHealthySwarmsGetNoRemediation) {
  start();
  const auto h = test::ih(0x55);
  announce(make(h, 1, 100, announce_event::started));  // lone leecher: no-seeders
  advance(seconds(30));
  auto st = status(h);
  EXPECT_EQ(st.health.state, swarm_health::critical);
  EXPECT_TRUE(remediating().empty());
  EXPECT_EQ(count_events("remediation-started"), 0u);
}

TEST(SupervisorConfig, DefaultsAreValidAndBadValuesNamed) {
  EXPECT_EQ(supervisor_config{}.validate(), "");
  supervisor_config c;
  c.max_restarts = 0;
  EXPECT_NE(c.validate().find("max restarts"), std::string::npos);
  c = {};
  c.restart_window = seconds(0);
  EXPECT_NE(c.validate().find("restart window"), std::string::npos);
  c = {};
  c.remediation_cfg.watch_ticks = 0;
  EXPECT_NE(c.validate().find("watch ticks"), std::string::npos);
}

TEST(SupervisorRecovery, ACoreWhoseInvariantsHoldIsReused) {
  auto core = std::make_shared<swarm_core>(test::ih(1), test::short_config(1), 1);
  bool fresh = true;
  EXPECT_EQ(recover_core(core, fresh), core);
  EXPECT_FALSE(fresh);
  EXPECT_EQ(recover_core(nullptr, fresh), nullptr);
}

TEST(SupervisorRecovery, ABrokenCoreIsReplacedByAnEmptyOne) {
  auto core = std::make_shared<swarm_core>(test::ih(1), test::short_config(1), 1);
  announce_result out;
  ASSERT_TRUE(core->announce(make(test::ih(1), 1, 100, announce_event::started), test::at(0), out));
  core->set_policy(static_cast<policy_kind>(200));  // corrupt: no such policy
  EXPECT_FALSE(core->check_invariants());
  bool fresh = false;
  auto recovered = recover_core(core, fresh);
  EXPECT_TRUE(fresh);
  ASSERT_NE(recovered, core);
  EXPECT_TRUE(recovered->check_invariants());
  EXPECT_EQ(recovered->hash(), core->hash());
  EXPECT_EQ(recovered->table().size(), 0u);
  EXPECT_EQ(recovered->policy(), policy_kind::adaptive);
}

}  // namespace
}  // namespace sk
