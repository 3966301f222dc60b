// The supervisor, remediation and swarm actors together, behind a real
// swarm_directory, on CAF's deterministic test scheduler: crashes and
// restarts, the restart rate limit, a remediation from an unhealthy swarm
// to its end, an operator's pinned policy across remediations, and ending a
// swarm (what denying a live torrent does).

#include "runtime/supervisor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "runtime/directory.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::pid;
using test::v4;

/// Peer `peer` (10.0.hi.lo of its number, port 6881) announces `h`.
swarm_announce make(const info_hash& h, std::uint64_t peer, std::uint64_t left,
                    announce_event ev = announce_event::none) {
  return test::swarm_announce_of(
      h, peer,
      v4(10, 0, static_cast<std::uint8_t>(peer >> 8), static_cast<std::uint8_t>(peer), 6881), left,
      ev);
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
    sup = test::untyped(dir->start_supervisor(scfg));
    run();
  }

  announce_result announce(const swarm_announce& a) {
    auto swarm = dir->route_swarm(a.request.hash);
    run();
    auto r = test::announce_by_ticket(swarm, a, [this] { run(); });
    EXPECT_TRUE(r) << sys->render(r.error());
    return r ? *r : announce_result{};
  }

  swarm_stats scrape(const info_hash& h) {
    auto r = test::scrape_by_ticket(dir->find_swarm(h), [this] { run(); });
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

  /// Ten leechers and no seeder, none making progress: critical (no
  /// seeders, stalled leechers) and remediated once this returns.
  void starve(const info_hash& h) {
    for (int round = 0; round < 3; ++round) {
      for (std::uint64_t i = 1; i <= 10; ++i) {
        announce(make(h, i, 1000, round == 0 ? announce_event::started : announce_event::none));
      }
      advance(seconds(round < 2 ? 60 : 30));
    }
  }

  /// Seeders arrive and the leechers progress until the remediation of `h`
  /// (healthy_time 60 s) has ended.
  void recover(const info_hash& h) {
    std::uint64_t left = 1000;
    for (std::uint64_t s = 100; s < 105; ++s) {
      announce(make(h, s, 0, announce_event::started));
    }
    for (int round = 0; round < 5; ++round) {
      left -= 100;
      for (std::uint64_t i = 1; i <= 10; ++i) {
        announce(make(h, i, left));
      }
      for (std::uint64_t s = 100; s < 105; ++s) {
        announce(make(h, s, 0));
      }
      advance(seconds(60));
    }
  }

  caf::expected<policy_change> set_policy(const info_hash& h, const std::string& name) {
    return ask<policy_change>(sup, policy_atom::value, caf::put_atom::value, h, name);
  }

  bool pinned(const info_hash& h) {
    auto r = ask<bool>(sup, policy_atom::value, caf::get_atom::value, h);
    EXPECT_TRUE(r);
    return r && *r;
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
  auto current = ask<local_swarm_actor>(sup, caf::get_atom::value, h);
  ASSERT_TRUE(current);
  EXPECT_EQ(test::untyped(*current), restarted);
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
  auto current = ask<local_swarm_actor>(sup, caf::get_atom::value, h);
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
  announce(make(h, 1, 100, announce_event::started));  // lone leecher
  advance(seconds(30));
  auto st = status(h);
  ASSERT_TRUE(st.evaluated);
  // Below health.min-peers: not judged, so neither critical nor remediated.
  EXPECT_EQ(st.health.state, swarm_health::unevaluated);
  EXPECT_EQ(st.health.reasons, 0u);
  EXPECT_TRUE(remediating().empty());
  EXPECT_EQ(count_events("remediation-started"), 0u);
}

TEST_F(Supervision, APinnedPolicySurvivesARemediation) {
  start();
  const auto h = test::ih(0x56);
  announce(make(h, 1, 1000, announce_event::started));
  auto c = set_policy(h, "role-aware");
  ASSERT_TRUE(c) << sys->render(c.error());
  EXPECT_EQ(c->previous, "adaptive");
  EXPECT_EQ(c->policy, "role-aware");
  EXPECT_FALSE(c->was_pinned);
  EXPECT_TRUE(c->pinned);
  EXPECT_TRUE(pinned(h));

  starve(h);
  ASSERT_EQ(remediating(), std::vector<info_hash>{h});
  auto st = status(h);
  // The remediation works around the pin: its strategies turn other knobs
  // (stalled-boost shortens the leechers' interval), never the policy.
  EXPECT_EQ(st.knobs.policy, policy_kind::role_aware);
  EXPECT_LT(st.knobs.leecher_interval_scale, 1.0);

  recover(h);
  ASSERT_TRUE(remediating().empty()) << "the remediation ended";
  st = status(h);
  swarm_knobs expected = cfg.default_knobs();
  expected.policy = policy_kind::role_aware;
  EXPECT_EQ(st.knobs, expected) << "the operator's policy, not the config default, restored";
  EXPECT_TRUE(pinned(h));
  ASSERT_FALSE(st.history.empty());
  EXPECT_EQ(st.history.back().action, "end");
  EXPECT_NE(st.history.back().detail.find("role-aware"), std::string::npos)
      << st.history.back().detail;
}

TEST_F(Supervision, APolicyPinnedDuringARemediationAppliesAtOnceAndOutlivesIt) {
  start();
  const auto h = test::ih(0x57);
  starve(h);
  ASSERT_EQ(remediating(), std::vector<info_hash>{h});
  const auto during = status(h).knobs;
  ASSERT_NE(during.policy, policy_kind::random) << "a strategy's policy is in force";

  auto c = set_policy(h, "random");
  ASSERT_TRUE(c) << sys->render(c.error());
  EXPECT_EQ(c->previous, std::string(to_string(during.policy)));
  EXPECT_EQ(c->policy, "random");
  auto st = status(h);
  EXPECT_EQ(st.knobs.policy, policy_kind::random) << "applied at once";
  EXPECT_EQ(st.knobs.leecher_interval_scale, during.leecher_interval_scale)
      << "the remediation's other knobs stay";
  EXPECT_EQ(remediating(), std::vector<info_hash>{h});

  recover(h);
  ASSERT_TRUE(remediating().empty());
  swarm_knobs expected = cfg.default_knobs();
  expected.policy = policy_kind::random;
  EXPECT_EQ(status(h).knobs, expected);
  const auto ev = events();
  const bool logged = std::any_of(ev.begin(), ev.end(), [&](const supervisor_event& e) {
    return e.hash == h && e.kind == "operator-policy" &&
           e.detail.find("-> random") != std::string::npos;
  });
  EXPECT_TRUE(logged);
}

TEST_F(Supervision, DefaultUnpinsAndReturnsToTheConfiguredPolicy) {
  cfg.default_policy = policy_kind::seeder_rotation;
  start();
  const auto h = test::ih(0x58);
  announce(make(h, 1, 1000, announce_event::started));
  ASSERT_TRUE(set_policy(h, "role-aware"));
  EXPECT_EQ(status(h).knobs.policy, policy_kind::role_aware);

  auto c = set_policy(h, "default");
  ASSERT_TRUE(c) << sys->render(c.error());
  EXPECT_EQ(c->previous, "role-aware");
  EXPECT_EQ(c->policy, "seeder-rotation");
  EXPECT_TRUE(c->was_pinned);
  EXPECT_FALSE(c->pinned);
  EXPECT_FALSE(pinned(h));
  EXPECT_EQ(status(h).knobs.policy, policy_kind::seeder_rotation);

  // A remediation of an unpinned swarm may change the policy again, and
  // restores the config's at its end.
  starve(h);
  ASSERT_EQ(remediating(), std::vector<info_hash>{h});
  EXPECT_NE(status(h).knobs.policy, policy_kind::seeder_rotation);

  auto bad = set_policy(h, "nope");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), caf::sec::invalid_argument);
  auto unknown = set_policy(test::ih(0x59), "random");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error(), caf::sec::cannot_forward_to_invalid_actor);
}

TEST_F(Supervision, TheHoldsReadForTheStateFileNameEveryPinAndNothingElse) {
  start();
  const auto a = test::ih(0x5c), b = test::ih(0x5d), c = test::ih(0x5e), d = test::ih(0x5f);
  for (const auto& h : {a, b, c, d}) announce(make(h, 1, 1000, announce_event::started));
  ASSERT_TRUE(set_policy(a, "role-aware"));
  ASSERT_TRUE(set_policy(b, "seeder-rotation"));
  ASSERT_TRUE(set_policy(c, "role-aware"));
  ASSERT_TRUE(set_policy(c, "default"));  // unpinned again
  ASSERT_TRUE(set_policy(d, "role-aware"));
  ASSERT_TRUE(dir->end_swarm(d));  // its pin went with it
  run();
  auto pins = [&] {
    auto h = ask<supervisor_holds>(sup, holds_atom::value, caf::get_atom::value);
    EXPECT_TRUE(h);
    auto p = h ? h->pinned : decltype(h->pinned){};
    std::sort(p.begin(), p.end());
    return p;
  };
  using pin = std::pair<info_hash, std::string>;
  EXPECT_EQ(pins(), (std::vector<pin>{{a, "role-aware"}, {b, "seeder-rotation"}}));
  // Read twice: the first read dropped what was no longer pinned, nothing else.
  EXPECT_EQ(pins(), (std::vector<pin>{{a, "role-aware"}, {b, "seeder-rotation"}}));
  // Pinned again after being dropped from the read: named again.
  ASSERT_TRUE(set_policy(c, "seeder-rotation"));
  EXPECT_EQ(pins(), (std::vector<pin>{{a, "role-aware"}, {b, "seeder-rotation"},
                                      {c, "seeder-rotation"}}));
}

TEST_F(Supervision, AnOperatorStartBeforeTheFirstTickRecordsTheRealState) {
  start();
  const auto h = test::ih(0x5a);
  for (std::uint64_t i = 1; i <= 3; ++i) {
    announce(make(h, i, i == 1 ? 0 : 1000, announce_event::started));
  }
  auto r = ask<std::string>(sup, remediate_atom::value, start_atom::value, h);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "started");
  const auto st = status(h);
  EXPECT_FALSE(st.evaluated) << "no tick has run yet";
  ASSERT_FALSE(st.history.empty());
  const auto& first = st.history.front();
  EXPECT_EQ(first.action, "start");
  EXPECT_EQ(first.before.state, swarm_health::unevaluated);
  EXPECT_EQ(first.before.seeders, 1u);
  EXPECT_EQ(first.before.leechers, 2u);
}

TEST_F(Supervision, EndingASwarmDropsItsPeersAndItsRemediation) {
  start();
  const auto h = test::ih(0x5b);
  starve(h);
  ASSERT_EQ(remediating(), std::vector<info_hash>{h});
  auto swarm = dir->find(h);
  ASSERT_TRUE(swarm);
  watch(swarm);

  EXPECT_TRUE(dir->end_swarm(h));
  run();
  caf::error reason;
  ASSERT_TRUE(exited(swarm, &reason));
  EXPECT_EQ(reason, caf::exit_reason::user_shutdown);
  EXPECT_FALSE(dir->find(h)) << "the entry went with it";
  EXPECT_TRUE(remediating().empty()) << "no remediation runs for an ended swarm";
  EXPECT_EQ(count_events("restart"), 0u) << "an ended swarm is not restarted";
  auto current = ask<local_swarm_actor>(sup, caf::get_atom::value, h);
  ASSERT_TRUE(current);
  EXPECT_FALSE(*current);
  EXPECT_FALSE(dir->end_swarm(h)) << "nothing left to end";
  // No automatic remediation later either: time passes, nothing starts.
  const auto started = count_events("remediation-started");
  advance(seconds(120));
  EXPECT_EQ(count_events("remediation-started"), started);
}

TEST_F(Supervision, OperatorChangesAreRecordedAsEvents) {
  start();
  const auto h = test::ih(0x5c);
  announce(make(h, 1, 1000, announce_event::started));
  caf::anon_send(sup, events_atom::value, caf::put_atom::value,
                 supervisor_event{{}, h, "operator-access", "served -> refused (deny list)"});
  auto old_actor = dir->find(h);
  auto r = ask<std::string>(sup, restart_atom::value, h);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, "restarting");
  run();
  auto restarted = dir->find(h);
  ASSERT_TRUE(restarted);
  EXPECT_NE(restarted, old_actor);
  auto unknown = ask<std::string>(sup, restart_atom::value, test::ih(0x5d));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(*unknown, "unknown");
  const auto ev = events();
  bool access = false, restart = false;
  for (const auto& e : ev) {
    access = access || (e.kind == "operator-access" && e.hash == h &&
                        e.detail == "served -> refused (deny list)");
    restart = restart ||
              (e.kind == "restart" && e.hash == h &&
               e.detail.find("by an operator (actor " + std::to_string(old_actor.id()) + " -> " +
                             std::to_string(restarted.id()) + ")") != std::string::npos);
  }
  EXPECT_TRUE(access);
  EXPECT_TRUE(restart);
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
