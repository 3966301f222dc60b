#pragma once
/// A token bucket per client address for creating NEW swarms: an address
/// announcing random info_hashes fills the directory one swarm per request,
/// so each address may create `burst` swarms at once and `per_minute` more
/// every minute; announces to swarms that exist never touch it.
///
/// The buckets are `address_buckets` (net/address_buckets.hpp: keyed hash,
/// IPv6 /64, bounded memory, expiry), in 16 stripes, each a mutex taken
/// only for announces that would create a swarm.

#include <cstddef>
#include <cstdint>

#include "net/address_buckets.hpp"

namespace sk {

class creation_budget : public address_buckets {
 public:
  static constexpr std::size_t stripes = 16;

  /// `burst` >= 1 swarms at once, `per_minute` > 0 more per minute, at most
  /// `max_addresses` addresses remembered (at least one per stripe). `secret`
  /// keys the hash (a random one when not given).
  creation_budget(std::uint32_t burst, double per_minute, std::size_t max_addresses = 65536)
      : address_buckets(burst, rate(per_minute), max_addresses, stripes) {}
  creation_budget(std::uint32_t burst, double per_minute, std::size_t max_addresses,
                  const siphash_key& secret)
      : address_buckets(burst, rate(per_minute), max_addresses, secret, stripes) {}

  double per_minute() const noexcept { return per_second() * 60.0; }

 private:
  static double rate(double per_minute) noexcept {
    return per_minute > 0 ? per_minute / 60.0 : 1.0 / 60.0;
  }
};

}  // namespace sk
