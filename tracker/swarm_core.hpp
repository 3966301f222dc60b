#pragma once
/// The whole domain of one swarm as a plain class: peers, per-peer
/// behaviour, health, allocation, interval control, messages to clients,
/// and the knobs remediation turns.
///
/// No actor and no clock: every call that depends on time takes `now`. The
/// swarm actor owns one through a `shared_ptr` that the supervisor holds too,
/// so a crashed actor is restarted from exactly this state; the swarm
/// simulator and the unit tests drive it directly. Plain C++: the message
/// structs it takes and returns are in tracker/swarm_messages.hpp.
///
/// One announce:
///
///   hash check ─▶ ban list ─▶ observe_announce (known peer) ──refuse──▶ failure reason
///                                  │                                     + retry in
///                                  ▼
///                    peer_table::announce_ex ─▶ observe_announce (new peer)
///                                  │
///                                  ▼
///                    health tracker (announce, completion, departure)
///                                  │
///                                  ▼
///          allocator (knobs.policy, last health report, family filter)
///                                  │
///                                  ▼
///          interval control ─▶ warning message (misbehaviour, or the
///                              seeder appeal of a degraded swarm)
///
/// Thread safety: none. Exactly one thread uses it at a time (the swarm
/// actor; the supervisor only after that actor is dead).

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "tracker/allocation.hpp"
#include "tracker/healing_types.hpp"
#include "tracker/health_types.hpp"
#include "tracker/lazy_box.hpp"
#include "tracker/peer_behaviour.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/random.hpp"
#include "tracker/recycler.hpp"
#include "tracker/remediation_plan.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_health.hpp"
#include "tracker/swarm_messages.hpp"

namespace sk {

/// Per-swarm counters of what the self-healing layer did to announces.
struct swarm_core_counters {
  std::uint64_t announces = 0;
  /// Repeats of the peer's previous announce within the duplicate window
  /// (a client announcing per listen socket, over both transports, or a
  /// user pressing "update tracker"): served, but neither early nor judged.
  std::uint64_t repeats = 0;
  /// Early announces (not repeats) served without a warning or refusal:
  /// below the sustained-early threshold.
  std::uint64_t early = 0;
  /// Peers that came back from a new address with their old `key` and
  /// replaced their own record (roaming).
  std::uint64_t roamed = 0;
  /// Refused: banned client prefix.
  std::uint64_t banned = 0;
  /// Refused: too frequent after a warning (min interval).
  std::uint64_t refused = 0;
  /// Served with a misbehaviour warning.
  std::uint64_t warned = 0;
  /// Seeders served with the "keep seeding" appeal.
  std::uint64_t seeder_appeals = 0;
  /// Reachability probes asked for, and the answers applied by outcome.
  std::uint64_t probes_requested = 0;
  std::uint64_t probes_reachable = 0;
  std::uint64_t probes_unreachable = 0;
  std::uint64_t probes_bogus = 0;
  std::uint64_t probes_skipped = 0;
  /// Outstanding probes forgotten after `probe.result_timeout`.
  std::uint64_t probes_expired = 0;
  /// New peers refused because their address holds
  /// `swarm_config::max_peers_per_address` peers of this swarm.
  std::uint64_t address_refused = 0;
};

/// The failure reason of a new peer refused at
/// `swarm_config::max_peers_per_address`.
inline constexpr const char* address_full_reason =
    "too many peers from your address in this torrent, retry later";
/// The failure reason of an announce a swarm shed unapplied (its mailbox
/// held more than `swarm_config::max_backlog` messages).
inline constexpr const char* swarm_busy_reason = "swarm busy, retry later";

class swarm_core {
 public:
  using time_point = health_time;

  /// `settings->config` must be valid (`validate()` empty); `seed` seeds
  /// peer selection, jitter and the health sample. The settings are shared,
  /// never copied: a node's swarms all hold its one `swarm_settings`.
  swarm_core(const info_hash& hash, swarm_settings_ptr settings, std::uint64_t seed);
  /// The same on `share_settings(cfg)`: swarms built one after the other
  /// from equal configs share one settings object.
  swarm_core(const info_hash& hash, const swarm_config& cfg, std::uint64_t seed);

  const info_hash& hash() const noexcept { return hash_; }
  const swarm_config& config() const noexcept { return settings_->config; }
  /// The shared settings (for building another core on the same ones).
  const swarm_settings_ptr& settings() const noexcept { return settings_; }
  std::uint64_t seed() const noexcept { return seed_; }
  /// The name of this swarm's history, given when it starts from nothing
  /// and kept through snapshots, moves and restarts (0: unnamed). Two
  /// copies with one lineage hold one history, so merging them must not
  /// count it twice (runtime/swarm_snapshot.hpp).
  std::uint64_t lineage() const noexcept { return lineage_; }
  void set_lineage(std::uint64_t l) noexcept { lineage_ = l; }

  /// Applies one announce and fills `out` (which the caller has cleared: its
  /// buffers are appended to). Returns false, touching nothing, when `a` is
  /// for another info_hash. A refused announce (banned client, or too
  /// frequent after a warning) is not applied: `out.failure_reason` and
  /// `out.retry_in_minutes` are set, and `out.stats` (nothing else). A new
  /// peer on a full swarm (`max_peers`) or a full node (the census of
  /// `settings()->node`) is not stored: `out.refused_at_cap` says which cap,
  /// and `out.stats` is set. A new peer whose address holds
  /// `max_peers_per_address` peers is refused with `address_full_reason`
  /// and `address_full_retry_in_minutes`.
  bool announce(const swarm_announce& a, time_point now, announce_result& out);

  /// Counts for scrape.
  swarm_stats scrape() const noexcept { return table_.stats(); }

  /// One sweep step: examines up to `sweep_batch` peers, expiring those
  /// silent for `peer_timeout` (each counted as a departure by the health
  /// tracker). Call again while `!cycle_done`.
  peer_table::sweep_result sweep(time_point now);

  /// Since when the swarm has had no peers (unset while it has some).
  std::optional<time_point> empty_since() const noexcept { return empty_since_; }
  /// Empty for at least `idle_lifetime` at `now`.
  bool idle(time_point now) const noexcept {
    return empty_since_ && now - *empty_since_ >= config().idle_lifetime;
  }
  /// Starts the idle clock of a swarm that has never seen an announce.
  void note_occupancy(time_point now);

  /// Evaluates health: a census of every peer (O(peers)), then the health
  /// model. Returns the report when the state or reasons changed (the
  /// swarm actor forwards it to the supervisor), else nullopt.
  std::optional<health_report> tick(time_point now);
  /// The report of the last tick; null before the first.
  const health_report* last_report() const noexcept {
    return evaluated_ ? &tracker_.last() : nullptr;
  }

  // -- knobs (remediation, operators) -------------------------------------------

  const swarm_knobs& knobs() const noexcept { return knobs_; }
  /// Replaces every knob; false (nothing changes) when a scale is outside
  /// (0, max_interval_scale].
  bool set_knobs(const swarm_knobs& k);
  /// Back to `config().default_knobs()`.
  void reset_knobs() { set_knobs(config().default_knobs()); }
  void set_policy(policy_kind p) { knobs_.policy = p; }
  policy_kind policy() const noexcept { return knobs_.policy; }
  bool set_interval_scale(double s);
  bool set_leecher_interval_scale(double s);
  void set_seeder_warning(bool on) { knobs_.seeder_warning = on; }
  void set_quarantine_strict(bool on);

  // -- reachability probes -------------------------------------------------------
  //
  // The core decides when a peer is probed (see `probe_settings`); whoever
  // owns the core (the swarm actor) sends the requests to a prober and
  // feeds the answers back.

  /// Turns probe decisions on or off. On only when `config().probe.enabled`
  /// too; the swarm actor turns it on when it has a prober (a swarm without
  /// one never asks). Off initially.
  void set_probing(bool on) noexcept { probing_ = on && config().probe.enabled; }
  bool probing() const noexcept { return probing_; }
  /// The probe requests decided since the last call (each already counts as
  /// outstanding). At most `probe.max_outstanding`.
  std::vector<probe_request> take_probe_requests();
  bool has_probe_requests() const noexcept {
    return probes_.has_value() && !probes_.get()->ready.empty();
  }
  /// Probes asked for and not yet answered (or expired).
  std::size_t outstanding_probes() const noexcept {
    return probes_.has_value() ? probes_.get()->outstanding.size() : 0;
  }
  /// Applies the answer for peer `key` probed at `port`: sets the
  /// reachability flags or quarantines (see `probe_settings`), and frees its
  /// outstanding slot. Returns false, changing no flag, when the peer is
  /// gone or now announces another port (the answer is stale).
  bool apply_probe_result(const peer_key& key, std::uint16_t port, probe_outcome outcome,
                          time_point now);

  // -- remediation history ------------------------------------------------------

  /// Appends one action, dropping the oldest beyond `history_size`.
  void record(remediation_record r);
  /// Oldest first (allocated with the first action: most swarms never have
  /// one).
  const std::deque<remediation_record>& history() const noexcept;

  // -- remediation in progress ---------------------------------------------------

  /// The latest progress of the remediation working on this swarm, as of
  /// `at` (the remediation sends it after every step): a snapshot carries
  /// it, so the plan resumes where the swarm is installed next (restart,
  /// move, replica).
  void set_remediation(const remediation_progress& p, time_point at);
  /// No remediation works on this swarm (it ended, or was stopped).
  void clear_remediation() noexcept { remediation_.reset(); }
  /// The progress aged to `now`; empty when no remediation works on it.
  std::optional<remediation_progress> remediation(time_point now) const;

  // -- introspection --------------------------------------------------------------

  /// The interval this swarm would tell a seeder / leecher now (advances the
  /// jitter PRNG when the interval is adjusted). Public for tests.
  std::int64_t interval_for(bool seeder);
  /// Whether the seeder appeal is on now (knob, or degraded for a reason
  /// seeding fixes).
  bool seeder_appeal_active() const noexcept;

  const peer_table& table() const noexcept { return table_; }
  /// Mutable access for tests and the simulator (e.g. setting traits).
  peer_table& table() noexcept { return table_; }
  const swarm_health_tracker& tracker() const noexcept { return tracker_; }
  const swarm_core_counters& counters() const noexcept { return counters_; }
  /// The per-peer detector thresholds in force (config + strict knob).
  const behaviour_config& behaviour() const noexcept {
    return knobs_.quarantine_strict ? settings_->strict_behaviour : settings_->behaviour;
  }

  /// Gives back what the swarm holds beyond its current needs: the peer
  /// table's loose capacity and, when it shrank, its index
  /// (`peer_table::compact`), health-window buckets that left the window at
  /// `now`, and idle probe state. Changes no answer, count or selection. For
  /// an owner about to keep the core of a quiet swarm without its actor.
  void compact(time_point now);

  /// Cross-checks the peer table and the core's own bookkeeping; the
  /// supervisor checks it before restarting from this state. O(peers).
  bool check_invariants() const;

 private:
  /// Cluster migration and replication (cluster/snapshot.cpp) copy
  /// the whole state out of and into a core.
  friend struct swarm_core_access;

  void refuse(announce_result& out, const std::string& reason, std::int64_t retry_in_minutes);
  /// Decides whether the peer that just announced is probed now.
  void consider_probe(const peer_key& key, std::uint16_t port, peer_traits& t, time_point now);
  /// Forgets outstanding probes older than `probe.result_timeout`.
  void expire_probes(time_point now);
  /// Drops the probe state once nothing is outstanding or ready.
  void release_probes() noexcept;

  // Layout: what every swarm has inline, in as few bytes as the types
  // allow; what only some swarms need (history, probes, the jitter stream)
  // in lazy boxes, 8 bytes each while absent. The node-wide settings are
  // shared. The ban list is read through a per-thread snapshot reader
  // (swarm_core.cpp), not one per swarm.
  info_hash hash_;
  bool evaluated_ = false;
  bool probing_ = false;
  swarm_settings_ptr settings_;
  std::uint64_t seed_;
  std::uint64_t lineage_ = 0;
  peer_table table_;
  allocator allocator_;
  swarm_health_tracker tracker_;
  swarm_knobs knobs_;
  std::optional<time_point> empty_since_;
  lazy_box<std::deque<remediation_record>> history_;
  struct held_remediation {
    remediation_progress progress;
    time_point at{};
  };
  lazy_box<held_remediation> remediation_;
  swarm_core_counters counters_;
  /// Interval jitter (own stream, so jitter never shifts peer selection);
  /// created, from the seed, the first time an interval is jittered.
  lazy_box<fast_rng> jitter_rng_;
  /// An asked-for probe: which peer, for which port, since when.
  struct outstanding_probe {
    peer_key key;
    std::uint16_t port = 0;
    time_point since{};
  };
  struct probe_state {
    /// At most `probe.max_outstanding` (a linear scan is fine).
    std::vector<outstanding_probe> outstanding;
    /// Decided, not yet taken by the owner (a subset of the outstanding).
    std::vector<probe_request> ready;
  };
  /// Present while a probe is outstanding or ready.
  lazy_box<probe_state> probes_;
};

/// Health reasons more seeding would fix (the seeder appeal's trigger).
constexpr std::uint32_t seeding_reasons = reason_no_seeders | reason_few_seeders |
                                          reason_stalled_leechers | reason_seeders_leave_early |
                                          reason_low_completion_rate | reason_flash_crowd;

/// Health reasons that make a swarm "starving" for interval control.
constexpr std::uint32_t starving_reasons =
    reason_no_seeders | reason_few_seeders | reason_flash_crowd;

/// A new core with its control block, in one block of the recycler
/// (tracker/recycler.hpp). A core is made on a network thread (a swarm
/// that a request creates or wakes) and freed on a scheduler thread (the
/// swarm fell asleep or ended): malloc's per-thread caches do not serve that
/// pattern, and each such core took malloc's slow path.
template <class... Args>
swarm_core_ptr make_swarm_core(Args&&... args) {
  return make_recycled<swarm_core>(std::forward<Args>(args)...);
}

}  // namespace sk
