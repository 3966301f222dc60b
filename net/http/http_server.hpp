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
};
constexpr std::size_t http_outcome_count = 10;
/// Label value: "announce_ok", "announce_refused", ...
const char* to_string(http_outcome o) noexcept;

/// Per-outcome counts, summed over the I/O threads.
struct http_counters {
  std::uint64_t by_outcome[http_outcome_count] = {};
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
  /// Deadline for reading one request (and for an idle keep-alive
  /// connection to send its next one).
  std::chrono::milliseconds read_timeout{15000};
  /// Deadline for writing one batch of responses.
  std::chrono::milliseconds write_timeout{15000};
  /// Requests one connection may have in flight (HTTP pipelining); reading
  /// pauses while this many responses are pending.
  std::size_t max_pipeline = 16;
  /// Connections served at once; further connections are accepted and closed
  /// at once (keeps file descriptors and memory bounded).
  std::size_t max_connections = 10000;
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
  void start();

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
