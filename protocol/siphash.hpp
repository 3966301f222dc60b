#pragma once
/// SipHash-2-4: a keyed 64-bit pseudo-random function for short inputs.
///
/// Used to make UDP connection ids (protocol/connection_id.hpp): a MAC over
/// (time, client address) that nobody without the key can forge. Written from
/// the paper (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012)
/// and checked against its reference vectors in tests/protocol/udp.
///
/// Pure C++17; no allocation; constant time in the input's content (only its
/// length changes the work done).

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sk {

/// The 128-bit key, as the 16 bytes k[0..15] the paper reads as two
/// little-endian words k0 = k[0..7], k1 = k[8..15].
using siphash_key = std::array<std::uint8_t, 16>;

/// SipHash-2-4 of `length` bytes at `data` under `key`.
///
/// The result is the paper's 64-bit output word; the reference
/// implementation serialises it little-endian (its test vectors read as
/// little-endian words equal this value).
std::uint64_t siphash24(const siphash_key& key, const void* data, std::size_t length) noexcept;

/// SipHash-2-4 of the bytes of `data`.
inline std::uint64_t siphash24(const siphash_key& key, std::string_view data) noexcept {
  return siphash24(key, data.data(), data.size());
}

}  // namespace sk
