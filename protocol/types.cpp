#include "protocol/types.hpp"

#include <random>

#include "protocol/siphash.hpp"
#include "protocol/text.hpp"

namespace sk {

namespace {

constexpr char hex_digits[] = "0123456789abcdef";

/// Writes 0..255 in decimal; returns the end.
char* write_octet(char* p, unsigned v) noexcept {
  if (v >= 100) {
    *p++ = static_cast<char>('0' + v / 100);
    v %= 100;
    *p++ = static_cast<char>('0' + v / 10);
    *p++ = static_cast<char>('0' + v % 10);
  } else if (v >= 10) {
    *p++ = static_cast<char>('0' + v / 10);
    *p++ = static_cast<char>('0' + v % 10);
  } else {
    *p++ = static_cast<char>('0' + v);
  }
  return p;
}

char* write_dotted(char* p, const std::uint8_t* b) noexcept {
  for (int i = 0; i < 4; ++i) {
    if (i) *p++ = '.';
    p = write_octet(p, b[i]);
  }
  return p;
}

/// A hex group without leading zeros ("0" for zero).
char* write_group(char* p, unsigned g) noexcept {
  bool started = false;
  for (int shift = 12; shift >= 0; shift -= 4) {
    const unsigned nibble = (g >> shift) & 0xf;
    if (nibble || started || shift == 0) {
      *p++ = hex_digits[nibble];
      started = true;
    }
  }
  return p;
}

bool parse_v4(std::string_view s, std::uint8_t (&out)[4]) noexcept {
  std::size_t i = 0;
  for (int part = 0; part < 4; ++part) {
    if (part) {
      if (i >= s.size() || s[i] != '.') return false;
      ++i;
    }
    const std::size_t first = i;
    unsigned v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i - first < 3) {
      v = v * 10 + static_cast<unsigned>(s[i] - '0');
      ++i;
    }
    const std::size_t digits = i - first;
    if (digits == 0 || v > 255) return false;
    if (digits > 1 && s[first] == '0') return false;  // leading zero
    out[part] = static_cast<std::uint8_t>(v);
  }
  return i == s.size();
}

/// RFC 4291 §2.2 text. Groups before "::" go to `head`, after it to `tail`.
bool parse_v6(std::string_view s, std::uint8_t (&out)[16]) noexcept {
  std::uint16_t head[8], tail[8];
  int nh = 0, nt = 0;
  bool compressed = false;
  std::size_t i = 0;
  const std::size_t n = s.size();
  auto push = [&](std::uint16_t g) {
    if (nh + nt >= 8) return false;
    if (compressed)
      tail[nt++] = g;
    else
      head[nh++] = g;
    return true;
  };

  if (n >= 2 && s[0] == ':' && s[1] == ':') {
    compressed = true;
    i = 2;
  } else if (n >= 1 && s[0] == ':') {
    return false;  // a single leading colon
  }
  while (i < n) {
    // One piece: up to the next ':' or the end.
    std::size_t j = i;
    while (j < n && s[j] != ':') ++j;
    const std::string_view piece = s.substr(i, j - i);
    if (piece.empty()) return false;  // ":::" or a stray colon
    if (piece.find('.') != std::string_view::npos) {
      // A dotted-quad tail: only as the very last piece.
      std::uint8_t v4[4];
      if (j != n || !parse_v4(piece, v4)) return false;
      if (!push(static_cast<std::uint16_t>(v4[0] << 8 | v4[1]))) return false;
      if (!push(static_cast<std::uint16_t>(v4[2] << 8 | v4[3]))) return false;
      i = n;
      break;
    }
    if (piece.size() > 4) return false;
    unsigned g = 0;
    for (char c : piece) {
      const int h = hex_digit(c);
      if (h < 0) return false;
      g = g << 4 | static_cast<unsigned>(h);
    }
    if (!push(static_cast<std::uint16_t>(g))) return false;
    i = j;
    if (i == n) break;
    ++i;  // the ':'
    if (i < n && s[i] == ':') {
      if (compressed) return false;  // a second "::"
      compressed = true;
      ++i;
    } else if (i == n) {
      return false;  // a single trailing colon
    }
  }
  const int total = nh + nt;
  // "::" stands for at least one zero group.
  if (compressed ? total > 7 : total != 8) return false;

  std::uint16_t groups[8] = {};
  for (int k = 0; k < nh; ++k) groups[k] = head[k];
  for (int k = 0; k < nt; ++k) groups[8 - nt + k] = tail[k];
  for (std::size_t k = 0; k < 8; ++k) {
    out[2 * k] = static_cast<std::uint8_t>(groups[k] >> 8);
    out[2 * k + 1] = static_cast<std::uint8_t>(groups[k]);
  }
  return true;
}

}  // namespace

std::size_t ip_address::to_chars(char* out) const noexcept {
  char* p = out;
  if (!v6) return static_cast<std::size_t>(write_dotted(p, bytes.data()) - out);

  static constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(bytes.data(), mapped, 12) == 0) {
    static constexpr char prefix[7] = {':', ':', 'f', 'f',
                                       'f', 'f', ':'};  // no NUL: not a C string
    std::memcpy(p, prefix, sizeof prefix);
    return static_cast<std::size_t>(write_dotted(p + 7, bytes.data() + 12) - out);
  }

  unsigned groups[8];
  for (std::size_t k = 0; k < 8; ++k) {
    groups[k] = static_cast<unsigned>(bytes[2 * k] << 8 | bytes[2 * k + 1]);
  }
  // RFC 5952 §4.2: compress the longest run of >= 2 zero groups, the first on a tie.
  int best_start = -1, best_len = 1;
  for (int k = 0; k < 8;) {
    if (groups[k] != 0) {
      ++k;
      continue;
    }
    int len = 0;
    while (k + len < 8 && groups[k + len] == 0) ++len;
    if (len > best_len) {
      best_start = k;
      best_len = len;
    }
    k += len;
  }
  for (int k = 0; k < 8;) {
    if (k == best_start) {
      *p++ = ':';
      *p++ = ':';
      k += best_len;
      continue;
    }
    if (k != 0 && k != best_start + best_len) *p++ = ':';
    p = write_group(p, groups[k]);
    ++k;
  }
  return static_cast<std::size_t>(p - out);
}

std::string ip_address::to_string() const {
  char buf[max_text_length];
  return std::string(buf, to_chars(buf));
}

bool ip_address::parse(std::string_view text, ip_address& out) noexcept {
  if (text.empty() || text.size() > max_text_length) return false;
  if (text.find(':') == std::string_view::npos) {
    std::uint8_t b[4];
    if (!parse_v4(text, b)) return false;
    out = make_v4(b);
    return true;
  }
  std::uint8_t b[16];
  if (!parse_v6(text, b)) return false;
  out = make_v6(b);
  return true;
}

const std::array<std::uint8_t, 16>& id20_hash_key() noexcept {
  static const std::array<std::uint8_t, 16> key = [] {
    std::array<std::uint8_t, 16> k{};
    std::random_device rd;
    for (std::size_t i = 0; i < k.size(); i += 4) {
      const std::uint32_t v = rd();
      std::memcpy(k.data() + i, &v, 4);
    }
    return k;
  }();
  return key;
}

std::uint64_t id20_keyed_hash(const std::array<std::uint8_t, 16>& key,
                              const unsigned char* bytes) noexcept {
  return siphash24(key, bytes, 20);
}

}  // namespace sk
