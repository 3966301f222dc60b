#pragma once
/// `/metrics`: the Prometheus exposition of the node. Every family is
/// written by exactly one function of admin_metrics.cpp (the exposition
/// refuses a family started twice), from counters the components already
/// keep (relaxed atomics: transports, gateway, prober, the swarms'
/// node-wide totals), from /proc (`process_*`) and from what the supervisor
/// and the cluster's node actor answer. A scrape costs the same with ten
/// swarms or ten million.

#include <cstddef>
#include <optional>
#include <vector>

#include "admin/admin_call.hpp"
#include "admin/admin_exposition.hpp"
#include "cluster/cluster_messages.hpp"

namespace sk::admin_api {

/// What /metrics asks the actors for before it writes: the supervisor's
/// running remediations, counters and event log (all empty without a
/// supervisor) and, in a cluster, this node's view of the members. The
/// swarms are not asked: their families come from the directory's
/// node-wide totals (runtime/swarm_actor.hpp, `swarm_totals`).
struct metrics_input {
  std::size_t active_remediations = 0;
  std::vector<supervisor_event> events;
  supervisor_counters supervisor;
  /// Null outside a cluster, or when the node actor did not answer.
  std::optional<cluster::node_status> cluster;
};

/// The exposition (format 0.0.4) from `in` and the counters `sh` reaches.
exposition render_metrics(const admin_state& sh, const metrics_input& in);

}  // namespace sk::admin_api
