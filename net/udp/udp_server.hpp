#pragma once
/// The UDP tracker front end (BEP 15): sockets, socket workers, and the way
/// from a socket worker to the swarm actors and back.
///
///   worker k (one thread, one io_context, its own SO_REUSEPORT sockets)
///   ─────────────────────────────────────────────      CAF scheduler threads
///   readable ─▶ recvmmsg (up to 32 datagrams: one round)
///     accept_udp_request per datagram
///     drop ........................ count
///     reply_error / connect ....... queued for this round's sendmmsg
///     announce / scrape ── gateway (lane k: access list, trusted address,
///                          admission, routing, deadline, one retry) ──▶ swarms
///                                         the swarm's thread encodes the BEP 15
///     sendmmsg ◀── outbox k ◀──────────── reply and queues it (one post per burst),
///                                         or sends it itself when it was the
///                                         worker's only unsettled request
///   timer: gateway.sweep(lane k) answers requests past the deadline
///
/// Why the swarm encodes the reply and no actor sits in between: measured
/// against opentracker with bench/udp, a hop through a per-worker helper
/// actor (request to the swarm, response back, post to the worker) cost a
/// response message and the helper's bookkeeping per request; a ticket the
/// swarm answers on its own thread removes both. Under load the replies
/// return to the worker: sending each from the swarm thread right away was
/// measured slower (every sendto woke the client separately), while the
/// outbox lets a burst leave in one sendmmsg. A reply with no other request
/// of its worker unsettled has nothing to wait for, and the drain would wake
/// the worker once more per request (under clients' pace, nearly every
/// request): the swarm's thread sends it. Figures in bench/udp/README.md.
/// Every swarm is still one actor that alone touches its peers.
///
/// Exactly once: the gateway settles each request once (swarm, deadline or
/// stop()); a reply that reaches the outbox is sent unless the server closed.
/// The I/O thread never waits for CAF. Sends never block: a full socket
/// buffer drops that reply and counts it. What the gateway refuses becomes an
/// error packet no larger than the request, except an overload (admission
/// full) and a shutdown, which are dropped and counted. A connect over its
/// address's request rate (the gateway's) is dropped too: its source has
/// proven nothing, so it gets no reply at all.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "net/gateway.hpp"
#include "net/latency_histogram.hpp"

namespace sk {

class swarm_directory;
class access_control;

/// What the UDP transport itself does: sockets, workers, connection ids,
/// the URL-data limit of its parser (section `[udp]` of the config). What
/// every transport shares (request deadline, admission, the claimed-address
/// rule, numwant and scrape limits, the access list) is the gateway's
/// (net/gateway.hpp).
struct udp_config {
  /// Port for IPv4 and IPv6. 0 picks a free port (tests); see
  /// `udp_server::port()`.
  std::uint16_t port = 6969;
  /// Empty: listen on 0.0.0.0 and on :: (IPv6 only, so each family has its
  /// own socket and IPv4 clients never show up as ::ffff:a.b.c.d). An
  /// address: listen on that address only.
  std::string bind;
  /// Socket workers: each has its own thread and its own socket per family
  /// (SO_REUSEPORT, so the kernel spreads clients over them), and is one
  /// lane of the gateway.
  std::size_t workers = 1;
  /// 32 hex digits shared by a cluster, or empty for a random key per process.
  std::string connection_id_key;
  /// Most BEP 41 URL data bytes kept of one announce (the parser's length
  /// limit; its other limits are the gateway's).
  std::size_t max_url_data = 6144;

  /// Empty when usable, otherwise one sentence naming the first bad field.
  std::string validate() const;
};

/// Counters of one server, summed over its workers. Relaxed atomics: each is
/// exact on its own, a snapshot is not one consistent cut.
struct udp_counters {
  std::uint64_t received = 0;           ///< datagrams read
  std::uint64_t replied = 0;            ///< datagrams sent (every kind)
  std::uint64_t connects = 0;           ///< connect replies sent
  std::uint64_t announces = 0;          ///< announce replies sent
  std::uint64_t scrapes = 0;            ///< scrape replies sent
  std::uint64_t error_replies = 0;      ///< error packets sent (parse, id, swarm failure, refusal)
  std::uint64_t bad_requests = 0;       ///< ... of those: unparsable request or bad connection id
  std::uint64_t refused = 0;  ///< ... of those: announce refused by its swarm (ban, abuse)
  std::uint64_t denied = 0;   ///< ... of those: announce refused by the access list
  std::uint64_t swarm_failures = 0;     ///< swarm timeout / unavailable (answered with an error)
  std::uint64_t rate_limited = 0;  ///< ... of those: announce or scrape over its address's rate
  std::uint64_t rerouted = 0;  ///< announces and scrape hashes routed again (the gateway's count for UDP)
  std::uint64_t dropped_malformed = 0;  ///< parser said drop (no transaction id, ...)
  std::uint64_t dropped_source_port_zero = 0;  ///< source port 0: nowhere to answer
  std::uint64_t dropped_overload = 0;          ///< over the gateway's `max_in_flight`
  std::uint64_t dropped_send_failed = 0;       ///< send_to failed (buffer full, unreachable)
  std::uint64_t dropped_shutdown = 0;          ///< in flight at stop()'s drain deadline
  std::uint64_t dropped_rate_limited = 0;      ///< a connect over its address's request rate
  /// Replies a swarm's thread sent itself, without the worker's drain: its
  /// request was the worker's only unsettled one (most requests under
  /// clients' pace). Counted in `replied` and their kinds as well.
  std::uint64_t direct_replies = 0;

  /// Every datagram dropped without a reply.
  std::uint64_t dropped() const noexcept {
    return dropped_malformed + dropped_source_port_zero + dropped_overload + dropped_send_failed +
           dropped_shutdown + dropped_rate_limited;
  }
};

/// The UDP tracker server. `start()` and `stop()` from one controlling thread
/// (main); `counters()` and `port()` from anywhere.
class udp_server {
 public:
  /// Time source for connection ids: steady_clock unless a test injects one.
  using clock_function = std::function<std::chrono::steady_clock::time_point()>;

  /// Serves through `gw` (the daemon's one gateway, shared with HTTP), which
  /// must outlive the server; the parser's numwant and scrape limits are the
  /// gateway's. Throws `std::invalid_argument` with `cfg.validate()`'s
  /// message.
  udp_server(caf::actor_system& sys, gateway& gw, const udp_config& cfg, clock_function clock = {});
  /// The same with a gateway of its own to `dir`, built from `gw_cfg` and
  /// `access`: tests.
  udp_server(caf::actor_system& sys, swarm_directory& dir, const udp_config& cfg,
             const gateway_config& gw_cfg, std::shared_ptr<access_control> access = nullptr,
             clock_function clock = {});
  /// Calls `stop()`.
  ~udp_server();
  udp_server(const udp_server&) = delete;
  udp_server& operator=(const udp_server&) = delete;

  /// Binds every socket and starts the workers. Throws `std::system_error`
  /// when a socket cannot be bound. With `bind` empty, a failing IPv6
  /// socket (no IPv6 on the host) is logged and skipped; IPv4 must work.
  /// A second call does nothing; a call after stop() throws
  /// `std::logic_error` (a server is not restartable).
  void start();

  /// Stops receiving, waits up to `drain` for replies in flight, then closes
  /// the gateway's lanes and joins the worker threads. Replies still missing
  /// at the deadline are dropped (`dropped_shutdown`). Blocks; idempotent.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(2000));

  /// The bound port (the chosen one when configured as 0); 0 before start().
  std::uint16_t port() const noexcept { return bound_port_.load(std::memory_order_acquire); }
  /// True when an IPv6 socket is listening.
  bool has_ipv6() const noexcept { return has_ipv6_; }
  /// Announces and scrapes waiting for swarms, over all workers (call after
  /// start() has returned).
  std::size_t in_flight() const noexcept;
  udp_counters counters() const noexcept;
  /// Announce latency (datagram read -> reply handed to sendmmsg), summed
  /// over the workers (call after start() has returned).
  latency_histogram::snapshot announce_latency() const noexcept;

  /// Implementation details (defined in the .cpp), public so that the
  /// ticket and lane types there can name them.
  struct shared_state;
  struct worker;

 private:
  caf::actor_system& sys_;
  std::unique_ptr<gateway> own_gateway_;
  /// Shared with every request in flight (tickets may outlive the server
  /// object's stop(); after it they only see `closed`).
  std::shared_ptr<shared_state> shared_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::atomic<std::uint16_t> bound_port_{0};
  bool has_ipv6_ = false;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace sk
