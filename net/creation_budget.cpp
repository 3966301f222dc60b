#include "net/creation_budget.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace sk {

namespace {

siphash_key random_secret() {
  siphash_key k{};
  std::random_device rd;
  for (std::size_t i = 0; i < k.size(); i += 4) {
    const std::uint32_t v = rd();
    std::memcpy(k.data() + i, &v, 4);
  }
  return k;
}

}  // namespace

creation_budget::creation_budget(std::uint32_t burst, double per_minute, std::size_t max_addresses)
    : creation_budget(burst, per_minute, max_addresses, random_secret()) {}

creation_budget::creation_budget(std::uint32_t burst, double per_minute,
                                 std::size_t max_addresses, const siphash_key& secret)
    : burst_(std::max<std::uint32_t>(burst, 1)),
      per_second_(per_minute > 0 ? per_minute / 60.0 : 1.0 / 60.0),
      per_stripe_(std::max<std::size_t>(max_addresses / stripes, 1)),
      expiry_(std::chrono::duration_cast<clock::duration>(
          std::chrono::duration<double>(static_cast<double>(burst_) / per_second_))),
      secret_(secret),
      stripes_(new stripe[stripes]) {}

std::uint64_t creation_budget::key_of(const ip_address& a) const noexcept {
  // 17 bytes: the family, then the address (IPv6: its /64, zeros after).
  std::uint8_t buf[17] = {};
  buf[0] = a.v6 ? 6 : 4;
  std::memcpy(buf + 1, a.bytes.data(), a.v6 ? 8 : 4);
  return siphash24(secret_, buf, sizeof buf);
}

void creation_budget::trim(stripe& s, clock::time_point now) {
  for (int looked = 0; !s.order.empty(); ++looked) {
    const bool full = s.map.size() >= per_stripe_;
    if (!full && looked >= 2) break;
    const std::uint64_t k = s.order.front();
    s.order.pop_front();
    auto it = s.map.find(k);
    if (it == s.map.end()) continue;
    if (full || now - it->second.last >= expiry_) {
      s.map.erase(it);
    } else {
      s.order.push_back(k);  // still counting down: look at it again later
    }
  }
}

bool creation_budget::take(const ip_address& address, clock::time_point now) {
  const std::uint64_t k = key_of(address);
  stripe& s = stripes_[static_cast<std::size_t>(k >> 60) % stripes];
  std::lock_guard<std::mutex> guard(s.mtx);
  auto it = s.map.find(k);
  if (it == s.map.end()) {
    trim(s, now);
    bucket b;
    b.tokens = static_cast<float>(burst_) - 1.0f;
    b.last = now;
    s.map.emplace(k, b);
    s.order.push_back(k);
    return true;
  }
  bucket& b = it->second;
  if (now > b.last) {
    const double elapsed = std::chrono::duration<double>(now - b.last).count();
    b.tokens = static_cast<float>(
        std::min<double>(static_cast<double>(burst_), b.tokens + elapsed * per_second_));
    b.last = now;
  }
  if (b.tokens < 1.0f) return false;
  b.tokens -= 1.0f;
  return true;
}

std::size_t creation_budget::tracked() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < stripes; ++i) {
    std::lock_guard<std::mutex> guard(stripes_[i].mtx);
    n += stripes_[i].map.size();
  }
  return n;
}

}  // namespace sk
