#include "bench/sim/swarm_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "tracker/swarm_messages.hpp"
#include "tracker/random.hpp"
#include "tracker/remediation_plan.hpp"
#include "runtime/supervisor.hpp"
#include "tracker/swarm_core.hpp"

namespace sk::sim {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
/// Connections per peer (libtorrent's default peer list is larger; 80 is
/// the evaluation's peer set).
constexpr std::size_t max_connections = 80;
constexpr int regular_slots = 3;
constexpr double rechoke_period = 10;
constexpr double optimistic_period = 30;
constexpr double sample_period = 60;
/// A leecher is stalled when it received nothing for this long.
constexpr double stall_window = 300;
/// Pieces picked at random before rarest-first (libtorrent's
/// initial_picker_threshold).
constexpr std::uint32_t random_first_pieces = 4;
constexpr std::int32_t numwant = 50;
/// Simulated t = 0 on the tracker's clock (away from the epoch, so no
/// "time 0" special case is ever hit).
constexpr std::int64_t clock_offset_s = 100000;
constexpr std::uint32_t ip_base = 0x0a000000;  // 10.0.0.0
constexpr std::uint16_t peer_port = 6881;

double uniform01(fast_rng& r) { return static_cast<double>(r.next() >> 11) * 0x1.0p-53; }
double exponential(fast_rng& r, double mean) {
  return mean <= 0 ? 0 : -mean * std::log(1.0 - uniform01(r));
}

}  // namespace

std::uint64_t stream_seed(std::uint64_t seed, const std::string& name, std::uint64_t a,
                          std::uint64_t b) {
  // FNV-1a over the name, then SplitMix64 rounds over the numbers.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h = (h ^ c) * 0x100000001b3ULL;
  }
  std::uint64_t s = seed ^ h;
  std::uint64_t x = splitmix64(s);
  s = x ^ (a * 0x9e3779b97f4a7c15ULL);
  x = splitmix64(s);
  s = x ^ (b * 0xc2b2ae3d27d4eb4fULL);
  return splitmix64(s);
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  const double f = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * f;
}

std::string scenario::validate() const {
  if (pieces == 0 || pieces > 4096) {
    return "pieces must be in [1, 4096]";
  }
  if (!(piece_bytes > 0)) {
    return "piece_bytes must be positive";
  }
  if (!(horizon_s > 0)) {
    return "horizon must be positive";
  }
  if (classes.empty()) {
    return "at least one peer class is needed";
  }
  for (const auto& c : classes) {
    if (!(c.up_bps >= 0) || !(c.down_bps > 0) || !(c.weight > 0)) {
      return "peer classes need up >= 0, down > 0 and weight > 0";
    }
  }
  if (origin_seeds > 0 && !(origin_up_bps > 0)) {
    return "origin seeds need a positive upload";
  }
  if (!(unreachable_fraction >= 0 && unreachable_fraction <= 1) ||
      !(freerider_fraction >= 0 && freerider_fraction <= 1)) {
    return "fractions must be in [0, 1]";
  }
  if (poisson_rate < 0 || seed_time_mean_s < 0 || partial_seed_time_mean_s < 0) {
    return "rates and times must not be negative";
  }
  if (files == 0 || files > pieces) {
    return "files must be in [1, pieces]";
  }
  if (!(partial_fraction >= 0 && partial_fraction <= 1)) {
    return "fractions must be in [0, 1]";
  }
  if (partial_fraction > 0 && (partial_max_files == 0 || partial_max_files > files)) {
    return "partial seeds need partial_max_files in [1, files]";
  }
  if (flash_leechers == 0 && !(poisson_rate > 0 && poisson_until_s > 0)) {
    return "a scenario needs arrivals (flash crowd or Poisson)";
  }
  return {};
}

std::vector<tracker_setup> all_setups() {
  std::vector<tracker_setup> out;
  out.push_back({"random", tracker_mode::plain_random, policy_kind::random, false});
  for (int i = 1; i < policy_kind_count; ++i) {
    const auto p = static_cast<policy_kind>(i);
    out.push_back({std::string(to_string(p)), tracker_mode::pinned, p, true});
  }
  out.push_back({"self-healing", tracker_mode::self_healing, policy_kind::adaptive, true});
  return out;
}

std::optional<tracker_setup> find_setup(const std::string& name) {
  for (auto& s : all_setups()) {
    if (s.name == name) {
      return s;
    }
  }
  return std::nullopt;
}

namespace {

struct direction {
  /// The uploader unchokes the downloader.
  bool unchoked = false;
  /// Piece in flight on this link (-1: none).
  std::int32_t piece = -1;
  /// Pieces the uploader has and the downloader lacks (> 0: interested).
  std::uint32_t interesting = 0;
  /// Bytes moved in the current and the previous rechoke period.
  double recent = 0;
  double prev = 0;
  /// Position in the simulator's list of unchoked links (-1: choked).
  std::int32_t slot = -1;
  /// A failed piece pick is retried only once something changed: the
  /// downloader freed an in-flight piece or the uploader got a piece.
  std::uint32_t blocked_release = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t blocked_have = 0;
};

struct connection {
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  /// d[0]: a uploads to b; d[1]: b uploads to a.
  direction d[2];
  bool alive = false;
};

struct peer {
  // Drawn from the population stream.
  double arrive_s = 0;
  double up = 0;
  double down = 0;
  bool reachable = true;
  bool freerider = false;
  bool origin = false;
  double seed_time_s = 0;
  bool measured = false;
  /// A partial seed: wants only pieces [want_from, want_to).
  bool partial_seed = false;
  std::uint32_t want_from = 0;
  std::uint32_t want_to = 0;

  // State.
  bool present = false;
  bool gone = false;
  bool done = false;
  double complete_s = -1;
  double leave_s = inf;
  double next_announce_s = inf;
  std::vector<std::uint8_t> have;
  std::uint32_t have_count = 0;
  /// Pieces wanted: `pieces`, or a partial seed's range (it only ever gets
  /// wanted pieces, so it is done when have_count reaches this).
  std::uint32_t want_count = 0;
  std::vector<std::uint16_t> avail;
  std::vector<std::uint8_t> inflight;
  std::vector<float> partial;
  /// The same three sets as bit masks (64 pieces per word) for the picker,
  /// and the pieces it wants (every piece, but a partial seed's range).
  std::vector<std::uint64_t> have_bits;
  std::vector<std::uint64_t> want_bits;
  std::vector<std::uint64_t> inflight_bits;
  std::vector<std::uint64_t> partial_bits;
  /// Bumped whenever an in-flight piece is freed (see direction::blocked_*).
  std::uint32_t release_version = 0;
  std::vector<std::uint32_t> conns;
  std::int64_t optimistic = -1;  // connection id
  double uploaded = 0;
  double downloaded = 0;
  double last_recv_s = 0;
  std::uint32_t n_up = 0;
  std::uint32_t n_down = 0;
  std::uint32_t phase = 0;
  /// Position in the simulator's list of present peers (-1: absent).
  std::int32_t present_slot = -1;
  fast_rng rng;
};

class simulator {
 public:
  simulator(const scenario& sc, const tracker_setup& setup, std::uint64_t seed,
            std::uint32_t rep, const run_options& opt);
  run_metrics run();

 private:
  swarm_config tracker_config() const;
  void populate(std::uint64_t seed, std::uint32_t rep);

  health_time clock(double t) const {
    return health_time(std::chrono::seconds(clock_offset_s + static_cast<std::int64_t>(t)));
  }
  peer_id id_of(std::uint32_t i) const;
  static bool wants(const peer& p, std::uint32_t q) {
    return (p.want_bits[q / 64] >> (q % 64) & 1) != 0;
  }
  /// A partial seed that has its files.
  static bool paused(const peer& p) { return p.partial_seed && p.done; }
  ip_address ip_of(std::uint32_t i) const { return ip_address::make_v4(ip_base + 1 + i); }

  void arrive(std::uint32_t i);
  void announce(std::uint32_t i, announce_event ev);
  void depart(std::uint32_t i);
  void connect(std::uint32_t u, std::uint32_t v);
  void disconnect(std::uint32_t cid);
  void unlink_from(std::uint32_t p, std::uint32_t cid);
  void release(connection& c, int dir);
  direction& dir_from(connection& c, std::uint32_t uploader) {
    return c.a == uploader ? c.d[0] : c.d[1];
  }
  std::uint32_t other(const connection& c, std::uint32_t p) const { return c.a == p ? c.b : c.a; }
  std::int32_t pick_piece(std::uint32_t u, std::uint32_t v);
  void gain_piece(std::uint32_t v, std::uint32_t p);
  void complete(std::uint32_t v);
  void rechoke(std::uint32_t u, bool optimistic_too);
  void set_unchoked(connection& c, std::uint32_t uploader, bool on);
  std::uint32_t unchoked_count(std::uint32_t u);
  void transfer(double dt);
  void tracker_tick();
  void sample();
  run_metrics finish();

  const scenario& sc_;
  tracker_setup setup_;
  run_options opt_;
  double t_ = 0;
  double file_bytes_;
  double measure_until_;
  info_hash hash_;
  swarm_core core_;
  std::optional<remediation_plan> plan_;
  /// The supervisor's defaults: when remediation starts, and its tunables.
  supervisor_config sup_cfg_;
  std::vector<peer> peers_;
  /// Indices of the present peers (the per-step loops run over these, not
  /// over every peer that ever arrived).
  std::vector<std::uint32_t> present_;
  /// Indices into peers_ in arrival order (origins first).
  std::vector<std::uint32_t> arrivals_;
  std::size_t next_arrival_ = 0;
  std::vector<connection> conns_;
  std::vector<std::uint32_t> free_conns_;
  /// Every unchoked link (connection id * 2 + direction): the only links
  /// that can carry data, at most 4 per peer.
  std::vector<std::uint32_t> unchoked_;
  /// Copies of each piece among present non-origin peers.
  std::vector<std::uint32_t> copies_;
  std::uint32_t pieces_spread_ = 0;  // pieces with copies_ > 0
  struct pending_probe {
    double at;
    probe_request req;
  };
  std::vector<pending_probe> probes_;
  std::vector<std::uint32_t> scratch_;
  std::vector<std::pair<double, std::uint32_t>> ranked_;

  // Measurements.
  double origin_uploaded_ = 0;
  double seed_upload_at_spread_ = -1;
  double first_copy_s_ = -1;
  double leecher_time_integral_ = 0;
  double seeder_time_integral_ = 0;
  double partial_time_integral_ = 0;
  std::uint32_t leechers_now_ = 0;
  std::uint32_t seeders_now_ = 0;
  std::uint32_t partial_now_ = 0;
  double min_copies_sum_ = 0;
  double stalled_sum_ = 0;
  std::uint32_t samples_ = 0;
  std::uint32_t stalled_peak_ = 0;
  std::uint64_t announces_ = 0;
  std::uint64_t paused_announces_ = 0;
  std::uint32_t remediation_actions_ = 0;
  std::uint32_t health_ticks_ = 0;
  std::uint32_t unhealthy_ticks_ = 0;
  std::uint32_t unhealthy_reasons_ = 0;
  std::uint32_t remediation_reasons_ = 0;
  std::uint32_t leave_early_ticks_ = 0;
  std::uint32_t remediation_starts_ = 0;
  std::uint32_t scrape_mismatches_ = 0;
  std::uint32_t unwanted_pieces_ = 0;
  std::string log_;
  std::vector<sample_point> series_;
};

swarm_config simulator::tracker_config() const {
  swarm_config cfg;  // the daemon's defaults: interval 1800 s, min 900 s, ...
  switch (setup_.mode) {
    case tracker_mode::plain_random:
      cfg.default_policy = policy_kind::random;
      cfg.intervals.starving_leecher_scale = 1.0;
      cfg.intervals.large_swarm_scale = 1.0;
      cfg.warn_seeders_when_degraded = false;
      break;
    case tracker_mode::pinned:
    case tracker_mode::self_healing:
      cfg.default_policy = setup_.policy;
      break;
  }
  cfg.probe.enabled = setup_.probes;
  return cfg;
}

simulator::simulator(const scenario& sc, const tracker_setup& setup, std::uint64_t seed,
                     std::uint32_t rep, const run_options& opt)
    : sc_(sc),
      setup_(setup),
      opt_(opt),
      file_bytes_(sc.piece_bytes * sc.pieces),
      measure_until_(sc.measure_until_s < 0 ? sc.horizon_s : sc.measure_until_s),
      hash_(info_hash::from_bytes("swarmsim-info-hash-0")),
      core_(hash_, tracker_config(), stream_seed(seed, sc.name, rep, 0x7ac4e5)) {
  core_.set_probing(setup_.probes);
  copies_.assign(sc.pieces, 0);
  populate(seed, rep);
}

void simulator::populate(std::uint64_t seed, std::uint32_t rep) {
  fast_rng pop(stream_seed(seed, sc_.name, rep, 1));
  fast_rng part(stream_seed(seed, sc_.name, rep, 2));
  std::vector<peer> all;
  for (std::uint32_t i = 0; i < sc_.origin_seeds; ++i) {
    peer p;
    p.origin = true;
    p.up = sc_.origin_up_bps;
    p.down = sc_.origin_up_bps;
    p.seed_time_s = inf;
    all.push_back(std::move(p));
  }
  std::vector<double> times;
  for (std::uint32_t i = 0; i < sc_.flash_leechers; ++i) {
    times.push_back(sc_.flash_window_s * uniform01(pop));
  }
  if (sc_.poisson_rate > 0) {
    for (double t = exponential(pop, 1.0 / sc_.poisson_rate); t < sc_.poisson_until_s;
         t += exponential(pop, 1.0 / sc_.poisson_rate)) {
      times.push_back(t);
    }
  }
  std::sort(times.begin(), times.end());
  double wsum = 0;
  for (const auto& c : sc_.classes) {
    wsum += c.weight;
  }
  for (double t : times) {
    // Every attribute is drawn for every peer in the same order, whatever
    // the scenario's flags, so that the reference run of a free-rider
    // scenario sees the same peers.
    peer p;
    p.arrive_s = t;
    double w = uniform01(pop) * wsum;
    const peer_class* cls = &sc_.classes.back();
    for (const auto& c : sc_.classes) {
      if (w < c.weight) {
        cls = &c;
        break;
      }
      w -= c.weight;
    }
    p.up = cls->up_bps;
    p.down = cls->down_bps;
    p.reachable = uniform01(pop) >= sc_.unreachable_fraction;
    p.freerider = uniform01(pop) < sc_.freerider_fraction;
    p.seed_time_s = exponential(pop, sc_.seed_time_mean_s);
    if (p.freerider) {
      p.up = 0;
      p.seed_time_s = 0;  // takes and goes
    }
    // Partial seeds from their own stream, three draws for every peer.
    const bool partial = uniform01(part) < sc_.partial_fraction;
    const std::uint32_t n_files = 1 + part.below(std::max<std::uint32_t>(1, sc_.partial_max_files));
    const std::uint32_t first_file =
        part.below(sc_.files >= n_files ? sc_.files - n_files + 1 : 1);
    const double partial_seed_time = exponential(part, sc_.partial_seed_time_mean_s);
    if (partial && !p.freerider) {
      p.partial_seed = true;
      p.want_from = static_cast<std::uint32_t>(std::uint64_t{first_file} * sc_.pieces / sc_.files);
      p.want_to = static_cast<std::uint32_t>(std::uint64_t{first_file + n_files} * sc_.pieces /
                                             sc_.files);
      p.seed_time_s = partial_seed_time;
    }
    p.measured = t >= sc_.measure_from_s && t < measure_until_;
    if (p.freerider && sc_.drop_freeriders) {
      continue;
    }
    all.push_back(std::move(p));
  }
  peers_ = std::move(all);
  for (std::uint32_t i = 0; i < peers_.size(); ++i) {
    peer& p = peers_[i];
    p.rng.reseed(stream_seed(seed, sc_.name, rep, 1000 + i));
    p.phase = p.rng.below(static_cast<std::uint32_t>(rechoke_period));
    arrivals_.push_back(i);
  }
}

peer_id simulator::id_of(std::uint32_t i) const {
  char buf[21];
  std::snprintf(buf, sizeof buf, "-SM0100-%012u", i);
  return peer_id::from_bytes(std::string_view(buf, 20));
}

// -- peers and the tracker ------------------------------------------------------

void simulator::arrive(std::uint32_t i) {
  peer& p = peers_[i];
  p.present = true;
  p.present_slot = static_cast<std::int32_t>(present_.size());
  present_.push_back(i);
  p.have.assign(sc_.pieces, p.origin ? 1 : 0);
  const std::size_t words = (sc_.pieces + 63) / 64;
  p.have_bits.assign(words, 0);
  if (p.origin) {
    for (std::uint32_t q = 0; q < sc_.pieces; ++q) {
      p.have_bits[q / 64] |= std::uint64_t{1} << (q % 64);
    }
  }
  p.want_bits.assign(words, 0);
  const std::uint32_t from = p.partial_seed ? p.want_from : 0;
  const std::uint32_t to = p.partial_seed ? p.want_to : sc_.pieces;
  for (std::uint32_t q = from; q < to; ++q) {
    p.want_bits[q / 64] |= std::uint64_t{1} << (q % 64);
  }
  p.want_count = to - from;
  p.inflight_bits.assign(words, 0);
  p.partial_bits.assign(words, 0);
  p.have_count = p.origin ? sc_.pieces : 0;
  p.done = p.origin;
  if (!p.origin) {
    p.avail.assign(sc_.pieces, 0);
    p.inflight.assign(sc_.pieces, 0);
    p.partial.assign(sc_.pieces, 0.0f);
    ++leechers_now_;
  } else {
    ++seeders_now_;
  }
  p.last_recv_s = t_;
  announce(i, announce_event::started);
}

void simulator::announce(std::uint32_t i, announce_event ev) {
  peer& p = peers_[i];
  swarm_announce a;
  a.request.hash = hash_;
  a.request.id = id_of(i);
  a.request.port = peer_port;
  a.request.uploaded = static_cast<std::uint64_t>(p.uploaded);
  a.request.downloaded = static_cast<std::uint64_t>(p.downloaded);
  a.request.left = static_cast<std::uint64_t>(sc_.pieces - p.have_count) *
                   static_cast<std::uint64_t>(sc_.piece_bytes);
  a.request.numwant = ev == announce_event::stopped ? 0 : numwant;
  // A partial seed that has its files says so on every announce but the
  // last (BEP 21; libtorrent sends paused instead of none).
  if (paused(p) && ev == announce_event::none && sc_.partial_announce_paused) {
    ev = announce_event::paused;
  }
  paused_announces_ += ev == announce_event::paused;
  a.request.event = ev;
  a.request.compact = true;
  a.request.key = std::to_string(i);
  a.peer.ip = ip_of(i);
  a.peer.port = peer_port;
  announce_result out;
  core_.announce(a, clock(t_), out);
  ++announces_;
  if (core_.has_probe_requests()) {
    for (auto& r : core_.take_probe_requests()) {
      probes_.push_back({t_ + 1, r});  // a connect attempt takes about a second
    }
  }
  if (ev == announce_event::stopped) {
    return;
  }
  if (!out.failure_reason.empty()) {
    const double retry = out.retry_in_minutes > 0 ? 60.0 * out.retry_in_minutes : 900.0;
    p.next_announce_s = t_ + retry;
    return;
  }
  p.next_announce_s = t_ + static_cast<double>(std::max<std::int64_t>(out.interval, 60));
  // Dial every returned peer (compact IPv4: 4 address bytes, 2 port bytes).
  for (std::size_t off = 0; off + 6 <= out.peers4.size(); off += 6) {
    const auto* b = reinterpret_cast<const unsigned char*>(out.peers4.data() + off);
    const std::uint32_t ip = (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) |
                             (std::uint32_t{b[2]} << 8) | b[3];
    if (ip <= ip_base || ip - ip_base - 1 >= peers_.size()) {
      continue;
    }
    connect(i, ip - ip_base - 1);
  }
}

void simulator::depart(std::uint32_t i) {
  peer& p = peers_[i];
  if (!p.present) {
    return;
  }
  announce(i, announce_event::stopped);
  while (!p.conns.empty()) {
    disconnect(p.conns.back());
  }
  p.present = false;
  p.gone = true;
  const std::uint32_t moved = present_.back();
  present_[static_cast<std::size_t>(p.present_slot)] = moved;
  peers_[moved].present_slot = p.present_slot;
  present_.pop_back();
  p.present_slot = -1;
  if (paused(p)) {
    --partial_now_;
  } else if (p.done) {
    --seeders_now_;
  } else {
    --leechers_now_;
  }
  if (!p.origin) {
    for (std::uint32_t q = 0; q < sc_.pieces; ++q) {
      if (p.have[q] && --copies_[q] == 0) {
        --pieces_spread_;
      }
    }
  }
}

void simulator::connect(std::uint32_t u, std::uint32_t v) {
  if (u == v) {
    return;
  }
  peer& pu = peers_[u];
  peer& pv = peers_[v];
  // The dialled peer must be there, accept inbound connections and have
  // room; seeds have nothing to say to seeds.
  if (!pu.present || !pv.present || !pv.reachable || (pu.done && pv.done) ||
      pu.conns.size() >= max_connections || pv.conns.size() >= max_connections) {
    return;
  }
  for (std::uint32_t cid : pu.conns) {
    if (other(conns_[cid], u) == v) {
      return;
    }
  }
  std::uint32_t cid;
  if (!free_conns_.empty()) {
    cid = free_conns_.back();
    free_conns_.pop_back();
  } else {
    cid = static_cast<std::uint32_t>(conns_.size());
    conns_.emplace_back();
  }
  connection& c = conns_[cid];
  c = connection{};
  c.a = u;
  c.b = v;
  c.alive = true;
  for (std::uint32_t q = 0; q < sc_.pieces; ++q) {
    const bool hu = pu.have[q] != 0;
    const bool hv = pv.have[q] != 0;
    c.d[0].interesting += hu && !hv && wants(pv, q);
    c.d[1].interesting += hv && !hu && wants(pu, q);
    if (hv && !pu.done) {
      ++pu.avail[q];
    }
    if (hu && !pv.done) {
      ++pv.avail[q];
    }
  }
  pu.conns.push_back(cid);
  pv.conns.push_back(cid);
  // Free upload slots are filled at once (as libtorrent does), the rest
  // waits for the next rechoke.
  for (std::uint32_t up : {u, v}) {
    peer& x = peers_[up];
    direction& d = dir_from(c, up);
    if (!x.freerider && d.interesting > 0 && unchoked_count(up) < regular_slots + 1) {
      set_unchoked(c, up, true);
    }
  }
}

void simulator::release(connection& c, int dir) {
  direction& d = c.d[dir];
  if (d.piece >= 0) {
    peer& down = peers_[dir == 0 ? c.b : c.a];
    if (!down.inflight.empty()) {
      const auto q = static_cast<std::uint32_t>(d.piece);
      down.inflight[q] = 0;
      down.inflight_bits[q / 64] &= ~(std::uint64_t{1} << (q % 64));
      ++down.release_version;
    }
    d.piece = -1;
  }
}

void simulator::unlink_from(std::uint32_t p, std::uint32_t cid) {
  auto& v = peers_[p].conns;
  auto it = std::find(v.begin(), v.end(), cid);
  if (it != v.end()) {
    *it = v.back();
    v.pop_back();
  }
  if (peers_[p].optimistic == static_cast<std::int64_t>(cid)) {
    peers_[p].optimistic = -1;
  }
}

void simulator::disconnect(std::uint32_t cid) {
  connection& c = conns_[cid];
  set_unchoked(c, c.a, false);
  set_unchoked(c, c.b, false);
  release(c, 0);
  release(c, 1);
  peer& pa = peers_[c.a];
  peer& pb = peers_[c.b];
  for (std::uint32_t q = 0; q < sc_.pieces; ++q) {
    if (!pa.done && pb.have[q]) {
      --pa.avail[q];
    }
    if (!pb.done && pa.have[q]) {
      --pb.avail[q];
    }
  }
  unlink_from(c.a, cid);
  unlink_from(c.b, cid);
  c.alive = false;
  free_conns_.push_back(cid);
}

std::int32_t simulator::pick_piece(std::uint32_t u, std::uint32_t v) {
  // Candidates: pieces u has, v lacks and v is not fetching elsewhere.
  // Among them, partial ones first (finish what was started); then a
  // random one while v has fewer than 4 pieces, else the rarest among v's
  // connected peers. Ties go to the first candidate after a uniformly
  // random start piece (scanning cyclically), so two downloaders with the
  // same view rarely pick the same piece, as libtorrent's shuffled
  // priority buckets ensure.
  const peer& pu = peers_[u];
  peer& pv = peers_[v];
  const std::size_t words = pv.have_bits.size();
  const std::uint32_t start = pv.rng.below(sc_.pieces);
  const std::size_t sw = start / 64;
  const std::uint64_t high = ~std::uint64_t{0} << (start % 64);  // bits >= start in word sw
  std::int32_t best = -1;
  std::uint32_t best_key = std::numeric_limits<std::uint32_t>::max();
  const bool random_first = pv.have_count < random_first_pieces;
  for (int pass = 0; pass < 2 && best < 0; ++pass) {
    const bool first_found = random_first && pass == 1;
    for (std::size_t k = 0; k <= words; ++k) {
      const std::size_t w = (sw + k) % words;
      std::uint64_t m =
          pu.have_bits[w] & pv.want_bits[w] & ~pv.have_bits[w] & ~pv.inflight_bits[w];
      if (pass == 0) {
        m &= pv.partial_bits[w];
      }
      m &= k == 0 ? high : k == words ? ~high : ~std::uint64_t{0};
      for (; m != 0; m &= m - 1) {
        const auto q =
            static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(m)));
        const std::uint32_t key = first_found ? 0 : pv.avail[q];
        if (key < best_key) {
          best_key = key;
          best = static_cast<std::int32_t>(q);
          if (first_found) {
            break;
          }
        }
      }
      if (first_found && best >= 0) {
        break;
      }
    }
  }
  if (best >= 0) {
    const auto q = static_cast<std::uint32_t>(best);
    pv.inflight[q] = 1;
    pv.inflight_bits[q / 64] |= std::uint64_t{1} << (q % 64);
  }
  return best;
}

void simulator::gain_piece(std::uint32_t v, std::uint32_t q) {
  peer& pv = peers_[v];
  unwanted_pieces_ += !wants(pv, q);
  pv.have[q] = 1;
  ++pv.have_count;
  pv.inflight[q] = 0;
  pv.partial[q] = 0;
  const std::uint64_t bit = std::uint64_t{1} << (q % 64);
  pv.have_bits[q / 64] |= bit;
  pv.inflight_bits[q / 64] &= ~bit;
  pv.partial_bits[q / 64] &= ~bit;
  if (copies_[q]++ == 0) {
    ++pieces_spread_;
    if (pieces_spread_ == sc_.pieces && seed_upload_at_spread_ < 0) {
      seed_upload_at_spread_ = origin_uploaded_;
    }
  }
  for (std::uint32_t cid : pv.conns) {
    connection& c = conns_[cid];
    const std::uint32_t w = other(c, v);
    peer& pw = peers_[w];
    if (pw.have[q]) {
      --dir_from(c, w).interesting;
    } else if (!pw.done) {
      // (A paused partial seed has no avail to keep and wants nothing.)
      dir_from(c, v).interesting += wants(pw, q);
      ++pw.avail[q];
    }
  }
  if (pv.have_count == pv.want_count) {
    complete(v);
  }
}

void simulator::complete(std::uint32_t v) {
  peer& pv = peers_[v];
  pv.done = true;
  pv.complete_s = t_;
  --leechers_now_;
  if (pv.partial_seed) {
    ++partial_now_;
  } else {
    ++seeders_now_;
    if (first_copy_s_ < 0) {
      first_copy_s_ = t_;
    }
  }
  // Seeds drop seeds (and partial seeds that have their files are done
  // too: neither side of such a link wants anything); links into v have
  // nothing left to carry.
  // (Not scratch_: transfer() is iterating over it.)
  std::vector<std::uint32_t> drop;
  for (std::uint32_t cid : pv.conns) {
    connection& c = conns_[cid];
    release(c, c.a == v ? 1 : 0);
    if (peers_[other(c, v)].done) {
      drop.push_back(cid);
    }
  }
  for (std::uint32_t cid : drop) {
    disconnect(cid);
  }
  pv.leave_s = t_ + pv.seed_time_s;
  // A partial seed announces its new state at once (BEP 21); without
  // BEP 21 it has nothing to say until its next interval.
  if (!pv.partial_seed) {
    announce(v, announce_event::completed);
  } else if (sc_.partial_announce_paused) {
    announce(v, announce_event::paused);
  }
}

void simulator::set_unchoked(connection& c, std::uint32_t uploader, bool on) {
  direction& d = dir_from(c, uploader);
  if (d.unchoked == on) {
    return;
  }
  d.unchoked = on;
  const int k = c.a == uploader ? 0 : 1;
  if (on) {
    d.slot = static_cast<std::int32_t>(unchoked_.size());
    unchoked_.push_back(static_cast<std::uint32_t>(&c - conns_.data()) * 2 +
                        static_cast<std::uint32_t>(k));
  } else {
    release(c, k);  // the partial piece stays at the downloader
    const std::uint32_t moved = unchoked_.back();
    unchoked_[static_cast<std::size_t>(d.slot)] = moved;
    conns_[moved / 2].d[moved % 2].slot = d.slot;
    unchoked_.pop_back();
    d.slot = -1;
  }
}

std::uint32_t simulator::unchoked_count(std::uint32_t u) {
  std::uint32_t n = 0;
  for (std::uint32_t cid : peers_[u].conns) {
    n += dir_from(conns_[cid], u).unchoked;
  }
  return n;
}

void simulator::rechoke(std::uint32_t u, bool optimistic_too) {
  peer& pu = peers_[u];
  // Rates: bytes received from each peer over the last two periods.
  ranked_.clear();
  for (std::uint32_t cid : pu.conns) {
    connection& c = conns_[cid];
    const std::uint32_t w = other(c, u);
    direction& in = dir_from(c, w);
    direction& out = dir_from(c, u);
    const double got = in.recent + in.prev;
    const double sent = out.recent + out.prev;
    in.prev = in.recent;
    in.recent = 0;
    out.prev = out.recent;
    out.recent = 0;
    if (pu.freerider || out.interesting == 0 || peers_[w].done) {
      set_unchoked(c, u, false);
      if (pu.optimistic == static_cast<std::int64_t>(cid)) {
        pu.optimistic = -1;
      }
      continue;
    }
    // Leechers reciprocate (most received from); seeds keep those they
    // upload to fastest (mainline's seeding choker). Ties at random.
    const double jitter = uniform01(pu.rng) * 1e-6;
    ranked_.emplace_back((pu.done ? sent : got) + jitter, cid);
  }
  std::sort(ranked_.begin(), ranked_.end(),
            [](const auto& x, const auto& y) { return x.first > y.first; });
  if (optimistic_too || pu.optimistic < 0) {
    pu.optimistic = -1;
    if (ranked_.size() > static_cast<std::size_t>(regular_slots)) {
      const std::uint32_t k = regular_slots +
                              pu.rng.below(static_cast<std::uint32_t>(ranked_.size()) - regular_slots);
      pu.optimistic = ranked_[k].second;
    }
  }
  for (std::size_t k = 0; k < ranked_.size(); ++k) {
    const std::uint32_t cid = ranked_[k].second;
    const bool on = k < static_cast<std::size_t>(regular_slots) ||
                    static_cast<std::int64_t>(cid) == pu.optimistic;
    set_unchoked(conns_[cid], u, on);
  }
}

void simulator::transfer(double dt) {
  // Pass 1: active links and per-peer counts.
  for (const std::uint32_t i : present_) {
    peers_[i].n_up = 0;
    peers_[i].n_down = 0;
  }
  scratch_.clear();
  for (const std::uint32_t link : unchoked_) {
    connection& c = conns_[link / 2];
    {
      const int k = static_cast<int>(link % 2);
      direction& d = c.d[k];
      const std::uint32_t u = k == 0 ? c.a : c.b;
      const std::uint32_t v = k == 0 ? c.b : c.a;
      if (!d.unchoked || d.interesting == 0 || peers_[v].done || peers_[u].up <= 0) {
        continue;
      }
      if (d.piece < 0) {
        if (d.blocked_release == peers_[v].release_version &&
            d.blocked_have == peers_[u].have_count) {
          continue;
        }
        d.piece = pick_piece(u, v);
        if (d.piece < 0) {
          // Everything u has that v lacks is already in flight.
          d.blocked_release = peers_[v].release_version;
          d.blocked_have = peers_[u].have_count;
          continue;
        }
      }
      ++peers_[u].n_up;
      ++peers_[v].n_down;
      scratch_.push_back(link);
    }
  }
  // Pass 2: move bytes.
  for (std::uint32_t link : scratch_) {
    connection& c = conns_[link / 2];
    if (!c.alive) {
      continue;
    }
    const int k = static_cast<int>(link % 2);
    direction& d = c.d[k];
    const std::uint32_t u = k == 0 ? c.a : c.b;
    const std::uint32_t v = k == 0 ? c.b : c.a;
    peer& pu = peers_[u];
    peer& pv = peers_[v];
    if (pv.done || d.piece < 0 || !d.unchoked) {
      continue;
    }
    double bytes = std::min(pu.up / pu.n_up, pv.down / pv.n_down) * dt;
    pu.uploaded += bytes;
    pv.downloaded += bytes;
    d.recent += bytes;
    pv.last_recv_s = t_ + dt;
    if (pu.origin) {
      origin_uploaded_ += bytes;
    }
    while (bytes > 0 && d.piece >= 0) {
      const auto q = static_cast<std::uint32_t>(d.piece);
      const double need = sc_.piece_bytes - pv.partial[q];
      if (bytes < need) {
        pv.partial[q] += static_cast<float>(bytes);
        pv.partial_bits[q / 64] |= std::uint64_t{1} << (q % 64);
        break;
      }
      bytes -= need;
      d.piece = -1;
      gain_piece(v, q);
      if (pv.done || !c.alive || !d.unchoked || d.interesting == 0) {
        break;
      }
      d.piece = pick_piece(u, v);
    }
  }
}

void simulator::tracker_tick() {
  const health_time now = clock(t_);
  for (auto r = core_.sweep(now); !r.cycle_done; r = core_.sweep(now)) {
  }
  const auto changed = core_.tick(now);
  if (t_ >= sc_.measure_from_s && t_ < measure_until_ && !present_.empty()) {
    ++health_ticks_;
    if (is_unhealthy(core_.last_report()->state)) {
      ++unhealthy_ticks_;
      unhealthy_reasons_ |= core_.last_report()->reasons;
      leave_early_ticks_ += (core_.last_report()->reasons & reason_seeders_leave_early) != 0;
    }
  }
  if (setup_.mode != tracker_mode::self_healing) {
    return;
  }
  // As the supervisor: a changed, unhealthy report of a big enough swarm
  // starts one remediation; it then sees every tick's report.
  std::optional<remediation_plan::step> step;
  if (!plan_ && changed && is_unhealthy(changed->state) &&
      changed->seeders + changed->leechers >= sup_cfg_.remediation_min_peers) {
    remediation_config rc = sup_cfg_.remediation_cfg;
    if (rc.watch_time == std::chrono::seconds{0}) {
      rc.watch_time = core_.config().announce_interval;
    }
    plan_.emplace(rc, core_.config().default_knobs());
    remediation_reasons_ |= changed->reasons;
    ++remediation_starts_;
    step = plan_->on_report(*changed);
  } else if (plan_) {
    step = plan_->on_report(*core_.last_report());
  }
  if (!step) {
    return;
  }
  if (step->knobs) {
    core_.set_knobs(*step->knobs);
  }
  for (auto& rec : step->records) {
    ++remediation_actions_;
    if (opt_.keep_log) {
      log_ += "t=" + std::to_string(static_cast<long>(t_)) + " " + to_string(rec) + "\n";
    }
    core_.record(std::move(rec));
  }
  if (step->done) {
    plan_.reset();
  }
}

void simulator::sample() {
  std::uint32_t min_copies = std::numeric_limits<std::uint32_t>::max();
  for (std::uint32_t q = 0; q < sc_.pieces; ++q) {
    min_copies = std::min(min_copies, copies_[q]);
  }
  std::uint32_t stalled = 0;
  for (const std::uint32_t i : present_) {
    const peer& p = peers_[i];
    if (!p.done && t_ - p.arrive_s >= stall_window &&
        t_ - p.last_recv_s >= stall_window) {
      ++stalled;
    }
  }
  if (opt_.keep_series) {
    series_.push_back({t_, leechers_now_, seeders_now_, min_copies, stalled, partial_now_});
  }
  // The tracker's scrape against the truth: every present peer announced
  // its current state, so they agree unless an announce was refused or a
  // peer expired.
  const swarm_stats st = core_.scrape();
  if (st.complete != std::int64_t{seeders_now_} ||
      st.incomplete != std::int64_t{leechers_now_} + partial_now_ ||
      st.partial != std::int64_t{partial_now_}) {
    ++scrape_mismatches_;
  }
  if (t_ >= sc_.measure_from_s && t_ < measure_until_ && leechers_now_ > 0) {
    ++samples_;
    min_copies_sum_ += min_copies;
    stalled_sum_ += stalled;
    stalled_peak_ = std::max(stalled_peak_, stalled);
  }
}

run_metrics simulator::run() {
  const double dt = 1.0;
  bool seeders_left = false;
  for (t_ = 0; t_ < sc_.horizon_s; t_ += dt) {
    while (next_arrival_ < arrivals_.size() && peers_[arrivals_[next_arrival_]].arrive_s <= t_) {
      arrive(arrivals_[next_arrival_++]);
    }
    if (!seeders_left && sc_.seeders_leave_at_s >= 0 && t_ >= sc_.seeders_leave_at_s) {
      seeders_left = true;
      std::vector<std::uint32_t> seeders;
      for (const std::uint32_t i : present_) {
        if (peers_[i].done && !peers_[i].partial_seed) {
          seeders.push_back(i);
        }
      }
      for (const std::uint32_t i : seeders) {
        depart(i);
      }
    }
    // Index loop: a departure swaps the last present peer into slot k
    // (visited next), an announce's connections add none.
    for (std::size_t k = 0; k < present_.size();) {
      const std::uint32_t i = present_[k];
      peer& p = peers_[i];
      if (p.done && t_ >= p.leave_s) {
        depart(i);
        continue;
      }
      ++k;
      if (t_ >= p.next_announce_s) {
        announce(i, announce_event::none);
      }
      const auto tick = static_cast<std::uint32_t>(t_) + p.phase;
      if (tick % static_cast<std::uint32_t>(rechoke_period) == 0) {
        rechoke(i, tick % static_cast<std::uint32_t>(optimistic_period) == 0);
      }
    }
    if (!probes_.empty()) {
      for (std::size_t k = 0; k < probes_.size();) {
        if (probes_[k].at > t_) {
          ++k;
          continue;
        }
        // The tracker's own connect attempt: it succeeds exactly when the
        // peer is there and accepts inbound connections.
        const probe_request& r = probes_[k].req;
        const std::uint32_t ip = (std::uint32_t{r.target.ip.bytes[0]} << 24) |
                                 (std::uint32_t{r.target.ip.bytes[1]} << 16) |
                                 (std::uint32_t{r.target.ip.bytes[2]} << 8) |
                                 r.target.ip.bytes[3];
        const std::uint32_t i = ip - ip_base - 1;
        const bool ok = i < peers_.size() && peers_[i].present && peers_[i].reachable;
        core_.apply_probe_result(peer_key{r.id, r.target.ip}, r.target.port,
                                 ok ? probe_outcome::reachable : probe_outcome::unreachable,
                                 clock(t_));
        probes_[k] = probes_.back();
        probes_.pop_back();
      }
    }
    transfer(dt);
    if (t_ >= sc_.measure_from_s && t_ < measure_until_) {
      leecher_time_integral_ += leechers_now_ * dt;
      seeder_time_integral_ += seeders_now_ * dt;
      partial_time_integral_ += partial_now_ * dt;
    }
    const auto whole = static_cast<std::int64_t>(t_);
    if (whole % static_cast<std::int64_t>(sample_period) == 0) {
      tracker_tick();
      sample();
    }
    if (sc_.stop_when_done && next_arrival_ == arrivals_.size() && leechers_now_ == 0) {
      t_ += dt;
      break;
    }
  }
  return finish();
}

run_metrics simulator::finish() {
  run_metrics m;
  m.end_s = t_;
  std::vector<double> all, unreach, reach, compliant, riders, partial;
  double sum_done = 0;
  for (const auto& p : peers_) {
    if (p.origin || !p.measured) {
      continue;
    }
    if (p.partial_seed) {
      ++m.partial_seeds;
      m.partial_completed += p.complete_s >= 0;
      partial.push_back(p.complete_s >= 0 ? p.complete_s - p.arrive_s : t_ - p.arrive_s);
      continue;
    }
    ++m.leechers;
    double d;
    if (p.complete_s >= 0) {
      ++m.completed;
      d = p.complete_s - p.arrive_s;
      sum_done += d;
    } else {
      ++m.censored;
      d = t_ - p.arrive_s;  // still there, or left at the end of the run
    }
    all.push_back(d);
    (p.reachable ? reach : unreach).push_back(d);
    (p.freerider ? riders : compliant).push_back(d);
  }
  auto med = [](const std::vector<double>& v) { return v.empty() ? -1.0 : quantile(v, 0.5); };
  m.fraction_completed = m.leechers ? static_cast<double>(m.completed) / m.leechers : 0;
  m.median_s = quantile(all, 0.5);
  m.p95_s = quantile(all, 0.95);
  m.max_s = all.empty() ? 0 : *std::max_element(all.begin(), all.end());
  m.mean_s = m.completed ? sum_done / m.completed : 0;
  m.first_copy_s = first_copy_s_;
  m.every_piece_spread = seed_upload_at_spread_ >= 0;
  m.seed_upload_copies =
      (m.every_piece_spread ? seed_upload_at_spread_ : origin_uploaded_) / file_bytes_;
  m.min_copies_mean = samples_ ? min_copies_sum_ / samples_ : 0;
  m.stalled_mean = samples_ ? stalled_sum_ / samples_ : 0;
  m.stalled_peak = stalled_peak_;
  m.unreachable_median_s = med(unreach);
  m.reachable_median_s = med(reach);
  m.compliant_median_s = med(compliant);
  m.compliant_p95_s = compliant.empty() ? -1 : quantile(compliant, 0.95);
  m.freerider_median_s = med(riders);
  m.partial_median_s = med(partial);
  m.partial_p95_s = partial.empty() ? -1 : quantile(partial, 0.95);
  const double span = std::min(measure_until_, t_) - sc_.measure_from_s;
  if (span > 0) {
    m.mean_leechers = leecher_time_integral_ / span;
    m.mean_seeders = seeder_time_integral_ / span;
    m.mean_partial = partial_time_integral_ / span;
    m.arrival_rate = m.leechers / (measure_until_ - sc_.measure_from_s);
  }
  m.announces = announces_;
  m.paused_announces = paused_announces_;
  m.remediation_actions = remediation_actions_;
  m.health_ticks = health_ticks_;
  m.unhealthy_ticks = unhealthy_ticks_;
  m.unhealthy_reasons = unhealthy_reasons_;
  m.remediation_reasons = remediation_reasons_;
  m.leave_early_ticks = leave_early_ticks_;
  m.remediation_starts = remediation_starts_;
  m.seeder_appeals = core_.counters().seeder_appeals;
  m.warned = core_.counters().warned;
  m.refused = core_.counters().refused;
  m.scrape_mismatches = scrape_mismatches_;
  m.unwanted_pieces = unwanted_pieces_;
  m.remediation_log = std::move(log_);
  m.series = std::move(series_);
  return m;
}

}  // namespace

run_metrics run_once(const scenario& sc, const tracker_setup& setup, std::uint64_t seed,
                     std::uint32_t replication, const run_options& opt) {
  if (auto err = sc.validate(); !err.empty()) {
    throw std::invalid_argument("scenario " + sc.name + ": " + err);
  }
  simulator s(sc, setup, seed, replication, opt);
  return s.run();
}

}  // namespace sk::sim
