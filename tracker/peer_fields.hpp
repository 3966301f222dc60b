#pragma once
/// Two fields of `peer_traits` in the space their common values need: the
/// announce `key` (8 bytes instead of a 32-byte std::string) and an
/// optional time (8 bytes instead of 16). A swarm keeps one `peer_traits`
/// per peer, so every byte here is a byte per peer. Each reads and writes
/// like the standard type it replaces.

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace sk {

/// A peer's announce `key`, as sent. 8 bytes: held inline when it is up to
/// 8 hex digits of one case (what libtorrent-based clients and every BEP 15
/// client, as the UDP parser writes it, send) or any other text of up to 7
/// bytes; anything else is copied to the heap (rare, and bounded by the
/// query parser's limits).
///
///   bits_ == 0                 empty
///   bits_ & 1 (inline)         bits 1-4: length, bit 5: lower-case hex,
///                              bit 6: raw bytes; hex: value in bits 32-63,
///                              raw: the bytes in bits 8-63
///   otherwise                  a std::string* (aligned, so bit 0 is 0)
class key_text {
 public:
  key_text() noexcept = default;
  key_text(std::string_view s) { assign(s); }  // NOLINT: reads like a string
  key_text(const std::string& s) { assign(s); }  // NOLINT
  key_text(const char* s) { assign(std::string_view(s)); }  // NOLINT
  key_text(const key_text& other);
  key_text(key_text&& other) noexcept : bits_(other.bits_) { other.bits_ = 0; }
  key_text& operator=(const key_text& other);
  key_text& operator=(key_text&& other) noexcept;
  key_text& operator=(std::string_view s) {
    assign(s);
    return *this;
  }
  key_text& operator=(const std::string& s) { return *this = std::string_view(s); }
  key_text& operator=(const char* s) { return *this = std::string_view(s); }
  ~key_text() { release(); }

  bool empty() const noexcept { return bits_ == 0; }
  std::size_t size() const noexcept;
  void clear() noexcept { release(); }
  /// The text.
  std::string str() const;
  operator std::string() const { return str(); }  // NOLINT: reads like a string
  /// The text, written to `buf` when held inline; valid while both live.
  std::string_view view(char (&buf)[8]) const noexcept;
  /// Whether the text lives on the heap (not one of the inline forms).
  bool on_heap() const noexcept { return bits_ != 0 && (bits_ & 1) == 0; }

  friend bool operator==(const key_text& a, std::string_view b) noexcept {
    char buf[8];
    return a.view(buf) == b;
  }
  friend bool operator==(const key_text& a, const char* b) noexcept {
    return a == std::string_view(b);
  }
  friend bool operator==(const key_text& a, const std::string& b) noexcept {
    return a == std::string_view(b);
  }
  friend bool operator==(std::string_view a, const key_text& b) noexcept { return b == a; }
  friend bool operator==(const char* a, const key_text& b) noexcept { return b == a; }
  friend bool operator==(const std::string& a, const key_text& b) noexcept { return b == a; }
  friend bool operator==(const key_text& a, const key_text& b) noexcept {
    char buf[8];
    return a == b.view(buf);
  }
  friend bool operator!=(const key_text& a, std::string_view b) noexcept { return !(a == b); }
  friend bool operator!=(const key_text& a, const char* b) noexcept { return !(a == b); }
  friend bool operator!=(const key_text& a, const std::string& b) noexcept { return !(a == b); }
  friend bool operator!=(const key_text& a, const key_text& b) noexcept { return !(a == b); }
  friend std::ostream& operator<<(std::ostream& os, const key_text& k) {
    char buf[8];
    return os << k.view(buf);
  }

 private:
  void assign(std::string_view s);
  void release() noexcept;
  std::uint64_t bits_ = 0;
};

/// An optional point in time in 8 bytes: the clock's smallest value stands
/// for "none" (no event of a running tracker or a test is stamped with it).
/// The part of std::optional's interface the tracker uses.
class optional_time {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  constexpr optional_time() noexcept = default;
  constexpr optional_time(std::nullopt_t) noexcept {}  // NOLINT
  constexpr optional_time(time_point t) noexcept : t_(t) {}  // NOLINT
  optional_time& operator=(std::nullopt_t) noexcept {
    t_ = none();
    return *this;
  }
  optional_time& operator=(time_point t) noexcept {
    t_ = t;
    return *this;
  }

  constexpr bool has_value() const noexcept { return t_ != none(); }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr const time_point& operator*() const noexcept { return t_; }
  constexpr const time_point* operator->() const noexcept { return &t_; }
  constexpr time_point value_or(time_point other) const noexcept {
    return has_value() ? t_ : other;
  }
  void reset() noexcept { t_ = none(); }

  friend constexpr bool operator==(const optional_time& a, const optional_time& b) noexcept {
    return a.t_ == b.t_;
  }
  friend constexpr bool operator!=(const optional_time& a, const optional_time& b) noexcept {
    return a.t_ != b.t_;
  }

 private:
  static constexpr time_point none() noexcept { return time_point::min(); }
  time_point t_ = none();
};

}  // namespace sk
