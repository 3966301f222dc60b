// bencode_writer: exact bytes (BEP 3 examples), integer formatting against
// std::to_string, appending after existing bytes, the debug-build checks,
// and that a warm buffer allocates nothing.

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "protocol/bencode.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

std::string int_encoding(std::int64_t v) {
  std::string out;
  bencode_writer(out).integer(v);
  return out;
}

TEST(BencodeWriter, Bep3Examples) {
  std::string out;
  bencode_writer(out).string("spam");
  EXPECT_EQ(out, "4:spam");
  out.clear();
  bencode_writer(out).string("");
  EXPECT_EQ(out, "0:");
  EXPECT_EQ(int_encoding(3), "i3e");
  EXPECT_EQ(int_encoding(-3), "i-3e");
  EXPECT_EQ(int_encoding(0), "i0e");

  out.clear();
  {
    bencode_writer w(out);
    w.list_begin();
    w.string("spam");
    w.string("eggs");
    w.list_end();
    EXPECT_TRUE(w.complete());
  }
  EXPECT_EQ(out, "l4:spam4:eggse");

  out.clear();
  {
    bencode_writer w(out);
    w.dict_begin();
    w.string_entry("cow", "moo");
    w.string_entry("spam", "eggs");
    w.dict_end();
  }
  EXPECT_EQ(out, "d3:cow3:moo4:spam4:eggse");

  out.clear();
  {
    bencode_writer w(out);
    w.dict_begin();
    w.key("spam");
    w.list_begin();
    w.string("a");
    w.string("b");
    w.list_end();
    w.dict_end();
  }
  EXPECT_EQ(out, "d4:spaml1:a1:bee");
}

TEST(BencodeWriter, IntegerBoundaries) {
  EXPECT_EQ(int_encoding(std::numeric_limits<std::int64_t>::max()), "i9223372036854775807e");
  EXPECT_EQ(int_encoding(std::numeric_limits<std::int64_t>::min()), "i-9223372036854775808e");
  // Every power of ten and its neighbours: where digit-pair formatting
  // switches between the odd and even digit-count paths.
  for (int k = 0; k < 19; ++k) {
    std::int64_t p = 1;
    for (int j = 0; j < k; ++j) p *= 10;
    for (std::int64_t v : {p - 1, p, p + 1, -(p - 1), -p, -(p + 1)}) {
      EXPECT_EQ(int_encoding(v), "i" + std::to_string(v) + "e") << v;
    }
  }
}

TEST(BencodeWriter, RandomIntegersMatchToString) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 200000; ++i) {
    // Spread over magnitudes: a random 64-bit value shifted right by 0..63.
    const auto v = static_cast<std::int64_t>(rng()) >> (rng() % 64);
    ASSERT_EQ(int_encoding(v), "i" + std::to_string(v) + "e") << v;
  }
}

TEST(BencodeWriter, BinaryStringsAndLengthPrefixes) {
  std::string out;
  const std::string binary("a\0b\xff", 4);
  bencode_writer(out).string(binary);
  EXPECT_EQ(out, std::string("4:a\0b\xff", 6));
  for (std::size_t n : {9u, 10u, 99u, 100u, 1000u, 12345u}) {
    out.clear();
    bencode_writer(out).string(std::string(n, 'x'));
    EXPECT_EQ(out, std::to_string(n) + ":" + std::string(n, 'x'));
  }
}

TEST(BencodeWriter, AppendsAfterExistingBytes) {
  // The caller's buffer may already hold data (e.g. HTTP headers). The
  // debug key check records key offsets in the buffer, so it must cope too.
  std::string out = "HTTP/1.1 200 OK\r\n\r\n";
  const std::string prefix = out;
  bencode_writer w(out);
  w.dict_begin();
  w.int_entry("a", 1);
  w.int_entry("b", 2);
  w.key("c");
  w.dict_begin();
  w.int_entry("x", 1);
  w.int_entry("y", 2);
  w.dict_end();
  w.int_entry("d", 3);
  w.dict_end();
  EXPECT_EQ(out, prefix + "d1:ai1e1:bi2e1:cd1:xi1e1:yi2ee1:di3ee");
}

TEST(BencodeWriter, KeysCompareBytewiseUnsigned) {
  // 0x7f < 0x80 as bytes; a signed-char comparison would reject this order.
  std::string out;
  bencode_writer w(out);
  w.dict_begin();
  w.int_entry("\x7f", 1);
  w.int_entry("\x80", 2);
  w.int_entry(std::string_view("\x80\x00", 2), 3);
  w.dict_end();
  EXPECT_EQ(out, std::string("d1:\x7fi1e1:\x80i2e2:\x80\x00i3ee", 21));
}

TEST(BencodeWriter, RawFragment) {
  std::string out;
  bencode_writer w(out);
  w.list_begin();
  w.raw("i1e");
  w.raw("d1:ai2ee");
  w.list_end();
  EXPECT_EQ(out, "li1ed1:ai2eee");
}

TEST(AllocationCounter, CountsHeapAllocations) {
  // The zero-allocation tests below are only worth something if the hook
  // really sees allocations.
  const std::uint64_t before = test::allocations();
  std::string big(1000, 'x');
  EXPECT_GE(test::allocations() - before, 1u);
  EXPECT_EQ(big.size(), 1000u);
}

TEST(BencodeWriter, WarmBufferDoesNotAllocate) {
  std::string out;
  out.reserve(4096);
  const std::uint64_t before = test::allocations();
  for (int round = 0; round < 100; ++round) {
    out.clear();
    bencode_writer w(out);
    w.dict_begin();
    w.int_entry("complete", 12345);
    w.string_entry("peers", std::string_view("abcdefabcdef", 12));
    w.key("z");
    w.list_begin();
    w.integer(std::numeric_limits<std::int64_t>::min());
    w.list_end();
    w.dict_end();
  }
  EXPECT_EQ(test::allocations() - before, 0u);
}

#ifndef NDEBUG
// Programmer errors assert in debug builds (release builds do not check).
using BencodeWriterDeathTest = ::testing::Test;

TEST(BencodeWriterDeathTest, UnsortedKeysAssert) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.dict_begin();
        w.int_entry("b", 1);
        w.int_entry("a", 2);
      },
      "ascending");
}

TEST(BencodeWriterDeathTest, DuplicateKeyAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.dict_begin();
        w.int_entry("a", 1);
        w.int_entry("a", 2);
      },
      "ascending");
}

TEST(BencodeWriterDeathTest, PrefixKeyOrderIsChecked) {
  // "peers" < "peers6": a shorter prefix sorts first; the reverse asserts.
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.dict_begin();
        w.int_entry("peers6", 1);
        w.int_entry("peers", 2);
      },
      "ascending");
}

TEST(BencodeWriterDeathTest, ValueWithoutKeyAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.dict_begin();
        w.integer(1);
      },
      "without key");
}

TEST(BencodeWriterDeathTest, KeyInListAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.list_begin();
        w.key("a");
      },
      "outside a dict");
}

TEST(BencodeWriterDeathTest, MismatchedEndAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.list_begin();
        w.dict_end();
      },
      "mismatch");
}

TEST(BencodeWriterDeathTest, KeyWithoutValueAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.dict_begin();
        w.key("a");
        w.dict_end();
      },
      "without value");
}

TEST(BencodeWriterDeathTest, SecondRootAsserts) {
  EXPECT_DEATH(
      {
        std::string out;
        bencode_writer w(out);
        w.integer(1);
        w.integer(2);
      },
      "more than one root");
}
#endif

}  // namespace
}  // namespace sk
