#include "cluster/forwarder.hpp"

#include <spdlog/spdlog.h>

#include "cluster/remote_calls.hpp"
#include "runtime/swarm_tickets.hpp"

namespace sk::cluster {

namespace {

struct forwarder_state {
  static inline const char* name = "sk.forwarder";
  info_hash hash;
  std::string owner;
  /// The owner's node actor.
  owner_node_interface owner_node;
  /// After a failed handoff: the swarm kept here, which then serves
  /// everything (the owner's node is no longer asked).
  local_swarm_actor local;
  std::weak_ptr<placement_host> host;
  forwarder_options opts;
  std::size_t in_flight = 0;
  bool closing = false;
  /// Messages since the last idle check.
  std::uint64_t activity = 0;
};

using forwarder_ptr = forwarder_actor::stateful_pointer<forwarder_state>;

void leave_directory(forwarder_ptr self) {
  if (auto h = self->state.host.lock()) h->erase_if_owner(self->state.hash, self->address());
}

/// Counts on the directory's host (gone: nothing to count on).
void count(forwarder_ptr self, std::atomic<std::uint64_t> placement_host::*counter) {
  if (auto h = self->state.host.lock()) (h.get()->*counter).fetch_add(1, std::memory_order_relaxed);
}

void settled(forwarder_ptr self) {
  auto& st = self->state;
  --st.in_flight;
  if (st.closing && st.in_flight == 0) self->quit();
}

/// Sends a swarm operator call (remote_calls.hpp) on: to the owner's node
/// actor in an envelope, or straight to the local swarm after a failed
/// handoff. The answer goes from there to the requester (delegated).
caf::error route_swarm_call(forwarder_ptr self, caf::message call, std::uint8_t hops) {
  auto& st = self->state;
  ++st.activity;
  if (st.local) {
    if (!is_swarm_call(call)) return caf::make_error(caf::sec::unexpected_message);
    // Checked just above against the swarm's operator interface.
    self->delegate(caf::actor_cast<caf::actor>(st.local), std::move(call));
  } else {
    self->delegate(st.owner_node, swarm_call_atom::value, st.hash, hops, std::move(call));
  }
  return caf::none;
}

/// Sends a supervisor operator call about this forwarder's swarm on: to the
/// owner's node actor, or to this node's supervisor after a failed handoff.
caf::error route_supervisor_call(forwarder_ptr self, caf::message call, std::uint8_t hops) {
  auto& st = self->state;
  ++st.activity;
  if (!is_supervisor_call(call, st.hash)) return caf::make_error(caf::sec::unexpected_message);
  if (st.local) {
    auto h = st.host.lock();
    auto sup = h ? h->local_supervisor() : swarm_supervision_interface{};
    if (!sup) return caf::make_error(caf::sec::cannot_forward_to_invalid_actor, "no supervisor");
    // Checked just above against the supervisor's per-swarm interface.
    self->delegate(caf::actor_cast<caf::actor>(sup), std::move(call));
  } else {
    self->delegate(st.owner_node, supervisor_call_atom::value, st.hash, hops, std::move(call));
  }
  return caf::none;
}

/// An operator call whose answer (a `T`) comes from the owner's swarm.
template <class T>
caf::result<T> swarm_call(forwarder_ptr self, caf::message call) {
  if (auto err = route_swarm_call(self, std::move(call), first_hop)) return err;
  return caf::delegated<T>{};
}

/// An operator call whose answer (a `T`) comes from the owner's supervisor.
template <class T>
caf::result<T> supervisor_call(forwarder_ptr self, caf::message call) {
  if (auto err = route_supervisor_call(self, std::move(call), first_hop)) return err;
  return caf::delegated<T>{};
}

forwarder_actor::behavior_type forward_mode(forwarder_ptr self) {
  using caf::get_atom;
  using caf::make_message;
  using caf::put_atom;
  // Every handler of forwarder_actor (cluster/cluster_messages.hpp),
  // checked by the compiler.
  return {
      // -- the network layer's tickets: asked of the owner, settled here -----------
      [self](announce_atom, const announce_ticket_ptr& t) {
        auto& st = self->state;
        ++st.activity;
        if (st.local) {
          self->send(st.local, announce_atom::value, t);
          return;
        }
        ++st.in_flight;
        count(self, &placement_host::forwarded);
        self->request(st.owner_node, st.opts.timeout, announce_atom::value, t->announce, first_hop)
            .then(
                [self, t](const announce_result& r) {
                  t->complete(r);
                  settled(self);
                },
                [self, t](const caf::error&) {
                  count(self, &placement_host::forward_failures);
                  t->fail();
                  settled(self);
                });
      },
      [self](scrape_atom, const scrape_ticket_ptr& t) {
        auto& st = self->state;
        ++st.activity;
        if (st.local) {
          self->send(st.local, scrape_atom::value, t);
          return;
        }
        ++st.in_flight;
        count(self, &placement_host::forwarded);
        self->request(st.owner_node, st.opts.timeout, scrape_atom::value, st.hash, first_hop)
            .then(
                [self, t](const swarm_stats& s) {
                  t->complete(s);
                  settled(self);
                },
                // Dropping the ticket counts zeros (the owner is gone).
                [self](const caf::error&) {
                  count(self, &placement_host::forward_failures);
                  settled(self);
                });
      },
      // -- operator calls: the owner's swarm answers -----------------------------
      [self](status_atom a) { return swarm_call<swarm_status>(self, make_message(a)); },
      [self](status_atom a, get_atom g, std::uint32_t max_peers) {
        return swarm_call<swarm_status>(self, make_message(a, g, max_peers));
      },
      [self](history_atom a, get_atom g) {
        return swarm_call<std::vector<remediation_record>>(self, make_message(a, g));
      },
      [self](knobs_atom a, get_atom g) {
        return swarm_call<swarm_knobs>(self, make_message(a, g));
      },
      [self](knobs_atom a, put_atom p, const swarm_knobs& k) {
        return swarm_call<swarm_knobs>(self, make_message(a, p, k));
      },
      [self](policy_atom a, get_atom g) {
        return swarm_call<std::string>(self, make_message(a, g));
      },
      [self](policy_atom a, put_atom p, const std::string& name) {
        return swarm_call<std::string>(self, make_message(a, p, name));
      },
      [self](health_atom a, get_atom g) {
        return swarm_call<health_report>(self, make_message(a, g));
      },
      // -- operator calls: the owner's supervisor answers ------------------------
      [self](restart_atom a, const info_hash& h) {
        return supervisor_call<std::string>(self, make_message(a, h));
      },
      [self](policy_atom a, put_atom p, const info_hash& h, const std::string& name) {
        return supervisor_call<policy_change>(self, make_message(a, p, h, name));
      },
      [self](policy_atom a, get_atom g, const info_hash& h) {
        return supervisor_call<bool>(self, make_message(a, g, h));
      },
      [self](remediate_atom a, start_atom s, const info_hash& h) {
        return supervisor_call<std::string>(self, make_message(a, s, h));
      },
      [self](remediate_atom a, stop_atom s, const info_hash& h) {
        return supervisor_call<std::string>(self, make_message(a, s, h));
      },
      // -- the directory: no longer needed -----------------------------------------
      [self](caf::leave_atom) {
        auto& st = self->state;
        st.closing = true;
        leave_directory(self);
        if (st.in_flight == 0) self->quit();
      },
      // -- requests another node forwarded here while this node forwards the
      // hash too (views disagree for a moment, or an operator moved the
      // swarm): one more hop, counted (the node actor refuses beyond
      // max_hops); after a failed handoff, served by the swarm kept here.
      [self](announce_atom, swarm_announce& a, std::uint8_t hops) -> caf::result<announce_result> {
        auto& st = self->state;
        ++st.activity;
        if (st.local) {
          self->send(st.local, announce_atom::value, answering_announce_ticket(self, std::move(a)));
          return caf::delegated<announce_result>{};
        }
        return self->delegate(st.owner_node, announce_atom::value, std::move(a),
                              static_cast<std::uint8_t>(hops + 1));
      },
      [self](scrape_atom, const info_hash& h, std::uint8_t hops) -> caf::result<swarm_stats> {
        auto& st = self->state;
        ++st.activity;
        if (st.local) {
          self->send(st.local, scrape_atom::value, answering_scrape_ticket(self));
          return caf::delegated<swarm_stats>{};
        }
        return self->delegate(st.owner_node, scrape_atom::value, h,
                              static_cast<std::uint8_t>(hops + 1));
      },
      [self](swarm_call_atom, const info_hash& h, std::uint8_t hops,
             caf::message& call) -> caf::result<caf::message> {
        if (h != self->state.hash) return caf::make_error(caf::sec::invalid_argument);
        if (auto err = route_swarm_call(self, std::move(call), static_cast<std::uint8_t>(hops + 1)))
          return err;
        return caf::delegated<caf::message>{};
      },
      [self](supervisor_call_atom, const info_hash& h, std::uint8_t hops,
             caf::message& call) -> caf::result<caf::message> {
        if (h != self->state.hash) return caf::make_error(caf::sec::invalid_argument);
        if (auto err =
                route_supervisor_call(self, std::move(call), static_cast<std::uint8_t>(hops + 1)))
          return err;
        return caf::delegated<caf::message>{};
      },
      // -- its own timer -------------------------------------------------------------
      [self](forwarder_idle_atom, std::uint64_t seen) {
        auto& st = self->state;
        if (st.activity == seen && st.in_flight == 0) {
          leave_directory(self);
          self->quit();
          return;
        }
        self->delayed_send(self, st.opts.idle_time, forwarder_idle_atom::value, st.activity);
      },
  };
}

/// The handoff is over (either way): forward from now on, starting with
/// what queued meanwhile.
void handoff_finished(forwarder_ptr self) {
  if (auto h = self->state.host.lock()) --h->handoffs_pending;
  self->set_default_handler(caf::drop);
  self->become(forward_mode(self));
}

/// Gives `snap` to the current owner; on failure tries the owner of a newer
/// view (up to `attempts` more times), then keeps the swarm here.
void hand_over(forwarder_ptr self, swarm_snapshot snap, int attempts) {
  auto& st = self->state;
  const std::size_t peers = snap.peers.size();
  self->request(st.owner_node, st.opts.timeout, caf::migrate_atom::value, caf::put_atom::value,
                snap)
      .then(
          [self, peers](caf::ok_atom) {
            spdlog::info("cluster: swarm {} handed to {} ({} peers)", self->state.hash.hex(),
                         self->state.owner, peers);
            count(self, &placement_host::handoffs_done);
            handoff_finished(self);
          },
          [self, snap, attempts](const caf::error& err) {
            auto& st = self->state;
            auto h = st.host.lock();
            spdlog::warn("cluster: handoff of swarm {} to {} failed ({})", st.hash.hex(), st.owner,
                         self->system().render(err));
            if (h && attempts > 0) {
              if (auto v = h->current_view()) {
                const std::string owner = v->owner(st.hash);
                if (owner != v->self) {
                  if (auto node = v->node(owner)) {
                    st.owner = owner;
                    st.owner_node = caf::actor_cast<owner_node_interface>(node);
                    hand_over(self, snap, attempts - 1);
                    return;
                  }
                }
              }
            }
            // Nobody can take it: keep the swarm here (nothing lost); a
            // later rebalance moves it again.
            if (h) st.local = h->install_local(snap);
            if (st.local) spdlog::warn("cluster: swarm {} kept here", st.hash.hex());
            count(self, &placement_host::handoffs_kept);
            handoff_finished(self);
          });
}

/// Takes the snapshot of `from` and gives it to the owner; then forwards.
void start_handoff(forwarder_ptr self, const local_swarm_actor& from) {
  auto& st = self->state;
  // (handoffs_pending was counted up by spawn_forwarder.)
  // Everything but the handoff's own answers waits in the mailbox, in order.
  self->set_default_handler(caf::skip);
  self->request(from, st.opts.timeout, caf::migrate_atom::value, caf::get_atom::value)
      .then([self](swarm_snapshot& snap) { hand_over(self, std::move(snap), 3); },
            [self](const caf::error&) {
              // The old swarm was gone already (ended idle): nothing to move.
              handoff_finished(self);
            });
}

forwarder_actor::behavior_type forwarder_behavior(forwarder_ptr self, info_hash hash,
                                                  std::string owner, caf::actor owner_node,
                                                  std::weak_ptr<placement_host> host,
                                                  forwarder_options opts,
                                                  local_swarm_actor handoff_from) {
  auto& st = self->state;
  st.hash = hash;
  st.owner = std::move(owner);
  // The view's node handles are node actors (node_actor), which implement
  // owner_node_interface.
  st.owner_node = caf::actor_cast<owner_node_interface>(std::move(owner_node));
  st.host = std::move(host);
  st.opts = opts;
  // A stray error must not end the forwarder (CAF's default handler quits).
  self->set_error_handler([](caf::error&) {});
  self->delayed_send(self, st.opts.idle_time, forwarder_idle_atom::value, std::uint64_t{0});
  if (handoff_from) {
    start_handoff(self, handoff_from);
    // Only the handoff's responses (handled by the request continuations)
    // run until it is done; everything else is skipped (kept in the
    // mailbox) by this behavior and the default handler. Not a full
    // behavior, hence built unchecked; forward_mode replaces it.
    return {forwarder_actor::behavior_type::unsafe_init{},
            caf::behavior{[](forwarder_idle_atom, std::uint64_t) { return caf::skip(); }}};
  }
  return forward_mode(self);
}

}  // namespace

forwarder_actor spawn_forwarder(caf::actor_system& sys, const info_hash& hash, std::string owner,
                                caf::actor owner_node, std::weak_ptr<placement_host> host,
                                forwarder_options opts, local_swarm_actor handoff_from) {
  // Counted before the actor runs: a graceful leave that looks right after
  // set_view() must see every handoff it started.
  if (handoff_from) {
    if (auto h = host.lock()) ++h->handoffs_pending;
  }
  return sys.spawn(forwarder_behavior, hash, std::move(owner), std::move(owner_node),
                   std::move(host), opts, std::move(handoff_from));
}

}  // namespace sk::cluster
