#include "actors/supervisor.hpp"

#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace sk {

std::string supervisor_config::validate() const {
  if (max_restarts == 0) {
    return "supervisor max restarts must be at least 1";
  }
  if (restart_window <= std::chrono::seconds{0}) {
    return "supervisor restart window must be positive";
  }
  if (event_log_size == 0) {
    return "supervisor event log size must be at least 1";
  }
  return remediation_cfg.validate();
}

swarm_core_ptr recover_core(const swarm_core_ptr& core, bool& fresh) {
  fresh = false;
  if (!core) {
    return nullptr;
  }
  if (core->check_invariants()) {
    return core;
  }
  fresh = true;
  std::uint64_t s = core->seed();
  return std::make_shared<swarm_core>(core->hash(), core->config(), splitmix64(s));
}

namespace {

void note(supervisor_actor_ptr self, const info_hash& hash, std::string kind, std::string detail) {
  auto& st = self->state;
  st.events.push_back(
      supervisor_event{self->clock().now(), hash, std::move(kind), std::move(detail)});
  while (st.events.size() > st.cfg.event_log_size) {
    st.events.pop_front();
  }
}

void stop_remediation(supervisor_actor_ptr self, supervisor_state::entry& e) {
  if (e.remediation) {
    self->state.by_remediation.erase(e.remediation.address());
    self->demonitor(e.remediation.address());
    self->send_exit(e.remediation, caf::exit_reason::user_shutdown);
    e.remediation = {};
  }
}

void watch(supervisor_actor_ptr self, const info_hash& hash, const caf::actor& swarm,
           swarm_core_ptr core) {
  auto& st = self->state;
  auto& e = st.swarms[hash];
  if (e.swarm == swarm) {
    return;
  }
  if (e.swarm) {
    // A new swarm for the hash (the old one ended): forget the old one.
    st.by_swarm.erase(e.swarm.address());
    self->demonitor(e.swarm.address());
    stop_remediation(self, e);
  }
  e.swarm = swarm;
  e.core = std::move(core);
  st.by_swarm[swarm.address()] = hash;
  // A swarm that is already dead yields a down message right away.
  self->monitor(swarm);
}

void on_swarm_down(supervisor_actor_ptr self, const caf::down_msg& dm, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || it->second.swarm.address() != dm.source) {
    return;
  }
  auto& e = it->second;
  if (dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown) {
    // Ended on purpose (idle, shutdown): nothing to restart.
    stop_remediation(self, e);
    st.swarms.erase(it);
    return;
  }
  const auto now = self->clock().now();
  const std::string why = self->system().render(dm.reason);
  auto& times = st.crashes[hash];
  while (!times.empty() && now - times.front() >= st.cfg.restart_window) {
    times.pop_front();
  }
  if (times.size() >= st.cfg.max_restarts) {
    // Give up on this state: whatever keeps crashing it stays down. The
    // dead entry goes, so the next announce spawns an empty swarm (peers
    // come back within one interval) instead of failing forever.
    const std::string detail = "crashed " + std::to_string(times.size() + 1) + " times within " +
                               std::to_string(st.cfg.restart_window.count()) + " s (last: " + why +
                               "); not restarted";
    spdlog::error("supervisor: swarm {} {}", hash.hex(), detail);
    note(self, hash, "give-up", detail);
    times.push_back(now);
    if (auto reg = st.registry.lock()) {
      reg->erase_if_owner(hash, dm.source);
    }
    stop_remediation(self, e);
    st.swarms.erase(it);
    return;
  }
  times.push_back(now);
  bool fresh = false;
  swarm_core_ptr core = recover_core(e.core, fresh);
  if (!core) {
    note(self, hash, "give-up", "crashed (" + why + ") without a state to restart from");
    st.swarms.erase(it);
    return;
  }
  // Read before the replacement runs (it may run on another thread at once).
  const std::size_t peers = core->table().size();
  if (fresh) {
    spdlog::error(
        "supervisor: swarm {} crashed ({}) and its state is inconsistent: restarting it empty",
        hash.hex(), why);
  } else {
    spdlog::warn(
        "supervisor: swarm {} crashed ({}): restarting it from its last state "
        "({} peers)",
        hash.hex(), why, peers);
  }
  auto replacement =
      spawn_swarm(self->system(), core, st.registry, caf::actor_cast<caf::actor>(self));
  if (st.has_registry) {
    auto reg = st.registry.lock();
    if (!reg || !reg->replace_if_owner(hash, dm.source, replacement)) {
      // The directory is gone or moved on (shutdown): nobody could reach
      // the replacement.
      self->send_exit(replacement, caf::exit_reason::user_shutdown);
      stop_remediation(self, e);
      st.swarms.erase(it);
      return;
    }
  }
  e.swarm = replacement;
  e.core = std::move(core);
  st.by_swarm[replacement.address()] = hash;
  self->monitor(replacement);
  if (e.remediation) {
    self->send(replacement, observer_atom::value, e.remediation);
    self->send(e.remediation, rebind_atom::value, replacement);
  }
  note(self, hash, fresh ? "restart-fresh" : "restart",
       "crashed (" + why + "); restart " + std::to_string(times.size()) + " of " +
           std::to_string(st.cfg.max_restarts) + " within " +
           std::to_string(st.cfg.restart_window.count()) + " s, " + std::to_string(peers) +
           " peers");
}

void on_remediation_down(supervisor_actor_ptr self, const caf::down_msg& dm,
                         const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it != st.swarms.end() && it->second.remediation.address() == dm.source) {
    it->second.remediation = {};
    self->send(it->second.swarm, observer_atom::value, caf::actor{});
  }
  const bool ok = dm.reason == caf::exit_reason::normal;
  spdlog::info("supervisor: remediation of swarm {} ended ({})", hash.hex(),
               ok ? "swarm healthy, defaults restored" : self->system().render(dm.reason));
  note(self, hash, "remediation-ended",
       ok ? "healthy; defaults restored" : self->system().render(dm.reason));
}

void on_health(supervisor_actor_ptr self, const info_hash& hash, const health_report& r) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end()) {
    return;
  }
  auto& e = it->second;
  const bool big_enough = r.seeders + r.leechers >= st.cfg.remediation_min_peers;
  if (big_enough) {
    // (Tiny swarms change state often and matter little: they would crowd
    // restarts and remediations out of the bounded event log.)
    note(self, hash, "health",
         std::string(to_string(r.state)) +
             (r.reasons != 0 ? " [" + reasons_to_string(r.reasons) + "]" : std::string()));
  }
  if (r.state == swarm_health::healthy || !st.cfg.remediation || e.remediation || !big_enough) {
    return;
  }
  // The swarm's config is immutable after construction: reading it here,
  // while the swarm actor runs, is safe.
  const swarm_config& swarm_cfg = e.core->config();
  remediation_config rc = st.cfg.remediation_cfg;
  if (rc.watch_time == std::chrono::seconds{0}) {
    rc.watch_time = swarm_cfg.announce_interval;
  }
  e.remediation =
      self->system().spawn(remediation_actor, hash, e.swarm, rc, swarm_cfg.default_knobs(), r,
                           caf::actor_cast<caf::actor>(self));
  st.by_remediation[e.remediation.address()] = hash;
  self->monitor(e.remediation);
  self->send(e.swarm, observer_atom::value, e.remediation);
  spdlog::info("supervisor: swarm {} is {} ({}): remediation started", hash.hex(),
               to_string(r.state), reasons_to_string(r.reasons));
  note(self, hash, "remediation-started",
       std::string(to_string(r.state)) + " [" + reasons_to_string(r.reasons) + "]");
}

}  // namespace

caf::behavior supervisor_actor(supervisor_actor_ptr self, supervisor_config cfg,
                               std::weak_ptr<swarm_registry> registry) {
  auto& st = self->state;
  // Never quit on a stray error message (CAF's default error handler does).
  self->set_error_handler([](caf::error&) {});
  st.cfg = std::move(cfg);
  // A weak_ptr that was never set is indistinguishable from an expired one
  // except through owner_before against an empty one.
  const std::weak_ptr<swarm_registry> empty;
  st.has_registry = registry.owner_before(empty) || empty.owner_before(registry);
  st.registry = std::move(registry);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    if (auto r = st.by_remediation.find(dm.source); r != st.by_remediation.end()) {
      const info_hash hash = r->second;
      st.by_remediation.erase(r);
      on_remediation_down(self, dm, hash);
      return;
    }
    if (auto s = st.by_swarm.find(dm.source); s != st.by_swarm.end()) {
      const info_hash hash = s->second;
      st.by_swarm.erase(s);
      on_swarm_down(self, dm, hash);
    }
  });
  return {
      [self](watch_atom, const info_hash& hash, const caf::actor& swarm, swarm_core_ptr& core) {
        watch(self, hash, swarm, std::move(core));
      },
      [self](health_atom, const info_hash& hash, const health_report& r) {
        on_health(self, hash, r);
      },
      [self](events_atom) {
        const auto& ev = self->state.events;
        return std::vector<supervisor_event>(ev.begin(), ev.end());
      },
      [self](remediate_atom, caf::get_atom) {
        std::vector<info_hash> out;
        for (const auto& kv : self->state.by_remediation) {
          out.push_back(kv.second);
        }
        return out;
      },
      [self](caf::get_atom, const info_hash& hash) {
        auto it = self->state.swarms.find(hash);
        return it != self->state.swarms.end() ? it->second.swarm : caf::actor{};
      },
  };
}

caf::actor spawn_supervisor(caf::actor_system& sys, const supervisor_config& cfg,
                            std::weak_ptr<swarm_registry> registry) {
  return sys.spawn(supervisor_actor, cfg, std::move(registry));
}

}  // namespace sk
