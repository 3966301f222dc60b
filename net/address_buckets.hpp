#pragma once
/// A token bucket per client address, in bounded memory: what the
/// per-address limits of the gateway are made of (the request rate, and the
/// budget for new swarms in net/creation_budget.hpp).
///
///   take(address, now)
///     key = SipHash(per-process secret, address)   IPv4: the address,
///                                                   IPv6: its /64 (one subscriber)
///     bucket = tokens refilled at `per_second`, at most `burst`
///     a token left ─▶ true (one taken)     none ─▶ false (refused, retryable)
///
/// Each bucket is one time (the generic cell rate algorithm): `due`, when
/// the bucket will be full again. A token costs one interval T = 1 /
/// per_second; a request at `now` is allowed while due - now <= (burst - 1)
/// T, and then moves `due` on by T. Exact in integer nanoseconds however
/// often an address asks, and a refusal changes nothing, so refused
/// requests never delay the refill.
///
/// Bounded memory: at most `max_addresses` buckets. An address whose bucket
/// has been full again for a while (longer than a refill from one token
/// short) is the same as one without a bucket, so its entry is dropped
/// (expired). Entries are kept in
/// insertion order per stripe; each insert looks at the oldest two, drops
/// them when expired (an active one goes to the back), and when the stripe
/// is full drops the oldest regardless: that address starts again with a
/// full bucket, which is what an attacker with one more address gets anyway.
/// So an attacker rotating addresses never grows the table past its bound;
/// it only shortens how long an idle address is remembered.
///
/// The key is a keyed hash, so nobody without the secret can aim many
/// addresses at one stripe or one key. Thread-safe: `stripes` stripes, each
/// a mutex held for one hash map lookup.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "protocol/siphash.hpp"
#include "protocol/types.hpp"

namespace sk {

class address_buckets {
 public:
  using clock = std::chrono::steady_clock;

  /// `burst` >= 1 tokens at once, `per_second` > 0 more per second, at most
  /// `max_addresses` addresses remembered (at least one per stripe) in
  /// `stripes` >= 1 stripes. `secret` keys the hash.
  address_buckets(std::uint32_t burst, double per_second, std::size_t max_addresses,
                  const siphash_key& secret, std::size_t stripes = 16);
  /// The same with a random secret.
  address_buckets(std::uint32_t burst, double per_second, std::size_t max_addresses,
                  std::size_t stripes = 16);
  address_buckets(const address_buckets&) = delete;
  address_buckets& operator=(const address_buckets&) = delete;

  /// Takes one token from `address`'s bucket at `now`; false when it has
  /// none left (nothing is taken, and the refusal does not delay the refill).
  bool take(const ip_address& address, clock::time_point now);

  /// Addresses remembered now (a sum over the stripes).
  std::size_t tracked() const;
  /// The most addresses remembered at once (the configured bound, rounded
  /// down to a multiple of the stripes).
  std::size_t capacity() const noexcept { return per_stripe_ * stripe_count_; }

  std::uint32_t burst() const noexcept { return burst_; }
  double per_second() const noexcept { return per_second_; }
  /// How long an emptied bucket takes to fill. An entry silent for twice
  /// this (at most) is dropped.
  clock::duration refill_time() const noexcept { return expiry_; }

 private:
  struct bucket {
    clock::time_point due{};  ///< when the bucket is full again
  };
  struct identity_hash {
    std::size_t operator()(std::uint64_t k) const noexcept { return static_cast<std::size_t>(k); }
  };
  struct alignas(64) stripe {
    std::mutex mtx;
    std::unordered_map<std::uint64_t, bucket, identity_hash> map;
    std::deque<std::uint64_t> order;  ///< keys, oldest insert first
  };

  /// Drops expired (and, when full, the oldest) entries of `s`.
  void trim(stripe& s, clock::time_point now);

  const std::uint32_t burst_;
  const double per_second_;
  const std::size_t stripe_count_;
  const std::size_t per_stripe_;
  const clock::duration interval_;   ///< T: one token's worth of time
  const clock::duration tolerance_;  ///< (burst - 1) T: how far `due` may run ahead
  const clock::duration expiry_;
  const siphash_key secret_;
  std::unique_ptr<stripe[]> stripes_;
};

}  // namespace sk
