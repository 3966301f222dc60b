#pragma once
/// The swarm actor: one per info_hash, owning that swarm's `swarm_core`.
///
/// Interface (a `caf::actor`, as the directory hands out; the network and
/// operator messages are `swarm_interface` below, checked at compile time):
///
///   (announce_atom, swarm_announce) -> announce_result
///       Applies the announce and answers with counts, intervals, peers
///       (compact requests: `peers4`/`peers6`; others: `peers`), and the
///       self-healing fields: `warning_message`, or `failure_reason` with
///       `retry_in_minutes` for a refused announce (banned client, too
///       frequent after a warning). `stopped` gets counts but no peers. A
///       request for another info_hash is answered with
///       `sec::invalid_argument`.
///   (announce_atom, announce_ticket_ptr)
///       The same announce, answered through `ticket->complete()` on this
///       actor's thread instead of a response message (`fail()` for another
///       info_hash). Used by the UDP server's direct path.
///   (scrape_atom) -> swarm_stats
///   (scrape_atom, scrape_ticket_ptr)  the same, answered through
///       `ticket->complete()` (the UDP server's direct path)
///
///   Self-healing and admin:
///   (health_atom, get_atom) -> health_report      last tick's report
///                                                 (`sec::runtime_error` before the first)
///   (status_atom) -> swarm_status                 counts, knobs, health, history,
///                                                 this actor's id
///   (status_atom, get_atom, uint32_t n) -> swarm_status   the same plus the
///                                                 first n peers (admin API)
///   (history_atom, get_atom) -> std::vector<remediation_record>
///   (history_atom, put_atom, remediation_record)  remediation appends an action
///   (knobs_atom, get_atom) -> swarm_knobs
///   (knobs_atom, put_atom, swarm_knobs) -> swarm_knobs   the previous knobs;
///                                                 `sec::invalid_argument` if out of range
///   (policy_atom, get_atom) -> std::string        e.g. "adaptive"
///   (policy_atom, put_atom, std::string) -> std::string  sets by name
///                                                 ("default": the config's
///                                                 default policy), answers the
///                                                 previous; unknown name:
///                                                 `sec::invalid_argument`. An
///                                                 operator's change goes through
///                                                 the supervisor (pinning).
///   (observer_atom, caf::actor)                   every tick's report also goes
///                                                 to this actor (remediation);
///                                                 an invalid handle clears it
///   (crash_atom)                                  throws (the actor dies with an
///                                                 error) if `swarm_config::test_hooks`,
///                                                 else ignored: tests prove restarts
///
///   Reachability probes (only with a prober and `probe.enabled`):
///   (probe_atom, probe_result)                    the prober's answer; applied
///                                                 to the core (flags, quarantine)
///   and, to the prober, (probe_atom, probe_request) for each probe the core
///   decides on after an announce.
///
///   Cluster (see cluster/cluster_messages.hpp):
///   (caf::migrate_atom, caf::get_atom) -> cluster::swarm_snapshot
///                                                 the whole state; then quits
///   (cluster::snapshot_atom) -> cluster::swarm_snapshot   the same, keeps running
///   (caf::migrate_atom, caf::put_atom, cluster::swarm_snapshot)
///                                                 merges a snapshot into the core
///
///   Internal timers, sent to itself: (sweep_atom), (tick_atom).
///
/// Health: every `health_tick` the core evaluates its health; a changed
/// report goes to the supervisor as `(health_atom, info_hash,
/// health_report)`, every report to the observer.
///
/// Lifecycle:
///
///   spawn ──▶ serving ──(sweep cycle finds it empty for idle_lifetime)──▶
///             erase own directory entry (if it still points here) ──▶ quit
///
/// The state lives in a `swarm_core` shared with the supervisor: when the
/// actor dies abnormally, the supervisor spawns a new one on the same core
/// (runtime/supervisor.hpp), so no peer is lost.
///
/// The sweep runs every `sweep_period`; a cycle over a big table is split
/// into messages of at most `sweep_batch` peers, each sent to itself so that
/// queued announces are served between them.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "runtime/messages.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"

namespace sk {

// -- the swarm interface --------------------------------------------------------
//
// What every actor the directory hands out for an info_hash accepts: the
// local swarm actor, and the forwarder to the node that owns the swarm
// (cluster/forwarder.hpp). Both build these handlers as a
// `swarm_interface::behavior_type`, which CAF checks against the list at
// compile time (a missing, extra or mistyped handler does not compile),
// and add handlers of their own (timers, migration, hops) after it
// (`with_own_handlers`). The actors themselves stay dynamically typed
// (`caf::actor`, as the directory and the gateway hold them);
// `caf::actor_cast<swarm_interface>` of such a handle is therefore sound.

/// What the network layer (the gateway) sends a swarm.
using swarm_network_interface =
    caf::typed_actor<caf::replies_to<announce_atom, swarm_announce>::with<announce_result>,
                     caf::reacts_to<announce_atom, announce_ticket_ptr>,
                     caf::replies_to<scrape_atom>::with<swarm_stats>,
                     caf::reacts_to<scrape_atom, scrape_ticket_ptr>>;

/// What an operator (the admin API, a remediation) asks a swarm. Every one
/// of these may cross nodes (a forwarder sends them to the owner).
using swarm_operator_interface = caf::typed_actor<
    caf::replies_to<status_atom>::with<swarm_status>,
    caf::replies_to<status_atom, caf::get_atom, std::uint32_t>::with<swarm_status>,
    caf::replies_to<history_atom, caf::get_atom>::with<std::vector<remediation_record>>,
    caf::replies_to<knobs_atom, caf::get_atom>::with<swarm_knobs>,
    caf::replies_to<knobs_atom, caf::put_atom, swarm_knobs>::with<swarm_knobs>,
    caf::replies_to<policy_atom, caf::get_atom>::with<std::string>,
    caf::replies_to<policy_atom, caf::put_atom, std::string>::with<std::string>,
    caf::replies_to<health_atom, caf::get_atom>::with<health_report>>;

/// The whole swarm interface (network and operator).
using swarm_interface = swarm_network_interface::extend_with<swarm_operator_interface>;

/// The behavior of an actor that implements an interface (`typed`, checked
/// by the compiler) and handles more messages of its own after it.
template <class... Sigs, class... Fs>
caf::behavior with_own_handlers(caf::typed_behavior<Sigs...> typed, Fs&&... own) {
  caf::message_handler interface_part{typed.unbox().as_behavior_impl()};
  return interface_part.or_else(std::forward<Fs>(own)...);
}

/// Whether `m` is one of the messages `Interface` declares (types, atom
/// values and size; the answer types are not looked at).
template <class Interface>
bool declares(const caf::message& m);

namespace detail {
template <class... Is, class O>
bool matches_signature(const caf::message& m, caf::typed_mpi<caf::detail::type_list<Is...>, O>*) {
  return m.match_elements<Is...>();
}
template <class... Sigs>
bool matches_any_signature(const caf::message& m, caf::detail::type_list<Sigs...>) {
  return (matches_signature(m, static_cast<Sigs*>(nullptr)) || ...);
}
}  // namespace detail

template <class Interface>
bool declares(const caf::message& m) {
  return detail::matches_any_signature(m, typename Interface::signatures{});
}

/// Node-wide counters every swarm of a directory adds to as it serves
/// announces, so that they stay monotonic when swarms end or move (a sum
/// over the live swarms would fall). Relaxed atomics: each is bumped only
/// when the event it counts happened, which is rare next to announces.
struct swarm_totals {
  /// `swarm_core_counters::repeats` of every swarm, since start.
  std::atomic<std::uint64_t> repeats{0};
  /// `swarm_core_counters::early` of every swarm, since start.
  std::atomic<std::uint64_t> early{0};
};

/// What a swarm needs from whoever tracks it (the directory): a way to
/// leave, and (for the supervisor) a way to put a restarted actor in place.
/// Held by `weak_ptr`, so a directory that is gone is simply skipped, and no
/// reference cycle keeps either alive.
class swarm_registry {
 public:
  virtual ~swarm_registry() = default;
  /// Removes the entry for `hash` only if it still points at `swarm`;
  /// returns whether it did. Called from the swarm's own thread.
  virtual bool erase_if_owner(const info_hash& hash, const caf::actor_addr& swarm) = 0;
  /// Points the entry for `hash` at `replacement` only if it still points at
  /// `dead`; returns whether it did (false: the entry is gone or points at
  /// another swarm; the caller stops `replacement`). Called by the
  /// supervisor after a crash. The default does nothing.
  virtual bool replace_if_owner(const info_hash& hash, const caf::actor_addr& dead,
                                const caf::actor& replacement) {
    (void)hash;
    (void)dead;
    (void)replacement;
    return false;
  }
  /// The reachability prober swarms send `(probe_atom, probe_request)` to;
  /// invalid (the default): swarms never probe. Read once when a swarm
  /// actor starts (also a restarted one).
  virtual caf::actor prober() const { return {}; }
  /// Where the swarm adds its node-wide counts; null (the default): nowhere.
  /// Read once when a swarm actor starts.
  virtual std::shared_ptr<swarm_totals> totals() const { return nullptr; }
};

/// State of a swarm actor (the actor itself only passes messages).
struct swarm_state {
  static inline const char* name = "sk.swarm";
  swarm_core_ptr core;
  std::weak_ptr<swarm_registry> registry;
  /// Receives changed health reports; may be invalid (no supervision).
  caf::actor supervisor;
  /// Receives every health report (a running remediation); may be invalid.
  caf::actor observer;
  /// Reused by the ticket handler (keeps buffer capacity between announces).
  announce_result scratch;
  /// Where probe requests go (from the registry); invalid: no probing.
  caf::actor prober;
  /// Node-wide counts (from the registry); may be null.
  std::shared_ptr<swarm_totals> totals;
  /// The core's counts already added to `totals`. Taken from the core when
  /// the actor starts: a restarted swarm added its counts before it died (it
  /// adds after every announce), and a migrated one on its old node.
  std::uint64_t added_repeats = 0;
  std::uint64_t added_early = 0;
};

using swarm_actor_ptr = caf::stateful_actor<swarm_state>*;

/// The swarm behavior on `core` (not null; its config valid). `registry`
/// and `supervisor` may be empty (a swarm nobody tracks, e.g. in tests).
caf::behavior swarm_actor(swarm_actor_ptr self, swarm_core_ptr core,
                          std::weak_ptr<swarm_registry> registry, caf::actor supervisor);

/// Spawns a swarm actor on `core`. Thread-safe and non-blocking (safe on an
/// I/O thread); normally called by `swarm_directory::route` or the
/// supervisor, not directly.
caf::actor spawn_swarm(caf::actor_system& sys, swarm_core_ptr core,
                       std::weak_ptr<swarm_registry> registry = {}, caf::actor supervisor = {});

/// Spawns a swarm actor on a new core for `hash` (`cfg` must be valid).
caf::actor spawn_swarm(caf::actor_system& sys, const info_hash& hash, const swarm_config& cfg,
                       std::uint64_t seed, std::weak_ptr<swarm_registry> registry = {});

/// Clears the per-announce fields of a reused result (keeps buffer capacity).
void reset_result(announce_result& r);

}  // namespace sk
