#pragma once
/// Helpers shared by the actors tests: ids, endpoints and an injected clock.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tracker/peer_table.hpp"
#include "tracker/swarm_config.hpp"
#include "protocol/types.hpp"

namespace sk::test {

/// Short timings for actor tests on the simulated clock; a fixed selection
/// seed so peer choices repeat.
inline swarm_config short_config(std::uint64_t rng_seed) {
  swarm_config c;
  c.announce_interval = std::chrono::seconds(60);
  c.min_interval = std::chrono::seconds(30);
  c.peer_timeout = std::chrono::seconds(150);
  c.sweep_period = std::chrono::seconds(10);
  c.idle_lifetime = std::chrono::seconds(100);
  c.rng_seed = rng_seed;
  return c;
}

/// A peer_id like a real client's: "-SK0001-" then the number in 12 digits.
inline peer_id pid(std::uint64_t n) {
  char buf[21];
  std::snprintf(buf, sizeof buf, "-SK0001-%012llu", static_cast<unsigned long long>(n));
  return peer_id::from_bytes(std::string_view(buf, 20));
}

/// An info_hash whose 20 bytes are all `b`.
inline info_hash filled_hash(std::uint8_t b) {
  info_hash h;
  h.bytes.fill(b);
  return h;
}

/// A peer_id carrying `n` little-endian in its first four bytes (the rest
/// zero but the last, 0x42): distinct ids with nothing of a client's prefix.
inline peer_id numbered_peer(std::uint32_t n) {
  peer_id p;
  for (std::size_t k = 0; k < 4; ++k) p.bytes[k] = static_cast<std::uint8_t>(n >> (8 * k));
  p.bytes[19] = 0x42;
  return p;
}

/// An info_hash whose bytes are all `b` except the last, which is `n`.
inline info_hash ih(std::uint8_t b, std::uint8_t n = 0) {
  info_hash h;
  h.bytes.fill(b);
  h.bytes[19] = n;
  return h;
}

inline endpoint v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d,
                   std::uint16_t port) {
  const std::uint8_t raw[4] = {a, b, c, d};
  return endpoint{ip_address::make_v4(raw), port};
}

/// 2001:db8::<hi>:<lo>, port.
inline endpoint v6(std::uint8_t hi, std::uint8_t lo, std::uint16_t port) {
  std::uint8_t raw[16] = {0x20, 0x01, 0x0d, 0xb8};
  raw[14] = hi;
  raw[15] = lo;
  return endpoint{ip_address::make_v6(raw), port};
}

/// Compact form of an endpoint (BEP 23 / BEP 7): address then port, network order.
inline std::string compact(const endpoint& ep) {
  std::string out(reinterpret_cast<const char*>(ep.ip.bytes.data()), ep.ip.length());
  out.push_back(static_cast<char>(ep.port >> 8));
  out.push_back(static_cast<char>(ep.port & 0xff));
  return out;
}

/// Injected time: seconds since an arbitrary origin.
inline peer_table::time_point at(std::int64_t seconds) {
  return peer_table::time_point{} + std::chrono::seconds(seconds);
}

}  // namespace sk::test
