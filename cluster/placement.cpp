#include "cluster/placement.hpp"

#include <string>
#include <utility>

namespace sk::cluster {

namespace {

class forwarding_placement final : public placement {
 public:
  forwarding_placement(caf::actor_system& sys, forwarder_options opts) : sys_(sys), opts_(opts) {}

  remote_swarm_interface spawn_remote(const info_hash& hash, const std::string& owner,
                                      const caf::actor& owner_node,
                                      std::weak_ptr<placement_host> host,
                                      const local_swarm_actor& handoff_from) override {
    return spawn_forwarder(sys_, hash, owner, owner_node, std::move(host), opts_, handoff_from);
  }

 private:
  caf::actor_system& sys_;
  const forwarder_options opts_;
};

}  // namespace

placement_ptr make_placement(caf::actor_system& sys, forwarder_options opts) {
  return std::make_shared<forwarding_placement>(sys, opts);
}

}  // namespace sk::cluster
