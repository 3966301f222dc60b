#pragma once
/// The announce every in-process test builds: the request a client sends
/// (`announce_of`) and the same request as a swarm receives it, with the
/// address it came from (`swarm_announce_of`). Tests change the fields they
/// care about on the result. Over the wire, the daemon tests use
/// `announce_target`/`scrape_target` (HTTP, harness.hpp) and
/// `udp_tracker_client` (UDP, udp_tracker_client.hpp).
///
/// Header-only: it needs the tracker's message types, which only the test
/// binaries that link the tracker have.

#include <cstdint>

#include "protocol/announce.hpp"
#include "protocol/types.hpp"
#include "test_util.hpp"
#include "tracker/swarm_messages.hpp"

namespace sk::test {

/// Peer `id` listening on `port` announces `h` with `left` bytes left:
/// nothing up- or downloaded, compact, numwant unset (the tracker's
/// default), no key.
inline announce_request announce_of(const info_hash& h, const peer_id& id, std::uint16_t port,
                                    std::uint64_t left, announce_event ev = announce_event::none) {
  announce_request r;
  r.hash = h;
  r.id = id;
  r.port = port;
  r.left = left;
  r.event = ev;
  r.compact = true;
  r.numwant = -1;
  return r;
}

/// `announce_of` as a swarm receives it from `from`, whose port is the one
/// announced.
inline swarm_announce swarm_announce_of(const info_hash& h, const peer_id& id, const endpoint& from,
                                        std::uint64_t left,
                                        announce_event ev = announce_event::none) {
  swarm_announce a;
  a.request = announce_of(h, id, from.port, left, ev);
  a.peer = from;
  return a;
}

/// The same for peer number `peer` (its id is `pid(peer)`).
inline swarm_announce swarm_announce_of(const info_hash& h, std::uint64_t peer,
                                        const endpoint& from, std::uint64_t left,
                                        announce_event ev = announce_event::none) {
  return swarm_announce_of(h, pid(peer), from, left, ev);
}

}  // namespace sk::test
