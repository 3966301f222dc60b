#pragma once
/// A discrete-time swarm simulator that drives swarmkeeper's real tracker
/// code (`swarm_core`: peer table, detectors, health model, allocation
/// policies, interval control, probe decisions; `remediation_plan`) on the
/// simulator's clock.
///
/// What the tracker sees is exactly what a real tracker sees: announces
/// (event, uploaded, downloaded, left, numwant, peer_id, key, address and
/// port) at the times the peers choose, and — when probes are on — whether
/// its own connect attempt to a peer's port succeeded. Piece maps, true
/// capacities, free-rider and reachability labels never reach it.
///
/// Peer model (BitTorrent as mainline / libtorrent do it, no PEX, no DHT):
///
///   arrival ─▶ announce started (numwant 50) ─▶ dial every returned peer
///   (≤ 80 connections per peer; an unreachable peer accepts no inbound
///   connection, so two unreachable peers never connect; seeds drop seeds)
///   every 10 s   rechoke: a leecher unchokes the 3 interested peers it got
///                most from over the last 20 s, a seed the 3 it sent most
///                to (mainline's seeding choker); free-riders unchoke nobody
///   every 30 s   optimistic unchoke: one more random interested peer
///   every 1 s    transfers: link u→v moves min(up_u / uploads_u,
///                down_v / downloads_v) bytes/s on one piece; pieces are
///                picked partial first, random for the first 4, then
///                rarest-first over v's connected peers
///   tracker's interval ─▶ re-announce; completion ─▶ announce completed;
///   after the seeding time (or at once) ─▶ announce stopped, leave
///
/// Partial seeds (BEP 21): a share of arrivals wants only a contiguous run
/// of the torrent's files. They are interested only in those pieces and
/// pick only those; once they have them they announce `paused` (with the
/// torrent's true `left`, which stays > 0) at once and on every later
/// announce, as libtorrent does for a finished torrent that is not a seed,
/// upload what they have for their seeding time, download nothing more and
/// never send `completed`.
///
/// Time advances in steps of one second; events are processed at the step
/// they fall in. All randomness comes from (seed, scenario name,
/// replication): the population (arrival times, capacities, reachability,
/// free-riding, seeding times) from one stream, each peer's choices from its
/// own stream, the tracker from its own seed. Nothing depends on the policy,
/// so runs of two policies are paired (common random numbers).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracker/health_types.hpp"

namespace sk::sim {

/// One class of peers' capacities (bytes per second) and its share of
/// arrivals (weights are normalised).
struct peer_class {
  double up_bps = 0;
  double down_bps = 0;
  double weight = 1;
};

/// Everything a run depends on besides the tracker setup and the seed.
struct scenario {
  std::string name;
  std::string description;

  std::uint32_t pieces = 256;
  double piece_bytes = 256.0 * 1024;
  /// Files of equal size the pieces are split into (file f holds pieces
  /// [f * pieces / files, (f + 1) * pieces / files)). Only partial seeds
  /// look at them.
  std::uint32_t files = 1;
  /// Hard end of a run (simulated seconds).
  double horizon_s = 6 * 3600;

  /// Seeds present at t = 0 ("origin" seeds: their upload is what the
  /// seed-upload metric counts).
  std::uint32_t origin_seeds = 1;
  double origin_up_bps = 256 * 1024;
  /// At this time every seeder present (origins and finished leechers)
  /// announces stopped and leaves; negative = never.
  double seeders_leave_at_s = -1;

  /// Flash crowd: this many leechers arrive uniformly in [0, window].
  std::uint32_t flash_leechers = 0;
  double flash_window_s = 0;
  /// Poisson arrivals at `poisson_rate` per second in [0, poisson_until_s).
  double poisson_rate = 0;
  double poisson_until_s = 0;
  /// Leecher capacity classes (at least one).
  std::vector<peer_class> classes;
  /// Seeding time after completion: exponential with this mean; 0 = leave
  /// at completion.
  double seed_time_mean_s = 0;
  /// Share of arriving peers that accept no inbound connection.
  double unreachable_fraction = 0;
  /// Share of arriving peers that never upload (they report uploaded = 0).
  double freerider_fraction = 0;
  /// Reference run of a free-rider scenario: the free-riders do not arrive
  /// at all (every other draw is identical).
  bool drop_freeriders = false;
  /// Share of arriving peers (free-riders excepted) that are partial seeds:
  /// each wants a contiguous run of 1 .. `partial_max_files` files (uniform
  /// count, uniform position) and seeds for an exponential time of mean
  /// `partial_seed_time_mean_s` once it has them. Drawn from a stream of
  /// their own, so a scenario without partial seeds sees exactly the
  /// population it saw before they existed.
  double partial_fraction = 0;
  std::uint32_t partial_max_files = 1;
  double partial_seed_time_mean_s = 0;
  /// Partial seeds that have their files announce `paused` (BEP 21). Off:
  /// they announce `none` like a client without BEP 21 (a leecher whose
  /// `left` never goes down again), everything else unchanged.
  bool partial_announce_paused = true;

  /// Leechers arriving in [measure_from_s, measure_until_s) are measured
  /// (earlier ones are warm-up); measure_until_s < 0 means the horizon.
  /// Time averages (leechers, stalled, piece copies) cover the same span.
  double measure_from_s = 0;
  double measure_until_s = -1;
  /// End the run once no more leechers will arrive and none is left.
  bool stop_when_done = true;

  /// Empty when usable, else one sentence naming the first bad field.
  std::string validate() const;
};

/// How the tracker is set up for a run.
enum class tracker_mode : std::uint8_t {
  /// A plain tracker: uniform random peers, fixed interval, no warnings,
  /// no probes, no remediation. The baseline of every comparison.
  plain_random,
  /// swarmkeeper's core with one allocation policy pinned (its interval
  /// control and probes on; no remediation changes the policy).
  pinned,
  /// swarmkeeper as shipped: adaptive policy, interval control, probes,
  /// and a remediation plan driven by every health tick, started and fed
  /// the way the supervisor does it.
  self_healing,
};

struct tracker_setup {
  std::string name;
  tracker_mode mode = tracker_mode::plain_random;
  policy_kind policy = policy_kind::random;
  /// Reachability probes (the tracker dials the announced port).
  bool probes = true;
};

/// "random", the seven other policies by name ("role-aware", ...,
/// "adaptive"), and "self-healing".
std::vector<tracker_setup> all_setups();
std::optional<tracker_setup> find_setup(const std::string& name);

/// One sample of the swarm (every 60 s), for plots.
struct sample_point {
  double t = 0;
  /// Downloading peers (full leechers and partial seeds that still lack
  /// part of their files).
  std::uint32_t leechers = 0;
  std::uint32_t seeders = 0;
  std::uint32_t min_copies = 0;
  std::uint32_t stalled = 0;
  /// Partial seeds that have their files.
  std::uint32_t partial = 0;
};

/// What one run measured. Times are seconds. Quantiles are over the
/// measured leechers (full downloaders: partial seeds are reported apart);
/// one that never finished counts with its time in the swarm until it left
/// or the run ended (a lower bound; `censored` says how many).
struct run_metrics {
  std::uint32_t leechers = 0;  ///< measured leechers
  std::uint32_t completed = 0;
  std::uint32_t censored = 0;
  double fraction_completed = 0;
  double median_s = 0;
  double p95_s = 0;
  double max_s = 0;
  double mean_s = 0;
  /// First completion of any non-origin peer, from t = 0 (-1: none).
  double first_copy_s = -1;
  /// Origin seeds' upload, in file copies, until every piece existed at a
  /// non-origin peer (or, if that never happened, until the end).
  double seed_upload_copies = 0;
  bool every_piece_spread = false;
  /// Least-replicated piece's copies among non-origin peers, averaged over
  /// the 60 s samples of the measured span (while leechers are present).
  double min_copies_mean = 0;
  /// Leechers present for 5 min that received nothing in the last 5 min:
  /// mean over the samples, and the peak.
  double stalled_mean = 0;
  std::uint32_t stalled_peak = 0;
  /// Groups (-1 when the group is empty): medians of unreachable /
  /// reachable / compliant (uploading) / free-riding measured leechers.
  double unreachable_median_s = -1;
  double reachable_median_s = -1;
  double compliant_median_s = -1;
  double compliant_p95_s = -1;
  double freerider_median_s = -1;
  /// Measured partial seeds: how many, how many got their files, and the
  /// median / p95 time to get them (same censoring rule; -1: none).
  std::uint32_t partial_seeds = 0;
  std::uint32_t partial_completed = 0;
  /// Pieces any partial seed received outside the files it wants (the
  /// picker never asks for one: 0).
  std::uint32_t unwanted_pieces = 0;
  double partial_median_s = -1;
  double partial_p95_s = -1;
  /// Little's law over the measured span: time-average leechers (all
  /// downloading peers, whenever they arrived), arrival rate of measured
  /// leechers, their mean download time (completed ones).
  double mean_leechers = 0;
  double arrival_rate = 0;
  double mean_seeders = 0;
  /// Time-average partial seeds that have their files.
  double mean_partial = 0;
  /// Tracker side.
  std::uint64_t announces = 0;
  /// Announces sent with `event=paused`.
  std::uint64_t paused_announces = 0;
  std::uint32_t remediation_actions = 0;
  /// Health ticks in the measured span (while peers are present), and how
  /// many of them reported degraded or critical.
  std::uint32_t health_ticks = 0;
  std::uint32_t unhealthy_ticks = 0;
  /// Of those, the ticks that gave "seeders leave early".
  std::uint32_t leave_early_ticks = 0;
  /// Remediations started (one per unhealthy episode the plan took on).
  std::uint32_t remediation_starts = 0;
  /// `health_reason` bits of every degraded or critical report in the
  /// measured span, and of the reports that started a remediation.
  std::uint32_t unhealthy_reasons = 0;
  std::uint32_t remediation_reasons = 0;
  /// Announces answered with the seeder appeal, and with a misbehaviour
  /// warning or refusal (the core's counters).
  std::uint64_t seeder_appeals = 0;
  std::uint64_t warned = 0;
  std::uint64_t refused = 0;
  /// 60 s samples at which the tracker's scrape (complete, incomplete,
  /// partial) differed from the swarm's truth (seeders; downloading peers +
  /// partial seeds; partial seeds).
  std::uint32_t scrape_mismatches = 0;
  std::string remediation_log;
  double end_s = 0;
  std::vector<sample_point> series;
};

struct run_options {
  /// Keep the 60 s samples in `run_metrics::series`.
  bool keep_series = false;
  /// Keep the remediation records (one line each) in `remediation_log`.
  bool keep_log = false;
};

/// Runs one replication. Deterministic for (scenario, setup, seed,
/// replication). Throws std::invalid_argument for an invalid scenario.
run_metrics run_once(const scenario& sc, const tracker_setup& setup, std::uint64_t seed,
                     std::uint32_t replication, const run_options& opt = {});

/// Deterministic 64-bit mix of a seed, a name and numbers (stream ids).
std::uint64_t stream_seed(std::uint64_t seed, const std::string& name, std::uint64_t a,
                          std::uint64_t b = 0);

/// Linear-interpolation quantile (q in [0, 1]) of unsorted values; 0 when
/// empty.
double quantile(std::vector<double> v, double q);

}  // namespace sk::sim
