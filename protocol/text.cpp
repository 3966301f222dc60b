#include "protocol/text.hpp"

#include <cstdint>

namespace sk {

std::optional<info_hash> parse_hex_hash(std::string_view text) noexcept {
  if (text.size() != 40) return std::nullopt;
  info_hash h;
  for (std::size_t i = 0; i < 20; ++i) {
    const int hi = hex_digit(text[2 * i]);
    const int lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    h.bytes[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return h;
}

}  // namespace sk
