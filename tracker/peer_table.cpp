#include "tracker/peer_table.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <random>

namespace sk {

namespace {

constexpr std::uint32_t no_slot = std::numeric_limits<std::uint32_t>::max();

}  // namespace

std::size_t peer_key_hasher::operator()(const peer_key& k) const noexcept {
  std::uint64_t w[2];
  std::memcpy(w, k.ip.bytes.data(), sizeof w);
  std::uint64_t h = id20_hasher{}(k.id);
  h ^= (w[0] + (k.ip.v6 ? 0x9e3779b97f4a7c15ULL : 0)) * 0xbf58476d1ce4e5b9ULL;
  h ^= (w[1] + (h >> 29)) * 0x94d049bb133111ebULL;
  return static_cast<std::size_t>(h ^ (h >> 32));
}

// -- sparse_sampler ----------------------------------------------------------
//
// Sparse Fisher–Yates. Think of an array a[0..size) with a[x] = x. Step i
// swaps a[i] with a[j], j uniform in [i, size), and emits the new a[i]. After
// k steps a[0..k) is a uniformly random k-permutation of [0, size): step i
// picks uniformly among the size - i values not yet emitted, so each ordered
// outcome has probability 1 / (size (size-1) ... (size-k+1)). Only positions
// that were swapped differ from identity, and at most one new position (j)
// is written per step, so a tiny hash map of <= k entries represents the
// array: O(k) time and memory whatever the swarm size. Position i is never
// read after step i, so it need not be written back.
//
// Because every prefix of the permutation is itself uniform, a caller may
// stop early or reject some positions (rejection sampling from a uniform
// permutation leaves the accepted ones a uniform sample of the acceptable).
//
// The map is open addressing with linear probing at load <= 1/2; entries are
// valid only when their stamp equals the current draw's stamp, so clearing
// between draws is O(1).

void sparse_sampler::reset(std::uint32_t size, std::uint32_t max_draws) {
  assert(max_draws <= size);
  size_ = size;
  drawn_ = 0;
  // Capacity: a power of two >= 2 * max_draws keeps probes short.
  std::size_t cap = 16;
  while (cap < 2 * static_cast<std::size_t>(max_draws)) {
    cap *= 2;
  }
  if (stamps_.size() < cap) {
    keys_.assign(cap, 0);
    values_.assign(cap, 0);
    stamps_.assign(cap, 0);
    stamp_ = 0;
  }
  mask_ = static_cast<std::uint32_t>(cap - 1);
  if (++stamp_ == 0) {  // wrapped: old stamps could look current again
    std::fill(stamps_.begin(), stamps_.end(), 0);
    stamp_ = 1;
  }
}

// -- key_index ----------------------------------------------------------------

namespace {

/// 64x64 -> 128-bit multiply, folded (the wyhash mixing step).
inline std::uint64_t mum(std::uint64_t a, std::uint64_t b) noexcept {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

/// Drawn once per process from the OS: index keys then depend on more than
/// the table's seed, which also seeds the (observable) selection PRNG.
std::uint64_t process_secret() {
  static const std::uint64_t secret = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return secret;
}

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

}  // namespace

void peer_table::key_index::set_key(std::uint64_t seed) noexcept {
  std::uint64_t s = seed ^ 0x1dec5eedULL ^ process_secret();
  // Odd-ish, well mixed 64-bit keys; splitmix64 never repeats a value in
  // four steps.
  k0_ = splitmix64(s);
  k1_ = splitmix64(s);
  k2_ = splitmix64(s);
  k3_ = splitmix64(s);
}

std::uint64_t peer_table::key_index::hash(const peer_key& k) const noexcept {
  // The peer id and the address family only, not the address: every record
  // of one id and family shares a tag and a home bucket, so the records of a
  // client that roamed to a new address are found on one probe run
  // (`for_each_same_id`). The table bounds such records per id
  // (`default_max_addresses_per_id`), so a crafted id cannot grow a run. The 20 id
  // bytes are three words, each pair multiplied under secret keys: the
  // folded 128-bit products mix every input bit into every output bit, and
  // without the keys a client cannot aim ids at one bucket.
  std::uint64_t id[3] = {0, 0, 0};
  std::memcpy(id, k.id.bytes.data(), 20);
  const std::uint64_t a = mum(id[0] ^ k0_, id[1] ^ k1_);
  const std::uint64_t b = mum(id[2] ^ k2_ ^ (k.ip.v6 ? 0x9e3779b97f4a7c15ULL : 0), a ^ k3_);
  return mum(b ^ k1_, a ^ k2_);
}

std::uint32_t peer_table::key_index::find(const peer_key& k,
                                          const std::vector<record>& records) const {
  if (size_ == 0) {
    return none;
  }
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  for (std::uint32_t p = tag & mask_;; p = (p + 1) & mask_) {
    const entry& e = slots_[p];
    if (e.index == none) {
      return none;
    }
    if (e.tag == tag) {
      const record& r = records[e.index];
      if (same_key(r.id, r.ip, k)) {
        return e.index;
      }
    }
  }
}

std::uint32_t peer_table::key_index::slot_of(const peer_key& k, std::uint32_t i) const {
  // The entry holding i lies on k's probe run; compare indices, not keys.
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  for (std::uint32_t p = tag & mask_;; p = (p + 1) & mask_) {
    assert(slots_[p].index != none);
    if (slots_[p].index == i) {
      return p;
    }
  }
}

void peer_table::key_index::grow() { rehash(slots_.empty() ? 16 : slots_.size() * 2); }

void peer_table::key_index::shrink(std::size_t size) {
  std::size_t cap = 16;
  while (4 * (size + 1) > 3 * cap) {
    cap *= 2;
  }
  // Half the slots again as headroom, so a swarm that shrinks and grows
  // around one size does not rehash back and forth.
  if (slots_.size() > 4 * cap) {
    rehash(2 * cap);
  }
}

void peer_table::key_index::rehash(std::size_t cap) {
  // Tags are 32 bits, so the home bucket needs mask_ < 2^32: up to 3 * 2^30
  // peers per table (about 600 GB of records).
  assert(cap <= (std::size_t{1} << 32));
  assert(4 * size_ <= 3 * cap);
  std::vector<entry> old(cap);
  old.swap(slots_);
  mask_ = static_cast<std::uint32_t>(cap - 1);
  for (const entry& e : old) {
    if (e.index != none) {
      std::uint32_t p = e.tag & mask_;
      while (slots_[p].index != none) {
        p = (p + 1) & mask_;
      }
      slots_[p] = e;
    }
  }
}

void peer_table::key_index::insert(const peer_key& k, std::uint32_t i) {
  if (4 * (size_ + 1) > 3 * slots_.size()) {
    grow();
  }
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  std::uint32_t p = tag & mask_;
  while (slots_[p].index != none) {
    p = (p + 1) & mask_;
  }
  slots_[p] = entry{tag, i};
  ++size_;
}

void peer_table::key_index::erase(const peer_key& k, std::uint32_t i) {
  // Backward-shift deletion: walk the run after the hole and move back
  // every entry whose home bucket is not in (hole, its position], i.e. that
  // a lookup would otherwise stop short of at the hole.
  std::uint32_t hole = slot_of(k, i);
  for (std::uint32_t p = (hole + 1) & mask_;; p = (p + 1) & mask_) {
    const entry e = slots_[p];
    if (e.index == none) {
      break;
    }
    const std::uint32_t home = e.tag & mask_;
    if (((p - home) & mask_) >= ((p - hole) & mask_)) {
      slots_[hole] = e;
      hole = p;
    }
  }
  slots_[hole] = entry{};
  --size_;
}

void peer_table::key_index::move(const peer_key& k, std::uint32_t from, std::uint32_t to) {
  slots_[slot_of(k, from)].index = to;
}

bool peer_table::key_index::check(const std::vector<record>& records) const {
  if (size_ != records.size() || (!slots_.empty() && 4 * size_ > 3 * slots_.size())) {
    return false;
  }
  std::size_t used = 0;
  for (std::uint32_t p = 0; p < slots_.size(); ++p) {
    const entry& e = slots_[p];
    if (e.index == none) {
      continue;
    }
    ++used;
    if (e.index >= records.size()) {
      return false;
    }
    const record& r = records[e.index];
    if (e.tag != static_cast<std::uint32_t>(hash(peer_key{r.id, r.ip}) >> 32)) {
      return false;
    }
    // Probe-run invariant: no empty slot between the home bucket and here.
    for (std::uint32_t q = e.tag & mask_; q != p; q = (q + 1) & mask_) {
      if (slots_[q].index == none) {
        return false;
      }
    }
  }
  if (used != size_) {
    return false;
  }
  for (std::uint32_t i = 0; i < records.size(); ++i) {
    if (find(peer_key{records[i].id, records[i].ip}, records) != i) {
      return false;
    }
  }
  return true;
}

// -- peer_table --------------------------------------------------------------

peer_table::peer_table(std::uint64_t seed, std::size_t max_peers,
                       std::size_t max_addresses_per_id)
    : index_seed_(seed),
      max_peers_(static_cast<std::uint32_t>(std::min<std::size_t>(max_peers, no_slot - 1))),
      max_addresses_per_id_(static_cast<std::uint32_t>(
          std::min<std::size_t>(max_addresses_per_id, std::numeric_limits<std::uint32_t>::max()))),
      rng_(seed) {}

void peer_table::build_index() {
  key_index& index = index_.ensure();
  index.set_key(index_seed_);
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    index.insert(peer_key{records_[i].id, records_[i].ip}, i);
  }
}

peer_table::reveal_state& peer_table::reveal_at(std::uint32_t i) {
  if (reveal_.size() != records_.size()) {
    reveal_.resize(records_.size());
  }
  return reveal_[i];
}

const peer_traits& peer_table::last_removed() const noexcept {
  static const peer_traits none;
  const peer_traits* t = last_removed_.get();
  return t != nullptr ? *t : none;
}

namespace {

/// Capacity worth giving back: far above what the size needs.
template <class V>
void shrink_if_loose(V& v) {
  if (v.capacity() > 2 * v.size() + 4) {
    V(v.begin(), v.end()).swap(v);
  }
}

/// Grows `v` for one more element by half its size instead of doubling:
/// small swarms are most swarms, and a swarm of 9 peers should not hold
/// arrays for 16.
template <class V>
void reserve_one_more(V& v) {
  if (v.size() == v.capacity()) {
    v.reserve(v.size() + v.size() / 2 + 1);
  }
}

}  // namespace

void peer_table::compact(bool keep_last_removed) {
  sync();
  if (index_.has_value() && records_.size() <= small_table / 2) {
    index_.reset();
  } else if (index_.has_value()) {
    index_.get()->shrink(records_.size());
  }
  shrink_if_loose(records_);
  shrink_if_loose(hot_);
  if (records_.empty()) {
    reveal_.clear();
  }
  shrink_if_loose(reveal_);
  for (family* f : {&v4_, &v6_}) {
    shrink_if_loose(f->compact);
    shrink_if_loose(f->owner);
  }
  for (auto& role : pools_) {
    for (auto& pool : role) {
      shrink_if_loose(pool);
    }
  }
  pending_.clear();
  pending_.shrink_to_fit();
  if (!keep_last_removed) {
    last_removed_.reset();
  }
}

std::size_t peer_table::heap_bytes() const noexcept {
  std::size_t n = records_.capacity() * sizeof(record) + hot_.capacity() * sizeof(hot_entry) +
                  reveal_.capacity() * sizeof(reveal_state) +
                  pending_.capacity() * sizeof(std::uint32_t);
  for (const family* f : {&v4_, &v6_}) {
    // A short string lives inside the object.
    n += f->compact.capacity() > 15 ? f->compact.capacity() + 1 : 0;
    n += f->owner.capacity() * sizeof(std::uint32_t);
  }
  for (const auto& role : pools_) {
    for (const auto& pool : role) {
      n += pool.capacity() * sizeof(std::uint32_t);
    }
  }
  if (const key_index* index = index_.get()) {
    n += sizeof(key_index) + index->heap_bytes();
  }
  if (last_removed_.has_value()) {
    n += sizeof(peer_traits);
  }
  return n;
}

void peer_table::write_compact(std::uint32_t i) {
  const record& r = records_[i];
  family& f = family_of(r.ip);
  char* out = &f.compact[static_cast<std::size_t>(hot_[i].slot) * f.width()];
  const std::size_t addr_len = r.ip.length();
  std::memcpy(out, r.ip.bytes.data(), addr_len);
  out[addr_len] = static_cast<char>(r.port >> 8);
  out[addr_len + 1] = static_cast<char>(r.port & 0xff);
}

void peer_table::swap_slots(family& f, std::uint32_t a, std::uint32_t b) {
  if (a == b) {
    return;
  }
  char tmp[18];
  char* pa = &f.compact[static_cast<std::size_t>(a) * f.width()];
  char* pb = &f.compact[static_cast<std::size_t>(b) * f.width()];
  std::memcpy(tmp, pa, f.width());
  std::memcpy(pa, pb, f.width());
  std::memcpy(pb, tmp, f.width());
  std::swap(f.owner[a], f.owner[b]);
  hot_[f.owner[a]].slot = a;
  hot_[f.owner[b]].slot = b;
}

void peer_table::pool_insert(std::uint32_t i) {
  auto& pool = pool_of(hot_[i]);
  records_[i].pool_pos = static_cast<std::uint32_t>(pool.size());
  pool.push_back(i);
}

void peer_table::pool_erase(std::uint32_t i) {
  record& r = records_[i];
  auto& pool = pool_of(hot_[i]);
  const std::uint32_t moved = pool.back();
  pool[r.pool_pos] = moved;
  records_[moved].pool_pos = r.pool_pos;
  pool.pop_back();
  r.pool_pos = none;
}

void peer_table::exclude(std::uint32_t i) {
  hot_entry& h = hot_[i];
  assert(!h.has(hot_quarantined));
  family& f = family_of(h);
  // Move the slot to the last sampleable position, then shrink the
  // sampleable range over it.
  swap_slots(f, h.slot, f.active - 1);
  --f.active;
  pool_erase(i);
  h.set(hot_quarantined, true);
}

void peer_table::include(std::uint32_t i) {
  hot_entry& h = hot_[i];
  assert(h.has(hot_quarantined));
  family& f = family_of(h);
  // The first quarantined slot becomes sampleable: put this peer there.
  swap_slots(f, h.slot, f.active);
  ++f.active;
  pool_insert(i);
  h.set(hot_quarantined, false);
}

void peer_table::reconcile(std::uint32_t i) {
  const std::uint8_t flags = records_[i].traits.flags;
  hot_[i].flags = flags;
  const bool want = (flags & flag_quarantined) != 0;
  if (want != hot_[i].has(hot_quarantined)) {
    want ? exclude(i) : include(i);
  }
}

void peer_table::sync() {
  if (resync_all_) {
    for (std::uint32_t i = 0; i < records_.size(); ++i) {
      reconcile(i);
    }
    resync_all_ = false;
  } else {
    // No record moved since these were handed out (only non-const calls
    // move records, and each starts here), so the indices are current.
    for (const std::uint32_t i : pending_) {
      if (i < records_.size()) {
        reconcile(i);
      }
    }
  }
  pending_.clear();
}

peer_table::change peer_table::announce(const peer_id& id, const endpoint& ep, std::uint64_t left,
                                        announce_event event, time_point now) {
  const auto res = announce_ex(id, ep, left, event, now);
  if (res.first == change::added || res.first == change::updated) {
    // Nobody got the pointer: nothing to reconcile for this record.
    pending_.pop_back();
  }
  return res.first;
}

std::pair<peer_table::change, peer_traits*> peer_table::announce_ex(
    const peer_id& id, const endpoint& ep, std::uint64_t left, announce_event event,
    time_point now) {
  sync();
  const peer_key key{id, ep.ip};
  const std::uint32_t found = locate(key);
  if (found == none) {
    if (event == announce_event::stopped) {
      return {change::ignored, nullptr};
    }
    if (records_.size() >= max_peers_) {
      return {change::rejected, nullptr};
    }
    if (max_addresses_per_id_ != 0) {
      std::size_t same = 0;
      for_each_same_id(id, ep.ip.v6, [&](std::uint32_t) { ++same; });
      if (same >= max_addresses_per_id_) {
        return {change::rejected, nullptr};
      }
    }
    const auto i = static_cast<std::uint32_t>(records_.size());
    const bool partial = left > 0 && event == announce_event::paused;
    family& f = family_of(ep.ip);
    record r;
    r.id = id;
    r.ip = ep.ip;
    r.port = ep.port;
    r.completed = event == announce_event::completed;
    r.last_seen = now;
    hot_entry h;
    h.slot = static_cast<std::uint32_t>(f.owner.size());
    h.set(hot_v6, ep.ip.v6);
    h.set(hot_seeder, left == 0);
    h.set(hot_partial, partial);
    f.owner.push_back(i);
    f.compact.resize(f.compact.size() + f.width());
    reserve_one_more(records_);
    reserve_one_more(hot_);
    records_.push_back(std::move(r));
    hot_.push_back(h);
    if (!reveal_.empty()) {
      reveal_.emplace_back();
    }
    if (index_.has_value()) {
      index_.get()->insert(key, i);
    } else if (records_.size() > small_table) {
      build_index();
    }
    write_compact(i);
    // New peers are sampleable: move the new slot in front of the
    // quarantined ones.
    swap_slots(f, hot_[i].slot, f.active);
    ++f.active;
    pool_insert(i);
    hint_ = i;
    hint_key_ = key;
    ++(left == 0 ? seeders_ : leechers_);
    partial_ += partial;
    if (records_.back().completed) {
      ++downloaded_;
    }
    pending_.push_back(i);
    return {change::added, &records_[i].traits};
  }
  const std::uint32_t i = found;
  if (event == announce_event::stopped) {
    remove_at(i);
    return {change::removed, last_removed_.get()};
  }
  record& r = records_[i];
  hot_entry& h = hot_[i];
  hint_ = i;
  hint_key_ = key;
  r.last_seen = now;
  if (r.port != ep.port) {
    r.port = ep.port;
    write_compact(i);
  }
  const bool seeder = left == 0;
  if (seeder != h.has(hot_seeder)) {
    // Exact counts through transitions (leecher -> seeder, and back when a
    // client re-checks data and finds it incomplete).
    --(h.has(hot_seeder) ? seeders_ : leechers_);
    ++(seeder ? seeders_ : leechers_);
    if (!h.has(hot_quarantined)) {
      pool_erase(i);
      h.set(hot_seeder, seeder);
      pool_insert(i);
    } else {
      h.set(hot_seeder, seeder);
    }
  }
  const bool partial = !seeder && event == announce_event::paused;
  if (partial != h.has(hot_partial)) {
    partial ? ++partial_ : --partial_;
    h.set(hot_partial, partial);
  }
  if (event == announce_event::completed && !r.completed) {
    r.completed = true;
    ++downloaded_;
  }
  pending_.push_back(i);
  return {change::updated, &fresh_traits(i)};
}

bool peer_table::roam(const peer_key& from, const endpoint& to) {
  sync();
  const std::uint32_t i = locate(from);
  if (i == none || from.ip.v6 != to.ip.v6 || locate(peer_key{from.id, to.ip}) != none) {
    return false;
  }
  // Same id and family: the index entry (tag and home bucket) stays valid.
  record& r = records_[i];
  r.ip = to.ip;
  r.port = to.port;
  write_compact(i);
  if (hint_ == i) {
    hint_key_ = peer_key{r.id, r.ip};
  }
  return true;
}

peer_traits* peer_table::traits(const peer_key& k) {
  const std::uint32_t i = locate(k);
  if (i == none) {
    return nullptr;
  }
  pending_.push_back(i);
  return &fresh_traits(i);
}

const peer_traits* peer_table::traits(const peer_key& k) const {
  const std::uint32_t i = locate(k);
  return i == none ? nullptr : &fresh_traits(i);
}

void peer_table::remove_at(std::uint32_t i) {
  record& r = records_[i];
  const hot_entry h = hot_[i];
  --(h.has(hot_seeder) ? seeders_ : leechers_);
  partial_ -= h.has(hot_partial);
  if (key_index* index = index_.get()) {
    index->erase(peer_key{r.id, r.ip}, i);
  }
  if (!h.has(hot_quarantined)) {
    pool_erase(i);
  }

  // Swap-remove the compact bytes: first to the end of the sampleable range
  // (if it is in it), then to the family's last slot, which is dropped.
  family& f = family_of(h);
  std::uint32_t s = h.slot;
  if (s < f.active) {
    swap_slots(f, s, f.active - 1);
    s = --f.active;
  }
  swap_slots(f, s, static_cast<std::uint32_t>(f.owner.size() - 1));
  f.owner.pop_back();
  f.compact.resize(f.compact.size() - f.width());

  peer_traits& gone = last_removed_.ensure();
  gone = std::move(r.traits);
  gone.served = hot_[i].served;

  // Swap-remove the record and its hot and reveal entries: the last one
  // moves into i.
  const std::uint32_t last = static_cast<std::uint32_t>(records_.size() - 1);
  if (hint_ == i) {
    hint_ = none;
  } else if (hint_ == last) {
    hint_ = i;
  }
  if (i != last) {
    records_[i] = std::move(records_[last]);
    hot_[i] = hot_[last];
    if (!reveal_.empty()) {
      reveal_[i] = reveal_[last];
    }
    const record& moved = records_[i];
    const hot_entry& mh = hot_[i];
    if (key_index* index = index_.get()) {
      index->move(peer_key{moved.id, moved.ip}, last, i);
    }
    family_of(mh).owner[mh.slot] = i;
    if (!mh.has(hot_quarantined)) {
      pool_of(mh)[moved.pool_pos] = i;
    }
  }
  records_.pop_back();
  hot_.pop_back();
  if (!reveal_.empty()) {
    reveal_.pop_back();
  }
}

std::uint32_t peer_table::locate(const peer_key& k) const {
  // Selection follows the requester's own announce: try that record first.
  // The key is compared with the table's own copy, not the record's, so a
  // miss costs no cache miss on the record.
  if (hint_ != none && same_key(hint_key_.id, hint_key_.ip, k)) {
    assert(hint_ < records_.size());
    return hint_;
  }
  if (const key_index* index = index_.get()) {
    return index->find(k, records_);
  }
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    if (same_key(records_[i].id, records_[i].ip, k)) {
      return i;
    }
  }
  return none;
}

template <class Prepare, class Emit4, class Emit6>
std::size_t peer_table::select(const peer_key& requester, std::size_t n, family_filter families,
                               Prepare&& prepare, Emit4&& emit4, Emit6&& emit6) {
  sync();
  // Only sampleable slots [0, active) take part; the requester's slot is
  // skipped when it is among them.
  std::uint32_t skip4 = none;
  std::uint32_t skip6 = none;
  if (const std::uint32_t i = locate(requester); i != none) {
    const hot_entry& h = hot_[i];
    if (!h.has(hot_quarantined)) {
      (requester.ip.v6 ? skip6 : skip4) = h.slot;
    }
  }
  auto avail4 = static_cast<std::uint32_t>(v4_.active - (skip4 != none));
  auto avail6 = static_cast<std::uint32_t>(v6_.active - (skip6 != none));
  if (families == family_filter::v4_only) {
    avail6 = 0;
  } else if (families == family_filter::v6_only) {
    avail4 = 0;
  }
  const auto total = static_cast<std::size_t>(avail4) + avail6;
  if (n > total) {
    n = total;
  }
  if (n == 0) {
    return 0;
  }

  // How many of the n come from each family: exactly as many as n draws
  // without replacement from the union would give (draw i picks IPv4 with
  // probability remaining4 / remaining). Conditioned on the split, a uniform
  // sample within each family makes the whole a uniform n-subset of the
  // union. Single-family swarms (the common case) skip the draws.
  std::uint32_t k4 = 0;
  if (avail6 == 0) {
    k4 = static_cast<std::uint32_t>(n);
  } else if (avail4 != 0) {
    std::uint32_t a = avail4;
    std::uint32_t b = avail6;
    for (std::size_t d = 0; d < n; ++d) {
      if (rng_.below(a + b) < a) {
        ++k4;
        --a;
      } else {
        --b;
      }
    }
  }
  const auto k6 = static_cast<std::uint32_t>(n - k4);
  prepare(k4, k6);

  // Sampling positions of a virtual array that lacks the requester's slot:
  // position p maps to slot p, or p + 1 from the requester's slot on.
  // Scratch for this draw only, shared by the tables on the thread (its
  // draws depend on the PRNG, size and count alone, not on the map).
  thread_local sparse_sampler sampler;
  sampler.draw(rng_, avail4, k4,
               [&](std::uint32_t p) { emit4(skip4 != none && p >= skip4 ? p + 1 : p); });
  sampler.draw(rng_, avail6, k6,
                [&](std::uint32_t p) { emit6(skip6 != none && p >= skip6 ? p + 1 : p); });
  return n;
}

std::size_t peer_table::select_compact(const peer_key& requester, std::size_t n,
                                       std::string& peers4, std::string& peers6,
                                       family_filter families) {
  // Grow each buffer once, then copy fixed-size entries (the compiler turns
  // a 6- or 18-byte memcpy into two moves; a variable-length append would
  // call memmove per peer).
  char* w4 = nullptr;
  char* w6 = nullptr;
  return select(
      requester, n, families,
      [&](std::uint32_t k4, std::uint32_t k6) {
        const std::size_t o4 = peers4.size();
        const std::size_t o6 = peers6.size();
        peers4.resize(o4 + 6 * static_cast<std::size_t>(k4));
        peers6.resize(o6 + 18 * static_cast<std::size_t>(k6));
        w4 = peers4.data() + o4;
        w6 = peers6.data() + o6;
      },
      [&](std::uint32_t slot) {
        std::memcpy(w4, v4_.compact.data() + static_cast<std::size_t>(slot) * 6, 6);
        w4 += 6;
      },
      [&](std::uint32_t slot) {
        std::memcpy(w6, v6_.compact.data() + static_cast<std::size_t>(slot) * 18, 18);
        w6 += 18;
      });
}

std::size_t peer_table::select_entries(const peer_key& requester, std::size_t n,
                                       std::vector<peer_entry>& out, family_filter families) {
  auto emit_from = [&](const family& f) {
    return [&out, &f, this](std::uint32_t slot) {
      const record& r = records_[f.owner[slot]];
      peer_entry e;
      e.id = r.id;
      e.ep.ip = r.ip;
      e.ep.port = r.port;
      out.push_back(e);
    };
  };
  auto prepare = [&](std::uint32_t k4, std::uint32_t k6) { out.reserve(out.size() + k4 + k6); };
  return select(requester, n, families, prepare, emit_from(v4_), emit_from(v6_));
}

bool peer_table::find(const peer_key& k, endpoint& out) const {
  const std::uint32_t i = locate(k);
  if (i == none) {
    return false;
  }
  const record& r = records_[i];
  out.ip = r.ip;
  out.port = r.port;
  return true;
}

bool peer_table::is_seeder(const peer_key& k) const {
  const std::uint32_t i = locate(k);
  return i != none && seeder_at(i);
}

bool peer_table::check_invariants() const {
  if (hot_.size() != records_.size() ||
      (!reveal_.empty() && reveal_.size() != records_.size())) {
    return false;
  }
  // Past small_table peers the index exists and covers every record.
  if (records_.size() > small_table && !index_.has_value()) {
    return false;
  }
  if (const key_index* index = index_.get(); index != nullptr && !index->check(records_)) {
    return false;
  }
  if (hint_ != none && (hint_ >= records_.size() ||
                         !(peer_key{records_[hint_].id, records_[hint_].ip} == hint_key_))) {
    return false;
  }
  if (v4_.owner.size() + v6_.owner.size() != records_.size()) {
    return false;
  }
  if (v4_.compact.size() != 6 * v4_.owner.size()) {
    return false;
  }
  if (v6_.compact.size() != 18 * v6_.owner.size()) {
    return false;
  }
  if (v4_.active > v4_.owner.size() || v6_.active > v6_.owner.size()) {
    return false;
  }
  std::size_t pooled = 0;
  for (const auto& role : pools_) {
    for (const auto& pool : role) {
      pooled += pool.size();
    }
  }
  if (pooled != static_cast<std::size_t>(v4_.active) + v6_.active) {
    return false;
  }
  std::vector<bool> pending(records_.size(), resync_all_);
  for (const std::uint32_t i : pending_) {
    if (i < pending.size()) {
      pending[i] = true;
    }
  }
  std::size_t seeders = 0;
  std::size_t partial = 0;
  std::size_t completed = 0;
  for (std::size_t i = 0; i < records_.size(); ++i) {
    const record& r = records_[i];
    const hot_entry& h = hot_[i];
    // The hot entry mirrors the record: family, and (once synced) flags.
    if (h.has(hot_v6) != r.ip.v6 ||
        (h.state & ~(hot_quarantined | hot_v6 | hot_seeder | hot_partial)) != 0 ||
        (h.has(hot_partial) && h.has(hot_seeder))) {
      return false;
    }
    if (h.mark > mark_epoch_) {
      return false;
    }
    const bool quarantined = h.has(hot_quarantined);
    const family& f = r.ip.v6 ? v6_ : v4_;
    if (h.slot >= f.owner.size() || f.owner[h.slot] != i) {
      return false;
    }
    // Quarantine partition: sampleable slots first, and in a pool exactly
    // when sampleable.
    if (quarantined != (h.slot >= f.active)) {
      return false;
    }
    if (quarantined) {
      if (r.pool_pos != none) {
        return false;
      }
    } else {
      const auto& pool = pools_[h.has(hot_seeder) ? 0 : 1][r.ip.v6 ? 1 : 0];
      if (r.pool_pos >= pool.size() || pool[r.pool_pos] != i) {
        return false;
      }
    }
    if (!pending[i] &&
        (quarantined != r.traits.has(flag_quarantined) || h.flags != r.traits.flags)) {
      return false;
    }
    const char* bytes = &f.compact[static_cast<std::size_t>(h.slot) * f.width()];
    const std::size_t len = r.ip.length();
    if (std::memcmp(bytes, r.ip.bytes.data(), len) != 0) {
      return false;
    }
    const auto port = static_cast<std::uint16_t>((static_cast<std::uint8_t>(bytes[len]) << 8) |
                                                 static_cast<std::uint8_t>(bytes[len + 1]));
    if (port != r.port) {
      return false;
    }
    seeders += h.has(hot_seeder);
    partial += h.has(hot_partial);
    completed += r.completed;
  }
  if (seeders != seeders_ || records_.size() - seeders != leechers_ || partial != partial_) {
    return false;
  }
  // downloaded_ also counts completions of peers that left since.
  return completed <= downloaded_;
}

}  // namespace sk
