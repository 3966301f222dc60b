#pragma once
/// The admin API's endpoints, one handler each, grouped by resource; the
/// routing table (admin/admin_routes.cpp) says which path and method reach
/// which. Each handler answers its call's job exactly once.

#include "admin/admin_call.hpp"

namespace sk::admin_api {

// admin_node.cpp: the daemon itself.
/// GET /api/node: version, node name, uptime, configuration (secrets
/// redacted), actors, memory and request counters.
void get_node(admin_call& c);

// admin_cluster.cpp: the cluster's members and migrations.
/// GET /api/cluster: members, their swarms, migrations.
void get_cluster(admin_call& c);
/// POST /api/swarms/{hash}/move {"node": name}: hand a local swarm to a member.
void post_move(admin_call& c);

// admin_swarms.cpp: swarms and their operator calls.
/// GET /api/swarms?health=&sort=&limit=&offset=: the filtered, sorted list.
void get_swarms(admin_call& c);
/// GET /api/swarms/{hash}: the detail of one swarm, peers included.
void get_swarm(admin_call& c);
/// POST /api/swarms/{hash}/policy {"policy": name | "default"}.
void post_policy(admin_call& c);
/// POST /api/swarms/{hash}/restart: restart the swarm actor from its state.
void post_restart(admin_call& c);

// admin_supervisor.cpp: the supervisor's event log and remediations.
/// GET /api/events: the supervisor's bounded event log.
void get_events(admin_call& c);
/// GET /api/remediations: remediations running and recently ended.
void get_remediations(admin_call& c);
/// POST /api/swarms/{hash}/remediation/start and .../stop.
void post_remediation_start(admin_call& c);
void post_remediation_stop(admin_call& c);

// admin_bans.cpp: the peer_id prefix ban list.
/// GET /api/bans, POST /api/bans {"prefix", "reason"}, DELETE /api/bans/{prefix}.
void get_bans(admin_call& c);
void post_ban(admin_call& c);
void delete_ban(admin_call& c);

// admin_access.cpp: the info_hash access list.
/// GET /api/access: mode, file, count and the first 1000 hashes.
void get_access(admin_call& c);
/// POST /api/access/{hash}/allow and .../deny.
void post_access_allow(admin_call& c);
void post_access_deny(admin_call& c);
/// POST /api/access/reload: read access.file again.
void post_access_reload(admin_call& c);

// admin_metrics.cpp: the Prometheus exposition.
/// GET /metrics.
void get_metrics(admin_call& c);

}  // namespace sk::admin_api
