#pragma once
/// The supervisor actor (one per node): keeps swarm actors alive and starts
/// remediation for unhealthy swarms.
///
///   directory.route() ──(watch_atom, hash, swarm, core)──▶ supervisor: monitor
///
///   swarm dies ── normal / user_shutdown ──▶ forget it (and stop its remediation)
///              └─ anything else (a crash) ─▶ restart:
///                   crashes of this hash within restart_window < max_restarts ?
///                   ├─ yes: core invariants hold ? same core : empty core (logged)
///                   │       spawn a swarm actor on it, monitor it, put it in the
///                   │       directory if the entry still points at the dead one
///                   │       (else stop it), rebind a running remediation
///                   └─ no:  give up: erase the dead entry (the next announce
///                           spawns an empty swarm), report (log + event)
///
///   swarm ──(health_atom, hash, report)──▶ supervisor (changes only):
///       degraded/critical (never unevaluated), remediation on, at least
///       remediation_min_peers
///       peers, no remediation running for that swarm
///         ─▶ spawn ONE remediation actor, register it as the swarm's
///            observer (it then gets every tick's report)
///
/// Interface (`supervisor_actor`, runtime/supervisor_interface.hpp; spawned
/// typed, so every handler is checked against it at compile time):
///
///   (watch_atom, info_hash, local_swarm_actor swarm, swarm_core_ptr core)
///   (health_atom, info_hash, health_report)
///   (events_atom) -> std::vector<supervisor_event>    oldest first, bounded
///   (remediate_atom, caf::get_atom) -> std::vector<info_hash>
///                                    swarms with a running remediation
///   (remediate_atom, start_atom, info_hash) -> std::string
///       an operator starts a remediation: "started", "running" (one runs
///       already) or "unknown" (no such swarm). It works on the swarm's
///       current reasons, or on few-seeders + stalled-leechers when it has
///       none (`operator_reasons_for`), even for a healthy or small swarm,
///       and ends like any other (healthy for healthy_time) or by a stop.
///       Clears the swarm's hold-off.
///   (remediate_atom, stop_atom, info_hash) -> std::string
///       an operator stops it: "stopped" once the swarm runs on its
///       defaults again, "none" (nothing runs) or "unknown". The swarm then
///       gets no automatic remediation for `operator_holdoff` (else the next
///       health change would start one right away).
///   (counters_atom) -> supervisor_counters   monotonic, since start
///   (policy_atom, put_atom, info_hash, std::string name) -> policy_change
///       an operator sets a swarm's policy: a policy name pins it (it stays
///       until the next change, and every remediation of the swarm restores
///       it at its end and never replaces it meanwhile); "default" unpins
///       and returns the swarm to the config's default policy. With a
///       remediation running, the remediation applies it (its baseline
///       changes); otherwise the swarm. Logs one info line (old -> new) and
///       records an "operator-policy" event. Errors:
///       `sec::cannot_forward_to_invalid_actor` (no such swarm here),
///       `sec::invalid_argument` (unknown name), or the swarm's.
///   (policy_atom, get_atom, info_hash) -> bool   whether its policy is pinned
///   (restart_atom, info_hash) -> std::string
///       an operator restarts the swarm actor: "restarting" (it is killed
///       and restarted from its state like after a crash; the restart is
///       logged with the old and the new actor) or "unknown".
///   (events_atom, put_atom, supervisor_event)
///       records an event someone else did (the admin API's bans, access
///       list changes, moves; the time is the supervisor's)
///   (caf::get_atom, info_hash) -> local_swarm_actor
///                                    the current actor of a supervised swarm
///                                    (invalid handle if none)
///
/// Remediation actors monitor the supervisor and end with it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <caf/all.hpp>

#include "runtime/remediation_actor.hpp"
#include "runtime/supervisor_interface.hpp"
#include "runtime/swarm_actor.hpp"
#include "tracker/healing_types.hpp"

namespace sk {

/// Supervisor tunables.
struct supervisor_config {
  /// Restarts of one swarm allowed within `restart_window`; one more crash
  /// and the supervisor gives up on that state. 3 in 60 s: a swarm that
  /// keeps crashing on its own state must not burn a core.
  std::uint32_t max_restarts = 3;
  std::chrono::seconds restart_window{60};
  /// Supervisor events kept (ring, oldest dropped). 256.
  std::size_t event_log_size = 256;
  /// Spawn remediation actors at all.
  bool remediation = true;
  /// Swarms smaller than this (seeders + leechers) get no remediation: a
  /// lone leecher of a dead torrent is "no seeders" but nothing a tracker can
  /// fix. 5 (the health model's `min_peers` default).
  std::uint64_t remediation_min_peers = 5;
  /// After an operator stopped a swarm's remediation, the supervisor starts
  /// none on its own for this swarm for this long (an operator start still
  /// works). 1 h.
  std::chrono::seconds operator_holdoff{3600};
  remediation_config remediation_cfg;

  /// Empty when usable, otherwise one sentence naming the first bad field.
  std::string validate() const;
};

/// State of the supervisor actor.
struct supervisor_state {
  static inline const char* name = "sk.supervisor";

  struct entry {
    local_swarm_actor swarm;
    swarm_core_ptr core;
    remediation_actor remediation;
    /// An operator asked the running remediation to stop.
    bool stopping = false;
    /// The policy an operator pinned (see the interface).
    std::optional<policy_kind> pinned;
    /// Set while the swarm of a pinned entry sleeps as data (its actor
    /// ended normally with peers): the history the pin belongs to.
    std::uint64_t asleep_lineage = 0;
    /// An operator asked for the restart under way (logged as such).
    bool operator_restart = false;
  };

  supervisor_config cfg;
  std::weak_ptr<swarm_registry> registry;
  /// Whether a registry was given at all (without one, restarts are not
  /// put into any directory; tests).
  bool has_registry = false;
  std::unordered_map<info_hash, entry, id20_hasher> swarms;
  /// The running swarms' actors (a swarm's watch adds it, its down message
  /// takes it out: twice for every swarm that wakes and falls asleep again).
  /// CAF's hash of an address is the actor id.
  std::unordered_map<caf::actor_addr, info_hash> by_swarm;
  std::map<caf::actor_addr, info_hash> by_remediation;
  /// Crash times per swarm within the restart window (kept after a give-up,
  /// so a fresh swarm of that hash inherits the count).
  std::unordered_map<info_hash, std::deque<health_time>, id20_hasher> crashes;
  std::deque<supervisor_event> events;
  /// No automatic remediation for these swarms before the time given
  /// (operator stops; expired entries are dropped when next looked at).
  std::unordered_map<info_hash, health_time, id20_hasher> holdoff;
  /// Every hash whose entry was given a pinned policy and may still hold
  /// it (a superset: entries unpinned or erased since leave it when the
  /// holds are next read), so reading the holds for a state file visits
  /// the pins, not every swarm.
  std::unordered_set<info_hash, id20_hasher> pin_candidates;
  supervisor_counters counters;
};

using supervisor_actor_ptr = supervisor_actor::stateful_pointer<supervisor_state>;

supervisor_actor::behavior_type supervisor_behavior(supervisor_actor_ptr self,
                                                    supervisor_config cfg,
                                                    std::weak_ptr<swarm_registry> registry);

/// Spawns the supervisor. `registry` (the directory) may be empty.
supervisor_actor spawn_supervisor(caf::actor_system& sys, const supervisor_config& cfg,
                                  std::weak_ptr<swarm_registry> registry = {});

/// The state to restart a crashed swarm from: `core` itself when its
/// invariants hold, else a new empty core with the same hash and config
/// (`fresh` set). Null `core` yields null.
swarm_core_ptr recover_core(const swarm_core_ptr& core, bool& fresh);

}  // namespace sk
