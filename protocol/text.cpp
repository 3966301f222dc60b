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

std::optional<hash_prefix> parse_hash_prefix(std::string_view text) noexcept {
  if (text.empty() || text.size() > 40) return std::nullopt;
  hash_prefix p;
  p.digits = text.size();
  for (std::size_t i = 0; i < text.size(); ++i) {
    const int d = hex_digit(text[i]);
    if (d < 0) return std::nullopt;
    std::uint8_t& b = p.bytes.bytes[i / 2];
    b = static_cast<std::uint8_t>(i % 2 == 0 ? d << 4 : b | d);
  }
  return p;
}

}  // namespace sk
