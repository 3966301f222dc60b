#pragma once
/// The remediation actor: applies a `remediation_plan`'s decisions
/// (tracker/remediation_plan.hpp) to one unhealthy swarm; one per unhealthy
/// swarm, spawned by the supervisor.

#include <cstdint>
#include <optional>

#include <caf/all.hpp>

#include "protocol/types.hpp"
#include "runtime/remediation_interface.hpp"
#include "runtime/supervisor_interface.hpp"
#include "tracker/remediation_plan.hpp"

namespace sk {

// -- the actor ------------------------------------------------------------------

/// State of a remediation actor.
struct remediation_state {
  static inline const char* name = "sk.remediation";
  info_hash hash;
  local_swarm_actor swarm;
  std::optional<remediation_plan> plan;
  health_report last;
};

using remediation_actor_ptr = remediation_actor::stateful_pointer<remediation_state>;

/// The remediation actor of one swarm.
///
/// Interface (`remediation_actor`, runtime/remediation_interface.hpp;
/// spawned typed, so every handler is checked against it):
///
///   (health_atom, info_hash, health_report)   every tick, from the swarm
///       (the supervisor registered this actor as the swarm's observer):
///       feeds the plan; sends `(knobs_atom, put_atom, swarm_knobs)` and
///       `(history_atom, put_atom, remediation_record)` to the swarm, logs
///       one info line per action; quits (normal) when the plan is done.
///   (rebind_atom, local_swarm_actor)   the supervisor restarted the swarm: the new
///       actor; the plan's knobs are sent to it again.
///   (policy_atom, put_atom, swarm_knobs baseline, bool pinned) -> std::string
///       an operator changed the policy (from the supervisor): the plan is
///       rebased (`remediation_plan::rebase`), the knobs are sent, and the
///       answer (the swarm's previous policy) comes once the swarm applied
///       them.
///   (get_atom) -> std::vector<std::string>   names of the active strategies.
///   (stop_atom) -> bool   an operator stops it: the plan aborts (knobs back
///       to the baseline, "end" recorded with "stopped by an operator"); it
///       answers once the swarm has applied the baseline knobs (or is gone)
///       and then quits normally.
///
/// It monitors `supervisor` and quits when the supervisor does.
/// `initial` (the report that made the supervisor spawn it) is processed at
/// once. `operator_reasons` is 0 for a remediation the supervisor started on
/// its own, else see `remediation_plan`, like `policy_pinned`.
///
/// After every step it sends the swarm `(progress_atom, [progress])` (an
/// empty list once done or stopped). With `resume` (the progress a restored
/// or moved swarm carried) the plan continues from there instead: `baseline`,
/// `operator_reasons` and `policy_pinned` come from the progress, `initial`
/// is only the last report known, and the next tick is judged as usual.
remediation_actor::behavior_type remediation_behavior(
    remediation_actor_ptr self, info_hash hash, local_swarm_actor swarm, remediation_config cfg,
    swarm_knobs baseline, health_report initial, supervisor_actor supervisor,
    std::uint32_t operator_reasons, bool policy_pinned,
    std::optional<remediation_progress> resume = std::nullopt);

}  // namespace sk
