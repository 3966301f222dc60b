#include "cluster/rebalance.hpp"

#include <algorithm>

namespace sk::cluster {

std::vector<rebalance_move> plan_rebalance(
    const std::string& self, const std::map<std::string, double>& loads,
    std::vector<swarm_rate> swarms,
    const std::unordered_map<info_hash, std::uint64_t, id20_hasher>& last_moved,
    std::uint64_t period, const rebalance_config& cfg) {
  std::vector<rebalance_move> out;
  if (loads.size() < 2 || cfg.max_moves == 0) return out;
  auto me = loads.find(self);
  if (me == loads.end()) return out;
  double total = 0.0;
  for (const auto& [name, load] : loads) total += load;
  const double threshold = cfg.factor * total / static_cast<double>(loads.size());
  // The loads as planned so far (each move shifts its rate).
  std::map<std::string, double> planned = loads;
  double& mine = planned[self];
  if (mine <= cfg.min_rate || mine <= threshold) return out;

  // Hottest first; equal rates by hash so the plan is deterministic.
  std::sort(swarms.begin(), swarms.end(), [](const swarm_rate& a, const swarm_rate& b) {
    return a.rate != b.rate ? a.rate > b.rate : a.hash < b.hash;
  });
  for (const auto& s : swarms) {
    if (out.size() >= cfg.max_moves || mine <= threshold) break;
    if (!(s.rate > 0.0)) break;  // the rest are idle: moving them changes nothing
    if (auto it = last_moved.find(s.hash);
        it != last_moved.end() && period < it->second + cfg.hysteresis_periods)
      continue;
    // The coolest other member (std::map: ties go to the smaller name).
    auto target = planned.end();
    for (auto it = planned.begin(); it != planned.end(); ++it) {
      if (it->first == self) continue;
      if (target == planned.end() || it->second < target->second) target = it;
    }
    if (target == planned.end()) break;
    // The move must leave the target cooler than the source; a swarm too
    // hot for that is skipped (a smaller one may still fit).
    if (target->second + s.rate >= mine - s.rate) continue;
    target->second += s.rate;
    mine -= s.rate;
    out.push_back(rebalance_move{s.hash, target->first, s.rate});
  }
  return out;
}

}  // namespace sk::cluster
