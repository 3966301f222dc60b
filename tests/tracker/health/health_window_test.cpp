// The health window's compact form (a short list of buckets, the full ring
// only while busy) counts exactly what the plain ring of ceil(window /
// bucket) buckets counts: random event sequences, fed in time order as the
// swarm core feeds them (each after a cache hint, as the swarm gives), against
// a reference ring written out here.

#include "tracker/swarm_health.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace sk {
namespace {

using namespace std::chrono_literals;

/// The plain ring: slot = epoch mod n, reset when a newer epoch lands in it,
/// an older one refused; totals over (e - n, e]; export in slot order.
class reference_ring {
 public:
  explicit reference_ring(const health_config& cfg)
      : width_(std::chrono::duration_cast<health_clock::duration>(cfg.bucket).count()),
        ring_(static_cast<std::size_t>((cfg.window.count() + cfg.bucket.count() - 1) /
                                       cfg.bucket.count())) {}

  /// kind: 0 announce, 1 completion, 2 arrival, 3 completed departure, 4 early departure.
  void add(health_time t, int kind) {
    const std::int64_t e = epoch(t);
    bucket& b = ring_[slot(e)];
    if (b.epoch > e) return;
    if (b.epoch != e) b = bucket{e, {}};
    ++b.counts[static_cast<std::size_t>(kind)];
  }
  std::array<std::uint64_t, 5> totals(health_time t) const {
    std::array<std::uint64_t, 5> out{};
    const std::int64_t e = epoch(t);
    for (const bucket& b : ring_) {
      if (b.epoch > e - n() && b.epoch <= e) {
        for (std::size_t k = 0; k < 5; ++k) out[k] += b.counts[k];
      }
    }
    return out;
  }
  void export_to(health_time t, std::vector<std::int64_t>& ages,
                 std::vector<std::uint32_t>& counts) const {
    const std::int64_t e = epoch(t);
    for (const bucket& b : ring_) {
      if (b.epoch <= e - n() || b.epoch > e) continue;
      ages.push_back(e - b.epoch);
      counts.insert(counts.end(), b.counts.begin(), b.counts.end());
    }
  }

 private:
  struct bucket {
    std::int64_t epoch = -1;
    std::array<std::uint32_t, 5> counts{};
  };
  std::int64_t n() const { return static_cast<std::int64_t>(ring_.size()); }
  std::size_t slot(std::int64_t e) const { return static_cast<std::size_t>(((e % n()) + n()) % n()); }
  std::int64_t epoch(health_time t) const {
    const auto ticks = t.time_since_epoch().count();
    std::int64_t e = ticks / width_;
    if (ticks % width_ != 0 && ticks < 0) --e;
    return e;
  }
  std::int64_t width_;
  std::vector<bucket> ring_;
};

/// Feeds the same event to the tracker and the reference.
void feed(swarm_health_tracker& h, reference_ring& ref, health_time t, int kind) {
  peer_traits leecher;  // a new leecher: one announce and one arrival
  switch (kind) {
    case 0: {
      peer_traits seeder;
      h.on_announce(seeder, false, true, t);
      ref.add(t, 0);
      break;
    }
    case 1:
      h.on_completed(t);
      ref.add(t, 1);
      break;
    case 2:
      h.on_announce(leecher, true, false, t);
      ref.add(t, 0);
      ref.add(t, 2);
      break;
    default: {
      // A completed seeder leaving, early or not.
      peer_traits s;
      const bool early = kind == 4;
      s.completed_at = t - (early ? 1min : 2h);
      h.on_peer_left(s, true, t);
      ref.add(t, 3);
      if (early) ref.add(t, 4);
      break;
    }
  }
}

void expect_same(const swarm_health_tracker& h, const reference_ring& ref, health_time t,
                 const char* where, std::uint32_t seed) {
  const auto tot = h.totals(t);
  const auto want = ref.totals(t);
  EXPECT_EQ(tot.announces, want[0]) << where << " seed " << seed;
  EXPECT_EQ(tot.completions, want[1]) << where << " seed " << seed;
  EXPECT_EQ(tot.arrivals, want[2]) << where << " seed " << seed;
  EXPECT_EQ(tot.completed_departures, want[3]) << where << " seed " << seed;
  EXPECT_EQ(tot.early_departures, want[4]) << where << " seed " << seed;
  const auto s = h.export_state(t);
  std::vector<std::int64_t> ages;
  std::vector<std::uint32_t> counts;
  ref.export_to(t, ages, counts);
  EXPECT_EQ(s.bucket_ages, ages) << where << " seed " << seed;
  EXPECT_EQ(s.bucket_counts, counts) << where << " seed " << seed;
}

TEST(HealthWindow, CountsExactlyWhatTheRingCounts) {
  const health_sample empty;
  for (std::uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    health_config cfg;
    // Default layout most of the time; also odd ones (a window that is not a
    // multiple of the bucket, a ring of 1 and of 2).
    switch (seed % 5) {
      case 1: cfg.window = 7min; cfg.bucket = 2min; break;
      case 2: cfg.window = 1min; cfg.bucket = 1min; break;
      case 3: cfg.window = 2min; cfg.bucket = 1min; break;
      default: break;
    }
    swarm_health_tracker h(cfg);
    reference_ring ref(cfg);
    // Near the clock's epoch too, where unused ring slots (epoch -1) fall in
    // the window and are exported with zero counts.
    health_time t = seed % 3 == 0 ? health_time{} : health_time{} + 1000h;
    for (int step = 0; step < 400; ++step) {
      // Mostly short gaps (several events per bucket), sometimes a quiet
      // spell longer than the window.
      const int r = std::uniform_int_distribution<int>(0, 99)(rng);
      if (r < 60) {
        t += std::chrono::seconds(std::uniform_int_distribution<int>(0, 20)(rng));
      } else if (r < 95) {
        t += std::chrono::seconds(std::uniform_int_distribution<int>(20, 400)(rng));
      } else {
        t += std::chrono::seconds(std::uniform_int_distribution<int>(1800, 7200)(rng));
      }
      // The cache hint before an event (the swarm gives one per announce),
      // also for times outside the window: it must change no count.
      h.prefetch(t);
      h.prefetch(t - 3h);
      feed(h, ref, t, std::uniform_int_distribution<int>(0, 4)(rng));
      if (step % 7 == 0) {
        h.evaluate(empty, t);  // drops what left the window
        expect_same(h, ref, t, "after evaluate", seed);
      }
      if (step % 11 == 0) expect_same(h, ref, t + 30s, "ahead", seed);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(HealthWindow, ImportOfAnExportCountsTheSame) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    swarm_health_tracker h;
    reference_ring ref(health_config{});
    health_time t = health_time{} + 1000h;
    for (int step = 0; step < 200; ++step) {
      t += std::chrono::seconds(std::uniform_int_distribution<int>(0, 120)(rng));
      feed(h, ref, t, std::uniform_int_distribution<int>(0, 4)(rng));
    }
    swarm_health_tracker copy;
    copy.import_state(h.export_state(t), t);
    expect_same(copy, ref, t, "imported", seed);
  }
}

TEST(HealthWindow, QuietSwarmKeepsAFewBucketsOrNone) {
  swarm_health_tracker h;  // 30 buckets of a minute
  const health_sample empty;
  health_time t = health_time{} + 1000h;
  EXPECT_EQ(h.window_buckets(), 0u);  // nothing before the first event
  peer_traits p;
  h.on_announce(p, true, false, t);
  EXPECT_EQ(h.window_buckets(), 1u);
  EXPECT_FALSE(h.window_is_ring());
  // A one-peer swarm announcing every 30 min never holds more than two.
  for (int i = 0; i < 10; ++i) {
    t += 30min;
    h.on_announce(p, false, false, t);
    h.evaluate(empty, t + 1min);
    EXPECT_LE(h.window_buckets(), 2u);
  }
  // Busy: an event every minute fills the ring ...
  for (int i = 0; i < 40; ++i) {
    t += 1min;
    h.on_announce(p, false, false, t);
  }
  EXPECT_TRUE(h.window_is_ring());
  EXPECT_EQ(h.window_buckets(), 30u);
  // ... and once it is quiet for a window, nothing is left.
  h.evaluate(empty, t + 31min);
  EXPECT_EQ(h.window_buckets(), 0u);
  EXPECT_EQ(h.totals(t + 31min).announces, 0u);
}

}  // namespace
}  // namespace sk
