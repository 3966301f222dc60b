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

}  // namespace
}  // namespace sk
