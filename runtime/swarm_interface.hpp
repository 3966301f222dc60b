#pragma once
/// What a swarm actor accepts, as typed interfaces, and the atoms of its
/// messages.
///
/// Two handles reach a swarm: the local swarm actor (`local_swarm_actor`,
/// runtime/swarm_actor.hpp) and, in a cluster, the remote handle the
/// directory hands out for a swarm another node owns
/// (`remote_swarm_interface`, runtime/placement.hpp). Both implement
/// `swarm_interface`, which is what the directory hands to the network layer
/// and the admin API.
///
/// One announce entry point and one scrape entry point: a ticket
/// (tracker/swarm_messages.hpp), answered on the swarm's thread. A request
/// that comes from somewhere else (a node actor serving another node, a
/// test) becomes a ticket that answers that request (runtime/
/// swarm_tickets.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/message_types.hpp"
#include "runtime/probe_interface.hpp"
#include "runtime/swarm_snapshot.hpp"

namespace sk {

// Atoms (<= 10 characters, CAF 0.17).
using announce_atom = caf::atom_constant<caf::atom("announce")>;
using scrape_atom = caf::atom_constant<caf::atom("scrape")>;
using status_atom = caf::atom_constant<caf::atom("status")>;
using history_atom = caf::atom_constant<caf::atom("history")>;
using knobs_atom = caf::atom_constant<caf::atom("knobs")>;
using observer_atom = caf::atom_constant<caf::atom("observer")>;
using crash_atom = caf::atom_constant<caf::atom("crash")>;
/// The swarm's own sweep timer (with CAF's `tick_atom` for health).
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;
/// A remediation's progress, kept by its swarm (runtime/remediation_actor.hpp).
using progress_atom = caf::atom_constant<caf::atom("progress")>;
/// A copy of the whole state that leaves the swarm running (replication).
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;

/// Where a swarm reports its health: the supervisor (changed reports) and a
/// running remediation (every tick's report).
using health_observer = caf::typed_actor<caf::reacts_to<health_atom, info_hash, health_report>>;

/// What the network layer (the gateway) sends a swarm: one ticket per
/// announce, one per scraped hash.
using swarm_network_interface = caf::typed_actor<caf::reacts_to<announce_atom, announce_ticket_ptr>,
                                                 caf::reacts_to<scrape_atom, scrape_ticket_ptr>>;

/// What an operator (the admin API, a remediation) asks a swarm. Every one
/// of these may cross nodes (a remote handle sends them to the owner).
using swarm_operator_interface = caf::typed_actor<
    caf::replies_to<status_atom>::with<swarm_status>,
    caf::replies_to<status_atom, caf::get_atom, std::uint32_t>::with<swarm_status>,
    caf::replies_to<history_atom, caf::get_atom>::with<std::vector<remediation_record>>,
    caf::replies_to<knobs_atom, caf::get_atom>::with<swarm_knobs>,
    caf::replies_to<knobs_atom, caf::put_atom, swarm_knobs>::with<swarm_knobs>,
    caf::replies_to<policy_atom, caf::get_atom>::with<std::string>,
    caf::replies_to<policy_atom, caf::put_atom, std::string>::with<std::string>,
    caf::replies_to<health_atom, caf::get_atom>::with<health_report>>;

/// The whole swarm interface (network and operator): what every handle for
/// an info_hash accepts, local or remote.
using swarm_interface = swarm_network_interface::extend_with<swarm_operator_interface>;

/// What the supervisor and a remediation send the local swarm they look
/// after: the observer of its reports (an invalid handle clears it), an
/// action for its history, the running remediation's progress (none: it
/// ended), and the crash test hook.
using swarm_healing_interface =
    caf::typed_actor<caf::reacts_to<observer_atom, health_observer>,
                     caf::reacts_to<history_atom, caf::put_atom, remediation_record>,
                     caf::reacts_to<progress_atom, std::vector<remediation_progress>>,
                     caf::reacts_to<crash_atom>>;

/// The whole state of a local swarm: taken for a migration (the swarm then
/// quits), copied for a replica, merged in from another node.
using swarm_migration_interface =
    caf::typed_actor<caf::replies_to<caf::migrate_atom, caf::get_atom>::with<swarm_snapshot>,
                     caf::replies_to<snapshot_atom>::with<swarm_snapshot>,
                     caf::reacts_to<caf::migrate_atom, caf::put_atom, swarm_snapshot>>;

/// The timers a swarm sends itself.
using swarm_timer_interface =
    caf::typed_actor<caf::reacts_to<sweep_atom>, caf::reacts_to<caf::tick_atom>>;

/// A swarm actor on this node: everything above, and the prober's answers.
using local_swarm_actor =
    swarm_interface::extend_with<swarm_healing_interface, swarm_migration_interface,
                                 probe_reply_interface, swarm_timer_interface>;

}  // namespace sk
