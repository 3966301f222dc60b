#pragma once
/// The reachability prober (optional, off by default): a bounded
/// outbound TCP probe with a BitTorrent handshake, asked for by swarms.
///
///   swarm ──(probe_atom, probe_request)──▶ prober actor (hidden, never blocks)
///                                             │ asio::post
///                                             ▼
///   io thread: address rules ─▶ cooldown cache ─▶ same address in flight?
///              ─▶ start (≤ max_concurrent) or queue (≤ max_queued, else drop)
///   one probe:  async_connect (deadline) ─▶ write our handshake ─▶ read 68
///               bytes (deadline) ─▶ verdict ─▶ close (we never send more:
///               we are not a peer)
///   swarm ◀──(probe_atom, probe_result)── anon_send from the io thread
///
/// The handshake (BEP 3), 68 bytes both ways:
///
///   +----+---------------------+----------+-----------+-----------+
///   | 19 | "BitTorrent protocol" | reserved | info_hash |  peer_id  |
///   | 1  |          19           |    8     |    20     |    20     |
///   +----+---------------------+----------+-----------+-----------+
///
/// Verdicts: connect refused or timed out, or a connection that closes or
/// stays silent without a byte, or a correct but incomplete handshake at
/// the deadline: unreachable. 68 bytes with the right pstr and our
/// info_hash: reachable. Anything else (another protocol's bytes, another
/// info_hash): bogus, which the swarm quarantines.
///
/// Abuse (a tracker that dials addresses on clients' say-so is a reflection
/// and SSRF tool): only the address the swarm stores is dialled (by default
/// the announce's source address; see http.trust-ip-param); never
/// unspecified, multicast, broadcast or reserved addresses, never port 0;
/// loopback and private ranges only when configured; one endpoint is dialled
/// at most once per `cooldown` however many swarms ask (later asks get the
/// remembered verdict); at most `max_concurrent` connections and
/// `max_queued` waiting asks, beyond which asks are dropped and counted.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "protocol/types.hpp"
#include "runtime/probe_interface.hpp"

namespace sk {

/// Settings of the prober (section `probe` of the config).
struct prober_config {
  /// Deadline of the connect, and again of the handshake exchange. 3 s.
  std::chrono::milliseconds timeout{3000};
  /// Probes connecting or talking at once. 64.
  std::size_t max_concurrent = 64;
  /// Asks waiting for a free slot; more are dropped (answered `skipped`,
  /// counted). 1024.
  std::size_t max_queued = 1024;
  /// One endpoint is dialled at most once per this period; asks meanwhile
  /// get the remembered verdict. 1 h (the daemon uses probe.reprobe-after).
  std::chrono::seconds cooldown{3600};
  /// Endpoints whose verdict is remembered (cooldown); when all are recent,
  /// new asks are dropped rather than dialled. 65536.
  std::size_t max_remembered = 65536;
  /// Dial loopback addresses (tests only).
  bool allow_loopback = false;
  /// Dial private, CGNAT, link-local and unique-local addresses.
  bool allow_private = false;

  /// Empty when usable, otherwise one sentence naming the first bad field.
  std::string validate() const;
};

/// Counters (relaxed atomics; each exact, a snapshot not one cut).
struct prober_counters {
  std::uint64_t started = 0;      ///< connections attempted
  std::uint64_t reachable = 0;    ///< dialled: handshake for the asked info_hash
  std::uint64_t unreachable = 0;  ///< dialled: refused, timed out, silent
  std::uint64_t bogus = 0;        ///< dialled: not a handshake for the info_hash
  std::uint64_t remembered = 0;   ///< asks answered from the cooldown cache
  std::uint64_t refused = 0;      ///< asks for addresses never dialled (rules)
  std::uint64_t dropped = 0;      ///< asks beyond max_queued / max_remembered
};

/// Whether the address rules let `a` be dialled (see the header comment).
bool probe_address_allowed(const ip_address& a, bool allow_loopback, bool allow_private) noexcept;

/// The prober: one io_context thread and a hidden actor. `start()` and
/// `stop()` from one controlling thread (main); the rest from anywhere.
class reachability_prober {
 public:
  /// Throws `std::invalid_argument` with `cfg.validate()`'s message. `sys`
  /// must outlive `stop()`.
  reachability_prober(caf::actor_system& sys, const prober_config& cfg);
  /// Calls `stop()`.
  ~reachability_prober();
  reachability_prober(const reachability_prober&) = delete;
  reachability_prober& operator=(const reachability_prober&) = delete;

  /// Starts the io thread and spawns the actor. A second call does nothing;
  /// a call after stop() throws `std::logic_error`.
  void start();
  /// Stops the actor, aborts every probe in flight (no answers are sent for
  /// them or for queued asks: swarms forget unanswered probes), joins the
  /// thread. Returns promptly whatever the network does. Idempotent.
  void stop();

  /// The actor swarms send `(probe_atom, probe_request)` to; it answers the
  /// sender with `(probe_atom, probe_result)`. Invalid before `start()`.
  const prober_interface& actor() const { return actor_; }
  prober_counters counters() const noexcept;
  /// Probes connecting or talking now.
  std::size_t active() const noexcept;
  /// Highest `active()` seen so far.
  std::size_t peak_active() const noexcept;
  /// Asks waiting for a slot now.
  std::size_t queued() const noexcept;
  /// The 20-byte peer_id this prober sends ("-SK0001-" and 12 random
  /// characters).
  const peer_id& own_id() const noexcept;

  /// Implementation (defined in the .cpp), shared with the actor and the
  /// handlers so that neither outlives what it uses.
  struct state;

 private:
  caf::actor_system& sys_;
  std::shared_ptr<state> st_;
  prober_interface actor_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace sk
