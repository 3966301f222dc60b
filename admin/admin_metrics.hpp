#pragma once
/// `/metrics`: the Prometheus exposition of the node. Every family is
/// written by exactly one function of admin_metrics.cpp (the exposition
/// refuses a family started twice), from counters the components already
/// keep and from what the swarms and the supervisor answer.

#include <cstddef>
#include <vector>

#include "admin/admin_call.hpp"
#include "admin/admin_exposition.hpp"

namespace sk::admin_api {

/// What /metrics asks the actors for before it writes: the status of every
/// swarm (up to admin.max-fanout) and the supervisor's running remediations,
/// counters and event log (all empty without a supervisor).
struct metrics_input {
  status_list swarms;
  std::size_t active_remediations = 0;
  std::vector<supervisor_event> events;
  supervisor_counters supervisor;
};

/// The exposition (format 0.0.4) from `in` and the counters `sh` reaches.
exposition render_metrics(const admin_state& sh, const metrics_input& in);

}  // namespace sk::admin_api
