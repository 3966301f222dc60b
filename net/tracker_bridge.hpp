#pragma once
/// The bridge between I/O threads and the swarm actors.
///
///   I/O thread k                         CAF scheduler threads
///   ───────────────────────────          ─────────────────────────────────
///   parse query ─ anon_send(jobs) ──▶ network actor k
///                                       route(hash) in the directory
///                                       request(swarm) ──▶ swarm actor
///                                       ◀── announce_result ──┘
///   post ◀── sink->on_*(...) ────────┘
///   bencode + write
///
/// The I/O side never blocks: it only enqueues into a mailbox. The reply
/// travels back through `reply_sink`, whose implementation (an HTTP session
/// today, the UDP server later) hands it to its own thread. One network
/// actor per I/O thread ("lane"), so no single actor sits on the path of
/// every announce.
///
/// Timeouts: requests to swarms carry no CAF timeout (one clock event and a
/// stale timeout message per request, measured at ~8 us CPU per announce);
/// each network actor keeps its jobs in a table and fails the overdue ones
/// on a periodic tick, with BEP 31 `retry in`.

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

/// Where the bridge finds swarms: `swarm_directory` in the daemon (the one
/// place that decides who owns a swarm), fakes in tests.
class swarm_locator {
 public:
  virtual ~swarm_locator() = default;
  /// The owner of `h`, created on a miss; invalid when none can be had.
  virtual caf::actor route(const info_hash& h) = 0;
  /// The owner of `h` if it exists (scrapes must not create swarms).
  virtual caf::actor find(const info_hash& h) = 0;
};

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
///
/// Each call also hands over the job's reference to the sink (`self`, which
/// points at the sink itself). The implementation moves it into what it
/// posts, so the last reference to a session is dropped on the session's own
/// I/O thread, never on a CAF thread while that I/O thread may still touch
/// the session's socket. Use `deliver_*` below rather than calling these.
class reply_sink {
 public:
  virtual ~reply_sink() = default;
  virtual void on_announce(std::shared_ptr<reply_sink> self, std::uint64_t tag,
                           announce_result&& result) = 0;
  /// `entries` are sorted by hash and unique.
  virtual void on_scrape(std::shared_ptr<reply_sink> self, std::uint64_t tag,
                         std::vector<scrape_entry>&& entries) = 0;
  virtual void on_error(std::shared_ptr<reply_sink> self, std::uint64_t tag,
                        bridge_error error) = 0;
};

/// An announce handed from an I/O thread to a network actor. Local only:
/// it carries a pointer to the session (see CAF_ALLOW_UNSAFE_MESSAGE_TYPE).
struct announce_job {
  swarm_announce announce;
  std::shared_ptr<reply_sink> sink;
  /// Opaque to the bridge; the sink uses it to find the request (pipelining).
  std::uint64_t tag = 0;
};

/// A scrape: hashes sorted and unique (the session does that on its thread).
struct scrape_job {
  std::vector<info_hash> hashes;
  std::shared_ptr<reply_sink> sink;
  std::uint64_t tag = 0;
};

/// Jobs one I/O thread collected during one round of its event loop, sent
/// as one message: one mailbox operation (and at most one wake-up of a
/// scheduler thread) per round instead of per request.
struct job_batch {
  std::vector<announce_job> announces;
  std::vector<scrape_job> scrapes;
  bool empty() const noexcept { return announces.empty() && scrapes.empty(); }
};

/// Completes a job: gives its sink the outcome and the job's reference to
/// the sink (the job's `sink` is empty afterwards).
template <class Job>
void deliver_announce(Job& job, announce_result&& result) {
  reply_sink* sink = job.sink.get();
  sink->on_announce(std::move(job.sink), job.tag, std::move(result));
}
template <class Job>
void deliver_scrape(Job& job, std::vector<scrape_entry>&& entries) {
  reply_sink* sink = job.sink.get();
  sink->on_scrape(std::move(job.sink), job.tag, std::move(entries));
}
template <class Job>
void deliver_error(Job& job, bridge_error error) {
  reply_sink* sink = job.sink.get();
  sink->on_error(std::move(job.sink), job.tag, error);
}

/// Interface of a network actor. `tick` is its own timer (request timeouts).
using network_actor = caf::typed_actor<caf::reacts_to<announce_job>, caf::reacts_to<scrape_job>,
                                       caf::reacts_to<job_batch>, caf::reacts_to<caf::tick_atom>>;

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
  /// Spawns `cfg.lanes` network actors that find swarms in `dir`, which
  /// must outlive `stop()`.
  tracker_bridge(caf::actor_system& sys, swarm_directory& dir, const bridge_config& cfg);
  /// The same with any locator (tests); `locator` must outlive `stop()`.
  tracker_bridge(caf::actor_system& sys, swarm_locator& locator, const bridge_config& cfg);
  ~tracker_bridge();
  tracker_bridge(const tracker_bridge&) = delete;
  tracker_bridge& operator=(const tracker_bridge&) = delete;

  /// Enqueues an announce on network actor `lane % lanes`; never blocks.
  void announce(std::size_t lane, announce_job&& job);
  /// Enqueues a scrape on network actor `lane % lanes`; never blocks.
  void scrape(std::size_t lane, scrape_job&& job);
  /// Enqueues a batch on network actor `lane % lanes`; never blocks.
  void submit(std::size_t lane, job_batch&& batch);

  std::size_t lanes() const noexcept { return actors_.size(); }

  /// Stops every network actor and waits until they are gone. Jobs still in
  /// their mailboxes are dropped (their sinks are released, not called).
  /// Call from a thread that may block (main), after the I/O threads ended.
  void stop();

 private:
  void spawn_actors(swarm_locator& locator, const bridge_config& cfg);

  caf::actor_system& sys_;
  /// Set when constructed from a directory (adapts it to swarm_locator).
  std::unique_ptr<swarm_locator> own_locator_;
  std::vector<network_actor> actors_;
};

}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::announce_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::scrape_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::job_batch)
