// The node actor's replica room: every replication-period a snapshot of
// every local swarm goes to the next node in its rank order (the node that
// owns it if this one dies); replicas other nodes sent wait here, and when
// their origin is gone they are installed here (the swarms this node owns
// now) or sent to their new owners.
#include <chrono>
#include <string>

#include <spdlog/spdlog.h>

#include "cluster/node_state.hpp"
#include "runtime/directory.hpp"

namespace sk::cluster {

namespace {

/// Adds the time a replica waited here (until `now`) to its ages (the
/// peers' expiry clocks keep running while it waits).
swarm_snapshot aged(const replica& r, health_time now) {
  swarm_snapshot s = r.snap;
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - r.received).count();
  for (auto& p : s.peers) {
    p.first_seen_age_ms += waited;
    p.last_announce_age_ms += waited;
    p.last_progress_age_ms += waited;
    if (p.completed_age_ms >= 0) p.completed_age_ms += waited;
  }
  return s;
}

void replicate(node_ptr self) {
  auto& st = self->state;
  const auto& v = st.view;
  if (!v || st.live.empty()) return;
  for (const auto& [hash, swarm] : st.dir->local_swarms()) {
    // The view's node handles are node actors.
    auto target = caf::actor_cast<node_actor>(v->node(v->successor(hash)));
    if (!target) continue;
    self->request(swarm, st.cfg.replication_period, snapshot_atom::value)
        .then(
            [self, target](swarm_snapshot& s) {
              self->send(target, replica_atom::value, self->state.me.name, std::move(s));
            },
            [](const caf::error&) {});
  }
}

}  // namespace

void take_over(node_ptr self, const cluster_view& v, health_time now) {
  auto& st = self->state;
  // Replicas older than this belong to swarms that ended or moved.
  const auto stale = now - 5 * st.cfg.replication_period;
  for (auto it = st.replicas.begin(); it != st.replicas.end();) {
    if (st.live.count(it->first) != 0 || st.suspects.count(it->first) != 0) {
      ++it;
      continue;
    }
    std::size_t here = 0;
    std::size_t sent = 0;
    for (const auto& [hash, r] : it->second) {
      if (r.received < stale) continue;
      const std::string& owner = v.owner(hash);
      if (owner == st.me.name) {
        st.dir->install(aged(r, now));
        record_migration(self, it->first, r.snap, "crash-replica");
        ++here;
      } else if (auto node = caf::actor_cast<node_actor>(v.node(owner))) {
        // A request (its answer is only awaited): the new owner records
        // this node as where the swarm came from.
        self->request(node, st.cfg.forward_timeout, caf::migrate_atom::value, caf::put_atom::value,
                      aged(r, now))
            .then([](caf::ok_atom) {}, [](const caf::error&) {});
        ++sent;
      }
    }
    spdlog::warn(
        "cluster: member {} is gone; took over {} of its swarms from replicas ({} sent "
        "to their new owners)",
        it->first, here, sent);
    st.replica_received.erase(it->first);
    it = st.replicas.erase(it);
  }
}

void start_replicas(node_ptr self) {
  self->delayed_send(self, self->state.cfg.replication_period, replicate_atom::value);
}

node_replica_part::behavior_type replica_behavior(node_ptr self) {
  return {
      [self](replica_atom, const std::string& origin, swarm_snapshot& s) {
        auto& st = self->state;
        if (st.live.count(origin) == 0) return;  // from a member already gone
        const info_hash h = s.hash;
        const auto now = self->clock().now();
        st.replicas[origin][h] = replica{std::move(s), now};
        st.replica_received[origin] = now;
      },
      [self](replicate_atom) {
        replicate(self);
        self->delayed_send(self, self->state.cfg.replication_period, replicate_atom::value);
      },
  };
}

}  // namespace sk::cluster
