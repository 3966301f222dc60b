// SipHash-2-4 against the reference vectors of Aumasson & Bernstein (2012):
// key 00 01 .. 0f, message 00 01 .. (i-1) for i = 0..63. Each value is the
// reference's 8 output bytes read as a little-endian word.

#include "protocol/siphash.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace {

constexpr std::uint64_t reference_vectors[64] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL, 0x85676696d7fb7e2dULL,
    0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL, 0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL,
    0x93f5f5799a932462ULL, 0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
    0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL, 0xa129ca6149be45e5ULL,
    0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL, 0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL,
    0xbed65cf21aa2ee98ULL, 0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
    0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL, 0x2f2e6163076bcfadULL,
    0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL, 0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL,
    0x7127512f72f27cceULL, 0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
    0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL, 0x9abfd8766a33735cULL,
    0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL, 0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL,
    0xf935451de4f21df2ULL, 0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
    0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL, 0xa192d576b245165aULL,
    0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL, 0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL,
    0xb78dbfaf3a8d83bdULL, 0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
    0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL, 0x958a324ceb064572ULL,
};

sk::siphash_key reference_key() {
  sk::siphash_key k{};
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = static_cast<std::uint8_t>(i);
  }
  return k;
}

TEST(SipHash, ReferenceVectorsForEveryLengthUpTo63) {
  const sk::siphash_key key = reference_key();
  std::uint8_t message[64];
  for (std::size_t i = 0; i < 64; ++i) {
    message[i] = static_cast<std::uint8_t>(i);
  }
  for (std::size_t len = 0; len < 64; ++len) {
    EXPECT_EQ(sk::siphash24(key, message, len), reference_vectors[len]) << "length " << len;
  }
}

// The worked example of the paper's Appendix A: 15-byte message 00..0e.
TEST(SipHash, PaperAppendixExample) {
  const std::string message("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e", 15);
  EXPECT_EQ(sk::siphash24(reference_key(), message), 0xa129ca6149be45e5ULL);
}

TEST(SipHash, EveryKeyBitMatters) {
  const std::string message = "swarmkeeper";
  const sk::siphash_key base = reference_key();
  const std::uint64_t h = sk::siphash24(base, message);
  for (std::size_t bit = 0; bit < 128; ++bit) {
    sk::siphash_key k = base;
    k[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
    EXPECT_NE(sk::siphash24(k, message), h) << "key bit " << bit;
  }
}

TEST(SipHash, LengthIsPartOfTheInput) {
  // "a" and "a\0" differ only by a zero pad byte; the length byte separates them.
  const sk::siphash_key key = reference_key();
  EXPECT_NE(sk::siphash24(key, std::string("a", 1)), sk::siphash24(key, std::string("a\0", 2)));
  EXPECT_NE(sk::siphash24(key, std::string(8, '\0')), sk::siphash24(key, std::string(7, '\0')));
}

}  // namespace
