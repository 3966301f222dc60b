#pragma once
/// The node's caps on /metrics (tracker/node_census.hpp): each cap's limit,
/// what it holds now, whether it is reached and how many requests it
/// refused.

#include <cstdint>

#include "admin/admin_exposition.hpp"

namespace sk {
class node_census;
}

namespace sk::admin_api {

/// Writes the families
///   swarmkeeper_cap_limit{cap}          the configured limits
///   swarmkeeper_cap_usage{cap}          swarms and peers held now
///   swarmkeeper_cap_reached{cap}        1 while reached (swarm_peers: swarms at their cap)
///   swarmkeeper_cap_refusals_total{cap} announces refused at the cap, since start
/// for `census`; `max_peers_per_swarm` is the limit the census does not
/// hold (the new-swarm budget is per address: it has no node-wide limit).
void write_caps(exposition& m, const node_census& census, std::uint64_t max_peers_per_swarm);

}  // namespace sk::admin_api
