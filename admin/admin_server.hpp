#pragma once
/// The admin HTTP API: a small Beast HTTP/1.1 server on its own port
/// (loopback by default, bearer token required) answering JSON about the
/// node, its swarms, remediations and supervisor events, the operator's
/// actions (policy, restart, move, remediation, bans, access list) and
/// `/metrics` (Prometheus text format 0.0.4).
///
///   I/O thread (one io_context)                 CAF scheduler threads
///   ────────────────────────────                ─────────────────────
///   accept ─▶ session: read one request         (admin/admin_transport.hpp)
///     limits (URL 414, headers 431, body 413), parse errors 400
///     token (constant time) ─ wrong/missing ─▶ 401   (admin/admin_auth.hpp;
///       the metrics token on anything but GET /metrics ─▶ 403)
///     job{method, target, body} ── anon_send ──▶ admin actor (hidden,
///                                                event-based): the routing
///                                                table (admin/admin_routes.cpp)
///                                                picks a handler, which asks
///                                                directory / swarms /
///                                                supervisor with
///                                                request(...).then(...),
///     write reply ◀── post to the io_context ─── builds JSON, job->reply()
///
/// Why an event-based actor and not `caf::actor_companion`: answering one
/// request means fanning out to many swarms (a list, /metrics) and joining
/// the answers, which `request(...).then(...)` with a shared counter does on
/// CAF's threads; a companion would run that bookkeeping on the I/O thread.
/// The I/O thread never blocks on CAF: it only enqueues the job, and the
/// reply comes back as a posted handler. One request per connection at a time
/// (no pipelining: admin traffic is tiny).
///
/// Life cycle: start() ─▶ serving ─▶ stop() (closes the listener and every
/// connection, stops the actor, joins the thread). Start it after
/// everything it reports on, stop it before them.
///
/// Where each part lives (admin/):
///   admin_transport   listener, sessions, limits, deadlines, connection cap
///   admin_auth        the bearer token check
///   admin_assets      the web console's files (served without the token)
///   admin_routes      the routing table (method, path pattern → handler),
///                     dispatch and the admin actor; admin_router matches
///   admin_call        what a handler gets; query strings, swarm fan-out
///   admin_node, admin_cluster, admin_swarms, admin_supervisor, admin_bans,
///   admin_access      the handlers, one file per resource
///   admin_json        JSON views of the domain's structs
///   admin_metrics     /metrics: every family, once; admin_exposition writes
///                     the text format; admin_process_metrics the process_*
///                     families from /proc
///   admin_log         the log level at run time (GET/PUT /api/log/level)

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/all.hpp>

namespace sk {

class swarm_directory;
class udp_server;
class http_server;
class access_control;
struct state_stats;
class gateway;
class reachability_prober;

/// Settings of the admin server (section `admin` of the config).
struct admin_config {
  /// Port to listen on; 0 picks a free one (tests). The daemon runs no
  /// admin server at all unless `admin.port` is set (app/config.cpp).
  std::uint16_t port = 0;
  /// Address to listen on: loopback by default, the API can change swarms.
  std::string bind = "127.0.0.1";
  /// The bearer token every request must carry (never logged or shown).
  std::string token;
  /// A second token that allows GET /metrics and nothing else (403
  /// elsewhere), for Prometheus; empty: none (never logged or shown).
  std::string metrics_token;
  /// Longest request target (path + query); longer gets 414.
  std::size_t max_url_length = 2048;
  /// Largest header block; larger gets 431.
  std::size_t max_header_bytes = 8192;
  /// Largest request body; larger gets 413.
  std::size_t max_body_bytes = 16384;
  /// Deadline for reading a request on an authenticated connection (and
  /// its idle keep-alive time) and for writing a response.
  std::chrono::milliseconds io_timeout{10000};
  /// Deadline for reading a request while the connection has sent no
  /// authenticated one (new, answered 401, or console files only): idle and
  /// unauthenticated connections end fast.
  std::chrono::milliseconds auth_timeout{3000};
  /// How long one swarm / the supervisor may take to answer.
  std::chrono::milliseconds actor_timeout{2000};
  /// Most swarms one list or /metrics request asks (bounds the fan-out).
  std::size_t max_fanout = 10000;
  /// Most peers listed by `GET /api/swarms/<hash>`.
  std::uint32_t max_peers_listed = 200;
  /// Connections served at once. At the limit a new connection takes the
  /// slot of one that has sent no authenticated request (the oldest first),
  /// else of an idle authenticated one; it is closed only when every
  /// connection has a request with the admin actor. So however many idle or
  /// unauthenticated connections are open, the operator's gets in.
  std::size_t max_connections = 64;
  /// The node's info_hash access list (`/api/access`); null: the endpoints
  /// answer as for mode off. The ban list is the directory's
  /// (`swarm_directory::bans()`).
  std::shared_ptr<access_control> access;
};

/// What /api/node reports about the daemon beyond what the actors know.
struct admin_node_info {
  std::string version;
  /// Effective configuration as (key, value text), secrets already redacted.
  std::vector<std::pair<std::string, std::string>> config;
  /// The state file's figures (runtime/state_keeper.hpp); null without
  /// state.dir.
  std::shared_ptr<const state_stats> state;
  /// state.dir (empty: none).
  std::string state_dir;
};

/// The admin server. start()/stop() from one controlling thread (main).
class admin_server {
 public:
  /// `dir` must outlive stop(); `udp`, `http`, `gw` and `prober` (read by
  /// /metrics) may be null (not running) and must otherwise outlive stop().
  admin_server(caf::actor_system& sys, swarm_directory& dir, const admin_config& cfg,
               admin_node_info info, const udp_server* udp = nullptr,
               const http_server* http = nullptr, const gateway* gw = nullptr,
               const reachability_prober* prober = nullptr);
  /// Calls stop().
  ~admin_server();
  admin_server(const admin_server&) = delete;
  admin_server& operator=(const admin_server&) = delete;

  /// Binds and starts the I/O thread. Throws std::runtime_error when the
  /// address is invalid or the port cannot be bound, std::invalid_argument
  /// when the token is empty.
  void start();
  /// The bound port (the chosen one when configured as 0 in tests); 0 before start().
  std::uint16_t port() const noexcept;
  /// Idempotent; blocks until the I/O thread has ended.
  void stop();

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace sk
