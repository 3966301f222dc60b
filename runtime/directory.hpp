#pragma once
/// The swarm directory: info_hash -> swarm actor, read by network threads
/// without messaging. This is the one place that decides who serves a swarm:
/// alone, this node serves every swarm; in a cluster (`set_placement`, then
/// `set_view`), the view names each hash's owner, and for a swarm another
/// node owns the directory hands out a LOCAL remote handle (made by the
/// placement, runtime/placement.hpp) that accepts the same messages.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "protocol/text.hpp"
#include "protocol/types.hpp"
#include "runtime/placement.hpp"
#include "runtime/probe_interface.hpp"
#include "runtime/supervisor.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_interface.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/swarm_config.hpp"

namespace sk {

/// Where the operator reaches one swarm (`swarm_directory::locate`).
struct swarm_location {
  /// The local swarm, or the remote handle of the node that owns it;
  /// invalid: no swarm here and none remote. (`swarm`, dynamically typed.)
  caf::actor actor;
  /// `actor` is a remote handle: the swarm and its supervisor are on `owner`.
  bool remote = false;
  /// The cluster node the swarm lives on (this node's name for a local
  /// swarm); empty outside a cluster.
  std::string owner;
  /// The same handle as `actor`, typed: the swarm's calls.
  swarm_interface swarm;
  /// Where the supervisor's calls about this swarm go: this node's
  /// supervisor for a local swarm (invalid without one), the remote handle
  /// (which asks the owner's supervisor) for a remote one.
  swarm_supervision_interface supervision;
};

/// A local swarm as `swarm_directory::local_entries` lists it: its actor
/// while it runs, its data while it sleeps (exactly one is set).
struct local_swarm_entry {
  info_hash hash;
  local_swarm_actor actor;
  dormant_ptr dormant;
};

/// How `swarm_directory::open_swarm` went.
enum class route_status : std::uint8_t {
  served,     ///< the swarm (found, created, or a remote handle)
  swarm_cap,  ///< a miss on a node that holds `node_caps::max_swarms` swarms: none created
  stopping,   ///< `stop_all()` has begun: none created
};

/// A swarm handle, or why there is none.
struct route_result {
  swarm_interface swarm;
  route_status status = route_status::stopping;
};

/// Maps info_hash to the swarm actor that owns it.
///
/// A lock-striped hash map: the stripe of a hash is a fixed function of it,
/// each stripe is a mutex and an open-addressing table (runtime/swarm_map.hpp). A lookup locks one stripe for
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
  /// Every swarm spawned runs on one `swarm_settings` made of `cfg` and
  /// `node` (the node's ban list and census, live state handed over apart
  /// from the config; a null census becomes one with the default caps).
  /// Throws `std::invalid_argument` (with `cfg.validate()`'s message) when
  /// `cfg` is invalid, or when `stripes` is 0.
  swarm_directory(caf::actor_system& sys, const swarm_config& cfg, node_shared node,
                  std::size_t stripes = 64);
  /// The same without bans and with the default caps.
  swarm_directory(caf::actor_system& sys, const swarm_config& cfg, std::size_t stripes = 64);
  /// Calls `stop_all()`.
  ~swarm_directory();
  swarm_directory(const swarm_directory&) = delete;
  swarm_directory& operator=(const swarm_directory&) = delete;

  /// Spawns the node's supervisor (registry: this directory) and hands it
  /// every swarm spawned from now on. Call once, before the first route
  /// (not thread-safe against it). `cfg` must be valid. Returns the
  /// supervisor, which `stop_all()` stops after the swarms.
  supervisor_actor start_supervisor(const supervisor_config& cfg);

  /// Gives every swarm spawned from now on (and every restarted one) the
  /// reachability prober to send `(probe_atom, probe_request)` to; swarms
  /// probe only when `config().probe.enabled` too. Call once, before the
  /// first route (not thread-safe against it).
  void set_prober(prober_interface prober);
  /// `set_prober` for a dynamically typed prober handle (it must accept
  /// `(probe_atom, probe_request)`).
  void set_prober(caf::actor prober);

  /// The supervisor (invalid before `start_supervisor`).
  const supervisor_actor& supervisor_handle() const noexcept { return supervisor_; }
  /// The same, dynamically typed.
  const caf::actor& supervisor() const noexcept { return supervisor_untyped_; }

  /// The swarm for `h` (local, or a remote handle), spawning it on a miss.
  /// Thread-safe, never blocks on an actor; safe to call from I/O threads.
  /// Once `stop_all()` has begun it spawns nothing: a miss returns an
  /// invalid handle (`!result`); callers answer "shutting down / retry".
  swarm_interface route_swarm(const info_hash& h);

  /// `route_swarm`, saying why there is no handle: a miss on a node at its
  /// swarm cap creates nothing (`route_status::swarm_cap`: counted, and
  /// logged once when the cap is reached and once when it clears).
  route_result open_swarm(const info_hash& h);

  /// The swarm for `h` if one exists, else an invalid handle (scrape of
  /// unknown torrents must not create swarms). Thread-safe. In a cluster, a
  /// hash another node owns yields a remote handle (created on a miss: it
  /// creates no swarm anywhere; the owner answers zeros for an unknown
  /// torrent).
  swarm_interface find_swarm(const info_hash& h) const;

  /// Cache hints before `find_swarm` / `open_swarm` of each of `n` hashes
  /// (a transport's round of requests): the stripes' slots, their items and
  /// the running swarms' actors are asked for a batch at a time, so that
  /// the lookups that follow find them in cache instead of waiting for each
  /// miss in turn. Changes nothing; thread-safe (each stripe read under its
  /// lock).
  void prefetch(const info_hash* hashes, std::size_t n) const noexcept;

  /// `route_swarm`, dynamically typed.
  caf::actor route(const info_hash& h);
  /// `find_swarm`, dynamically typed.
  caf::actor find(const info_hash& h) const;

  /// `find_swarm(h)`, whether that is a remote handle and to which node, and
  /// where the supervisor's calls about it go (the admin API sends the
  /// operator calls of a remote swarm to its remote handle, which implements
  /// the supervisor's per-swarm calls too). Thread-safe.
  swarm_location locate(const info_hash& h) const;

  /// Number of local swarms (a snapshot; each stripe is counted under its
  /// lock). Remote handles are not counted.
  std::size_t size() const;

  /// Every (info_hash, swarm actor) pair of a local swarm, at most `limit`
  /// of them (admin API, replication, rebalancing); a sleeping swarm among
  /// them is woken (`swarm_config::hibernate_after`). Thread-safe; each
  /// stripe is copied under its lock, so the result is not one consistent
  /// cut. Never blocks on an actor.
  std::vector<std::pair<info_hash, local_swarm_actor>> local_swarms(
      std::size_t limit = static_cast<std::size_t>(-1)) const;

  /// The local swarms for whose info_hash `keep` holds (access list
  /// reloads: only those are woken). As `local_swarms`.
  std::vector<std::pair<info_hash, local_swarm_actor>> local_swarms_if(
      const std::function<bool(const info_hash&)>& keep) const;

  /// Every local swarm, the running ones by actor and the sleeping ones by
  /// their data, none woken (the state keeper). Each stripe is copied
  /// under its lock, so the result is not one consistent cut: a swarm may
  /// go to sleep or wake after its stripe was copied (see `dormant`).
  std::vector<local_swarm_entry> local_entries() const;

  /// At most `limit` local swarms for whose info_hash `keep` holds, as
  /// `local_entries` lists them (none woken), searched among ALL local
  /// swarms (the limit counts matches, not swarms looked at): what an
  /// operator's list of swarms shows, so that looking at a page of swarms
  /// keeps the sleeping ones asleep. One stripe lock at a time, only the
  /// matches copied.
  std::vector<local_swarm_entry> local_entries_where(
      std::size_t limit, const std::function<bool(const info_hash&)>& keep) const;

  /// The data of `h`'s swarm while it sleeps; null when it runs, is remote
  /// or there is none. Never wakes it.
  dormant_ptr dormant(const info_hash& h) const;

  /// `local_swarms`, dynamically typed.
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
  /// remote entry is left alone). Thread-safe, non-blocking.
  bool end_swarm(const info_hash& h);

  /// Node-wide counts every swarm of this directory adds to (monotonic since
  /// start; `/metrics`).
  const swarm_totals& totals() const noexcept;

  // -- cluster ------------------------------------------------------------------

  /// Makes the remote handles for swarms other nodes own (the cluster's
  /// implementation). Call once, before the first `set_view` (not
  /// thread-safe against routing). Without it every swarm is local.
  void set_placement(placement_ptr p);

  /// Installs a new picture of the cluster and moves what it changes:
  ///   - a local swarm another node now owns is handed to it (its entry
  ///     becomes a remote handle that first moves the swarm's state);
  ///   - a remote handle whose owner changed leaves (it answers what is in
  ///     flight); the next route creates the right one.
  /// Returns how many local swarms started moving. Thread-safe; never
  /// blocks on an actor. A null view turns cluster routing off.
  std::size_t set_view(placement_view_ptr view);

  /// The current view (null: no cluster).
  placement_view_ptr view() const;

  /// The entry for a hash whose request another node sent here: one of the
  /// two handles is valid, or neither.
  struct served_swarm {
    local_swarm_actor local;
    remote_swarm_interface remote;
  };

  /// Where a request forwarded by another node goes (the node actor's
  /// lookup): the local swarm, spawned on a miss when `create` (the sender
  /// believes this node owns `h`; a rebalance corrects a disagreement), or
  /// the remote handle this node has for `h`. Neither: a miss without
  /// `create`, or stopping.
  served_swarm serve_forwarded(const info_hash& h, bool create);

  /// Merges `s` into the local swarm of `s.hash` (spawned on a miss; a
  /// remote entry is replaced by the local swarm). Migration and crash
  /// takeover. Returns the swarm; invalid when stopping.
  local_swarm_actor install(const swarm_snapshot& s);

  /// Operator move: hands the local swarm of `h` to member `node` now (its
  /// entry becomes a remote handle that first moves the state, as in
  /// `set_view`). Returns
  /// "" when the move started, else why not ("no cluster", "unknown
  /// member", "not a local swarm", ...). The move lasts until the next
  /// membership change, when rendezvous ownership applies again (the swarm
  /// then moves to its owner with its state). Thread-safe, non-blocking.
  std::string move(const info_hash& h, const std::string& node);

  /// Local swarms being handed to another node right now.
  std::size_t handoffs_pending() const;
  /// The remote handles' counters (runtime/placement.hpp's placement_host):
  /// requests forwarded, forwards unanswered, handoffs done and kept.
  struct forward_counters {
    std::uint64_t forwarded = 0;
    std::uint64_t forward_failures = 0;
    std::uint64_t handoffs_done = 0;
    std::uint64_t handoffs_kept = 0;
  };
  forward_counters forwarding() const;

  /// Stops every swarm actor and remote handle (exit reason `user_shutdown`), then the
  /// supervisor (and with it every remediation), and empties the directory;
  /// `route()` spawns nothing afterwards. Idempotent.
  void stop_all();

  /// The configuration swarms are spawned with.
  const swarm_config& config() const noexcept { return cfg_; }

  /// The node's live ban list every swarm checks (null: no bans).
  const std::shared_ptr<live_ban_list>& bans() const noexcept { return node_.bans; }
  /// The node's swarms and peers against its caps (never null).
  const std::shared_ptr<node_census>& census() const noexcept { return node_.census; }

 private:
  class table;  // the stripes; shared (weakly) with the swarms

  caf::actor_system& sys_;
  swarm_config cfg_;
  node_shared node_;
  std::shared_ptr<table> table_;
  supervisor_actor supervisor_;
  caf::actor supervisor_untyped_;
};

}  // namespace sk
