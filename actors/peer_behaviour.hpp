#pragma once
/// Per-peer misbehaviour and progress detectors: one pure function the swarm
/// core calls for every announce of a stored (or about to be stored) peer.
///
/// Plain C++17 (no CAF, no clock: `now` is passed in). Everything the
/// detectors remember lives in the peer's `peer_traits` (health_types.hpp),
/// so a swarm restored from a copy of its peers judges on as before.
///
/// What is judged, per announce (`observe_announce`):
///
///   timing     too_frequent       sooner than min_interval - slack after the
///                                 last accepted announce (event=completed
///                                 and event=stopped are exempt: clients send
///                                 them when they happen, by design)
///   counters   counters_backwards uploaded or downloaded went down
///              left_rising        left went up
///              impossible_rate    Δuploaded or Δdownloaded / Δt above a cap
///              repeated_completed a second `completed` in one session
///   identity   key_mismatch       another `key` than the one first sent
///   progress   stalled            leecher whose left stopped going down
///
/// `event=started` from a known peer is a restart: a new session of the same
/// client, whose counters may start again from zero, whose `left` may be
/// higher (re-check, files added) and whose key may be new. It is exempt from
/// the counter and key rules, but not from the timing rule (spamming
/// `started` must not be a way around `min interval`).
///
/// Escalation:
///
///   too_frequent:  1st early announce  -> warn  (flag_warned, message)
///                  early_refuse_after-th early announce since the last clean
///                  one -> refuse (failure reason + retry_in); a refused
///                  announce is not applied (see `observe_announce`)
///   counters/key:  each offending announce -> warn + one strike;
///                  strikes >= quarantine_strikes -> flag_quarantined
///   clean announce (no misbehaviour finding, on time): early_announces = 0,
///                  flag_warned cleared. Strikes and quarantine stay (see
///                  `behaviour_config::quarantine_strikes`).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "actors/health_types.hpp"
#include "protocol/announce.hpp"

namespace sk {

/// Thresholds of the per-peer detectors; every default is explained.
struct behaviour_config {
  /// The swarm's `min interval` (the swarm core passes its own
  /// `swarm_config::min_interval`; 900 s is that config's default).
  std::chrono::seconds min_interval{900};
  /// Tolerance below `min_interval`: an announce counts as early only if it
  /// comes sooner than `min_interval - max(early_announce_slack,
  /// min_interval * early_announce_slack_fraction)` after the last accepted
  /// one. Clients time announces from when they got the reply, timers are
  /// coarse and requests queue, so a few seconds early is not abuse. Defaults:
  /// 30 s or 5 % (45 s at 900 s), whichever is larger, but never more than
  /// half of `min_interval` (so a short one, e.g. 10 s in tests, is still
  /// enforced: announces sooner than 5 s are early).
  std::chrono::seconds early_announce_slack{30};
  double early_announce_slack_fraction = 0.05;
  /// Early announces since the last clean one that turn a warning into a
  /// refusal. 2: the first early announce is served with a warning, the
  /// second one (the client ignored it) gets a `failure reason` with
  /// `retry in`, as issue 5 asks.
  std::uint32_t early_refuse_after = 2;

  /// A leecher is stalled when `left` has not gone down for at least
  /// `stall_announces` consecutive announces AND at least `stall_time` since
  /// it last went down (or since it arrived). Both, because a client
  /// announcing often must not look stalled after a few minutes, and one that
  /// announces rarely must not look stalled after a single late announce.
  std::uint32_t stall_announces = 3;
  std::chrono::seconds stall_time{30 * 60};

  /// Fastest plausible transfer, bytes per second, for Δuploaded and
  /// Δdownloaded over the time between two announces. 1.25e9 B/s is a fully
  /// used 10 Gbit/s link, the fastest link any seedbox commonly has; the
  /// counters also include protocol overhead and both directions are
  /// judged separately, so an honest client stays below it. Anything above it
  /// is a client lying about its counters (ratio cheating) or broken.
  double max_rate_bytes_per_second = 1.25e9;
  /// The time between two announces is taken as at least this long for the
  /// rate check (two announces in the same instant would otherwise divide by
  /// zero, and a small Δt magnifies counter rounding).
  std::chrono::seconds min_rate_interval{1};

  /// Counter/key strikes that quarantine a peer (never handed to others).
  /// 3: one odd announce (a client re-check, a NAT-shared peer_id) is only a
  /// warning, a pattern is not. Quarantine is NOT lifted while the peer stays
  /// in the swarm (peer_traits has no room for a clean-streak counter; a
  /// peer that stops or expires and comes back starts clean). 0 disables
  /// quarantine.
  std::uint32_t quarantine_strikes = 3;

  /// Contribution: a leecher (seeders are never judged: they can only give
  /// from now on) that has downloaded at least
  /// `poor_contributor_min_downloaded` bytes in this session and uploaded
  /// less than `poor_contributor_ratio` times that gets
  /// `flag_poor_contributor` (read by the contribution-weighted policy); the
  /// flag is cleared as soon as the ratio is met. 64 MiB so that a fresh
  /// leecher, which cannot have uploaded much yet, is not judged; 0.1 is far
  /// below what any client with open upload slots reaches.
  std::uint64_t poor_contributor_min_downloaded = 64ull << 20;
  double poor_contributor_ratio = 0.1;

  /// Checks every field; empty when usable, else one sentence naming the first
  /// bad field.
  std::string validate() const;
};

/// What one announce revealed (bits of `behaviour_verdict::findings`).
enum behaviour_finding : std::uint32_t {
  finding_too_frequent = 1u << 0,        ///< sooner than min_interval - slack
  finding_left_rising = 1u << 1,         ///< left went up without a restart
  finding_counters_backwards = 1u << 2,  ///< uploaded/downloaded went down without a restart
  finding_impossible_rate = 1u << 3,     ///< Δbytes / Δt above max_rate_bytes_per_second
  finding_repeated_completed = 1u << 4,  ///< `completed` twice in one session
  finding_key_mismatch = 1u << 5,        ///< another key than the remembered one
  finding_stalled = 1u << 6,             ///< became stalled with this announce (not misbehaviour)
};

/// Number of `behaviour_finding` bits in use.
constexpr int behaviour_finding_count = 7;

/// Findings that are counter/identity sanity problems: each announce with at
/// least one of them is one strike.
constexpr std::uint32_t strike_findings = finding_left_rising | finding_counters_backwards |
                                          finding_impossible_rate | finding_repeated_completed |
                                          finding_key_mismatch;

/// Findings that are misbehaviour (all but `finding_stalled`); an announce
/// without any is "clean".
constexpr std::uint32_t misbehaviour_findings = strike_findings | finding_too_frequent;

/// Name of one finding ("too-frequent", "left-rising", "counters-backwards",
/// "impossible-rate", "repeated-completed", "key-mismatch", "stalled").
std::string_view finding_name(behaviour_finding f) noexcept;

/// Comma-separated names of every bit set in `findings` ("" for none).
std::string findings_to_string(std::uint32_t findings);

/// The outcome of one announce for the swarm core.
struct behaviour_verdict {
  /// `behaviour_finding` bits found in this announce.
  std::uint32_t findings = 0;
  /// Serve the announce, with `message` as `warning message`.
  bool warn = false;
  /// Do not serve it: answer with `message` as `failure reason` and
  /// `retry_in`, and do not apply the announce to the peer table. Only ever
  /// set for an early announce of a known peer; `warn` is then false.
  bool refuse = false;
  /// The peer is quarantined (after this announce): never hand it to others.
  /// Set on every announce while the flag lasts, not only when it starts.
  bool quarantine = false;
  /// The peer completed with this announce (first `completed` of the session,
  /// or `left` reaching 0): the caller counts one completion
  /// (`swarm_health_tracker::on_completed`).
  bool completed = false;
  /// With `refuse`: how long the client must wait until `min_interval` has
  /// passed since its last accepted announce, rounded up to whole seconds, at
  /// least 1 s. (BEP 31's `retry in` counts minutes: round up again.)
  std::chrono::seconds retry_in{0};
  /// Text for `warning message` or `failure reason`; empty when neither.
  std::string message;
};

/// Judges one announce and updates the peer's traits.
///
/// `t` is the peer's stored traits. When `is_new` they are reset here
/// (everything but the reachability flags, which a probe may have set) and
/// initialised (first_seen = last_announce = last_progress = now, counters
/// and key remembered); a new peer is never judged, it has no history. `torrent_size` is the
/// swarm's current estimate
/// (`swarm_health_tracker::torrent_size()`, 0 when unknown) for `progress`.
///
/// Updates, unless refused: left/uploaded/downloaded, key (first non-empty
/// one, or the new one on `started`), last_announce, announces,
/// announces_without_progress, last_progress, completed_at, progress
/// (1 - left/torrent_size, 1 for a seeder, -1 when the size is unknown),
/// early_announces, strikes and flags stalled / quarantined / warned /
/// poor_contributor. When refused, only `early_announces` and flag_warned
/// change: the announce is not taken (the next one is timed from the last
/// accepted announce, which is what `retry_in` says).
///
/// Keys are compared ignoring ASCII case (HTTP clients send them as hex in
/// either case, the UDP parser writes upper-case hex); an announce without a
/// key is never a mismatch.
///
/// Event `stopped`: the swarm core may call this before removing the peer
/// (to judge the final counters); it is never early.
behaviour_verdict observe_announce(peer_traits& t, const announce_request& req, bool is_new,
                                   health_time now, std::uint64_t torrent_size,
                                   const behaviour_config& cfg);

}  // namespace sk
