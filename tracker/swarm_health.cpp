#include "tracker/swarm_health.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tracker/random.hpp"

namespace sk {

namespace {

using std::chrono::seconds;

std::string fraction_error(const char* name, double value) {
  return std::string(name) + " must be in (0, 1] (got " + std::to_string(value) + ")";
}

bool is_fraction(double v) noexcept { return v > 0.0 && v <= 1.0; }

health_clock::duration since(health_time earlier, health_time later) noexcept {
  return later > earlier ? later - earlier : health_clock::duration::zero();
}

/// Linear interpolation between closest ranks of sorted values.
float quantile_sorted(const std::vector<float>& sorted, double q) {
  if (sorted.empty()) return -1.0f;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return static_cast<float>(sorted[lo] + (sorted[hi] - sorted[lo]) * frac);
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) noexcept {
  return a > std::numeric_limits<std::uint64_t>::max() - b
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

}  // namespace

std::string health_config::validate() const {
  if (window <= seconds{0}) return "health window must be positive";
  if (bucket <= seconds{0}) return "health bucket must be positive";
  if (bucket > window) return "health bucket must not be longer than the window";
  // The ring holds window / bucket entries; keep it small.
  if (window.count() / bucket.count() > 10000) {
    return "health window must not exceed 10000 buckets (window / bucket)";
  }
  if (!(min_seeder_ratio >= 0.0)) return "min seeder ratio must not be negative";
  if (!is_fraction(stalled_fraction_degraded)) {
    return fraction_error("stalled fraction (degraded)", stalled_fraction_degraded);
  }
  if (!is_fraction(stalled_fraction_critical)) {
    return fraction_error("stalled fraction (critical)", stalled_fraction_critical);
  }
  if (stalled_fraction_critical < stalled_fraction_degraded) {
    return "stalled fraction (critical) must not be below stalled fraction (degraded)";
  }
  if (early_leave_time < seconds{0}) return "early leave time must not be negative";
  if (!is_fraction(early_leave_fraction)) {
    return fraction_error("early leave fraction", early_leave_fraction);
  }
  if (early_leave_min_departures == 0) return "early leave min departures must be at least 1";
  if (!(early_leave_seeder_ratio >= 0.0)) return "early leave seeder ratio must not be negative";
  if (!is_fraction(abusive_fraction)) return fraction_error("abusive fraction", abusive_fraction);
  if (!is_fraction(unreachable_fraction)) {
    return fraction_error("unreachable fraction", unreachable_fraction);
  }
  if (!(flash_crowd_factor > 0.0)) return "flash crowd factor must be positive";
  if (recovery_evaluations == 0) return "recovery evaluations must be at least 1";
  if (progress_sample_size == 0 || progress_sample_size > (1u << 20)) {
    return "progress sample size must be between 1 and 1048576";
  }
  return {};
}

// --- health_sample ----------------------------------------------------------

health_sample::health_sample(std::size_t capacity, std::uint64_t seed)
    : capacity_(capacity), seed_(seed), rng_state_(seed) {}

void health_sample::reset(std::size_t capacity, std::uint64_t seed) {
  capacity_ = capacity;
  seed_ = seed;
  clear();
}

void health_sample::add(const peer_traits& t, bool seeder) {
  const bool partial = !seeder && t.has(flag_partial_seed);
  if (seeder) {
    ++seeders_;
  } else if (partial) {
    ++partial_seeds_;
  } else {
    ++leechers_;
    if (t.has(flag_stalled)) ++stalled_;
  }
  if (t.has(flag_quarantined)) ++quarantined_;
  if (t.has(flag_unreachable)) ++unreachable_;
  if (t.has(flag_reachable)) ++reachable_;
  if (t.strikes > 0 || t.has(flag_warned)) ++abusive_;
  if (t.has(flag_poor_contributor)) ++poor_contributors_;
  if (!seeder && !partial && t.progress >= 0.0f && capacity_ > 0) {
    // Reservoir sampling (Algorithm R): after n offers every value was kept
    // with probability capacity / n.
    ++progress_seen_;
    if (progress_.size() < capacity_) {
      progress_.push_back(t.progress);
    } else {
      const std::uint64_t j = splitmix64(rng_state_) % progress_seen_;
      if (j < capacity_) progress_[static_cast<std::size_t>(j)] = t.progress;
    }
  }
}

void health_sample::clear() {
  seeders_ = leechers_ = partial_seeds_ = stalled_ = quarantined_ = unreachable_ = reachable_ = abusive_ =
      poor_contributors_ = progress_seen_ = 0;
  rng_state_ = seed_;
  progress_.clear();
}

float health_sample::progress_quantile(double q) const {
  std::vector<float> sorted = progress_;
  std::sort(sorted.begin(), sorted.end());
  return quantile_sorted(sorted, q);
}

// --- swarm_health_tracker ---------------------------------------------------

namespace {

/// The window and bucket a tracker works with: at least 1 s each, the
/// bucket no longer than the window.
health_config normalised(health_config cfg) {
  cfg.window = std::max(cfg.window, seconds{1});
  cfg.bucket = std::clamp(cfg.bucket, seconds{1}, cfg.window);
  return cfg;
}

}  // namespace

swarm_health_tracker::swarm_health_tracker(health_config cfg) { set_config(cfg); }

swarm_health_tracker swarm_health_tracker::on_shared(std::shared_ptr<const health_config> cfg) {
  const health_config n = normalised(*cfg);
  if (n.window != cfg->window || n.bucket != cfg->bucket) {
    return swarm_health_tracker(n);
  }
  return swarm_health_tracker(shared_tag{}, std::move(cfg));
}

swarm_health_tracker::swarm_health_tracker(shared_tag, std::shared_ptr<const health_config> cfg)
    : cfg_(std::move(cfg)) {
  init_layout();
}

void swarm_health_tracker::set_config(health_config cfg) {
  cfg = normalised(cfg);
  const bool same_layout =
      slots_ != 0 && cfg.window == cfg_->window && cfg.bucket == cfg_->bucket;
  cfg_ = std::make_shared<const health_config>(cfg);
  if (!same_layout) {
    init_layout();
  }
}

void swarm_health_tracker::init_layout() {
  slots_ = (cfg_->window.count() + cfg_->bucket.count() - 1) / cfg_->bucket.count();
  ring_.clear();
  ring_.shrink_to_fit();
}

std::size_t swarm_health_tracker::list_limit() const noexcept {
  // A list scan touches every entry; past a quarter of the ring (at least
  // 4) the ring's direct slot is cheaper. Always below the ring's size, so
  // `is_ring` tells the two apart.
  const auto quarter = static_cast<std::size_t>(slots_ / 4);
  return std::min(static_cast<std::size_t>(slots_ - 1), std::max<std::size_t>(4, quarter));
}

const swarm_health_tracker::bucket* swarm_health_tracker::find_slot(
    std::int64_t epoch) const noexcept {
  const std::size_t r = residue(epoch);
  if (is_ring()) {
    return &ring_[r];
  }
  for (const bucket& b : ring_) {
    if (residue(b.epoch) == r) {
      return &b;
    }
  }
  return nullptr;
}

swarm_health_tracker::bucket* swarm_health_tracker::find_slot(std::int64_t epoch) noexcept {
  return const_cast<bucket*>(static_cast<const swarm_health_tracker*>(this)->find_slot(epoch));
}

swarm_health_tracker::bucket& swarm_health_tracker::slot(std::int64_t epoch) {
  if (bucket* b = find_slot(epoch)) {
    return *b;
  }
  if (ring_.size() >= list_limit()) {
    drop_old(epoch);
  }
  if (ring_.size() < list_limit()) {
    ring_.push_back(bucket{});
    return ring_.back();
  }
  // The list is full: the ring, with every bucket in its slot.
  std::vector<bucket> ring(static_cast<std::size_t>(slots_));
  for (const bucket& b : ring_) {
    ring[residue(b.epoch)] = b;
  }
  ring_.swap(ring);
  return ring_[residue(epoch)];
}

void swarm_health_tracker::drop_old(std::int64_t e) {
  // Buckets at or before e - slots are outside every window from e on: a
  // later event in their slot would replace them anyway, and no total or
  // export from e on counts them.
  const auto old = [&](const bucket& b) { return b.epoch <= e - slots_; };
  if (is_ring()) {
    const auto live = static_cast<std::size_t>(
        std::count_if(ring_.begin(), ring_.end(), [&](const bucket& b) { return !old(b); }));
    if (live > list_limit() / 2) {
      return;  // busy: keep the ring
    }
    std::vector<bucket> list;
    list.reserve(live);
    for (const bucket& b : ring_) {
      if (!old(b)) list.push_back(b);
    }
    ring_.swap(list);
    return;
  }
  ring_.erase(std::remove_if(ring_.begin(), ring_.end(), old), ring_.end());
  if (ring_.empty()) {
    ring_.shrink_to_fit();
  }
}

void swarm_health_tracker::compact(health_time now) {
  drop_old(epoch_of(now));
  if (!is_ring() && ring_.capacity() > ring_.size()) {
    std::vector<bucket>(ring_.begin(), ring_.end()).swap(ring_);
  }
}

std::int64_t swarm_health_tracker::epoch_of(health_time t) const noexcept {
  const auto width = std::chrono::duration_cast<health_clock::duration>(cfg_->bucket).count();
  const auto ticks = t.time_since_epoch().count();
  // Floor division: tests may use times before the clock's epoch.
  std::int64_t e = ticks / width;
  if (ticks % width != 0 && ticks < 0) --e;
  return e;
}

void swarm_health_tracker::prefetch(health_time now) const noexcept {
  if (ring_.empty()) return;
  const bucket* b = ring_.data();
  if (is_ring()) {
    b += residue(epoch_of(now));
  } else {
    __builtin_prefetch(reinterpret_cast<const char*>(b) + 64);  // a list spans a line or two
  }
  __builtin_prefetch(b);
}

swarm_health_tracker::bucket* swarm_health_tracker::bucket_at(health_time now) {
  const std::int64_t e = epoch_of(now);
  bucket* found = find_slot(e);
  if (found == nullptr && e < -1) {
    return nullptr;  // an unused slot (epoch -1) is newer: as the ring's refuses
  }
  bucket& b = found != nullptr ? *found : slot(e);
  if (b.epoch > e) {
    // An event older than the slot's current bucket: it fell out of the
    // window already (callers feed time in order; this only guards misuse).
    return nullptr;
  }
  if (b.epoch != e) {
    b = bucket{};
    b.epoch = e;
  }
  return &b;
}

swarm_health_tracker::portable_state swarm_health_tracker::export_state(health_time now) const {
  portable_state s;
  const std::int64_t e = epoch_of(now);
  const std::int64_t n = slots_;
  // In ring slot order; a slot without a bucket is an unused one (epoch -1).
  const bucket unused{};
  for (std::int64_t r = 0; r < n; ++r) {
    const bucket* found = find_slot(r);
    const bucket& b = found != nullptr ? *found : unused;
    if (b.epoch <= e - n || b.epoch > e) continue;  // empty or outside the window
    s.bucket_ages.push_back(e - b.epoch);
    s.bucket_counts.insert(s.bucket_counts.end(), {b.announces, b.completions, b.arrivals,
                                                   b.completed_departures, b.early_departures});
  }
  s.torrent_size = torrent_size_;
  if (watched_since_) {
    s.watched_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *watched_since_).count();
  }
  s.last = last_;
  s.raw_state = static_cast<std::uint8_t>(raw_state_);
  s.raw_reasons = raw_reasons_;
  const streaks none;
  const streaks& st = streaks_.has_value() ? *streaks_.get() : none;
  s.better_streak = st.better;
  s.absent_streak.assign(st.absent.begin(), st.absent.end());
  return s;
}

void swarm_health_tracker::import_state(const portable_state& s, health_time now) {
  const auto clamp_state = [](std::uint8_t v) {
    return v <= static_cast<std::uint8_t>(swarm_health::unevaluated)
               ? static_cast<swarm_health>(v)
               : swarm_health::unevaluated;
  };
  constexpr std::uint32_t all_reasons = (1u << health_reason_count) - 1;
  ring_.clear();
  const std::int64_t e = epoch_of(now);
  const std::int64_t n = slots_;
  for (std::size_t i = 0; i < s.bucket_ages.size() && 5 * i + 4 < s.bucket_counts.size(); ++i) {
    const std::int64_t age = s.bucket_ages[i];
    if (age < 0 || age >= n) continue;
    bucket& b = slot(e - age);
    b.epoch = e - age;
    b.announces = s.bucket_counts[5 * i];
    b.completions = s.bucket_counts[5 * i + 1];
    b.arrivals = s.bucket_counts[5 * i + 2];
    b.completed_departures = s.bucket_counts[5 * i + 3];
    b.early_departures = s.bucket_counts[5 * i + 4];
  }
  torrent_size_ = s.torrent_size;
  watched_since_.reset();
  if (s.watched_ms >= 0) watched_since_ = now - std::chrono::milliseconds(s.watched_ms);
  last_ = s.last;
  last_.state = clamp_state(static_cast<std::uint8_t>(s.last.state));
  last_.reasons &= all_reasons;
  last_.at = now;
  changed_ = false;
  raw_state_ = clamp_state(s.raw_state);
  raw_reasons_ = s.raw_reasons & all_reasons;
  streaks& st = streaks_.ensure();
  st = streaks{};
  st.better = s.better_streak;
  for (std::size_t i = 0; i < st.absent.size() && i < s.absent_streak.size(); ++i) {
    st.absent[i] = s.absent_streak[i];
  }
  if (st.zero()) streaks_.reset();
}

void swarm_health_tracker::note_time(health_time now) {
  if (!watched_since_ || now < *watched_since_) watched_since_ = now;
}

void swarm_health_tracker::on_announce(const peer_traits& after, bool is_new, bool seeder,
                                       health_time now) {
  note_time(now);
  if (bucket* b = bucket_at(now)) {
    ++b->announces;
    if (is_new && !seeder && !after.has(flag_partial_seed)) ++b->arrivals;
  }
  if (!after.has(flag_quarantined)) observe_size(after.left, after.downloaded);
}

void swarm_health_tracker::on_completed(health_time now) {
  note_time(now);
  if (bucket* b = bucket_at(now)) ++b->completions;
}

void swarm_health_tracker::on_peer_left(const peer_traits& t, bool seeder, health_time now) {
  note_time(now);
  if (!seeder || !t.completed_at) return;
  if (bucket* b = bucket_at(now)) {
    ++b->completed_departures;
    if (since(*t.completed_at, now) <= cfg_->early_leave_time) ++b->early_departures;
  }
}

void swarm_health_tracker::observe_size(std::uint64_t left, std::uint64_t downloaded) {
  torrent_size_ = std::max(torrent_size_, saturating_add(left, downloaded));
}

swarm_health_tracker::window_totals swarm_health_tracker::totals(health_time now) const {
  window_totals out;
  const std::int64_t e = epoch_of(now);
  const std::int64_t n = slots_;
  // Unused buckets hold zeros, so their epoch (-1) does not matter.
  for (const bucket& b : ring_) {
    if (b.epoch > e - n && b.epoch <= e) {
      out.announces += b.announces;
      out.completions += b.completions;
      out.arrivals += b.arrivals;
      out.completed_departures += b.completed_departures;
      out.early_departures += b.early_departures;
    }
  }
  return out;
}

const health_report& swarm_health_tracker::evaluate(const health_sample& s, health_time now) {
  note_time(now);
  const health_config& cfg = *cfg_;
  const window_totals tot = totals(now);
  const auto watched = since(*watched_since_, now);

  // Rates over the time actually covered: the whole window once it is full,
  // the watched time before that (at least one bucket, so a fresh tracker's
  // first event is not a huge rate).
  const double span = std::clamp(std::chrono::duration<double>(watched).count(),
                                 static_cast<double>(cfg.bucket.count()),
                                 static_cast<double>(cfg.window.count()));

  const std::uint64_t seeders = s.seeders();
  const std::uint64_t leechers = s.leechers();
  const std::uint64_t peers = s.peers();
  auto ratio = [](std::uint64_t a, std::uint64_t b) {
    return b == 0 ? 0.0 : static_cast<double>(a) / static_cast<double>(b);
  };

  std::uint32_t reasons = 0;
  swarm_health raw = swarm_health::healthy;
  auto raise = [&](std::uint32_t reason, swarm_health level) {
    reasons |= reason;
    raw = std::max(raw, level);
  };

  const bool evaluated = peers >= cfg.min_peers;
  if (evaluated) {
    if (seeders == 0 && leechers > 0) raise(reason_no_seeders, swarm_health::critical);
    const bool few_seeders =
        seeders > 0 && leechers > 0 && ratio(seeders, leechers) < cfg.min_seeder_ratio;
    if (few_seeders) raise(reason_few_seeders, swarm_health::degraded);

    if (leechers > 0) {
      const double stalled = ratio(s.stalled(), leechers);
      if (stalled >= cfg.stalled_fraction_critical) {
        raise(reason_stalled_leechers, swarm_health::critical);
      } else if (stalled >= cfg.stalled_fraction_degraded) {
        raise(reason_stalled_leechers, swarm_health::degraded);
      }
    }
    if (tot.completed_departures >= cfg.early_leave_min_departures &&
        ratio(tot.early_departures, tot.completed_departures) >= cfg.early_leave_fraction &&
        leechers > 0 && ratio(seeders, leechers) < cfg.early_leave_seeder_ratio) {
      raise(reason_seeders_leave_early, swarm_health::degraded);
    }
    if (leechers >= cfg.low_completion_min_leechers && tot.completions == 0 &&
        watched >= cfg.window) {
      raise(reason_low_completion_rate, swarm_health::degraded);
    }
    if (ratio(s.abusive(), peers) >= cfg.abusive_fraction) {
      raise(reason_abusive_clients, swarm_health::degraded);
    }
    const std::uint64_t probed = s.reachable() + s.unreachable();
    if (probed >= cfg.min_peers && ratio(s.unreachable(), probed) >= cfg.unreachable_fraction) {
      raise(reason_unreachable_peers, swarm_health::degraded);
    }
    const double capacity = static_cast<double>(std::max<std::uint64_t>(seeders, 1));
    if (tot.arrivals >= cfg.flash_crowd_min_arrivals &&
        static_cast<double>(tot.arrivals) >= cfg.flash_crowd_factor * capacity &&
        (seeders == 0 || few_seeders)) {
      raise(reason_flash_crowd, swarm_health::degraded);
    }
  } else {
    raw = swarm_health::unevaluated;
  }
  raw_state_ = raw;
  raw_reasons_ = reasons;

  // Hysteresis, between evaluated states only: worse at once, better after
  // `recovery_evaluations` in a row; each reason lingers until absent that
  // many evaluations in a row. Too few peers is a fact, not a trend: the
  // swarm is unevaluated at once and judged afresh when it grows.
  const std::uint32_t needed = std::max<std::uint32_t>(cfg.recovery_evaluations, 1);
  const swarm_health prev_state = last_.state;
  const std::uint32_t prev_reasons = last_.reasons;
  swarm_health state = prev_state;
  std::uint32_t reported = 0;
  if (!evaluated || prev_state == swarm_health::unevaluated) {
    state = raw;
    reported = reasons;
    streaks_.reset();
  } else {
    streaks& st = streaks_.ensure();
    if (raw >= prev_state || ++st.better >= needed) {
      state = raw;
      st.better = 0;
    }
    for (int i = 0; i < health_reason_count; ++i) {
      const std::uint32_t bit = 1u << i;
      auto& absent = st.absent[static_cast<std::size_t>(i)];
      if ((reasons & bit) != 0) {
        absent = 0;
        reported |= bit;
      } else if ((prev_reasons & bit) != 0 && ++absent < needed) {
        reported |= bit;
      } else {
        absent = 0;
      }
    }
    if (st.zero()) streaks_.reset();
  }

  health_report r;
  r.state = state;
  r.reasons = reported;
  r.seeders = seeders;
  r.leechers = leechers;
  r.partial_seeds = s.partial_seeds();
  r.stalled = s.stalled();
  r.quarantined = s.quarantined();
  r.completion_rate = static_cast<double>(tot.completions) * 3600.0 / span;
  r.announce_rate = static_cast<double>(tot.announces) / span;
  std::vector<float> sorted = s.progress_values();
  std::sort(sorted.begin(), sorted.end());
  r.progress_p25 = quantile_sorted(sorted, 0.25);
  r.progress_median = quantile_sorted(sorted, 0.5);
  r.progress_p75 = quantile_sorted(sorted, 0.75);
  r.at = now;

  // Healthy and unevaluated both ask nothing of the supervisor: moving
  // between them is not worth a report (a public tracker has millions of
  // small swarms growing and shrinking).
  const auto quiet = [](swarm_health h) { return !is_unhealthy(h); };
  changed_ = reported != prev_reasons ||
             (state != prev_state && !(quiet(state) && quiet(prev_state)));
  last_ = r;
  // The window from now on: what left it is not needed any more.
  drop_old(epoch_of(now));
  return last_;
}

}  // namespace sk
