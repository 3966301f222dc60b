#pragma once
/// The swarm directory: info_hash -> swarm actor, read by network threads
/// without messaging. This is the one place that decides who owns a swarm;
/// the cluster will later route to a remote owner from `route()`.

#include <caf/all.hpp>

#include "protocol/types.hpp"

namespace sk {

struct swarm_config;  // actors/swarm.hpp

/// Interface contract (implementation: actors/directory.cpp):
///
///   class swarm_directory {
///    public:
///     swarm_directory(caf::actor_system& sys, const swarm_config& cfg, std::size_t stripes = 64);
///     /// The swarm actor for `h`, spawning it on a miss. Thread-safe, never
///     /// blocks on an actor; safe to call from I/O threads.
///     caf::actor route(const info_hash& h);
///     /// The swarm actor for `h` if one exists (scrape of unknown torrents
///     /// must not create swarms).
///     caf::actor find(const info_hash& h) const;
///     std::size_t size() const;
///     /// Stops every swarm actor (shutdown, after the network drained).
///     void stop_all();
///   };
///
/// A swarm that ends (idle) removes its own entry, but only if the entry
/// still points at it. A sender that gets `sec::request_receiver_down`
/// routes again once.
class swarm_directory;

}  // namespace sk
