// The node actor's membership room: the member list (gossip), dials (one
// side of each pair dials), the live set (a connection per member, watched
// by monitors) and the view the directory routes by.
//
//   seed / gossip ─▶ known ─▶ dial_missing ─▶ connect + (join_atom, me) ─▶ live
//   live member's connection drops ─▶ suspect ─(back within connection_timeout)─▶ live
//                                          └─(not back: confirm_atom)─▶ gone
//   live member says it leaves ─▶ departed (never dialled; back when a newer
//                                 incarnation is heard of or it dials here)
//   this node leaves ─▶ dials nobody any more
//   every change of the live set ─▶ publish_view
#include <algorithm>
#include <string>

#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/node_state.hpp"
#include "runtime/directory.hpp"

namespace sk::cluster {

namespace {

void gossip(node_ptr self) {
  auto& st = self->state;
  for (const auto& [name, h] : st.live) self->send(h, members_atom::value, st.known);
}

void dial(node_ptr self, const std::string& host, std::uint16_t port);

/// True when `m` is the incarnation of its name that said it leaves (or an
/// older one).
bool has_departed(const node_state& st, const member_info& m) {
  auto d = st.departed.find(m.name);
  return d != st.departed.end() && m.incarnation <= d->second;
}

/// Dials every known member that is not live and whose name sorts after
/// this node's (the other side dials the rest: exactly one side of each
/// pair dials, because two simultaneous dials make CAF close one of the two
/// connections, which kills the proxies of that node and looks like a
/// crash), and every seed while alone.
void dial_missing(node_ptr self) {
  auto& st = self->state;
  for (const auto& m : st.known) {
    if (m.name <= st.me.name || st.live.count(m.name) != 0 || has_departed(st, m)) continue;
    dial(self, m.host, m.port);
  }
  if (st.live.empty()) {
    for (const auto& s : st.cfg.seeds) dial(self, s.host, s.port);
  }
}

void add_live(node_ptr self, const member_info& m, const node_actor& h) {
  auto& st = self->state;
  if (m.name == st.me.name || !h) return;
  auto it = st.live.find(m.name);
  if (it != st.live.end() && it->second == h) return;
  st.departed.erase(m.name);  // back: it dialled here, or answered a dial
  if (it != st.live.end()) {
    st.by_addr.erase(it->second.address());
    self->demonitor(it->second.address());
  }
  st.live[m.name] = h;
  st.by_addr[h.address()] = m.name;
  self->monitor(h);
  merge_members(st.known, {m});
  const bool back = st.suspects.erase(m.name) != 0;
  spdlog::info("cluster: connected to {} ({}:{}){}", m.name, m.host, m.port, back ? " again" : "");
  // Also when it only came back: the view must carry the new handle.
  publish_view(self);
  gossip(self);
}

void dial(node_ptr self, const std::string& host, std::uint16_t port) {
  auto& st = self->state;
  // A leaving node makes no new connection: it is about to stop.
  if (st.leaving) return;
  if (host == st.me.host && port == st.me.port) return;
  // A seed's address may be a member that left.
  for (const auto& m : st.known)
    if (m.host == host && m.port == port && has_departed(st, m)) return;
  const std::string key = host + ":" + std::to_string(port);
  if (!st.dialing.insert(key).second) return;
  auto mm = self->system().openssl_manager().actor_handle();
  self->request(mm, st.cfg.connection_timeout, caf::connect_atom::value, host, port)
      .then(
          [self, key](const caf::node_id&, caf::strong_actor_ptr& ptr,
                      const std::set<std::string>&) {
            // Every node publishes its node actor on the cluster port.
            auto peer = caf::actor_cast<node_actor>(ptr);
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

/// A live member's connection dropped: suspect, not dead yet. Dialled again
/// at once (if this side dials it) and declared dead only if it is not back
/// within the connection timeout.
void on_down(node_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto it = st.by_addr.find(dm.source);
  if (it == st.by_addr.end()) return;
  const std::string name = it->second;
  st.by_addr.erase(it);
  auto l = st.live.find(name);
  if (l == st.live.end() || l->second.address() != dm.source) return;
  st.live.erase(l);
  st.suspects.insert(name);
  spdlog::warn("cluster: connection to {} dropped ({})", name, self->system().render(dm.reason));
  for (const auto& m : st.known)
    if (m.name == name && m.name > st.me.name) dial(self, m.host, m.port);
  self->delayed_send(self, st.cfg.connection_timeout, confirm_atom::value, name);
}

}  // namespace

cluster_view_ptr make_view(node_ptr self, bool include_self) {
  auto& st = self->state;
  auto v = std::make_shared<cluster_view>();
  v->self = st.me.name;
  if (include_self) v->names.push_back(st.me.name);
  for (const auto& [name, h] : st.live) {
    v->names.push_back(name);
    v->nodes.emplace(name, caf::actor_cast<caf::actor>(h));
  }
  // Suspects stay owners until confirmed dead (their swarms do not move
  // on a blip); requests to them fail meanwhile and clients retry.
  if (st.view) {
    for (const auto& name : st.suspects) {
      v->names.push_back(name);
      v->nodes.emplace(name, st.view->node(name));
    }
  }
  std::sort(v->names.begin(), v->names.end());
  v->epoch = ++st.epoch;
  return v;
}

void publish_view(node_ptr self) {
  auto& st = self->state;
  if (st.left) return;
  auto v = make_view(self, !st.leaving);
  st.view = v;
  const std::size_t moving = st.dir->set_view(v);
  std::string names;
  for (const auto& n : v->names) names += (names.empty() ? "" : ",") + n;
  spdlog::info("cluster: members now [{}] (view {}){}", names, v->epoch,
               moving > 0 ? ", handing " + std::to_string(moving) + " swarms over" : "");
  take_over(self, *v, self->clock().now());
}

void start_membership(node_ptr self) {
  auto& st = self->state;
  st.known.push_back(st.me);
  self->set_down_handler([self](caf::down_msg& dm) { on_down(self, dm); });
  publish_view(self);
  self->send(self, dial_atom::value);
}

node_membership_part::behavior_type membership_behavior(node_ptr self) {
  return {
      [self](caf::join_atom, const member_info& m) -> std::vector<member_info> {
        auto& st = self->state;
        // Only node actors join (the cluster port speaks TLS with the
        // shared secret's identity, and only the node actor is published).
        auto peer = caf::actor_cast<node_actor>(self->current_sender());
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
      [self](caf::leave_atom, const std::string& name) {
        auto& st = self->state;
        // Its swarms were handed over already: its replicas are stale.
        st.replicas.erase(name);
        st.replica_received.erase(name);
        st.suspects.erase(name);
        // Not dialled again: it is stopping (a new connection would only
        // race its shutdown) and, once stopped, gone for good unless it
        // starts again as a newer incarnation.
        for (const auto& m : st.known)
          if (m.name == name) st.departed[name] = m.incarnation;
        auto l = st.live.find(name);
        if (l == st.live.end()) return;
        st.by_addr.erase(l->second.address());
        self->demonitor(l->second.address());
        st.live.erase(l);
        spdlog::info("cluster: {} leaves", name);
        publish_view(self);
      },
      [self](members_atom, caf::get_atom) {
        const auto& v = self->state.view;
        return v ? v->names : std::vector<std::string>{self->state.me.name};
      },
      [self](dial_atom) {
        dial_missing(self);
        self->delayed_send(self, self->state.cfg.reconnect_period, dial_atom::value);
      },
      [self](confirm_atom, const std::string& name) {
        auto& st = self->state;
        if (st.suspects.erase(name) == 0) return;  // back already
        spdlog::warn("cluster: lost {}", name);
        publish_view(self);
      },
  };
}

}  // namespace sk::cluster
