#include "runtime/swarm_snapshot.hpp"

#include <algorithm>
#include <atomic>
#include <random>
#include <cmath>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

namespace sk {

/// Befriended by swarm_core and peer_table: the one place outside them that
/// reads and writes their private state (snapshots only).
struct swarm_core_access {
  static swarm_core_counters& counters(swarm_core& c) { return c.counters_; }
  static void set_downloaded(swarm_core& c, std::uint64_t d) { c.table_.downloaded_ = d; }
  static std::deque<remediation_record>& history(swarm_core& c) { return c.history_; }
  static swarm_health_tracker& tracker(swarm_core& c) { return c.tracker_; }
  static bool& evaluated(swarm_core& c) { return c.evaluated_; }
};

namespace {

std::int64_t age_ms(health_time now, health_time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count();
}

health_time at_age(health_time now, std::int64_t ms) { return now - std::chrono::milliseconds(ms); }

}  // namespace

std::uint64_t new_lineage() noexcept {
  static const std::uint64_t base = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<std::uint64_t> count{0};
  std::uint64_t state = base + count.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t v = splitmix64(state);
  return v != 0 ? v : 1;
}

swarm_snapshot take_snapshot(const swarm_core& core, health_time now) {
  swarm_snapshot s;
  take_snapshot(core, now, s);
  return s;
}

void take_snapshot(const swarm_core& core, health_time now, swarm_snapshot& s) {
  s.hash = core.hash();
  s.seed = core.seed();
  s.lineage = core.lineage();
  s.knobs = core.knobs();
  s.history.assign(core.history().begin(), core.history().end());
  const auto& n = core.counters();
  s.counters.assign({n.announces, n.banned, n.refused, n.warned, n.seeder_appeals});
  s.downloaded = core.table().downloaded();
  // Every element is written whole below: the ones a reused snapshot
  // already holds are overwritten in place, no array is allocated anew.
  s.peers.resize(core.table().size());
  std::size_t i = 0;
  core.table().for_each(
      [&](const peer_key& k, const endpoint& ep, bool /*seeder*/, const peer_traits& t) {
        if (i == s.peers.size()) s.peers.emplace_back();
        peer_snapshot& p = s.peers[i++];
        p.id = k.id;
        p.ep = ep;
        p.left = t.left;
        p.uploaded = t.uploaded;
        p.downloaded = t.downloaded;
        p.key = t.key;
        p.first_seen_age_ms = age_ms(now, t.first_seen);
        p.last_announce_age_ms = age_ms(now, t.last_announce);
        p.last_progress_age_ms = age_ms(now, t.last_progress);
        p.completed_age_ms = t.completed_at ? age_ms(now, *t.completed_at) : -1;
        p.announces = t.announces;
        p.announces_without_progress = t.announces_without_progress;
        p.early_announces = t.early_announces;
        p.strikes = t.strikes;
        // Never NaN/inf on the wire (CAF 0.17 corrupts them).
        p.progress = std::isfinite(t.progress) ? t.progress : -1.0f;
        p.flags = t.flags;
      });
  s.peers.resize(i);
  s.health = core.tracker().export_state(now);
  s.evaluated = core.last_report() != nullptr;
  s.remediation.clear();
  if (auto r = core.remediation(now)) s.remediation.push_back(std::move(*r));
  // Never NaN/inf on the wire (CAF 0.17 corrupts them).
  auto finite = [](double v) { return std::isfinite(v) ? v : 0.0; };
  s.health.last.completion_rate = finite(s.health.last.completion_rate);
  s.health.last.announce_rate = finite(s.health.last.announce_rate);
}

void trim_snapshot(swarm_snapshot& s) {
  if (s.peers.capacity() > 256) std::vector<peer_snapshot>().swap(s.peers);
}

void merge_snapshot(swarm_core& core, const swarm_snapshot& s, health_time now) {
  if (s.hash != core.hash()) return;
  core.set_knobs(s.knobs);  // out-of-range knobs (another config) are ignored
  if (core.table().empty()) {
    // A core filled from scratch (a swarm waking, restored or moved here):
    // its arrays sized once for what comes.
    std::array<std::array<std::size_t, 2>, 2> more{};
    for (const auto& p : s.peers) ++more[p.left == 0 ? 0 : 1][p.ep.ip.v6 ? 1 : 0];
    core.table().reserve(more);
  }
  for (const auto& p : s.peers) {
    // A peer this core knows already announced here after the snapshot
    // was taken: its own entry is newer.
    if (core.table().contains(peer_key{p.id, p.ep.ip})) continue;
    // The table's expiry clock is the last announce, as on the old owner.
    const health_time last = at_age(now, p.last_announce_age_ms);
    // A partial seed's role is restored with it (the table counts them).
    const announce_event ev = (p.flags & flag_partial_seed) != 0 && p.left > 0
                                  ? announce_event::paused
                                  : announce_event::none;
    auto [change, t] = core.table().announce_ex(p.id, p.ep, p.left, ev, last);
    if (t == nullptr || change != peer_table::change::added) continue;
    t->left = p.left;
    t->uploaded = p.uploaded;
    t->downloaded = p.downloaded;
    t->key = p.key;
    t->first_seen = at_age(now, p.first_seen_age_ms);
    t->last_announce = last;
    t->last_progress = at_age(now, p.last_progress_age_ms);
    if (p.completed_age_ms >= 0) t->completed_at = at_age(now, p.completed_age_ms);
    t->announces = p.announces;
    t->announces_without_progress = p.announces_without_progress;
    t->early_announces = p.early_announces;
    t->strikes = p.strikes;
    t->progress = p.progress;
    // (Flag writes, quarantine included, take effect for selection from
    // the table's next non-const call.)
    t->flags = p.flags;
  }
  // Two copies of one history (the same lineage: a swarm that came back on
  // two nodes after they were killed, one copy older): the larger counts,
  // which hold the smaller. Otherwise the counters and history add up:
  // what happened before the move, then what happened here meanwhile.
  const bool same = s.lineage != 0 && s.lineage == core.lineage();
  auto add = [same](std::uint64_t& into, std::uint64_t v) { into = same ? std::max(into, v) : into + v; };
  if (s.counters.size() >= 5) {
    auto& c = swarm_core_access::counters(core);
    add(c.announces, s.counters[0]);
    add(c.banned, s.counters[1]);
    add(c.refused, s.counters[2]);
    add(c.warned, s.counters[3]);
    add(c.seeder_appeals, s.counters[4]);
  }
  std::uint64_t downloaded = core.table().downloaded();
  add(downloaded, s.downloaded);
  swarm_core_access::set_downloaded(core, downloaded);
  // The merged state carries the arriving history's name, so a further
  // copy of it is recognised.
  if (s.lineage != 0) core.set_lineage(s.lineage);
  // The old owner's health model: its windows, size estimate, last report
  // and hysteresis (what this core counted meanwhile, a few ms of events
  // at most, gives way to it).
  swarm_core_access::tracker(core).import_state(s.health, now);
  swarm_core_access::evaluated(core) = swarm_core_access::evaluated(core) || s.evaluated;
  auto& h = swarm_core_access::history(core);
  if (!same)
    h.insert(h.begin(), s.history.begin(), s.history.end());
  else if (s.history.size() > h.size())
    h.assign(s.history.begin(), s.history.end());
  while (h.size() > core.config().history_size) h.pop_front();
  core.note_occupancy(now);
}

void fill_snapshot(swarm_core& fresh, const swarm_snapshot& s, health_time now) {
  merge_snapshot(fresh, s, now);
  // A remediation under way comes along to a new core (its supervisor
  // resumes it); a merge into a running swarm leaves that swarm's own.
  if (!s.remediation.empty()) fresh.set_remediation(s.remediation.front(), now);
}

swarm_core_ptr restore_snapshot(const swarm_snapshot& s, const swarm_config& cfg, health_time now) {
  auto core = make_swarm_core(s.hash, cfg, s.seed);
  fill_snapshot(*core, s, now);
  return core;
}

namespace {

void age(std::int64_t& v, std::int64_t by) {
  if (v >= 0) v += by;
}

}  // namespace

std::size_t age_snapshot(swarm_snapshot& s, std::int64_t by_ms,
                         std::chrono::milliseconds peer_timeout) {
  const std::int64_t by = std::max<std::int64_t>(by_ms, 0);
  const auto before = s.peers.size();
  for (auto& p : s.peers) {
    age(p.first_seen_age_ms, by);
    age(p.last_announce_age_ms, by);
    age(p.last_progress_age_ms, by);
    age(p.completed_age_ms, by);
  }
  // A remediation's trial and healthy stretch went on meanwhile.
  for (auto& r : s.remediation) r = aged(std::move(r), by);
  s.peers.erase(std::remove_if(s.peers.begin(), s.peers.end(),
                               [&](const peer_snapshot& p) {
                                 return p.last_announce_age_ms > peer_timeout.count();
                               }),
                s.peers.end());
  return before - s.peers.size();
}

std::vector<char> encode_snapshot(const swarm_snapshot& s) {
  std::vector<char> out;
  caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), out};
  if (auto err = sink(const_cast<swarm_snapshot&>(s))) out.clear();
  out.shrink_to_fit();
  return out;
}

bool decode_snapshot(const std::vector<char>& bytes, swarm_snapshot& out) {
  if (bytes.empty()) return false;
  caf::binary_deserializer source{static_cast<caf::execution_unit*>(nullptr), bytes.data(),
                                  bytes.size()};
  if (auto err = source(out)) return false;
  if (source.remaining() != 0) return false;
  make_finite(out);
  return true;
}

}  // namespace sk
