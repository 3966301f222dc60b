#pragma once
/// The cluster's implementation of the directory's placement
/// (runtime/placement.hpp): a remote handle is a forwarder
/// (cluster/forwarder.hpp) to the owner's node actor. Handed to the
/// directory when the node starts (`cluster_node::start`).

#include <memory>

#include <caf/all.hpp>

#include "cluster/forwarder.hpp"
#include "runtime/placement.hpp"

namespace sk::cluster {

/// A placement whose remote handles are forwarders with `opts`, spawned in
/// `sys` (which must outlive it).
placement_ptr make_placement(caf::actor_system& sys, forwarder_options opts = {});

}  // namespace sk::cluster
