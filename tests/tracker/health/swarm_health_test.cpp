#include "tracker/swarm_health.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace sk {
namespace {

using namespace std::chrono_literals;

const health_time t0 = health_time{} + 1000h;

/// A census of `seeders` seeders and `leechers` leechers, `stalled` of the
/// leechers stalled.
health_sample census(std::uint64_t seeders, std::uint64_t leechers, std::uint64_t stalled = 0) {
  health_sample s;
  peer_traits seeder;
  seeder.progress = 1.0f;
  for (std::uint64_t i = 0; i < seeders; ++i) s.add(seeder, true);
  for (std::uint64_t i = 0; i < leechers; ++i) {
    peer_traits l;
    l.left = 100;
    l.progress = 0.5f;
    if (i < stalled) l.set(flag_stalled);
    s.add(l, false);
  }
  return s;
}

std::string reasons(const health_report& r) { return reasons_to_string(r.reasons); }

// --- classification ---------------------------------------------------------------

TEST(SwarmHealth, WellSeededSwarmIsHealthy) {
  swarm_health_tracker h;
  const auto& r = h.evaluate(census(20, 30), t0);
  EXPECT_EQ(r.state, swarm_health::healthy);
  EXPECT_EQ(r.reasons, 0u);
  EXPECT_EQ(r.seeders, 20u);
  EXPECT_EQ(r.leechers, 30u);
  EXPECT_EQ(r.at, t0);
  EXPECT_FALSE(h.changed());  // healthy from the start: nothing to report
}

TEST(SwarmHealth, SmallSwarmsAreUnevaluatedAndSeedOnlySwarmsHealthy) {
  swarm_health_tracker h;
  EXPECT_EQ(h.state(), swarm_health::unevaluated);  // before any tick
  EXPECT_EQ(h.evaluate(census(0, 0), t0).state, swarm_health::unevaluated);
  EXPECT_EQ(h.evaluate(census(3, 0), t0 + 1min).state, swarm_health::unevaluated);
  EXPECT_FALSE(h.changed());
  EXPECT_EQ(h.evaluate(census(300, 0), t0 + 2min).state, swarm_health::healthy);
  EXPECT_FALSE(h.changed());  // unevaluated -> healthy asks nothing of anyone
}

TEST(SwarmHealth, NoSeedersIsCriticalFromMinPeersOn) {
  // Below min_peers (5) a swarm without seeders is a dead torrent nobody can
  // heal: unevaluated, no reason, nothing reported.
  for (std::uint64_t leechers : {1u, 3u, 4u}) {
    swarm_health_tracker h;
    const auto& r = h.evaluate(census(0, leechers), t0);
    EXPECT_EQ(r.state, swarm_health::unevaluated) << leechers;
    EXPECT_EQ(r.reasons, 0u) << leechers;
    EXPECT_FALSE(h.changed()) << leechers;
  }
  for (std::uint64_t leechers : {5u, 50u}) {
    swarm_health_tracker h;
    const auto& r = h.evaluate(census(0, leechers), t0);
    EXPECT_EQ(r.state, swarm_health::critical) << leechers;
    EXPECT_EQ(reasons(r), "no-seeders") << leechers;
    EXPECT_TRUE(h.changed());
  }
}

TEST(SwarmHealth, ShrinkingBelowMinPeersIsUnevaluatedAtOnceAndReported) {
  swarm_health_tracker h;
  h.evaluate(census(0, 10), t0);
  ASSERT_EQ(h.state(), swarm_health::critical);
  const auto& r = h.evaluate(census(0, 2), t0 + 1min);
  EXPECT_EQ(r.state, swarm_health::unevaluated);  // no hysteresis: a fact
  EXPECT_EQ(r.reasons, 0u);
  EXPECT_TRUE(h.changed());  // the supervisor ends what it started
  // Growing again is judged afresh, without the old streaks.
  EXPECT_EQ(h.evaluate(census(10, 10), t0 + 2min).state, swarm_health::healthy);
}

TEST(SwarmHealth, PartialSeedsAreNeitherLeechersNorStalled) {
  // 3 seeders and 7 partial seeds (BEP 21 event=paused), every partial seed
  // long without progress: a healthy swarm, not a critical one.
  health_sample s = census(3, 0);
  for (int i = 0; i < 7; ++i) {
    peer_traits t;
    t.left = 100;
    t.progress = 0.4f;
    t.set(flag_partial_seed);
    s.add(t, false);
  }
  EXPECT_EQ(s.peers(), 10u);
  EXPECT_EQ(s.leechers(), 0u);
  EXPECT_EQ(s.partial_seeds(), 7u);
  EXPECT_EQ(s.stalled(), 0u);
  EXPECT_TRUE(s.progress_values().empty());
  swarm_health_tracker h;
  const auto& r = h.evaluate(s, t0);
  EXPECT_EQ(r.state, swarm_health::healthy);
  EXPECT_EQ(r.reasons, 0u);
  EXPECT_EQ(r.partial_seeds, 7u);
  EXPECT_EQ(r.leechers, 0u);
  // Only partial seeds, no seeder: nobody downloads, so nothing is missing.
  health_sample only;
  for (int i = 0; i < 6; ++i) {
    peer_traits t;
    t.left = 100;
    t.set(flag_partial_seed);
    only.add(t, false);
  }
  swarm_health_tracker h2;
  EXPECT_EQ(h2.evaluate(only, t0).state, swarm_health::healthy);
}

TEST(SwarmHealth, PartialSeedsAreNotArrivals) {
  swarm_health_tracker h;
  peer_traits t;
  t.left = 100;
  t.set(flag_partial_seed);
  for (int i = 0; i < 30; ++i) h.on_announce(t, true, false, t0);
  EXPECT_EQ(h.totals(t0).arrivals, 0u);
  peer_traits l;
  l.left = 100;
  h.on_announce(l, true, false, t0);
  EXPECT_EQ(h.totals(t0).arrivals, 1u);
}

TEST(SwarmHealth, FewSeedersIsDegraded) {
  swarm_health_tracker h;
  const auto& r = h.evaluate(census(2, 40), t0);  // 0.05 < 0.1
  EXPECT_EQ(r.state, swarm_health::degraded);
  EXPECT_EQ(reasons(r), "few-seeders");
  swarm_health_tracker ok;
  EXPECT_EQ(ok.evaluate(census(4, 40), t0).state, swarm_health::healthy);  // exactly 0.1
}

TEST(SwarmHealth, TinySwarmsAreNotJudged) {
  // 4 peers (below min_peers 5): 1 seeder, 3 leechers all stalled.
  swarm_health_tracker h;
  EXPECT_EQ(h.evaluate(census(1, 3, 3), t0).state, swarm_health::unevaluated);
  EXPECT_EQ(h.raw_reasons(), 0u);
}

TEST(SwarmHealth, StalledLeechersDegradedThenCritical) {
  swarm_health_tracker h;
  auto r = h.evaluate(census(10, 20, 4), t0);  // 20 %
  EXPECT_EQ(r.state, swarm_health::healthy);
  EXPECT_EQ(r.stalled, 4u);

  swarm_health_tracker d;
  r = d.evaluate(census(10, 20, 5), t0);  // 25 %
  EXPECT_EQ(r.state, swarm_health::degraded);
  EXPECT_EQ(reasons(r), "stalled-leechers");

  swarm_health_tracker c;
  r = c.evaluate(census(10, 20, 10), t0);  // 50 %
  EXPECT_EQ(r.state, swarm_health::critical);
  EXPECT_EQ(reasons(r), "stalled-leechers");
}

TEST(SwarmHealth, StalledThresholdsAreConfigurable) {
  health_config cfg;
  cfg.stalled_fraction_degraded = 0.1;
  cfg.stalled_fraction_critical = 0.2;
  swarm_health_tracker h(cfg);
  EXPECT_EQ(h.evaluate(census(10, 20, 4), t0).state, swarm_health::critical);
}

TEST(SwarmHealth, NoSeedersAndManyStalledHasBothReasons) {
  swarm_health_tracker h;
  const auto& r = h.evaluate(census(0, 20, 15), t0);
  EXPECT_EQ(r.state, swarm_health::critical);
  EXPECT_EQ(reasons(r), "no-seeders,stalled-leechers");
}

/// A seeder that completed at `completed` (relative to t0).
peer_traits completer(std::chrono::seconds completed) {
  peer_traits t;
  t.completed_at = t0 + completed;
  return t;
}

TEST(SwarmHealth, SeedersLeavingEarly) {
  swarm_health_tracker h;
  // Four completers leave within 10 min of completing.
  for (int i = 0; i < 4; ++i) {
    h.on_completed(t0 + std::chrono::minutes(i));
    h.on_peer_left(completer(std::chrono::minutes(i)), true, t0 + std::chrono::minutes(i + 5));
  }
  const auto& r = h.evaluate(census(5, 20), t0 + 10min);
  EXPECT_EQ(reasons(r), "seeders-leave-early");
  EXPECT_EQ(r.state, swarm_health::degraded);
  EXPECT_EQ(h.totals(t0 + 10min).early_departures, 4u);
  // One that seeded for an hour; by then the early ones left the window.
  h.on_peer_left(completer(0s), true, t0 + 60min);
  EXPECT_EQ(h.totals(t0 + 60min).completed_departures, 1u);
  EXPECT_EQ(h.totals(t0 + 60min).early_departures, 0u);
}

TEST(SwarmHealth, SeedersLeavingLateAreFine) {
  swarm_health_tracker h;
  for (int i = 0; i < 6; ++i) {
    h.on_peer_left(completer(0s), true, t0 + 11min + std::chrono::seconds(i));
  }
  // A leecher leaving, or a seeder that never completed here, is no departure.
  h.on_peer_left(peer_traits{}, true, t0 + 12min);
  h.on_peer_left(completer(12min), false, t0 + 12min);
  EXPECT_EQ(h.totals(t0 + 12min).completed_departures, 6u);
  EXPECT_EQ(h.totals(t0 + 12min).early_departures, 0u);
  EXPECT_EQ(h.evaluate(census(10, 10), t0 + 12min).state, swarm_health::healthy);
}

TEST(SwarmHealth, EarlyLeaversNeedEnoughDepartures) {
  swarm_health_tracker h;
  h.on_peer_left(completer(0s), true, t0 + 1min);
  h.on_peer_left(completer(0s), true, t0 + 2min);
  EXPECT_EQ(h.evaluate(census(5, 20), t0 + 3min).state, swarm_health::healthy);
  h.on_peer_left(completer(0s), true, t0 + 3min);
  EXPECT_EQ(reasons(h.evaluate(census(5, 20), t0 + 4min)), "seeders-leave-early");
}

TEST(SwarmHealth, EarlyLeaversHarmNobodyInAWellSeededSwarm) {
  // 17 seeders for 4 downloaders (bench/sim's partial-seeds swarm): however
  // soon completers leave, nobody lacks a seeder.
  for (auto [seeders, leechers] : {std::pair<int, int>{17, 4}, {10, 10}}) {
    swarm_health_tracker h;
    for (int i = 0; i < 6; ++i) h.on_peer_left(completer(0s), true, t0 + 1min);
    const auto& r = h.evaluate(census(seeders, leechers), t0 + 2min);
    EXPECT_EQ(r.state, swarm_health::healthy) << seeders << "/" << leechers;
    EXPECT_EQ(r.reasons, 0u) << reasons(r);
  }
}

/// `n` new leechers announcing, spread over `span` from `from`.
void arrive(swarm_health_tracker& h, int n, health_time from, std::chrono::seconds span) {
  peer_traits l;
  l.left = 1000;
  for (int i = 0; i < n; ++i) {
    h.on_announce(l, true, false, from + span * i / n);
  }
}

TEST(SwarmHealth, FlashCrowd) {
  swarm_health_tracker h;
  arrive(h, 40, t0, 10min);
  EXPECT_EQ(h.totals(t0 + 10min).arrivals, 40u);
  const auto& r = h.evaluate(census(1, 40), t0 + 10min);
  EXPECT_EQ(r.state, swarm_health::degraded);
  EXPECT_EQ(reasons(r), "few-seeders,flash-crowd");
}

TEST(SwarmHealth, ArrivalsWithEnoughSeedersAreNoFlashCrowd) {
  swarm_health_tracker h;
  arrive(h, 40, t0, 10min);
  EXPECT_EQ(h.evaluate(census(10, 40), t0 + 10min).state, swarm_health::healthy);
  // Many arrivals per seeder, but the seeders are not few (6 for 20).
  swarm_health_tracker busy;
  arrive(busy, 70, t0, 10min);
  EXPECT_EQ(busy.evaluate(census(6, 20), t0 + 10min).state, swarm_health::healthy);
}

TEST(SwarmHealth, ArrivalsSpreadBeyondTheWindowAreNoFlashCrowd) {
  swarm_health_tracker h;
  arrive(h, 40, t0, 4h);           // 5 per 30 min
  h.on_completed(t0 + 4h - 1min);  // (not a low completion rate either)
  const auto& r = h.evaluate(census(1, 40), t0 + 4h);
  EXPECT_EQ(reasons(r), "few-seeders");
}

TEST(SwarmHealth, ReturningPeersAndSeedersAreNoArrivals) {
  swarm_health_tracker h;
  peer_traits l;
  for (int i = 0; i < 30; ++i) {
    h.on_announce(l, false, false, t0 + std::chrono::seconds(i));  // known leecher
    h.on_announce(l, true, true, t0 + std::chrono::seconds(i));    // new seeder
  }
  EXPECT_EQ(h.totals(t0 + 1min).arrivals, 0u);
  EXPECT_EQ(h.totals(t0 + 1min).announces, 60u);
}

TEST(SwarmHealth, LowCompletionRate) {
  swarm_health_tracker h;
  h.evaluate(census(10, 25), t0);
  // Not judged before a whole window was watched.
  EXPECT_EQ(h.evaluate(census(10, 25), t0 + 29min).state, swarm_health::healthy);
  const auto& r = h.evaluate(census(10, 25), t0 + 30min);
  EXPECT_EQ(reasons(r), "low-completion-rate");
  EXPECT_EQ(r.state, swarm_health::degraded);
}

TEST(SwarmHealth, OneCompletionInTheWindowIsEnough) {
  swarm_health_tracker h;
  h.evaluate(census(10, 25), t0);
  h.on_completed(t0 + 20min);
  EXPECT_EQ(h.evaluate(census(10, 25), t0 + 40min).state, swarm_health::healthy);
  // ... until it leaves the window.
  EXPECT_EQ(reasons(h.evaluate(census(10, 25), t0 + 51min)), "low-completion-rate");
}

TEST(SwarmHealth, FewLeechersWithoutCompletionsAreFine) {
  swarm_health_tracker h;
  h.evaluate(census(10, 19), t0);
  EXPECT_EQ(h.evaluate(census(10, 19), t0 + 2h).state, swarm_health::healthy);
}

TEST(SwarmHealth, AbusiveClients) {
  health_sample s = census(5, 3);
  peer_traits warned;
  warned.set(flag_warned);
  peer_traits struck;
  struck.strikes = 1;
  s.add(warned, false);
  s.add(struck, true);
  EXPECT_EQ(s.abusive(), 2u);
  swarm_health_tracker h;
  const auto& r = h.evaluate(s, t0);  // 2 of 10
  EXPECT_EQ(reasons(r), "abusive-clients");
  EXPECT_EQ(r.state, swarm_health::degraded);

  swarm_health_tracker fine;
  EXPECT_EQ(fine.evaluate(census(20, 20), t0).state, swarm_health::healthy);
}

TEST(SwarmHealth, UnreachablePeers) {
  health_sample s = census(10, 10);
  EXPECT_EQ(s.reachable() + s.unreachable(), 0u);  // probes off: not judged
  for (int i = 0; i < 3; ++i) {
    peer_traits t;
    t.set(flag_unreachable);
    s.add(t, false);
  }
  for (int i = 0; i < 3; ++i) {
    peer_traits t;
    t.set(flag_reachable);
    s.add(t, false);
  }
  swarm_health_tracker h;
  EXPECT_EQ(reasons(h.evaluate(s, t0)), "unreachable-peers");
}

TEST(SwarmHealth, QuarantinedAreCounted) {
  health_sample s = census(10, 10);
  peer_traits q;
  q.set(flag_quarantined);
  q.strikes = 3;
  s.add(q, false);
  swarm_health_tracker h;
  EXPECT_EQ(h.evaluate(s, t0).quarantined, 1u);
}

// --- hysteresis -----------------------------------------------------------------

TEST(SwarmHealth, WorseAtOnceBetterAfterConsecutiveEvaluations) {
  swarm_health_tracker h;
  EXPECT_EQ(h.evaluate(census(0, 10), t0).state, swarm_health::critical);
  EXPECT_TRUE(h.changed());
  // Seeders are back: the rules say healthy, the report waits for 3 in a row.
  for (int i = 1; i <= 2; ++i) {
    const auto& r = h.evaluate(census(10, 10), t0 + std::chrono::minutes(i));
    EXPECT_EQ(r.state, swarm_health::critical) << i;
    EXPECT_EQ(reasons(r), "no-seeders") << i;  // the reason lingers as long
    EXPECT_EQ(h.raw_state(), swarm_health::healthy);
    EXPECT_EQ(h.raw_reasons(), 0u);
    EXPECT_FALSE(h.changed());
  }
  const auto& r = h.evaluate(census(10, 10), t0 + 3min);
  EXPECT_EQ(r.state, swarm_health::healthy);
  EXPECT_EQ(r.reasons, 0u);
  EXPECT_TRUE(h.changed());
}

TEST(SwarmHealth, FlappingDoesNotRecover) {
  swarm_health_tracker h;
  h.evaluate(census(0, 10), t0);
  for (int i = 1; i <= 10; ++i) {
    // Healthy twice, then one bad tick again: never 3 good ones in a row.
    const bool bad = i % 3 == 0;
    h.evaluate(bad ? census(0, 10) : census(10, 10), t0 + std::chrono::minutes(i));
    EXPECT_EQ(h.state(), swarm_health::critical) << i;
  }
}

TEST(SwarmHealth, RecoveryStepsDownToTheRawState) {
  swarm_health_tracker h;
  h.evaluate(census(0, 40), t0);  // critical: no seeders
  for (int i = 1; i <= 3; ++i) h.evaluate(census(2, 40), t0 + std::chrono::minutes(i));
  EXPECT_EQ(h.state(), swarm_health::degraded);
  EXPECT_EQ(reasons(h.last()), "few-seeders");
}

TEST(SwarmHealth, WorseningDuringRecoveryRestartsTheCount) {
  swarm_health_tracker h;
  h.evaluate(census(2, 40), t0);  // degraded
  h.evaluate(census(20, 40), t0 + 1min);
  h.evaluate(census(20, 40), t0 + 2min);
  EXPECT_EQ(h.evaluate(census(0, 40), t0 + 3min).state, swarm_health::critical);
  EXPECT_TRUE(h.changed());
  // few-seeders was absent for 3 evaluations: gone; no-seeders is new.
  EXPECT_EQ(reasons(h.last()), "no-seeders");
  h.evaluate(census(20, 40), t0 + 4min);
  h.evaluate(census(20, 40), t0 + 5min);
  EXPECT_EQ(h.state(), swarm_health::critical);
  EXPECT_EQ(h.evaluate(census(20, 40), t0 + 6min).state, swarm_health::healthy);
}

TEST(SwarmHealth, NoHysteresisWithOneEvaluation) {
  health_config cfg;
  cfg.recovery_evaluations = 1;
  swarm_health_tracker h(cfg);
  h.evaluate(census(0, 10), t0);
  EXPECT_EQ(h.evaluate(census(10, 10), t0 + 1min).state, swarm_health::healthy);
  EXPECT_TRUE(h.changed());
}

TEST(SwarmHealth, ChangedReportsReasonChangesToo) {
  swarm_health_tracker h;
  h.evaluate(census(2, 40), t0);  // degraded: few seeders
  EXPECT_TRUE(h.changed());
  h.evaluate(census(2, 40), t0 + 1min);
  EXPECT_FALSE(h.changed());
  h.evaluate(census(2, 40, 10), t0 + 2min);  // + stalled, same state
  EXPECT_EQ(h.state(), swarm_health::degraded);
  EXPECT_TRUE(h.changed());
  EXPECT_EQ(reasons(h.last()), "few-seeders,stalled-leechers");
}

// --- rates ---------------------------------------------------------------------

TEST(SwarmHealth, CompletionRateOverTheWindow) {
  swarm_health_tracker h;
  h.evaluate(census(10, 10), t0);
  // 30 completions in the first 30 min: 60 per hour.
  for (int i = 0; i < 30; ++i) h.on_completed(t0 + std::chrono::minutes(i));
  auto r = h.evaluate(census(10, 10), t0 + 29min + 30s);
  EXPECT_NEAR(r.completion_rate, 30.0 * 3600.0 / (29 * 60 + 30), 1e-9);
  r = h.evaluate(census(10, 10), t0 + 45min);
  // The window now covers minutes 16..45: completions of minutes 16..29.
  EXPECT_EQ(h.totals(t0 + 45min).completions, 14u);
  EXPECT_NEAR(r.completion_rate, 14.0 * 2.0, 1e-9);
  r = h.evaluate(census(10, 10), t0 + 2h);
  EXPECT_EQ(r.completion_rate, 0.0);
}

TEST(SwarmHealth, AnnounceRateOverTheWindow) {
  swarm_health_tracker h;
  peer_traits l;
  // 3600 announces over 30 min: 2 per second.
  for (int i = 0; i < 3600; ++i) {
    h.on_announce(l, false, false, t0 + std::chrono::milliseconds(500 * i));
  }
  const auto& r = h.evaluate(census(10, 10), t0 + 30min);
  // The window at t0+30min covers minutes 1..30: 3480 of the announces.
  EXPECT_EQ(h.totals(t0 + 30min).announces, 3480u);
  EXPECT_NEAR(r.announce_rate, 3480.0 / 1800.0, 1e-9);
}

TEST(SwarmHealth, RateWarmUpUsesAtLeastOneBucket) {
  swarm_health_tracker h;
  h.on_completed(t0);
  const auto& r = h.evaluate(census(10, 10), t0 + 1s);
  EXPECT_NEAR(r.completion_rate, 60.0, 1e-9);  // 1 per minute, not 3600 per hour
}

TEST(SwarmHealth, OutOfOrderEventsOlderThanTheWindowAreDropped) {
  swarm_health_tracker h;
  h.on_completed(t0 + 2h);
  h.on_completed(t0);  // same ring slot, two hours older: dropped
  EXPECT_EQ(h.totals(t0 + 2h).completions, 1u);
}

// --- progress quartiles and the sample -----------------------------------------------

TEST(SwarmHealth, ProgressQuartiles) {
  health_sample s;
  for (float p : {0.0f, 0.25f, 0.5f, 0.75f, 1.0f}) {
    peer_traits t;
    t.progress = p;
    s.add(t, false);
  }
  peer_traits unknown;  // progress -1: not sampled
  s.add(unknown, false);
  peer_traits seeder;
  seeder.progress = 1.0f;
  s.add(seeder, true);  // seeders are not in the leecher spread
  EXPECT_EQ(s.progress_seen(), 5u);
  swarm_health_tracker h;
  const auto& r = h.evaluate(s, t0);
  EXPECT_FLOAT_EQ(r.progress_p25, 0.25f);
  EXPECT_FLOAT_EQ(r.progress_median, 0.5f);
  EXPECT_FLOAT_EQ(r.progress_p75, 0.75f);
  EXPECT_FLOAT_EQ(s.progress_quantile(0.1), 0.1f);
}

TEST(SwarmHealth, QuartilesUnknownWithoutLeechers) {
  swarm_health_tracker h;
  const auto& r = h.evaluate(census(5, 0), t0);
  EXPECT_EQ(r.progress_p25, -1.0f);
  EXPECT_EQ(r.progress_median, -1.0f);
  EXPECT_EQ(r.progress_p75, -1.0f);
}

TEST(SwarmHealth, ReservoirIsBoundedAndRepresentative) {
  constexpr int n = 100000;
  health_sample a(4096, 42), b(4096, 42);
  for (int i = 0; i < n; ++i) {
    peer_traits t;
    t.progress = static_cast<float>(i) / n;
    a.add(t, false);
    b.add(t, false);
  }
  EXPECT_EQ(a.progress_values().size(), 4096u);
  EXPECT_EQ(a.progress_seen(), static_cast<std::uint64_t>(n));
  EXPECT_EQ(a.progress_values(), b.progress_values());  // deterministic
  // A uniform 4096-sample of a uniform spread: quartiles within a few %.
  EXPECT_NEAR(a.progress_quantile(0.25), 0.25, 0.03);
  EXPECT_NEAR(a.progress_quantile(0.5), 0.5, 0.03);
  EXPECT_NEAR(a.progress_quantile(0.75), 0.75, 0.03);
  a.clear();
  EXPECT_EQ(a.peers(), 0u);
  EXPECT_TRUE(a.progress_values().empty());
}

TEST(SwarmHealth, SampleSizeComesFromTheConfig) {
  health_config cfg;
  cfg.progress_sample_size = 8;
  swarm_health_tracker h(cfg);
  health_sample s = h.make_sample();
  for (int i = 0; i < 100; ++i) {
    peer_traits t;
    t.progress = 0.5f;
    s.add(t, false);
  }
  EXPECT_EQ(s.progress_values().size(), 8u);
}

// --- torrent size, copies, config -------------------------------------------------------

TEST(SwarmHealth, TorrentSizeIsTheLargestLeftPlusDownloaded) {
  swarm_health_tracker h;
  EXPECT_EQ(h.torrent_size(), 0u);
  peer_traits t;
  t.left = 700;
  t.downloaded = 300;
  h.on_announce(t, true, false, t0);
  EXPECT_EQ(h.torrent_size(), 1000u);
  t.left = 100;
  t.downloaded = 200;  // a restarted client: smaller sum, no change
  h.on_announce(t, false, false, t0);
  EXPECT_EQ(h.torrent_size(), 1000u);
  t.left = 1u << 30;
  t.set(flag_quarantined);  // broken counters do not count
  h.on_announce(t, false, false, t0);
  EXPECT_EQ(h.torrent_size(), 1000u);
  h.observe_size(~0ull, 5);  // saturates instead of wrapping
  EXPECT_EQ(h.torrent_size(), ~0ull);
}

TEST(SwarmHealth, ACopyCarriesOnExactly) {
  swarm_health_tracker h;
  h.evaluate(census(0, 10), t0);
  arrive(h, 25, t0, 5min);
  h.on_completed(t0 + 6min);
  h.evaluate(census(10, 10), t0 + 7min);  // recovering: 1 of 3
  const swarm_health_tracker copy = h;    // what the supervisor keeps
  swarm_health_tracker restored = copy;
  for (auto* t : {&h, &restored}) {
    t->evaluate(census(10, 10), t0 + 8min);
  }
  EXPECT_EQ(h.state(), restored.state());
  EXPECT_EQ(h.last().reasons, restored.last().reasons);
  EXPECT_EQ(h.last().completion_rate, restored.last().completion_rate);
  EXPECT_EQ(h.torrent_size(), restored.torrent_size());
  EXPECT_EQ(restored.evaluate(census(10, 10), t0 + 9min).state, swarm_health::healthy);
}

TEST(SwarmHealth, SetConfigKeepsTheWindowWhenTheLayoutIsUnchanged) {
  swarm_health_tracker h;
  h.on_completed(t0);
  health_config cfg;
  cfg.min_seeder_ratio = 0.5;
  h.set_config(cfg);
  EXPECT_EQ(h.totals(t0 + 1min).completions, 1u);
  cfg.window = 60min;
  h.set_config(cfg);
  EXPECT_EQ(h.totals(t0 + 1min).completions, 0u);
}

TEST(SwarmHealth, ConfigValidation) {
  EXPECT_EQ(health_config{}.validate(), "");
  health_config c;
  c.bucket = 0s;
  EXPECT_EQ(c.validate(), "health bucket must be positive");
  c = {};
  c.stalled_fraction_critical = 0.2;
  EXPECT_EQ(c.validate(),
            "stalled fraction (critical) must not be below stalled fraction (degraded)");
  c = {};
  c.abusive_fraction = 1.5;
  EXPECT_EQ(c.validate(), "abusive fraction must be in (0, 1] (got 1.500000)");
  c = {};
  c.recovery_evaluations = 0;
  EXPECT_EQ(c.validate(), "recovery evaluations must be at least 1");
  c = {};
  c.window = 100000h;
  EXPECT_NE(c.validate().find("10000 buckets"), std::string::npos);
}

TEST(SwarmHealth, ZeroWindowCannotDivideByZero) {
  health_config cfg;
  cfg.window = 0s;
  cfg.bucket = 0s;
  swarm_health_tracker h(cfg);
  h.on_completed(t0);
  const auto& r = h.evaluate(census(1, 1), t0);
  EXPECT_TRUE(std::isfinite(r.completion_rate));
}

}  // namespace
}  // namespace sk
