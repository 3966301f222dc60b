#include "admin/admin_caps.hpp"

#include <cstdint>

#include "tracker/node_census.hpp"

namespace sk::admin_api {

void write_caps(exposition& m, const node_census& census, std::uint64_t max_peers_per_swarm) {
  using mt = metric_type;
  constexpr node_cap all[] = {node_cap::swarms, node_cap::peers, node_cap::swarm_peers,
                              node_cap::new_swarm_budget};
  auto cap = [](node_cap c) { return label("cap", to_string(c)); };
  auto limit = m.add("swarmkeeper_cap_limit", mt::gauge,
                     "Configured caps: swarms and peers of the node (caps.max-swarms, "
                     "caps.max-peers) and peers per swarm (tracker.max-peers-per-swarm).");
  limit.sample(cap(node_cap::swarms), double(census.caps().max_swarms));
  limit.sample(cap(node_cap::peers), double(census.caps().max_peers));
  limit.sample(cap(node_cap::swarm_peers), double(max_peers_per_swarm));
  auto usage = m.add("swarmkeeper_cap_usage", mt::gauge,
                     "What the node holds against its caps now: its swarms (exact) and the peers "
                     "in them (each swarm adds its change right after an announce or sweep).");
  usage.sample(cap(node_cap::swarms), double(census.swarms()));
  usage.sample(cap(node_cap::peers), double(census.peers()));
  auto reached = m.add("swarmkeeper_cap_reached", mt::gauge,
                       "1 while a cap of the node is reached (new_swarm_budget: an address was "
                       "refused within the last refill time); for swarm_peers, the swarms at "
                       "their own cap.");
  for (node_cap c : all) reached.sample(cap(c), double(census.reached(c)));
  auto refused = m.add("swarmkeeper_cap_refusals_total", mt::counter,
                       "Announces refused at a cap (a new torrent or a new peer; existing swarms "
                       "and known peers are served), by cap.");
  for (node_cap c : all) refused.sample(cap(c), double(census.refusals(c)));
}

}  // namespace sk::admin_api
