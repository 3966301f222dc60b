// The consistency check of every cross-reference (tests).
#include "tracker/peer_table.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

namespace sk {

bool peer_table::check_invariants() const {
  if (hot_.size() != records_.size() ||
      (!reveal_.empty() && reveal_.size() != records_.size())) {
    return false;
  }
  // Past small_table peers the index exists and covers every record.
  if (records_.size() > small_table && !index_.has_slots()) {
    return false;
  }
  if (index_.has_slots() && !index_.check(records_)) {
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
    if (port != r.port || h.addr_tag != address_tag(r.ip, index_seed_)) {
      return false;
    }
    seeders += h.has(hot_seeder);
    partial += h.has(hot_partial);
    completed += r.completed;
  }
  if (seeders != seeders_ || records_.size() - seeders != leechers_ || partial != partial_) {
    return false;
  }
  // Per-address counts: kept from the bound's size on, exact, and never
  // above the bound.
  if (max_per_address_ != 0 && records_.size() >= max_per_address_ && !addresses_.has_value()) {
    return false;
  }
  if (const address_counts* a = addresses_.get()) {
    for (const record& r : records_) {
      const std::size_t n = a->count(r.ip);
      if (n == 0 || n > max_per_address_) {
        return false;
      }
    }
    std::size_t distinct = 0;
    std::vector<std::pair<bool, std::uint64_t>> seen;
    seen.reserve(records_.size());
    for (const record& r : records_) seen.emplace_back(r.ip.v6, address_bits(r.ip));
    std::sort(seen.begin(), seen.end());
    for (std::size_t i = 0; i < seen.size(); ++i) {
      if (i == 0 || seen[i] != seen[i - 1]) {
        ++distinct;
        const std::size_t run = static_cast<std::size_t>(
            std::upper_bound(seen.begin() + static_cast<std::ptrdiff_t>(i), seen.end(), seen[i]) -
            (seen.begin() + static_cast<std::ptrdiff_t>(i)));
        ip_address ip;
        ip.v6 = seen[i].first;
        std::memcpy(ip.bytes.data(), &seen[i].second, ip.v6 ? 8 : 4);
        if (a->count(ip) != run) {
          return false;
        }
      }
    }
    if (distinct != a->size()) {
      return false;
    }
  }
  // downloaded_ also counts completions of peers that left since.
  return completed <= downloaded_;
}

}  // namespace sk
