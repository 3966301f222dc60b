#include "runtime/message_types.hpp"

#include "runtime/swarm_snapshot.hpp"

namespace sk {

void register_message_types(caf::actor_system_config& cfg) {
  // Names are part of the wire format between nodes: never rename one
  // without bumping the cluster protocol.
  cfg.add_message_type<info_hash>("sk::info_hash");
  cfg.add_message_type<peer_id>("sk::peer_id");
  cfg.add_message_type<ip_address>("sk::ip_address");
  cfg.add_message_type<endpoint>("sk::endpoint");
  cfg.add_message_type<peer_entry>("sk::peer_entry");
  cfg.add_message_type<swarm_stats>("sk::swarm_stats");
  cfg.add_message_type<announce_request>("sk::announce_request");
  cfg.add_message_type<swarm_announce>("sk::swarm_announce");
  cfg.add_message_type<announce_result>("sk::announce_result");
  cfg.add_message_type<health_report>("sk::health_report");
  cfg.add_message_type<swarm_knobs>("sk::swarm_knobs");
  cfg.add_message_type<remediation_record>("sk::remediation_record");
  cfg.add_message_type<std::vector<remediation_record>>("sk::remediation_records");
  cfg.add_message_type<supervisor_event>("sk::supervisor_event");
  cfg.add_message_type<std::vector<supervisor_event>>("sk::supervisor_events");
  cfg.add_message_type<peer_view>("sk::peer_view");
  cfg.add_message_type<std::vector<peer_view>>("sk::peer_views");
  cfg.add_message_type<swarm_status>("sk::swarm_status");
  cfg.add_message_type<std::vector<info_hash>>("sk::info_hashes");
  cfg.add_message_type<probe_request>("sk::probe_request");
  cfg.add_message_type<probe_result>("sk::probe_result");
  cfg.add_message_type<supervisor_counters>("sk::supervisor_counters");
  cfg.add_message_type<policy_change>("sk::policy_change");
  // Swarm snapshots (runtime/swarm_snapshot.hpp) cross nodes in a cluster
  // (migration, replicas), under the cluster protocol's names.
  cfg.add_message_type<peer_snapshot>("sk::cluster::peer_snapshot");
  cfg.add_message_type<swarm_snapshot>("sk::cluster::swarm_snapshot");
  cfg.add_message_type<std::vector<swarm_snapshot>>("sk::cluster::swarm_snapshots");
}

}  // namespace sk
