#pragma once
/// A compact, serializable copy of one swarm's whole state: what a swarm
/// actor answers to `(migrate_atom, get_atom)` and `(snapshot_atom)` and
/// merges on `(migrate_atom, put_atom, swarm_snapshot)`; the cluster carries
/// it to a swarm's new owner (migration) and to the next node in rank order
/// (replication).
///
/// Carried: every peer (address, counters, behaviour traits, flags), the
/// knobs, the remediation history, the swarm's counters, `downloaded`, the
/// PRNG seed, and the health model (rate windows, size estimate, last
/// report, hysteresis streaks). Times cross nodes as ages ("announced 42 s ago"), since
/// steady clocks of two machines share no epoch; the receiver turns them
/// back into its own time points, so peer expiry keeps its schedule.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/message_types.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"

namespace sk {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_health_tracker::portable_state& x) {
  return f(caf::meta::type_name("health_state"), x.bucket_ages, x.bucket_counts, x.torrent_size,
           x.watched_ms, x.last, x.raw_state, x.raw_reasons, x.better_streak, x.absent_streak);
}

/// One peer. Ages are milliseconds before the snapshot was taken; -1:
/// unset (`completed_at`).
struct peer_snapshot {
  peer_id id;
  endpoint ep;
  std::uint64_t left = 0;
  std::uint64_t uploaded = 0;
  std::uint64_t downloaded = 0;
  std::string key;
  std::int64_t first_seen_age_ms = 0;
  std::int64_t last_announce_age_ms = 0;
  std::int64_t last_progress_age_ms = 0;
  std::int64_t completed_age_ms = -1;
  std::uint32_t announces = 0;
  std::uint32_t announces_without_progress = 0;
  std::uint32_t early_announces = 0;
  std::uint32_t strikes = 0;
  float progress = -1.0f;
  std::uint8_t flags = 0;
};

struct swarm_snapshot {
  info_hash hash;
  std::uint64_t seed = 0;
  swarm_knobs knobs;
  std::vector<remediation_record> history;
  /// announces, banned, refused, warned, seeder_appeals (in that order).
  std::vector<std::uint64_t> counters;
  /// The table's `downloaded` (completions).
  std::uint64_t downloaded = 0;
  std::vector<peer_snapshot> peers;
  swarm_health_tracker::portable_state health;
  /// Health was evaluated at least once (else the report is not shown).
  bool evaluated = false;
  /// The remediation working on the swarm, if one is (at most one entry).
  std::vector<remediation_progress> remediation;
  /// The swarm's history's name (`swarm_core::lineage`; 0: unnamed).
  std::uint64_t lineage = 0;
};

inline void make_finite(remediation_progress& x) noexcept {
  make_finite(x.baseline);
  make_finite(x.knobs);
  make_finite(x.trial_before);
  make_finite(x.start_signals);
}

inline void make_finite(peer_snapshot& x) noexcept { make_finite(x.progress, -1.0f); }

/// Every float or double a snapshot holds, made finite (see make_finite in
/// runtime/message_types.hpp): each write does it field by field through
/// the inspect overloads; a reader of stored bytes calls this once.
inline void make_finite(swarm_snapshot& x) noexcept {
  make_finite(x.knobs);
  for (auto& r : x.history) make_finite(r);
  for (auto& p : x.peers) make_finite(p);
  make_finite(x.health.last);
  for (auto& r : x.remediation) make_finite(r);
}

/// A name for a history that starts now (`swarm_core::lineage`): random
/// per process, counted within it, never 0. Thread-safe.
std::uint64_t new_lineage() noexcept;

/// Copies `core`'s state (must not run concurrently with its owner).
swarm_snapshot take_snapshot(const swarm_core& core, health_time now);
/// The same into `into`, whose vectors keep their capacity: a caller that
/// takes snapshots often (a swarm falling asleep) keeps one and reuses it.
void take_snapshot(const swarm_core& core, health_time now, swarm_snapshot& into);

/// Gives back the peers' array of `s` when it holds more than a few hundred
/// peers, so a reused snapshot stays no larger than a typical swarm's after
/// a large one passed through it.
void trim_snapshot(swarm_snapshot& s);

/// Merges `s` into `core` (same hash; else nothing): peers `core` does not
/// know are added with their traits, counters and `downloaded` add up, the
/// snapshot's history goes before the core's, the knobs are the
/// snapshot's. When both are copies of one history (the same nonzero
/// lineage) the counters and `downloaded` are the larger of the two and
/// the history the longer, since one copy holds the other. Used when requests reached the new owner before the
/// snapshot did. Must run on the core's owner thread.
void merge_snapshot(swarm_core& core, const swarm_snapshot& s, health_time now);

/// `merge_snapshot` into a core nothing has run on yet, and the
/// remediation under way with it (which a merge into a running swarm
/// leaves out).
void fill_snapshot(swarm_core& fresh, const swarm_snapshot& s, health_time now);

/// A new core with `s`'s state and `cfg` (valid), filled by
/// `fill_snapshot`. Peers the table refuses (more than cfg.max_peers) are
/// dropped.
swarm_core_ptr restore_snapshot(const swarm_snapshot& s, const swarm_config& cfg, health_time now);

/// Ages of `s` made older by `by_ms` (time that passed since it was taken:
/// a daemon's downtime, a dormant swarm's sleep), and its peers whose last
/// announce is then older than `peer_timeout` removed; returns how many were
/// removed.
std::size_t age_snapshot(swarm_snapshot& s, std::int64_t by_ms,
                         std::chrono::milliseconds peer_timeout);

/// `s` in CAF's binary encoding (what a state file's swarm record holds).
std::vector<char> encode_snapshot(const swarm_snapshot& s);
/// The snapshot `encode_snapshot` made of `bytes`; false (and `out`
/// unspecified) unless the bytes decode whole. Floats are made finite.
bool decode_snapshot(const std::vector<char>& bytes, swarm_snapshot& out);

/// A sleeping swarm's form (runtime/sleep_form.cpp): peers in a compact
/// layout of their own, the rest in CAF's encoding, the whole compressed by
/// zstd against a dictionary made once per process. Made and read only
/// within one process (the state file and the cluster carry
/// `encode_snapshot`). `raw_size` receives the size before compression.
/// Empty when it cannot be made.
std::vector<char> pack_snapshot(const swarm_snapshot& s, std::uint32_t& raw_size);
/// The snapshot `pack_snapshot` made; false unless it decompresses to
/// exactly `raw_size` bytes that decode whole.
bool unpack_snapshot(const char* packed, std::size_t size, std::uint32_t raw_size,
                     swarm_snapshot& out);
template <class Bytes>
bool unpack_snapshot(const Bytes& packed, std::uint32_t raw_size, swarm_snapshot& out) {
  return unpack_snapshot(packed.data(), packed.size(), raw_size, out);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_snapshot& x) {
  make_finite(x);
  return f(caf::meta::type_name("peer_snapshot"), x.id, x.ep, x.left, x.uploaded, x.downloaded,
           x.key, x.first_seen_age_ms, x.last_announce_age_ms, x.last_progress_age_ms,
           x.completed_age_ms, x.announces, x.announces_without_progress, x.early_announces,
           x.strikes, x.progress, x.flags);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, remediation_progress& x) {
  return f(caf::meta::type_name("remediation_progress"), x.baseline, x.knobs, x.started,
           x.exhausted, x.active, x.tried, x.trial, x.trial_before, x.trial_age_ms, x.trial_ticks,
           x.start_signals, x.healthy_age_ms, x.operator_reasons, x.policy_pinned);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_snapshot& x) {
  return f(caf::meta::type_name("swarm_snapshot"), x.hash, x.seed, x.knobs, x.history, x.counters,
           x.downloaded, x.peers, x.health, x.evaluated, x.remediation, x.lineage);
}

/// The layout of a swarm record in state files of versions 1 and 2 (no
/// remediation in progress): read through this view of a snapshot.
struct swarm_snapshot_v2 {
  swarm_snapshot& s;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_snapshot_v2& x) {
  return f(caf::meta::type_name("swarm_snapshot"), x.s.hash, x.s.seed, x.s.knobs, x.s.history,
           x.s.counters, x.s.downloaded, x.s.peers, x.s.health, x.s.evaluated);
}

}  // namespace sk
