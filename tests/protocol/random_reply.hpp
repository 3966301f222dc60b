#pragma once
/// Random announce replies (compact and not, IPv4/IPv6 peers, optional
/// keys, extreme integers) for the differential tests.

#include <random>
#include <string>
#include <vector>

#include "protocol/reply.hpp"
#include "test_support.hpp"

namespace sk::test {

struct random_reply {
  std::string peers4, peers6, tracker_id, warning;
  std::vector<peer_entry> peers;
  announce_reply_view view;
};

inline void fill_random(std::mt19937_64& rng, random_reply& rr) {
  auto big = [&rng] { return static_cast<std::int64_t>(rng()) >> (rng() % 64); };
  announce_reply_view& r = rr.view;
  r = {};
  r.interval = big();
  r.min_interval = big();
  r.stats = {big(), big(), big()};
  r.compact = rng() % 2;
  r.no_peer_id = rng() % 2;
  const std::size_t n = rng() % 4 == 0 ? rng() % 300 : rng() % 8;
  rr.peers4 = random_bytes(rng, 6 * n);
  rr.peers6 = random_bytes(rng, 18 * (rng() % 3 == 0 ? rng() % 20 : 0));
  rr.peers.resize(n);
  for (peer_entry& p : rr.peers) {
    p.id = peer_id::from_bytes(random_bytes(rng, 20));
    std::uint8_t b[16];
    for (auto& x : b) x = static_cast<std::uint8_t>(rng() % 2 ? 0 : rng());
    p.ep.ip =
        rng() % 2 ? ip_address::make_v4(static_cast<std::uint32_t>(rng())) : ip_address::make_v6(b);
    p.ep.port = static_cast<std::uint16_t>(rng());
  }
  rr.tracker_id = rng() % 2 ? random_bytes(rng, rng() % 10) : "";
  rr.warning = rng() % 2 ? random_bytes(rng, rng() % 50) : "";
  r.peers4 = rr.peers4;
  r.peers6 = rr.peers6;
  r.peers = rr.peers.data();
  r.peer_count = rr.peers.size();
  r.tracker_id = rr.tracker_id;
  r.warning_message = rr.warning;
  if (rng() % 2) {
    std::uint8_t b[16];
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    r.external_ip =
        rng() % 2 ? ip_address::make_v4(static_cast<std::uint32_t>(rng())) : ip_address::make_v6(b);
  }
}

}  // namespace sk::test
