#pragma once
/// The cluster's atoms, message types and typed interfaces, and their
/// registration.
///
/// The node actor (cluster/node.hpp; one per daemon, published on the
/// cluster port, TLS only) is `node_actor`, written in rooms, one typed part
/// each:
///
///   node_relay_part (node_relay.cpp): requests another node sends for a
///   swarm it believes this node owns
///     (announce_atom, swarm_announce, uint8_t hops) -> announce_result
///     (scrape_atom, info_hash, uint8_t hops) -> swarm_stats
///         served by the local swarm through a ticket that answers the
///         request (created for an announce; an unknown torrent scrapes
///         zeros), or forwarded once more while the views disagree (`hops`
///         bounds it, `max_hops`)
///     (swarm_call_atom, info_hash, uint8_t hops, caf::message call) -> ...
///     (supervisor_call_atom, info_hash, uint8_t hops, caf::message call) -> ...
///         an operator call on a swarm this node owns, answered by its swarm
///         or this node's supervisor (cluster/remote_calls.hpp)
///
///   node_membership_part (node_membership.cpp)
///     (join_atom, member_info me) -> std::vector<member_info>
///         a node introduces itself; the answer is the receiver's member list
///     (members_atom, std::vector<member_info>)    gossip: merge and dial
///     (leave_atom, std::string name)              the named node is leaving
///                                                 gracefully (SIGTERM)
///     (members_atom, caf::get_atom) -> std::vector<std::string>
///         the live member names, sorted (tests, operators)
///     (dial_atom), (confirm_atom, std::string name)   its own timers
///
///   node_replica_part (node_replicas.cpp)
///     (replica_atom, std::string origin, swarm_snapshot)
///         a replica of one of the origin's swarms (replaces the previous one)
///     (replicate_atom)                             its own timer
///
///   node_rebalance_part (node_rebalance.cpp)
///     (load_atom, std::string name, double announces_per_s)   a member's load
///     (rebalance_atom)                             its own timer
///
///   node_migration_part (node_migrations.cpp)
///     (caf::migrate_atom, caf::put_atom, swarm_snapshot) -> caf::ok_atom
///         take over a swarm (migration): merged into the local swarm of
///         that hash, spawned if needed
///     (movenote_atom, info_hash, std::string from)
///         an operator move of that swarm from `from` to the receiver is about
///         to start (labels the migration record "operator")
///     (caf::leave_atom) -> uint64_t
///         graceful leave of this node: every local swarm handed over; the
///         answer (how many) once all are acknowledged
///     (handoff_atom)                               its own timer
///
///   node_status_part (node.cpp)
///     (node_status_atom) -> node_status
///         this node's picture for operators (admin API `GET /api/cluster`)
///
/// The remote handle the directory hands out for a swarm another node owns
/// is a forwarder (cluster/forwarder.hpp), `forwarder_actor`: the remote
/// swarm interface (runtime/placement.hpp), the relay part (a node that
/// forwards a hash itself passes a forwarded request on through it), and
/// its idle timer. What it asks of the owner's node is
/// `owner_node_interface`.

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "cluster/membership.hpp"
#include "runtime/message_types.hpp"
#include "runtime/placement.hpp"
#include "runtime/swarm_interface.hpp"
#include "runtime/swarm_snapshot.hpp"

namespace sk::cluster {

// Atoms (<= 10 characters, CAF 0.17).
using members_atom = caf::atom_constant<caf::atom("members")>;
using replica_atom = caf::atom_constant<caf::atom("replica")>;
using node_status_atom = caf::atom_constant<caf::atom("nodestat")>;
using movenote_atom = caf::atom_constant<caf::atom("movenote")>;
/// Operator-call envelopes (cluster/remote_calls.hpp).
using swarm_call_atom = caf::atom_constant<caf::atom("swarmcall")>;
using supervisor_call_atom = caf::atom_constant<caf::atom("supcall")>;
/// A member's load (rebalancing).
using load_atom = caf::atom_constant<caf::atom("load")>;
// The node actor's and the forwarder's own timers.
using dial_atom = caf::atom_constant<caf::atom("dial")>;
using confirm_atom = caf::atom_constant<caf::atom("confirm")>;
using replicate_atom = caf::atom_constant<caf::atom("replicate")>;
using rebalance_atom = caf::atom_constant<caf::atom("rebalance")>;
using handoff_atom = caf::atom_constant<caf::atom("handoff")>;
using forwarder_idle_atom = caf::atom_constant<caf::atom("fwd_idle")>;

/// One swarm that arrived at a node with its state (recorded by the
/// receiving node: it is the one that knows the move finished).
struct migration_record {
  std::string from;  ///< sending member ("" when unknown)
  std::string to;    ///< receiving member
  std::string hash;  ///< info_hash, 40 hex digits
  /// "operator" (admin move), "membership" (a join or leave changed the
  /// owner), "crash-replica" (installed from a dead member's replica).
  std::string reason;
  std::uint64_t finished_ms = 0;  ///< wall clock, ms since the epoch
  std::uint64_t peers = 0;        ///< peers the swarm arrived with
};

/// A member as one node sees it.
struct member_state {
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  /// "live" (connected), "suspect" (connection dropped, still an owner
  /// until cluster.connection-timeout), "gone" (heard of, not connected).
  std::string state;
};

/// Answer to (node_status_atom): what one node knows about itself and the others.
struct node_status {
  std::string name;
  std::uint64_t swarms = 0;           ///< local swarms
  std::uint64_t handoffs_pending = 0;  ///< local swarms being handed over now
  std::vector<member_state> members;  ///< sorted by name, this node included
  std::vector<migration_record> migrations;  ///< oldest first, bounded
  /// Swarms that arrived here since the start, by reason (see
  /// migration_record::reason).
  std::vector<std::pair<std::string, std::uint64_t>> arrivals;
  /// The directory's remote handles (swarm_directory::forwarding()).
  std::uint64_t forwarded = 0;
  std::uint64_t forward_failures = 0;
  std::uint64_t handoffs_done = 0;
  std::uint64_t handoffs_kept = 0;
  /// Per member whose replicas this node holds: how many, and the age in
  /// ms of the newest (how far this node's copy lags behind).
  struct replica_origin {
    std::string origin;
    std::uint64_t replicas = 0;
    std::int64_t newest_age_ms = 0;
  };
  std::vector<replica_origin> replicas;
};

// -- typed interfaces -----------------------------------------------------------

/// Requests for a swarm, sent by a node that does not own it to one it
/// believes does; `hops` counts the nodes passed (cluster/remote_calls.hpp).
using node_relay_part = caf::typed_actor<
    caf::replies_to<announce_atom, swarm_announce, std::uint8_t>::with<announce_result>,
    caf::replies_to<scrape_atom, info_hash, std::uint8_t>::with<swarm_stats>,
    caf::replies_to<swarm_call_atom, info_hash, std::uint8_t, caf::message>::with<caf::message>,
    caf::replies_to<supervisor_call_atom, info_hash, std::uint8_t,
                    caf::message>::with<caf::message>>;

using node_membership_part =
    caf::typed_actor<caf::replies_to<caf::join_atom, member_info>::with<std::vector<member_info>>,
                     caf::reacts_to<members_atom, std::vector<member_info>>,
                     caf::reacts_to<caf::leave_atom, std::string>,
                     caf::replies_to<members_atom, caf::get_atom>::with<std::vector<std::string>>,
                     caf::reacts_to<dial_atom>, caf::reacts_to<confirm_atom, std::string>>;

using node_replica_part =
    caf::typed_actor<caf::reacts_to<replica_atom, std::string, swarm_snapshot>,
                     caf::reacts_to<replicate_atom>>;

using node_rebalance_part = caf::typed_actor<caf::reacts_to<load_atom, std::string, double>,
                                             caf::reacts_to<rebalance_atom>>;

using node_migration_part = caf::typed_actor<
    caf::replies_to<caf::migrate_atom, caf::put_atom, swarm_snapshot>::with<caf::ok_atom>,
    caf::reacts_to<movenote_atom, info_hash, std::string>,
    caf::replies_to<caf::leave_atom>::with<std::uint64_t>, caf::reacts_to<handoff_atom>>;

using node_status_part = caf::typed_actor<caf::replies_to<node_status_atom>::with<node_status>>;

/// The node actor.
using node_actor =
    node_relay_part::extend_with<node_membership_part, node_replica_part, node_rebalance_part,
                                 node_migration_part, node_status_part>;

/// What a forwarder asks of the node that owns its swarm: forwarded
/// requests, and taking the swarm over (handoff).
using owner_node_interface = node_relay_part::extend<
    caf::replies_to<caf::migrate_atom, caf::put_atom, swarm_snapshot>::with<caf::ok_atom>>;

/// What an operator (the admin API) asks a node actor.
using node_operator_interface =
    caf::typed_actor<caf::replies_to<node_status_atom>::with<node_status>,
                     caf::reacts_to<movenote_atom, info_hash, std::string>>;

/// A forwarder: the remote handle of one swarm (cluster/forwarder.hpp).
using forwarder_actor = remote_swarm_interface::extend_with<node_relay_part>::extend<
    caf::reacts_to<forwarder_idle_atom, std::uint64_t>>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, migration_record& x) {
  return f(caf::meta::type_name("migration_record"), x.from, x.to, x.hash, x.reason,
           x.finished_ms, x.peers);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_state& x) {
  return f(caf::meta::type_name("member_state"), x.name, x.host, x.port, x.state);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_status::replica_origin& x) {
  return f(caf::meta::type_name("replica_origin"), x.origin, x.replicas, x.newest_age_ms);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, node_status& x) {
  return f(caf::meta::type_name("node_status"), x.name, x.swarms, x.handoffs_pending, x.members,
           x.migrations, x.arrivals, x.forwarded, x.forward_failures, x.handoffs_done,
           x.handoffs_kept, x.replicas);
}

/// Registry key of the local node actor (`actor_system::registry()`), so the
/// admin server can ask it without a handle.
constexpr caf::atom_value node_registry_key = caf::atom("skcnode");

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_info& x) {
  return f(caf::meta::type_name("member_info"), x.name, x.host, x.port, x.incarnation);
}

/// Registers the cluster's message types (call on every node, next to
/// `register_message_types`; names are part of the wire format).
void register_types(caf::actor_system_config& cfg);

}  // namespace sk::cluster
