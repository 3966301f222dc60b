#pragma once
/// The reachability prober as the runtime sees it (the prober itself lives
/// in net/probe): swarms ask it to check a peer and it answers the asking
/// swarm.
///
///   swarm ──(probe_atom, probe_request)──▶ prober
///   swarm ◀──(probe_atom, probe_result)─── prober (to the sender of the request)

#include <caf/all.hpp>

#include "runtime/message_types.hpp"

namespace sk {

using probe_atom = caf::atom_constant<caf::atom("probe")>;

/// What a swarm sends the prober (`swarm_registry::prober`).
using prober_interface = caf::typed_actor<caf::reacts_to<probe_atom, probe_request>>;

/// What the prober answers to: the swarm that sent the request.
using probe_reply_interface = caf::typed_actor<caf::reacts_to<probe_atom, probe_result>>;

}  // namespace sk
