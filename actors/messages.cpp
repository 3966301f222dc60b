#include "actors/messages.hpp"

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
}

}  // namespace sk
