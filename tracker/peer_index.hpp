#pragma once
/// A peer's identity in a swarm, its stored record, and the table's
/// key -> record index (tracker/peer_table.hpp stores the records; this
/// index finds them).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tracker/health_types.hpp"
#include "tracker/page_allocator.hpp"
#include "protocol/types.hpp"

namespace sk {

/// Identity of a peer in a swarm: a re-announce with the same peer_id from
/// the same address is the same peer (its port may change). The same peer_id
/// from another address is another peer, unless the swarm core recognises a
/// client that roamed (same `key`, same family: `peer_table::roam`); a
/// different key is an impostor and stays a separate peer.
struct peer_key {
  peer_id id;
  ip_address ip;
  friend bool operator==(const peer_key& a, const peer_key& b) noexcept {
    return a.id == b.id && a.ip == b.ip;
  }
};

/// Hash of a peer_key for callers' own containers, keyed through
/// `id20_hasher`'s per-process secret (peer ids are chosen by clients). The
/// table's own index uses a faster per-table keyed hash (see
/// `peer_key_index`).
struct peer_key_hasher {
  std::size_t operator()(const peer_key& k) const noexcept;
};

/// "No record": an empty index slot, a pool position of a quarantined peer.
constexpr std::uint32_t no_peer = std::numeric_limits<std::uint32_t>::max();

/// The cold part of a peer: everything an announce reads or writes, and
/// nothing a candidate check needs (that is `hot_entry`). Key, address
/// and timestamps first, where the index's key comparison and the
/// announce land.
struct peer_record {
  peer_id id;
  ip_address ip;
  std::uint16_t port = 0;
  /// This peer's `completed` is already in the table's `downloaded_`.
  bool completed = false;
  /// Index into the table's pools_[role][family]; `no_peer` while quarantined.
  std::uint32_t pool_pos = no_peer;
  std::chrono::steady_clock::time_point last_seen{};
  /// `mutable` only so that const accessors can refresh `traits.served`
  /// from `hot_entry::served` before handing the traits out. So const
  /// calls that hand out traits (`traits`, `for_each`) write: like every
  /// other call, they must not run concurrently with another (the table
  /// has one owner, its swarm).
  mutable peer_traits traits;
};
#if defined(__x86_64__)
static_assert(sizeof(peer_record) == 152, "a record is stored per peer: keep it 152 bytes");
#endif

/// `id == k.id && ip == k.ip` as word compares: the library's memcmp
/// calls cost more than the 37 bytes they compare.
inline bool same_key(const peer_id& id, const ip_address& ip, const peer_key& k) noexcept {
  std::uint64_t a[4];
  std::uint64_t b[4];
  std::uint32_t a4;
  std::uint32_t b4;
  std::memcpy(a, id.bytes.data(), 16);
  std::memcpy(&a4, id.bytes.data() + 16, 4);
  std::memcpy(a + 2, ip.bytes.data(), 16);
  std::memcpy(b, k.id.bytes.data(), 16);
  std::memcpy(&b4, k.id.bytes.data() + 16, 4);
  std::memcpy(b + 2, k.ip.bytes.data(), 16);
  return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3]) | (a4 ^ b4)) == 0 &&
         ip.v6 == k.ip.v6;
}

/// peer_key -> records_ index: open addressing with linear probing over a
/// power-of-two array of 8-byte slots {32-bit hash tag, index}.
///
///   slot:  [ tag (high 32 bits of the keyed hash) | records_ index ]
///   home bucket = tag & mask; empty slot: index == no_peer
///
/// A lookup compares the full key (in the record) only when the tag
/// matches, so a miss costs about one cache line of the index and a hit
/// one more of the record (which the announce touches anyway). Growing
/// rehashes from the stored tags, never from the records. Deletion shifts
/// the following entries back (no tombstones), so probe runs stay short
/// under churn. Load is kept <= 3/4.
///
/// The hash is keyed (per table, from the table's seed and a per-process
/// random secret): peer ids are chosen by clients, and an unkeyed hash
/// would let one craft ids that share a home bucket and turn every probe
/// into a scan. The key changes no observable behaviour (nothing iterates
/// the index), so seeded runs stay reproducible.
///
/// 40 bytes, meant to live inside its table: a lookup then goes from the
/// table straight to the slot array, with no object of its own in between
/// (one cache miss less per announce on a population larger than the
/// cache). Only the 64-bit key is stored; the hash expands it into its four
/// words on every call, a few multiplications instead of a memory read.
class peer_key_index {
 public:
  struct entry {
    std::uint32_t tag = 0;
    std::uint32_t index = no_peer;
  };
  void set_key(std::uint64_t seed) noexcept;
  std::uint64_t hash(const peer_key& k) const noexcept;
  std::size_t size() const noexcept { return size_; }
  /// Whether the index holds a slot array (the first `insert` makes one,
  /// `clear` gives it back).
  bool has_slots() const noexcept { return !slots_.empty(); }
  /// Drops every entry and gives the slot array back (the key stays).
  void clear() noexcept;
  /// The records_ index stored for `k`, or `no_peer`. `records` resolves tag
  /// matches to keys.
  std::uint32_t find(const peer_key& k, const peer_array<peer_record>& records) const;
  /// Adds `k` -> i (k must be absent).
  void insert(const peer_key& k, std::uint32_t i);
  /// Removes the entry of `k`, which must map to `i`.
  void erase(const peer_key& k, std::uint32_t i);
  /// Changes the entry of `k` from `from` to `to` (a record moved).
  void move(const peer_key& k, std::uint32_t from, std::uint32_t to);
  /// Probe-run and tag invariants, and that every record is found; O(size).
  bool check(const peer_array<peer_record>& records) const;
  /// Rehashes into a smaller array when `size` entries need far fewer
  /// slots than it has (a swarm that shrank).
  void shrink(std::size_t size);
  std::size_t heap_bytes() const noexcept { return slots_.capacity() * sizeof(entry); }
  /// Calls `f(records_ index)` for every record with id `id` and family
  /// `v6` (they share one tag and home bucket: the hash ignores the
  /// address).
  template <class F>
  void for_each_same_id(const peer_id& id, bool v6, const peer_array<peer_record>& records,
                        F&& f) const {
    if (size_ == 0) {
      return;
    }
    const auto tag = static_cast<std::uint32_t>(hash(peer_key{id, ip_address{v6, {}}}) >> 32);
    for (std::uint32_t p = tag & mask_; slots_[p].index != no_peer; p = (p + 1) & mask_) {
      const entry& e = slots_[p];
      if (e.tag == tag && records[e.index].id == id && records[e.index].ip.v6 == v6) {
        f(e.index);
      }
    }
  }

 private:
  std::uint32_t slot_of(const peer_key& k, std::uint32_t i) const;
  void grow();
  /// Rehashes every entry into `cap` slots (a power of two, >= 16).
  void rehash(std::size_t cap);
  peer_array<entry> slots_;
  std::uint32_t mask_ = 0;
  /// Entries; fewer than 2^32 (a table holds fewer records).
  std::uint32_t size_ = 0;
  /// The table's seed mixed with the process secret; `hash` derives its
  /// four key words from it.
  std::uint64_t key_ = 0;
};
#if defined(__x86_64__)
static_assert(sizeof(peer_key_index) == 40, "the index lives inside every peer table");
#endif

}  // namespace sk
