#pragma once
/// Plain data of the self-healing glue: the knobs remediation turns on one
/// swarm, the records of what it did, and the supervisor's event log.
///
/// No CAF here (the `inspect()` overloads live in runtime/messages.hpp), so
/// the swarm core, the remediation plan and the simulator can share them.

#include <chrono>
#include <cstdint>
#include <string>

#include "tracker/health_types.hpp"
#include "protocol/types.hpp"

namespace sk {

/// What remediation (or an operator) may change on one running swarm. Every
/// swarm starts from `swarm_config::default_knobs()`; the knobs live in the
/// swarm core, so they survive a restart of the swarm actor.
struct swarm_knobs {
  /// Allocation policy of every announce.
  policy_kind policy = policy_kind::adaptive;
  /// Factor on the announce interval of every peer (after the automatic
  /// interval control), (0, 4]. Clamped to [min interval, peer timeout -
  /// min interval] like every interval.
  double interval_scale = 1.0;
  /// Factor on the interval of leechers only, (0, 4]: remediation shortens
  /// it for starving swarms so leechers learn of new seeders sooner.
  double leecher_interval_scale = 1.0;
  /// Send seeders the "please keep seeding" warning whatever the health
  /// state (the swarm also sends it on its own while degraded, see
  /// `swarm_config::warn_seeders_when_degraded`).
  bool seeder_warning = false;
  /// Quarantine after the first counter/key strike instead of
  /// `behaviour_config::quarantine_strikes`, and refuse the first early
  /// announce instead of warning.
  bool quarantine_strict = false;

  friend bool operator==(const swarm_knobs& a, const swarm_knobs& b) noexcept {
    return a.policy == b.policy && a.interval_scale == b.interval_scale &&
           a.leecher_interval_scale == b.leecher_interval_scale &&
           a.seeder_warning == b.seeder_warning && a.quarantine_strict == b.quarantine_strict;
  }
  friend bool operator!=(const swarm_knobs& a, const swarm_knobs& b) noexcept { return !(a == b); }
};

/// Largest accepted interval scale (either knob).
constexpr double max_interval_scale = 4.0;

/// "policy flash-crowd, interval x1, leecher interval x0.5, seeder warning
/// on, quarantine normal": logs and history.
std::string to_string(const swarm_knobs& k);

/// The signals remediation compares before and after an action.
struct health_signals {
  swarm_health state = swarm_health::healthy;
  std::uint32_t reasons = 0;
  std::uint64_t seeders = 0;
  std::uint64_t leechers = 0;
  std::uint64_t stalled = 0;
  double completion_rate = 0.0;

  static health_signals of(const health_report& r) noexcept {
    return {r.state, r.reasons, r.seeders, r.leechers, r.stalled, r.completion_rate};
  }
};

/// "critical [no-seeders,stalled-leechers] 0 seeders, 12 leechers (9
/// stalled), 0.0 completions/h".
std::string to_string(const health_signals& s);

/// One remediation action, with why and what it did.
struct remediation_record {
  /// Swarm time (the health report's `at`) of the action.
  health_time at{};
  /// start, apply, escalate, keep, rollback, exhausted, end.
  std::string action;
  /// The strategy acted on ("" for start/exhausted/end).
  std::string strategy;
  /// Why: the health reasons that chose it, or the measured verdict.
  std::string reason;
  /// What changed: the knobs after the action.
  std::string detail;
  /// Signals when the strategy was applied (or the remediation started) ...
  health_signals before;
  /// ... and when it was judged (equal to `before` for apply/start).
  health_signals after;
};

/// "apply stalled-boost (stalled-leechers): policy stalled-boost, ...; before
/// ..., after ...": one log line per action.
std::string to_string(const remediation_record& r);

/// Something the supervisor did or saw (bounded ring, admin API).
struct supervisor_event {
  health_time at{};
  info_hash hash;
  /// restart, restart-fresh (state was broken: empty swarm), give-up,
  /// remediation-started, remediation-stop, remediation-ended, health, and
  /// the operator's changes: operator-policy, operator-ban, operator-unban,
  /// operator-access, operator-move (`hash` is all zeros for a change that
  /// concerns no one swarm, such as a ban).
  std::string kind;
  std::string detail;
};

}  // namespace sk
