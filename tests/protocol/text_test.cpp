#include "protocol/text.hpp"

#include <string>

#include <gtest/gtest.h>

namespace sk {
namespace {

TEST(Text, HexDigitAcceptsBothCasesAndNothingElse) {
  EXPECT_EQ(hex_digit('0'), 0);
  EXPECT_EQ(hex_digit('9'), 9);
  EXPECT_EQ(hex_digit('a'), 10);
  EXPECT_EQ(hex_digit('F'), 15);
  for (char c : std::string("gG/:@`\x7f \0", 10)) EXPECT_EQ(hex_digit(c), -1) << int(c);
  EXPECT_EQ(hex_digit(static_cast<char>(0xc3)), -1);
}

TEST(Text, TrimRemovesAsciiSpaceOnlyAtBothEnds) {
  EXPECT_EQ(trim(" \t\r\n\v\fa b\r\n"), "a b");
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" \t "), "");
  // A non-breaking space (UTF-8 C2 A0) is not ASCII space: kept.
  EXPECT_EQ(trim("\xc2\xa0x"), "\xc2\xa0x");
}

TEST(Text, ParseHexHashNeedsExactlyFortyHexDigits) {
  const std::string lower(40, 'a');
  auto h = parse_hex_hash(lower);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->hex(), lower);
  auto mixed = parse_hex_hash("0123456789ABCDEFabcdef0123456789abcdef01");
  ASSERT_TRUE(mixed.has_value());
  EXPECT_EQ(mixed->hex(), "0123456789abcdefabcdef0123456789abcdef01");
  EXPECT_FALSE(parse_hex_hash(std::string(39, 'a')));
  EXPECT_FALSE(parse_hex_hash(std::string(41, 'a')));
  EXPECT_FALSE(parse_hex_hash(std::string(39, 'a') + "g"));
  EXPECT_FALSE(parse_hex_hash(" " + std::string(39, 'a')));
}

TEST(Text, HashPrefixTakesOneToFortyHexDigitsOfEitherCase) {
  const info_hash h = *parse_hex_hash("abcdef0123456789abcdef0123456789abcdef01");
  for (std::size_t n = 1; n <= 40; ++n) {
    const std::string digits = h.hex().substr(0, n);
    auto p = parse_hash_prefix(digits);
    ASSERT_TRUE(p.has_value()) << digits;
    EXPECT_EQ(p->digits, n);
    EXPECT_TRUE(p->matches(h)) << digits;
  }
  auto upper = parse_hash_prefix("ABCDE");
  ASSERT_TRUE(upper.has_value());
  EXPECT_TRUE(upper->matches(h));
  EXPECT_FALSE(parse_hash_prefix(""));
  EXPECT_FALSE(parse_hash_prefix(std::string(41, 'a')));
  EXPECT_FALSE(parse_hash_prefix("abcg"));
  EXPECT_FALSE(parse_hash_prefix("ab cd"));
  EXPECT_FALSE(parse_hash_prefix("0x12"));
}

TEST(Text, HashPrefixComparesEveryDigitIncludingAnOddLastOne) {
  const info_hash h = *parse_hex_hash("abcdef0123456789abcdef0123456789abcdef01");
  // Odd length: the last digit is a high nibble and must match it, not the
  // whole byte or the low nibble.
  EXPECT_TRUE(parse_hash_prefix("abc")->matches(h));
  EXPECT_FALSE(parse_hash_prefix("abd")->matches(h));
  EXPECT_FALSE(parse_hash_prefix("abb")->matches(h));
  EXPECT_FALSE(parse_hash_prefix("abcc")->matches(h));
  EXPECT_FALSE(parse_hash_prefix("b")->matches(h));
  // One digit off at the very end of a full hash.
  EXPECT_FALSE(parse_hash_prefix("abcdef0123456789abcdef0123456789abcdef02")->matches(h));
  EXPECT_FALSE(parse_hash_prefix("abcdef0123456789abcdef0123456789abcdef0")
                   ->matches(*parse_hex_hash("abcdef0123456789abcdef0123456789abcdef11")));
}

}  // namespace
}  // namespace sk
