#pragma once
/// The swarm directory: info_hash -> swarm actor, read by network threads
/// without messaging. This is the one place that decides who owns a swarm:
/// alone, this node owns every swarm; in a cluster (`set_view`), the owner
/// is the live member that ranks first under rendezvous hashing, and for a
/// swarm another node owns the directory hands out a LOCAL forwarding actor
/// (cluster/forwarder.hpp) that accepts the same messages.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "cluster/forwarder.hpp"
#include "cluster/snapshot.hpp"
#include "cluster/view.hpp"
#include "runtime/supervisor.hpp"
#include "tracker/swarm_config.hpp"
#include "protocol/types.hpp"

namespace sk {

/// Where the operator reaches one swarm (`swarm_directory::locate`).
struct swarm_location {
  /// The local swarm, or the forwarder to the node that owns it; invalid:
  /// no swarm here and none forwarded.
  caf::actor actor;
  /// `actor` is a forwarder: the swarm and its supervisor are on `owner`.
  bool remote = false;
  /// The cluster node the swarm lives on (this node's name for a local
  /// swarm); empty outside a cluster.
  std::string owner;
};

/// Maps info_hash to the swarm actor that owns it.
///
/// A lock-striped hash map: the stripe of a hash is a fixed function of it,
/// each stripe is a mutex and an unordered_map. A lookup locks one stripe for
/// a hash probe and a handle copy, so network threads hardly ever meet, and
/// no actor sits on the path of every announce. A miss in `route()` spawns
/// the swarm under the stripe lock (spawning only enqueues the actor's start
/// on the scheduler; it never waits for an actor), so two threads routing the
/// same new hash get the same actor.
///
/// A swarm that ends (idle) removes its own entry, but only if the entry
/// still points at it. A sender that gets `sec::request_receiver_down`
/// (it raced with that ending) routes again once.
///
/// Supervision: after `start_supervisor()`, every swarm spawned is watched by
/// the supervisor (restarted from its state when it crashes; the supervisor
/// puts the replacement in place with `replace_if_owner`), and reports its
/// health there.
///
/// Lifetime: construct after the `actor_system` and destroy before it
/// (declare it later); call `stop_all()` after the network has drained.
/// Swarms reach the directory through a weak reference, so destroying it
/// while swarms still run is safe.
class swarm_directory {
 public:
  /// `cfg` is copied into every swarm spawned; throws `std::invalid_argument`
  /// (with `cfg.validate()`'s message) when it is invalid, or when `stripes`
  /// is 0.
  swarm_directory(caf::actor_system& sys, const swarm_config& cfg, std::size_t stripes = 64);
  /// Calls `stop_all()`.
  ~swarm_directory();
  swarm_directory(const swarm_directory&) = delete;
  swarm_directory& operator=(const swarm_directory&) = delete;

  /// Spawns the node's supervisor (registry: this directory) and hands it
  /// every swarm spawned from now on. Call once, before the first `route()`
  /// (not thread-safe against it). `cfg` must be valid. Returns the
  /// supervisor, which `stop_all()` stops after the swarms.
  caf::actor start_supervisor(const supervisor_config& cfg);

  /// Gives every swarm spawned from now on (and every restarted one) the
  /// reachability prober to send `(probe_atom, probe_request)` to; swarms
  /// probe only when `config().probe.enabled` too. Call once, before the
  /// first `route()` (not thread-safe against it).
  void set_prober(caf::actor prober);

  /// The supervisor (invalid before `start_supervisor`).
  const caf::actor& supervisor() const noexcept { return supervisor_; }

  /// The swarm actor for `h`, spawning it on a miss. Thread-safe, never
  /// blocks on an actor; safe to call from I/O threads. Once `stop_all()`
  /// has begun it spawns nothing: a miss returns an invalid handle
  /// (`!result`); callers answer "shutting down / retry".
  caf::actor route(const info_hash& h);

  /// The swarm actor for `h` if one exists, else an invalid handle (scrape of
  /// unknown torrents must not create swarms). Thread-safe. In a cluster, a
  /// hash another node owns yields a forwarder (created on a miss: it
  /// creates no swarm anywhere; the owner answers zeros for an unknown
  /// torrent).
  caf::actor find(const info_hash& h) const;

  /// `find(h)`, and whether that is a forwarder and to which node (the
  /// admin API sends operator calls of a remote swarm to its forwarder,
  /// which implements the supervisor's per-swarm calls too). Thread-safe.
  swarm_location locate(const info_hash& h) const;

  /// Number of local swarms (a snapshot; each stripe is counted under its
  /// lock). Forwarders are not counted.
  std::size_t size() const;

  /// Every (info_hash, swarm actor) pair of a local swarm, at most `limit`
  /// of them (admin API). Thread-safe; each stripe is copied under its lock,
  /// so the result is not one consistent cut. Never blocks on an actor.
  std::vector<std::pair<info_hash, caf::actor>> snapshot(
      std::size_t limit = static_cast<std::size_t>(-1)) const;

  /// Ends the local swarm of `h` now (exit reason `user_shutdown`): its
  /// entry goes at once, its peers are dropped, and the supervisor forgets
  /// it (stopping its remediation). For a torrent the operator just refused:
  /// the front ends check the access list before they route, so later
  /// announces and scrapes of `h` never reach a swarm. (An announce already
  /// past that check, or bouncing off the ended actor and routed again, may
  /// still spawn a new swarm; it serves that one peer and ages out like any
  /// swarm nobody announces to.) Returns whether there was a local swarm (a
  /// forwarder entry is left alone). Thread-safe, non-blocking.
  bool end_swarm(const info_hash& h);

  /// Node-wide counts every swarm of this directory adds to (monotonic since
  /// start; `/metrics`).
  const swarm_totals& totals() const noexcept;

  // -- cluster ------------------------------------------------------------------

  /// Installs a new picture of the cluster and moves what it changes:
  ///   - a local swarm another node now owns is handed to it (its entry
  ///     becomes a forwarder in handoff mode, see forwarder.hpp);
  ///   - a forwarder whose owner changed leaves (it answers what is in
  ///     flight); the next route() creates the right one.
  /// Returns how many local swarms started moving. Thread-safe; never
  /// blocks on an actor. A null view turns cluster routing off.
  std::size_t set_view(cluster::cluster_view_ptr view);

  /// The current view (null: no cluster).
  cluster::cluster_view_ptr view() const;

  /// Where a request forwarded by another node goes (the node actor's
  /// lookup): the local swarm, spawned on a miss when `create` (the sender
  /// believes this node owns `h`; a rebalance corrects a disagreement), or
  /// the forwarder this node has for `h` (`*remote` set). Invalid: a miss
  /// without `create`, or stopping.
  caf::actor serve_forwarded(const info_hash& h, bool create, bool* remote);

  /// Merges `s` into the local swarm of `s.hash` (spawned on a miss; a
  /// forwarder entry is replaced by the local swarm). Migration and crash
  /// takeover. Returns the swarm; invalid when stopping.
  caf::actor install(const cluster::swarm_snapshot& s);

  /// Operator move: hands the local swarm of `h` to member `node` now (its
  /// entry becomes a forwarder in handoff mode, as in `set_view`). Returns
  /// "" when the move started, else why not ("no cluster", "unknown
  /// member", "not a local swarm", ...). The move lasts until the next
  /// membership change, when rendezvous ownership applies again (the swarm
  /// then moves to its owner with its state). Thread-safe, non-blocking.
  std::string move(const info_hash& h, const std::string& node);

  /// Local swarms being handed to another node right now.
  std::size_t handoffs_pending() const;

  /// Forwarder settings (the default is fine outside the daemon).
  void set_forwarder_options(const cluster::forwarder_options& o);

  /// Stops every swarm actor and forwarder (exit reason `user_shutdown`), then the
  /// supervisor (and with it every remediation), and empties the directory;
  /// `route()` spawns nothing afterwards. Idempotent.
  void stop_all();

  /// The configuration swarms are spawned with.
  const swarm_config& config() const noexcept { return cfg_; }

 private:
  class table;  // the stripes; shared (weakly) with the swarms

  caf::actor_system& sys_;
  swarm_config cfg_;
  std::shared_ptr<table> table_;
  caf::actor supervisor_;
};

}  // namespace sk
