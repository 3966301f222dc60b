#include "net/address_buckets.hpp"

#include <algorithm>

#include "net/address_key.hpp"

namespace sk {

address_buckets::address_buckets(std::uint32_t burst, double per_second,
                                 std::size_t max_addresses, std::size_t stripes)
    : address_buckets(burst, per_second, max_addresses, random_siphash_key(), stripes) {}

address_buckets::address_buckets(std::uint32_t burst, double per_second,
                                 std::size_t max_addresses, const siphash_key& secret,
                                 std::size_t stripes)
    : burst_(std::max<std::uint32_t>(burst, 1)),
      per_second_(per_second > 0 ? per_second : 1.0),
      stripe_count_(std::max<std::size_t>(stripes, 1)),
      per_stripe_(std::max<std::size_t>(max_addresses / stripe_count_, 1)),
      interval_(std::max<clock::duration>(
          std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / per_second_)),
          clock::duration(1))),
      tolerance_(interval_ * static_cast<clock::rep>(burst_ - 1)),
      expiry_(interval_ * static_cast<clock::rep>(burst_)),
      secret_(secret),
      stripes_(new stripe[stripe_count_]) {}

void address_buckets::trim(stripe& s, clock::time_point now) {
  for (int looked = 0; !s.order.empty(); ++looked) {
    const bool full = s.map.size() >= per_stripe_;
    if (!full && looked >= 2) break;
    const std::uint64_t k = s.order.front();
    s.order.pop_front();
    auto it = s.map.find(k);
    if (it == s.map.end()) continue;
    // Full again for longer than the refill from one token short: an entry
    // touched within a refill time is kept either way.
    if (full || now - it->second.due >= tolerance_) {
      s.map.erase(it);
    } else {
      s.order.push_back(k);  // still counting down: look at it again later
    }
  }
}

bool address_buckets::take(const ip_address& address, clock::time_point now) {
  const std::uint64_t k = address_key(secret_, address);
  // The top bits pick the stripe, the map hashes the low ones: independent.
  stripe& s = stripes_[static_cast<std::size_t>(k >> 48) % stripe_count_];
  std::lock_guard<std::mutex> guard(s.mtx);
  auto it = s.map.find(k);
  if (it == s.map.end()) {
    trim(s, now);
    s.map.emplace(k, bucket{now + interval_});  // a full bucket, one token taken
    s.order.push_back(k);
    return true;
  }
  bucket& b = it->second;
  const clock::time_point due = std::max(b.due, now);  // never fuller than full
  if (due - now > tolerance_) return false;
  b.due = due + interval_;
  return true;
}

std::size_t address_buckets::tracked() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < stripe_count_; ++i) {
    std::lock_guard<std::mutex> guard(stripes_[i].mtx);
    n += stripes_[i].map.size();
  }
  return n;
}

}  // namespace sk
