#include "actors/swarm_actor.hpp"

#include <utility>

namespace sk {

namespace {

/// Keeps `empty_since` in step with the table after every change.
void note_occupancy(swarm_state& st, peer_table::time_point now) {
  if (!st.table.empty()) {
    st.empty_since.reset();
  } else if (!st.empty_since) {
    st.empty_since = now;
  }
}

}  // namespace

bool handle_announce(peer_table& table, const swarm_config& cfg, const info_hash& hash,
                     const swarm_announce& a, peer_table::time_point now, announce_result& out) {
  const announce_request& req = a.request;
  if (req.hash != hash) {
    return false;
  }
  table.announce(req.id, a.peer, req.left, req.event, now);
  out.interval = cfg.announce_interval.count();
  out.min_interval = cfg.min_interval.count();
  if (req.event != announce_event::stopped) {
    // A peer that leaves needs no peers; everyone else gets a sample. (A
    // rejected new peer, table full, still gets one: it is not excluded
    // because it is not stored.)
    const std::size_t n = cfg.resolve_numwant(req.numwant);
    const peer_key me{req.id, a.peer.ip};
    if (req.compact) {
      table.select_compact(me, n, out.peers4, out.peers6);
    } else {
      table.select_entries(me, n, out.peers);
    }
  }
  out.stats = table.stats();
  return true;
}

caf::behavior swarm_actor(swarm_actor_ptr self, info_hash hash, swarm_config cfg,
                          std::uint64_t seed, std::weak_ptr<swarm_registry> registry) {
  // Time comes from the actor system's clock: steady_clock in production,
  // the test scheduler's simulated clock in tests. (Not `self->now()`:
  // Debian's libcaf_core 0.17.6 declares it but does not export it.)
  auto& st = self->state;
  st.hash = hash;
  st.table = peer_table(seed, cfg.max_peers);
  st.cfg = cfg;
  st.registry = std::move(registry);
  // A new swarm is empty until its first announce: if that never comes (a
  // route() whose request failed), the swarm still ends after idle_lifetime.
  note_occupancy(st, self->clock().now());
  self->delayed_send(self, st.cfg.sweep_period, sweep_atom::value);
  return {
      [self](announce_atom, const swarm_announce& a) -> caf::result<announce_result> {
        auto& st = self->state;
        const auto now = self->clock().now();
        announce_result res;
        if (!handle_announce(st.table, st.cfg, st.hash, a, now, res)) {
          return caf::make_error(caf::sec::invalid_argument);
        }
        note_occupancy(st, now);
        return res;
      },
      [self](scrape_atom) { return self->state.table.stats(); },
      [self](sweep_atom) {
        auto& st = self->state;
        const auto now = self->clock().now();
        const auto r = st.table.sweep(now, st.cfg.peer_timeout, st.cfg.sweep_batch);
        note_occupancy(st, now);
        if (!r.cycle_done) {
          // More to examine: continue behind whatever is queued now, so a
          // big table never holds up announces for a whole cycle.
          self->send(self, sweep_atom::value);
          return;
        }
        if (st.empty_since && now - *st.empty_since >= st.cfg.idle_lifetime) {
          // Leave the directory first, so nobody is routed here any more;
          // requests already on their way bounce with request_receiver_down
          // and their senders route again (to a fresh swarm).
          if (auto reg = st.registry.lock()) {
            reg->erase_if_owner(st.hash, self->address());
          }
          self->quit();
          return;
        }
        self->delayed_send(self, st.cfg.sweep_period, sweep_atom::value);
      },
  };
}

caf::actor spawn_swarm(caf::actor_system& sys, const info_hash& hash, const swarm_config& cfg,
                       std::uint64_t seed, std::weak_ptr<swarm_registry> registry) {
  return sys.spawn(swarm_actor, hash, cfg, seed, std::move(registry));
}

}  // namespace sk
