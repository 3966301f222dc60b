#pragma once
/// The bridge between I/O threads and the swarm actors.
///
///   I/O thread (session strand)          CAF scheduler threads
///   ───────────────────────────          ─────────────────────────────────
///   parse query ─ anon_send(job) ──▶ network actor (lane k)
///                                       route(hash) in the directory
///                                       request(swarm, timeout) ──▶ swarm actor
///                                       ◀── announce_result ───────┘
///   post(strand) ◀─ sink->on_*(...) ─┘
///   bencode + write
///
/// The I/O side never blocks: it only enqueues into a mailbox. The reply
/// travels back through `reply_sink`, whose implementation (an HTTP session
/// today, the UDP server later) posts to its own strand. One network actor
/// per I/O thread ("lane"), so no single actor sits on the path of every
/// announce.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "protocol/reply.hpp"

namespace sk {

class swarm_directory;

/// Why the bridge could not produce a reply. Each maps to a BEP 31
/// `failure reason` with a `retry in`.
enum class bridge_error : std::uint8_t {
  swarm_unavailable,  ///< the swarm ended twice in a row, or could not be spawned
  timeout,            ///< the swarm did not answer within the request timeout
  shutting_down,      ///< the tracker is stopping
  internal,           ///< any other CAF error
};

/// Stable `failure reason` text for a bridge error.
const char* failure_text(bridge_error e) noexcept;

/// Receives the outcome of a job on a CAF thread. Implementations must not
/// do more than hand the value to their own executor (`post`): they run
/// inside the network actor.
class reply_sink {
 public:
  virtual ~reply_sink() = default;
  virtual void on_announce(std::uint64_t tag, announce_result&& result) = 0;
  /// `entries` are sorted by hash and unique.
  virtual void on_scrape(std::uint64_t tag, std::vector<scrape_entry>&& entries) = 0;
  virtual void on_error(std::uint64_t tag, bridge_error error) = 0;
};

/// An announce handed from an I/O thread to a network actor. Local only:
/// it carries a pointer to the session (see CAF_ALLOW_UNSAFE_MESSAGE_TYPE).
struct announce_job {
  swarm_announce announce;
  std::shared_ptr<reply_sink> sink;
  /// Opaque to the bridge; the sink uses it to find the request (pipelining).
  std::uint64_t tag = 0;
};

/// A scrape: hashes sorted and unique (the session does that on its strand).
struct scrape_job {
  std::vector<info_hash> hashes;
  std::shared_ptr<reply_sink> sink;
  std::uint64_t tag = 0;
};

/// Interface of a network actor. `tick` is its own timer (request timeouts).
using network_actor = caf::typed_actor<caf::reacts_to<announce_job>, caf::reacts_to<scrape_job>,
                                       caf::reacts_to<caf::tick_atom>>;

/// Settings of the bridge.
struct bridge_config {
  /// How long a network actor waits for a swarm before answering with a
  /// failure (the client retries after `retry in`). Checked on a periodic
  /// tick of a fifth of this (at most 1 s), so a request fails between
  /// `request_timeout` and `request_timeout` plus one tick.
  std::chrono::milliseconds request_timeout{5000};
  /// Network actors (one per I/O thread).
  std::size_t lanes = 1;
};

/// Owns the network actors. Thread-safe: `announce`/`scrape` may be called
/// from any I/O thread concurrently.
class tracker_bridge {
 public:
  /// Spawns `cfg.lanes` network actors. `dir` must outlive `stop()`.
  tracker_bridge(caf::actor_system& sys, swarm_directory& dir, const bridge_config& cfg);
  ~tracker_bridge();
  tracker_bridge(const tracker_bridge&) = delete;
  tracker_bridge& operator=(const tracker_bridge&) = delete;

  /// Enqueues an announce on network actor `lane % lanes`; never blocks.
  void announce(std::size_t lane, announce_job&& job);
  /// Enqueues a scrape on network actor `lane % lanes`; never blocks.
  void scrape(std::size_t lane, scrape_job&& job);

  std::size_t lanes() const noexcept { return actors_.size(); }

  /// Stops every network actor and waits until they are gone. Jobs still in
  /// their mailboxes are dropped (their sinks are released, not called).
  /// Call from a thread that may block (main), after the I/O threads ended.
  void stop();

 private:
  caf::actor_system& sys_;
  std::vector<network_actor> actors_;
};

}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::announce_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::scrape_job)
