#pragma once
/// Small text helpers every layer uses: hex digits, ASCII blank trimming,
/// 40 hex digits to an info_hash, and hash prefixes of 1 to 40 hex digits.
/// Pure C++17, locale-independent.

#include <cstddef>
#include <optional>
#include <string_view>

#include "protocol/types.hpp"

namespace sk {

/// 0..15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else.
constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// ASCII white space as the "C" locale's isspace sees it: space, \t, \n,
/// \v, \f, \r. Never another byte (UTF-8 continuation bytes included).
constexpr bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/// `s` without leading and trailing ASCII white space.
constexpr std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Exactly 40 hex digits (either case) to a 20-byte id; nullopt otherwise.
std::optional<info_hash> parse_hex_hash(std::string_view text) noexcept;

/// The leading hex digits of an info_hash (a search by prefix). An odd
/// number of digits is allowed: the last one is the high nibble of its byte.
struct hash_prefix {
  /// The digits' bytes; a trailing half byte sits in the high nibble.
  info_hash bytes;
  /// How many hex digits (1 to 40).
  std::size_t digits = 0;

  /// Whether `h`'s first `digits` hex digits are these.
  bool matches(const info_hash& h) const noexcept {
    const std::size_t whole = digits / 2;
    for (std::size_t i = 0; i < whole; ++i)
      if (h.bytes[i] != bytes.bytes[i]) return false;
    if (digits % 2 == 1 && (h.bytes[whole] >> 4) != (bytes.bytes[whole] >> 4)) return false;
    return true;
  }
};

/// 1 to 40 hex digits (either case) to a prefix; nullopt otherwise (empty,
/// too long, or a character that is not a hex digit).
std::optional<hash_prefix> parse_hash_prefix(std::string_view text) noexcept;

}  // namespace sk
