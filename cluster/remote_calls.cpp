#include "cluster/remote_calls.hpp"

#include <cstddef>
#include <string>

#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "runtime/supervisor.hpp"
#include "runtime/swarm_actor.hpp"

namespace sk::cluster {

bool is_swarm_call(const caf::message& m) { return declares<swarm_operator_interface>(m); }

bool is_supervisor_call(const caf::message& m, const info_hash& h) {
  if (!declares<swarm_supervision_interface>(m)) return false;
  // Every such call names one swarm, and the owner routes by the
  // envelope's hash: it must be the same.
  for (std::size_t i = 0; i < m.size(); ++i)
    if (m.match_element<info_hash>(i)) return m.get_as<info_hash>(i) == h;
  return false;
}

caf::result<caf::message> serve_swarm_call(caf::event_based_actor* self, swarm_directory& dir,
                                           const info_hash& h, std::uint8_t hops,
                                           const caf::message& call) {
  if (!is_swarm_call(call)) return caf::make_error(caf::sec::unexpected_message);
  bool remote = false;
  auto target = dir.serve_forwarded(h, false, &remote);
  if (!target)
    return caf::make_error(caf::sec::cannot_forward_to_invalid_actor, "no swarm for " + h.hex());
  // `make_message(message)` is the message itself: the swarm receives the
  // call as if the requester had sent it, and answers the requester.
  if (!remote) return self->delegate(target, call);
  if (hops >= max_hops) return caf::make_error(caf::sec::request_receiver_down);
  return self->delegate(target, swarm_call_atom::value, h, hops, call);
}

caf::result<caf::message> serve_supervisor_call(caf::event_based_actor* self,
                                                swarm_directory& dir, const info_hash& h,
                                                std::uint8_t hops, const caf::message& call) {
  if (!is_supervisor_call(call, h)) return caf::make_error(caf::sec::unexpected_message);
  bool remote = false;
  auto target = dir.serve_forwarded(h, false, &remote);
  if (target && remote) {
    if (hops >= max_hops) return caf::make_error(caf::sec::request_receiver_down);
    return self->delegate(target, supervisor_call_atom::value, h, hops, call);
  }
  const caf::actor& sup = dir.supervisor();
  if (!sup) return caf::make_error(caf::sec::cannot_forward_to_invalid_actor, "no supervisor");
  return self->delegate(sup, call);
}

}  // namespace sk::cluster
