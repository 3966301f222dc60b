#include "net/address_key.hpp"

#include <cstring>
#include <random>
#include <string>

namespace sk {

siphash_key random_siphash_key() {
  siphash_key k{};
  std::random_device rd;
  for (std::size_t i = 0; i < k.size(); i += 4) {
    const std::uint32_t v = rd();
    std::memcpy(k.data() + i, &v, 4);
  }
  return k;
}

std::uint64_t address_key(const siphash_key& secret, const ip_address& a) noexcept {
  // 17 bytes: the family, then the address (IPv6: its /64, zeros after).
  std::uint8_t buf[17] = {};
  buf[0] = a.v6 ? 6 : 4;
  std::memcpy(buf + 1, a.bytes.data(), a.v6 ? 8 : 4);
  return siphash24(secret, buf, sizeof buf);
}

std::string subscriber_text(const ip_address& a) {
  if (!a.v6) return a.to_string();
  ip_address net = a;
  for (std::size_t i = 8; i < 16; ++i) net.bytes[i] = 0;
  return net.to_string() + "/64";
}

}  // namespace sk
