// The node actor's rebalancing room: every rebalance-period each node
// measures its local swarms' announce rates, tells every member its load,
// and moves its hottest swarms to members well below the mean
// (cluster/rebalance.hpp decides which; `swarm_directory::move` moves).
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "cluster/node_state.hpp"
#include "cluster/rebalance.hpp"
#include "runtime/directory.hpp"

namespace sk::cluster {

namespace {

/// Second half of a rebalance tick, once every local swarm's announce
/// counter is in: this node's load to every member, then the moves.
void rebalance_decide(node_ptr self, std::vector<std::pair<info_hash, std::uint64_t>> counts,
                      health_time now) {
  auto& st = self->state;
  const double elapsed = std::chrono::duration<double>(now - st.announces_seen_at).count();
  const bool first = st.announces_seen_at == health_time{};
  // Rates since the last tick. A swarm without a baseline (new, or just
  // arrived with counters from elsewhere) counts from the next tick on; a
  // counter that went down (a fresh core after a crash) restarts too.
  std::vector<swarm_rate> rates;
  std::unordered_map<info_hash, std::uint64_t, id20_hasher> seen;
  double load = 0.0;
  for (const auto& [hash, n] : counts) {
    seen.emplace(hash, n);
    auto it = st.announces_seen.find(hash);
    if (first || elapsed <= 0.0 || it == st.announces_seen.end() || n < it->second) continue;
    const double r = static_cast<double>(n - it->second) / elapsed;
    rates.push_back(swarm_rate{hash, r});
    load += r;
  }
  st.announces_seen = std::move(seen);
  st.announces_seen_at = now;
  if (first) return;
  for (const auto& [name, h] : st.live) self->send(h, load_atom::value, st.me.name, load);

  // Loads of live members that reported within the last three periods.
  std::map<std::string, double> loads{{st.me.name, load}};
  for (const auto& [name, entry] : st.loads)
    if (st.live.count(name) != 0 && now - entry.second <= 3 * st.cfg.rebalance_period)
      loads.emplace(name, entry.first);
  rebalance_config rc;
  rc.factor = st.cfg.rebalance_factor;
  rc.min_rate = st.cfg.rebalance_min_rate;
  rc.max_moves = st.cfg.rebalance_max_moves;
  const auto moves = plan_rebalance(st.me.name, loads, std::move(rates), st.moved_in_round,
                                    st.rebalance_round, rc);
  if (moves.empty()) return;
  double total = 0.0;
  for (const auto& [name, l] : loads) total += l;
  const double mean = total / static_cast<double>(loads.size());
  for (const auto& m : moves) {
    const std::string err = st.dir->move(m.hash, m.to);
    if (!err.empty()) {
      spdlog::debug("cluster: rebalance: cannot move {}: {}", m.hash.hex(), err);
      continue;
    }
    st.moved_in_round[m.hash] = st.rebalance_round;
    spdlog::info(
        "cluster: rebalance: moving swarm {} ({:.1f} announces/s) from {} (load {:.1f}/s, "
        "cluster mean {:.1f}/s) to {} (load {:.1f}/s)",
        m.hash.hex(), m.rate, st.me.name, load, mean, m.to, loads[m.to]);
  }
}

/// A rebalance tick: ask every local swarm for its announce counter (the
/// answers arrive asynchronously; `rebalance_decide` runs on the last).
void rebalance_tick(node_ptr self) {
  auto& st = self->state;
  ++st.rebalance_round;
  // Hysteresis entries older than the window are of no use any more.
  const std::uint64_t keep = rebalance_config{}.hysteresis_periods;
  for (auto it = st.moved_in_round.begin(); it != st.moved_in_round.end();)
    it = it->second + keep < st.rebalance_round ? st.moved_in_round.erase(it) : std::next(it);
  if (st.leaving || !st.view) return;
  auto swarms = st.dir->local_swarms();
  struct pending {
    std::size_t left = 0;
    std::vector<std::pair<info_hash, std::uint64_t>> counts;
  };
  auto p = std::make_shared<pending>();
  p->left = swarms.size();
  if (p->left == 0) {
    rebalance_decide(self, {}, self->clock().now());
    return;
  }
  // Answers must be in before the next tick.
  const auto timeout = std::max(std::chrono::milliseconds(1), st.cfg.rebalance_period / 2);
  for (const auto& [hash, swarm] : swarms) {
    const info_hash h = hash;
    self->request(swarm, timeout, status_atom::value)
        .then(
            [self, p, h](const swarm_status& s) {
              p->counts.emplace_back(h, s.announces);
              if (--p->left == 0) rebalance_decide(self, std::move(p->counts), self->clock().now());
            },
            [self, p](const caf::error&) {
              // Ended or moved meanwhile: it has no load here any more.
              if (--p->left == 0) rebalance_decide(self, std::move(p->counts), self->clock().now());
            });
  }
}

}  // namespace

void start_rebalance(node_ptr self) {
  if (self->state.cfg.rebalance_period.count() > 0)
    self->delayed_send(self, self->state.cfg.rebalance_period, rebalance_atom::value);
}

node_rebalance_part::behavior_type rebalance_behavior(node_ptr self) {
  return {
      [self](load_atom, const std::string& name, double load) {
        self->state.loads[name] = {load, self->clock().now()};
      },
      [self](rebalance_atom) {
        rebalance_tick(self);
        self->delayed_send(self, self->state.cfg.rebalance_period, rebalance_atom::value);
      },
  };
}

}  // namespace sk::cluster
