#pragma once
/// A token bucket per client address for creating NEW swarms: an address
/// announcing random info_hashes fills the directory one swarm per request,
/// so each address may create `burst` swarms at once and `per_minute` more
/// every minute; announces to swarms that exist never touch it.
///
///   take(address, now)
///     key = SipHash(per-process secret, address)   IPv4: the address,
///                                                   IPv6: its /64 (one subscriber)
///     bucket = tokens refilled at per_minute/60 per second, at most burst
///     a token left ─▶ true (one taken)     none ─▶ false (refused, retryable)
///
/// Bounded memory: at most `max_addresses` buckets. An address unseen for
/// as long as a refill from empty takes has a full bucket again, the same
/// as having none, so its entry is dropped (expired). Entries are kept in
/// insertion order per stripe; each insert looks at the oldest two, drops
/// them when expired (an active one goes to the back), and when the stripe
/// is full drops the oldest regardless: that address starts again with a
/// full bucket, which is what an attacker with one more address gets anyway.
///
/// The key is a keyed hash, so nobody without the secret can aim many
/// addresses at one stripe or one key. Thread-safe: 16 stripes, each a
/// mutex, taken only for announces that would create a swarm.

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

class creation_budget {
 public:
  using clock = std::chrono::steady_clock;

  /// `burst` >= 1 swarms at once, `per_minute` > 0 more per minute, at most
  /// `max_addresses` addresses remembered (at least one per stripe). `secret`
  /// keys the hash (a random one when not given).
  creation_budget(std::uint32_t burst, double per_minute, std::size_t max_addresses = 65536);
  creation_budget(std::uint32_t burst, double per_minute, std::size_t max_addresses,
                  const siphash_key& secret);
  creation_budget(const creation_budget&) = delete;
  creation_budget& operator=(const creation_budget&) = delete;

  /// Takes one swarm creation from `address`'s budget at `now`; false when
  /// it has none left (nothing is taken).
  bool take(const ip_address& address, clock::time_point now);

  /// Addresses remembered now (a sum over the stripes).
  std::size_t tracked() const;

  std::uint32_t burst() const noexcept { return burst_; }
  double per_minute() const noexcept { return per_second_ * 60.0; }
  /// How long an emptied bucket takes to fill: an entry silent this long is
  /// dropped.
  clock::duration refill_time() const noexcept { return expiry_; }

  static constexpr std::size_t stripes = 16;

 private:
  struct bucket {
    float tokens = 0;
    clock::time_point last{};
  };
  struct identity_hash {
    std::size_t operator()(std::uint64_t k) const noexcept { return static_cast<std::size_t>(k); }
  };
  struct alignas(64) stripe {
    std::mutex mtx;
    std::unordered_map<std::uint64_t, bucket, identity_hash> map;
    std::deque<std::uint64_t> order;  ///< keys, oldest insert first
  };

  std::uint64_t key_of(const ip_address& a) const noexcept;
  /// Drops expired (and, when full, the oldest) entries of `s`.
  void trim(stripe& s, clock::time_point now);

  const std::uint32_t burst_;
  const double per_second_;
  const std::size_t per_stripe_;
  const clock::duration expiry_;
  const siphash_key secret_;
  std::unique_ptr<stripe[]> stripes_;
};

}  // namespace sk
