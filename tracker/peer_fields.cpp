#include "tracker/peer_fields.hpp"

#include <cstring>

namespace sk {

namespace {

constexpr std::uint64_t inline_bit = 1;
constexpr std::uint64_t lower_bit = 1u << 5;
constexpr std::uint64_t raw_bit = 1u << 6;

/// 0-15 for a hex digit of the given case (digits belong to both), -1
/// otherwise.
int hex_value(char c, bool lower) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (lower ? (c >= 'a' && c <= 'f') : (c >= 'A' && c <= 'F')) {
    return (lower ? c - 'a' : c - 'A') + 10;
  }
  return -1;
}

/// The inline hex form of `s` in `lower` case, or 0 when it has none.
std::uint64_t hex_form(std::string_view s, bool lower) noexcept {
  std::uint64_t value = 0;
  for (const char c : s) {
    const int d = hex_value(c, lower);
    if (d < 0) return 0;
    value = (value << 4) | static_cast<std::uint64_t>(d);
  }
  return (value << 32) | (static_cast<std::uint64_t>(s.size()) << 1) |
         (lower ? lower_bit : 0) | inline_bit;
}

}  // namespace

static_assert(sizeof(key_text) == 8, "one word per peer");
static_assert(sizeof(optional_time) == 8, "one word per peer");
static_assert(alignof(std::string) >= 2, "bit 0 of a std::string* is free for the inline tag");

key_text::key_text(const key_text& other) : bits_(other.bits_) {
  if (other.on_heap()) {
    bits_ = reinterpret_cast<std::uint64_t>(
        new std::string(*reinterpret_cast<const std::string*>(other.bits_)));
  }
}

key_text& key_text::operator=(const key_text& other) {
  if (this != &other) {
    key_text copy(other);
    *this = std::move(copy);
  }
  return *this;
}

key_text& key_text::operator=(key_text&& other) noexcept {
  if (this != &other) {
    release();
    bits_ = other.bits_;
    other.bits_ = 0;
  }
  return *this;
}

void key_text::release() noexcept {
  if (on_heap()) {
    delete reinterpret_cast<std::string*>(bits_);
  }
  bits_ = 0;
}

void key_text::assign(std::string_view s) {
  std::uint64_t bits = 0;
  if (!s.empty() && s.size() <= 8) {
    // Upper case first: digits-only keys read the same in both.
    bits = hex_form(s, false);
    if (bits == 0) bits = hex_form(s, true);
  }
  if (bits == 0 && !s.empty() && s.size() <= 7) {
    bits = (static_cast<std::uint64_t>(s.size()) << 1) | raw_bit | inline_bit;
    std::uint64_t bytes = 0;
    std::memcpy(&bytes, s.data(), s.size());
    bits |= bytes << 8;
  }
  if (bits == 0 && !s.empty()) {
    // Built before the old text is released: `s` may view it.
    bits = reinterpret_cast<std::uint64_t>(new std::string(s));
  }
  release();
  bits_ = bits;
}

std::size_t key_text::size() const noexcept {
  if (bits_ == 0) return 0;
  if (on_heap()) return reinterpret_cast<const std::string*>(bits_)->size();
  return static_cast<std::size_t>((bits_ >> 1) & 0xf);
}

std::string_view key_text::view(char (&buf)[8]) const noexcept {
  if (bits_ == 0) return {};
  if (on_heap()) return *reinterpret_cast<const std::string*>(bits_);
  const std::size_t n = size();
  if ((bits_ & raw_bit) != 0) {
    const std::uint64_t bytes = bits_ >> 8;
    std::memcpy(buf, &bytes, n);
    return {buf, n};
  }
  const char* digits = (bits_ & lower_bit) != 0 ? "0123456789abcdef" : "0123456789ABCDEF";
  std::uint64_t value = bits_ >> 32;
  for (std::size_t i = n; i-- > 0;) {
    buf[i] = digits[value & 0xf];
    value >>= 4;
  }
  return {buf, n};
}

std::string key_text::str() const {
  char buf[8];
  return std::string(view(buf));
}

}  // namespace sk
