#include "tracker/swarm_core.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <type_traits>
#include <utility>

namespace sk {

static_assert(std::is_copy_constructible_v<swarm_core>,
              "the supervisor snapshots and restores swarm cores by copy");

namespace {

/// Distinct PRNG streams from the one swarm seed.
constexpr std::uint64_t allocator_stream = 0xa11c'a7e5'0000'0001ULL;
constexpr std::uint64_t jitter_stream = 0x7177'e500'0000'0002ULL;
constexpr std::uint64_t sample_stream = 0x5a4d'91e0'0000'0003ULL;

std::uint64_t derive(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed ^ stream;
  return splitmix64(s);
}

bool valid_scale(double s) noexcept { return s > 0.0 && s <= max_interval_scale; }

/// The history of a swarm that has none.
const std::deque<remediation_record>& no_history() {
  static const std::deque<remediation_record> empty;
  return empty;
}

}  // namespace

swarm_core::swarm_core(const info_hash& hash, swarm_settings_ptr settings, std::uint64_t seed)
    : hash_(hash),
      settings_(std::move(settings)),
      seed_(seed),
      table_(seed, settings_->config.max_peers, peer_table::default_max_addresses_per_id,
             settings_->config.max_peers_per_address),
      // Views into the shared settings (aliasing pointers: no copy, no
      // allocation).
      allocator_(allocator::on_shared(
          std::shared_ptr<const allocation_config>(settings_, &settings_->config.allocation),
          derive(seed, allocator_stream))),
      tracker_(swarm_health_tracker::on_shared(
          std::shared_ptr<const health_config>(settings_, &settings_->config.health))),
      knobs_(settings_->config.default_knobs()) {}

swarm_core::swarm_core(const info_hash& hash, const swarm_config& cfg, std::uint64_t seed)
    : swarm_core(hash, share_settings(cfg), seed) {}

void swarm_core::note_occupancy(time_point now) {
  if (!table_.empty()) {
    empty_since_.reset();
  } else if (!empty_since_) {
    empty_since_ = now;
  }
}

void swarm_core::refuse(announce_result& out, const std::string& reason,
                        std::int64_t retry_in_minutes) {
  out.failure_reason = reason;
  out.retry_in_minutes = retry_in_minutes;
  out.interval = config().announce_interval.count();
  out.min_interval = config().min_interval.count();
  out.stats = table_.stats();
}

bool swarm_core::announce(const swarm_announce& a, time_point now, announce_result& out) {
  const announce_request& req = a.request;
  if (req.hash != hash_) {
    return false;
  }
  ++counters_.announces;
  const swarm_config& cfg = config();

  // 1. Banned client prefixes: refused before anything is stored.
  if (const auto& banned = settings_->node.bans) {
    // One cached snapshot of the node-wide list per thread, shared by every
    // swarm the thread runs (one acquire load per announce while the list
    // does not change; the reader reloads when the cell or its version
    // differs from what it cached).
    thread_local snapshot_reader<client_ban_list> bans;
    const client_ban_list* list = bans.get(banned->cell());
    if (const ban_rule* rule = list->empty() ? nullptr : list->match(req.id)) {
      ++counters_.banned;
      banned->count_refusal();
      refuse(out, rule->reason, cfg.banned_retry_in_minutes);
      return true;
    }
  }

  // 2. A client that roamed: no record at this address, but one of the
  // same id and family elsewhere with the same key. It moves (no ghost left
  // at the old address, counts unchanged) and is judged as the known peer
  // it is. Another key is an impostor and becomes a separate peer.
  const peer_key key{req.id, a.peer.ip};
  peer_traits* known = table_.traits(key);
  if (known == nullptr && !req.key.empty()) {
    std::optional<peer_key> roamed;
    table_.for_each_other_address(req.id, a.peer.ip,
                                  [&](const peer_key& k, const peer_traits& t) {
                                    if (!roamed && !t.key.empty() && same_key_text(t.key, req.key)) roamed = k;
                                  });
    if (roamed && table_.roam(*roamed, a.peer)) {
      ++counters_.roamed;
      known = table_.traits(key);
    }
  }

  // 3. A known peer is judged before its announce is applied: a refused
  // (too frequent) announce must not touch the table.
  behaviour_verdict verdict;
  bool judged = false;
  bool was_seeder = false;
  announce_event table_event = req.event;
  if (known != nullptr) {
    was_seeder = table_.is_seeder(key);
    const auto last_event = static_cast<announce_event>(known->last_event);
    verdict = observe_announce(*known, req, false, now, tracker_.torrent_size(), behaviour());
    judged = true;
    if (verdict.refuse) {
      ++counters_.refused;
      // BEP 31 minutes, rounded up: retrying sooner would be refused again.
      const auto secs = std::max<std::int64_t>(1, verdict.retry_in.count());
      refuse(out, verdict.message, (secs + 59) / 60);
      return true;
    }
    if (verdict.repeat) {
      ++counters_.repeats;
      // A repeat without an event says what the previous announce said: a
      // partial seed stays one.
      if (req.event == announce_event::none) table_event = last_event;
    } else if (verdict.early && !verdict.warn) {
      ++counters_.early;
    }
  }

  // Caps: a new peer on a full swarm or a full node is refused before it is
  // stored or judged; known peers are served as always.
  if (known == nullptr && req.event != announce_event::stopped) {
    const auto& census = settings_->node.census;
    peer_cap_refusal cap = peer_cap_refusal::none;
    if (table_.size() >= cfg.max_peers) {
      cap = peer_cap_refusal::swarm_full;
    } else if (census && census->peers_full()) {
      cap = peer_cap_refusal::node_full;
    }
    if (cap != peer_cap_refusal::none) {
      refuse(out, std::string(), 0);
      out.refused_at_cap = static_cast<std::uint8_t>(cap);
      return true;
    }
    // One address (IPv4, IPv6 /64) holds its most peers in this swarm: a
    // new peer from it is refused (its known peers stay served), so one
    // host cannot fill a swarm with fake peers.
    if (table_.address_full(a.peer.ip)) {
      ++counters_.address_refused;
      refuse(out, address_full_reason, cfg.address_full_retry_in_minutes);
      return true;
    }
  }

  // 4. Apply, judge a new peer, feed the health model (repeats are not
  // news to it).
  const bool seeder_now = req.left == 0;
  auto [change, traits] = table_.announce_ex(req.id, a.peer, req.left, table_event, now);
  const peer_traits* requester_traits = nullptr;
  switch (change) {
    case peer_table::change::added:
      verdict = observe_announce(*traits, req, true, now, tracker_.torrent_size(), behaviour());
      judged = true;
      tracker_.on_announce(*traits, true, seeder_now, now);
      requester_traits = traits;
      break;
    case peer_table::change::updated:
      if (!verdict.repeat) tracker_.on_announce(*traits, false, seeder_now, now);
      requester_traits = traits;
      break;
    case peer_table::change::removed:
      tracker_.on_announce(*traits, false, was_seeder, now);
      tracker_.on_peer_left(*traits, was_seeder, now);
      break;
    case peer_table::change::ignored:
    case peer_table::change::rejected:
      break;
  }
  if (judged && verdict.completed) {
    tracker_.on_completed(now);
  }
  const bool partial_now =
      requester_traits != nullptr && requester_traits->has(flag_partial_seed);

  // Reachability: a stored peer may be due for a probe (off by default).
  if (probing_ && requester_traits != nullptr) {
    consider_probe(key, a.peer.port, *traits, now);
  }

  // 5. Peers: a peer that leaves needs none; everyone else gets the
  // policy's choice. (A rejected new peer, its id at too many addresses,
  // still gets some: it is not excluded because it is not stored.)
  if (req.event != announce_event::stopped) {
    allocation_request ar;
    ar.requester = key;
    ar.requester_seeder = seeder_now;
    ar.requester_partial = partial_now;
    ar.requester_traits = requester_traits;
    ar.numwant = cfg.resolve_numwant(req.numwant);
    ar.compact = req.compact;
    if (a.own_family_only) {
      ar.family = a.peer.ip.v6 ? family_filter::v6_only : family_filter::v4_only;
    }
    const health_report* report = last_report();
    if (req.compact) {
      allocator_.select_compact(table_, knobs_.policy, ar, report, out.peers4, out.peers6);
    } else {
      allocator_.select_entries(table_, knobs_.policy, ar, report, out.peers);
    }
  }

  // 6. Interval and messages. A partial seed wants nothing more: it is timed
  // like a seeder, never as a starving leecher.
  out.interval = interval_for(seeder_now || partial_now);
  if (!seeder_now && requester_traits != nullptr && requester_traits->has(flag_unreachable) &&
      cfg.intervals.unreachable_leecher_scale < 1.0) {
    // See interval_control::unreachable_leecher_scale.
    out.interval = std::max<std::int64_t>(
        cfg.min_interval.count(),
        std::llround(static_cast<double>(out.interval) * cfg.intervals.unreachable_leecher_scale));
  }
  out.min_interval = cfg.min_interval.count();
  if (judged && verdict.warn && !verdict.message.empty()) {
    ++counters_.warned;
    out.warning_message = verdict.message;
  } else if (seeder_now && req.event != announce_event::stopped && seeder_appeal_active()) {
    ++counters_.seeder_appeals;
    out.warning_message = cfg.seeder_warning_text;
  }
  out.stats = table_.stats();
  note_occupancy(now);
  return true;
}

peer_table::sweep_result swarm_core::sweep(time_point now) {
  auto r = table_.sweep(now, config().peer_timeout, config().sweep_batch,
                        [this, now](const peer_key&, bool seeder, const peer_traits& t) {
                          tracker_.on_peer_left(t, seeder, now);
                        });
  note_occupancy(now);
  return r;
}

std::optional<health_report> swarm_core::tick(time_point now) {
  expire_probes(now);
  // The census is scratch for this tick only: one sample per thread, reset
  // to this swarm's capacity and seed (the same values every tick, so the
  // kept progress sample is what a sample of the swarm's own would keep).
  thread_local health_sample sample;
  sample.reset(config().health.progress_sample_size, derive(seed_, sample_stream));
  table_.for_each([](const peer_key&, const endpoint&, bool seeder, const peer_traits& t) {
    sample.add(t, seeder);
  });
  const health_report& r = tracker_.evaluate(sample, now);
  evaluated_ = true;
  if (tracker_.changed()) {
    return r;
  }
  return std::nullopt;
}

std::int64_t swarm_core::interval_for(bool seeder) {
  const swarm_config& cfg = config();
  const auto base = cfg.announce_interval.count();
  const auto& ic = cfg.intervals;
  double scale = 1.0;
  if (const health_report* r = last_report()) {
    const bool starving = (r->reasons & starving_reasons) != 0 &&
                          table_.size() >= static_cast<std::size_t>(cfg.health.min_peers);
    if (!seeder && starving) {
      scale = ic.starving_leecher_scale;
    } else if (r->state == swarm_health::healthy && table_.size() >= ic.large_swarm_peers) {
      scale = ic.large_swarm_scale;
    }
  }
  scale *= knobs_.interval_scale;
  if (!seeder) {
    scale *= knobs_.leecher_interval_scale;
  }
  if (scale == 1.0) {
    // The plain interval stays exact: clients and operators see the
    // configured value while nothing needs fixing.
    return base;
  }
  double secs = static_cast<double>(base) * scale;
  if (ic.jitter > 0.0) {
    if (!jitter_rng_.has_value()) {
      jitter_rng_.ensure().reseed(derive(seed_, jitter_stream));
    }
    // Uniform in [-1, 1) from the top 53 bits.
    const double u =
        static_cast<double>(jitter_rng_.get()->next() >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    secs *= 1.0 + ic.jitter * u;
  }
  const double lo = static_cast<double>(cfg.min_interval.count());
  const double hi = static_cast<double>(
      std::max(cfg.announce_interval, cfg.peer_timeout - cfg.min_interval).count());
  secs = std::clamp(secs, lo, std::max(lo, hi));
  return static_cast<std::int64_t>(std::llround(secs));
}

bool swarm_core::seeder_appeal_active() const noexcept {
  if (knobs_.seeder_warning) {
    return true;
  }
  if (!config().warn_seeders_when_degraded) {
    return false;
  }
  const health_report* r = last_report();
  return r != nullptr && is_unhealthy(r->state) && (r->reasons & seeding_reasons) != 0;
}

// -- reachability probes ---------------------------------------------------------

void swarm_core::consider_probe(const peer_key& key, std::uint16_t port, peer_traits& t,
                                time_point now) {
  // Nothing to dial at port 0; a quarantined peer is never handed out, so
  // whether it is reachable changes nothing.
  if (port == 0 || t.has(flag_quarantined)) {
    return;
  }
  const std::int64_t now_s =
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  const std::size_t max_outstanding = config().probe.max_outstanding;
  const bool due = t.probed_port != port || now_s - static_cast<std::int64_t>(t.probed_at_s) >=
                                                config().probe.reprobe_after.count();
  if (!due) {
    return;
  }
  if (const probe_state* p = probes_.get()) {
    for (const auto& o : p->outstanding) {
      if (o.key == key) {
        return;  // one probe per peer at a time
      }
    }
    if (p->outstanding.size() >= max_outstanding) {
      expire_probes(now);
      if (outstanding_probes() >= max_outstanding) {
        return;  // bounded: this peer gets its chance at a later announce
      }
    }
  }
  if (t.probed_port != 0 && t.probed_port != port) {
    // What we knew was about another port.
    t.set(flag_reachable, false);
    t.set(flag_unreachable, false);
  }
  t.probed_at_s = static_cast<std::uint32_t>(now_s);
  t.probed_port = port;
  probe_state& p = probes_.ensure();
  p.outstanding.push_back({key, port, now});
  p.ready.push_back(probe_request{hash_, key.id, endpoint{key.ip, port}});
  ++counters_.probes_requested;
}

void swarm_core::expire_probes(time_point now) {
  probe_state* p = probes_.get();
  if (p == nullptr) {
    return;
  }
  const auto before = p->outstanding.size();
  const auto timeout = config().probe.result_timeout;
  p->outstanding.erase(std::remove_if(p->outstanding.begin(), p->outstanding.end(),
                                      [&](const outstanding_probe& o) {
                                        return now - o.since >= timeout;
                                      }),
                       p->outstanding.end());
  counters_.probes_expired += before - p->outstanding.size();
  release_probes();
}

void swarm_core::release_probes() noexcept {
  if (const probe_state* p = probes_.get(); p && p->outstanding.empty() && p->ready.empty()) {
    probes_.reset();
  }
}

std::vector<probe_request> swarm_core::take_probe_requests() {
  std::vector<probe_request> out;
  if (probe_state* p = probes_.get()) {
    out.swap(p->ready);
    release_probes();
  }
  return out;
}

bool swarm_core::apply_probe_result(const peer_key& key, std::uint16_t port, probe_outcome outcome,
                                    time_point now) {
  if (probe_state* p = probes_.get()) {
    for (auto it = p->outstanding.begin(); it != p->outstanding.end(); ++it) {
      if (it->key == key && it->port == port) {
        p->outstanding.erase(it);
        break;
      }
    }
  }
  expire_probes(now);
  // A late answer (after its slot expired) is still a fact about the peer,
  // as long as the peer is still there at that port.
  endpoint stored;
  if (!table_.find(key, stored) || stored.port != port) {
    return false;
  }
  peer_traits* t = table_.traits(key);
  switch (outcome) {
    case probe_outcome::reachable:
      ++counters_.probes_reachable;
      t->set(flag_reachable);
      t->set(flag_unreachable, false);
      break;
    case probe_outcome::unreachable:
      // Not quarantined: a NATed peer can still dial out; the
      // reachability-aware policy only never pairs two such peers.
      ++counters_.probes_unreachable;
      t->set(flag_unreachable);
      t->set(flag_reachable, false);
      break;
    case probe_outcome::bogus:
      // Connected, but not a BitTorrent peer of this torrent (a reflection
      // victim, some other service): never hand it to anyone.
      ++counters_.probes_bogus;
      t->set(flag_quarantined);
      t->set(flag_reachable, false);
      t->set(flag_unreachable, false);
      break;
    case probe_outcome::skipped:
      ++counters_.probes_skipped;
      return true;
  }
  // The table cannot see writes through a traits pointer: place the peer
  // (in or out of the sampling sets) now.
  table_.sync();
  return true;
}

bool swarm_core::set_knobs(const swarm_knobs& k) {
  if (!valid_scale(k.interval_scale) || !valid_scale(k.leecher_interval_scale) ||
      static_cast<int>(k.policy) >= policy_kind_count) {
    return false;
  }
  knobs_ = k;
  return true;
}

bool swarm_core::set_interval_scale(double s) {
  if (!valid_scale(s)) {
    return false;
  }
  knobs_.interval_scale = s;
  return true;
}

bool swarm_core::set_leecher_interval_scale(double s) {
  if (!valid_scale(s)) {
    return false;
  }
  knobs_.leecher_interval_scale = s;
  return true;
}

void swarm_core::set_quarantine_strict(bool on) { knobs_.quarantine_strict = on; }

void swarm_core::record(remediation_record r) {
  auto& h = history_.ensure();
  h.push_back(std::move(r));
  while (h.size() > config().history_size) {
    h.pop_front();
  }
}

const std::deque<remediation_record>& swarm_core::history() const noexcept {
  const auto* h = history_.get();
  return h != nullptr ? *h : no_history();
}

void swarm_core::set_remediation(const remediation_progress& p, time_point at) {
  auto& held = remediation_.ensure();
  held.progress = p;
  held.at = at;
}

std::optional<remediation_progress> swarm_core::remediation(time_point now) const {
  const auto* held = remediation_.get();
  if (held == nullptr) return std::nullopt;
  return aged(held->progress,
              std::chrono::duration_cast<std::chrono::milliseconds>(now - held->at).count());
}

void swarm_core::compact(time_point now) {
  table_.compact();
  tracker_.compact(now);
  release_probes();
}

bool swarm_core::check_invariants() const {
  if (!table_.check_invariants()) {
    return false;
  }
  if (!valid_scale(knobs_.interval_scale) || !valid_scale(knobs_.leecher_interval_scale) ||
      static_cast<int>(knobs_.policy) >= policy_kind_count) {
    return false;
  }
  if (history().size() > config().history_size) {
    return false;
  }
  if (const probe_state* p = probes_.get();
      p != nullptr && (p->outstanding.size() > config().probe.max_outstanding ||
                       p->ready.size() > p->outstanding.size())) {
    return false;
  }
  // The idle clock runs exactly while the table is empty (both are updated
  // together after every change).
  if (!table_.empty() && empty_since_) {
    return false;
  }
  const auto stats = table_.stats();
  return stats.complete >= 0 && stats.incomplete >= 0 &&
         static_cast<std::size_t>(stats.complete + stats.incomplete) == table_.size();
}

// -- text -----------------------------------------------------------------------

std::string to_string(const swarm_knobs& k) {
  auto num = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", x);
    return std::string(buf);
  };
  std::string out = "policy ";
  out += to_string(k.policy);
  out += ", interval x" + num(k.interval_scale);
  out += ", leecher interval x" + num(k.leecher_interval_scale);
  out += k.seeder_warning ? ", seeder warning on" : ", seeder warning off";
  out += k.quarantine_strict ? ", quarantine strict" : ", quarantine normal";
  return out;
}

std::string to_string(const health_signals& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%llu seeders, %llu leechers (%llu stalled), %.1f completions/h",
                static_cast<unsigned long long>(s.seeders),
                static_cast<unsigned long long>(s.leechers),
                static_cast<unsigned long long>(s.stalled), s.completion_rate);
  std::string out(to_string(s.state));
  if (s.reasons != 0) {
    out += " [" + reasons_to_string(s.reasons) + "]";
  }
  return out + " " + buf;
}

std::string to_string(const remediation_record& r) {
  std::string out = r.action;
  if (!r.strategy.empty()) {
    out += " " + r.strategy;
  }
  if (!r.reason.empty()) {
    out += " (" + r.reason + ")";
  }
  if (!r.detail.empty()) {
    out += ": " + r.detail;
  }
  out += "; before: " + to_string(r.before);
  if (r.action != "apply" && r.action != "escalate" && r.action != "start") {
    out += "; after: " + to_string(r.after);
  }
  return out;
}

}  // namespace sk
