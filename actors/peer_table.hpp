#pragma once
/// The peers of one swarm: counts, expiry and uniform random selection.
///
/// Plain C++ (no CAF): the swarm actor owns one, unit tests and the swarm
/// simulator drive it directly with their own clock. Every mutating call
/// takes `now`; the table never reads a clock itself.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "actors/random.hpp"
#include "protocol/reply.hpp"
#include "protocol/types.hpp"

namespace sk {

/// Identity of a peer in a swarm: a re-announce with the same peer_id from
/// the same address is the same peer (its port may change); the same peer_id
/// from another address is another peer (we cannot tell a roaming client from
/// an impostor without the `key`, so neither may evict the other).
struct peer_key {
  peer_id id;
  ip_address ip;
  friend bool operator==(const peer_key& a, const peer_key& b) noexcept {
    return a.id == b.id && a.ip == b.ip;
  }
};

struct peer_key_hasher {
  std::size_t operator()(const peer_key& k) const noexcept;
};

/// Peers of one swarm.
///
/// Storage (all dense, removal is swap-with-last, so every operation is O(1)
/// apart from selection, which is O(peers returned)):
///
///   index_ : peer_key -> i          records_[i] : id, ip, port, flags, slot,
///                                                  last_seen
///   v4_.compact : 6 bytes per IPv4 peer  (addr, port; network order, BEP 23)
///   v6_.compact : 18 bytes per IPv6 peer (addr, port; network order, BEP 7)
///   vN_.owner[slot] = i                 records_[i].slot = slot
///
/// The compact vectors hold every peer's reply bytes ready, so a compact
/// reply is a run of `append(6 or 18 bytes)` straight from them.
class peer_table {
 public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;

  /// What an announce did to the table.
  enum class change {
    added,     ///< new peer stored
    updated,   ///< known peer refreshed (port, left, last seen)
    removed,   ///< `stopped` from a known peer
    ignored,   ///< `stopped` from an unknown peer
    rejected,  ///< new peer, but the table is full (`max_peers`)
  };

  /// `seed` seeds the selection PRNG; `max_peers` bounds the table
  /// (must be < 2^32 - 1).
  explicit peer_table(std::uint64_t seed = 0, std::size_t max_peers = 1000000);

  /// Applies one announce. `left == 0` makes the peer a seeder. `completed`
  /// adds to `downloaded` the first time a stored peer sends it (also when
  /// the peer is new); `stopped` removes the peer.
  change announce(const peer_id& id, const endpoint& ep, std::uint64_t left, announce_event event,
                  time_point now);

  /// Appends up to `n` peers drawn uniformly at random (without replacement)
  /// from every stored peer except `requester`: IPv4 peers as 6 bytes to
  /// `peers4`, IPv6 peers as 18 bytes to `peers6`. Returns the number added.
  std::size_t select_compact(const peer_key& requester, std::size_t n, std::string& peers4,
                             std::string& peers6);

  /// Like `select_compact`, for non-compact replies: appends peers with their
  /// ids to `out` (IPv4 first, then IPv6).
  std::size_t select_entries(const peer_key& requester, std::size_t n,
                             std::vector<peer_entry>& out);

  struct sweep_result {
    std::size_t examined = 0;
    std::size_t expired = 0;
    /// The cursor passed the end of the table: every peer present during the
    /// whole cycle has been examined once since the cycle began.
    bool cycle_done = false;
  };

  /// Drops peers not seen for `timeout` (that is, `now - last_seen >=
  /// timeout`), examining at most `budget` peers from where the previous
  /// call stopped. Call again until `cycle_done` to cover the whole table.
  sweep_result sweep(time_point now, std::chrono::steady_clock::duration timeout,
                     std::size_t budget);

  /// complete = seeders, incomplete = leechers, downloaded = completions.
  swarm_stats stats() const noexcept {
    return {static_cast<std::int64_t>(seeders_), static_cast<std::int64_t>(leechers_),
            static_cast<std::int64_t>(downloaded_)};
  }
  std::size_t size() const noexcept { return records_.size(); }
  bool empty() const noexcept { return records_.empty(); }
  std::size_t seeders() const noexcept { return seeders_; }
  std::size_t leechers() const noexcept { return leechers_; }
  std::uint64_t downloaded() const noexcept { return downloaded_; }
  std::size_t ipv4_count() const noexcept { return v4_.owner.size(); }
  std::size_t ipv6_count() const noexcept { return v6_.owner.size(); }
  bool contains(const peer_key& k) const { return index_.count(k) != 0; }
  /// The stored endpoint of `k` (port as last announced); false if unknown.
  bool find(const peer_key& k, endpoint& out) const;

  /// Restarts the selection PRNG (tests, simulator).
  void reseed(std::uint64_t seed) noexcept { rng_.reseed(seed); }

  /// Checks every internal cross-reference and count; for tests. O(size).
  bool check_invariants() const;

 private:
  struct record {
    peer_id id;
    ip_address ip;
    std::uint16_t port = 0;
    bool seeder = false;
    /// This peer's `completed` is already in `downloaded_`.
    bool completed = false;
    /// Index into the compact vector of its family (`ip.v6`).
    std::uint32_t slot = 0;
    time_point last_seen{};
  };

  /// The ready-made compact bytes of one address family.
  struct family {
    explicit family(std::size_t w) : width(w) {}
    std::size_t width;                 ///< 6 (IPv4) or 18 (IPv6)
    std::string compact;               ///< width bytes per slot
    std::vector<std::uint32_t> owner;  ///< slot -> records_ index
  };

  /// Draws k distinct indices of a virtual array [0, size) in uniformly random
  /// order without materialising it (sparse Fisher–Yates, see the .cpp).
  class index_sampler {
   public:
    template <class Emit>
    void draw(fast_rng& rng, std::uint32_t size, std::uint32_t k, Emit&& emit);

   private:
    /// Fibonacci hashing: the high half of the product mixes every key bit.
    std::uint32_t slot_of(std::uint32_t pos) const noexcept {
      return static_cast<std::uint32_t>((pos * 0x9e3779b97f4a7c15ULL) >> 32) & mask_;
    }
    std::uint32_t get(std::uint32_t pos) const;
    void set(std::uint32_t pos, std::uint32_t value);
    std::vector<std::uint32_t> keys_, values_, stamps_;
    std::uint32_t stamp_ = 0;
    std::uint32_t mask_ = 0;
  };

  family& family_of(const ip_address& ip) noexcept { return ip.v6 ? v6_ : v4_; }
  void write_compact(const record& r);
  void remove_at(std::uint32_t i);
  /// Splits n draws between the families like n draws from their union
  /// (hypergeometric), calls `prepare(k4, k6)` once, then samples each
  /// family without the requester, emitting slots.
  template <class Prepare, class Emit4, class Emit6>
  std::size_t select(const peer_key& requester, std::size_t n, Prepare&& prepare, Emit4&& emit4,
                     Emit6&& emit6);
  /// records_ index of `k`, or UINT32_MAX.
  std::uint32_t locate(const peer_key& k) const;

  std::unordered_map<peer_key, std::uint32_t, peer_key_hasher> index_;
  std::vector<record> records_;
  family v4_{6};
  family v6_{18};
  std::size_t seeders_ = 0;
  std::size_t leechers_ = 0;
  std::uint64_t downloaded_ = 0;
  std::size_t max_peers_;
  /// Sweep position in records_.
  std::size_t cursor_ = 0;
  /// The record the last announce touched (checked before use: removals
  /// may have moved another record there).
  std::uint32_t hint_ = std::numeric_limits<std::uint32_t>::max();
  fast_rng rng_;
  index_sampler sampler_;
};

}  // namespace sk
