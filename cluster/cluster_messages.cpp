#include "cluster/cluster_messages.hpp"

namespace sk::cluster {

void register_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<member_info>("sk::cluster::member_info");
  cfg.add_message_type<std::vector<member_info>>("sk::cluster::member_infos");
  cfg.add_message_type<peer_snapshot>("sk::cluster::peer_snapshot");
  cfg.add_message_type<swarm_snapshot>("sk::cluster::swarm_snapshot");
  cfg.add_message_type<std::vector<swarm_snapshot>>("sk::cluster::swarm_snapshots");
  cfg.add_message_type<node_status>("sk::cluster::node_status");
}

}  // namespace sk::cluster
