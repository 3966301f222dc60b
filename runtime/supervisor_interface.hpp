#pragma once
/// What the supervisor (runtime/supervisor.hpp, one per node) accepts, as
/// typed interfaces, and the atoms of its messages.

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/message_types.hpp"
#include "runtime/swarm_interface.hpp"

namespace sk {

// Atoms (<= 10 characters, CAF 0.17).
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using events_atom = caf::atom_constant<caf::atom("events")>;
using remediate_atom = caf::atom_constant<caf::atom("remediate")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using counters_atom = caf::atom_constant<caf::atom("counters")>;
using restart_atom = caf::atom_constant<caf::atom("restart")>;
/// The operator's holds (pinned policies, hold-offs), for the state file.
using holds_atom = caf::atom_constant<caf::atom("holds")>;
using forget_atom = caf::atom_constant<caf::atom("forget")>;

/// The supervisor's operator decisions that outlive a restart: pinned
/// policies (by name), and the hold-offs after an operator stopped a
/// remediation, as time left.
struct supervisor_holds {
  std::vector<std::pair<info_hash, std::string>> pinned;
  std::vector<std::pair<info_hash, std::int64_t>> holdoff_left_ms;
  bool empty() const noexcept { return pinned.empty() && holdoff_left_ms.empty(); }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, supervisor_holds& x) {
  return f(caf::meta::type_name("supervisor_holds"), x.pinned, x.holdoff_left_ms);
}

/// The supervisor's operator calls about one swarm. A remote handle
/// implements them too, for its swarm: they go to the supervisor of the
/// node that owns it (runtime/placement.hpp).
using swarm_supervision_interface = caf::typed_actor<
    caf::replies_to<restart_atom, info_hash>::with<std::string>,
    caf::replies_to<policy_atom, caf::put_atom, info_hash, std::string>::with<policy_change>,
    caf::replies_to<policy_atom, caf::get_atom, info_hash>::with<bool>,
    caf::replies_to<remediate_atom, start_atom, info_hash>::with<std::string>,
    caf::replies_to<remediate_atom, stop_atom, info_hash>::with<std::string>>;

/// The supervisor's node-wide calls (admin API, `/metrics`): the event log,
/// an event someone else did, the swarms being remediated, the counters,
/// and the current actor of a supervised swarm (invalid if none).
using supervisor_operator_interface =
    caf::typed_actor<caf::replies_to<events_atom>::with<std::vector<supervisor_event>>,
                     caf::reacts_to<events_atom, caf::put_atom, supervisor_event>,
                     caf::replies_to<remediate_atom, caf::get_atom>::with<std::vector<info_hash>>,
                     caf::replies_to<counters_atom>::with<supervisor_counters>,
                     caf::replies_to<holds_atom, caf::get_atom>::with<supervisor_holds>,
                     caf::reacts_to<holds_atom, caf::put_atom, supervisor_holds>,
                     caf::replies_to<caf::get_atom, info_hash>::with<local_swarm_actor>>;

/// What the directory sends the supervisor for every swarm it spawns, and
/// right after it for a swarm installed with a remediation under way.
using supervisor_watch_interface =
    caf::typed_actor<caf::reacts_to<watch_atom, info_hash, local_swarm_actor, swarm_core_ptr>,
                     caf::reacts_to<remediate_atom, caf::put_atom, info_hash, local_swarm_actor,
                                    remediation_progress>,
                     caf::reacts_to<forget_atom, info_hash>>;

/// The supervisor actor: everything above, and the swarms' health reports.
using supervisor_actor =
    swarm_supervision_interface::extend_with<supervisor_operator_interface,
                                             supervisor_watch_interface, health_observer>;

}  // namespace sk
