#include "runtime/supervisor.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "runtime/swarm_actor_log.hpp"

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
  auto fresh_core = make_swarm_core(core->hash(), core->settings(), splitmix64(s));
  // Empty: a history of its own from here.
  fresh_core->set_lineage(new_lineage());
  return fresh_core;
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

/// What a remediation of `e` restores at its end: the config's defaults,
/// with the operator's policy when one is pinned.
swarm_knobs baseline_of(const supervisor_state::entry& e) {
  // The swarm's config is immutable after construction: reading it while
  // the swarm actor runs is safe.
  swarm_knobs k = e.core->config().default_knobs();
  if (e.pinned) k.policy = *e.pinned;
  return k;
}

void stop_remediation(supervisor_actor_ptr self, supervisor_state::entry& e) {
  if (e.remediation) {
    ++self->state.counters.remediations_ended;
    self->state.by_remediation.erase(e.remediation.address());
    self->demonitor(e.remediation.address());
    self->send_exit(e.remediation, caf::exit_reason::user_shutdown);
    e.remediation = remediation_actor{};
  }
}

void watch(supervisor_actor_ptr self, const info_hash& hash, const local_swarm_actor& swarm,
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
    // A new swarm starts from the config: an operator's pin was for the old
    // one. A swarm of the same history (woken from its sleep before the old
    // actor's end was seen) keeps it.
    const bool same_history = e.core && core && e.core->lineage() != 0 &&
                              e.core->lineage() == core->lineage();
    if (!same_history) e.pinned.reset();
    e.operator_restart = false;
  }
  if (!e.swarm && e.asleep_lineage != 0) {
    // The pinned swarm that went to sleep, woken, or another history.
    if (!core || core->lineage() != e.asleep_lineage) e.pinned.reset();
    e.asleep_lineage = 0;
  }
  e.swarm = swarm;
  e.core = std::move(core);
  st.by_swarm[swarm.address()] = hash;
  // A swarm that is already dead yields a down message right away.
  self->monitor(swarm);
}

/// The directory dropped the sleeping swarm of `hash` (its peers timed out,
/// or an operator ended it): what was kept for it while it slept (a pinned
/// policy) goes, as it would have with its actor. An entry whose swarm runs
/// again is another history's and stays.
void forget_sleeper(supervisor_actor_ptr self, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || it->second.swarm) return;
  st.swarms.erase(it);
}

supervisor_holds current_holds(supervisor_actor_ptr self) {
  auto& st = self->state;
  supervisor_holds h;
  for (auto c = st.pin_candidates.begin(); c != st.pin_candidates.end();) {
    auto it = st.swarms.find(*c);
    if (it == st.swarms.end() || !it->second.pinned) {
      c = st.pin_candidates.erase(c);
      continue;
    }
    h.pinned.emplace_back(*c, std::string(to_string(*it->second.pinned)));
    ++c;
  }
  const auto now = self->clock().now();
  for (const auto& [hash, until] : st.holdoff)
    if (until > now)
      h.holdoff_left_ms.emplace_back(
          hash, std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count());
  return h;
}

/// Holds read back from the state file, after their swarms were installed
/// (so each pin lands on the entry its swarm's watch created). A pin for a
/// hash without a swarm waits in an entry of its own for that swarm.
void restore_holds(supervisor_actor_ptr self, const supervisor_holds& h) {
  auto& st = self->state;
  for (const auto& [hash, name] : h.pinned)
    if (auto p = parse_policy(name)) {
      st.swarms[hash].pinned = *p;
      st.pin_candidates.insert(hash);
    }
  const auto now = self->clock().now();
  for (const auto& [hash, left] : h.holdoff_left_ms)
    if (left > 0) st.holdoff[hash] = now + std::chrono::milliseconds{left};
}

void on_swarm_down(supervisor_actor_ptr self, const caf::down_msg& dm, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || it->second.swarm.address() != dm.source) {
    return;
  }
  auto& e = it->second;
  if (dm.reason == caf::exit_reason::normal || dm.reason == caf::exit_reason::user_shutdown) {
    // Ended on purpose (idle, asleep as data, shutdown): nothing to
    // restart. A pinned policy stays for a swarm that went to sleep (its
    // state lives on in the directory and wakes with the same history); it
    // goes with the next swarm of another history (`watch`).
    stop_remediation(self, e);
    // (The actor is gone: reading its core here races with nothing.)
    if (dm.reason == caf::exit_reason::normal && e.pinned && e.core &&
        e.core->table().size() != 0) {
      e.asleep_lineage = e.core->lineage();
      e.swarm = local_swarm_actor{};
      e.core.reset();
      return;
    }
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
  const bool by_operator = std::exchange(e.operator_restart, false);
  if (by_operator && !fresh) {
    // Logged once the new actor is in place (old -> new actor below).
  } else if (fresh) {
    spdlog::error(
        "supervisor: swarm {} crashed ({}) and its state is inconsistent: restarting it empty",
        hash.hex(), why);
  } else {
    spdlog::warn(
        "supervisor: swarm {} crashed ({}): restarting it from its last state "
        "({} peers)",
        hash.hex(), why, peers);
  }
  auto replacement = spawn_swarm(self->system(), core, st.registry, health_observer{self});
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
    self->send(replacement, observer_atom::value, health_observer{e.remediation});
    self->send(e.remediation, rebind_atom::value, replacement);
  }
  ++(fresh ? st.counters.restarts_fresh : st.counters.restarts);
  const std::string cause =
      by_operator ? "restarted by an operator (actor " + std::to_string(dm.source.id()) +
                        " -> " + std::to_string(replacement.id()) + ")"
                  : "crashed (" + why + ")";
  if (by_operator && !fresh) {
    spdlog::info("supervisor: swarm {} {} from its last state ({} peers)", hash.hex(), cause,
                 peers);
  }
  note(self, hash, fresh ? "restart-fresh" : "restart",
       cause + "; restart " + std::to_string(times.size()) + " of " +
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
    it->second.remediation = remediation_actor{};
    it->second.stopping = false;
    self->send(it->second.swarm, observer_atom::value, health_observer{});
    // However it ended, no plan is left to resume.
    self->send(it->second.swarm, progress_atom::value, std::vector<remediation_progress>{});
  }
  ++st.counters.remediations_ended;
  const bool ok = dm.reason == caf::exit_reason::normal;
  const bool pinned = it != st.swarms.end() && it->second.pinned;
  const std::string restored =
      pinned ? "defaults restored with the pinned policy " +
                   std::string(to_string(*it->second.pinned))
             : std::string("defaults restored");
  std::string detail = !ok       ? self->system().render(dm.reason)
                       : stopped ? "stopped by an operator; " + restored +
                                       "; no automatic remediation for " +
                                       std::to_string(st.cfg.operator_holdoff.count()) + " s"
                                 : "healthy; " + restored;
  if (stopped) ++st.counters.remediations_stopped;
  if (stopped) {
    // An operator's action: always logged.
    spdlog::info("supervisor: remediation of swarm {} ended ({})", hash.hex(), detail);
  } else {
    swarm_log::instance().info(self->clock().now(), "supervisor: remediation of swarm {} ended ({})",
                               hash.hex(), detail);
  }
  note(self, hash, "remediation-ended", std::move(detail));
}

/// Spawns the remediation of `e` on report `r` (`operator_reasons`: see
/// remediation_plan) and makes it the swarm's observer.
void spawn_remediation(supervisor_actor_ptr self, const info_hash& hash,
                       supervisor_state::entry& e, const health_report& r,
                       std::uint32_t operator_reasons,
                       std::optional<remediation_progress> resume = std::nullopt) {
  auto& st = self->state;
  // Immutable after construction (see baseline_of).
  const swarm_config& swarm_cfg = e.core->config();
  remediation_config rc = st.cfg.remediation_cfg;
  if (rc.watch_time == std::chrono::seconds{0}) {
    rc.watch_time = swarm_cfg.announce_interval;
  }
  e.remediation =
      self->system().spawn(remediation_behavior, hash, e.swarm, rc, baseline_of(e), r,
                           supervisor_actor{self}, operator_reasons, e.pinned.has_value(),
                           std::move(resume));
  e.stopping = false;
  st.by_remediation[e.remediation.address()] = hash;
  self->monitor(e.remediation);
  self->send(e.swarm, observer_atom::value, health_observer{e.remediation});
  ++st.counters.remediations_started;
}

/// A swarm installed with a remediation under way (state file, migration,
/// replica): the plan goes on where it stood, unless remediation is off
/// (then the swarm gets the plan's baseline knobs back) or one runs already.
void resume_remediation(supervisor_actor_ptr self, const info_hash& hash,
                        const local_swarm_actor& swarm, remediation_progress& p) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || it->second.swarm != swarm || !it->second.core) return;
  auto& e = it->second;
  if (e.remediation) return;
  if (!st.cfg.remediation) {
    self->request(swarm, std::chrono::seconds(5), knobs_atom::value, caf::put_atom::value,
                  p.baseline)
        .then([](const swarm_knobs&) {}, [](caf::error&) {});
    self->send(swarm, progress_atom::value, std::vector<remediation_progress>{});
    note(self, hash, "remediation-ended", "remediation is off here; defaults restored");
    return;
  }
  // The plan keeps its own baseline and pin (what it restores at its end):
  // the holds of a state file are put back after its swarms.
  health_report last;
  last.state = swarm_health::unevaluated;
  last.at = self->clock().now();
  std::string strategies;
  for (auto v : p.active) {
    if (v >= strategy_count) continue;
    if (!strategies.empty()) strategies += ",";
    strategies += to_string(static_cast<strategy>(v));
  }
  const std::string detail =
      "resumed (" + (strategies.empty() ? std::string("no strategy kept yet") : strategies) +
      (p.trial >= 0 && p.trial < strategy_count
           ? "; on trial: " + std::string(to_string(static_cast<strategy>(p.trial)))
           : std::string()) +
      ")";
  spawn_remediation(self, hash, e, last, p.operator_reasons, std::move(p));
  swarm_log::instance().info(self->clock().now(), "supervisor: swarm {}: remediation {}",
                             hash.hex(), detail);
  note(self, hash, "remediation-resumed", detail);
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
  spdlog::info("supervisor: swarm {}: remediation none -> running, started by an operator ({}; {})",
               hash.hex(), to_string(r.state), reasons_to_string(reasons));
  note(self, hash, "remediation-started",
       "operator; " + std::string(to_string(r.state)) + " [" + reasons_to_string(reasons) + "]");
  return "started";
}

/// The report an operator's remediation starts from: the swarm's last one,
/// or, before its first tick, "unevaluated" with the counts it has now (never
/// an invented "healthy, 0 peers": the history shows what the swarm was).
health_report start_report(const swarm_status& s, health_time now) {
  if (s.evaluated) return s.health;
  health_report r;
  r.state = swarm_health::unevaluated;
  r.seeders = static_cast<std::uint64_t>(std::max<std::int64_t>(s.stats.complete, 0));
  r.partial_seeds = static_cast<std::uint64_t>(std::max<std::int64_t>(s.stats.partial, 0));
  r.leechers = static_cast<std::uint64_t>(
      std::max<std::int64_t>(s.stats.incomplete - s.stats.partial, 0));
  r.at = now;
  return r;
}

/// An operator's start (see the header): asks the swarm for its status
/// first, then spawns.
caf::result<std::string> operator_start(supervisor_actor_ptr self, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || !it->second.core) return std::string("unknown");
  if (it->second.remediation) return std::string("running");
  auto rp = self->make_response_promise<std::string>();
  self->request(it->second.swarm, std::chrono::seconds(2), status_atom::value)
      .then(
          [self, hash, rp](swarm_status& s) mutable {
            rp.deliver(start_for_operator(self, hash, start_report(s, self->clock().now())));
          },
          [self, hash, rp](caf::error&) mutable {
            // Restarting: nothing known now; the first tick's report shows it.
            health_report r;
            r.state = swarm_health::unevaluated;
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
  spdlog::info("supervisor: swarm {}: remediation running -> stopped by an operator", hash.hex());
  auto rp = self->make_response_promise<std::string>();
  self->request(e.remediation, std::chrono::seconds(10), stop_atom::value)
      .then([rp](bool) mutable { rp.deliver(std::string("stopped")); },
            [rp](caf::error&) mutable { rp.deliver(std::string("stopped")); });
  return rp;
}

/// An operator's policy change (see the header).
caf::result<policy_change> operator_policy(supervisor_actor_ptr self, const info_hash& hash,
                                           const std::string& name) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || !it->second.core) {
    return caf::make_error(caf::sec::cannot_forward_to_invalid_actor,
                           "no swarm for " + hash.hex());
  }
  auto& e = it->second;
  std::optional<policy_kind> pin;
  if (name != "default") {
    pin = parse_policy(name);
    if (!pin) return caf::make_error(caf::sec::invalid_argument, "unknown policy '" + name + "'");
  }
  const bool was_pinned = e.pinned.has_value();
  e.pinned = pin;
  if (pin) st.pin_candidates.insert(hash);
  const swarm_knobs baseline = baseline_of(e);
  const std::string target(to_string(baseline.policy));
  auto rp = self->make_response_promise<policy_change>();
  auto done = [self, hash, rp, target, was_pinned, pinned = pin.has_value()](
                  std::string& previous) mutable {
    const char* how = pinned ? "pinned" : "config default, not pinned";
    spdlog::info("supervisor: swarm {}: policy {}{} -> {} ({}), set by an operator", hash.hex(),
                 previous, was_pinned ? " (pinned)" : "", target, how);
    note(self, hash, "operator-policy",
         previous + (was_pinned ? " (pinned)" : "") + " -> " + target + " (" + how + ")");
    rp.deliver(policy_change{previous, target, was_pinned, pinned});
  };
  auto failed = [rp](caf::error& err) mutable { rp.deliver(std::move(err)); };
  if (e.remediation && !e.stopping) {
    // The remediation owns the knobs while it runs: it takes the new
    // baseline (restored at its end) and applies a pinned policy now.
    self->request(e.remediation, std::chrono::seconds(10), policy_atom::value,
                  caf::put_atom::value, baseline, pin.has_value())
        .then(std::move(done), std::move(failed));
  } else {
    self->request(e.swarm, std::chrono::seconds(5), policy_atom::value, caf::put_atom::value,
                  target)
        .then(std::move(done), std::move(failed));
  }
  return rp;
}

/// An operator's restart (see the header).
std::string operator_restart(supervisor_actor_ptr self, const info_hash& hash) {
  auto& st = self->state;
  auto it = st.swarms.find(hash);
  if (it == st.swarms.end() || !it->second.swarm) return "unknown";
  // `kill` is an abnormal exit: on_swarm_down restarts the swarm from its
  // core and logs the old and the new actor. It counts against
  // max_restarts like a crash.
  it->second.operator_restart = true;
  self->send_exit(it->second.swarm, caf::exit_reason::kill);
  return "restarting";
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
  if (!is_unhealthy(r.state) || !st.cfg.remediation || e.remediation || !big_enough) {
    return;
  }
  if (auto h = st.holdoff.find(hash); h != st.holdoff.end()) {
    if (self->clock().now() < h->second) {
      return;  // an operator stopped the last one: not again so soon
    }
    st.holdoff.erase(h);
  }
  spawn_remediation(self, hash, e, r, 0);
  swarm_log::instance().info(self->clock().now(),
                             "supervisor: swarm {} is {} ({}): remediation started", hash.hex(),
                             to_string(r.state), reasons_to_string(r.reasons));
  note(self, hash, "remediation-started",
       std::string(to_string(r.state)) + " [" + reasons_to_string(r.reasons) + "]");
}

}  // namespace

supervisor_actor::behavior_type supervisor_behavior(supervisor_actor_ptr self,
                                                    supervisor_config cfg,
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
  // Every handler of supervisor_actor (runtime/supervisor_interface.hpp),
  // checked by the compiler.
  return {
      // -- operator calls about one swarm ------------------------------------------
      [self](restart_atom, const info_hash& hash) { return operator_restart(self, hash); },
      [self](policy_atom, caf::put_atom, const info_hash& hash, const std::string& name) {
        return operator_policy(self, hash, name);
      },
      [self](policy_atom, caf::get_atom, const info_hash& hash) {
        auto it = self->state.swarms.find(hash);
        return it != self->state.swarms.end() && it->second.pinned.has_value();
      },
      [self](remediate_atom, start_atom, const info_hash& hash) {
        return operator_start(self, hash);
      },
      [self](remediate_atom, stop_atom, const info_hash& hash) {
        return operator_stop(self, hash);
      },
      // -- node-wide operator calls -------------------------------------------------
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
      [self](counters_atom) { return self->state.counters; },
      [self](holds_atom, caf::get_atom) { return current_holds(self); },
      [self](holds_atom, caf::put_atom, supervisor_holds& h) { restore_holds(self, h); },
      [self](events_atom, caf::put_atom, supervisor_event& e) {
        // Time is the supervisor's, like every other event's.
        note(self, e.hash, std::move(e.kind), std::move(e.detail));
      },
      [self](caf::get_atom, const info_hash& hash) {
        auto it = self->state.swarms.find(hash);
        return it != self->state.swarms.end() ? it->second.swarm : local_swarm_actor{};
      },
      // -- from the directory and the swarms ------------------------------------------
      [self](watch_atom, const info_hash& hash, const local_swarm_actor& swarm,
             swarm_core_ptr& core) { watch(self, hash, swarm, std::move(core)); },
      [self](remediate_atom, caf::put_atom, const info_hash& hash, const local_swarm_actor& swarm,
             remediation_progress& p) { resume_remediation(self, hash, swarm, p); },
      [self](health_atom, const info_hash& hash, const health_report& r) {
        on_health(self, hash, r);
      },
      [self](forget_atom, const info_hash& hash) { forget_sleeper(self, hash); },
  };
}

supervisor_actor spawn_supervisor(caf::actor_system& sys, const supervisor_config& cfg,
                                  std::weak_ptr<swarm_registry> registry) {
  return sys.spawn(supervisor_behavior, cfg, std::move(registry));
}

}  // namespace sk
