#pragma once
/// The forwarder: the remote handle the directory hands out, on this node,
/// for a swarm another node owns (made by the cluster's placement,
/// cluster/placement.hpp). Its type is `forwarder_actor`
/// (cluster/cluster_messages.hpp): the whole remote swarm interface
/// (runtime/placement.hpp), so the network layer and the admin API need not
/// know whether a swarm is local:
///
///   (announce_atom, announce_ticket_ptr)    asks the owner with plain data
///       (`(announce_atom, swarm_announce, hops)`), then settles the LOCAL
///       ticket with the answer on this actor's thread, exactly as the swarm
///       would (`complete`), or `fail()` on error/timeout (the client gets
///       "try again")
///   (scrape_atom, scrape_ticket_ptr)        asked, then settled locally
///       (dropped on error: the client counts zeros)
///
/// every operator call of the swarm and of the supervisor about it
/// (cluster/remote_calls.hpp: status, history, knobs, policy, health;
/// restart, pinned policy, remediation start/stop), sent in an envelope to
/// the owner's node actor; the owner's swarm or supervisor answers the
/// requester directly. And:
///
///   (caf::leave_atom)      stop: answer what is in flight, then quit
///   the relay part         requests another node forwarded to this node,
///                          which forwards the hash itself: passed on to the
///                          owner with one more hop
///   (forwarder_idle_atom, n)   its idle timer
///
/// Handoff (migration of a local swarm to its new owner):
///
///   directory replaces the swarm's entry by a forwarder in handoff mode
///        │  (new messages queue here; skipped, kept in the mailbox)
///        ▼
///   (migrate_atom, get_atom) ──▶ old swarm: answers its snapshot and quits
///        │                       (messages behind it bounce: UDP tickets and
///        │                       HTTP requests are routed again → here)
///        ▼
///   (migrate_atom, put_atom, snapshot) ──▶ new owner's node actor ── ok
///        │                                 (error: installed back here)
///        ▼
///   forward mode: the queued messages, then everything else, in order
///
/// The new owner gets the snapshot before any message this forwarder
/// forwards (one sender, one receiver: CAF keeps the order, and the
/// forwarder waits for the acknowledgement anyway). After a failed handoff
/// the swarm stays here and the forwarder passes everything to it: tickets
/// as they are, forwarded requests as tickets that answer them.
///
/// A forwarder ends when idle for `idle_time` (nothing in flight), or on
/// `leave_atom`, and removes its own directory entry if it still points at
/// it.

#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "cluster/cluster_messages.hpp"
#include "runtime/placement.hpp"
#include "runtime/swarm_interface.hpp"

namespace sk::cluster {

/// What other actors send a forwarder: the remote swarm interface
/// (runtime/placement.hpp).
using forwarder_interface = remote_swarm_interface;

struct forwarder_options {
  std::chrono::milliseconds timeout{4000};
  std::chrono::milliseconds idle_time{std::chrono::minutes(2)};
};

/// Spawns a forwarder for `hash` to the node actor `owner_node` (named
/// `owner`). With `handoff_from` valid, it first moves that local swarm to
/// the owner (see above) and counts the handoff in `host` before it
/// returns.
forwarder_actor spawn_forwarder(caf::actor_system& sys, const info_hash& hash, std::string owner,
                                caf::actor owner_node, std::weak_ptr<placement_host> host,
                                forwarder_options opts, local_swarm_actor handoff_from = {});

}  // namespace sk::cluster
