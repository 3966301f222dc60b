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

// -- peer_table --------------------------------------------------------------

peer_table::peer_table(std::uint64_t seed, std::size_t max_peers,
                       std::size_t max_addresses_per_id, std::size_t max_peers_per_address)
    : index_seed_(seed),
      max_peers_(static_cast<std::uint32_t>(std::min<std::size_t>(max_peers, no_slot - 1))),
      max_addresses_per_id_(static_cast<std::uint32_t>(
          std::min<std::size_t>(max_addresses_per_id, std::numeric_limits<std::uint32_t>::max()))),
      max_per_address_(static_cast<std::uint32_t>(
          std::min<std::size_t>(max_peers_per_address, address_counts::max_count))),
      rng_(seed) {}

void peer_table::build_address_counts() {
  address_counts& a = addresses_.ensure();
  a = address_counts(index_seed_);
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    a.add(records_[i].ip);
  }
}

std::size_t peer_table::peers_at(const ip_address& ip) const noexcept {
  if (const address_counts* a = addresses_.get()) {
    return a->count(ip);
  }
  const std::uint64_t bits = address_bits(ip);
  std::size_t n = 0;
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    n += records_[i].ip.v6 == ip.v6 && address_bits(records_[i].ip) == bits;
  }
  return n;
}

void peer_table::build_index() {
  index_.set_key(index_seed_);
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    index_.insert(peer_key{records_[i].id, records_[i].ip}, i);
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
  if (index_.has_slots() && records_.size() <= small_table / 2) {
    index_.clear();
  } else if (index_.has_slots()) {
    index_.shrink(records_.size());
  }
  if (addresses_.has_value() && records_.size() < max_per_address_ / 2) {
    // Rebuilt when the table reaches the bound again (see `addresses_`).
    addresses_.reset();
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

void peer_table::reserve(const std::array<std::array<std::size_t, 2>, 2>& more) {
  std::size_t room = max_peers_ - std::min<std::size_t>(records_.size(), max_peers_);
  auto cut = [&room](std::size_t n) {
    n = std::min(n, room);
    room -= n;
    return n;
  };
  std::array<std::array<std::size_t, 2>, 2> n{};
  for (std::size_t role = 0; role < 2; ++role)
    for (std::size_t fam = 0; fam < 2; ++fam) n[role][fam] = cut(more[role][fam]);
  const std::size_t v4 = n[0][0] + n[1][0];
  const std::size_t v6 = n[0][1] + n[1][1];
  records_.reserve(records_.size() + v4 + v6);
  hot_.reserve(hot_.size() + v4 + v6);
  for (family* f : {&v4_, &v6_}) {
    const std::size_t k = f->v6 ? v6 : v4;
    if (k == 0) continue;
    f->compact.reserve(f->compact.size() + k * f->width());
    f->owner.reserve(f->owner.size() + k);
  }
  for (std::size_t role = 0; role < 2; ++role)
    for (std::size_t fam = 0; fam < 2; ++fam)
      if (n[role][fam] != 0) pools_[role][fam].reserve(pools_[role][fam].size() + n[role][fam]);
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
  n += index_.heap_bytes();
  if (last_removed_.has_value()) {
    n += sizeof(peer_traits);
  }
  if (const address_counts* a = addresses_.get()) {
    n += sizeof(address_counts) + a->heap_bytes();
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
    if (records_.size() >= max_peers_ || address_full(ep.ip)) {
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
    h.addr_tag = address_tag(ep.ip, index_seed_);
    f.owner.push_back(i);
    f.compact.resize(f.compact.size() + f.width());
    reserve_one_more(records_);
    reserve_one_more(hot_);
    records_.push_back(std::move(r));
    hot_.push_back(h);
    if (!reveal_.empty()) {
      reveal_.emplace_back();
    }
    if (index_.has_slots()) {
      index_.insert(key, i);
    } else if (records_.size() > small_table) {
      build_index();
    }
    if (address_counts* a = addresses_.get()) {
      a->add(ep.ip);
    } else if (max_per_address_ != 0 && records_.size() >= max_per_address_) {
      build_address_counts();
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
  address_counts* a = addresses_.get();
  const bool same_address = address_bits(from.ip) == address_bits(to.ip);
  if (a != nullptr && !same_address) {
    if (a->count(to.ip) >= max_per_address_) {
      return false;  // the new address is full: the client becomes a new peer there
    }
    a->remove(from.ip);
    a->add(to.ip);
  }
  hot_[i].addr_tag = address_tag(to.ip, index_seed_);
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
  if (index_.has_slots()) {
    index_.erase(peer_key{r.id, r.ip}, i);
  }
  if (address_counts* a = addresses_.get()) {
    a->remove(r.ip);
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
    if (index_.has_slots()) {
      index_.move(peer_key{moved.id, moved.ip}, last, i);
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
  if (index_.has_slots()) {
    return index_.find(k, records_);
  }
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    if (same_key(records_[i].id, records_[i].ip, k)) {
      return i;
    }
  }
  return none;
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

}  // namespace sk
