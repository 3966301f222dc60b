#pragma once
/// Shared vocabulary of the self-healing layer: per-peer traits and flags,
/// swarm health states and reasons, allocation policy names.
///
/// Plain data, no CAF. Three parts of tracker/ and runtime/ meet here:
///   - the detectors (tracker/peer_behaviour, tracker/swarm_health) write
///     `peer_traits` and compute `health_report`s;
///   - the allocation policies (tracker/allocation) read `peer_traits` to pick
///     peers and counts;
///   - the swarm core / actors (tracker/swarm_core, runtime/supervisor, remediation)
///     glue them together and send `health_report`s around.

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracker/peer_fields.hpp"

namespace sk {

using health_clock = std::chrono::steady_clock;
using health_time = health_clock::time_point;

/// Per-peer flags (bits of `peer_traits::flags`).
enum peer_flag : std::uint8_t {
  /// Leecher whose `left` has not decreased for the configured number of
  /// announces or time.
  flag_stalled = 1u << 0,
  /// Broken counters or failed probe: never handed to other peers.
  flag_quarantined = 1u << 1,
  /// A reachability probe failed (or, in the simulator, the peer is known
  /// to accept no inbound connections): never paired with another
  /// unreachable peer under the reachability-aware policy.
  flag_unreachable = 1u << 2,
  /// A reachability probe succeeded.
  flag_reachable = 1u << 3,
  /// Uploads little compared with what it downloads in this swarm.
  flag_poor_contributor = 1u << 4,
  /// Has been sent a `warning message` for misbehaviour since its last
  /// clean announce (the next offence escalates).
  flag_warned = 1u << 5,
  /// A partial seed (BEP 21): its last announce said `event=paused` with
  /// `left > 0`, so it holds part of the torrent and downloads nothing
  /// more. Neither a leecher nor stalled for health; never handed to a
  /// seeder or another partial seed. Written by the peer table from each
  /// announce (BEP 21 makes clients repeat `paused` on every announce).
  flag_partial_seed = 1u << 6,
};

/// Everything the tracker remembers about one peer beyond its address: what
/// the detectors need to judge it and what the policies need to place it.
/// Stored next to the peer in `peer_table` (one per record), reset when the
/// peer is new. 96 bytes, no padding: a swarm stores one per peer, so the
/// key and the completion time use the compact types of
/// tracker/peer_fields.hpp.
struct peer_traits {
  // Counters of the last announce, as sent.
  std::uint64_t left = 0;
  std::uint64_t uploaded = 0;
  std::uint64_t downloaded = 0;
  /// The announce's `key` (empty: none sent yet).
  key_text key;

  health_time first_seen{};
  health_time last_announce{};
  /// Last time `left` went down (or the peer arrived).
  health_time last_progress{};
  /// When it sent `completed` / turned seeder (unset: never here).
  optional_time completed_at;

  std::uint32_t announces = 0;
  /// Consecutive announces without `left` going down (leechers only).
  std::uint32_t announces_without_progress = 0;
  /// Announces sooner than `min interval` since the last clean one.
  std::uint32_t early_announces = 0;
  /// Counter-sanity and key findings so far (announcing too often is
  /// answered with a warning, then a refusal, and gives no strike).
  std::uint32_t strikes = 0;
  /// Times this peer was handed to another peer. A copy: peer_table keeps
  /// the live count in its hot array and refreshes this field whenever it
  /// hands out traits; writing it through a traits pointer has no effect.
  std::uint32_t served = 0;

  /// Fraction of the torrent this peer has, 0..1; negative when unknown
  /// (torrent size not yet estimated).
  float progress = -1.0f;
  /// `peer_flag` bits.
  std::uint8_t flags = 0;
  /// The event of the last accepted announce (`announce_event` value; a
  /// repeat must say the same again, or nothing). In what was padding.
  std::uint8_t last_event = 0;
  /// The port the last reachability probe was asked for (0: never probed;
  /// port 0 is never probed): a peer announcing another port is probed again.
  std::uint16_t probed_port = 0;
  /// When that probe was asked for, in whole seconds of the swarm's clock
  /// (`time_since_epoch`).
  std::uint32_t probed_at_s = 0;

  bool has(peer_flag f) const noexcept { return (flags & f) != 0; }
  void set(peer_flag f, bool on = true) noexcept {
    flags = on ? static_cast<std::uint8_t>(flags | f) : static_cast<std::uint8_t>(flags & ~f);
  }
};
#if defined(__x86_64__)
static_assert(sizeof(peer_traits) == 96, "peer_traits is stored per peer: keep it free of padding");
#endif

/// Health of one swarm. `unevaluated`: fewer peers than `health.min-peers`
/// (or not yet ticked), so no rule is judged and no reason is given; such a
/// swarm is never degraded or critical (most swarms of a public tracker are
/// dead one-peer torrents, and calling them critical makes the alarm noise).
/// The order healthy < degraded < critical is the order of severity;
/// `unevaluated` sits outside it (see `is_unhealthy`).
enum class swarm_health : std::uint8_t { healthy = 0, degraded = 1, critical = 2, unevaluated = 3 };

/// Degraded or critical (the states remediation and alerts act on).
constexpr bool is_unhealthy(swarm_health h) noexcept {
  return h == swarm_health::degraded || h == swarm_health::critical;
}

/// Why a swarm is not healthy (bits of `health_report::reasons`).
enum health_reason : std::uint32_t {
  reason_no_seeders = 1u << 0,
  reason_few_seeders = 1u << 1,          ///< seeders / leechers below threshold
  reason_stalled_leechers = 1u << 2,     ///< many leechers stalled
  reason_seeders_leave_early = 1u << 3,  ///< completers leave soon after completing
  reason_low_completion_rate = 1u << 4,  ///< leechers but (almost) no completions
  reason_abusive_clients = 1u << 5,      ///< many peers announcing too often / broken counters
  reason_unreachable_peers = 1u << 6,    ///< many peers failed the reachability probe
  reason_flash_crowd = 1u << 7,          ///< leecher arrivals far above seeders' capacity
};

/// Number of `health_reason` bits in use (for iterating names).
constexpr int health_reason_count = 8;

/// A swarm's classification at one tick, with the signals behind it.
struct health_report {
  swarm_health state = swarm_health::healthy;
  std::uint32_t reasons = 0;  ///< `health_reason` bits
  std::uint64_t seeders = 0;
  /// Leechers that download (partial seeds not included).
  std::uint64_t leechers = 0;
  /// Partial seeds (BEP 21 `event=paused`): neither seeders nor leechers here.
  std::uint64_t partial_seeds = 0;
  std::uint64_t stalled = 0;
  std::uint64_t quarantined = 0;
  /// Completions per hour over the health window.
  double completion_rate = 0.0;
  /// Announces per second over the health window.
  double announce_rate = 0.0;
  /// Leecher progress spread: quartiles (negative: unknown).
  float progress_p25 = -1.0f;
  float progress_median = -1.0f;
  float progress_p75 = -1.0f;
  health_time at{};
};

/// Peer allocation policies (which peers an announce gets back).
enum class policy_kind : std::uint8_t {
  random,                 ///< uniform sample: the baseline
  role_aware,             ///< seeders get leechers; leechers get seeders first
  seeder_rotation,        ///< every seeder handed out in turn
  stalled_boost,          ///< stalled leechers get seeders and the most complete peers
  flash_crowd,            ///< tracker-side super-seeding for few seeders
  reachability_aware,     ///< never pair two unreachable peers
  contribution_weighted,  ///< poor contributors get fewer peers (with a floor)
  adaptive,               ///< the default: composed from the above by the swarm's signals
};

constexpr int policy_kind_count = 8;

/// Stable lowercase names ("random", "role-aware", "seeder-rotation",
/// "stalled-boost", "flash-crowd", "reachability-aware",
/// "contribution-weighted", "adaptive") used in config, logs and the admin API.
constexpr std::array<std::string_view, policy_kind_count> policy_names{
    "random",        "role-aware",         "seeder-rotation",       "stalled-boost",
    "flash-crowd",   "reachability-aware", "contribution-weighted", "adaptive"};

inline std::string_view to_string(policy_kind p) noexcept {
  return policy_names[static_cast<std::size_t>(p)];
}

/// Parses a policy name; nullopt when unknown.
inline std::optional<policy_kind> parse_policy(std::string_view name) noexcept {
  for (std::size_t i = 0; i < policy_names.size(); ++i) {
    if (policy_names[i] == name) {
      return static_cast<policy_kind>(i);
    }
  }
  return std::nullopt;
}

inline std::string_view to_string(swarm_health h) noexcept {
  switch (h) {
    case swarm_health::healthy:
      return "healthy";
    case swarm_health::degraded:
      return "degraded";
    case swarm_health::critical:
      return "critical";
    case swarm_health::unevaluated:
      return "unevaluated";
  }
  return "unknown";
}

/// Name of one reason bit ("no-seeders", "few-seeders", "stalled-leechers",
/// "seeders-leave-early", "low-completion-rate", "abusive-clients",
/// "unreachable-peers", "flash-crowd").
inline std::string_view reason_name(health_reason r) noexcept {
  switch (r) {
    case reason_no_seeders:
      return "no-seeders";
    case reason_few_seeders:
      return "few-seeders";
    case reason_stalled_leechers:
      return "stalled-leechers";
    case reason_seeders_leave_early:
      return "seeders-leave-early";
    case reason_low_completion_rate:
      return "low-completion-rate";
    case reason_abusive_clients:
      return "abusive-clients";
    case reason_unreachable_peers:
      return "unreachable-peers";
    case reason_flash_crowd:
      return "flash-crowd";
  }
  return "unknown";
}

/// Comma-separated names of every bit set in `reasons` ("" for none).
inline std::string reasons_to_string(std::uint32_t reasons) {
  std::string out;
  for (int i = 0; i < health_reason_count; ++i) {
    const auto bit = static_cast<health_reason>(1u << i);
    if ((reasons & bit) != 0) {
      if (!out.empty()) {
        out += ',';
      }
      out += reason_name(bit);
    }
  }
  return out;
}

}  // namespace sk
