#pragma once
/// Settings of one swarm: announce timing, peer selection limits, expiry and
/// lifetime. Plain data (no CAF), validated once at start-up.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sk {

/// Tunables shared by every swarm actor (each swarm keeps its own copy, so
/// that remediation can later change one swarm without touching others).
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
  /// Most peers one swarm stores; announces of new peers beyond it are
  /// answered but not stored (memory bound against peer_id flooding).
  std::size_t max_peers = 1000000;
  /// Seed for peer selection. 0: every swarm draws an unpredictable seed;
  /// anything else: each swarm's seed is derived from this and its
  /// info_hash (reproducible runs, tests, the simulator).
  std::uint64_t rng_seed = 0;

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

}  // namespace sk
