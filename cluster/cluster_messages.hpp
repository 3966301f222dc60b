#pragma once
/// Atoms and message types between cluster nodes, and their registration.
///
/// Node actor interface (published on the cluster port, TLS only):
///
///   (join_atom, member_info me) -> std::vector<member_info>
///       a node introduces itself; the answer is the receiver's member list
///   (members_atom, std::vector<member_info>)       gossip: merge and dial
///   (leave_atom, std::string name)                  the named node is leaving
///                                                   gracefully (SIGTERM)
///   (announce_atom, swarm_announce, uint8_t hops) -> announce_result
///   (scrape_atom, info_hash, uint8_t hops) -> swarm_stats
///       a forwarded request; served by the local swarm (created for an
///       announce), or forwarded once more while the views disagree
///       (`hops` bounds it)
///   (swarm_call_atom, info_hash, uint8_t hops, caf::message call)
///   (supervisor_call_atom, info_hash, uint8_t hops, caf::message call)
///       an operator call on a swarm this node owns, answered by its swarm
///       or this node's supervisor (cluster/remote_calls.hpp)
///   (caf::migrate_atom, caf::put_atom, swarm_snapshot) -> caf::ok_atom
///       take over a swarm (migration): merged into the local swarm of
///       that hash, spawned if needed
///   (replica_atom, std::string origin, std::vector<swarm_snapshot>)
///       replicas of the origin's swarms (replaces the previous set)
///   (members_atom, caf::get_atom) -> std::vector<std::string>
///       the live member names, sorted (tests, operators)
///   (node_status_atom) -> node_status
///       this node's picture for operators (admin API `GET /api/cluster`)
///   (movenote_atom, info_hash, std::string from)
///       an operator move of that swarm from `from` to the receiver is about
///       to start (labels the migration record "operator")
///
/// Swarm actor additions (runtime/swarm_actor.hpp):
///
///   (caf::migrate_atom, caf::get_atom) -> swarm_snapshot   and then quits
///   (snapshot_atom) -> swarm_snapshot                      (replication)
///   (caf::migrate_atom, caf::put_atom, swarm_snapshot)     merge into the core

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "cluster/membership.hpp"
#include "cluster/snapshot.hpp"
#include "runtime/messages.hpp"

namespace sk::cluster {

using members_atom = caf::atom_constant<caf::atom("members")>;
using replica_atom = caf::atom_constant<caf::atom("replica")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;
using node_status_atom = caf::atom_constant<caf::atom("nodestat")>;
using movenote_atom = caf::atom_constant<caf::atom("movenote")>;

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
};

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
typename Inspector::result_type inspect(Inspector& f, node_status& x) {
  return f(caf::meta::type_name("node_status"), x.name, x.swarms, x.handoffs_pending, x.members,
           x.migrations);
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
