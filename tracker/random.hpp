#pragma once
/// A small, fast, seedable PRNG for peer selection (no CAF, no protocol).
///
/// Peer selection needs speed and statistical uniformity, not secrecy: which
/// peers a client sees is not a secret, and a client that announces again
/// gets a fresh sample anyway. xoshiro256** (Blackman & Vigna) passes the
/// usual statistical batteries and costs a few cycles per draw; SplitMix64
/// expands one 64-bit seed into its 256-bit state, as its authors recommend.

#include <cstdint>

namespace sk {

/// One step of SplitMix64: advances `state` and returns a well-mixed value.
/// Also used to derive per-swarm seeds from (base seed, info_hash).
inline std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// xoshiro256**: 256-bit state, period 2^256 - 1. Deterministic for a given
/// seed, so tests and the swarm simulator can replay a selection.
class fast_rng {
 public:
  explicit fast_rng(std::uint64_t seed = 0) noexcept { reseed(seed); }

  void reseed(std::uint64_t seed) noexcept {
    std::uint64_t sm = seed;
    for (auto& word : s_) {
      word = splitmix64(sm);
    }
    // SplitMix64 never yields four zero words in a row, but be explicit: an
    // all-zero state would be a fixed point.
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) {
      s_[0] = 1;
    }
  }

  /// The next 64 uniformly distributed bits.
  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// A uniform integer in [0, bound); `bound` must be > 0.
  ///
  /// Lemire's multiply-and-reject: the high word of `next() * bound` is
  /// uniform once the few low-word values that would over-represent some
  /// results (fewer than `bound` out of 2^32) are rejected. No modulo bias,
  /// and usually no division at all.
  std::uint32_t below(std::uint32_t bound) noexcept {
    std::uint64_t m = (next() >> 32) * bound;
    auto low = static_cast<std::uint32_t>(m);
    if (low < bound) {
      const std::uint32_t threshold = static_cast<std::uint32_t>(-bound) % bound;
      while (low < threshold) {
        m = (next() >> 32) * bound;
        low = static_cast<std::uint32_t>(m);
      }
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

  std::uint64_t s_[4];
};

}  // namespace sk
