#include "actors/supervisor.hpp"

#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

namespace sk {

std::string supervisor_config::validate() const {
  if (max_restarts == 0) {
    return "supervisor max restarts must be at least 1";
  }
  if (operator_holdoff < std::chrono::seconds{0}) {
    return "supervisor operator hold-off must not be negative";
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
    ++self->state.counters.remediations_ended;
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
    ++st.counters.give_ups;
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
    ++st.counters.give_ups;
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
  ++(fresh ? st.counters.restarts_fresh : st.counters.restarts);
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
  bool stopped = false;
  if (it != st.swarms.end() && it->second.remediation.address() == dm.source) {
    stopped = it->second.stopping;
    it->second.remediation = {};
    it->second.stopping = false;
    self->send(it->second.swarm, observer_atom::value, caf::actor{});
  }
  ++st.counters.remediations_ended;
  const bool ok = dm.reason == caf::exit_reason::normal;
  std::string detail = !ok       ? self->system().render(dm.reason)
                       : stopped ? "stopped by an operator; defaults restored; no automatic "
                                   "remediation for " +
                                       std::to_string(st.cfg.operator_holdoff.count()) + " s"
                                 : "healthy; defaults restored";
  if (stopped) ++st.counters.remediations_stopped;
  spdlog::info("supervisor: remediation of swarm {} ended ({})", hash.hex(), detail);
  note(self, hash, "remediation-ended", std::move(detail));
}

/// Spawns the remediation of `e` on report `r` (`operator_reasons`: see
/// remediation_plan) and makes it the swarm's observer.
void spawn_remediation(supervisor_actor_ptr self, const info_hash& hash,
                       supervisor_state::entry& e, const health_report& r,
                       std::uint32_t operator_reasons) {
  auto& st = self->state;
  // The swarm's config is immutable after construction: reading it here,
  // while the swarm actor runs, is safe.
  const swarm_config& swarm_cfg = e.core->config();
  remediation_config rc = st.cfg.remediation_cfg;
  if (rc.watch_time == std::chrono::seconds{0}) {
    rc.watch_time = swarm_cfg.announce_interval;
  }
  e.remediation =
      self->system().spawn(remediation_actor, hash, e.swarm, rc, swarm_cfg.default_knobs(), r,
                           caf::actor_cast<caf::actor>(self), operator_reasons);
  e.stopping = false;
  st.by_remediation[e.remediation.address()] = hash;
  self->monitor(e.remediation);
  self->send(e.swarm, observer_atom::value, e.remediation);
  ++st.counters.remediations_started;
}

/// Spawns an operator's remediation on report `r`; what to answer.
std::string start_for_operator(supervisor_actor_ptr self, const info_hash& hash, health_report r) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || !it->second.core) return "unknown";
  if (it->second.remediation) return "running";
  const std::uint32_t reasons = operator_reasons_for(r.reasons);
  st.holdoff.erase(hash);
  spawn_remediation(self, hash, it->second, r, reasons);
  ++st.counters.remediations_operator;
  spdlog::info("supervisor: swarm {}: remediation started by an operator ({})", hash.hex(),
               reasons_to_string(reasons));
  note(self, hash, "remediation-started",
       "operator; " + std::string(to_string(r.state)) + " [" + reasons_to_string(reasons) + "]");
  return "started";
}

/// An operator's start (see the header): asks the swarm for its last report
/// first, then spawns.
caf::result<std::string> operator_start(supervisor_actor_ptr self, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || !it->second.core) return std::string("unknown");
  if (it->second.remediation) return std::string("running");
  auto rp = self->make_response_promise<std::string>();
  self->request(it->second.swarm, std::chrono::seconds(2), health_atom::value,
                caf::get_atom::value)
      .then(
          [self, hash, rp](health_report& r) mutable {
            rp.deliver(start_for_operator(self, hash, r));
          },
          [self, hash, rp](caf::error&) mutable {
            // Not evaluated yet (or restarting): start from "healthy, no
            // reasons now"; the operator reasons pick the strategies.
            health_report r;
            r.state = swarm_health::healthy;
            r.at = self->clock().now();
            rp.deliver(start_for_operator(self, hash, r));
          });
  return rp;
}

/// An operator's stop (see the header).
caf::result<std::string> operator_stop(supervisor_actor_ptr self, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end()) return std::string("unknown");
  auto& e = it->second;
  if (!e.remediation || e.stopping) return std::string("none");
  e.stopping = true;
  st.holdoff[hash] = self->clock().now() + st.cfg.operator_holdoff;
  note(self, hash, "remediation-stop", "stopped by an operator");
  spdlog::info("supervisor: swarm {}: remediation stopped by an operator", hash.hex());
  auto rp = self->make_response_promise<std::string>();
  self->request(e.remediation, std::chrono::seconds(10), stop_atom::value)
      .then([rp](bool) mutable { rp.deliver(std::string("stopped")); },
            [rp](caf::error&) mutable { rp.deliver(std::string("stopped")); });
  return rp;
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
  if (auto h = st.holdoff.find(hash); h != st.holdoff.end()) {
    if (self->clock().now() < h->second) {
      return;  // an operator stopped the last one: not again so soon
    }
    st.holdoff.erase(h);
  }
  spawn_remediation(self, hash, e, r, 0);
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
      [self](remediate_atom, start_atom, const info_hash& hash) {
        return operator_start(self, hash);
      },
      [self](remediate_atom, stop_atom, const info_hash& hash) {
        return operator_stop(self, hash);
      },
      [self](counters_atom) { return self->state.counters; },
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
