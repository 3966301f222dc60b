#pragma once
/// The node actor's state and the functions its rooms share. The node actor
/// (`node_actor`, cluster/cluster_messages.hpp) is written in rooms, one
/// file and one typed part each:
///
///   node_membership.cpp   the member list, dials, the live set and the view
///   remote_calls.cpp      requests other nodes forward here (relay)
///   node_replicas.cpp     replicas sent and held; takeover of a dead member
///   node_rebalance.cpp    loads and moves between members
///   node_migrations.cpp   swarms that arrive, their records, graceful leave
///   node.cpp              the composition, node status, `cluster_node`
///
/// Time: every room reads the actor system's clock (`self->clock().now()`,
/// the test scheduler's in tests) and hands it down as `now`; the wall
/// clock (migration records) is injected through `cluster_node`.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "cluster/cluster_config.hpp"
#include "cluster/cluster_messages.hpp"
#include "cluster/membership.hpp"
#include "cluster/view.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/health_types.hpp"

namespace sk {
class swarm_directory;
}

namespace sk::cluster {

/// The wall clock: ms since the epoch are what migration records carry.
using wall_clock = std::function<std::chrono::system_clock::time_point()>;

/// A replica another node sent here, and when it came (this node's clock).
struct replica {
  swarm_snapshot snap;
  health_time received;
};

/// Bound of the migration record ring of one node.
constexpr std::size_t max_migration_records = 64;

struct node_state {
  static inline const char* name = "sk.cluster.node";
  swarm_directory* dir = nullptr;
  cluster_config cfg;
  member_info me;
  wall_clock wall;

  // -- membership (node_membership.cpp) ------------------------------------------
  /// Every member ever heard of (sorted by name; this node included).
  std::vector<member_info> known;
  /// Live members: name -> node actor (not this node).
  std::map<std::string, node_actor> live;
  std::map<caf::actor_addr, std::string> by_addr;
  /// Members whose connection dropped and that have not come back yet: they
  /// stay in the published view until `connection_timeout` passes (a
  /// dropped duplicate connection is not a crash).
  std::set<std::string> suspects;
  /// Dials in progress ("host:port").
  std::set<std::string> dialing;
  /// Members that said they leave: name -> the incarnation that left. Not
  /// dialled (it is stopping, or stopped) until a newer incarnation of the
  /// name is heard of (it started again) or it dials this node itself.
  std::map<std::string, std::uint64_t> departed;
  /// The view last published (null before the first).
  cluster_view_ptr view;
  std::uint64_t epoch = 0;
  /// Leaving (SIGTERM): no more views with this node in them.
  bool leaving = false;
  /// The graceful leave is over: the swarms still here (handoffs nobody
  /// took) stay until the stop and go to the state file; a membership
  /// change moves nothing any more.
  bool left = false;

  // -- replicas (node_replicas.cpp) ------------------------------------------------
  /// Replicas other nodes sent here: origin -> hash -> replica.
  std::map<std::string, std::unordered_map<info_hash, replica, id20_hasher>> replicas;
  /// When the newest replica from each origin arrived (replication lag).
  std::map<std::string, health_time> replica_received;

  // -- rebalancing (node_rebalance.cpp) -------------------------------------------
  /// Periods counted, each member's last load and when it came, each local
  /// swarm's announce counter at the last tick, and the period in which a
  /// swarm last moved (in or out).
  std::uint64_t rebalance_round = 0;
  std::map<std::string, std::pair<double, health_time>> loads;
  std::unordered_map<info_hash, std::uint64_t, id20_hasher> announces_seen;
  health_time announces_seen_at{};
  std::unordered_map<info_hash, std::uint64_t, id20_hasher> moved_in_round;

  // -- migrations (node_migrations.cpp) -------------------------------------------
  /// The graceful leave's answer, delivered once every handoff is done.
  caf::typed_response_promise<std::uint64_t> leave_promise;
  std::size_t moving = 0;
  /// Swarms that arrived here, oldest first (admin API); at most
  /// `max_migration_records`.
  std::deque<migration_record> migrations;
  /// Every arrival since the start, by reason (/metrics).
  std::map<std::string, std::uint64_t> arrivals;
  /// Operator moves announced to this node (hash -> sender) whose swarm
  /// has not arrived yet.
  std::map<std::string, std::string> operator_moves;
};

using node_ptr = node_actor::stateful_pointer<node_state>;

// -- membership (node_membership.cpp) -------------------------------------------

/// A new view of the live set (this node included unless `include_self` is
/// false: leaving); not yet published.
cluster_view_ptr make_view(node_ptr self, bool include_self);
/// Makes and publishes a new view: the directory moves what it changes,
/// then the replicas of members that are gone are taken over.
void publish_view(node_ptr self);
/// What a node actor does when it starts: the first view, the first dial.
void start_membership(node_ptr self);
node_membership_part::behavior_type membership_behavior(node_ptr self);

// -- replicas (node_replicas.cpp) -----------------------------------------------

/// Takes over the replicas of every member `v` no longer lists: installed
/// here for the swarms this node owns now, sent to their owners otherwise.
void take_over(node_ptr self, const cluster_view& v, health_time now);
void start_replicas(node_ptr self);
node_replica_part::behavior_type replica_behavior(node_ptr self);

// -- rebalancing (node_rebalance.cpp) -------------------------------------------

void start_rebalance(node_ptr self);
node_rebalance_part::behavior_type rebalance_behavior(node_ptr self);

// -- migrations (node_migrations.cpp) -------------------------------------------

/// Records the arrival of `s` from `from`; `reason` empty: "operator" if an
/// operator move of it was announced, else "membership".
void record_migration(node_ptr self, std::string from, const swarm_snapshot& s, std::string reason);
node_migration_part::behavior_type migration_behavior(node_ptr self);

}  // namespace sk::cluster
