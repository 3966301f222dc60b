#pragma once
/// The health model of one swarm: rates over a sliding window, a per-tick
/// census of the peers, and the classification healthy / degraded / critical
/// with its reasons.
///
/// Plain C++17 (no CAF, no clock: `now` is passed in). The swarm core owns one
/// `swarm_health_tracker`, feeds it events as announces arrive, and at each
/// health tick builds a `health_sample` from every stored peer and calls
/// `evaluate`. The tracker is plain copyable data, so the supervisor can
/// restart a crashed swarm from a copy of it.
///
/// Call order in the swarm core (per announce):
///
///   1. ban list / parse checks                      (client_id.hpp)
///   2. known peer: v = observe_announce(traits, req, false, now,
///                                       tracker.torrent_size(), behaviour_cfg)
///   3.             if v.refuse: reply failure, stop here
///   4. apply the announce to the peer table
///      new peer:   v = observe_announce(new traits, req, true, ...)
///   5. tracker.on_announce(traits, is_new, seeder, now)
///   6. if v.completed: tracker.on_completed(now)
///   7. event=stopped (after 5/6), and every expired peer at the sweep:
///      tracker.on_peer_left(traits, was_seeder, now)
///
/// Per health tick:
///
///   health_sample s = tracker.make_sample();
///   for each peer: s.add(traits, seeder);
///   const health_report& r = tracker.evaluate(s, now);
///   if (tracker.changed()) report r to the supervisor.

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tracker/health_types.hpp"
#include "tracker/lazy_box.hpp"

namespace sk {

/// Thresholds of the swarm health model. Every rule, its default and why:
///
///   rule                          reason bit                 state
///   seeders == 0, leechers > 0    reason_no_seeders          critical  (any size)
///   seeders/leechers < min_seeder_ratio
///                                 reason_few_seeders         degraded
///   stalled/leechers >= stalled_fraction_degraded
///                                 reason_stalled_leechers    degraded
///                 >= stalled_fraction_critical               critical
///   early leavers / completed seeders that left in the window
///       >= early_leave_fraction (at least early_leave_min_departures),
///       seeders/leechers < early_leave_seeder_ratio
///                                 reason_seeders_leave_early degraded
///   no completion in a full window, leechers >= low_completion_min_leechers
///                                 reason_low_completion_rate degraded
///   abusive peers / peers >= abusive_fraction
///                                 reason_abusive_clients     degraded
///   unreachable / probed peers >= unreachable_fraction
///                                 reason_unreachable_peers   degraded
///   leecher arrivals in the window >= flash_crowd_factor * max(seeders, 1)
///       and >= flash_crowd_min_arrivals and seeders/leechers < min_seeder_ratio
///                                 reason_flash_crowd         degraded
///
/// Rules are judged only when the swarm has at least `min_peers` peers
/// (partial seeds included); below that it is `unevaluated` with no reason:
/// a tiny swarm's fractions are noise, and most swarms of a public tracker
/// are one-peer torrents nobody can heal. Partial seeds (BEP 21) are neither
/// seeders nor leechers in any rule: "leechers" are the peers downloading.
struct health_config {
  /// Span of the sliding window for completions, arrivals, departures and
  /// announces. 30 min: longer than one default announce interval (so every
  /// live peer announced in it), short enough to notice a change within a
  /// few health ticks.
  std::chrono::seconds window{30 * 60};
  /// Width of one window bucket. Rates are kept per bucket in a ring of
  /// ceil(window / bucket) buckets: memory is fixed, and the window really
  /// covers between `window - bucket` and `window`.
  std::chrono::seconds bucket{60};

  /// Fewer peers than this: unevaluated (no rule applies). 5: below it one
  /// peer is 20 % or more of any fraction.
  std::uint64_t min_peers = 5;
  /// seeders / leechers below this is "few seeders". 0.1: one seeder per
  /// ten leechers; below it seeders' upload is the bottleneck for most
  /// home connections.
  double min_seeder_ratio = 0.1;
  /// Stalled leechers / leechers at or above which the swarm is degraded /
  /// critical. A quarter of leechers stuck is a real problem; half of them
  /// means the swarm is not delivering.
  double stalled_fraction_degraded = 0.25;
  double stalled_fraction_critical = 0.5;
  /// A seeder that leaves (stopped or expired) within this long of completing
  /// "left early". 10 min: it uploaded for less than a third of an announce
  /// interval.
  std::chrono::seconds early_leave_time{10 * 60};
  /// Early leavers / completed seeders that left in the window at or above
  /// which seeders leave early, judged once at least
  /// `early_leave_min_departures` such seeders left in the window.
  double early_leave_fraction = 0.5;
  std::uint64_t early_leave_min_departures = 3;
  /// ... and only while seeders / downloading leechers is below this. 1.0:
  /// with at least one seeder per downloader, completers leaving soon harm
  /// nobody (measured with bench/sim: without this bound the rule marked 1.6 %
  /// of a steady swarm's ticks and 13.5 % of a partial-seed swarm's degraded,
  /// and the seeder appeal told 17 seeders of 4 downloaders the torrent was
  /// short of seeders).
  double early_leave_seeder_ratio = 1.0;
  /// No completion over a whole window with at least this many leechers is a
  /// low completion rate. Judged only after the tracker has watched the swarm
  /// for one full window (a fresh or restored tracker has no history). 20:
  /// with fewer, a big torrent can legitimately see no completion for 30 min.
  std::uint64_t low_completion_min_leechers = 20;
  /// Abusive peers (strikes > 0 or warned) / peers at or above which the
  /// swarm has abusive clients. 0.2: one in five.
  double abusive_fraction = 0.2;
  /// Unreachable / probed (reachable + unreachable) peers at or above which
  /// peers are unreachable; judged when at least `min_peers` were probed (off
  /// with probes off). 0.5: half the peers can only dial out.
  double unreachable_fraction = 0.5;
  /// Flash crowd: leecher arrivals in the window at least this many times
  /// max(seeders, 1), at least `flash_crowd_min_arrivals`, with few seeders.
  /// 10 new leechers per seeder in 30 min outruns a seeder's upload slots.
  double flash_crowd_factor = 10.0;
  std::uint64_t flash_crowd_min_arrivals = 20;

  /// Hysteresis: the state gets worse at once, but gets better only after
  /// this many consecutive evaluations computed a better state; a reason
  /// stays reported until it has been absent for this many consecutive
  /// evaluations. 3 (with a 1-minute tick: 3 minutes) keeps a swarm near a
  /// threshold from flapping and flooding the supervisor with reports.
  /// 1 = no hysteresis.
  std::uint32_t recovery_evaluations = 3;

  /// Most leecher progress values kept per sample (reservoir sampling) for
  /// the quartiles: bounded memory and time at any swarm size.
  std::size_t progress_sample_size = 4096;

  /// Checks every field; empty when usable, else one sentence naming the
  /// first bad field.
  std::string validate() const;
};

/// A census of a swarm's peers at one tick: counts and a bounded sample of
/// leecher progress. Build a fresh one per tick (or `clear()` and reuse).
class health_sample {
 public:
  /// Reservoir capacity; the seed makes the kept sample (and so the
  /// quartiles) reproducible for a given sequence of `add` calls.
  explicit health_sample(std::size_t capacity = 4096, std::uint64_t seed = 0x5eed);

  /// Forgets everything and takes a new capacity and seed: afterwards the
  /// sample behaves exactly like `health_sample(capacity, seed)` (one scratch
  /// sample can serve many swarms, each with its own seed).
  void reset(std::size_t capacity, std::uint64_t seed);

  /// Counts one peer. Called once per stored peer by the swarm core.
  /// Leecher progress is sampled only when known (`progress >= 0`).
  void add(const peer_traits& t, bool seeder);
  /// Forgets everything (keeps the reservoir's memory and seed).
  void clear();

  /// Every peer: seeders, downloading leechers and partial seeds.
  std::uint64_t peers() const noexcept { return seeders_ + leechers_ + partial_seeds_; }
  std::uint64_t seeders() const noexcept { return seeders_; }
  /// Downloading leechers (partial seeds not included).
  std::uint64_t leechers() const noexcept { return leechers_; }
  /// Partial seeds (`flag_partial_seed`): neither leechers nor stalled.
  std::uint64_t partial_seeds() const noexcept { return partial_seeds_; }
  /// Leechers with flag_stalled.
  std::uint64_t stalled() const noexcept { return stalled_; }
  std::uint64_t quarantined() const noexcept { return quarantined_; }
  std::uint64_t unreachable() const noexcept { return unreachable_; }
  std::uint64_t reachable() const noexcept { return reachable_; }
  /// Peers with strikes > 0 or flag_warned.
  std::uint64_t abusive() const noexcept { return abusive_; }
  std::uint64_t poor_contributors() const noexcept { return poor_contributors_; }
  /// Leechers whose progress was known (offered to the reservoir).
  std::uint64_t progress_seen() const noexcept { return progress_seen_; }
  /// The kept progress values (at most the capacity), unordered.
  const std::vector<float>& progress_values() const noexcept { return progress_; }

  /// Quantile q (0..1) of the kept progress values, linear interpolation
  /// between closest ranks (q = 0.5 of {0, 1} is 0.5); -1 when none.
  float progress_quantile(double q) const;

 private:
  std::uint64_t seeders_ = 0;
  std::uint64_t leechers_ = 0;
  std::uint64_t partial_seeds_ = 0;
  std::uint64_t stalled_ = 0;
  std::uint64_t quarantined_ = 0;
  std::uint64_t unreachable_ = 0;
  std::uint64_t reachable_ = 0;
  std::uint64_t abusive_ = 0;
  std::uint64_t poor_contributors_ = 0;
  std::uint64_t progress_seen_ = 0;
  std::size_t capacity_;
  std::uint64_t seed_;
  std::uint64_t rng_state_;
  std::vector<float> progress_;
};

/// Rates, torrent size estimate and the hysteresis state of one swarm.
///
/// All members are plain values (the window's buckets, counters, the last
/// report; the thresholds are shared, immutable): copy it to checkpoint,
/// copy it back to restore.
///
/// The window holds only what it needs. A bucket exists once an event fell
/// into it; while a few buckets are in use (most swarms see an announce or
/// two per window) they are a short list, and a busy swarm's window becomes
/// the full ring of ceil(window / bucket) buckets. Buckets that left the
/// window are dropped at `evaluate` (and the ring turns back into a list
/// when few buckets are left), so a swarm that fell quiet keeps no window.
/// Either form counts exactly what the ring counts for callers that feed
/// time in order (as the swarm core does).
class swarm_health_tracker {
 public:
  /// `cfg` should be valid (`validate()`); a bucket or window of 0 is
  /// treated as 1 s so a bad config cannot divide by zero.
  explicit swarm_health_tracker(health_config cfg = {});
  /// A tracker on shared thresholds (not copied when valid): every swarm of
  /// a node points at its one health config.
  static swarm_health_tracker on_shared(std::shared_ptr<const health_config> cfg);

  /// Counts one accepted announce (`after`: the traits after
  /// `observe_announce`). A new leecher is one arrival. Also feeds
  /// `observe_size(after.left, after.downloaded)` unless the peer is
  /// quarantined (broken counters must not inflate the size).
  void on_announce(const peer_traits& after, bool is_new, bool seeder, health_time now);
  /// Counts one completion (see `behaviour_verdict::completed`).
  void on_completed(health_time now);
  /// A peer stopped or expired. A seeder that completed here counts as a
  /// departure, and as an early one if it leaves within `early_leave_time`
  /// of `completed_at`.
  void on_peer_left(const peer_traits& t, bool seeder, health_time now);

  /// Estimated torrent size in bytes: the largest `left + downloaded` seen;
  /// 0 until a leecher or a downloading peer announced. An
  /// overestimate is possible (downloaded counts wasted bytes too), so
  /// progress is a lower bound.
  std::uint64_t torrent_size() const noexcept { return torrent_size_; }
  /// Feeds one observation to the size estimate (saturating add).
  void observe_size(std::uint64_t left, std::uint64_t downloaded);

  /// Classifies the swarm from `s` and the window's rates (the rules and the
  /// hysteresis of `health_config`), stores and returns the report:
  /// counts from the sample, completion_rate (per hour) and announce_rate (per
  /// second) over the window (over the time watched so far while that is
  /// shorter than the window, at least one bucket), progress quartiles.
  const health_report& evaluate(const health_sample& s, health_time now);

  /// The reported (hysteresis-filtered) state; unevaluated before any
  /// evaluate.
  swarm_health state() const noexcept { return last_.state; }
  /// The report of the last `evaluate`.
  const health_report& last() const noexcept { return last_; }
  /// True when the last `evaluate` changed the reported reasons, or the state
  /// other than between healthy and unevaluated (neither asks anything of
  /// the supervisor; the first evaluate counts as a change only if
  /// degraded or critical).
  bool changed() const noexcept { return changed_; }
  /// State and reasons the rules computed at the last evaluate, before
  /// hysteresis (tests, admin API).
  swarm_health raw_state() const noexcept { return raw_state_; }
  std::uint32_t raw_reasons() const noexcept { return raw_reasons_; }

  /// Totals over the current window (as of the latest event or evaluate).
  struct window_totals {
    std::uint64_t announces = 0;
    std::uint64_t completions = 0;
    std::uint64_t arrivals = 0;              ///< new leechers
    std::uint64_t completed_departures = 0;  ///< seeders with completed_at that left
    std::uint64_t early_departures = 0;      ///< ... within early_leave_time of completing
  };
  window_totals totals(health_time now) const;
  /// A cache hint ahead of an event at `now`: the bucket it will count in
  /// (the ring's slot, or the short list). Changes nothing.
  void prefetch(health_time now) const noexcept;
  /// Buckets the window holds now: 0 for a tracker that saw no event within
  /// a window at its last `evaluate`, up to ceil(window / bucket) when busy.
  std::size_t window_buckets() const noexcept { return ring_.size(); }
  /// Whether the window is the full ring (else a short list).
  bool window_is_ring() const noexcept { return is_ring(); }
  /// Drops the buckets that left the window at `now` (as `evaluate` does)
  /// and the memory of an empty window. Changes no count.
  void compact(health_time now);

  /// An empty sample sized by `health_config::progress_sample_size`.
  health_sample make_sample() const { return health_sample(cfg_->progress_sample_size); }

  const health_config& config() const noexcept { return *cfg_; }
  /// Replaces the thresholds (remediation tuning). The window's contents are
  /// kept if the bucket layout is unchanged, else cleared.
  void set_config(health_config cfg);

  /// The tracker's whole state as plain data, every time turned into an
  /// age relative to `now`: what a migration or a replica carries to
  /// another machine, whose steady clock shares no epoch with this one.
  struct portable_state {
    /// Per non-empty bucket of the window: how many buckets before `now`'s
    /// bucket it is (0: the current one).
    std::vector<std::int64_t> bucket_ages;
    /// Five counts per bucket, in `bucket_ages` order: announces,
    /// completions, arrivals, completed departures, early departures.
    std::vector<std::uint32_t> bucket_counts;
    std::uint64_t torrent_size = 0;
    /// How long the swarm has been watched (ms); -1: not yet.
    std::int64_t watched_ms = -1;
    /// The last report (its `at` becomes the import's `now`).
    health_report last;
    std::uint8_t raw_state = 0;
    std::uint32_t raw_reasons = 0;
    std::uint32_t better_streak = 0;
    /// One per reason bit.
    std::vector<std::uint32_t> absent_streak;
  };
  /// Copies the state out (see `portable_state`).
  portable_state export_state(health_time now) const;
  /// Replaces the state with `s` (exported on another machine at the same
  /// moment its `now` and this `now` stand for). Buckets outside this
  /// tracker's window are dropped; out-of-range states and reasons are
  /// clamped, so a malformed snapshot cannot break the tracker.
  void import_state(const portable_state& s, health_time now);

 private:
  struct bucket {
    std::int64_t epoch = -1;  ///< bucket number (time / bucket width); -1 empty
    std::uint32_t announces = 0;
    std::uint32_t completions = 0;
    std::uint32_t arrivals = 0;
    std::uint32_t completed_departures = 0;
    std::uint32_t early_departures = 0;
  };

  /// Slots of the ring: ceil(window / bucket).
  std::int64_t slots() const noexcept { return slots_; }
  std::size_t residue(std::int64_t epoch) const noexcept {
    return static_cast<std::size_t>(((epoch % slots_) + slots_) % slots_);
  }
  /// Most buckets kept as a list; one more makes the full ring.
  std::size_t list_limit() const noexcept;
  bool is_ring() const noexcept { return static_cast<std::int64_t>(ring_.size()) == slots_; }
  /// The bucket in ring slot `residue(epoch)` (the ring's slot, or the list
  /// entry of that residue), null when the list has none.
  bucket* find_slot(std::int64_t epoch) noexcept;
  const bucket* find_slot(std::int64_t epoch) const noexcept;
  /// `find_slot`, adding an empty bucket (epoch -1, as an unused ring slot)
  /// when absent: to the list, or by turning it into the ring when full.
  bucket& slot(std::int64_t epoch);
  /// Drops buckets that left the window of epoch `e`; back to a list when
  /// few remain.
  void drop_old(std::int64_t e);

  static health_report unevaluated_report() {
    health_report r;
    r.state = swarm_health::unevaluated;
    return r;
  }
  std::int64_t epoch_of(health_time t) const noexcept;
  /// The bucket of `now`, emptied first if it held an older bucket; nullptr
  /// when `now` is older than the slot's bucket (out-of-order time).
  bucket* bucket_at(health_time now);
  void note_time(health_time now);

  struct shared_tag {};
  swarm_health_tracker(shared_tag, std::shared_ptr<const health_config> cfg);
  void init_layout();

  std::shared_ptr<const health_config> cfg_;
  /// The window: a list of fewer than `slots_` buckets with distinct
  /// residues (any order), or the ring (`slots_` buckets, slot r holding
  /// residue r).
  std::vector<bucket> ring_;
  std::int64_t slots_ = 0;
  std::uint64_t torrent_size_ = 0;
  /// First event or evaluate seen (warm-up of the rates and the low
  /// completion rule).
  optional_time watched_since_;
  health_report last_ = unevaluated_report();
  bool changed_ = false;
  swarm_health raw_state_ = swarm_health::unevaluated;
  std::uint32_t raw_reasons_ = 0;
  /// The hysteresis counters; absent while all are zero (always so for an
  /// unevaluated swarm, which most are).
  struct streaks {
    /// Consecutive evaluations whose raw state was better than the reported one.
    std::uint32_t better = 0;
    /// Per reason bit: consecutive evaluations it was absent while reported.
    std::array<std::uint32_t, health_reason_count> absent{};
    bool zero() const noexcept {
      for (const auto a : absent) {
        if (a != 0) return false;
      }
      return better == 0;
    }
  };
  lazy_box<streaks> streaks_;
};

}  // namespace sk
