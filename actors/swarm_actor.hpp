#pragma once
/// The swarm actor: one per info_hash, owning that swarm's peer_table.
///
/// Interface (dynamically typed `caf::actor`, as the directory hands out):
///
///   (announce_atom, swarm_announce) -> announce_result
///       Applies the announce and answers with counts, intervals and peers
///       (compact requests: `peers4`/`peers6`; others: `peers`). `stopped`
///       gets counts but no peers. A request for another info_hash is
///       answered with `sec::invalid_argument`.
///   (scrape_atom) -> swarm_stats
///   (sweep_atom)                      internal timer, sent to itself
///
/// Lifecycle:
///
///   spawn ──▶ serving ──(sweep cycle finds it empty for idle_lifetime)──▶
///             erase own directory entry (if it still points here) ──▶ quit
///
/// The sweep runs every `sweep_period`; a cycle over a big table is split
/// into messages of at most `sweep_batch` peers, each sent to itself so that
/// queued announces are served between them.

#include <cstdint>
#include <memory>
#include <optional>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/peer_table.hpp"
#include "actors/swarm_config.hpp"

namespace sk {

/// What a swarm needs from whoever tracks it (the directory): a way to leave.
/// Swarms hold it by `weak_ptr`, so a directory that is gone is simply
/// skipped, and no reference cycle keeps either alive.
class swarm_registry {
 public:
  virtual ~swarm_registry() = default;
  /// Removes the entry for `hash` only if it still points at `swarm`;
  /// returns whether it did. Called from the swarm's own thread.
  virtual bool erase_if_owner(const info_hash& hash, const caf::actor_addr& swarm) = 0;
};

/// State of a swarm actor (the actor itself only passes messages).
struct swarm_state {
  static inline const char* name = "sk.swarm";
  info_hash hash;
  swarm_config cfg;
  peer_table table;
  std::weak_ptr<swarm_registry> registry;
  /// Since when the table is empty; unset while it has peers.
  std::optional<peer_table::time_point> empty_since;
};

using swarm_actor_ptr = caf::stateful_actor<swarm_state>*;

/// The swarm behavior. `seed` seeds peer selection; `registry` may be empty
/// (a swarm nobody tracks, e.g. in tests). `cfg` must be valid
/// (`cfg.validate()` empty).
caf::behavior swarm_actor(swarm_actor_ptr self, info_hash hash, swarm_config cfg,
                          std::uint64_t seed, std::weak_ptr<swarm_registry> registry);

/// Spawns a swarm actor for `hash`. Thread-safe and non-blocking (safe on an
/// I/O thread); normally called by `swarm_directory::route`, not directly.
caf::actor spawn_swarm(caf::actor_system& sys, const info_hash& hash, const swarm_config& cfg,
                       std::uint64_t seed, std::weak_ptr<swarm_registry> registry = {});

/// Builds the reply to one announce on `table` at `now` (the actor's announce
/// handler without CAF; the simulator and tests use it directly). Returns
/// false, touching nothing, when `a` is for another swarm than `hash`.
bool handle_announce(peer_table& table, const swarm_config& cfg, const info_hash& hash,
                     const swarm_announce& a, peer_table::time_point now, announce_result& out);

}  // namespace sk
