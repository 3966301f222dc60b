#pragma once
/// How the directory reaches swarms other nodes own: the interface the
/// directory defines and the cluster implements (cluster/placement.hpp),
/// injected with `swarm_directory::set_placement` when the node starts.
/// Without one, every swarm is local.
///
///   cluster ──set_view(placement_view)──▶ directory     who owns which hash
///   directory ──placement::spawn_remote──▶ a remote handle for a hash
///                                          another node owns (it implements
///                                          `remote_swarm_interface`)
///   remote handle ──placement_host──▶ directory          leave its entry,
///                                          install a swarm that could not
///                                          move, the current view, this
///                                          node's supervisor
///
/// A swarm's state moves as a `swarm_snapshot` (runtime/swarm_snapshot.hpp):
/// the local swarm answers it to `(migrate_atom, get_atom)`, and the
/// directory installs one (`swarm_directory::install`).

#include <atomic>
#include <cstdint>
#include <cstddef>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "protocol/types.hpp"
#include "runtime/supervisor_interface.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_interface.hpp"
#include "runtime/swarm_snapshot.hpp"

namespace sk {

/// What the directory hands out for a swarm another node owns: the whole
/// swarm interface, the supervisor's calls about that swarm (answered by the
/// owner's supervisor), and `leave_atom`: the directory no longer needs it
/// (it answers what is in flight, then quits).
using remote_swarm_interface = swarm_interface::extend_with<swarm_supervision_interface>::extend<
    caf::reacts_to<caf::leave_atom>>;

/// One node's picture of who serves which swarm: immutable, replaced whole
/// when it changes (`swarm_directory::set_view`), read on routing misses.
class placement_view {
 public:
  virtual ~placement_view() = default;

  /// This node's name.
  std::string self;

  /// The name of the node that owns `h` (`self`: this node).
  virtual const std::string& owner(const info_hash& h) const = 0;

  /// The node named `name` as remote handles reach it; invalid for this
  /// node and for a node that cannot be reached (the directory then serves
  /// the hash here). A new handle for the same name means a new connection:
  /// remote handles to the old one are replaced.
  virtual caf::actor node(const std::string& name) const = 0;
};

using placement_view_ptr = std::shared_ptr<const placement_view>;

/// What a remote handle needs from the directory that made it (held by
/// `weak_ptr`: a directory that is gone is skipped).
class placement_host : public swarm_registry {
 public:
  /// Merges `s` into this node's swarm for `s.hash` (spawning it on a miss;
  /// a remote entry for the hash is replaced) and returns that swarm;
  /// invalid when the directory is stopping. A handoff that nobody took
  /// keeps its swarm here this way.
  virtual local_swarm_actor install_local(const swarm_snapshot& s) = 0;

  /// The current picture (a failed handoff retries with the owner it names).
  virtual placement_view_ptr current_view() const = 0;

  /// This node's supervisor (invalid: none): the supervisor calls of a
  /// swarm kept here after a failed handoff go there.
  virtual swarm_supervision_interface local_supervisor() const = 0;

  /// Handoffs started and not yet finished (either way); a graceful leave
  /// waits for 0.
  std::atomic<std::size_t> handoffs_pending{0};
  /// Counted by the remote handles: announces and scrapes sent on to their
  /// owner (and how many of those got no answer), handoffs the owner took
  /// and handoffs nobody took (the swarm kept here).
  std::atomic<std::uint64_t> forwarded{0};
  std::atomic<std::uint64_t> forward_failures{0};
  std::atomic<std::uint64_t> handoffs_done{0};
  std::atomic<std::uint64_t> handoffs_kept{0};
};

/// Makes remote handles (implemented by the cluster).
class placement {
 public:
  virtual ~placement() = default;

  /// Spawns the remote handle for `hash`, which node `owner` serves (reached
  /// as `owner_node`, from the view). With `handoff_from` valid, the handle
  /// first moves that local swarm to the owner with its whole state: it
  /// counts the handoff in `host->handoffs_pending` before it returns, and
  /// holds every message until the handoff is over. Thread-safe and
  /// non-blocking (the directory calls it under a stripe lock).
  virtual remote_swarm_interface spawn_remote(const info_hash& hash, const std::string& owner,
                                              const caf::actor& owner_node,
                                              std::weak_ptr<placement_host> host,
                                              const local_swarm_actor& handoff_from) = 0;
};

using placement_ptr = std::shared_ptr<placement>;

}  // namespace sk
