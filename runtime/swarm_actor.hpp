#pragma once
/// The swarm actor: one per info_hash, owning that swarm's `swarm_core`.
///
/// Its type is `local_swarm_actor` (runtime/swarm_interface.hpp, where every
/// message is declared); spawned typed, so CAF checks every handler below
/// against that list at compile time.
///
///   (announce_atom, announce_ticket_ptr)
///       Applies the announce and answers through `ticket->complete()` on
///       this actor's thread: counts, intervals, peers (compact requests:
///       `peers4`/`peers6`; others: `peers`), and the self-healing fields:
///       `warning_message`, or `failure_reason` with `retry_in_minutes` for a
///       refused announce (banned client, too frequent after a warning).
///       `stopped` gets counts but no peers. A ticket for another info_hash
///       gets `fail()`. The one announce entry point.
///   (scrape_atom, scrape_ticket_ptr)   the counts, through `complete()`; the
///       one scrape entry point
///   (announce_atom, swarm_announce) -> announce_result
///       the request form (scoped actors in tests and tools): turned into a
///       ticket that answers the request (runtime/swarm_tickets.hpp), served
///       as above; another info_hash answers `sec::invalid_argument`
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
///   (progress_atom, std::vector<remediation_progress>)  the remediation's
///                                                 progress after each step (kept
///                                                 for snapshots); empty: it ended
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
///   (observer_atom, health_observer)              every tick's report also goes
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
///   Migration and replication (runtime/swarm_snapshot.hpp):
///   (caf::migrate_atom, caf::get_atom) -> swarm_snapshot   the whole state; then quits
///   (snapshot_atom) -> swarm_snapshot             the same, keeps running
///   (caf::migrate_atom, caf::put_atom, swarm_snapshot)     merges a snapshot into the core
///
///   Wake-ups: (sweep_atom), (tick_atom), from the node's ticker (the
///   directory's wheel, runtime/swarm_timers.hpp; nothing holds the actor
///   once it ends) or, for a swarm without a registry, CAF delayed
///   messages to itself.
///
/// Health: every `health_tick` the core evaluates its health; a changed
/// report goes to the supervisor as `(health_atom, info_hash,
/// health_report)`, every report to the observer.
///
/// Lifecycle:
///
///   spawn ──▶ serving ──(sweep cycle finds it empty for idle_lifetime)──▶
///             erase own directory entry (if it still points here) ──▶ quit
///   serving ──(sweep cycle: peers, no request for hibernate_after, healthy
///             when evaluated then, no remediation or observer)──▶ the
///             registry keeps its snapshot as data
///             (`swarm_registry::hibernate`) ──▶ quit; the next request
///             routed to it spawns a new actor on that state. A swarm that
///             could sleep but for its quiet time sweeps again when that
///             time is up, so it sleeps `hibernate_after` after its last
///             request, not up to a sweep period later.
///
/// The state lives in a `swarm_core` shared with the supervisor: when the
/// actor dies abnormally, the supervisor spawns a new one on the same core
/// (runtime/supervisor.hpp), so no peer is lost.
///
/// The sweep runs every `sweep_period`; a cycle over a big table is split
/// into messages of at most `sweep_batch` peers, each sent to itself so that
/// queued announces are served between them.
///
/// Backlog: an announce ticket that finds more than `max_backlog` messages
/// waiting in the mailbox behind it is answered "swarm busy, retry later"
/// (failure reason with `retry in`) without running the core: the oldest
/// tickets, those nearest their gateway deadline, go first, each for the
/// price of one mailbox count (CAF 0.17's `mailbox().size()`: it moves the
/// newly arrived messages into the actor's queue, which the next read does
/// anyway, and sums four counters).

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "runtime/probe_interface.hpp"
#include "runtime/swarm_interface.hpp"
#include "runtime/swarm_timers.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"

namespace sk {

/// Node-wide counters every swarm of a directory adds to as it serves
/// announces, so that they stay monotonic when swarms end or move (a sum
/// over the live swarms would fall). Relaxed atomics: each is bumped only
/// when the event it counts happened, which is rare next to announces.
struct swarm_totals {
  /// `swarm_core_counters::repeats` of every swarm, since start.
  std::atomic<std::uint64_t> repeats{0};
  /// `swarm_core_counters::early` of every swarm, since start.
  std::atomic<std::uint64_t> early{0};
  /// `swarm_core_counters::banned` and `refused` (min interval) of every
  /// swarm, since start.
  std::atomic<std::uint64_t> banned{0};
  std::atomic<std::uint64_t> refused{0};
  /// Completed downloads (`event=completed`) of every swarm, since start.
  std::atomic<std::uint64_t> completed{0};

  /// Gauges: the sum of the `swarm_share` of every swarm actor running now.
  /// Each actor adds the change of its share after every announce, sweep,
  /// health tick and merge, and takes its whole share back when it ends
  /// (quits, crashes, moves away), so the node's totals need no walk over
  /// the swarms however many there are.
  static constexpr std::size_t health_states = 4;  ///< swarm_health values
  std::array<std::atomic<std::int64_t>, health_states> swarms_by_health{};
  /// Seeders + leechers of the swarms in each health state.
  std::array<std::atomic<std::int64_t>, health_states> peers_by_health{};
  /// Degraded or critical swarms per `health_reason` bit.
  std::array<std::atomic<std::int64_t>, health_reason_count> unhealthy_by_reason{};
  std::atomic<std::int64_t> seeders{0};
  /// Leechers, partial seeds included (as scrape's `incomplete`).
  std::atomic<std::int64_t> leechers{0};
  std::atomic<std::int64_t> partial_seeds{0};
  std::atomic<std::int64_t> peers_ipv4{0};
  std::atomic<std::int64_t> peers_ipv6{0};

  // -- the bounds against one outsider (counters since start) -----------------

  /// New peers refused because their address held
  /// `tracker.max-peers-per-address` peers of the swarm.
  std::atomic<std::uint64_t> address_refused{0};
  /// Announces answered "swarm busy" unapplied because more than
  /// `tracker.max-swarm-backlog` messages waited behind them.
  std::atomic<std::uint64_t> backlog_shed{0};
  /// Whether each bound was reached since start (its one log line).
  std::atomic<bool> address_cap_reached{false};
  std::atomic<bool> backlog_reached{false};

  // -- quiet swarms kept as data (swarm_config::hibernate_after) ---------------

  /// Swarms the directory holds as data now (a gauge).
  std::atomic<std::int64_t> dormant{0};
  /// Swarms put to sleep, and woken by a request, since start.
  std::atomic<std::uint64_t> hibernated{0};
  std::atomic<std::uint64_t> woken{0};
  /// Quiet swarms kept awake one more sweep because the node's
  /// hibernations per second were used up (swarm_config).
  std::atomic<std::uint64_t> hibernations_deferred{0};
};

/// What one swarm actor counts in `swarm_totals`' gauges.
struct swarm_share {
  bool running = false;  ///< counted at all (false: an actor that ended)
  swarm_health health = swarm_health::unevaluated;
  std::uint32_t reasons = 0;  ///< only while degraded or critical
  std::int64_t seeders = 0;
  std::int64_t leechers = 0;
  std::int64_t partial_seeds = 0;
  std::int64_t peers_ipv4 = 0;
  std::int64_t peers_ipv6 = 0;

  /// The share of a running swarm on `core`.
  static swarm_share of(const swarm_core& core) noexcept;
  friend bool operator==(const swarm_share& a, const swarm_share& b) noexcept {
    return a.running == b.running && a.health == b.health && a.reasons == b.reasons &&
           a.seeders == b.seeders && a.leechers == b.leechers &&
           a.partial_seeds == b.partial_seeds && a.peers_ipv4 == b.peers_ipv4 &&
           a.peers_ipv6 == b.peers_ipv6;
  }
  friend bool operator!=(const swarm_share& a, const swarm_share& b) noexcept { return !(a == b); }
};

/// Moves `t`'s gauges from `from` to `to` (what changed only).
void move_share(swarm_totals& t, const swarm_share& from, const swarm_share& to) noexcept;

/// A quiet swarm kept by its directory as data instead of an actor
/// (`swarm_config::hibernate_after`): its whole state encoded, and what it
/// still counts in the node's gauges and census, which stay as they were
/// while it sleeps. Immutable once handed to the directory.
struct dormant_swarm {
  dormant_swarm() = default;
  /// A copy of `o` with its bytes on `r` (the directory's compact heap).
  /// Names every field: a field added below goes here too.
  dormant_swarm(const dormant_swarm& o, std::pmr::memory_resource* r)
      : bytes(o.bytes, r),
        raw_size(o.raw_size),
        taken(o.taken),
        drop_at(o.drop_at),
        share(o.share),
        census_peers(o.census_peers),
        at_peer_cap(o.at_peer_cap),
        peers(o.peers),
        downloaded(o.downloaded),
        announce_rate(o.announce_rate),
        policy(o.policy),
        evaluated(o.evaluated) {}

  /// `pack_snapshot` of the swarm's snapshot; its ages count from `taken`.
  std::pmr::vector<char> bytes;
  /// The size of the sleeping form before it was compressed.
  std::uint32_t raw_size = 0;
  /// When the snapshot was taken (the actor system's clock).
  health_time taken;
  /// When its newest peer times out and the swarm, empty, would have ended
  /// idle (`peer_timeout` + `idle_lifetime` after that peer's last
  /// announce): the directory drops it then unless a request woke it.
  health_time drop_at;
  /// Its share in `swarm_totals`' gauges and in the node census.
  swarm_share share;
  std::uint32_t census_peers = 0;
  bool at_peer_cap = false;
  std::uint32_t peers = 0;
  /// What an operator's list of swarms shows besides `share`, as it was at
  /// the sleep: completions, the announce rate of the last health report,
  /// the allocation policy, and whether it had a report at all.
  std::uint64_t downloaded = 0;
  float announce_rate = 0;
  policy_kind policy = policy_kind::adaptive;
  bool evaluated = false;
};
using dormant_ptr = std::shared_ptr<const dormant_swarm>;

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
                                const local_swarm_actor& replacement) {
    (void)hash;
    (void)dead;
    (void)replacement;
    return false;
  }
  /// Takes over a quiet swarm as data (`swarm_config::hibernate_after`):
  /// when the entry for `hash` still points at `swarm` and the registry
  /// keeps sleeping swarms, it keeps `d` in the entry instead, takes over
  /// `d`'s gauge and census share and returns true (the actor then quits;
  /// requests queued behind bounce and are routed again, which wakes it).
  /// Called from the swarm's own thread. The default keeps none.
  virtual bool hibernate(const info_hash& hash, const caf::actor_addr& swarm,
                         const dormant_swarm& d) {
    (void)hash;
    (void)swarm;
    (void)d;
    return false;
  }
  /// Whether the registry keeps sleeping swarms at all: asked first, so a
  /// swarm that may not sleep never packs itself nor takes one of the
  /// node's hibernations. The default keeps none.
  virtual bool keeps_sleeping_swarms() const { return false; }
  /// Asked before a quiet swarm packs itself for `hibernate`: whether the
  /// node's hibernations per second (swarm_config) leave one at `now`;
  /// false counts a deferral, and the swarm tries again at a deferred sweep.
  /// The default always grants one.
  virtual bool take_hibernation(health_time now) {
    (void)now;
    return true;
  }
  /// The reachability prober swarms send `(probe_atom, probe_request)` to;
  /// invalid (the default): swarms never probe. Read once when a swarm
  /// actor starts (also a restarted one).
  virtual prober_interface prober() const { return {}; }
  /// Where the swarm adds its node-wide counts; null (the default): nowhere.
  /// Read once when a swarm actor starts.
  virtual std::shared_ptr<swarm_totals> totals() const { return nullptr; }
  /// The node's wheel of wake-ups (runtime/swarm_timers.hpp), whose ticker
  /// sends the swarm its sweeps and health ticks; null (the default): the
  /// swarm uses CAF's delayed messages. Read once when a swarm actor starts.
  virtual std::shared_ptr<swarm_timers> timers() { return nullptr; }
};

/// A swarm actor's part of the node census (tracker/node_census.hpp): the
/// peers it added (its table's size when it last added) and whether its
/// swarm is at its own peer cap. Taken back when the actor ends, so a core
/// that moves, ends or is restarted (its new actor adds its table again) is
/// never counted twice.
struct census_share {
  /// The node's census (held by the core's settings); null: none.
  node_census* census = nullptr;
  std::uint32_t peers = 0;
  bool at_cap = false;

  census_share() = default;
  census_share(const census_share&) = delete;
  census_share& operator=(const census_share&) = delete;
  ~census_share() {
    if (census == nullptr) return;
    census->add_peers(-static_cast<std::int64_t>(peers));
    if (at_cap) census->swarm_at_peer_cap(-1);
  }
};

/// State of a swarm actor (the actor itself only passes messages).
struct swarm_state {
  static inline const char* name = "sk.swarm";
  swarm_core_ptr core;
  std::weak_ptr<swarm_registry> registry;
  /// Receives changed health reports; may be invalid (no supervision).
  health_observer supervisor;
  /// Receives every health report (a running remediation); may be invalid.
  health_observer observer;
  /// Reused by the ticket handler (keeps buffer capacity between announces).
  announce_result scratch;
  /// Where probe requests go (from the registry); invalid: no probing.
  prober_interface prober;
  /// Node-wide counts (from the registry); may be null.
  std::shared_ptr<swarm_totals> totals;
  /// The core's counts already added to `totals`. Taken from the core when
  /// the actor starts: a restarted swarm added its counts before it died (it
  /// adds after every announce), and a migrated one on its old node.
  std::uint64_t added_repeats = 0;
  std::uint64_t added_early = 0;
  /// Declared after `core`, so destroyed while the core's settings (and the
  /// census they hold) are still alive.
  census_share census;
  std::uint64_t added_banned = 0;
  std::uint64_t added_refused = 0;
  std::uint64_t added_completed = 0;
  std::uint64_t added_address_refused = 0;
  /// This actor's share in `totals`' gauges now.
  swarm_share published;
  /// The node's wheel (from the registry) and this swarm's entry in it;
  /// null: CAF's delayed messages (a swarm without a registry).
  std::shared_ptr<swarm_timers> timers;
  swarm_timer timer;
  /// The last announce or scrape served (or the actor's start): the quiet
  /// time `hibernate_after` counts from.
  health_time last_request{};

  swarm_state() = default;
  swarm_state(const swarm_state&) = delete;
  swarm_state& operator=(const swarm_state&) = delete;
  /// Takes the actor's share back from the node's gauges and its entry out
  /// of the node's wheel, however it ended.
  ~swarm_state();
};

using swarm_actor_ptr = local_swarm_actor::stateful_pointer<swarm_state>;

/// Spawns a swarm actor on `core` (not null; its config valid). `registry`
/// and `supervisor` may be empty (a swarm nobody tracks, e.g. in tests).
/// Thread-safe and non-blocking (safe on an I/O thread); normally called by
/// `swarm_directory::route` or the supervisor, not directly. The actor
/// takes the two ticket messages (announce, scrape) before its behavior:
/// one lookup of the message's types instead of a walk through the
/// behavior's handlers, and no read of the behavior object.
local_swarm_actor spawn_swarm(caf::actor_system& sys, swarm_core_ptr core,
                              std::weak_ptr<swarm_registry> registry = {},
                              health_observer supervisor = {});

/// Spawns a swarm actor on a new core for `hash` (`cfg` must be valid).
local_swarm_actor spawn_swarm(caf::actor_system& sys, const info_hash& hash,
                              const swarm_config& cfg, std::uint64_t seed,
                              std::weak_ptr<swarm_registry> registry = {});

/// Clears the per-announce fields of a reused result (keeps buffer capacity).
void reset_result(announce_result& r);

}  // namespace sk
