#pragma once
/// Remediation: what to do about one unhealthy swarm, as a plain state
/// machine driven by health reports (the strategies). The actor that applies
/// its decisions to a swarm is runtime/remediation_actor.hpp.
///
/// Strategies (chosen from the report's reasons, in this priority order; a
/// reason's strategies are tried one after another):
///
///   reasons                              strategy           knobs it sets
///   abusive-clients                      strict-quarantine  quarantine_strict
///   stalled-leechers, low-completion     stalled-boost      policy stalled-boost,
///                                                           leecher interval x scale
///   no-seeders, few-seeders, flash-crowd flash-crowd        policy flash-crowd,
///                                                           seeder warning,
///                                                           leecher interval x scale
///                                        seeder-rotation    policy seeder-rotation,
///                                                           seeder warning
///   seeders-leave-early                  keep-seeding       seeder warning
///   unreachable-peers                    reachability       policy reachability-aware
///
/// The state machine (one strategy on trial at a time):
///
///                 unhealthy report, untried strategy left
///   watching ─────────────────────────────────────────────▶ trial(s)
///      ▲  ▲                                                   │ watch_ticks reports and
///      │  │                                                   │ watch_time later:
///      │  │                     helped (badness fell, or      │
///      │  └──── keep s ◀─────── healthy now)  ◀───────────────┤
///      │                                                      │
///      └─────── rollback s ◀─── did not help ◀────────────────┘
///
///   Escalation: while still unhealthy after a trial, the next untried
///   strategy is applied on top of those kept (a strategy whose policy would
///   replace a kept strategy's policy is skipped). No strategy left:
///   "exhausted" is recorded once; kept strategies stay.
///   Healthy (every report) for `healthy_time`: every knob goes back to the
///   baseline, "end" is recorded, the plan is done. An unevaluated report
///   (fewer peers than the health model judges) counts as "not unhealthy"
///   like a healthy one: nothing is left to judge.
///
///   The baseline is what the swarm ran before: the config's defaults, with
///   the operator's policy when one is pinned. A pinned policy is never
///   replaced: strategies still turn their other knobs, and a strategy that
///   only sets a policy (reachability) is not tried.
///
/// "Badness" of a report (lower is better): 100 x severity (0 healthy or
/// unevaluated, 1 degraded, 2 critical) + 10 x reasons set
/// + 10 x stalled/leechers + 5 x (no seeders) - min(completion_rate, 5). A
/// trial helped when badness fell by at least `min_improvement`.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracker/healing_types.hpp"
#include "tracker/health_types.hpp"
#include "protocol/types.hpp"

namespace sk {

/// Remediation tunables (shared by every remediation actor of a node).
struct remediation_config {
  /// Health reports (ticks) after applying a strategy before judging it. 3:
  /// with the default 1-minute tick, clients announcing every 15-30 min have
  /// not all come back yet, but the trend of stalled/seeder counts shows.
  std::uint32_t watch_ticks = 3;
  /// ... and at least this long: clients see a change (new peers, a new
  /// interval) only when they announce again. 0 (the default): the swarm's
  /// announce interval, filled in by the supervisor when it spawns the
  /// remediation (the plan itself takes 0 as "ticks only").
  std::chrono::seconds watch_time{0};
  /// Healthy this long (every report) ends the remediation and restores the
  /// defaults. 10 min.
  std::chrono::seconds healthy_time{600};
  /// Leecher interval factor of the starving strategies, (0, 1]. 0.5.
  double leecher_interval_scale = 0.5;
  /// Badness drop that counts as "helped" (see the header comment). 1.0: one
  /// reason fewer, or a tenth of the leechers no longer stalled.
  double min_improvement = 1.0;

  /// Empty when usable, otherwise one sentence naming the first bad field.
  std::string validate() const;
};

/// The strategies (see the header comment).
enum class strategy : std::uint8_t {
  strict_quarantine,
  stalled_boost,
  flash_crowd,
  seeder_rotation,
  keep_seeding,
  reachability,
};

constexpr int strategy_count = 6;

/// "strict-quarantine", "stalled-boost", "flash-crowd", "seeder-rotation",
/// "keep-seeding", "reachability".
std::string_view to_string(strategy s) noexcept;

/// Strategies for `reasons`, in the order they are tried.
std::vector<strategy> candidate_strategies(std::uint32_t reasons);

/// Lower is better (see the header comment).
double badness(const health_signals& s) noexcept;

/// A running plan as plain data, so that a remediation outlives the actor
/// that runs it: the swarm keeps its remediation's latest progress, its
/// snapshot carries it (state file, migration, replicas), and the
/// supervisor that installs the swarm resumes the plan from it. Times are
/// ages in milliseconds before the moment the progress describes; -1:
/// unset. Strategies are `strategy` values.
struct remediation_progress {
  swarm_knobs baseline;
  swarm_knobs knobs;
  bool started = false;
  bool exhausted = false;
  // 16-bit, not bytes: CAF 0.17 sizes a byte vector from the length it
  // reads before reading it, other vectors element by element.
  std::vector<std::uint16_t> active;
  std::vector<std::uint16_t> tried;
  /// The strategy on trial, or -1.
  std::int16_t trial = -1;
  health_signals trial_before;
  std::int64_t trial_age_ms = -1;
  std::uint32_t trial_ticks = 0;
  health_signals start_signals;
  std::int64_t healthy_age_ms = -1;
  std::uint32_t operator_reasons = 0;
  bool policy_pinned = false;
};

/// `p` aged by `by_ms` more milliseconds (time passed since it was taken).
remediation_progress aged(remediation_progress p, std::int64_t by_ms) noexcept;

/// The decisions of one remediation, driven by health reports.
class remediation_plan {
 public:
  /// `baseline`: the swarm's knobs before remediation (restored at the end).
  /// `operator_reasons` (an operator started it, see `operator_reasons_for`):
  /// strategies are chosen from these reasons together with each report's,
  /// and tried even while the swarm reports healthy; the plan still ends,
  /// restoring the baseline, once the swarm has been healthy for
  /// `healthy_time`.
  /// `policy_pinned`: an operator pinned `baseline.policy` (see the header
  /// comment).
  remediation_plan(remediation_config cfg, swarm_knobs baseline,
                   std::uint32_t operator_reasons = 0, bool policy_pinned = false);

  /// A plan resumed from `p` (taken `now` or aged to it): the same
  /// strategies applied and tried, the same trial with its remaining watch,
  /// the same healthy streak. Strategy values out of range are dropped (the
  /// progress may come from a file).
  remediation_plan(remediation_config cfg, const remediation_progress& p, health_time now);

  /// This plan as of `now` (see `remediation_progress`).
  remediation_progress progress(health_time now) const;

  /// What one report asks for.
  struct step {
    /// Knobs to set on the swarm (whole struct); unset: no change.
    std::optional<swarm_knobs> knobs;
    /// Actions taken, for the history and the log.
    std::vector<remediation_record> records;
    /// The remediation is over (knobs are back to the baseline).
    bool done = false;
  };

  /// Feeds the swarm's report of one tick (time is `r.at`).
  step on_report(const health_report& r);

  /// Ends at once (swarm gone, shutdown): knobs back to the baseline.
  step abort(const health_report& last, const std::string& why);

  /// An operator changed the swarm's policy while the plan runs: `baseline`
  /// becomes what the end restores, and a pinned policy applies at once
  /// (strategies recomposed on top). Returns the knobs to set (none once
  /// done). Records nothing: the supervisor logs the operator's action.
  std::optional<swarm_knobs> rebase(const swarm_knobs& baseline, bool policy_pinned);

  const swarm_knobs& knobs() const noexcept { return knobs_; }
  const swarm_knobs& baseline() const noexcept { return baseline_; }
  bool policy_pinned() const noexcept { return policy_pinned_; }
  /// Strategies applied and not rolled back (the trial included).
  const std::vector<strategy>& active() const noexcept { return active_; }
  std::optional<strategy> on_trial() const noexcept { return trial_; }
  bool done() const noexcept { return done_; }

 private:
  swarm_knobs compose() const;
  bool conflicts(strategy s) const;
  remediation_record make(const health_report& r, std::string action, std::string strategy_name,
                          std::string reason) const;

  remediation_config cfg_;
  swarm_knobs baseline_;
  swarm_knobs knobs_;
  bool started_ = false;
  bool done_ = false;
  bool exhausted_ = false;
  std::vector<strategy> active_;
  std::vector<strategy> tried_;
  std::optional<strategy> trial_;
  health_signals trial_before_;
  health_time trial_since_{};
  std::uint32_t trial_ticks_ = 0;
  health_signals start_signals_;
  std::optional<health_time> healthy_since_;
  std::uint32_t operator_reasons_ = 0;
  bool policy_pinned_ = false;
};

/// The reasons an operator-started remediation works on: the swarm's own
/// when it reports any, else no-seeders-like starvation and stalled leechers
/// (`few-seeders | stalled-leechers`: "this torrent is slow" is what an
/// operator acts on), i.e. the stalled-boost, flash-crowd and
/// seeder-rotation strategies.
std::uint32_t operator_reasons_for(std::uint32_t reported) noexcept;

}  // namespace sk
