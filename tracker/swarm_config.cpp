#include "tracker/swarm_config.hpp"

#include "tracker/peer_index_address.hpp"

#include <limits>
#include <utility>

namespace sk {

namespace {

std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + " s"; }

}  // namespace

std::string swarm_config::validate() const {
  using std::chrono::seconds;
  if (announce_interval <= seconds{0}) {
    return "announce interval must be positive (got " + seconds_text(announce_interval) + ")";
  }
  if (min_interval <= seconds{0}) {
    return "min interval must be positive (got " + seconds_text(min_interval) + ")";
  }
  if (min_interval > announce_interval) {
    return "min interval (" + seconds_text(min_interval) +
           ") must not exceed the announce interval (" + seconds_text(announce_interval) + ")";
  }
  if (max_numwant < 1 || max_numwant > 10000) {
    return "max numwant must be between 1 and 10000 (got " + std::to_string(max_numwant) + ")";
  }
  if (default_numwant < 0 || default_numwant > max_numwant) {
    return "default numwant must be between 0 and max numwant " + std::to_string(max_numwant) +
           " (got " + std::to_string(default_numwant) + ")";
  }
  // A timeout at or below the interval would drop peers that announce on
  // schedule; the interval itself leaves no room for a late announce.
  if (peer_timeout <= announce_interval) {
    return "peer timeout (" + seconds_text(peer_timeout) +
           ") must be longer than the announce interval (" + seconds_text(announce_interval) +
           "), or peers announcing on time expire";
  }
  if (sweep_period <= seconds{0}) {
    return "sweep period must be positive (got " + seconds_text(sweep_period) + ")";
  }
  if (sweep_batch == 0) {
    return "sweep batch must be at least 1 peer";
  }
  if (idle_lifetime < seconds{0}) {
    return "idle swarm lifetime must not be negative (got " + seconds_text(idle_lifetime) + ")";
  }
  if (hibernate_after < seconds{0}) {
    return "hibernate-after must not be negative (got " + seconds_text(hibernate_after) + ")";
  }
  // Peer indices are 32-bit (see peer_table).
  if (max_peers == 0 || max_peers >= std::numeric_limits<std::uint32_t>::max()) {
    return "max peers per swarm must be between 1 and 4294967294 (got " +
           std::to_string(max_peers) + ")";
  }
  if (max_peers_per_address > address_counts::max_count) {
    return "max peers per address must be between 0 and " +
           std::to_string(address_counts::max_count) + " (got " +
           std::to_string(max_peers_per_address) + ")";
  }
  if (address_full_retry_in_minutes < 1) {
    return "retry in for a full address must be at least 1 minute";
  }
  if (busy_retry_in_minutes < 1) {
    return "retry in for a busy swarm must be at least 1 minute";
  }
  if (health_tick <= seconds{0}) {
    return "health tick must be positive (got " + seconds_text(health_tick) + ")";
  }
  if (auto err = behaviour.validate(); !err.empty()) {
    return err;
  }
  if (auto err = health.validate(); !err.empty()) {
    return err;
  }
  if (auto err = allocation.validate(); !err.empty()) {
    return err;
  }
  // NaN fails every comparison below, so it is rejected too.
  if (!(intervals.starving_leecher_scale > 0.0 && intervals.starving_leecher_scale <= 1.0)) {
    return "starving leecher interval scale must be in (0, 1] (got " +
           std::to_string(intervals.starving_leecher_scale) + ")";
  }
  if (!(intervals.unreachable_leecher_scale > 0.0 && intervals.unreachable_leecher_scale <= 1.0)) {
    return "unreachable leecher interval scale must be in (0, 1] (got " +
           std::to_string(intervals.unreachable_leecher_scale) + ")";
  }
  if (!(intervals.large_swarm_scale >= 1.0 && intervals.large_swarm_scale <= max_interval_scale)) {
    return "large swarm interval scale must be in [1, 4] (got " +
           std::to_string(intervals.large_swarm_scale) + ")";
  }
  if (intervals.large_swarm_peers == 0) {
    return "large swarm peers must be at least 1";
  }
  if (!(intervals.jitter >= 0.0 && intervals.jitter <= 0.5)) {
    return "interval jitter must be in [0, 0.5] (got " + std::to_string(intervals.jitter) + ")";
  }
  if (probe.reprobe_after <= seconds{0}) {
    return "probe re-probe period must be positive (got " + seconds_text(probe.reprobe_after) + ")";
  }
  if (probe.max_outstanding == 0) {
    return "probes outstanding per swarm must be at least 1";
  }
  if (probe.result_timeout <= seconds{0}) {
    return "probe result timeout must be positive (got " + seconds_text(probe.result_timeout) + ")";
  }
  if (history_size == 0) {
    return "remediation history size must be at least 1";
  }
  if (seeder_warning_text.empty() && warn_seeders_when_degraded) {
    return "seeder warning text must not be empty while seeder warnings are on";
  }
  return {};
}

namespace {

// Each comparison names every field; the size checks fail when a field is
// added (compare it here, then update the size).
#if defined(__x86_64__) && defined(__GLIBCXX__)
static_assert(sizeof(behaviour_config) == 104, "a behaviour_config field was added: compare it");
static_assert(sizeof(health_config) == 136, "a health_config field was added: compare it");
static_assert(sizeof(allocation_config) == 80, "an allocation_config field was added: compare it");
static_assert(sizeof(interval_control) == 40, "an interval_control field was added: compare it");
static_assert(sizeof(probe_settings) == 32, "a probe_settings field was added: compare it");
static_assert(sizeof(swarm_config) == 592, "a swarm_config field was added: compare it");
#endif

bool same(const behaviour_config& a, const behaviour_config& b) noexcept {
  return a.min_interval == b.min_interval && a.early_announce_slack == b.early_announce_slack &&
         a.early_announce_slack_fraction == b.early_announce_slack_fraction &&
         a.early_warn_after == b.early_warn_after && a.early_refuse_after == b.early_refuse_after &&
         a.duplicate_window == b.duplicate_window && a.counter_noise == b.counter_noise &&
         a.stall_announces == b.stall_announces && a.stall_time == b.stall_time &&
         a.max_rate_bytes_per_second == b.max_rate_bytes_per_second &&
         a.min_rate_interval == b.min_rate_interval &&
         a.quarantine_strikes == b.quarantine_strikes &&
         a.poor_contributor_min_downloaded == b.poor_contributor_min_downloaded &&
         a.poor_contributor_ratio == b.poor_contributor_ratio;
}

bool same(const health_config& a, const health_config& b) noexcept {
  return a.window == b.window && a.bucket == b.bucket && a.min_peers == b.min_peers &&
         a.min_seeder_ratio == b.min_seeder_ratio &&
         a.stalled_fraction_degraded == b.stalled_fraction_degraded &&
         a.stalled_fraction_critical == b.stalled_fraction_critical &&
         a.early_leave_time == b.early_leave_time &&
         a.early_leave_fraction == b.early_leave_fraction &&
         a.early_leave_min_departures == b.early_leave_min_departures &&
         a.early_leave_seeder_ratio == b.early_leave_seeder_ratio &&
         a.low_completion_min_leechers == b.low_completion_min_leechers &&
         a.abusive_fraction == b.abusive_fraction &&
         a.unreachable_fraction == b.unreachable_fraction &&
         a.flash_crowd_factor == b.flash_crowd_factor &&
         a.flash_crowd_min_arrivals == b.flash_crowd_min_arrivals &&
         a.recovery_evaluations == b.recovery_evaluations &&
         a.progress_sample_size == b.progress_sample_size;
}

bool same(const allocation_config& a, const allocation_config& b) noexcept {
  return a.flash_crowd_seeder_ratio == b.flash_crowd_seeder_ratio &&
         a.flash_crowd_min_leechers == b.flash_crowd_min_leechers &&
         a.flash_crowd_reveal == b.flash_crowd_reveal &&
         a.flash_crowd_seeders_per_reply == b.flash_crowd_seeders_per_reply &&
         a.leecher_seeder_share == b.leecher_seeder_share &&
         a.stalled_boost_fraction == b.stalled_boost_fraction &&
         a.contribution_weight == b.contribution_weight &&
         a.contribution_floor == b.contribution_floor &&
         a.candidate_oversampling == b.candidate_oversampling &&
         a.flash_crowd_oversampling == b.flash_crowd_oversampling &&
         a.extra_draws_per_peer == b.extra_draws_per_peer &&
         a.max_address_share == b.max_address_share;
}

bool same(const interval_control& a, const interval_control& b) noexcept {
  return a.starving_leecher_scale == b.starving_leecher_scale &&
         a.large_swarm_peers == b.large_swarm_peers && a.large_swarm_scale == b.large_swarm_scale &&
         a.jitter == b.jitter && a.unreachable_leecher_scale == b.unreachable_leecher_scale;
}

bool same(const probe_settings& a, const probe_settings& b) noexcept {
  return a.enabled == b.enabled && a.reprobe_after == b.reprobe_after &&
         a.max_outstanding == b.max_outstanding && a.result_timeout == b.result_timeout;
}

}  // namespace

bool same_config(const swarm_config& a, const swarm_config& b) noexcept {
  return a.announce_interval == b.announce_interval && a.min_interval == b.min_interval &&
         a.default_numwant == b.default_numwant && a.max_numwant == b.max_numwant &&
         a.peer_timeout == b.peer_timeout && a.sweep_period == b.sweep_period &&
         a.sweep_batch == b.sweep_batch && a.idle_lifetime == b.idle_lifetime &&
         a.hibernate_after == b.hibernate_after &&
         a.hibernations_per_second == b.hibernations_per_second &&
         a.max_peers == b.max_peers && a.max_peers_per_address == b.max_peers_per_address &&
         a.address_full_retry_in_minutes == b.address_full_retry_in_minutes &&
         a.max_backlog == b.max_backlog && a.busy_retry_in_minutes == b.busy_retry_in_minutes &&
         a.rng_seed == b.rng_seed &&
         a.health_tick == b.health_tick && same(a.behaviour, b.behaviour) &&
         same(a.health, b.health) && same(a.allocation, b.allocation) &&
         a.default_policy == b.default_policy && same(a.intervals, b.intervals) &&
         a.banned_retry_in_minutes == b.banned_retry_in_minutes &&
         a.warn_seeders_when_degraded == b.warn_seeders_when_degraded &&
         a.seeder_warning_text == b.seeder_warning_text && same(a.probe, b.probe) &&
         a.history_size == b.history_size && a.test_hooks == b.test_hooks;
}

swarm_settings::swarm_settings(swarm_config cfg, node_shared n)
    : config(std::move(cfg)), node(std::move(n)) {
  behaviour = config.behaviour;
  // The detectors judge against the min interval the swarm announces.
  behaviour.min_interval = config.min_interval;
  strict_behaviour = behaviour;
  strict_behaviour.quarantine_strikes = 1;
  strict_behaviour.early_refuse_after = 1;
}

swarm_settings_ptr share_settings(const swarm_config& cfg) {
  // Weak: the cache keeps no settings alive.
  thread_local std::weak_ptr<const swarm_settings> last;
  if (auto s = last.lock(); s && same_config(s->config, cfg)) {
    return s;
  }
  auto s = std::make_shared<const swarm_settings>(cfg);
  last = s;
  return s;
}

}  // namespace sk
