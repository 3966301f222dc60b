// The node actor's migration room: swarms that arrive with their state (a
// forwarder's handoff, a replica sent on), the record of each arrival (the
// admin API's migrations), and this node's graceful leave:
//
//   (leave_atom) ─▶ a view without this node ─▶ the directory hands every
//   local swarm over ─▶ (handoff_atom) polls until none is pending and no
//   dial is in flight ─▶ every member is told ─▶ the answer: how many swarms
//   moved
#include <chrono>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "cluster/node_state.hpp"
#include "runtime/directory.hpp"

namespace sk::cluster {

namespace {

std::uint64_t epoch_ms(std::chrono::system_clock::time_point t) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

/// The member whose node sent the current message ("" if none matches).
std::string sender_member(node_ptr self) {
  const auto& sender = self->current_sender();
  if (!sender) return {};
  for (const auto& [name, h] : self->state.live)
    if (h.node() == sender->node()) return name;
  return {};
}

}  // namespace

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
  ++st.arrivals[r.reason];
  r.finished_ms = epoch_ms(st.wall());
  r.peers = s.peers.size();
  st.migrations.push_back(std::move(r));
  while (st.migrations.size() > max_migration_records) st.migrations.pop_front();
}

namespace {

/// A sender on an older view may hand over a swarm that this node's newer
/// view gives to a third member (two members joined at about the same
/// time): the swarm goes on to that member, or the owner would serve an
/// empty swarm while this node keeps the real one. A swarm whose sender is
/// its owner by rendezvous came on purpose (a rebalance), as did an
/// operator's move: those stay.
void pass_on_if_stale(node_ptr self, const info_hash& h, const std::string& from,
                      bool operator_move) {
  auto& st = self->state;
  if (operator_move || st.leaving) return;
  const auto v = st.dir->view();
  if (!v) return;
  const std::string owner = v->owner(h);
  if (owner == v->self || owner == from) return;
  const auto why = st.dir->move(h, owner);
  if (why.empty())
    spdlog::info("cluster: swarm {} arrived from {} on an older view; handed on to its owner {}",
                 h.hex(), from.empty() ? std::string("?") : from, owner);
}

}  // namespace

node_migration_part::behavior_type migration_behavior(node_ptr self) {
  return {
      [self](caf::migrate_atom, caf::put_atom,
             const swarm_snapshot& s) -> caf::result<caf::ok_atom> {
        // A leaving node takes nothing in: the sender keeps the swarm (it
        // serves it, or writes it to its own state file when it is leaving
        // too) rather than hand it to a node about to stop.
        if (self->state.leaving) return caf::make_error(caf::sec::request_receiver_down);
        if (!self->state.dir->install(s)) return caf::make_error(caf::sec::request_receiver_down);
        // Arrived: not moved again for a few rebalance periods (no ping-pong).
        self->state.moved_in_round[s.hash] = self->state.rebalance_round;
        const std::string from = sender_member(self);
        const bool operator_move = self->state.operator_moves.count(s.hash.hex()) != 0;
        record_migration(self, from, s, {});
        pass_on_if_stale(self, s.hash, from, operator_move);
        return caf::ok_atom::value;
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
      [self](caf::leave_atom) -> caf::result<std::uint64_t> {
        // Graceful leave: hand everything over (views without this node),
        // then wait until every handoff is acknowledged.
        auto& st = self->state;
        st.leaving = true;
        if (st.live.empty()) {
          // Alone: nothing to hand over, and nobody who joins now gets any.
          st.left = true;
          st.moving = 0;
        } else {
          st.view = make_view(self, false);
          st.moving = st.dir->set_view(st.view);
          spdlog::info("cluster: leaving; handing {} swarms over", st.moving);
        }
        st.leave_promise = self->make_response_promise<std::uint64_t>();
        self->send(self, handoff_atom::value);
        return st.leave_promise;
      },
      [self](handoff_atom) {
        auto& st = self->state;
        // Also until every dial in flight has settled (connection_timeout
        // at most): nothing is left half set up when the node stops.
        if (st.dir->handoffs_pending() > 0 || !st.dialing.empty()) {
          self->delayed_send(self, std::chrono::milliseconds(20), handoff_atom::value);
          return;
        }
        for (const auto& [name, h] : st.live) self->send(h, caf::leave_atom::value, st.me.name);
        st.left = true;
        st.leave_promise.deliver(std::uint64_t{st.moving});
      },
  };
}

}  // namespace sk::cluster
