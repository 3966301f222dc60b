#include "protocol/siphash.hpp"

namespace sk {
namespace {

constexpr std::uint64_t rotl(std::uint64_t x, unsigned bits) noexcept {
  return (x << bits) | (x >> (64U - bits));
}

/// Reads 8 bytes as a little-endian word, whatever the host's byte order.
inline std::uint64_t load_le64(const std::uint8_t* p) noexcept {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) {
    v |= static_cast<std::uint64_t>(p[i]) << (8U * i);
  }
  return v;
}

/// The four-word state and the ARX round of the paper (its Figure 2.1).
struct sip_state {
  std::uint64_t v0, v1, v2, v3;

  void round() noexcept {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }

  /// Compression of one message word: c = 2 rounds.
  void absorb(std::uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

}  // namespace

std::uint64_t siphash24(const siphash_key& key, const void* data, std::size_t length) noexcept {
  const std::uint64_t k0 = load_le64(key.data());
  const std::uint64_t k1 = load_le64(key.data() + 8);
  // Initialisation constants: "somepseudorandomlygeneratedbytes".
  sip_state s{k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL, k0 ^ 0x6c7967656e657261ULL,
              k1 ^ 0x7465646279746573ULL};

  const auto* p = static_cast<const std::uint8_t*>(data);
  const std::size_t whole_words = length / 8;
  for (std::size_t w = 0; w < whole_words; ++w, p += 8) {
    s.absorb(load_le64(p));
  }

  // Last word: the 0..7 remaining bytes, zero padded, with the length
  // (mod 256) in the top byte.
  std::uint64_t last = static_cast<std::uint64_t>(length & 0xffU) << 56U;
  const std::size_t tail = length % 8;
  for (std::size_t i = 0; i < tail; ++i) {
    last |= static_cast<std::uint64_t>(p[i]) << (8U * i);
  }
  s.absorb(last);

  // Finalisation: d = 4 rounds.
  s.v2 ^= 0xffU;
  s.round();
  s.round();
  s.round();
  s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

}  // namespace sk
