#include "cluster/cluster_messages.hpp"

namespace sk::cluster {

void register_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<member_info>("sk::cluster::member_info");
  cfg.add_message_type<std::vector<member_info>>("sk::cluster::member_infos");
  cfg.add_message_type<node_status>("sk::cluster::node_status");
}

}  // namespace sk::cluster
