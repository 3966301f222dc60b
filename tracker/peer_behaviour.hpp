#pragma once
/// Per-peer misbehaviour and progress detectors: one pure function the swarm
/// core calls for every announce of a stored (or about to be stored) peer.
///
/// Plain C++17 (no CAF, no clock: `now` is passed in). Everything the
/// detectors remember lives in the peer's `peer_traits` (health_types.hpp),
/// so a swarm restored from a copy of its peers judges on as before.
///
/// First rule: a client that follows the protocol is never warned, refused
/// or struck. Every pattern below that real clients produce is benign.
///
/// Each announce of a known peer is first sorted into one of:
///
///   repeat   the same announce again: within `duplicate_window` (and
///            sooner than the early threshold), same event as the previous
///            one or none, still seeder / still leecher, and no counter
///            moved more than `counter_noise`. Real clients do this all the
///            time: libtorrent announces once per listen socket, a torrent
///            may list the tracker as http:// and udp://, users press
///            "update tracker", UDP clients resend a lost request. A repeat
///            is served (a fresh peer list), changes no trait, counts as
///            neither early nor a strike (`behaviour_verdict::repeat`).
///   early    not a repeat, an ordinary announce (event none) sooner than
///            `min_interval - slack` after the last accepted one.
///            Enforcement is for *sustained* early announcing only: the
///            `early_warn_after`-th early announce in a row (no on-time one
///            between) is served with a warning, the `early_refuse_after`-th
///            and later are refused with `retry in` (0 disables either).
///            `started`, `stopped`, `completed` and `paused` (BEP 21) are
///            sent when they happen and are never early.
///   regular  everything else; judged by the counter rules.
///
/// Counter and identity rules (each offending announce: warn + one strike;
/// `quarantine_strikes` strikes quarantine the peer):
///
///   counters_backwards uploaded or downloaded went down, but not to (near)
///                      zero: a reset to <= counter_noise is a client
///                      restart (see below)
///   left_rising        left went up, except: the magnet pattern (the
///                      stored announce had left = 0 and downloaded = 0:
///                      the client did not know the size before the
///                      metadata arrived), a partial seed selecting more
///                      files, and a restart
///   impossible_rate    Δuploaded or Δdownloaded / Δt above a cap
///   repeated_completed a second `completed` in one session (a repeat of
///                      the completing announce is not one)
///   key_mismatch       another `key` than the one first sent
///   stalled            leecher whose left stopped going down (progress,
///                      not misbehaviour; partial seeds are never stalled)
///
/// A restart is a new session of the same client, whose counters start
/// again, whose `left` may be higher (re-check, files added) and whose key
/// may be new: `event=started`, or both transfer counters reset to at most
/// `counter_noise` (clients restarting from resume data without
/// `started`). A restart is exempt from the counter and key rules.
///
/// A clean announce (no misbehaviour finding, on time) clears the early
/// streak and `flag_warned`. Strikes and quarantine stay (see
/// `behaviour_config::quarantine_strikes`).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "tracker/health_types.hpp"
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
  /// Early announces in a row (repeats and exempt events not counted) from
  /// which one is served with a `warning message`. 3: one early announce
  /// is a user pressing "update tracker" or a client re-announcing after its
  /// address changed; two can be both. 0: never warn.
  std::uint32_t early_warn_after = 3;
  /// Early announces in a row from which one is refused (`failure reason`
  /// with `retry in` until min interval has passed since the last accepted
  /// announce; the refused announce is not applied). 5: two more after the
  /// warning, which a client that reads warnings will not send. 0: never
  /// refuse.
  std::uint32_t early_refuse_after = 5;

  /// Repeats: an announce within this long of the last accepted one (and
  /// sooner than the early threshold, so an on-time announce is never a
  /// repeat) that says the same thing again. 2 min: libtorrent's announces
  /// per listen socket and per tracker URL arrive within milliseconds, a
  /// user pressing "update tracker" within a minute or two.
  std::chrono::seconds duplicate_window{120};
  /// Counter movement that is noise: a repeat may move left, uploaded and
  /// downloaded by at most this many bytes each, and a counter reset to at
  /// most this is a restart, not "counters backwards". 16 MiB: a few seconds
  /// of a fast home link, far below any torrent a reset could hide.
  std::uint64_t counter_noise = 16ull << 20;

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
  /// A repeat of the previous announce: serve it, judge nothing, change no
  /// trait (the caller counts it and does not feed the health model).
  bool repeat = false;
  /// Early (not a repeat), below the warning threshold: served as usual.
  bool early = false;
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

/// Whether two announce `key`s are the same key: ASCII case is ignored
/// (HTTP clients send hex in either case, the UDP parser writes upper-case
/// hex).
bool same_key_text(std::string_view a, std::string_view b) noexcept;
/// The same for a key as the peer's traits keep it.
bool same_key_text(const key_text& a, std::string_view b) noexcept;

/// Judges one announce and updates the peer's traits.
///
/// `t` is the peer's stored traits. When `is_new` they are reset here
/// (everything but the reachability flags, which a probe may have set) and
/// initialised (first_seen = last_announce = last_progress = now, counters
/// and key remembered); a new peer is never judged, it has no history. `torrent_size` is the
/// swarm's current estimate
/// (`swarm_health_tracker::torrent_size()`, 0 when unknown) for `progress`.
///
/// A repeat (`behaviour_verdict::repeat`) changes nothing. Otherwise,
/// unless refused: left/uploaded/downloaded, key (first non-empty
/// one, or the new one on a restart), last_event, flag_partial_seed,
/// last_announce, announces,
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
