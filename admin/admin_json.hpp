#pragma once
/// JSON views: how the domain's structs look in the admin API's answers.
/// Pure functions of their arguments (ages are measured against the steady
/// clock, as the swarms stamp them); no actor is asked here.

#include <cstdint>
#include <string>

#include <caf/fwd.hpp>
#include <nlohmann/json.hpp>

#include "cluster/cluster_messages.hpp"
#include "tracker/client_id.hpp"
#include "tracker/healing_types.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_messages.hpp"

namespace sk {
struct udp_counters;
}

namespace sk::admin_api {

using json = nlohmann::json;

/// The all-zero hash of supervisor events that concern no one swarm (bans,
/// access-list reloads); shown as `"hash": null`.
inline const info_hash no_swarm{};

/// A swarm's health state name, or "unevaluated" before its first
/// evaluation (or below `health.min-peers`).
std::string health_name(const swarm_status& s);

/// `health_reason` bits as their names.
json reasons_json(std::uint32_t reasons);
/// `peer_flag` bits as their names.
json flags_json(std::uint8_t flags);
/// Seconds from `at` to now; null when unset.
json age_seconds(health_time at);
/// `x`, or null when it is NaN or infinite (JSON has neither).
json number_or_null(double x);
/// A progress in 0..1, or null when unknown (negative).
json progress_json(float p);

json signals_json(const health_signals& s);
json record_json(const remediation_record& r);
json event_json(const supervisor_event& e);

/// The list entry of one swarm; `id` is the actor that answered.
json summary_json(const swarm_status& s, caf::actor_id id);

/// The detail of one swarm (`GET /api/swarms/<hash>`), without
/// `policy_pinned`, which the supervisor knows. `owner_node` is the node the
/// swarm runs on; `cfg` gives the intervals its knobs scale.
json detail_json(const swarm_status& s, caf::actor_id id, const std::string& owner_node,
                 const swarm_config& cfg);

json ban_json(const ban_rule& r);
json migration_json(const cluster::migration_record& r);

/// The UDP server's request counters as `/api/node` shows them.
json udp_requests_json(const udp_counters& c, std::size_t in_flight);

}  // namespace sk::admin_api
