#pragma once
/// What every part of the admin server reads: its configuration, the
/// components it reports on and its own request counters.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "admin/admin_server.hpp"

namespace sk::admin_api {

/// Shared by the sessions (I/O thread) and the admin actor (CAF threads);
/// immutable after start except the atomics.
struct admin_state {
  admin_config cfg;
  admin_node_info info;
  swarm_directory* dir = nullptr;
  /// Null when that transport is not running.
  const udp_server* udp = nullptr;
  const http_server* http = nullptr;
  /// Null when not running (tests): /metrics then shows its counters as 0.
  const gateway* gw = nullptr;
  const reachability_prober* prober = nullptr;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// This machine's host name (`node` outside a cluster).
  std::string host_name;
  /// Admin requests answered, by status class (2xx/3xx, 4xx, 5xx).
  std::atomic<std::uint64_t> ok{0}, client_errors{0}, server_errors{0};
  /// Requests refused for a missing or wrong token (also in client_errors).
  std::atomic<std::uint64_t> unauthorized{0};
  /// The connection limit (admin/admin_transport.hpp): connections open,
  /// closed to make room for a new one (never authenticated, or idle), and
  /// new ones closed at once (every slot busy with a request).
  std::atomic<std::uint64_t> connections_open{0};
  std::atomic<std::uint64_t> connections_shed{0};
  std::atomic<std::uint64_t> connections_refused{0};
  /// 1 while the limit was met within the last 30 s.
  std::atomic<bool> connections_reached{false};

  /// This node's name: the cluster name (`cluster.node-name`) when
  /// clustered, else the host name.
  std::string node_name() const;
  /// Counts one answer by its status class.
  void count(unsigned status) noexcept;
  /// Seconds since the admin server was built.
  double uptime_seconds() const noexcept;
};

/// This machine's host name; "unknown" when the system does not say.
std::string local_host_name();

/// Resident set size in bytes from /proc/self/statm (0 when unavailable).
std::uint64_t resident_bytes();

}  // namespace sk::admin_api
