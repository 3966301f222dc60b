#include "cluster/node.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/cluster_messages.hpp"
#include "cluster/rebalance.hpp"
#include "cluster/remote_calls.hpp"
#include "cluster/secret.hpp"
#include "cluster/view.hpp"
#include "runtime/directory.hpp"

namespace sk::cluster {

namespace {

using dial_atom = caf::atom_constant<caf::atom("dial")>;
using replicate_atom = caf::atom_constant<caf::atom("replicate")>;
using handoff_atom = caf::atom_constant<caf::atom("handoff")>;
using confirm_atom = caf::atom_constant<caf::atom("confirm")>;
using rebalance_atom = caf::atom_constant<caf::atom("rebalance")>;
/// (load_atom, member name, announces/s): a member's load (rebalancing).
using load_atom = caf::atom_constant<caf::atom("load")>;

struct replica {
  swarm_snapshot snap;
  health_time received;
};

struct node_state {
  static inline const char* name = "sk.cluster.node";
  swarm_directory* dir = nullptr;
  cluster_config cfg;
  member_info me;
  /// Every member ever heard of (sorted by name; this node included).
  std::vector<member_info> known;
  /// Live members: name -> node actor (not this node).
  std::map<std::string, caf::actor> live;
  std::map<caf::actor_addr, std::string> by_addr;
  /// Members whose connection dropped and that have not come back yet: they
  /// stay in the published view until `connection_timeout` passes (a
  /// dropped duplicate connection is not a crash).
  std::set<std::string> suspects;
  /// Dials in progress ("host:port").
  std::set<std::string> dialing;
  /// Replicas other nodes sent here: origin -> hash -> replica.
  std::map<std::string, std::unordered_map<info_hash, replica, id20_hasher>> replicas;
  std::uint64_t epoch = 0;
  /// Leaving (SIGTERM): no more views with this node in them.
  bool leaving = false;
  /// The graceful leave's answer, delivered once every handoff is done.
  caf::typed_response_promise<std::uint64_t> leave_promise;
  std::size_t moving = 0;
  /// Rebalancing (rebalance.hpp): periods counted, each member's last load
  /// and when it came, each local swarm's announce counter at the last
  /// tick, and the period in which a swarm last moved (in or out).
  std::uint64_t rebalance_round = 0;
  std::map<std::string, std::pair<double, health_time>> loads;
  std::unordered_map<info_hash, std::uint64_t, id20_hasher> announces_seen;
  health_time announces_seen_at{};
  std::unordered_map<info_hash, std::uint64_t, id20_hasher> moved_in_round;
  /// Swarms that arrived here, oldest first (admin API); at most
  /// `max_migration_records`.
  std::deque<migration_record> migrations;
  /// Operator moves announced to this node (hash -> sender) whose swarm
  /// has not arrived yet.
  std::map<std::string, std::string> operator_moves;
};

/// Bound of the migration record ring of one node.
constexpr std::size_t max_migration_records = 64;

using node_ptr = caf::stateful_actor<node_state>*;

std::uint64_t wall_ms() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

void record_migration(node_ptr self, std::string from, const swarm_snapshot& s,
                      std::string reason) {
  auto& st = self->state;
  migration_record r;
  r.hash = s.hash.hex();
  if (reason.empty()) {
    auto it = st.operator_moves.find(r.hash);
    if (it != st.operator_moves.end()) {
      reason = "operator";
      st.operator_moves.erase(it);
    } else {
      reason = "membership";
    }
  }
  r.from = std::move(from);
  r.to = st.me.name;
  r.reason = std::move(reason);
  r.finished_ms = wall_ms();
  r.peers = s.peers.size();
  st.migrations.push_back(std::move(r));
  while (st.migrations.size() > max_migration_records) st.migrations.pop_front();
}

/// The member whose node sent the current message ("" if none matches).
std::string sender_member(node_ptr self) {
  const auto& sender = self->current_sender();
  if (!sender) return {};
  for (const auto& [name, h] : self->state.live)
    if (h.node() == sender->node()) return name;
  return {};
}

cluster_view_ptr make_view(node_ptr self, bool include_self) {
  auto& st = self->state;
  auto v = std::make_shared<cluster_view>();
  v->self = st.me.name;
  if (include_self) v->names.push_back(st.me.name);
  for (const auto& [name, h] : st.live) {
    v->names.push_back(name);
    v->nodes.emplace(name, h);
  }
  // Suspects stay owners until confirmed dead (their swarms do not move
  // on a blip); requests to them fail meanwhile and clients retry.
  if (auto old = st.dir->view()) {
    for (const auto& name : st.suspects) {
      v->names.push_back(name);
      v->nodes.emplace(name, old->node(name));
    }
  }
  std::sort(v->names.begin(), v->names.end());
  v->epoch = ++st.epoch;
  return v;
}

/// Adds the time a replica waited here to its ages (the peers' expiry
/// clocks keep running while it waits).
swarm_snapshot aged(const replica& r) {
  swarm_snapshot s = r.snap;
  const auto waited =
      std::chrono::duration_cast<std::chrono::milliseconds>(health_clock::now() - r.received)
          .count();
  for (auto& p : s.peers) {
    p.first_seen_age_ms += waited;
    p.last_announce_age_ms += waited;
    p.last_progress_age_ms += waited;
    if (p.completed_age_ms >= 0) p.completed_age_ms += waited;
  }
  return s;
}

/// Members of the live set that are gone: their replicas are taken over.
void take_over(node_ptr self, const cluster_view& v) {
  auto& st = self->state;
  // Replicas older than this belong to swarms that ended or moved.
  const auto stale = health_clock::now() - 5 * st.cfg.replication_period;
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
        st.dir->install(aged(r));
        record_migration(self, it->first, r.snap, "crash-replica");
        ++here;
      } else if (auto node = v.node(owner)) {
        self->send(node, caf::migrate_atom::value, caf::put_atom::value, aged(r));
        ++sent;
      }
    }
    spdlog::warn("cluster: member {} is gone; took over {} of its swarms from replicas ({} sent "
                 "to their new owners)",
                 it->first, here, sent);
    it = st.replicas.erase(it);
  }
}

void publish_view(node_ptr self) {
  auto& st = self->state;
  auto v = make_view(self, !st.leaving);
  const std::size_t moving = st.dir->set_view(v);
  std::string names;
  for (const auto& n : v->names) names += (names.empty() ? "" : ",") + n;
  spdlog::info("cluster: members now [{}] (view {}){}", names, v->epoch,
               moving > 0 ? ", handing " + std::to_string(moving) + " swarms over" : "");
  take_over(self, *v);
}

void gossip(node_ptr self) {
  auto& st = self->state;
  for (const auto& [name, h] : st.live) self->send(h, members_atom::value, st.known);
}

void dial(node_ptr self, const std::string& host, std::uint16_t port);

/// Dials every known member that is not live and whose name sorts after
/// this node's (the other side dials the rest: exactly one side of each
/// pair dials, because two simultaneous dials make CAF close one of the two
/// connections, which kills the proxies of that node and looks like a
/// crash), and every seed while alone.
void dial_missing(node_ptr self) {
  auto& st = self->state;
  for (const auto& m : st.known) {
    if (m.name <= st.me.name || st.live.count(m.name) != 0) continue;
    dial(self, m.host, m.port);
  }
  if (st.live.empty()) {
    for (const auto& s : st.cfg.seeds) dial(self, s.host, s.port);
  }
}

void add_live(node_ptr self, const member_info& m, const caf::actor& h) {
  auto& st = self->state;
  if (m.name == st.me.name || !h) return;
  auto it = st.live.find(m.name);
  if (it != st.live.end() && it->second == h) return;
  if (it != st.live.end()) {
    st.by_addr.erase(it->second.address());
    self->demonitor(it->second.address());
  }
  st.live[m.name] = h;
  st.by_addr[h.address()] = m.name;
  self->monitor(h);
  merge_members(st.known, {m});
  const bool back = st.suspects.erase(m.name) != 0;
  spdlog::info("cluster: connected to {} ({}:{}){}", m.name, m.host, m.port,
               back ? " again" : "");
  // Also when it only came back: the view must carry the new handle.
  publish_view(self);
  gossip(self);
}

void dial(node_ptr self, const std::string& host, std::uint16_t port) {
  auto& st = self->state;
  if (host == st.me.host && port == st.me.port) return;
  const std::string key = host + ":" + std::to_string(port);
  if (!st.dialing.insert(key).second) return;
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, st.cfg.connection_timeout, caf::connect_atom::value, host, port)
      .then(
          [self, key](const caf::node_id&, caf::strong_actor_ptr& ptr,
                      const std::set<std::string>&) {
            auto peer = caf::actor_cast<caf::actor>(ptr);
            if (!peer) {
              self->state.dialing.erase(key);
              return;
            }
            self->request(peer, self->state.cfg.connection_timeout, caf::join_atom::value,
                          self->state.me)
                .then(
                    [self, key, peer](const std::vector<member_info>& theirs) {
                      auto& st = self->state;
                      st.dialing.erase(key);
                      if (theirs.empty()) return;
                      // First entry: the answering node itself.
                      auto fresh = merge_members(st.known, theirs);
                      add_live(self, theirs.front(), peer);
                      if (!fresh.empty()) {
                        gossip(self);
                        dial_missing(self);
                      }
                    },
                    [self, key](const caf::error&) { self->state.dialing.erase(key); });
          },
          [self, key](const caf::error& err) {
            self->state.dialing.erase(key);
            spdlog::debug("cluster: cannot reach {}: {}", key, self->system().render(err));
          });
}

void replicate(node_ptr self) {
  auto& st = self->state;
  auto v = st.dir->view();
  if (!v || st.live.empty()) return;
  for (const auto& [hash, swarm] : st.dir->snapshot()) {
    auto target = v->node(v->successor(hash));
    if (!target) continue;
    self->request(swarm, st.cfg.replication_period, snapshot_atom::value)
        .then(
            [self, target](swarm_snapshot& s) {
              self->send(target, replica_atom::value, self->state.me.name, std::move(s));
            },
            [](const caf::error&) {});
  }
}

/// Second half of a rebalance tick, once every local swarm's announce
/// counter is in: this node's load to every member, then the moves.
void rebalance_decide(node_ptr self, std::vector<std::pair<info_hash, std::uint64_t>> counts) {
  auto& st = self->state;
  const auto now = health_clock::now();
  const double elapsed =
      std::chrono::duration<double>(now - st.announces_seen_at).count();
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
  const auto moves =
      plan_rebalance(st.me.name, loads, std::move(rates), st.moved_in_round, st.rebalance_round, rc);
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
    spdlog::info("cluster: rebalance: moving swarm {} ({:.1f} announces/s) from {} (load {:.1f}/s, "
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
  if (st.leaving || !st.dir->view()) return;
  auto swarms = st.dir->snapshot();
  struct pending {
    std::size_t left = 0;
    std::vector<std::pair<info_hash, std::uint64_t>> counts;
  };
  auto p = std::make_shared<pending>();
  p->left = swarms.size();
  if (p->left == 0) {
    rebalance_decide(self, {});
    return;
  }
  // Answers must be in before the next tick.
  const auto timeout = std::max(std::chrono::milliseconds(1), st.cfg.rebalance_period / 2);
  for (const auto& [hash, swarm] : swarms) {
    const info_hash h = hash;
    self->request(caf::actor_cast<swarm_interface>(swarm), timeout, ::sk::status_atom::value)
        .then(
            [self, p, h](const ::sk::swarm_status& s) {
              p->counts.emplace_back(h, s.announces);
              if (--p->left == 0) rebalance_decide(self, std::move(p->counts));
            },
            [self, p](const caf::error&) {
              // Ended or moved meanwhile: it has no load here any more.
              if (--p->left == 0) rebalance_decide(self, std::move(p->counts));
            });
  }
}

caf::behavior node_actor(node_ptr self, swarm_directory* dir, cluster_config cfg,
                         member_info me) {
  auto& st = self->state;
  st.dir = dir;
  st.cfg = std::move(cfg);
  st.me = std::move(me);
  st.known.push_back(st.me);
  self->set_error_handler([](caf::error&) {});
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    auto it = st.by_addr.find(dm.source);
    if (it == st.by_addr.end()) return;
    const std::string name = it->second;
    st.by_addr.erase(it);
    auto l = st.live.find(name);
    if (l == st.live.end() || l->second.address() != dm.source) return;
    st.live.erase(l);
    // Suspect, not dead yet: dial it again at once (if this side dials it)
    // and declare it dead only if it is not back within the timeout.
    st.suspects.insert(name);
    spdlog::warn("cluster: connection to {} dropped ({})", name,
                 self->system().render(dm.reason));
    for (const auto& m : st.known)
      if (m.name == name && m.name > st.me.name) dial(self, m.host, m.port);
    self->delayed_send(self, st.cfg.connection_timeout, confirm_atom::value, name);
  });
  publish_view(self);
  self->send(self, dial_atom::value);
  self->delayed_send(self, st.cfg.replication_period, replicate_atom::value);
  if (st.cfg.rebalance_period.count() > 0)
    self->delayed_send(self, st.cfg.rebalance_period, rebalance_atom::value);
  return {
      [self](confirm_atom, const std::string& name) {
        auto& st = self->state;
        if (st.suspects.erase(name) == 0) return;  // back already
        spdlog::warn("cluster: lost {}", name);
        publish_view(self);
      },
      [self](dial_atom) {
        dial_missing(self);
        self->delayed_send(self, self->state.cfg.reconnect_period, dial_atom::value);
      },
      [self](replicate_atom) {
        replicate(self);
        self->delayed_send(self, self->state.cfg.replication_period, replicate_atom::value);
      },
      [self](rebalance_atom) {
        rebalance_tick(self);
        self->delayed_send(self, self->state.cfg.rebalance_period, rebalance_atom::value);
      },
      [self](load_atom, const std::string& name, double load) {
        self->state.loads[name] = {load, health_clock::now()};
      },
      [self](caf::join_atom, const member_info& m) -> std::vector<member_info> {
        auto& st = self->state;
        auto peer = caf::actor_cast<caf::actor>(self->current_sender());
        auto fresh = merge_members(st.known, {m});
        if (!st.leaving) add_live(self, m, peer);
        if (!fresh.empty()) dial_missing(self);
        std::vector<member_info> out{st.me};
        for (const auto& k : st.known)
          if (k.name != st.me.name) out.push_back(k);
        return out;
      },
      [self](members_atom, const std::vector<member_info>& theirs) {
        auto& st = self->state;
        if (!merge_members(st.known, theirs).empty()) {
          gossip(self);
          dial_missing(self);
        }
      },
      [self](members_atom, caf::get_atom) {
        auto v = self->state.dir->view();
        return v ? v->names : std::vector<std::string>{self->state.me.name};
      },
      [self](caf::leave_atom, const std::string& name) {
        auto& st = self->state;
        // Its swarms were handed over already: its replicas are stale.
        st.replicas.erase(name);
        st.suspects.erase(name);
        auto l = st.live.find(name);
        if (l == st.live.end()) return;
        st.by_addr.erase(l->second.address());
        self->demonitor(l->second.address());
        st.live.erase(l);
        spdlog::info("cluster: {} leaves", name);
        publish_view(self);
      },
      [self](announce_atom, const swarm_announce& a,
             std::uint8_t hops) -> caf::result<caf::message> {
        auto& st = self->state;
        bool remote = false;
        auto target = st.dir->serve_forwarded(a.request.hash, true, &remote);
        if (!target) return caf::make_error(caf::sec::request_receiver_down);
        if (!remote) return self->delegate(target, announce_atom::value, a);
        // This node forwards the hash itself: one more hop through its
        // forwarder (which also queues it during a handoff).
        if (hops >= max_hops) return caf::make_error(caf::sec::request_receiver_down);
        return self->delegate(target, announce_atom::value, a, hops);
      },
      [self](scrape_atom, const info_hash& h, std::uint8_t hops) -> caf::result<caf::message> {
        auto& st = self->state;
        bool remote = false;
        auto target = st.dir->serve_forwarded(h, false, &remote);
        if (!target) return caf::make_message(swarm_stats{});  // unknown torrent: zeros
        if (!remote) return self->delegate(target, scrape_atom::value);
        if (hops >= max_hops) return caf::make_message(swarm_stats{});
        return self->delegate(target, scrape_atom::value, h, hops);
      },
      // Operator calls on a swarm this node owns (remote_calls.hpp).
      [self](swarm_call_atom, const info_hash& h, std::uint8_t hops, const caf::message& call) {
        return serve_swarm_call(self, *self->state.dir, h, hops, call);
      },
      [self](supervisor_call_atom, const info_hash& h, std::uint8_t hops,
             const caf::message& call) {
        return serve_supervisor_call(self, *self->state.dir, h, hops, call);
      },
      [self](caf::migrate_atom, caf::put_atom, const swarm_snapshot& s) -> caf::result<caf::ok_atom> {
        if (!self->state.dir->install(s)) return caf::make_error(caf::sec::request_receiver_down);
        // Arrived: not moved again for a few rebalance periods (no ping-pong).
        self->state.moved_in_round[s.hash] = self->state.rebalance_round;
        record_migration(self, sender_member(self), s, {});
        return caf::ok_atom::value;
      },
      [self](node_status_atom) {
        auto& st = self->state;
        node_status out;
        out.name = st.me.name;
        out.swarms = st.dir->size();
        out.handoffs_pending = st.dir->handoffs_pending();
        for (const auto& m : st.known) {
          const char* state = m.name == st.me.name || st.live.count(m.name) != 0 ? "live"
                              : st.suspects.count(m.name) != 0                    ? "suspect"
                                                                                  : "gone";
          out.members.push_back(member_state{m.name, m.host, m.port, state});
        }
        out.migrations.assign(st.migrations.begin(), st.migrations.end());
        return out;
      },
      [self](movenote_atom, const info_hash& h, const std::string& from) {
        auto& st = self->state;
        const std::string hex = h.hex();
        // The note may come after the swarm (different senders): relabel.
        for (auto it = st.migrations.rbegin(); it != st.migrations.rend(); ++it) {
          if (it->hash == hex && it->reason == "membership") {
            it->reason = "operator";
            return;
          }
        }
        if (st.operator_moves.size() >= max_migration_records) st.operator_moves.clear();
        st.operator_moves[hex] = from;
      },
      [self](replica_atom, const std::string& origin, swarm_snapshot& s) {
        auto& st = self->state;
        if (st.live.count(origin) == 0) return;  // from a member already gone
        const info_hash h = s.hash;
        st.replicas[origin][h] = replica{std::move(s), health_clock::now()};
      },
      [self](caf::leave_atom) -> caf::result<std::uint64_t> {
        // Graceful leave: hand everything over (views without this node),
        // then wait until every handoff is acknowledged.
        auto& st = self->state;
        if (st.live.empty()) return std::uint64_t{0};
        st.leaving = true;
        auto v = make_view(self, false);
        const std::size_t moving = st.dir->set_view(v);
        spdlog::info("cluster: leaving; handing {} swarms over", moving);
        st.leave_promise = self->make_response_promise<std::uint64_t>();
        st.moving = moving;
        self->send(self, handoff_atom::value);
        return st.leave_promise;
      },
      [self](handoff_atom) {
        auto& st = self->state;
        if (st.dir->handoffs_pending() > 0) {
          self->delayed_send(self, std::chrono::milliseconds(20), handoff_atom::value);
          return;
        }
        for (const auto& [name, h] : st.live) self->send(h, caf::leave_atom::value, st.me.name);
        st.leave_promise.deliver(std::uint64_t{st.moving});
      },
  };
}

}  // namespace

tls_identity configure_actor_system(caf::actor_system_config& sys_cfg, const cluster_config& cfg) {
  if (!openssl_error_queue_fix()) throw std::logic_error("unreachable");
  // Under $TMPDIR when set (tests put it in their own directory).
  const char* tmp = std::getenv("TMPDIR");
  auto id = write_tls_identity(cfg.secret, tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  sys_cfg.load<caf::io::middleman>();
  sys_cfg.load<caf::openssl::manager>();
  sys_cfg.openssl_certificate = id.cert_file;
  sys_cfg.openssl_key = id.key_file;
  sys_cfg.openssl_cafile = id.cert_file;
  sys_cfg.set("middleman.heartbeat-interval", caf::timespan{cfg.heartbeat_interval});
  sys_cfg.set("middleman.connection-timeout", caf::timespan{cfg.connection_timeout});
  register_types(sys_cfg);
  return id;
}

cluster_node::cluster_node(caf::actor_system& sys, swarm_directory& dir, const cluster_config& cfg)
    : sys_(sys), dir_(dir), cfg_(cfg) {
  if (auto err = cfg_.validate(); !err.empty()) throw std::invalid_argument(err);
  self_.host = cfg_.advertised_host();
  self_.port = cfg_.port;
  self_.name = cfg_.node_name.empty() ? self_.host + ":" + std::to_string(cfg_.port)
                                      : cfg_.node_name;
  self_.incarnation = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

cluster_node::~cluster_node() { stop(); }

void cluster_node::start() {
  if (actor_) return;
  forwarder_options fo;
  fo.timeout = cfg_.forward_timeout;
  dir_.set_forwarder_options(fo);
  // Published before the actor dials anybody, so a peer dialling back finds
  // it. The port speaks TLS only (certificates required both ways).
  actor_ = sys_.spawn<caf::hidden>(node_actor, &dir_, cfg_, self_);
  sys_.registry().put(node_registry_key, actor_);
  auto port = caf::openssl::publish(actor_, cfg_.port, cfg_.bind.c_str(), true);
  if (!port) {
    sys_.registry().erase(node_registry_key);
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    actor_ = {};
    throw std::runtime_error("cannot listen on cluster port " + cfg_.bind + ":" +
                             std::to_string(cfg_.port) + ": " + sys_.render(port.error()));
  }
  port_ = *port;
  spdlog::info("cluster: node {} listening on {}:{} (TLS, shared-secret identity)", self_.name,
               cfg_.bind, port_);
}

std::vector<std::string> cluster_node::members() {
  if (!actor_) return {};
  caf::scoped_actor self{sys_};
  std::vector<std::string> out;
  self->request(actor_, std::chrono::seconds(5), members_atom::value, caf::get_atom::value)
      .receive([&](std::vector<std::string>& names) { out = std::move(names); },
               [](caf::error&) {});
  return out;
}

std::size_t cluster_node::leave(std::chrono::milliseconds deadline) {
  if (!actor_) return 0;
  caf::scoped_actor self{sys_};
  std::size_t moved = 0;
  self->request(actor_, deadline, caf::leave_atom::value)
      .receive([&](std::uint64_t n) { moved = static_cast<std::size_t>(n); },
               [&](caf::error& err) {
                 spdlog::warn("cluster: leave did not finish: {}", sys_.render(err));
               });
  return moved;
}

void cluster_node::stop() {
  if (!actor_) return;
  sys_.registry().erase(node_registry_key);
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  actor_ = {};
}

}  // namespace sk::cluster
