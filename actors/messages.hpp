#pragma once
/// Messages between network actors and swarm actors. Plain structs with
/// `inspect()` so that they can cross nodes once the cluster arrives; they
/// are registered in one place (`register_message_types`).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "protocol/announce.hpp"
#include "protocol/reply.hpp"
#include "protocol/types.hpp"

namespace sk {

// Atoms (<= 10 characters, CAF 0.17).
using announce_atom = caf::atom_constant<caf::atom("announce")>;
using scrape_atom = caf::atom_constant<caf::atom("scrape")>;
using sweep_atom = caf::atom_constant<caf::atom("sweep")>;

/// An announce as a swarm actor receives it: the parsed request plus the
/// address the network layer decided the peer is reachable at.
struct swarm_announce {
  announce_request request;
  /// Source address (socket, or trusted proxy header, or trusted `ip`) and
  /// the announced port.
  endpoint peer;
};

/// What a swarm answers to an announce: counts, and the selected peers in the
/// form the requester asked for. Encoding into bencode/UDP happens in net/.
struct announce_result {
  swarm_stats stats;
  std::int64_t interval = 0;
  std::int64_t min_interval = 0;
  /// Compact peers (compact requests): 6 bytes per IPv4 peer, 18 per IPv6.
  std::string peers4;
  std::string peers6;
  /// Non-compact requests: selected peers with ids (IPv4 and IPv6 alike).
  std::vector<peer_entry> peers;
  /// Set by the swarm (later: self-healing warnings); empty = none.
  std::string warning_message;
};

/// Registers every message type above with the actor system config.
void register_message_types(caf::actor_system_config& cfg);

// inspect() overloads for CAF serialization.
template <class Inspector, class Tag>
typename Inspector::result_type inspect(Inspector& f, id20<Tag>& x) {
  return f(caf::meta::type_name("id20"), x.bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ip_address& x) {
  return f(caf::meta::type_name("ip_address"), x.v6, x.bytes);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, endpoint& x) {
  return f(caf::meta::type_name("endpoint"), x.ip, x.port);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, peer_entry& x) {
  return f(caf::meta::type_name("peer_entry"), x.id, x.ep);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_stats& x) {
  return f(caf::meta::type_name("swarm_stats"), x.complete, x.incomplete, x.downloaded);
}
/// CAF 0.17 knows no std::optional: a presence flag plus the value, written
/// back by a load callback when deserializing. Found by ADL through the
/// template argument (namespace sk).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, std::optional<ip_address>& x) {
  bool present = x.has_value();
  ip_address value = present ? *x : ip_address{};
  auto load = caf::meta::load_callback([&]() -> caf::error {
    if (present) {
      x = value;
    } else {
      x.reset();
    }
    return caf::none;
  });
  return f(caf::meta::type_name("optional<ip_address>"), present, value, load);
}
// announce_event (an enum class) needs no overload: CAF 0.17 serializes enums
// through their underlying type.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, announce_request& x) {
  return f(caf::meta::type_name("announce_request"), x.hash, x.id, x.port, x.uploaded, x.downloaded,
           x.left, x.numwant, x.event, x.compact, x.no_peer_id, x.key, x.tracker_id, x.claimed_ip);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, swarm_announce& x) {
  return f(caf::meta::type_name("swarm_announce"), x.request, x.peer);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, announce_result& x) {
  return f(caf::meta::type_name("announce_result"), x.stats, x.interval, x.min_interval, x.peers4,
           x.peers6, x.peers, x.warning_message);
}

}  // namespace sk
