#pragma once
/// Settings of one swarm: announce timing, peer selection limits, expiry and
/// lifetime, and the self-healing settings (detectors, health model,
/// allocation, interval control). Plain data (no CAF), validated once at
/// start-up. What changes while the node runs (the ban list, the node's
/// population) is not a setting: `swarm_settings` carries it beside the
/// config (`node_shared`).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tracker/allocation.hpp"
#include "tracker/client_id.hpp"
#include "tracker/healing_types.hpp"
#include "tracker/node_census.hpp"
#include "tracker/peer_behaviour.hpp"
#include "tracker/swarm_health.hpp"

namespace sk {

/// Automatic announce-interval control: what a tracker can do to
/// make clients come back sooner or later.
///
///   requester            swarm                                      interval
///   leecher              starving (no/few seeders or flash crowd,   base x starving_leecher_scale
///                        at least health.min_peers peers)
///   anyone               healthy, at least large_swarm_peers peers  base x large_swarm_scale
///   anyone               otherwise                                  base (exact, no jitter)
///
/// then x the swarm's knobs (`interval_scale`, and `leecher_interval_scale`
/// for leechers). An interval that differs from the base is jittered by up
/// to +-`jitter` (deterministic from the swarm's seed), so that clients told
/// at the same moment do not come back in step. The result is always within
/// [min_interval, max(interval, peer_timeout - min_interval)]: never below
/// `min interval`, and a longer interval still leaves a peer one min
/// interval to retry a lost announce before it expires.
struct interval_control {
  /// Leechers of starving swarms: they learn of new seeders sooner. 0.5
  /// (900 s at the default 1800 s, i.e. the default min interval).
  double starving_leecher_scale = 0.5;
  /// Healthy swarms of at least this many peers get longer intervals: fewer
  /// announces where nothing needs fixing. 1000 peers.
  std::size_t large_swarm_peers = 1000;
  /// 1.5 (2700 s at the default interval, below peer_timeout - min interval
  /// = 3000 s).
  double large_swarm_scale = 1.5;
  /// +- fraction applied to adjusted intervals, [0, 0.5]. 0.1.
  double jitter = 0.1;
  /// A leecher a reachability probe found unreachable gets its interval x
  /// this (never below min interval), (0, 1]: nobody can dial it, so it
  /// meets peers that arrived after it only by announcing and dialling
  /// them. 0.5. The swarm simulator measured why (bench/sim/README.md).
  double unreachable_leecher_scale = 0.5;
};

/// When a swarm asks for reachability probes (optional, off by
/// default). The probing itself (sockets, deadlines, address rules, the
/// per-address cooldown) is the prober's business (net/reachability_prober);
/// the swarm decides only which of its peers to ask about and how many at once.
///
///   announce of a stored, non-quarantined peer with a port
///     └─ never probed, or probed for another port, or last asked
///        `reprobe_after` ago ─┬─ fewer than `max_outstanding` asked ─▶ request
///                             └─ else: wait for its next announce
///   result: reachable ─▶ flag_reachable (clears flag_unreachable)
///           unreachable ─▶ flag_unreachable (clears flag_reachable; NATed
///                          peers are normal: never quarantined)
///           bogus ─▶ flag_quarantined (never handed to others)
///           skipped ─▶ nothing
/// An answer that does not come within `result_timeout` frees its slot.
struct probe_settings {
  /// Ask for probes at all. Takes effect only in swarms that were given a
  /// prober (the daemon's `probe.enable`). Off by default.
  bool enabled = false;
  /// A peer is probed again after this long. 1 h.
  std::chrono::seconds reprobe_after{3600};
  /// Probes one swarm may have asked for and not yet heard back about. 8.
  std::size_t max_outstanding = 8;
  /// An outstanding probe without an answer for this long is forgotten (the
  /// prober stopped, or the answer went to a crashed predecessor). 5 min.
  std::chrono::seconds result_timeout{300};
};

/// Tunables of every swarm of a node. Swarms do not copy it: each holds the
/// node's one `swarm_settings` (below); what remediation changes per swarm
/// lives in the swarm's `swarm_knobs`.
///
/// Timing model: clients re-announce every `announce_interval` (never sooner
/// than `min_interval`); a peer that has not announced for `peer_timeout` is
/// gone. The sweep runs every `sweep_period` and examines at most
/// `sweep_batch` peers per message, continuing right away (after whatever
/// announces queued up meanwhile) until it has covered the whole table, so a
/// huge swarm never stalls its mailbox and still expires peers within about
/// `peer_timeout + sweep_period`.
struct swarm_config {
  /// `interval` in announce replies.
  std::chrono::seconds announce_interval{1800};
  /// `min interval` in announce replies.
  std::chrono::seconds min_interval{900};
  /// Peers returned when the client does not send `numwant`.
  std::int32_t default_numwant = 50;
  /// Most peers returned for any request (larger `numwant` is clamped).
  std::int32_t max_numwant = 50;
  /// A peer not seen for this long is dropped. Two intervals plus slack, so a
  /// single lost announce does not drop a live peer.
  std::chrono::seconds peer_timeout{2 * 1800 + 300};
  /// Time between two sweep cycles.
  std::chrono::seconds sweep_period{60};
  /// Peers examined per sweep message (bounds the work between two mailbox
  /// reads).
  std::size_t sweep_batch = 1024;
  /// A swarm without peers for this long ends its actor (checked at each
  /// sweep, so the actual lifetime is up to one `sweep_period` longer).
  std::chrono::seconds idle_lifetime{600};
  /// A swarm with peers that has served no announce or scrape for this long
  /// is kept by its directory as compact data (an encoded snapshot) instead
  /// of a running actor, and becomes an actor again on its next request
  /// (the swarm sweeps when that time is up; its health is evaluated then).
  /// Only a healthy or unevaluated swarm with no remediation under way
  /// sleeps, and only on a node outside a cluster. 0: never. 20 s: clients
  /// re-announce once per interval (30 min), so a ten-peer swarm hears from
  /// one every 3 min on average and is awake for 1 - e^(-20/180), about a
  /// tenth, of the time (28% with 1 min); a wake costs a few microseconds
  /// (bench/memory/README.md, "Asleep 20 s after the last request").
  std::chrono::seconds hibernate_after{20};
  /// Most swarms the node puts to sleep per second (a token bucket holding
  /// a hundredth of a second's worth, node-wide). A swarm refused a slot stays
  /// an actor and sweeps again between a sixth and a half of
  /// `sweep_period` later. Going to sleep costs the thread that also
  /// serves announces the swarm's packing and its actor's end; a
  /// population filled quickly
  /// falls asleep about as quickly, and unbounded that wave kept the
  /// scheduler busy for seconds while announces queued behind it. 1,000:
  /// about a tenth of a core at most. Swarms that requests woke are not
  /// counted against it (each wake earns one sleep: runtime/directory.cpp,
  /// `take_hibernation`). 0: unbounded.
  std::uint32_t hibernations_per_second = 1000;
  /// Most peers one swarm stores; a new peer beyond it is refused with a
  /// retryable failure (memory bound against peer_id flooding), known peers
  /// are served. 200,000: above the largest public swarms (about 150,000
  /// peers at their peak), and about 30 MB of peer records.
  std::size_t max_peers = 200000;
  /// Most peers one address (an IPv4 address, an IPv6 /64) may hold in one
  /// swarm; a new peer beyond it is refused with `retry in`, the address's
  /// known peers are served. 0: unbounded. At most
  /// `address_counts::max_count`. 256: NAT and carrier-grade NAT put many
  /// real peers behind one IPv4 address (a CGNAT address serves hundreds to
  /// thousands of subscribers), but rarely more than a few dozen of them in
  /// one torrent; 256 leaves room for that and still keeps one address
  /// from filling a swarm with fake peers (a thousandth of `max_peers`).
  std::size_t max_peers_per_address = 256;
  /// `retry in` minutes sent to a new peer refused at
  /// `max_peers_per_address` (BEP 31).
  std::int64_t address_full_retry_in_minutes = 5;
  /// Most messages a swarm actor lets wait in its mailbox: an announce that
  /// finds more behind it is answered "swarm busy" with `retry in`
  /// (`busy_retry_in_minutes`) without being applied, so a swarm that cannot
  /// keep up sheds load instead of queueing without bound (the gateway's
  /// per-lane bound frees a slot at each request's deadline, while its
  /// ticket stays queued here). 0: unbounded. 32768: twice what four lanes
  /// at the default `gateway.max-in-flight` hold, a few tens of ms of work.
  std::size_t max_backlog = 32768;
  std::int64_t busy_retry_in_minutes = 1;
  /// Seed for peer selection. 0: every swarm draws an unpredictable seed;
  /// anything else: each swarm's seed is derived from this and its
  /// info_hash (reproducible runs, tests, the simulator).
  std::uint64_t rng_seed = 0;

  // -- self-healing -----------------------------------------------------------

  /// Time between two health evaluations of a swarm (each reports changes to
  /// the supervisor and feeds a running remediation).
  std::chrono::seconds health_tick{60};
  /// Per-peer detectors. `behaviour.min_interval` is ignored: the swarm
  /// always judges against its own `min_interval`.
  behaviour_config behaviour;
  /// Health model thresholds.
  health_config health;
  /// Allocation policy tunables.
  allocation_config allocation;
  /// Policy of a new swarm (remediation and operators change it per swarm).
  policy_kind default_policy = policy_kind::adaptive;
  /// Interval control.
  interval_control intervals;
  /// `retry in` minutes sent with a ban's failure reason; negative = never
  /// (BEP 31): a banned client gains nothing by retrying.
  std::int64_t banned_retry_in_minutes = -1;
  /// While the swarm is degraded or critical for a reason more seeding
  /// would fix (no/few seeders, stalled leechers, seeders leaving early, low
  /// completion rate, flash crowd), seeders get `seeder_warning_text` as
  /// `warning message`.
  bool warn_seeders_when_degraded = true;
  std::string seeder_warning_text =
      "This torrent is short of seeders: please keep seeding, it helps others finish";
  /// Reachability probe decisions (off by default).
  probe_settings probe;
  /// Remediation actions remembered per swarm (oldest dropped first).
  std::size_t history_size = 64;
  /// Test-only hooks: `(crash_atom)` makes the swarm actor throw, so tests
  /// can prove restarts. Off in the daemon (no config option).
  bool test_hooks = false;

  /// The knobs a new swarm starts with (and remediation restores).
  swarm_knobs default_knobs() const {
    swarm_knobs k;
    k.policy = default_policy;
    return k;
  }

  /// Checks every field; returns an empty string when the config is usable,
  /// otherwise one sentence naming the first bad field and why.
  std::string validate() const;

  /// Peers to select for a request's `numwant`: negative (not given) means
  /// `default_numwant`, anything else is clamped to `max_numwant`.
  std::size_t resolve_numwant(std::int32_t requested) const noexcept {
    if (requested < 0) {
      return static_cast<std::size_t>(default_numwant);
    }
    return static_cast<std::size_t>(requested < max_numwant ? requested : max_numwant);
  }
};

/// Whether two configs are equal field by field. Configs that are equal can
/// share one `swarm_settings`.
bool same_config(const swarm_config& a, const swarm_config& b) noexcept;

/// The live state every swarm of a node shares, handed to the swarms beside
/// their config (not part of it): the node's ban list and its population
/// against the caps. Either may be null: no bans, no node-wide counts.
struct node_shared {
  /// Banned peer_id prefixes (changed at run time by the admin API).
  std::shared_ptr<live_ban_list> bans;
  /// Swarms and peers of the node, its caps and their refusals.
  std::shared_ptr<node_census> census;
};

/// One `swarm_config`, immutable and shared by every swarm built from it,
/// with what each swarm would otherwise derive and keep a copy of, and the
/// node's live state. A node's swarms all run on one of these: 16 bytes per
/// swarm instead of a 550-byte copy with its own warning text on the heap.
struct swarm_settings {
  explicit swarm_settings(swarm_config cfg, node_shared node = {});

  swarm_config config;
  /// The node's live lists and counts (not settings: not compared by
  /// `same_config`, never in a config).
  node_shared node;
  /// The per-peer detectors' thresholds: `config.behaviour`, judged against
  /// the swarm's own `config.min_interval` ...
  behaviour_config behaviour;
  /// ... and the same under the `quarantine_strict` knob: one strike
  /// quarantines, the first early announce is refused.
  behaviour_config strict_behaviour;
};

using swarm_settings_ptr = std::shared_ptr<const swarm_settings>;

/// Settings for `cfg` without node state (no bans, no node-wide counts),
/// shared with the swarms built from an equal config just before on this
/// thread (`same_config`): swarms built one after the other from one config
/// share one `swarm_settings`. Thread-safe (the cache is per thread and holds
/// no reference, so settings end with their last swarm). A node's directory
/// builds its one `swarm_settings` with its `node_shared` itself.
swarm_settings_ptr share_settings(const swarm_config& cfg);

}  // namespace sk
