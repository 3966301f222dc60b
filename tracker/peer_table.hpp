#pragma once
/// The peers of one swarm: counts, expiry and uniform random selection.
///
/// Plain C++ (no CAF): the swarm actor owns one, unit tests and the swarm
/// simulator drive it directly with their own clock. Every mutating call
/// takes `now`; the table never reads a clock itself.

#include <array>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tracker/health_types.hpp"
#include "tracker/lazy_box.hpp"
#include "tracker/peer_index.hpp"
#include "tracker/peer_index_address.hpp"
#include "tracker/peer_sampler.hpp"
#include "tracker/random.hpp"
#include "protocol/reply.hpp"
#include "protocol/types.hpp"

namespace sk {

/// Which address families a selection may return. A UDP client can only
/// connect to peers of its own family, so a v4-only request gets up to n
/// IPv4 peers (not the IPv4 share of a mixed sample).
enum class family_filter : std::uint8_t { both = 0, v4_only = 1, v6_only = 2 };

class allocator;

/// Peers of one swarm.
///
/// Storage (all dense, removal is swap-with-last, so every operation is O(1)
/// apart from selection, which is O(peers returned)):
///
///   index_ : peer_key -> i          records_[i] : id, ip, port, pool_pos,
///   (only past small_table peers)                  last_seen, traits (cold)
///                                    hot_[i]     : mark, served, slot, flags,
///                                                  quarantined, v6, seeder
///                                    reveal_[i]  : flash-crowd round, count
///                                                  (only once flash-crowd ran)
///   v4_.compact : 6 bytes per IPv4 peer  (addr, port; network order, BEP 23)
///   v6_.compact : 18 bytes per IPv6 peer (addr, port; network order, BEP 7)
///   vN_.owner[slot] = i                 hot_[i].slot = slot
///   pools_[role][family][pool_pos] = i  records_[i].pool_pos = pool_pos
///
/// Hot/cold split. Selection looks at many candidates per reply, on swarms
/// far larger than the cache: each look must be one small random read, not
/// a 152-byte record. So what a candidate check and a pick need lives in
/// the dense 16-byte `hot_` array (see `hot_entry`), and the reply bytes
/// come from the compact vectors; only announces, sweeps and the detectors
/// touch `records_`. `hot_`, `reveal_` and `records_` are one logical
/// array: every add, swap-remove, slot swap, role change and quarantine
/// move updates them together, and `check_invariants` checks it.
///
/// The compact vectors hold every peer's reply bytes ready, so a compact
/// reply is a run of `append(6 or 18 bytes)` straight from them.
///
/// Memory. Most swarms of a public tracker have one to a few peers, so a
/// table allocates only what its size needs: no index until it holds more
/// than `small_table` peers (below that a lookup compares the few records
/// in turn), no flash-crowd bookkeeping until that policy runs, no sampling
/// scratch (per thread), and each completed sweep cycle gives back what a
/// shrunken table no longer uses (`compact`). A peer costs its 152-byte
/// record, 16 hot bytes, its compact bytes, a slot and pool entry (4 bytes
/// each) and, past `small_table`, about 11-21 bytes of index. The records,
/// the hot entries and the index slots are `peer_array`s: from 64 KiB on
/// they live on pages of their own, given back the moment a growth frees
/// them (tracker/page_allocator.hpp).
///
/// Peers per address. With `max_peers_per_address` set, a new peer whose
/// address (IPv4, or IPv6 /64) holds that many is `rejected`. The counts
/// (`address_counts`: 6 bytes per IPv4 slot, 10 per IPv6 slot, about 8-16
/// bytes per peer) exist only while the table holds at least the bound's
/// number of peers: a smaller table cannot hold a full address. Each hot
/// entry carries its address's 16-bit keyed tag (`addr_tag`, in bytes the
/// entry had spare) for selection's per-reply share of one address.
///
/// Quarantine. Quarantined peers (`flag_quarantined` in their traits) are
/// kept OUT of every sampling set, so no selection (uniform or policy) can
/// return them and uniform selection needs no rejection:
///
///   vN_ slots:  [ 0 .. active )            [ active .. size )
///                 sampleable                 quarantined
///   pools_:     only non-quarantined peers (pool_pos = none otherwise)
///
/// The detectors set the flag through the `peer_traits*` this table hands
/// out (`announce_ex`, `traits`), so the table cannot see the write. It
/// remembers which records it handed out and reconciles their placement,
/// and their hot copy of the flags, at the start of the next non-const call
/// (`sync`); `for_each_mut` marks every record. Counts (`seeders`,
/// `leechers`, `size`) include quarantined peers.
///
/// `peer_traits::served` is kept in the hot array (the allocator bumps it
/// per pick without touching the record) and copied into the traits
/// whenever the table hands them out: `traits`, `announce_ex`, `for_each`,
/// `for_each_mut`, the sweep callback, `last_removed`. Writes to `served`
/// through a traits pointer are not read back.
///
/// Roles. `pools_[0]` holds seeders, `pools_[1]` leechers, each split by
/// family, so role- and family-restricted sampling is exact and O(draws).
/// The allocation policies (tracker/allocation) read these as a friend; the
/// seeder-rotation cursors and flash-crowd rounds live here with them.
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
    rejected,  ///< new peer, but the table is full (`max_peers`), its id is
               ///< at too many addresses, or its address holds
               ///< `max_peers_per_address` peers
  };

  /// `seed` seeds the selection PRNG; `max_peers` bounds the table
  /// (must be < 2^32 - 1); `max_addresses_per_id` bounds the records of one
  /// peer id per address family (0: unbounded; see
  /// `default_max_addresses_per_id`); `max_peers_per_address` bounds the
  /// peers of one address (IPv4, or IPv6 /64; 0: unbounded; at most
  /// `address_counts::max_count`).
  explicit peer_table(std::uint64_t seed = 0, std::size_t max_peers = 1000000,
                      std::size_t max_addresses_per_id = default_max_addresses_per_id,
                      std::size_t max_peers_per_address = 0);

  /// Applies one announce. `left == 0` makes the peer a seeder. `completed`
  /// adds to `downloaded` the first time a stored peer sends it (also when
  /// the peer is new); `stopped` removes the peer.
  change announce(const peer_id& id, const endpoint& ep, std::uint64_t left, announce_event event,
                  time_point now);

  /// `announce`, also exposing the touched record's traits:
  ///   - `added`: the new peer's traits, default-constructed (the table
  ///     writes no field of `peer_traits`; the detectors own them);
  ///   - `updated`: the stored peer's traits;
  ///   - `removed`: a copy of the leaving peer's traits (`last_removed()`),
  ///     so the caller can still judge the peer (e.g. "left right after
  ///     completing");
  ///   - `ignored`, `rejected`: nullptr.
  /// The pointer is valid until the next non-const call. Writes through it
  /// (also setting or clearing `flag_quarantined`) take effect for selection
  /// from the next non-const call on.
  std::pair<change, peer_traits*> announce_ex(const peer_id& id, const endpoint& ep,
                                              std::uint64_t left, announce_event event,
                                              time_point now);

  /// Most records one peer id may have per address family (the roaming and
  /// impostor rules keep them apart); a new address beyond it is
  /// `rejected`. It bounds the index's probe runs, which are shared by the
  /// records of one id. 4: a client on several interfaces of one family,
  /// with room to spare (peer ids carry 12 random bytes, so two clients
  /// behind different addresses do not share one).
  static constexpr std::size_t default_max_addresses_per_id = 4;

  /// Calls `f(const peer_key&, const peer_traits&)` for every stored peer
  /// with id `id` and the family of `ip`, at an address other than `ip`
  /// (at most `max_addresses_per_id`). `f` must not call into the table.
  template <class F>
  void for_each_other_address(const peer_id& id, const ip_address& ip, F&& f) const {
    for_each_same_id(id, ip.v6, [&](std::uint32_t i) {
      const record& r = records_[i];
      if (!(r.ip == ip)) {
        f(peer_key{r.id, r.ip}, static_cast<const peer_traits&>(fresh_traits(i)));
      }
    });
  }

  /// Moves the stored peer `from` to the endpoint `to` (a client whose
  /// address changed): same record, traits, role and counts; only the
  /// address and port change. False, changing nothing, when `from` is
  /// unknown, `to` is of another family, or `to` is stored already.
  bool roam(const peer_key& from, const endpoint& to);

  /// Traits of a stored peer, nullptr if unknown; valid until the next
  /// non-const call (same rules as `announce_ex`).
  peer_traits* traits(const peer_key& k);
  const peer_traits* traits(const peer_key& k) const;

  /// Traits of the peer most recently removed by a `stopped` announce or a
  /// sweep (default-constructed before the first removal). Kept until the
  /// next completed sweep cycle, which gives the copy's memory back.
  const peer_traits& last_removed() const noexcept;

  /// Calls `f(const peer_key&, const endpoint&, bool seeder, const
  /// peer_traits&)` for every stored peer (quarantined ones included), in
  /// storage order. `f` must not call into the table.
  template <class F>
  void for_each(F&& f) const {
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
      const record& r = records_[i];
      f(peer_key{r.id, r.ip}, endpoint{r.ip, r.port}, seeder_at(i),
        static_cast<const peer_traits&>(fresh_traits(i)));
    }
  }

  /// Like `for_each` with mutable traits: `f(const peer_key&, const
  /// endpoint&, bool seeder, peer_traits&)`. Placement is reconciled for
  /// every peer at the next non-const call (O(size), like the walk itself).
  template <class F>
  void for_each_mut(F&& f) {
    sync();
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
      const record& r = records_[i];
      f(peer_key{r.id, r.ip}, endpoint{r.ip, r.port}, seeder_at(i), fresh_traits(i));
    }
    resync_all_ = true;
  }

  /// Appends up to `n` peers drawn uniformly at random (without replacement)
  /// from every stored, non-quarantined peer except `requester` (of the
  /// families `families` allows): IPv4 peers as 6 bytes to `peers4`, IPv6
  /// peers as 18 bytes to `peers6`. Returns the number added.
  std::size_t select_compact(const peer_key& requester, std::size_t n, std::string& peers4,
                             std::string& peers6, family_filter families = family_filter::both);

  /// Like `select_compact`, for non-compact replies: appends peers with their
  /// ids to `out` (IPv4 first, then IPv6).
  std::size_t select_entries(const peer_key& requester, std::size_t n,
                             std::vector<peer_entry>& out,
                             family_filter families = family_filter::both);

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
                     std::size_t budget) {
    return sweep(now, timeout, budget, [](const peer_key&, bool, const peer_traits&) {});
  }

  /// `sweep`, calling `on_expired(const peer_key&, bool seeder, const
  /// peer_traits&)` for each expired peer just before it is removed.
  /// `on_expired` must not call into the table.
  template <class OnExpired>
  sweep_result sweep(time_point now, std::chrono::steady_clock::duration timeout,
                     std::size_t budget, OnExpired&& on_expired) {
    // A cursor walks records_. Removing records_[c] moves the last record
    // into c, which has not been examined in this cycle yet, so the cursor
    // stays. (A `stopped` removal below the cursor between two calls moves
    // one unexamined record below it; that record waits for the next cycle.)
    sync();
    sweep_result res;
    while (res.examined < budget && cursor_ < records_.size()) {
      ++res.examined;
      const auto c = static_cast<std::uint32_t>(cursor_);
      const record& r = records_[c];
      if (now - r.last_seen >= timeout) {
        on_expired(peer_key{r.id, r.ip}, seeder_at(c),
                   static_cast<const peer_traits&>(fresh_traits(c)));
        remove_at(c);
        ++res.expired;
      } else {
        ++cursor_;
      }
    }
    if (cursor_ >= records_.size()) {
      cursor_ = 0;
      res.cycle_done = true;
      compact(res.expired != 0);
    }
    return res;
  }

  /// complete = seeders, incomplete = leechers (partial seeds included),
  /// downloaded = completions, partial = partial seeds (BEP 21).
  swarm_stats stats() const noexcept {
    return {static_cast<std::int64_t>(seeders_), static_cast<std::int64_t>(leechers_),
            static_cast<std::int64_t>(downloaded_), static_cast<std::int64_t>(partial_)};
  }
  std::size_t size() const noexcept { return records_.size(); }
  bool empty() const noexcept { return records_.empty(); }
  /// Seeders and leechers, quarantined ones included (exact).
  std::size_t seeders() const noexcept { return seeders_; }
  std::size_t leechers() const noexcept { return leechers_; }
  /// Partial seeds (BEP 21: last announce `event=paused` with left > 0);
  /// counted in `leechers()` too, as scrape's `incomplete` counts them.
  std::size_t partial_seeds() const noexcept { return partial_; }
  std::uint64_t downloaded() const noexcept { return downloaded_; }
  std::size_t ipv4_count() const noexcept { return v4_.owner.size(); }
  std::size_t ipv6_count() const noexcept { return v6_.owner.size(); }
  /// Peers currently kept out of selection (as of the last `sync`, which
  /// every announce, sweep and selection runs first).
  std::size_t quarantined_count() const noexcept {
    return v4_.owner.size() - v4_.active + v6_.owner.size() - v6_.active;
  }
  bool contains(const peer_key& k) const { return locate(k) != none; }

  /// Most peers one address (IPv4, or IPv6 /64) may hold; 0: unbounded.
  std::size_t max_peers_per_address() const noexcept { return max_per_address_; }
  /// Whether a new peer at `ip` would be refused by `max_peers_per_address`.
  /// O(1): below the bound's size the table cannot hold a full address and
  /// keeps no counts.
  bool address_full(const ip_address& ip) const noexcept {
    const address_counts* a = addresses_.get();
    return a != nullptr && a->count(ip) >= max_per_address_;
  }
  /// Peers stored at `ip`'s address (O(1) while the table keeps counts,
  /// else O(size)); for tests and operators.
  std::size_t peers_at(const ip_address& ip) const noexcept;
  /// Whether the table keeps per-address counts now (it does from
  /// `max_peers_per_address` peers on).
  bool has_address_counts() const noexcept { return addresses_.has_value(); }
  /// The stored endpoint of `k` (port as last announced); false if unknown.
  bool find(const peer_key& k, endpoint& out) const;
  /// Whether `k` is stored and a seeder.
  bool is_seeder(const peer_key& k) const;

  /// Restarts the selection PRNG (tests, simulator).
  void reseed(std::uint64_t seed) noexcept { rng_.reseed(seed); }

  /// Tables of at most this many peers have no index (see "Memory").
  static constexpr std::size_t small_table = 8;
  /// Whether the table has built its index (more than `small_table` peers
  /// now, or since its last `compact`).
  bool has_index() const noexcept { return index_.has_slots(); }
  /// Heap bytes the table's arrays hold (capacity, not size): what a swarm's
  /// peers cost beyond the table object itself, malloc's own overhead not
  /// included. For tests and the memory bench.
  std::size_t heap_bytes() const noexcept;

  /// Gives back memory the table no longer needs: shrinks arrays whose
  /// capacity is far above their size, drops the index of a table that
  /// shrank to `small_table / 2` peers or fewer, forgets `last_removed`.
  /// Changes no selection, count or order. Each completed sweep cycle runs
  /// it.
  void compact() { compact(false); }

  /// Peers about to be added one by one (a swarm filled from its sleeping
  /// form), counted as `pools_` are: [0: seeders, 1: leechers][0: IPv4,
  /// 1: IPv6]. Sizes every array for the table's peers and these at once
  /// instead of growing each one step by step; never shrinks, stops at
  /// `max_peers`. Changes no selection, count or order.
  void reserve(const std::array<std::array<std::size_t, 2>, 2>& more);

  /// Applies pending traits writes to the sampling sets now (every
  /// non-const call does this first; exposed for tests and callers that
  /// want `quarantined_count` current).
  void sync();

  /// Checks every internal cross-reference and count, the quarantine
  /// partition and the role pools; for tests. O(size). Records whose traits
  /// were handed out since the last `sync` may still be misplaced and are
  /// exempt from the flag-versus-placement check.
  bool check_invariants() const;

 private:
  friend class allocator;
  /// Cluster snapshots restore `downloaded_` (cluster/snapshot.cpp).
  friend struct swarm_core_access;

  static constexpr std::uint32_t none = no_peer;

  /// The stored part of a peer (tracker/peer_index.hpp) and its index.
  using record = peer_record;
  using key_index = peer_key_index;

  /// bits of `hot_entry::state`
  static constexpr std::uint8_t hot_quarantined = 1u << 0;  ///< out of the sampling sets
  static constexpr std::uint8_t hot_v6 = 1u << 1;           ///< `ip.v6`
  static constexpr std::uint8_t hot_seeder = 1u << 2;       ///< role
  /// A partial seed (a leecher by role and pool; see `flag_partial_seed`).
  static constexpr std::uint8_t hot_partial = 1u << 3;

  /// What selection reads and writes per candidate, 16 bytes, in `hot_`
  /// parallel to `records_` (hot_[i] belongs to records_[i]). A candidate
  /// check and a pick touch one hot entry, one index-pool entry and (for
  /// the reply) the compact bytes: never the 152-byte record.
  struct hot_entry {
    /// Allocation scratch: equals the table's `mark_epoch_` when already
    /// picked for the reply being built (dedupe across policy phases).
    std::uint32_t mark = 0;
    /// Times handed to another peer. The authoritative count:
    /// `peer_traits::served` is a copy refreshed whenever the table hands
    /// out traits (writes to that copy are not read back).
    std::uint32_t served = 0;
    /// Index into the compact vector of its family.
    std::uint32_t slot = 0;
    /// `peer_traits::flags` as of the last `sync` (every selection syncs
    /// first, so selection sees the same flags as the traits).
    std::uint8_t flags = 0;
    /// `hot_*` bits.
    std::uint8_t state = 0;
    /// `address_tag` of the peer's address: selection's per-reply share
    /// of one address reads it here, never the record.
    std::uint16_t addr_tag = 0;

    bool has(std::uint8_t bit) const noexcept { return (state & bit) != 0; }
    void set(std::uint8_t bit, bool on) noexcept {
      state = on ? static_cast<std::uint8_t>(state | bit) : static_cast<std::uint8_t>(state & ~bit);
    }
  };
  static_assert(sizeof(hot_entry) == 16, "one quarter of a cache line per peer");

  /// Flash-crowd bookkeeping of one peer, parallel to `records_`: times
  /// revealed in round `round`. Only flash-crowd's seeder rotation touches it.
  struct reveal_state {
    std::uint32_t round = 0;
    std::uint32_t count = 0;
  };

  /// The ready-made compact bytes of one address family.
  struct family {
    explicit family(bool is_v6) : v6(is_v6) {}
    /// 6 (IPv4) or 18 (IPv6).
    std::size_t width() const noexcept { return v6 ? 18 : 6; }
    std::string compact;               ///< width() bytes per slot
    std::vector<std::uint32_t> owner;  ///< slot -> records_ index
    /// Slots [0, active) are sampleable, [active, size) quarantined.
    std::uint32_t active = 0;
    bool v6;
  };

  family& family_of(const ip_address& ip) noexcept { return ip.v6 ? v6_ : v4_; }
  family& family_of(const hot_entry& h) noexcept { return h.has(hot_v6) ? v6_ : v4_; }
  std::vector<std::uint32_t>& pool_of(const hot_entry& h) noexcept {
    return pools_[h.has(hot_seeder) ? 0 : 1][h.has(hot_v6) ? 1 : 0];
  }
  bool seeder_at(std::uint32_t i) const noexcept { return hot_[i].has(hot_seeder); }
  /// Refreshes records_[i].traits.served from the hot entry (before the
  /// traits are handed out) and returns the traits.
  peer_traits& fresh_traits(std::uint32_t i) const noexcept {
    records_[i].traits.served = hot_[i].served;
    return records_[i].traits;
  }
  void write_compact(std::uint32_t i);
  void swap_slots(family& f, std::uint32_t a, std::uint32_t b);
  void pool_insert(std::uint32_t i);
  void pool_erase(std::uint32_t i);
  /// Moves record i out of / into the sampling sets.
  void exclude(std::uint32_t i);
  void include(std::uint32_t i);
  void reconcile(std::uint32_t i);
  void remove_at(std::uint32_t i);
  /// Splits n draws between the families like n draws from their union
  /// (hypergeometric), calls `prepare(k4, k6)` once, then samples each
  /// family's sampleable slots without the requester, emitting slots.
  template <class Prepare, class Emit4, class Emit6>
  std::size_t select(const peer_key& requester, std::size_t n, family_filter families,
                     Prepare&& prepare, Emit4&& emit4, Emit6&& emit6);
  /// records_ index of `k`, or `none`.
  std::uint32_t locate(const peer_key& k) const;
  /// Calls `f(records_ index)` for every record of id `id` and family `v6`.
  template <class F>
  void for_each_same_id(const peer_id& id, bool v6, F&& f) const {
    if (index_.has_slots()) {
      index_.for_each_same_id(id, v6, records_, f);
      return;
    }
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
      if (records_[i].ip.v6 == v6 && records_[i].id == id) f(i);
    }
  }
  /// `compact`, keeping `last_removed` when `keep_last_removed` (a sweep
  /// call that removed peers compacts at the end of its cycle).
  void compact(bool keep_last_removed);
  /// Builds the index over every record (the table grew past small_table).
  void build_index();
  /// Builds the per-address counts over every record (the table reached
  /// `max_per_address_` peers).
  void build_address_counts();
  /// The flash-crowd bookkeeping of record i (sized on first use).
  reveal_state& reveal_at(std::uint32_t i);

  /// No slot array while the table is small (see "Memory"); the index's
  /// 40 bytes live here, so a lookup reads the slots straight from the table.
  key_index index_;
  /// The seed of the index's key, for building it later.
  std::uint64_t index_seed_;
  peer_array<record> records_;
  /// Parallel to records_ (same index, same size, moved together).
  peer_array<hot_entry> hot_;
  /// Parallel to records_ once flash-crowd selection used it, else empty.
  std::vector<reveal_state> reveal_;
  family v4_{false};
  family v6_{true};
  /// [0: seeders, 1: leechers][0: IPv4, 1: IPv6] -> records_ indices of the
  /// non-quarantined peers of that role and family.
  std::array<std::array<std::vector<std::uint32_t>, 2>, 2> pools_;
  std::uint64_t downloaded_ = 0;
  // Counts and positions are 32-bit: a table holds fewer than 2^32 - 1
  // records (see the constructor).
  std::uint32_t seeders_ = 0;
  std::uint32_t leechers_ = 0;
  std::uint32_t partial_ = 0;
  std::uint32_t max_peers_;
  std::uint32_t max_addresses_per_id_;
  /// 0: unbounded.
  std::uint32_t max_per_address_;
  /// Sweep position in records_.
  std::uint32_t cursor_ = 0;
  /// The record the last announce touched and its key (`none` once that
  /// record is removed; follows it when a swap-remove moves it).
  std::uint32_t hint_ = none;
  /// Flash-crowd round number and leecher announces served in it.
  std::uint32_t flash_round_ = 1;
  std::uint32_t flash_served_ = 0;
  /// Epoch for `hot_entry::mark` (bumped per allocation).
  std::uint32_t mark_epoch_ = 0;
  /// Seeder-rotation cursors, one per `family_filter` (index = value): a
  /// position in the concatenation of the allowed seeder pools.
  std::array<std::uint32_t, 3> rotation_{};
  bool resync_all_ = false;
  peer_key hint_key_{};
  /// Records whose traits were handed out since the last `sync`.
  std::vector<std::uint32_t> pending_;
  /// Set by each removal, dropped by `compact`.
  lazy_box<peer_traits> last_removed_;
  /// Peers per address, present while the table holds at least
  /// `max_per_address_` peers (and until a `compact` finds it below half).
  lazy_box<address_counts> addresses_;
  fast_rng rng_;
};

}  // namespace sk
