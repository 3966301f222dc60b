#include "cluster/remote_calls.hpp"

#include <cstddef>
#include <string>

#include "runtime/directory.hpp"
#include "runtime/supervisor_interface.hpp"
#include "runtime/swarm_interface.hpp"
#include "runtime/swarm_tickets.hpp"
#include "runtime/typed_behaviors.hpp"

namespace sk::cluster {

namespace {

/// The relay part of a remote handle of this node's directory: every one is
/// a forwarder (this cluster's placement makes them), which implements it.
node_relay_part relay_of(const remote_swarm_interface& remote) {
  return caf::actor_cast<node_relay_part>(remote);
}

caf::result<caf::message> serve_swarm_call(caf::local_actor* self, swarm_directory& dir,
                                           const info_hash& h, std::uint8_t hops,
                                           const caf::message& call) {
  if (!is_swarm_call(call)) return caf::make_error(caf::sec::unexpected_message);
  auto target = dir.serve_forwarded(h, false);
  if (target.local) {
    // `make_message(message)` is the message itself: the swarm receives the
    // call as if the requester had sent it, and answers the requester.
    // (Checked above against the swarm's operator interface.)
    return self->delegate(caf::actor_cast<caf::actor>(target.local), call);
  }
  if (!target.remote)
    return caf::make_error(caf::sec::cannot_forward_to_invalid_actor, "no swarm for " + h.hex());
  if (hops >= max_hops) return caf::make_error(caf::sec::request_receiver_down);
  return self->delegate(relay_of(target.remote), swarm_call_atom::value, h, hops, call);
}

caf::result<caf::message> serve_supervisor_call(caf::local_actor* self, swarm_directory& dir,
                                                const info_hash& h, std::uint8_t hops,
                                                const caf::message& call) {
  if (!is_supervisor_call(call, h)) return caf::make_error(caf::sec::unexpected_message);
  auto target = dir.serve_forwarded(h, false);
  if (target.remote) {
    if (hops >= max_hops) return caf::make_error(caf::sec::request_receiver_down);
    return self->delegate(relay_of(target.remote), supervisor_call_atom::value, h, hops, call);
  }
  const caf::actor& sup = dir.supervisor();
  if (!sup) return caf::make_error(caf::sec::cannot_forward_to_invalid_actor, "no supervisor");
  return self->delegate(sup, call);
}

}  // namespace

bool is_swarm_call(const caf::message& m) { return declares<swarm_operator_interface>(m); }

bool is_supervisor_call(const caf::message& m, const info_hash& h) {
  if (!declares<swarm_supervision_interface>(m)) return false;
  // Every such call names one swarm, and the owner routes by the
  // envelope's hash: it must be the same.
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.match_element<info_hash>(i)) return m.get_as<info_hash>(i) == h;
  return false;
}

node_relay_part::behavior_type relay_behavior(caf::local_actor* self, swarm_directory& dir) {
  swarm_directory* d = &dir;
  return {
      [self, d](announce_atom, swarm_announce& a,
                std::uint8_t hops) -> caf::result<announce_result> {
        auto target = d->serve_forwarded(a.request.hash, true);
        if (target.local) {
          caf::anon_send(target.local, announce_atom::value,
                         answering_announce_ticket(self, std::move(a)));
          return caf::delegated<announce_result>{};
        }
        // This node forwards the hash itself: one more hop through its
        // forwarder (which also queues it during a handoff).
        if (!target.remote || hops >= max_hops)
          return caf::make_error(caf::sec::request_receiver_down);
        return self->delegate(relay_of(target.remote), announce_atom::value, std::move(a), hops);
      },
      [self, d](scrape_atom, const info_hash& h, std::uint8_t hops) -> caf::result<swarm_stats> {
        auto target = d->serve_forwarded(h, false);
        if (target.local) {
          caf::anon_send(target.local, scrape_atom::value, answering_scrape_ticket(self));
          return caf::delegated<swarm_stats>{};
        }
        // An unknown torrent, or too many hops: zeros.
        if (!target.remote || hops >= max_hops) return swarm_stats{};
        return self->delegate(relay_of(target.remote), scrape_atom::value, h, hops);
      },
      [self, d](swarm_call_atom, const info_hash& h, std::uint8_t hops, const caf::message& call) {
        return serve_swarm_call(self, *d, h, hops, call);
      },
      [self, d](supervisor_call_atom, const info_hash& h, std::uint8_t hops,
                const caf::message& call) {
        return serve_supervisor_call(self, *d, h, hops, call);
      },
  };
}

}  // namespace sk::cluster
