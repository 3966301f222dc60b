#include "net/connection_slots.hpp"

#include <algorithm>

#include "net/address_key.hpp"

namespace sk {

connection_slots::connection_slots(std::size_t per_address)
    : connection_slots(per_address, random_siphash_key()) {}

connection_slots::connection_slots(std::size_t per_address, const siphash_key& secret)
    : per_address_(per_address), secret_(secret) {}

connection_slots::ticket connection_slots::open(const ip_address& a) {
  ticket t;
  t.key = address_key(secret_, a);
  std::lock_guard<std::mutex> guard(mtx_);
  std::size_t& n = held_[t.key];
  if (per_address_ != 0 && n >= per_address_) return t;
  ++n;
  t.held = true;
  return t;
}

void connection_slots::close(ticket& t) {
  if (!t.held) return;
  t.held = false;
  std::lock_guard<std::mutex> guard(mtx_);
  auto it = held_.find(t.key);
  if (it == held_.end()) return;
  if (--it->second == 0) held_.erase(it);
}

std::size_t connection_slots::held_by(const ip_address& a) const {
  const std::uint64_t k = address_key(secret_, a);
  std::lock_guard<std::mutex> guard(mtx_);
  auto it = held_.find(k);
  return it == held_.end() ? 0 : it->second;
}

std::size_t connection_slots::addresses() const {
  std::lock_guard<std::mutex> guard(mtx_);
  return held_.size();
}

std::size_t connection_slots::busiest() const {
  std::lock_guard<std::mutex> guard(mtx_);
  std::size_t most = 0;
  for (const auto& [key, n] : held_) most = std::max(most, n);
  return most;
}

}  // namespace sk
