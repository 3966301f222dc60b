#pragma once
/// The HTTP tracker front end: Beast HTTP/1.1 on a pool of I/O threads.
///
/// Routes: `GET /announce`, `GET /scrape`, `GET /health`; anything else is
/// 404, any other method 405. Tracker-level errors (a malformed announce) are
/// a bencoded `failure reason` with status 200, as BitTorrent clients expect;
/// HTTP-level errors get their HTTP status (400, 413, 414, 431) and close the
/// connection.
///
/// Life cycle (every step from the thread that owns the server, i.e. main):
///
///   start() ─▶ serving ─▶ stop_accepting() ─▶ drain(timeout) ─▶ stop()
///   start(true) ─▶ starting (503) ─▶ ready() ─▶ serving ─▶ ...
///
/// Threads: `io_threads` threads, each running its own io_context. A
/// listener per bound endpoint (on context 0) hands each accepted connection
/// to the next context in turn; that thread serves the connection for its
/// whole life, so a single-threaded io_context is the connection's strand.
/// Thread k is lane k of the gateway (net/gateway.hpp: the one door both
/// transports share); the answers come back through its reply queue, one
/// post per burst (http_session.hpp).
///
///   listener ─accept─▶ context k ─▶ session ─parse─▶ gateway (lane k) ─ticket─▶ swarm
///                                   session ◀─ lane k reply queue ◀──────────── (swarm thread)
///
/// Beast and Asio headers stay out of this header (pimpl), so app/ and tests
/// do not compile them.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "net/client_address.hpp"
#include "net/latency_histogram.hpp"

namespace sk {

class gateway;

/// What became of one HTTP tracker request (`/metrics`).
enum class http_outcome : std::uint8_t {
  announce_ok,        ///< a normal announce reply
  announce_refused,   ///< the swarm refused the peer (banned client, abuse)
  announce_denied,    ///< the info_hash is not allowed (access list)
  announce_failure,   ///< the swarm did not answer (timeout, unavailable)
  scrape_ok,
  scrape_failure,
  bad_request,        ///< unparsable query or HTTP, limits exceeded
  not_found,          ///< unknown path
  method_not_allowed,
  health,             ///< /health
  rate_limited,       ///< an announce or scrape over its address's request rate
};
constexpr std::size_t http_outcome_count = 11;
/// Label value: "announce_ok", "announce_refused", ...
const char* to_string(http_outcome o) noexcept;

/// Per-outcome counts, summed over the I/O threads.
struct http_counters {
  std::uint64_t by_outcome[http_outcome_count] = {};
};

/// The connection limits at work (any thread; each figure exact on its own).
struct http_connection_limits {
  std::uint64_t refused_per_address = 0;  ///< closed at once: the address held its cap
  std::uint64_t refused_total = 0;        ///< closed at once: at the total, nothing to shed
  std::uint64_t shed_idle = 0;   ///< closed for a new one: waiting for its next request
  std::uint64_t shed_slow = 0;   ///< ... part of a request received, the rest still missing
  std::size_t addresses = 0;     ///< addresses holding connections now
  std::size_t busiest = 0;       ///< the most connections one address holds now
  bool per_address_reached = false;  ///< an address was refused within the quiet time
  bool total_reached = false;        ///< the total was reached within the quiet time
};

/// What the HTTP transport itself does: listening, threads, HTTP parsing
/// limits and deadlines, forwarding headers (section `[http]` of the config).
/// What every transport shares (request deadline, admission, refusals, the
/// `ip` parameter rule, numwant and scrape limits, the access list) is the
/// gateway's (net/gateway.hpp). Validated by app/ before use.
struct http_server_config {
  /// Addresses to listen on. Empty: `0.0.0.0` and `::` (the latter IPv6
  /// only, so both families are served by their own socket).
  std::vector<std::string> bind_addresses;
  std::uint16_t port = 6969;
  /// I/O threads; each runs its own io_context and is one lane of the
  /// gateway.
  std::size_t io_threads = 1;
  /// Longest request target (path + query) accepted; longer gets 414.
  std::size_t max_url_length = 8192;
  /// Largest header block (request line and target excluded); larger gets 431.
  std::size_t max_header_bytes = 8192;
  /// Longest announce/scrape query string the parser accepts (a bencoded
  /// failure beyond); the parser's other limits are the gateway's.
  std::size_t max_query_length = 6144;
  /// Deadline for reading one request, counted from when the server
  /// starts waiting for it (an idle keep-alive connection's wait included):
  /// one absolute deadline per request, so a client trickling a byte at a
  /// time holds its slot no longer than this.
  std::chrono::milliseconds read_timeout{15000};
  /// Deadline for writing one batch of responses.
  std::chrono::milliseconds write_timeout{15000};
  /// A new connection is accepted only once its first request bytes have
  /// arrived, or after this long without any (Linux TCP_DEFER_ACCEPT, whole
  /// seconds rounded up; 0: accept at once). Every HTTP client speaks
  /// first, so the I/O thread is woken once per connection instead of once
  /// for the handshake and once more for the request; the client's side of
  /// the handshake, which on loopback and on a busy host also pays for
  /// waking the server, does that once too.
  std::chrono::milliseconds defer_accept{1000};
  /// Requests one connection may have in flight (HTTP pipelining); reading
  /// pauses while this many responses are pending.
  std::size_t max_pipeline = 16;
  /// Connections served at once (keeps file descriptors and memory
  /// bounded). At the limit a new connection takes the slot of the one that
  /// has waited longest for its next request — idle keep-alive connections
  /// and slow ones still sending theirs — and is closed at once only when
  /// every connection is busy (requests in flight or responses being
  /// written). The total may pass the limit by the connections being shed at
  /// that moment.
  std::size_t max_connections = 10000;
  /// Connections one address (an IPv6 /64) may hold at once; more are
  /// closed at once (0: no cap). Trusted proxies are exempt: they carry many
  /// clients, and their idle connections are shed like any other at the
  /// total. 500 (5% of the default total): a CGNAT address shared by a few
  /// hundred subscribers, each client keeping a keep-alive connection, stays
  /// under it; twenty addresses are needed to fill the total, and then
  /// idle ones give way to new connections.
  std::size_t max_connections_per_address = 500;
  /// Peers whose forwarding headers (X-Forwarded-For, X-Real-IP) are
  /// believed; see client_address.hpp.
  trusted_proxies proxies;
};

/// The HTTP server. Not copyable; all member functions are called from one
/// controlling thread.
class http_server {
 public:
  /// Serves through `gw` (the daemon's one gateway), which must outlive
  /// the server; the parser's numwant and scrape limits are the gateway's.
  http_server(const http_server_config& cfg, gateway& gw);
  ~http_server();
  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// Binds every endpoint and starts the I/O threads. Throws
  /// std::runtime_error naming the address when binding fails (start-up only).
  /// `starting`: the daemon is not ready yet (it loads its state file,
  /// starts its other front ends): until `ready()` every connection is
  /// served, but /health answers 503 "starting" and every announce and
  /// scrape a retryable failure; nothing reaches the gateway, whose lanes
  /// other front ends may still be adding.
  void start(bool starting = false);

  /// Ends the starting phase: announces and scrapes are served and /health
  /// answers 200 from now on. No-op when not starting.
  void ready();

  /// The endpoints actually listened on, as "ADDR:PORT" / "[ADDR]:PORT".
  std::vector<std::string> local_endpoints() const;

  /// Closes the listening sockets; /health reports 503 from now on.
  void stop_accepting();

  /// Asks every connection to finish: idle ones close now, busy ones stop
  /// reading, write what they owe (with `Connection: close`) and close.
  /// Returns true when every connection ended before `timeout`.
  bool drain(std::chrono::steady_clock::duration timeout);

  /// Stops the I/O threads and joins them. Connections still open are
  /// abandoned (closed when the server is destroyed).
  void stop();

  /// Connections currently open (tests, metrics).
  std::size_t connection_count() const noexcept;
  /// The connection limits' counters and state (any thread).
  http_connection_limits connection_limits() const;
  /// The limits configured (`max_connections`, `max_connections_per_address`).
  const http_server_config& config() const noexcept;
  /// Requests by outcome since start (any thread).
  http_counters counters() const noexcept;
  /// Announce latency (request read -> reply handed to the socket), summed
  /// over the I/O threads (any thread).
  latency_histogram::snapshot announce_latency() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace sk
