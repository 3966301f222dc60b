#pragma once
/// One node's current picture of the cluster, as the directory reads it on
/// every routing miss (a `placement_view`, runtime/placement.hpp):
/// immutable, swapped whole when membership changes.

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "cluster/ownership.hpp"
#include "protocol/types.hpp"
#include "runtime/placement.hpp"

namespace sk::cluster {

struct cluster_view final : placement_view {
  /// Live members' names (this node included), sorted.
  std::vector<std::string> names;
  /// The node actor of every live member but this one.
  std::unordered_map<std::string, caf::actor> nodes;
  /// Increases with every change (logs, tests).
  std::uint64_t epoch = 0;

  /// The owner's name (rendezvous hashing over `names`); `self` when `names`
  /// is empty.
  const std::string& owner(const info_hash& h) const override {
    const std::size_t i = rendezvous_owner(h, names);
    return i < names.size() ? names[i] : self;
  }
  /// The next node after the owner in rank order (the replica target);
  /// empty when there is none.
  std::string successor(const info_hash& h) const {
    const auto r = rendezvous_rank(h, names);
    return r.size() >= 2 ? names[r[1]] : std::string();
  }
  /// The node actor of `name` (invalid for self or unknown names).
  caf::actor node(const std::string& name) const override {
    auto it = nodes.find(name);
    return it != nodes.end() ? it->second : caf::actor{};
  }
};

using cluster_view_ptr = std::shared_ptr<const cluster_view>;

}  // namespace sk::cluster
