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
///   (caf::migrate_atom, caf::put_atom, swarm_snapshot) -> caf::ok_atom
///       take over a swarm (migration): merged into the local swarm of
///       that hash, spawned if needed
///   (replica_atom, std::string origin, std::vector<swarm_snapshot>)
///       replicas of the origin's swarms (replaces the previous set)
///   (members_atom, caf::get_atom) -> std::vector<std::string>
///       the live member names, sorted (tests, operators)
///
/// Swarm actor additions (actors/swarm_actor.hpp):
///
///   (caf::migrate_atom, caf::get_atom) -> swarm_snapshot   and then quits
///   (snapshot_atom) -> swarm_snapshot                      (replication)
///   (caf::migrate_atom, caf::put_atom, swarm_snapshot)     merge into the core

#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/cluster/membership.hpp"
#include "actors/cluster/snapshot.hpp"
#include "actors/messages.hpp"

namespace sk::cluster {

using members_atom = caf::atom_constant<caf::atom("members")>;
using replica_atom = caf::atom_constant<caf::atom("replica")>;
using snapshot_atom = caf::atom_constant<caf::atom("snapshot")>;

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, member_info& x) {
  return f(caf::meta::type_name("member_info"), x.name, x.host, x.port, x.incarnation);
}

/// Registers the cluster's message types (call on every node, next to
/// `register_message_types`; names are part of the wire format).
void register_types(caf::actor_system_config& cfg);

}  // namespace sk::cluster
