#include "actors/cluster/remote_calls.hpp"

#include <cstddef>
#include <string>

#include "actors/directory.hpp"
#include "actors/messages.hpp"

namespace sk::cluster {

bool is_swarm_call(const caf::message& m) {
  // match_elements compares atom constants by value and the size exactly.
  using caf::get_atom;
  using caf::put_atom;
  return m.match_elements<status_atom>() ||
         m.match_elements<status_atom, get_atom, std::uint32_t>() ||
         m.match_elements<history_atom, get_atom>() || m.match_elements<knobs_atom, get_atom>() ||
         m.match_elements<knobs_atom, put_atom, swarm_knobs>() ||
         m.match_elements<policy_atom, get_atom>() ||
         m.match_elements<policy_atom, put_atom, std::string>() ||
         m.match_elements<health_atom, get_atom>();
}

bool is_supervisor_call(const caf::message& m, const info_hash& h) {
  using caf::get_atom;
  using caf::put_atom;
  // The owner routes by the envelope's hash: the call must name the same.
  std::size_t at = 0;
  if (m.match_elements<restart_atom, info_hash>())
    at = 1;
  else if (m.match_elements<policy_atom, get_atom, info_hash>() ||
           m.match_elements<remediate_atom, start_atom, info_hash>() ||
           m.match_elements<remediate_atom, stop_atom, info_hash>() ||
           m.match_elements<policy_atom, put_atom, info_hash, std::string>())
    at = 2;
  else
    return false;
  return m.get_as<info_hash>(at) == h;
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
