#pragma once
/// Automatic rebalancing of hot nodes: the pure decision.
///
/// Every `cluster.rebalance-period` each node measures its load (announces
/// per second its local swarms served during the last period) and sends it
/// to the members. Then each node decides alone, with `plan_rebalance`, which
/// of its own swarms to hand to whom (the operator-move mechanism,
/// `swarm_directory::move`; like an operator move it lasts until the next
/// membership change). Only the hot node moves anything, so two nodes never
/// decide about the same swarm.
///
///   this node's load > factor x cluster mean  and  > min_rate ?
///     └─ yes: its swarms by falling rate; for each, until max_moves or the
///             node is no longer above factor x mean:
///               skip: idle (rate 0), or moved (in or out) within the last
///                     `hysteresis_periods` periods (no ping-pong)
///               target = the least-loaded other member (ties: smaller name)
///               skip: target + rate >= this node - rate (the move would
///                     make the target hotter than the source: it would
///                     only invert the imbalance)
///               move; the planned loads are updated for the next pick
///
/// Pure C++17: no CAF, no clock (the caller counts periods); unit-tested in
/// tests/cluster/rebalance_test.cpp.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/types.hpp"

namespace sk::cluster {

struct rebalance_config {
  /// A node rebalances only while its load exceeds factor x the mean load of
  /// the members (> 1).
  double factor = 1.5;
  /// ... and exceeds this many announces per second (idle clusters never
  /// shuffle).
  double min_rate = 50.0;
  /// At most this many moves per period (per node).
  std::uint32_t max_moves = 2;
  /// A swarm that moved (in or out) within this many periods stays put.
  std::uint32_t hysteresis_periods = 4;
};

/// One local swarm and its announce rate (announces per second).
struct swarm_rate {
  info_hash hash;
  double rate = 0.0;
};

/// One planned move: hand the local swarm `hash` to member `to`.
struct rebalance_move {
  info_hash hash;
  std::string to;
  double rate = 0.0;
};

/// The moves `self` should make now.
///   loads:   every live member's load (announces/s), `self` included; a
///            member without a known load must be left out (it is then
///            neither counted in the mean nor a target). Fewer than two
///            entries, or no entry for `self`: no moves.
///   swarms:  this node's local swarms with their rates (any order).
///   last_moved: hash -> the period in which it last moved (in or out).
///   period:  the current period number (same clock as `last_moved`).
/// Deterministic: the same inputs give the same moves.
std::vector<rebalance_move> plan_rebalance(
    const std::string& self, const std::map<std::string, double>& loads,
    std::vector<swarm_rate> swarms,
    const std::unordered_map<info_hash, std::uint64_t, id20_hasher>& last_moved,
    std::uint64_t period, const rebalance_config& cfg);

}  // namespace sk::cluster
