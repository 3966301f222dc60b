#pragma once
/// How many connections each client address holds, for a per-address cap
/// on a listener (the HTTP tracker's `http.max-connections-per-address`):
/// one address — an IPv4 address or an IPv6 /64 — cannot take every slot
/// of the total.
///
///   accept from A ─▶ open(A)  ─ A holds `per_address` already ─▶ false: close it
///                            └ else: A's count + 1, a ticket ─▶ serve
///   connection ends ─▶ close(ticket): A's count - 1 (0: A forgotten)
///
/// Bounded memory: an address has an entry only while it holds a
/// connection, so there are never more entries than open connections. The
/// map is keyed by a keyed hash (net/address_key.hpp), so nobody can aim
/// many addresses at one hash bucket. Thread-safe (one mutex: taken once
/// per accepted and once per ended connection).

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "protocol/siphash.hpp"
#include "protocol/types.hpp"

namespace sk {

class connection_slots {
 public:
  /// `per_address`: connections one address may hold (0: no cap, only
  /// counted). `secret` keys the hash (a random one when not given).
  explicit connection_slots(std::size_t per_address);
  connection_slots(std::size_t per_address, const siphash_key& secret);
  connection_slots(const connection_slots&) = delete;
  connection_slots& operator=(const connection_slots&) = delete;

  /// What `open` hands back: the address's key, to give back to `close`.
  struct ticket {
    std::uint64_t key = 0;
    bool held = false;  ///< false: nothing to give back
  };

  /// Counts one more connection from `a`; a ticket that holds nothing when
  /// `a` is at its cap (nothing counted).
  ticket open(const ip_address& a);
  /// Gives back a ticket's connection (one that holds nothing: no-op).
  void close(ticket& t);

  /// Connections `a` holds now.
  std::size_t held_by(const ip_address& a) const;
  /// Addresses holding at least one connection.
  std::size_t addresses() const;
  /// The most connections one address holds now (a walk over the map).
  std::size_t busiest() const;
  std::size_t per_address() const noexcept { return per_address_; }

 private:
  struct identity_hash {
    std::size_t operator()(std::uint64_t k) const noexcept { return static_cast<std::size_t>(k); }
  };

  const std::size_t per_address_;
  const siphash_key secret_;
  mutable std::mutex mtx_;
  std::unordered_map<std::uint64_t, std::size_t, identity_hash> held_;
};

}  // namespace sk
