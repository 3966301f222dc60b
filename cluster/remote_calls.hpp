#pragma once
/// Operator calls on a swarm another node owns: what a forwarder sends to the
/// owner's node actor, and how that node serves it.
///
/// Two envelopes, both plain data (they cross nodes):
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

#include "protocol/types.hpp"

namespace sk {
class swarm_directory;
}

namespace sk::cluster {

using swarm_call_atom = caf::atom_constant<caf::atom("swarmcall")>;
using supervisor_call_atom = caf::atom_constant<caf::atom("supcall")>;

/// A forwarded request may be forwarded once more while two nodes disagree
/// about the owner (views converge within a heartbeat); never more.
constexpr std::uint8_t max_hops = 2;

/// Hops of a request this node forwards first.
constexpr std::uint8_t first_hop = 1;

/// Whether `m` is a swarm operator message that may cross nodes: one that
/// `swarm_operator_interface` declares (runtime/swarm_actor.hpp: status,
/// history, knobs, policy, health).
bool is_swarm_call(const caf::message& m);

/// Whether `m` is a supervisor operator message about swarm `h`: one that
/// `swarm_supervision_interface` declares (runtime/supervisor.hpp: restart,
/// pinned policy, remediation start/stop), naming `h`.
bool is_supervisor_call(const caf::message& m, const info_hash& h);

/// Serves a swarm call another node forwarded (the node actor's handler):
/// delegates `call` to the local swarm of `h`, or the envelope to this
/// node's forwarder for `h` (one more hop, refused at `max_hops`).
caf::result<caf::message> serve_swarm_call(caf::event_based_actor* self, swarm_directory& dir,
                                           const info_hash& h, std::uint8_t hops,
                                           const caf::message& call);

/// Serves a supervisor call another node forwarded: delegates `call` to the
/// local supervisor when `h` is not forwarded from here (the supervisor
/// answers "unknown" for a swarm it does not know), else the envelope to this
/// node's forwarder for `h` (one more hop, refused at `max_hops`).
caf::result<caf::message> serve_supervisor_call(caf::event_based_actor* self,
                                                swarm_directory& dir, const info_hash& h,
                                                std::uint8_t hops, const caf::message& call);

}  // namespace sk::cluster
