#pragma once
/// info_hash -> V, the table of one directory stripe. Every announce looks
/// up its info_hash here, so a lookup should cost as few cache misses as
/// possible on a node with millions of swarms.
///
///   slots_ : open addressing, linear probing, 8-byte slots
///            [ tag (low 32 bits of the keyed hash) | position in items_ ]
///            home slot = tag & mask; empty slot: position == none
///   items_ : dense array of { info_hash, tag, V }, in no particular order
///
/// A lookup reads one slot line (more only past a collision) and, on a tag
/// match, the item (64 bytes: one cache line where the array has pages of
/// its own, 64-byte aligned, as every stripe past about 1,000 swarms does;
/// at most two below): two or three cache misses, where a node-based hash
/// map pays the bucket, the node before the wanted one, and the node. The caller may
/// pass the hash it already computed (the directory picks the stripe from
/// the high 32 bits of the same hash).
///
/// Erasure moves the last item into the gap (so iteration order is not
/// stable) and shifts the probe run back (no tombstones). `erase` returns an
/// iterator to the position it emptied, which now holds the moved item, so
/// `for (it = begin(); it != end();) it = cond ? erase(it) : it + 1;` visits
/// every item once. Insertion invalidates iterators and references;
/// erasure invalidates those to the last item (and all of them when the
/// map shrinks).
///
/// Load of the slots stays <= 3/4 (11-21 bytes of index per item); items
/// grow by half. Memory comes back: when a quarter or less of the items'
/// room is used, both arrays are rebuilt to fit (a flood of swarms that
/// expired leaves nothing behind). Erasure never throws: when that
/// rebuild cannot get memory, the arrays keep their room.
///
/// The hash is id20_hasher's, keyed per process: clients choose info
/// hashes, and an unkeyed hash would let them fill one probe run.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory_resource>
#include <new>
#include <utility>
#include <vector>

#include "protocol/types.hpp"

namespace sk {

template <class V>
class swarm_map {
 public:
  struct value_type {
    info_hash first;
    /// Low 32 bits of the key's hash (in what would be padding).
    std::uint32_t tag = 0;
    V second;
  };
  using iterator = typename std::pmr::vector<value_type>::iterator;
  using const_iterator = typename std::pmr::vector<value_type>::const_iterator;

  explicit swarm_map(std::pmr::memory_resource* r = std::pmr::get_default_resource())
      : items_(r), slots_(r) {}

  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }

  /// The hash `find(h, hash)` expects.
  std::uint64_t hash(const info_hash& h) const noexcept { return hasher_(h); }

  iterator find(const info_hash& h) { return find(h, hash(h)); }
  const_iterator find(const info_hash& h) const { return find(h, hash(h)); }
  /// `hash` must be `hash(h)`.
  iterator find(const info_hash& h, std::uint64_t hash) {
    const std::uint32_t p = locate(h, static_cast<std::uint32_t>(hash));
    return p == none ? items_.end() : items_.begin() + p;
  }
  const_iterator find(const info_hash& h, std::uint64_t hash) const {
    const std::uint32_t p = locate(h, static_cast<std::uint32_t>(hash));
    return p == none ? items_.end() : items_.begin() + p;
  }

  /// Cache hints for a batch of lookups, each call a stage of its own so
  /// that the misses of many keys overlap: `prefetch_slot` asks for the home
  /// slot's line, `prefetch_item` (once that line is likely there) for the
  /// item the first slot with the key's tag names. Neither changes anything
  /// or reads an item; `hash` is `hash(h)`.
  void prefetch_slot(std::uint64_t hash) const noexcept {
    if (slots_.empty()) return;
    __builtin_prefetch(&slots_[static_cast<std::uint32_t>(hash) & mask_]);
  }
  void prefetch_item(std::uint64_t hash) const noexcept {
    if (slots_.empty()) return;
    const auto tag = static_cast<std::uint32_t>(hash);
    for (std::uint32_t s = tag & mask_;; s = (s + 1) & mask_) {
      const slot& e = slots_[s];
      if (e.pos == none) return;
      if (e.tag == tag) {
        const auto* item = reinterpret_cast<const char*>(&items_[e.pos]);
        __builtin_prefetch(item);
        __builtin_prefetch(item + sizeof(value_type) - 1);  // an item across two lines
        return;
      }
    }
  }

  /// Makes room for one more item, so that the next `emplace` of a new key
  /// cannot throw (a caller that must not fail after it acted, such as the
  /// directory after spawning a swarm, calls this first). May throw
  /// std::bad_alloc, changing nothing.
  void reserve_one() {
    if ((items_.size() + 1) * 4 > slots_.size() * 3) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    if (items_.size() == items_.capacity()) items_.reserve(items_.size() + items_.size() / 2 + 4);
  }

  /// Adds `h` -> `v` unless `h` is present; the item, and whether it was
  /// added.
  std::pair<iterator, bool> emplace(const info_hash& h, V v) {
    const auto tag = static_cast<std::uint32_t>(hash(h));
    if (const std::uint32_t p = locate(h, tag); p != none) return {items_.begin() + p, false};
    reserve_one();
    const auto pos = static_cast<std::uint32_t>(items_.size());
    items_.push_back(value_type{h, tag, std::move(v)});
    place(tag, pos);
    return {items_.begin() + pos, true};
  }

  /// Removes the item at `it`; returns the iterator to its position (the
  /// moved last item there, or end()).
  iterator erase(iterator it) noexcept { return erase(const_iterator(it)); }
  iterator erase(const_iterator it) noexcept {
    const auto p = static_cast<std::uint32_t>(it - items_.cbegin());
    unlink(slot_of(items_[p].tag, p));
    const auto last = static_cast<std::uint32_t>(items_.size() - 1);
    if (p != last) {
      slots_[slot_of(items_[last].tag, last)].pos = p;
      items_[p] = std::move(items_[last]);
    }
    items_.pop_back();
    if (items_.capacity() > 64 && items_.size() * 4 <= items_.capacity()) {
      try {
        shrink();
      } catch (const std::bad_alloc&) {
        // Keep the room: a later erasure tries again.
      }
    }
    return items_.begin() + p;
  }

  void clear() {
    std::pmr::vector<value_type>(items_.get_allocator()).swap(items_);
    std::pmr::vector<slot>(slots_.get_allocator()).swap(slots_);
    mask_ = 0;
  }

  /// Bytes both arrays hold (capacity).
  std::size_t heap_bytes() const noexcept {
    return items_.capacity() * sizeof(value_type) + slots_.capacity() * sizeof(slot);
  }
  /// Slots in the index (a power of two, or 0).
  std::size_t slot_count() const noexcept { return slots_.size(); }

  /// Every item found through its slot, every slot naming an item whose
  /// tag it holds, no probe run broken, load <= 3/4; for tests. O(size).
  bool check() const {
    std::size_t used = 0;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      if (slots_[s].pos == none) continue;
      ++used;
      if (slots_[s].pos >= items_.size() || items_[slots_[s].pos].tag != slots_[s].tag) return false;
      // Every slot from the home slot to this one is in use.
      for (std::uint32_t q = slots_[s].tag & mask_; q != s; q = (q + 1) & mask_)
        if (slots_[q].pos == none) return false;
    }
    if (used != items_.size() || items_.size() * 4 > slots_.size() * 3) return false;
    for (std::size_t p = 0; p < items_.size(); ++p) {
      if (items_[p].tag != static_cast<std::uint32_t>(hash(items_[p].first))) return false;
      if (locate(items_[p].first, items_[p].tag) != p) return false;
    }
    return true;
  }

 private:
  static constexpr std::uint32_t none = 0xffffffffu;
  struct slot {
    std::uint32_t tag = 0;
    std::uint32_t pos = none;
  };

  /// 20-byte equality as three word compares (memcmp's call costs more).
  static bool same(const info_hash& a, const info_hash& b) noexcept {
    std::uint64_t x[2], y[2];
    std::uint32_t x4, y4;
    std::memcpy(x, a.bytes.data(), 16);
    std::memcpy(&x4, a.bytes.data() + 16, 4);
    std::memcpy(y, b.bytes.data(), 16);
    std::memcpy(&y4, b.bytes.data() + 16, 4);
    return ((x[0] ^ y[0]) | (x[1] ^ y[1]) | (x4 ^ y4)) == 0;
  }

  std::uint32_t locate(const info_hash& h, std::uint32_t tag) const noexcept {
    if (slots_.empty()) return none;
    for (std::uint32_t s = tag & mask_;; s = (s + 1) & mask_) {
      const slot& e = slots_[s];
      if (e.pos == none) return none;
      if (e.tag == tag && same(items_[e.pos].first, h)) return e.pos;
    }
  }

  /// The slot holding position `pos` (present).
  std::uint32_t slot_of(std::uint32_t tag, std::uint32_t pos) const noexcept {
    std::uint32_t s = tag & mask_;
    while (slots_[s].pos != pos) s = (s + 1) & mask_;
    return s;
  }

  void place(std::uint32_t tag, std::uint32_t pos) noexcept {
    std::uint32_t s = tag & mask_;
    while (slots_[s].pos != none) s = (s + 1) & mask_;
    slots_[s] = slot{tag, pos};
  }

  /// Empties slot `i`, shifting later entries of the run back into the gap
  /// when their home slot allows.
  void unlink(std::uint32_t i) noexcept {
    for (std::uint32_t j = (i + 1) & mask_; slots_[j].pos != none; j = (j + 1) & mask_) {
      const std::uint32_t home = slots_[j].tag & mask_;
      // j's entry may fill i when i lies on its way from home to j.
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].pos = none;
  }

  /// Rebuilds the index with `cap` slots (a power of two) from the items.
  void rehash(std::size_t cap) { index_into(std::pmr::vector<slot>(cap, slot{}, slots_.get_allocator())); }

  /// Makes `fresh` (empty slots, a power of two of them) the index and
  /// places every item in it. Allocates nothing.
  void index_into(std::pmr::vector<slot>&& fresh) noexcept {
    slots_.swap(fresh);
    mask_ = static_cast<std::uint32_t>(slots_.size() - 1);
    for (std::uint32_t p = 0; p < items_.size(); ++p) place(items_[p].tag, p);
  }

  /// Refits both arrays to the items (half the room free again). Both new
  /// arrays are allocated before anything changes: a std::bad_alloc leaves
  /// the map as it was.
  void shrink() {
    std::pmr::vector<value_type> fresh(items_.get_allocator());
    fresh.reserve(items_.size() * 2);
    std::size_t cap = 16;
    while (cap * 3 < items_.size() * 4 * 2) cap *= 2;  // load <= 3/8
    std::pmr::vector<slot> index(cap, slot{}, slots_.get_allocator());
    std::move(items_.begin(), items_.end(), std::back_inserter(fresh));
    items_.swap(fresh);
    index_into(std::move(index));
  }

  id20_hasher hasher_;
  std::pmr::vector<value_type> items_;
  std::pmr::vector<slot> slots_;
  std::uint32_t mask_ = 0;
};

}  // namespace sk
