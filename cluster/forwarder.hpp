#pragma once
/// The forwarding actor: what the directory hands out, on this node, for a
/// swarm another node owns. It accepts the messages a swarm accepts from
/// the network layer, so net/ needs no change:
///
///   (announce_atom, swarm_announce) -> announce_result     delegated: the
///       owner's answer goes straight back to the requester
///   (announce_atom, announce_ticket_ptr)    asks the owner with plain data
///       (`(announce_atom, swarm_announce, hops)`), then settles the LOCAL
///       ticket with the answer on this actor's thread, exactly as the swarm
///       would (`complete`), or `fail()` on error/timeout (the client gets
///       "try again")
///   (scrape_atom) -> swarm_stats                           delegated
///   (scrape_atom, scrape_ticket_ptr)        asked, then settled locally
///
/// and every operator call of the swarm and of the supervisor about it
/// (cluster/remote_calls.hpp: status, history, knobs, policy,
/// health; restart, pinned policy, remediation start/stop), sent in an
/// envelope to the owner's node actor; the owner's swarm or supervisor
/// answers the requester directly. And its own:
///
///   (caf::leave_atom)      stop: answer what is in flight, then quit
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
/// forwarder waits for the acknowledgement anyway).
///
/// A forwarder ends when idle for `idle_time` (nothing in flight), or on
/// `leave_atom`, and removes its own directory entry if it still points at
/// it.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "cluster/snapshot.hpp"
#include "cluster/view.hpp"
#include "runtime/supervisor.hpp"
#include "runtime/swarm_actor.hpp"

namespace sk::cluster {

/// The forwarder's interface as other actors see it: the whole swarm
/// interface and the supervisor's per-swarm calls, built as one checked
/// `behavior_type` (a missing handler does not compile). The actor is
/// dynamically typed (it also serves hops and envelopes from other nodes and
/// its own timer); `caf::actor_cast` of its handle to either part is sound.
using forwarder_interface = swarm_interface::extend_with<swarm_supervision_interface>;

/// What a forwarder needs from the directory.
class forward_host : public swarm_registry {
 public:
  /// Merges `s` into this node's swarm for `s.hash` (spawning it on a miss;
  /// a forwarder entry for the hash is replaced) and returns that swarm;
  /// invalid when the directory is stopping.
  virtual caf::actor install_local(const swarm_snapshot& s) = 0;

  /// The current cluster picture (a failed handoff retries with its owner).
  virtual cluster_view_ptr current_view() const = 0;

  /// This node's supervisor (invalid: none); supervisor calls of a swarm
  /// kept here after a failed handoff go there.
  virtual caf::actor local_supervisor() const = 0;

  /// Handoffs started and not yet finished (either way); a graceful leave
  /// waits for 0.
  std::atomic<std::size_t> handoffs_pending{0};
};

struct forwarder_options {
  std::chrono::milliseconds timeout{4000};
  std::chrono::milliseconds idle_time{std::chrono::minutes(2)};
};

/// Spawns a forwarder for `hash` to the node actor `owner_node` (named
/// `owner`). With `handoff_from` valid, it first moves that local swarm to
/// the owner (see above).
caf::actor spawn_forwarder(caf::actor_system& sys, const info_hash& hash, std::string owner,
                           caf::actor owner_node, std::weak_ptr<forward_host> host,
                           forwarder_options opts, caf::actor handoff_from = {});

}  // namespace sk::cluster
