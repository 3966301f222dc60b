#include "tracker/peer_index.hpp"

#include <cassert>
#include <cstring>
#include <random>

#include "tracker/random.hpp"

namespace sk {

std::size_t peer_key_hasher::operator()(const peer_key& k) const noexcept {
  std::uint64_t w[2];
  std::memcpy(w, k.ip.bytes.data(), sizeof w);
  std::uint64_t h = id20_hasher{}(k.id);
  h ^= (w[0] + (k.ip.v6 ? 0x9e3779b97f4a7c15ULL : 0)) * 0xbf58476d1ce4e5b9ULL;
  h ^= (w[1] + (h >> 29)) * 0x94d049bb133111ebULL;
  return static_cast<std::size_t>(h ^ (h >> 32));
}

// -- peer_key_index -------------------------------------------------------------

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

}  // namespace

void peer_key_index::set_key(std::uint64_t seed) noexcept {
  key_ = seed ^ 0x1dec5eedULL ^ process_secret();
}

void peer_key_index::clear() noexcept {
  peer_array<entry>().swap(slots_);
  mask_ = 0;
  size_ = 0;
}

std::uint64_t peer_key_index::hash(const peer_key& k) const noexcept {
  // The peer id and the address family only, not the address: every record
  // of one id and family shares a tag and a home bucket, so the records of a
  // client that roamed to a new address are found on one probe run
  // (`for_each_same_id`). The table bounds such records per id
  // (`default_max_addresses_per_id`), so a crafted id cannot grow a run. The 20 id
  // bytes are three words, each pair multiplied under secret keys: the
  // folded 128-bit products mix every input bit into every output bit, and
  // without the keys a client cannot aim ids at one bucket.
  // The four key words: odd-ish, well mixed 64-bit values, four steps of
  // splitmix64 from the stored key (it never repeats a value in four steps).
  std::uint64_t s = key_;
  const std::uint64_t k0 = splitmix64(s);
  const std::uint64_t k1 = splitmix64(s);
  const std::uint64_t k2 = splitmix64(s);
  const std::uint64_t k3 = splitmix64(s);
  std::uint64_t id[3] = {0, 0, 0};
  std::memcpy(id, k.id.bytes.data(), 20);
  const std::uint64_t a = mum(id[0] ^ k0, id[1] ^ k1);
  const std::uint64_t b = mum(id[2] ^ k2 ^ (k.ip.v6 ? 0x9e3779b97f4a7c15ULL : 0), a ^ k3);
  return mum(b ^ k1, a ^ k2);
}

std::uint32_t peer_key_index::find(const peer_key& k,
                                          const peer_array<peer_record>& records) const {
  if (size_ == 0) {
    return no_peer;
  }
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  for (std::uint32_t p = tag & mask_;; p = (p + 1) & mask_) {
    const entry& e = slots_[p];
    if (e.index == no_peer) {
      return no_peer;
    }
    if (e.tag == tag) {
      const peer_record& r = records[e.index];
      if (same_key(r.id, r.ip, k)) {
        return e.index;
      }
    }
  }
}

std::uint32_t peer_key_index::slot_of(const peer_key& k, std::uint32_t i) const {
  // The entry holding i lies on k's probe run; compare indices, not keys.
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  for (std::uint32_t p = tag & mask_;; p = (p + 1) & mask_) {
    assert(slots_[p].index != no_peer);
    if (slots_[p].index == i) {
      return p;
    }
  }
}

void peer_key_index::grow() { rehash(slots_.empty() ? 16 : slots_.size() * 2); }

void peer_key_index::shrink(std::size_t size) {
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

void peer_key_index::rehash(std::size_t cap) {
  // Tags are 32 bits, so the home bucket needs mask_ < 2^32: up to 3 * 2^30
  // peers per table (about 600 GB of records).
  assert(cap <= (std::size_t{1} << 32));
  assert(4 * std::size_t{size_} <= 3 * cap);
  peer_array<entry> old(cap);
  old.swap(slots_);
  mask_ = static_cast<std::uint32_t>(cap - 1);
  for (const entry& e : old) {
    if (e.index != no_peer) {
      std::uint32_t p = e.tag & mask_;
      while (slots_[p].index != no_peer) {
        p = (p + 1) & mask_;
      }
      slots_[p] = e;
    }
  }
}

void peer_key_index::insert(const peer_key& k, std::uint32_t i) {
  if (4 * (std::size_t{size_} + 1) > 3 * slots_.size()) {
    grow();
  }
  const auto tag = static_cast<std::uint32_t>(hash(k) >> 32);
  std::uint32_t p = tag & mask_;
  while (slots_[p].index != no_peer) {
    p = (p + 1) & mask_;
  }
  slots_[p] = entry{tag, i};
  ++size_;
}

void peer_key_index::erase(const peer_key& k, std::uint32_t i) {
  // Backward-shift deletion: walk the run after the hole and move back
  // every entry whose home bucket is not in (hole, its position], i.e. that
  // a lookup would otherwise stop short of at the hole.
  std::uint32_t hole = slot_of(k, i);
  for (std::uint32_t p = (hole + 1) & mask_;; p = (p + 1) & mask_) {
    const entry e = slots_[p];
    if (e.index == no_peer) {
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

void peer_key_index::move(const peer_key& k, std::uint32_t from, std::uint32_t to) {
  slots_[slot_of(k, from)].index = to;
}

bool peer_key_index::check(const peer_array<peer_record>& records) const {
  if (size_ != records.size() || (!slots_.empty() && 4 * std::size_t{size_} > 3 * slots_.size())) {
    return false;
  }
  std::size_t used = 0;
  for (std::uint32_t p = 0; p < slots_.size(); ++p) {
    const entry& e = slots_[p];
    if (e.index == no_peer) {
      continue;
    }
    ++used;
    if (e.index >= records.size()) {
      return false;
    }
    const peer_record& r = records[e.index];
    if (e.tag != static_cast<std::uint32_t>(hash(peer_key{r.id, r.ip}) >> 32)) {
      return false;
    }
    // Probe-run invariant: no empty slot between the home bucket and here.
    for (std::uint32_t q = e.tag & mask_; q != p; q = (q + 1) & mask_) {
      if (slots_[q].index == no_peer) {
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

}  // namespace sk
