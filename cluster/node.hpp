#pragma once
/// The cluster node: one actor per daemon, published on the cluster port
/// (TLS only, see secret.hpp), that keeps the member list, tells the
/// directory who owns what, serves requests other nodes forward, takes
/// swarms over (migration, crash), holds and sends replicas.
///
///   start ─▶ publish on cluster.port ─▶ dial every seed (retry every
///            reconnect-period) ─▶ (join_atom, me) ─▶ member lists merge,
///            every member dials every member it learns (full mesh)
///
///   live set changes (join; a connection dies: middleman heartbeats +
///   connection timeout; a member says it leaves)
///     ─▶ new cluster_view ─▶ directory.set_view(): swarms this node no
///        longer owns are handed over, forwarders re-pointed
///     ─▶ replicas of a member that is gone: installed here if this node
///        owns them now, else sent to their owner
///
///   every replication-period: a snapshot of every local swarm goes to the
///   next node in its rank order (the node that owns it if this one dies)
///
///   leave (SIGTERM): hand every local swarm to its next owner, wait for
///   the acknowledgements, tell every member, then the daemon stops
///
/// Message interface (`node_actor`): cluster/cluster_messages.hpp; its
/// rooms: cluster/node_state.hpp.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "cluster/cluster_config.hpp"
#include "cluster/cluster_messages.hpp"
#include "cluster/membership.hpp"
#include "cluster/node_state.hpp"

namespace sk {
class swarm_directory;
}

namespace sk::cluster {

class cluster_node {
 public:
  /// `dir` must outlive `stop()`. The actor system must have loaded the
  /// middleman and the OpenSSL manager with the identity of `cfg.secret`
  /// (`configure_actor_system`). `wall` is the wall clock (this node's
  /// incarnation, migration records).
  cluster_node(caf::actor_system& sys, swarm_directory& dir, const cluster_config& cfg,
               wall_clock wall = std::chrono::system_clock::now);
  ~cluster_node();
  cluster_node(const cluster_node&) = delete;
  cluster_node& operator=(const cluster_node&) = delete;

  /// Gives the directory the cluster's placement (forwarders), spawns the
  /// node actor and publishes it on cfg.port (blocks until the port is
  /// bound). Throws std::runtime_error when it cannot listen.
  void start();

  /// The port actually bound (cfg.port, or the OS's choice for 0 in tests).
  std::uint16_t port() const noexcept { return port_; }
  /// This node's name.
  const std::string& name() const noexcept { return self_.name; }

  /// Live member names, sorted (this node included). Blocks (main, tests).
  std::vector<std::string> members();

  /// Graceful leave: hands every local swarm to its next owner and waits
  /// for the acknowledgements (at most `deadline`), then tells the other
  /// members. Returns how many swarms were handed over. Blocks; call after
  /// the front ends stopped and before `swarm_directory::stop_all()`.
  std::size_t leave(std::chrono::milliseconds deadline);

  /// Stops the node actor and closes the cluster port. Idempotent.
  void stop();

 private:
  caf::actor_system& sys_;
  swarm_directory& dir_;
  cluster_config cfg_;
  wall_clock wall_;
  member_info self_;
  node_actor actor_;
  std::uint16_t port_ = 0;
};

/// Spawns a node actor for `dir` (which must outlive it) without
/// publishing it (`cluster_node::start` publishes it on the cluster port);
/// it dials the seeds of `cfg` and the members it learns. Tests drive it
/// this way on CAF's test scheduler.
node_actor spawn_node_actor(caf::actor_system& sys, swarm_directory& dir, const cluster_config& cfg,
                            member_info me, wall_clock wall);

/// Prepares an actor system config for the cluster: loads the middleman
/// and the OpenSSL manager, points CAF at the certificate and key derived
/// from `cfg.secret` (written to a new private directory under $TMPDIR,
/// default /tmp; a process killed with SIGKILL leaves it behind; returned so
/// the caller can remove it at exit), sets the middleman heartbeat and
/// connection timeout, and registers the cluster's message types. Call
/// before the actor system is constructed.
struct tls_identity;
tls_identity configure_actor_system(caf::actor_system_config& sys_cfg, const cluster_config& cfg);

}  // namespace sk::cluster
