#include "protocol/connection_id.hpp"

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "protocol/text.hpp"

namespace sk {
namespace {

/// 1 when `x` is non-zero, else 0, without a branch on `x`.
constexpr std::uint64_t nonzero_bit(std::uint64_t x) noexcept {
  return (x | (std::uint64_t{0} - x)) >> 63U;
}

}  // namespace

bool parse_connection_id_key(std::string_view hex, connection_id_key& out) noexcept {
  if (hex.size() != 2 * out.size()) {
    return false;
  }
  connection_id_key key{};
  for (std::size_t i = 0; i < key.size(); ++i) {
    const int hi = hex_digit(hex[2 * i]);
    const int lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return false;
    }
    key[i] = static_cast<std::uint8_t>((hi << 4) | lo);
  }
  out = key;
  return true;
}

connection_id_key random_connection_id_key() {
  // libstdc++ and libc++ both accept "/dev/urandom" as the token, which
  // names the kernel CSPRNG explicitly (the default token may pick the CPU's
  // RDRAND alone). Fall back to the default source where that token is not
  // understood.
  auto fill = [](std::random_device& rd) {
    connection_id_key key{};
    for (std::size_t i = 0; i < key.size(); i += 4) {
      const std::uint32_t word = rd();
      std::memcpy(key.data() + i, &word, 4);
    }
    return key;
  };
  try {
    std::random_device rd("/dev/urandom");
    return fill(rd);
  } catch (const std::exception&) {
    try {
      std::random_device rd;
      return fill(rd);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("no entropy source for the connection id key: ") +
                               e.what());
    }
  }
}

connection_id_issuer connection_id_issuer::from_config(std::string_view hex_key_or_empty) {
  if (hex_key_or_empty.empty()) {
    return connection_id_issuer(random_connection_id_key());
  }
  connection_id_key key{};
  if (!parse_connection_id_key(hex_key_or_empty, key)) {
    // The key itself is deliberately not echoed: it is a secret.
    throw std::invalid_argument(
        hex_key_or_empty.size() != 32
            ? "udp connection id key: expected exactly 32 hex digits (16 bytes), got " +
                  std::to_string(hex_key_or_empty.size()) + " characters"
            : std::string("udp connection id key: not a hex digit in the 32 characters"));
  }
  return connection_id_issuer(key);
}

std::int64_t connection_id_issuer::epoch_of(std::chrono::seconds now) noexcept {
  const std::int64_t s = now.count();
  std::int64_t q = s / epoch_seconds;
  if (s % epoch_seconds < 0) {
    --q;  // floor, not truncation toward zero
  }
  return q;
}

std::uint64_t connection_id_issuer::mac(std::int64_t epoch, const endpoint& client) const noexcept {
  std::uint8_t buf[25] = {};
  const auto e = static_cast<std::uint64_t>(epoch);
  for (unsigned i = 0; i < 8; ++i) {
    buf[i] = static_cast<std::uint8_t>(e >> (8U * i));
  }
  buf[8] = client.ip.v6 ? 6 : 4;
  // For v4 only bytes[0..3] are meaningful; the rest stay zero in `buf`
  // whatever `client.ip.bytes` holds there.
  std::memcpy(buf + 9, client.ip.bytes.data(), client.ip.length());
  // The port is deliberately not hashed: see connection_id.hpp.
  return siphash24(key_, buf, sizeof buf);
}

connection_id connection_id_issuer::issue(const endpoint& client,
                                          std::chrono::seconds now) const noexcept {
  return connection_id{mac(epoch_of(now), client)};
}

bool connection_id_issuer::valid(connection_id id, const endpoint& client,
                                 std::chrono::seconds now) const noexcept {
  const std::int64_t epoch = epoch_of(now);
  // Both MACs are always computed and both differences always folded in:
  // no early exit, no branch on secret-derived data.
  const std::uint64_t current = mac(epoch, client) ^ id.value;
  const std::uint64_t previous = mac(epoch - 1, client) ^ id.value;
  return (nonzero_bit(current) & nonzero_bit(previous)) == 0;
}

}  // namespace sk
