#include "runtime/swarm_actor.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <limits>
#include <stdexcept>
#include <utility>

#include <spdlog/spdlog.h>

#include "runtime/swarm_actor_log.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/random.hpp"

namespace sk {

namespace {

/// Sends the probes the core decided on during the last announce.
void send_probes(swarm_actor_ptr self) {
  auto& st = self->state;
  if (!st.prober || !st.core->has_probe_requests()) {
    return;
  }
  for (auto& r : st.core->take_probe_requests()) {
    self->send(st.prober, probe_atom::value, std::move(r));
  }
}

/// Adds what the core counted since the last call to the node-wide totals
/// (two compares per announce; an atomic add only when something counted).
void add_totals(swarm_state& st) {
  if (!st.totals) return;
  const auto& n = st.core->counters();
  auto add = [](std::atomic<std::uint64_t>& total, std::uint64_t now, std::uint64_t& added) {
    if (now == added) return;
    total.fetch_add(now - added, std::memory_order_relaxed);
    added = now;
  };
  add(st.totals->repeats, n.repeats, st.added_repeats);
  add(st.totals->early, n.early, st.added_early);
  add(st.totals->banned, n.banned, st.added_banned);
  add(st.totals->refused, n.refused, st.added_refused);
  add(st.totals->completed, st.core->table().downloaded(), st.added_completed);
  add(st.totals->address_refused, n.address_refused, st.added_address_refused);
}

/// Whether `flag` (a bound of the node) was reached for the first time
/// since start: its one log line. Without node totals (a swarm nobody
/// tracks, tests) the process's own flag stands in.
bool first_reached(swarm_state& st, std::atomic<bool> swarm_totals::*flag) {
  static swarm_totals untracked;
  swarm_totals& t = st.totals ? *st.totals : untracked;
  return !(t.*flag).exchange(true, std::memory_order_relaxed);
}

/// Counts of the core from now on only (start, merged snapshots).
void skip_totals(swarm_state& st) {
  const auto& n = st.core->counters();
  st.added_repeats = n.repeats;
  st.added_early = n.early;
  st.added_banned = n.banned;
  st.added_refused = n.refused;
  st.added_completed = st.core->table().downloaded();
  st.added_address_refused = n.address_refused;
}

/// Brings the node census up to the table's size, and logs the moments the
/// node's peer cap and this swarm's own are reached and cleared (once each,
/// not per announce). `refused` is the cap the last announce met, if any.
void update_census(swarm_state& st, caf::actor_clock::time_point now,
                   peer_cap_refusal refused = peer_cap_refusal::none) {
  census_share& cs = st.census;
  node_census* census = cs.census;
  if (census == nullptr) return;
  const swarm_core& core = *st.core;
  const auto size = static_cast<std::uint32_t>(core.table().size());
  const bool shrank = size < cs.peers;
  if (size != cs.peers) {
    census->add_peers(static_cast<std::int64_t>(size) - static_cast<std::int64_t>(cs.peers));
    cs.peers = size;
  }
  if (refused == peer_cap_refusal::swarm_full) census->count_refusal(node_cap::swarm_peers);
  if (refused == peer_cap_refusal::node_full) census->count_refusal(node_cap::peers);
  if (refused == peer_cap_refusal::swarm_full && !cs.at_cap) {
    cs.at_cap = true;
    census->swarm_at_peer_cap(1);
    spdlog::warn("swarm {}: {} peers, its cap (tracker.max-peers-per-swarm); new peers refused",
                 core.hash().hex(), size);
  } else if (cs.at_cap && size < core.config().max_peers) {
    cs.at_cap = false;
    census->swarm_at_peer_cap(-1);
    swarm_log::instance().info(now, "swarm {}: {} peers, below its cap again; new peers accepted",
                               core.hash().hex(), size);
  }
  if (refused == peer_cap_refusal::node_full) {
    if (census->reach(node_cap::peers))
      spdlog::warn("node peer cap reached: {} peers (caps.max-peers = {}); new peers refused",
                   census->peers(), census->caps().max_peers);
  } else if (shrank && census->reached(node_cap::peers) != 0 && !census->peers_full() &&
             census->clear(node_cap::peers)) {
    spdlog::info("node peer cap cleared: {} peers (caps.max-peers = {}); new peers accepted",
                 census->peers(), census->caps().max_peers);
  }
}

/// Brings this actor's share in the node's gauges up to date (a compare
/// when nothing changed, which is most announces).
void publish_share(swarm_state& st) {
  if (!st.totals) return;
  const swarm_share now = swarm_share::of(*st.core);
  if (now == st.published) return;
  move_share(*st.totals, st.published, now);
  st.published = now;
}

/// The operator's view of `c`, with at most `max_peers` peers listed.
swarm_status make_status(const swarm_core& c, std::uint32_t max_peers, caf::actor_id id) {
  swarm_status s;
  s.actor_id = id;
  s.hash = c.hash();
  s.stats = c.scrape();
  s.knobs = c.knobs();
  if (const health_report* r = c.last_report()) {
    s.evaluated = true;
    s.health = *r;
  }
  s.history.assign(c.history().begin(), c.history().end());
  const auto& n = c.counters();
  s.announces = n.announces;
  s.banned = n.banned;
  s.refused = n.refused;
  s.warned = n.warned;
  s.seeder_appeals = n.seeder_appeals;
  s.repeats = n.repeats;
  s.early = n.early;
  s.peer_count = c.table().size();
  if (max_peers > 0) {
    s.peers.reserve(std::min<std::size_t>(max_peers, c.table().size()));
    // for_each cannot stop early: the walk is O(peers), copies at most max_peers.
    c.table().for_each([&](const peer_key& k, const endpoint& ep, bool seeder,
                           const peer_traits& t) {
      if (s.peers.size() >= max_peers) {
        return;
      }
      peer_view v;
      v.id = k.id;
      v.ep = ep;
      v.seeder = seeder;
      v.left = t.left;
      v.progress = t.progress;
      v.flags = t.flags;
      v.announces = t.announces;
      s.peers.push_back(v);
    });
  }
  return s;
}

/// Answers `t` "swarm busy" unapplied when more than `max_backlog`
/// messages wait behind it; true when it did.
bool shed(swarm_actor_ptr self, announce_ticket& t) {
  auto& st = self->state;
  const std::size_t bound = st.core->config().max_backlog;
  if (bound == 0) return false;
  const std::size_t waiting = self->mailbox().size();
  if (waiting <= bound) return false;
  announce_result& res = st.scratch;
  reset_result(res);
  res.failure_reason = swarm_busy_reason;
  res.retry_in_minutes = st.core->config().busy_retry_in_minutes;
  res.stats = st.core->scrape();
  t.complete(res);
  if (st.totals) st.totals->backlog_shed.fetch_add(1, std::memory_order_relaxed);
  if (first_reached(st, &swarm_totals::backlog_reached)) {
    spdlog::warn(
        "swarm {}: {} messages wait in its mailbox, above tracker.max-swarm-backlog = {}: "
        "announces beyond are answered 'swarm busy' with retry in (first time since start; "
        "counted in swarm_totals::backlog_shed)",
        st.core->hash().hex(), waiting, bound);
  }
  return true;
}

/// The one announce path: the core's announce, answered through the ticket.
void serve_announce(swarm_actor_ptr self, announce_ticket& t) {
  auto& st = self->state;
  if (t.announce.request.hash == st.core->hash() && shed(self, t)) return;
  const auto now = self->clock().now();
  st.last_request = now;
  // The window's bucket is read at the end of the announce; asked for now,
  // its miss overlaps the peer lookup's instead of following it.
  st.core->tracker().prefetch(now);
  // One result object reused across tickets: its buffers keep their
  // capacity, so a warm swarm answers without allocating.
  announce_result& res = st.scratch;
  reset_result(res);
  const std::uint64_t address_refused = st.core->counters().address_refused;
  if (!st.core->announce(t.announce, now, res)) {
    t.fail();
    return;
  }
  // Before the answer: whoever reads the census after an answer sees the
  // peer it stored.
  update_census(st, now, static_cast<peer_cap_refusal>(res.refused_at_cap));
  t.complete(res);
  if (st.core->counters().address_refused != address_refused &&
      first_reached(st, &swarm_totals::address_cap_reached)) {
    spdlog::warn(
        "swarm {}: address {} holds {} peers, tracker.max-peers-per-address; new peers from an "
        "address at the bound are refused with retry in (first time since start; counted in "
        "swarm_totals::address_refused)",
        st.core->hash().hex(), t.announce.peer.ip.to_string(),
        st.core->table().peers_at(t.announce.peer.ip));
  }
  add_totals(st);
  publish_share(st);
  send_probes(self);
}

void serve_scrape(swarm_actor_ptr self, scrape_ticket& t) {
  self->state.last_request = self->clock().now();
  t.complete(self->state.core->scrape());
}

enum class hibernation { stays, not_yet, slept, deferred };

/// The health tick: evaluates the swarm's health now and tells the
/// supervisor (a changed report) and the observer (every report).
void evaluate_health(swarm_actor_ptr self, health_time now) {
  auto& st = self->state;
  auto changed = st.core->tick(now);
  publish_share(st);
  if (changed && st.supervisor) {
    self->send(st.supervisor, health_atom::value, st.core->hash(), *changed);
  }
  if (st.observer) {
    self->send(st.observer, health_atom::value, st.core->hash(), *st.core->last_report());
  }
}

/// Hands the swarm to its registry as data when it has been quiet for
/// `hibernate_after` (see swarm_actor.hpp's lifecycle): `slept` when it did
/// (the caller quits), `deferred` when the node's hibernations per second
/// were used up, `not_yet` when only the quiet time is missing (`quiet_left`
/// says how much: the caller sweeps again then, so the swarm sleeps
/// `hibernate_after` after its last request, not up to a sweep period
/// later; for a table of one sweep step at most). Runs at the end of a
/// sweep cycle, after the census and the gauges were brought up to date.
/// The health is evaluated right before the swarm sleeps, so that the
/// report it sleeps with covers every announce it served: one that made it
/// unhealthy (its last seeder leaving) keeps it awake, and the supervisor
/// hears of it at once.
hibernation try_hibernate(swarm_actor_ptr self, health_time now, caf::timespan& quiet_left) {
  auto& st = self->state;
  const swarm_core& core = *st.core;
  const auto& cfg = core.config();
  constexpr auto stays = hibernation::stays;
  const auto unhealthy = [&core] {
    const health_report* r = core.last_report();
    return r != nullptr && is_unhealthy(r->state);
  };
  if (cfg.hibernate_after.count() <= 0 || core.table().size() == 0 || st.observer) return stays;
  if (unhealthy() || core.remediation(now)) return stays;
  auto reg = st.registry.lock();
  if (!reg || !reg->keeps_sleeping_swarms()) return stays;
  if (const auto quiet = now - st.last_request; quiet < cfg.hibernate_after) {
    // A table of more than one sweep step keeps its period: such a swarm is
    // rarely quiet, and an early sweep would cost it a whole cycle.
    if (core.table().size() > cfg.sweep_batch) return stays;
    quiet_left = std::chrono::duration_cast<caf::timespan>(cfg.hibernate_after - quiet);
    return hibernation::not_yet;
  }
  evaluate_health(self, now);
  if (unhealthy()) return stays;
  if (!reg->take_hibernation(now)) return hibernation::deferred;
  dormant_swarm d;
  {
    // One snapshot per thread, reused: a swarm falls asleep for most
    // announces of a population at clients' pace, and a fresh one cost an
    // array of peers from malloc's slow path each time.
    thread_local swarm_snapshot snap;
    take_snapshot(core, now, snap);
    std::int64_t newest = std::numeric_limits<std::int64_t>::max();
    for (const auto& p : snap.peers) newest = std::min(newest, p.last_announce_age_ms);
    const std::vector<char> packed = pack_snapshot(snap, d.raw_size);
    d.bytes.assign(packed.begin(), packed.end());
    d.peers = static_cast<std::uint32_t>(snap.peers.size());
    d.drop_at = now - std::chrono::milliseconds(newest) + cfg.peer_timeout + cfg.idle_lifetime;
    trim_snapshot(snap);
  }
  if (d.bytes.empty()) return stays;
  d.taken = now;
  d.share = st.published;
  d.census_peers = st.census.peers;
  d.at_peer_cap = st.census.at_cap;
  d.downloaded = static_cast<std::uint64_t>(core.scrape().downloaded);
  d.policy = core.knobs().policy;
  if (const health_report* r = core.last_report()) {
    d.evaluated = true;
    d.announce_rate = static_cast<float>(r->announce_rate);
  }
  if (!reg->hibernate(core.hash(), self->address(), d)) return stays;
  // The entry holds the shares now: this actor's end takes none back.
  st.published = swarm_share{};
  st.census.peers = 0;
  st.census.at_cap = false;
  return hibernation::slept;
}

/// When a swarm whose hibernation was deferred sweeps again: between a
/// sixth and half of the sweep period, spread by its actor id and the time,
/// so the swarms refused in one busy second come back spread out instead
/// of together.
caf::timespan deferred_sweep(const swarm_actor_ptr& self, health_time now) {
  const auto period = std::chrono::duration_cast<caf::timespan>(self->state.core->config().sweep_period);
  const auto lo = period / 6;
  const auto span = static_cast<std::uint64_t>((period / 2 - lo).count());
  std::uint64_t state = self->id() ^ static_cast<std::uint64_t>(now.time_since_epoch().count());
  const std::uint64_t x = splitmix64(state);
  return lo + caf::timespan{span == 0 ? 0 : static_cast<caf::timespan::rep>(x % span)};
}

}  // namespace

swarm_share swarm_share::of(const swarm_core& core) noexcept {
  swarm_share s;
  s.running = true;
  if (const health_report* r = core.last_report()) {
    s.health = r->state;
    if (is_unhealthy(r->state)) s.reasons = r->reasons;
  }
  const peer_table& t = core.table();
  s.seeders = static_cast<std::int64_t>(t.seeders());
  s.leechers = static_cast<std::int64_t>(t.leechers());
  s.partial_seeds = static_cast<std::int64_t>(t.partial_seeds());
  s.peers_ipv4 = static_cast<std::int64_t>(t.ipv4_count());
  s.peers_ipv6 = static_cast<std::int64_t>(t.ipv6_count());
  return s;
}

void move_share(swarm_totals& t, const swarm_share& from, const swarm_share& to) noexcept {
  auto add = [](std::atomic<std::int64_t>& g, std::int64_t d) {
    if (d != 0) g.fetch_add(d, std::memory_order_relaxed);
  };
  auto state = [](const swarm_share& s) {
    return static_cast<std::size_t>(s.health) % swarm_totals::health_states;
  };
  auto peers = [](const swarm_share& s) { return s.seeders + s.leechers; };
  // One signed change per gauge: the usual case (same health, a peer more
  // or less) touches only the peer gauges.
  auto place = [&](const swarm_share& s, std::int64_t sign) {
    if (!s.running) return;
    add(t.swarms_by_health[state(s)], sign);
    add(t.peers_by_health[state(s)], sign * peers(s));
    for (int i = 0; i < health_reason_count; ++i)
      if ((s.reasons & (1u << i)) != 0) add(t.unhealthy_by_reason[i], sign);
  };
  if (from.running && to.running && from.health == to.health && from.reasons == to.reasons) {
    add(t.peers_by_health[state(to)], peers(to) - peers(from));
  } else {
    place(from, -1);
    place(to, 1);
  }
  add(t.seeders, to.seeders - from.seeders);
  add(t.leechers, to.leechers - from.leechers);
  add(t.partial_seeds, to.partial_seeds - from.partial_seeds);
  add(t.peers_ipv4, to.peers_ipv4 - from.peers_ipv4);
  add(t.peers_ipv6, to.peers_ipv6 - from.peers_ipv6);
}

swarm_state::~swarm_state() {
  if (timers) timers->disarm(timer);
  if (totals) move_share(*totals, published, swarm_share{});
}

void reset_result(announce_result& r) {
  r.stats = {};
  r.interval = 0;
  r.min_interval = 0;
  r.peers4.clear();
  r.peers6.clear();
  r.peers.clear();
  r.warning_message.clear();
  r.failure_reason.clear();
  r.retry_in_minutes = 0;
  r.refused_at_cap = 0;
}

namespace {

/// The swarm whose message this thread handles now: `swarm_actor_impl`
/// sets it around every call into the shared behavior (its `consume`), the
/// only place CAF calls a behavior of a swarm from.
thread_local swarm_actor_ptr running_swarm_ptr = nullptr;

swarm_actor_ptr running_swarm() noexcept {
  assert(running_swarm_ptr != nullptr);
  return running_swarm_ptr;
}

/// Wakes the swarm for its sweep or its health tick after `delay`: through
/// the node's wheel when it has one (nothing allocated; nothing keeps the
/// actor once it ends), else with a CAF delayed message.
void wake_later(const swarm_actor_ptr& self, swarm_wake kind, caf::timespan delay) {
  auto& st = self->state;
  if (st.timers) {
    st.timers->arm(st.timer, self->ctrl(), kind, self->clock().now() + delay);
  } else if (kind == wake_sweep) {
    self->delayed_send(self, delay, sweep_atom::value);
  } else {
    self->delayed_send(self, delay, caf::tick_atom::value);
  }
}

/// A new swarm actor's start, once its `core`, `registry` and `supervisor`
/// are in its state: what the state takes from the registry, its share of
/// the node's totals, its two wake-ups.
void start_swarm(swarm_actor_ptr self) {
  // Time comes from the actor system's clock: steady_clock in production,
  // the test scheduler's simulated clock in tests. (Not `self->now()`:
  // Debian's libcaf_core 0.17.6 declares it but does not export it.)
  auto& st = self->state;
  // A stray error message (e.g. the error answer to a reply its sender no
  // longer expected) must not end a swarm: CAF's default error handler
  // quits, which would look like a crash.
  self->set_error_handler([](caf::error&) {});
  if (auto reg = st.registry.lock()) {
    st.prober = reg->prober();
    st.totals = reg->totals();
    st.timers = reg->timers();
  }
  skip_totals(st);
  st.census.census = st.core->settings()->node.census.get();
  update_census(st, self->clock().now());
  // A restarted or installed swarm starts with peers: counted from now.
  publish_share(st);
  st.core->set_probing(static_cast<bool>(st.prober));
  // A new swarm is empty until its first announce: if that never comes (a
  // route() whose request failed), the swarm still ends after idle_lifetime.
  // (A restarted swarm keeps the idle clock of its core.)
  st.core->note_occupancy(self->clock().now());
  st.last_request = self->clock().now();
  const auto& cfg = st.core->config();
  // The first sweep comes no later than the swarm may fall asleep.
  auto first_sweep = cfg.sweep_period;
  if (cfg.hibernate_after.count() > 0) first_sweep = std::min(first_sweep, cfg.hibernate_after);
  wake_later(self, wake_sweep, first_sweep);
  wake_later(self, wake_tick, cfg.health_tick);
}

/// The behavior of every swarm actor (see swarm_actor.hpp): built once and
/// shared (`shared_swarm_behavior`). Its handlers capture nothing and reach
/// their actor through `running_swarm()`: a behavior of their own per actor
/// cost each awake swarm about 0.9 KB (one object per handler) and two
/// dozen allocations at every spawn and wake, and was one more cache line
/// per message on a population larger than the cache.
local_swarm_actor::behavior_type make_swarm_behavior() {
  // Every handler of local_swarm_actor (runtime/swarm_interface.hpp),
  // checked by the compiler.
  return {
      // -- network: the one announce and the one scrape entry point ------------
      [](announce_atom, const announce_ticket_ptr& t) {
        const swarm_actor_ptr self = running_swarm();
        serve_announce(self, *t);
      },
      [](scrape_atom, const scrape_ticket_ptr& t) {
        const swarm_actor_ptr self = running_swarm();
        serve_scrape(self, *t);
      },
      // -- operator ---------------------------------------------------------------
      [](health_atom, caf::get_atom) -> caf::result<health_report> {
        const swarm_actor_ptr self = running_swarm();
        if (const health_report* r = self->state.core->last_report()) {
          return *r;
        }
        return caf::make_error(caf::sec::runtime_error, "no health evaluation yet");
      },
      [](status_atom) {
        const swarm_actor_ptr self = running_swarm();
        return make_status(*self->state.core, 0, self->id());
      },
      [](status_atom, caf::get_atom, std::uint32_t max_peers) {
        const swarm_actor_ptr self = running_swarm();
        return make_status(*self->state.core, max_peers, self->id());
      },
      [](history_atom, caf::get_atom) {
        const swarm_actor_ptr self = running_swarm();
        const auto& h = self->state.core->history();
        return std::vector<remediation_record>(h.begin(), h.end());
      },
      [](knobs_atom, caf::get_atom) {
        const swarm_actor_ptr self = running_swarm();
        return self->state.core->knobs();
      },
      [](knobs_atom, caf::put_atom, const swarm_knobs& k) -> caf::result<swarm_knobs> {
        const swarm_actor_ptr self = running_swarm();
        auto& core = *self->state.core;
        const swarm_knobs previous = core.knobs();
        if (!core.set_knobs(k)) {
          return caf::make_error(caf::sec::invalid_argument);
        }
        return previous;
      },
      [](policy_atom, caf::get_atom) {
        const swarm_actor_ptr self = running_swarm();
        return std::string(to_string(self->state.core->policy()));
      },
      [](policy_atom, caf::put_atom, const std::string& name) -> caf::result<std::string> {
        const swarm_actor_ptr self = running_swarm();
        auto& core = *self->state.core;
        auto p = name == "default"
                     ? std::optional<policy_kind>(core.config().default_knobs().policy)
                     : parse_policy(name);
        if (!p) {
          return caf::make_error(caf::sec::invalid_argument, "unknown policy '" + name + "'");
        }
        std::string previous(to_string(core.policy()));
        core.set_policy(*p);
        return previous;
      },
      // -- healing ----------------------------------------------------------------
      [](observer_atom, const health_observer& observer) {
        const swarm_actor_ptr self = running_swarm();
        self->state.observer = observer;
      },
      [](history_atom, caf::put_atom, remediation_record& r) {
        const swarm_actor_ptr self = running_swarm();
        self->state.core->record(std::move(r));
      },
      [](progress_atom, const std::vector<remediation_progress>& p) {
        const swarm_actor_ptr self = running_swarm();
        if (p.empty())
          self->state.core->clear_remediation();
        else
          self->state.core->set_remediation(p.front(), self->clock().now());
      },
      [](crash_atom) {
        const swarm_actor_ptr self = running_swarm();
        if (self->state.core->config().test_hooks) {
          throw std::runtime_error("swarm crash requested (test hook)");
        }
      },
      // -- migration and replication: a migration takes the whole state and
      // ends this actor (requests queued behind bounce and are routed again,
      // to the remote handle that replaced it); a replica copies it; the new
      // owner merges one in.
      [](caf::migrate_atom, caf::get_atom) {
        const swarm_actor_ptr self = running_swarm();
        auto snap = take_snapshot(*self->state.core, self->clock().now());
        self->quit();
        return snap;
      },
      [](snapshot_atom) {
        const swarm_actor_ptr self = running_swarm();
        return take_snapshot(*self->state.core, self->clock().now());
      },
      [](caf::migrate_atom, caf::put_atom, const swarm_snapshot& s) {
        const swarm_actor_ptr self = running_swarm();
        merge_snapshot(*self->state.core, s, self->clock().now());
        skip_totals(self->state);
        publish_share(self->state);
        update_census(self->state, self->clock().now());
      },
      // -- the prober's answers ---------------------------------------------------
      [](probe_atom, const probe_result& r) {
        const swarm_actor_ptr self = running_swarm();
        auto& core = *self->state.core;
        if (r.hash != core.hash()) {
          return;
        }
        const bool applied = core.apply_probe_result(peer_key{r.id, r.target.ip}, r.target.port,
                                                     r.outcome, self->clock().now());
        // Debug only (one line per probe): tests and operators can follow
        // what probing decided without an admin API.
        if (spdlog::should_log(spdlog::level::debug)) {
          spdlog::debug("swarm {}: probe of {}:{} {}{}", core.hash().hex(), r.target.ip.to_string(),
                        r.target.port, to_string(r.outcome), applied ? "" : " (stale, ignored)");
        }
      },
      // -- timers -------------------------------------------------------------------
      [](sweep_atom) {
        const swarm_actor_ptr self = running_swarm();
        auto& st = self->state;
        const auto now = self->clock().now();
        const auto r = st.core->sweep(now);
        publish_share(st);
        update_census(st, now);
        if (!r.cycle_done) {
          // More to examine: continue behind whatever is queued now, so a
          // big table never holds up announces for a whole cycle.
          self->send(self, sweep_atom::value);
          return;
        }
        if (st.core->idle(now)) {
          // Leave the directory first, so nobody is routed here any more;
          // requests already on their way bounce with request_receiver_down
          // and their senders route again (to a fresh swarm).
          if (auto reg = st.registry.lock()) {
            reg->erase_if_owner(st.core->hash(), self->address());
          }
          self->quit();
          return;
        }
        const auto period =
            std::chrono::duration_cast<caf::timespan>(st.core->config().sweep_period);
        caf::timespan quiet_left = period;
        switch (try_hibernate(self, now, quiet_left)) {
          case hibernation::slept:
            self->quit();
            return;
          case hibernation::deferred:
            wake_later(self, wake_sweep, deferred_sweep(self, now));
            return;
          case hibernation::not_yet:
            wake_later(self, wake_sweep, std::min(period, quiet_left));
            return;
          case hibernation::stays:
            break;
        }
        wake_later(self, wake_sweep, period);
      },
      [](caf::tick_atom) {
        const swarm_actor_ptr self = running_swarm();
        auto& st = self->state;
        const auto now = self->clock().now();
        // A summary of suppressed per-swarm lines must not wait for the
        // next such line.
        swarm_log::instance().flush(now);
        evaluate_health(self, now);
        wake_later(self, wake_tick, st.core->config().health_tick);
      },
  };
}

const local_swarm_actor::behavior_type& shared_swarm_behavior() {
  static const local_swarm_actor::behavior_type behavior = make_swarm_behavior();
  return behavior;
}

/// The swarm actor as a class: its behavior is the shared one, and the
/// two network messages (an announce or a scrape ticket, one per request)
/// are taken before the behavior is looked at. CAF's `consume` would set
/// the current element, sort the message (it is an ordinary one: not a
/// response, not a system message) and try the behavior's handlers in turn;
/// here the ticket goes straight to the code its handler calls, without
/// reading the behavior (a heap object of its own per actor, one more cache
/// miss per request on a population larger than the cache). The swarm
/// actor never awaits a response and sets no receive timeout, the two
/// things CAF's `consume` checks before it dispatches an ordinary message.
class swarm_actor_impl : public caf::stateful_actor<swarm_state, local_swarm_actor::base> {
 public:
  using super = caf::stateful_actor<swarm_state, local_swarm_actor::base>;

  // The arguments go straight to the state fields the behavior reads (no
  // members of their own: every byte of an awake actor counts).
  swarm_actor_impl(caf::actor_config& cfg, swarm_core_ptr core,
                   std::weak_ptr<swarm_registry> registry, health_observer supervisor)
      : super(cfg) {
    state.core = std::move(core);
    state.registry = std::move(registry);
    state.supervisor = std::move(supervisor);
  }

  behavior_type make_behavior() override {
    start_swarm(this);
    return shared_swarm_behavior();
  }

  caf::invoke_message_result consume(caf::mailbox_element& x) override {
    // CAF reads the top of the behavior stack (a small block of its own)
    // after every run of messages; asked for now, it arrives while the
    // message is handled instead of stalling the scheduler afterwards.
    if (!bhvr_stack_.empty()) __builtin_prefetch(&bhvr_stack_.back());
    if (x.mid.is_async()) {
      auto& content = x.content();
      if (content.match_elements<announce_atom, announce_ticket_ptr>()) {
        current_element_ = &x;
        serve_announce(this, *content.get_as<announce_ticket_ptr>(1));
        return caf::invoke_message_result::consumed;
      }
      if (content.match_elements<scrape_atom, scrape_ticket_ptr>()) {
        current_element_ = &x;
        serve_scrape(this, *content.get_as<scrape_ticket_ptr>(1));
        return caf::invoke_message_result::consumed;
      }
    }
    // Everything else goes through CAF and the shared behavior, whose
    // handlers find this actor in `running_swarm_ptr`.
    struct running_guard {
      swarm_actor_ptr previous;
      explicit running_guard(swarm_actor_ptr self) : previous(running_swarm_ptr) {
        running_swarm_ptr = self;
      }
      ~running_guard() { running_swarm_ptr = previous; }
    } guard{this};
    return super::consume(x);
  }
};

}  // namespace

local_swarm_actor spawn_swarm(caf::actor_system& sys, swarm_core_ptr core,
                              std::weak_ptr<swarm_registry> registry, health_observer supervisor) {
  return sys.spawn<swarm_actor_impl>(std::move(core), std::move(registry), std::move(supervisor));
}

local_swarm_actor spawn_swarm(caf::actor_system& sys, const info_hash& hash,
                              const swarm_config& cfg, std::uint64_t seed,
                              std::weak_ptr<swarm_registry> registry) {
  return spawn_swarm(sys, make_swarm_core(hash, cfg, seed), std::move(registry));
}

}  // namespace sk
