#pragma once
/// Requests for a swarm another node owns: what a forwarder sends to the
/// owner's node actor, and how that node serves them (the node actor's relay
/// room, `relay_behavior`).
///
/// Network requests, plain data (a ticket cannot cross nodes):
///
///   (announce_atom, swarm_announce, uint8_t hops) -> announce_result
///   (scrape_atom, info_hash, uint8_t hops) -> swarm_stats
///       the owner turns each into a local ticket that answers the request
///       (runtime/swarm_tickets.hpp), so its swarm serves it through its one
///       announce (scrape) entry point; the answer goes from the swarm's
///       thread straight back to the forwarder
///
/// Operator calls, in two envelopes, both plain data:
///
///   (swarm_call_atom, info_hash, uint8_t hops, caf::message call)
///       `call` is one of the swarm actor's operator messages
///       (`is_swarm_call`); the owner delivers it to its local swarm of that
///       hash, which answers the original requester directly.
///   (supervisor_call_atom, info_hash, uint8_t hops, caf::message call)
///       `call` is one of the supervisor's per-swarm operator messages for
///       that same hash (`is_supervisor_call`); the owner delivers it to its
///       supervisor.
///
///   admin (node A)                 node A           node B (owner)
///   ──────────────                 ──────           ──────────────
///   request(forwarder, call) ──▶ forwarder ──(envelope, hops 1)──▶ node actor
///                                                                    │ serve_*_call
///                                          local swarm / supervisor ◀┘
///   answer ◀───────────────────────────────────────────────────────── (delegated:
///                                                                  straight back)
///
/// While two nodes disagree about the owner, B may forward the hash itself:
/// the envelope goes once more through B's forwarder (hops + 1), never
/// beyond `max_hops`. A call that names no local swarm on the owner answers
/// `sec::cannot_forward_to_invalid_actor` (the admin API's 404); a call
/// outside the lists below answers `sec::unexpected_message`, so a peer node
/// cannot make a swarm migrate, crash or quit through an envelope.

#include <cstdint>

#include <caf/all.hpp>

#include "cluster/cluster_messages.hpp"
#include "protocol/types.hpp"

namespace sk {
class swarm_directory;
}

namespace sk::cluster {

/// A forwarded request may be forwarded once more while two nodes disagree
/// about the owner (views converge within a heartbeat); never more.
constexpr std::uint8_t max_hops = 2;

/// Hops of a request this node forwards first.
constexpr std::uint8_t first_hop = 1;

/// Whether `m` is a swarm operator message that may cross nodes: one that
/// `swarm_operator_interface` declares (runtime/swarm_interface.hpp: status,
/// history, knobs, policy, health).
bool is_swarm_call(const caf::message& m);

/// Whether `m` is a supervisor operator message about swarm `h`: one that
/// `swarm_supervision_interface` declares (runtime/supervisor_interface.hpp: restart,
/// pinned policy, remediation start/stop), naming `h`.
bool is_supervisor_call(const caf::message& m, const info_hash& h);

/// The relay room of a node actor (`node_relay_part`) for `dir`: a
/// forwarded announce or scrape goes to the local swarm as a ticket that
/// answers the request (an announce creates the swarm on a miss: the sender
/// believes this node owns it; a scrape of an unknown torrent answers
/// zeros); a swarm call to the local swarm of `h` and a supervisor call to
/// this node's supervisor (which answers "unknown" for a swarm it does not
/// know); each one is passed on with one more hop instead when this node
/// forwards `h` itself (refused at `max_hops`). `self` is the node actor
/// (its handlers delegate); `dir` must outlive it.
node_relay_part::behavior_type relay_behavior(caf::local_actor* self, swarm_directory& dir);

}  // namespace sk::cluster
