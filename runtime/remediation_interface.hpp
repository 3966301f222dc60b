#pragma once
/// What a remediation actor (runtime/remediation_actor.hpp, one per
/// unhealthy swarm) accepts, as a typed interface, and its atom.

#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/message_types.hpp"
#include "runtime/swarm_interface.hpp"

namespace sk {

/// The supervisor restarted the swarm: here is the new actor.
using rebind_atom = caf::atom_constant<caf::atom("rebind")>;

/// A remediation actor: its swarm's reports (it is the swarm's observer)
/// and the supervisor's calls (rebind, an operator's policy, the active
/// strategies, an operator's stop).
using remediation_actor = health_observer::extend<
    caf::reacts_to<rebind_atom, local_swarm_actor>,
    caf::replies_to<policy_atom, caf::put_atom, swarm_knobs, bool>::with<std::string>,
    caf::replies_to<caf::get_atom>::with<std::vector<std::string>>,
    caf::replies_to<stop_atom>::with<bool>>;

}  // namespace sk
