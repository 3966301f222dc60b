#pragma once
/// Settings of the cluster layer (`[cluster]`) and the pure pieces that
/// read and check them. Off unless a cluster port is set.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sk::cluster {

/// A seed (or member) address as `host:port`; IPv6 hosts in brackets
/// (`[::1]:7000`).
struct host_port {
  std::string host;
  std::uint16_t port = 0;
  std::string to_string() const;
  friend bool operator==(const host_port& a, const host_port& b) {
    return a.host == b.host && a.port == b.port;
  }
};

/// Parses `host:port[,host:port...]` (spaces around items ignored; empty
/// text: no seeds). nullopt with `*error` set (naming the bad item) on the
/// first bad item: missing port, port 0 or > 65535, empty host.
std::optional<std::vector<host_port>> parse_seeds(std::string_view text, std::string* error);

struct cluster_config {
  /// This node's name: unique in the cluster, it is what rendezvous hashing
  /// ranks. Empty: `advertise:port`.
  std::string node_name;
  /// Address the cluster port listens on (the cluster interface only).
  std::string bind = "127.0.0.1";
  /// Address other nodes dial to reach this one; empty: `bind`.
  std::string advertise;
  /// TCP port of the cluster (CAF middleman over TLS); 0: no cluster.
  std::uint16_t port = 0;
  /// Nodes to contact at start (may include this node; it is skipped).
  std::vector<host_port> seeds;
  /// Shared secret: only processes that know it complete the TLS handshake
  /// (see tls_identity.hpp). At least 16 bytes.
  std::string secret;
  /// Middleman heartbeats, and the silence after which a connection (and
  /// with it the member) is declared dead.
  std::chrono::milliseconds heartbeat_interval{500};
  std::chrono::milliseconds connection_timeout{3000};
  /// How often each owner sends snapshots of its swarms to the next node in
  /// rank order (a crash loses at most this much).
  std::chrono::milliseconds replication_period{2000};
  /// Deadline of one forwarded request (announce/scrape) to another node.
  std::chrono::milliseconds forward_timeout{4000};
  /// Retry period for seeds and members not connected.
  std::chrono::milliseconds reconnect_period{1000};
  /// Automatic rebalancing (cluster/rebalance.hpp): every period
  /// each node shares its load (announces/s its swarms served) and a node
  /// above `rebalance_factor` x the mean and above `rebalance_min_rate`
  /// hands up to `rebalance_max_moves` of its hottest swarms to the
  /// least-loaded members. Period 0: off.
  std::chrono::milliseconds rebalance_period{30000};
  double rebalance_factor = 1.5;
  double rebalance_min_rate = 50.0;
  std::uint32_t rebalance_max_moves = 2;

  bool enabled() const noexcept { return port != 0; }
  /// `advertise`, or `bind` when empty.
  const std::string& advertised_host() const noexcept {
    return advertise.empty() ? bind : advertise;
  }
  /// Empty when usable (or disabled), otherwise one sentence naming the
  /// first bad option (never the secret's value).
  std::string validate() const;
};

}  // namespace sk::cluster
