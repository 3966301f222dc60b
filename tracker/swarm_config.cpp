#include "tracker/swarm_config.hpp"

#include <limits>

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
  // Peer indices are 32-bit (see peer_table).
  if (max_peers == 0 || max_peers >= std::numeric_limits<std::uint32_t>::max()) {
    return "max peers per swarm must be between 1 and 4294967294 (got " +
           std::to_string(max_peers) + ")";
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

}  // namespace sk
