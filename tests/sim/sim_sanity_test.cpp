// Sanity of the swarm simulator before any policy comparison is believed:
// with uniform random peer selection its steady state must match the
// Qiu-Srikant fluid model (SIGCOMM 2004) in an upload-constrained and a
// download-constrained setting, Little's law must hold, and a flash crowd
// must never finish faster than the minimum distribution time of Kumar and
// Ross (2006). Also: runs are deterministic and the population is the same
// for every policy (common random numbers); partial seeds (BEP 21) get
// exactly their files and the tracker counts them as partial seeds.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/sim/evaluation.hpp"
#include "bench/sim/swarm_sim.hpp"

namespace {

using namespace sk::sim;

constexpr double kib = 1024.0;
constexpr double mib = 1024.0 * 1024.0;

tracker_setup random_setup() { return *find_setup("random"); }

/// A steady Poisson swarm with one class of peers and exponential seeding
/// times, kept alive by one permanent origin seed of the same upload.
scenario fluid_scenario(const char* name, double up, double down, double lambda,
                        double seed_time) {
  scenario s;
  s.name = name;
  s.pieces = 256;
  s.piece_bytes = 256 * kib;  // 64 MiB
  s.classes = {{up, down, 1.0}};
  s.origin_seeds = 1;
  s.origin_up_bps = up;
  s.poisson_rate = lambda;
  s.poisson_until_s = 8 * 3600;
  s.measure_from_s = 1 * 3600;
  s.measure_until_s = 8 * 3600;
  s.horizon_s = 12 * 3600;
  s.seed_time_mean_s = seed_time;
  return s;
}

/// Qiu-Srikant steady state with no aborts (theta = 0) and effectiveness
/// eta = 1: seeds y = lambda / gamma (+ the permanent origin seed), and
/// leechers x = lambda / c when downloads bind, else the x with
/// lambda = mu (x + y). Returns {x, T = x / lambda}.
std::pair<double, double> fluid(double file, double up, double down, double lambda,
                                double seed_time) {
  const double mu = up / file;
  const double c = down / file;
  const double y = lambda * seed_time + 1.0;
  const double x_upload = (lambda - mu * y) / mu;
  const double x_download = lambda / c;
  const double x = std::max(x_upload, x_download);
  return {x, x / lambda};
}

struct averaged {
  double mean_s = 0;
  double mean_leechers = 0;
  double arrival_rate = 0;
  double little_error = 0;  // worst |L - lambda W| / L over the runs
};

averaged run_fluid(const scenario& s, int reps) {
  averaged a;
  for (int r = 0; r < reps; ++r) {
    const run_metrics m = run_once(s, random_setup(), 42, static_cast<std::uint32_t>(r));
    EXPECT_EQ(m.censored, 0u) << "every measured leecher must finish";
    a.mean_s += m.mean_s / reps;
    a.mean_leechers += m.mean_leechers / reps;
    a.arrival_rate += m.arrival_rate / reps;
    const double little = std::abs(m.mean_leechers - m.arrival_rate * m.mean_s) / m.mean_leechers;
    a.little_error = std::max(a.little_error, little);
  }
  return a;
}

TEST(SimSanity, QiuSrikantUploadConstrained) {
  // Upload 100 KiB/s, download 2 MiB/s: every peer's upload is the limit.
  // 1/mu = 655 s, seeding 300 s on average, lambda = 0.1/s.
  const double up = 100 * kib, down = 2 * mib, lambda = 0.1, seed_time = 300;
  const scenario s = fluid_scenario("qs-upload", up, down, lambda, seed_time);
  const auto [x, t] = fluid(s.pieces * s.piece_bytes, up, down, lambda, seed_time);
  ASSERT_GT(down / (s.pieces * s.piece_bytes) * x, up / (s.pieces * s.piece_bytes) *
                                                       (x + lambda * seed_time + 1))
      << "the setting must be upload-constrained";
  const averaged a = run_fluid(s, 2);
  std::printf("upload-constrained: T sim %.0f s, model %.0f s; x sim %.1f, model %.1f\n",
              a.mean_s, t, a.mean_leechers, x);
  EXPECT_NEAR(a.mean_s, t, 0.10 * t);
  EXPECT_NEAR(a.mean_leechers, x, 0.10 * x);
  EXPECT_LT(a.little_error, 0.02);
}

TEST(SimSanity, QiuSrikantDownloadConstrained) {
  // Download 50 KiB/s, upload 400 KiB/s: T = F / d = 1311 s.
  const double up = 400 * kib, down = 50 * kib, lambda = 0.05, seed_time = 300;
  const scenario s = fluid_scenario("qs-download", up, down, lambda, seed_time);
  const auto [x, t] = fluid(s.pieces * s.piece_bytes, up, down, lambda, seed_time);
  ASSERT_LT(down * x, up * (x + lambda * seed_time + 1))
      << "the setting must be download-constrained";
  const averaged a = run_fluid(s, 2);
  std::printf("download-constrained: T sim %.0f s, model %.0f s; x sim %.1f, model %.1f\n",
              a.mean_s, t, a.mean_leechers, x);
  EXPECT_NEAR(a.mean_s, t, 0.10 * t);
  EXPECT_NEAR(a.mean_leechers, x, 0.10 * x);
  EXPECT_LT(a.little_error, 0.02);
}

/// Kumar-Ross: with N leechers arriving at once, no schedule distributes
/// the file faster than max(F / u_s, F / d_min, N F / (u_s + sum u_i)).
void expect_no_faster_than_kumar_ross(const scenario& s, double up_max_sum) {
  const double file = s.pieces * s.piece_bytes;
  double d_min = s.classes[0].down_bps;
  for (const auto& c : s.classes) {
    d_min = std::min(d_min, c.down_bps);
  }
  const double us = s.origin_up_bps * s.origin_seeds;
  const double bound = std::max({file / us, file / d_min,
                                 s.flash_leechers * file / (us + up_max_sum)});
  for (const auto& setup : all_setups()) {
    if (setup.name != "random" && setup.name != "flash-crowd" && setup.name != "self-healing") {
      continue;
    }
    for (std::uint32_t r = 0; r < 2; ++r) {
      const run_metrics m = run_once(s, setup, 7, r);
      ASSERT_EQ(m.completed, s.flash_leechers) << s.name << " / " << setup.name;
      // Everyone arrived at t = 0, so the last completion is max_s.
      EXPECT_GE(m.max_s, bound) << s.name << " / " << setup.name << " replication " << r;
      EXPECT_GE(m.first_copy_s, file / us) << "no leecher can finish before the seed sent F";
      std::printf("%s / %s: all done at %.0f s, Kumar-Ross bound %.0f s\n", s.name.c_str(),
                  setup.name.c_str(), m.max_s, bound);
    }
  }
}

scenario flash(const char* name, std::uint32_t n, double seed_up,
               std::vector<peer_class> classes) {
  scenario s;
  s.name = name;
  s.pieces = 128;
  s.piece_bytes = 256 * kib;  // 32 MiB
  s.classes = std::move(classes);
  s.origin_seeds = 1;
  s.origin_up_bps = seed_up;
  s.flash_leechers = n;
  s.flash_window_s = 0;
  s.horizon_s = 6 * 3600;
  return s;
}

TEST(SimSanity, FlashCrowdNeverBeatsKumarRossSeedBound) {
  // One slow seed: F / u_s dominates.
  const scenario s = flash("kr-seed", 60, 64 * kib, {{256 * kib, 2 * mib, 1}});
  expect_no_faster_than_kumar_ross(s, 60 * 256 * kib);
}

TEST(SimSanity, FlashCrowdNeverBeatsKumarRossUploadBound) {
  // A fast seed and slow leecher uploads: N F / (u_s + sum u) dominates.
  // Two classes: the bound uses every leecher at the faster class's upload,
  // which only lowers it.
  const scenario s =
      flash("kr-upload", 80, 1 * mib, {{40 * kib, 2 * mib, 1}, {80 * kib, 2 * mib, 1}});
  expect_no_faster_than_kumar_ross(s, 80 * 80 * kib);
}

TEST(SimSanity, FlashCrowdNeverBeatsKumarRossDownloadBound) {
  // Slow downloads: F / d_min dominates.
  const scenario s = flash("kr-download", 40, 2 * mib, {{512 * kib, 64 * kib, 1}});
  expect_no_faster_than_kumar_ross(s, 40 * 512 * kib);
}

TEST(SimSanity, RunsAreDeterministicAndPairedAcrossPolicies) {
  scenario s = flash("crn", 30, 256 * kib, {{128 * kib, 1 * mib, 1}, {256 * kib, 1 * mib, 1}});
  s.flash_window_s = 300;
  s.unreachable_fraction = 0.3;
  s.seed_time_mean_s = 120;
  const auto a = run_once(s, random_setup(), 5, 3);
  const auto b = run_once(s, random_setup(), 5, 3);
  EXPECT_EQ(a.median_s, b.median_s);
  EXPECT_EQ(a.max_s, b.max_s);
  EXPECT_EQ(a.announces, b.announces);
  // Another replication is another population.
  const auto c = run_once(s, random_setup(), 5, 4);
  EXPECT_NE(a.median_s, c.median_s);
  // Same population under another policy: the same leechers arrive at the
  // same times (same count, same arrival rate), only the outcome may differ.
  const auto d = run_once(s, *find_setup("self-healing"), 5, 3);
  EXPECT_EQ(a.leechers, d.leechers);
  EXPECT_EQ(a.arrival_rate, d.arrival_rate);
  EXPECT_GE(a.unreachable_median_s, 0);
  EXPECT_GE(d.unreachable_median_s, 0);
}

TEST(SimSanity, BadScenariosAreRejected) {
  scenario s = flash("bad", 10, 256 * kib, {});
  EXPECT_THROW(run_once(s, random_setup(), 1, 0), std::invalid_argument);
  s.classes = {{100 * kib, 1 * mib, 1}};
  s.flash_leechers = 0;
  EXPECT_THROW(run_once(s, random_setup(), 1, 0), std::invalid_argument);
  EXPECT_FALSE(make_scenario("no-such-scenario"));
  EXPECT_FALSE(find_setup("no-such-policy"));
}

/// The partial-seeds scenario under a plain tracker and as shipped: every
/// partial seed gets exactly its files and then announces paused, the
/// tracker's scrape counts it as a partial seed at every sample, and the
/// health model never calls the swarm short of seeders (nor stalled, nor
/// completing too little) because of them, so no remediation starts for
/// such a reason.
TEST(SimSanity, PartialSeedsAreCountedAsPartialAndStartNoSeedingRemediation) {
  const scenario s = *make_scenario("partial-seeds");
  for (const char* name : {"random", "self-healing"}) {
    for (std::uint32_t r = 0; r < 3; ++r) {
      const run_metrics m = run_once(s, *find_setup(name), 1, r);
      SCOPED_TRACE(std::string(name) + " replication " + std::to_string(r));
      ASSERT_GT(m.partial_seeds, 0u);
      EXPECT_EQ(m.partial_completed, m.partial_seeds) << "every partial seed gets its files";
      EXPECT_EQ(m.unwanted_pieces, 0u) << "and nothing else";
      EXPECT_EQ(m.completed, m.leechers) << "every full leecher finishes";
      // Each partial seed that got its files says paused at least once, at
      // the moment it got them (and on every later announce but the last).
      EXPECT_GE(m.paused_announces, m.partial_completed);
      EXPECT_EQ(m.scrape_mismatches, 0u)
          << "scrape: complete = seeders, partial = partial seeds, incomplete = downloading + "
             "partial seeds";
      EXPECT_GT(m.mean_partial, 3 * m.mean_seeders) << "partial seeds are most of the swarm";
      EXPECT_EQ(m.unhealthy_reasons & seeding_alarm_reasons, 0u);
      EXPECT_EQ(m.remediation_reasons & seeding_alarm_reasons, 0u);
      EXPECT_EQ(m.refused, 0u);
      std::printf("partial-seeds / %s #%u: %u partial seeds (median %.0f s), %u leechers "
                  "(median %.0f s), %.1f partial / %.1f seeders present, %u remediation "
                  "actions, unhealthy %u of %u ticks\n",
                  name, r, m.partial_seeds, m.partial_median_s, m.leechers, m.median_s,
                  m.mean_partial, m.mean_seeders, m.remediation_actions, m.unhealthy_ticks,
                  m.health_ticks);
    }
  }
}

/// The same peers without BEP 21 (they announce none once they have their
/// files): the tracker cannot tell them from leechers that stopped making
/// progress, so scrape counts them as leechers and the health model raises
/// a seeding reason. Shows the invariant above is not true by construction.
TEST(SimSanity, PartialSeedsWithoutPausedLookLikeStalledLeechers) {
  const scenario s = *make_scenario("partial-seeds-no-paused");
  std::uint32_t alarms = 0;
  for (std::uint32_t r = 0; r < 3; ++r) {
    const run_metrics m = run_once(s, *find_setup("self-healing"), 1, r);
    EXPECT_EQ(m.paused_announces, 0u);
    EXPECT_EQ(m.partial_completed, m.partial_seeds);
    EXPECT_GT(m.scrape_mismatches, 0u);
    alarms += (m.unhealthy_reasons & seeding_alarm_reasons) != 0;
  }
  EXPECT_GT(alarms, 0u);
}

TEST(SimSanity, PairedBootstrapCoversTheTrueDifference) {
  // x = 1.1 * base exactly: rel is 10% and the interval is that point.
  std::vector<double> base, x;
  for (int i = 0; i < 20; ++i) {
    base.push_back(100 + i);
    x.push_back(1.1 * (100 + i));
  }
  const paired c = compare(x, base, false);
  ASSERT_TRUE(c.valid);
  EXPECT_NEAR(c.rel, 0.1, 1e-9);
  EXPECT_NEAR(c.ci_low, 0.1, 1e-9);
  EXPECT_NEAR(c.ci_high, 0.1, 1e-9);
  // Undefined values (negative) are left out pairwise.
  x[0] = -1;
  EXPECT_EQ(compare(x, base, false).n, 19u);
}

}  // namespace
