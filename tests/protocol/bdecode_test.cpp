// bdecode: BEP 3 examples, accessors, every error code with its exact
// position, every limit, every truncation of valid input, random garbling
// (no crash; anything accepted must be canonical), and steady-state decoding
// without allocation.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "protocol/bencode.hpp"
#include "protocol/bencode_value.hpp"
#include "random_value.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

bdecode_result decode(std::string_view in, bdecode_document& doc, const bdecode_limits& l = {}) {
  return bdecode(in, doc, l);
}

TEST(Bdecode, Bep3Examples) {
  bdecode_document doc;
  ASSERT_TRUE(decode("4:spam", doc));
  EXPECT_EQ(doc.root().string_value(), "spam");
  ASSERT_TRUE(decode("0:", doc));
  EXPECT_EQ(doc.root().string_value(), "");
  ASSERT_TRUE(decode("i3e", doc));
  EXPECT_EQ(doc.root().int_value(), 3);
  ASSERT_TRUE(decode("i-3e", doc));
  EXPECT_EQ(doc.root().int_value(), -3);
  ASSERT_TRUE(decode("i0e", doc));
  EXPECT_EQ(doc.root().int_value(), 0);

  ASSERT_TRUE(decode("l4:spam4:eggse", doc));
  bdecode_node l = doc.root();
  ASSERT_TRUE(l.is_list());
  EXPECT_EQ(l.size(), 2u);
  EXPECT_EQ(l.list_at(0).string_value(), "spam");
  EXPECT_EQ(l.list_at(1).string_value(), "eggs");
  EXPECT_FALSE(l.list_at(2));

  ASSERT_TRUE(decode("d3:cow3:moo4:spam4:eggse", doc));
  bdecode_node d = doc.root();
  ASSERT_TRUE(d.is_dict());
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.dict_find_string("cow"), "moo");
  EXPECT_EQ(d.dict_find_string("spam"), "eggs");
  EXPECT_FALSE(d.dict_find("dog"));
  EXPECT_FALSE(d.dict_find("a"));
  EXPECT_FALSE(d.dict_find("zzz"));
  EXPECT_EQ(d.dict_at(1).first, "spam");
  EXPECT_EQ(d.dict_at(1).second.string_value(), "eggs");

  ASSERT_TRUE(decode("d4:spaml1:a1:bee", doc));
  bdecode_node spam = doc.root().dict_find("spam");
  ASSERT_TRUE(spam.is_list());
  EXPECT_EQ(spam.list_at(1).string_value(), "b");
  EXPECT_EQ(spam.raw(), "l1:a1:be");
}

TEST(Bdecode, NestedAccessAndIteration) {
  bdecode_document doc;
  const std::string in = "d1:ad1:xli1ei2eee1:bli3eli4eee1:ci-5e1:d0:e";
  ASSERT_TRUE(decode(in, doc));
  const bdecode_node root = doc.root();
  EXPECT_EQ(root.raw(), in);
  EXPECT_EQ(root.size(), 4u);
  EXPECT_EQ(root.dict_find("a").dict_find("x").list_at(1).int_value(), 2);
  EXPECT_EQ(root.dict_find("b").list_at(1).list_at(0).int_value(), 4);
  EXPECT_EQ(root.dict_find_int("c"), -5);
  EXPECT_EQ(root.dict_find_int("d", 77), 77) << "wrong type gives the fallback";
  EXPECT_EQ(root.dict_find_string("c", "fb"), "fb");
  EXPECT_EQ(root.dict_find_string("d", "fb"), "");
  // Skipping over a nested value to reach the next key uses `next`.
  EXPECT_EQ(root.dict_at(2).first, "c");
  EXPECT_EQ(root.dict_at(2).second.int_value(), -5);
  EXPECT_FALSE(root.dict_at(4).second);

  std::vector<std::string> seen;
  for (bdecode_node child : root.dict_find("b").children()) seen.emplace_back(child.raw());
  EXPECT_EQ(seen, (std::vector<std::string>{"i3e", "li4ee"}));
  seen.clear();
  for (bdecode_node child : root.children()) seen.emplace_back(child.raw());
  EXPECT_EQ(seen.size(), 8u) << "dict children are keys and values alternately";
  EXPECT_EQ(seen[2], "1:b");
  EXPECT_EQ(seen[3], "li3eli4eee");

  // Type mismatches do not crash in release (they assert in debug, so only
  // the total functions are exercised here).
  EXPECT_FALSE(root.list_at(0));
  EXPECT_FALSE(root.dict_find("a").dict_find("x").dict_find("q"));
  EXPECT_EQ(bdecode_node().type(), bdecode_type::none);
  EXPECT_TRUE(bdecode_node().children().begin() == bdecode_node().children().end());
}

TEST(Bdecode, IntegerRange) {
  bdecode_document doc;
  ASSERT_TRUE(decode("i9223372036854775807e", doc));
  EXPECT_EQ(doc.root().int_value(), INT64_MAX);
  ASSERT_TRUE(decode("i-9223372036854775808e", doc));
  EXPECT_EQ(doc.root().int_value(), INT64_MIN);
  EXPECT_EQ(decode("i9223372036854775808e", doc).ec, bdecode_errc::integer_overflow);
  EXPECT_EQ(decode("i-9223372036854775809e", doc).ec, bdecode_errc::integer_overflow);
  EXPECT_EQ(decode("i9999999999999999999e", doc).ec, bdecode_errc::integer_overflow);
  EXPECT_EQ(decode("i10000000000000000000e", doc).ec, bdecode_errc::integer_too_long);
}

struct error_case {
  const char* name;
  std::string input;
  bdecode_errc error;
  std::size_t position;
};

class BdecodeErrors : public ::testing::TestWithParam<error_case> {};

TEST_P(BdecodeErrors, ExactCodeAndPosition) {
  const error_case& c = GetParam();
  bdecode_document doc;
  const bdecode_result r = decode(c.input, doc);
  EXPECT_EQ(r.ec, make_error_code(c.error)) << r.ec.message();
  EXPECT_EQ(r.position, c.position);
  EXPECT_FALSE(doc.root()) << "a failed decode leaves no root";
  EXPECT_EQ(r.ec.category().name(), std::string("sk.bdecode"));
  EXPECT_FALSE(r.ec.message().empty());
}

// Position = where the problem was detected: the offending byte, the start
// of the offending item (overflow, too long, bad key), or the input size
// (end of input).
INSTANTIATE_TEST_SUITE_P(
    Hostile, BdecodeErrors,
    ::testing::Values(
        error_case{"empty", "", bdecode_errc::unexpected_eof, 0},
        error_case{"bare_i", "i", bdecode_errc::unexpected_eof, 1},
        error_case{"unterminated_int", "i12", bdecode_errc::unexpected_eof, 3},
        error_case{"unterminated_list", "l", bdecode_errc::unexpected_eof, 1},
        error_case{"unterminated_dict", "d1:ai1e", bdecode_errc::unexpected_eof, 7},
        error_case{"short_string", "5:abc", bdecode_errc::unexpected_eof, 5},
        error_case{"length_only", "12", bdecode_errc::unexpected_eof, 2},
        error_case{"bad_start", "x", bdecode_errc::unexpected_character, 0},
        error_case{"bad_in_list", "li1e?e", bdecode_errc::unexpected_character, 4},
        error_case{"lone_end", "e", bdecode_errc::unexpected_character, 0},
        error_case{"plus_sign", "i+1e", bdecode_errc::expected_digit, 1},
        error_case{"empty_int", "ie", bdecode_errc::expected_digit, 1},
        error_case{"minus_only", "i-e", bdecode_errc::expected_digit, 2},
        error_case{"double_minus", "i--1e", bdecode_errc::expected_digit, 2},
        error_case{"int_junk", "i12xe", bdecode_errc::expected_integer_end, 3},
        error_case{"int_space", "i1 e", bdecode_errc::expected_integer_end, 2},
        error_case{"no_colon", "3xabc", bdecode_errc::expected_colon, 1},
        error_case{"int_leading_zero", "i03e", bdecode_errc::leading_zero, 1},
        error_case{"int_double_zero", "i00e", bdecode_errc::leading_zero, 1},
        error_case{"neg_leading_zero", "i-03e", bdecode_errc::leading_zero, 2},
        error_case{"len_leading_zero", "03:abc", bdecode_errc::leading_zero, 0},
        error_case{"negative_zero", "i-0e", bdecode_errc::negative_zero, 1},
        error_case{"overflow", "li1ei9223372036854775808ee", bdecode_errc::integer_overflow, 4},
        error_case{"too_many_digits", "i12345678901234567890e", bdecode_errc::integer_too_long, 20},
        error_case{"huge_length", "99999999999:x", bdecode_errc::string_too_long, 0},
        error_case{"over_max_string", "2000000:x", bdecode_errc::string_too_long, 0},
        error_case{"int_key", "di1ei2ee", bdecode_errc::key_not_string, 1},
        error_case{"list_key", "dle1:ae", bdecode_errc::key_not_string, 1},
        error_case{"unsorted", "d1:bi1e1:ai2ee", bdecode_errc::unsorted_keys, 7},
        error_case{"unsorted_prefix", "d2:abi1e1:ai2ee", bdecode_errc::unsorted_keys, 8},
        error_case{"unsorted_unsigned", "d1:\x80i1e1:\x7fi2ee", bdecode_errc::unsorted_keys, 7},
        error_case{"duplicate", "d1:ai1e1:ai2ee", bdecode_errc::duplicate_key, 7},
        error_case{"missing_value", "d1:ae", bdecode_errc::missing_value, 4},
        error_case{"trailing", "i1ei2e", bdecode_errc::trailing_data, 3},
        error_case{"trailing_newline", "le\n", bdecode_errc::trailing_data, 2}),
    [](const ::testing::TestParamInfo<error_case>& info) { return std::string(info.param.name); });

TEST(Bdecode, Limits) {
  bdecode_document doc;
  bdecode_limits l;

  l.max_input_length = 5;
  EXPECT_TRUE(decode("4:abc", doc, l).ec == bdecode_errc::unexpected_eof);
  EXPECT_TRUE(decode("3:abc", doc, l));
  bdecode_result r = decode("4:abcd", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::input_too_long);
  EXPECT_EQ(r.position, 5u);

  l = {};
  l.max_depth = 3;
  EXPECT_TRUE(decode("llleee", doc, l));
  r = decode("lllleeee", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::depth_exceeded);
  EXPECT_EQ(r.position, 3u);
  r = decode("d1:ad1:bd1:cd1:di1eeeee", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::depth_exceeded);
  EXPECT_EQ(r.position, 12u);

  l = {};
  l.max_tokens = 3;
  EXPECT_TRUE(decode("li1ei2ee", doc, l));
  r = decode("li1ei2ei3ee", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::too_many_tokens);
  EXPECT_EQ(r.position, 7u);

  l = {};
  l.max_string_length = 3;
  EXPECT_TRUE(decode("3:abc", doc, l));
  r = decode("l4:abcde", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::string_too_long);
  EXPECT_EQ(r.position, 1u);

  l = {};
  l.max_integer_digits = 3;
  EXPECT_TRUE(decode("i-999e", doc, l));
  r = decode("i1000e", doc, l);
  EXPECT_EQ(r.ec, bdecode_errc::integer_too_long);
  EXPECT_EQ(r.position, 4u);
}

TEST(Bdecode, DeepNestingIsBoundedNotRecursive) {
  // 100k nested lists: rejected at the depth limit without recursion.
  const std::string deep = std::string(100000, 'l') + std::string(100000, 'e');
  bdecode_document doc;
  const bdecode_result r = decode(deep, doc);
  EXPECT_EQ(r.ec, bdecode_errc::depth_exceeded);
  EXPECT_EQ(r.position, 64u);
  bdecode_limits l;
  l.max_depth = 200000;
  l.max_tokens = 200000;
  EXPECT_TRUE(decode(deep, doc, l));
  EXPECT_EQ(doc.tokens().size(), 100000u);
}

TEST(Bdecode, DocumentReuseResetsState) {
  bdecode_document doc;
  ASSERT_TRUE(decode("d1:ai1ee", doc));
  EXPECT_EQ(doc.root().dict_find_int("a"), 1);
  ASSERT_FALSE(decode("d1:ai1e", doc));
  EXPECT_FALSE(doc.root());
  ASSERT_TRUE(decode("li7ee", doc));
  EXPECT_EQ(doc.root().list_at(0).int_value(), 7);
  EXPECT_EQ(doc.tokens().size(), 2u);
}

TEST(Bdecode, TokensDescribeTheLayout) {
  bdecode_document doc;
  ASSERT_TRUE(decode("d3:cow3:moo4:spaml1:a1:bee", doc));
  const auto& t = doc.tokens();
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].type, bdecode_type::dict);
  EXPECT_EQ(t[0].next, 7u);
  EXPECT_EQ(t[0].aux, 2u);
  EXPECT_EQ(t[4].type, bdecode_type::list);
  EXPECT_EQ(t[4].start, 17u);
  EXPECT_EQ(t[4].end, 25u);
  EXPECT_EQ(t[4].next, 7u);
  EXPECT_EQ(t[5].aux, 2u) << "string header: '1:'";
}

TEST(Bdecode, EveryTruncationIsUnexpectedEof) {
  // Bencode is prefix-free: no proper prefix of a valid item is valid, and
  // the decoder must report exactly "ends inside an item" at the end.
  auto rng = test::seeded_rng();
  std::vector<std::string> samples = {"d3:cow3:moo4:spaml1:a1:bee", "i-9223372036854775808e",
                                      "l0:i0ed0:0:ee"};
  for (int i = 0; i < 300; ++i) samples.push_back(encode_value(test::random_value(rng, 4)));
  bdecode_document doc;
  for (const std::string& s : samples) {
    ASSERT_TRUE(decode(s, doc)) << s;
    for (std::size_t n = 0; n < s.size(); ++n) {
      const bdecode_result r = decode(std::string_view(s).substr(0, n), doc);
      ASSERT_EQ(r.ec, bdecode_errc::unexpected_eof) << "prefix " << n << " of " << s;
      ASSERT_EQ(r.position, n);
    }
  }
}

TEST(Bdecode, RandomRoundTrip) {
  auto rng = test::seeded_rng();
  bdecode_document doc;
  for (int i = 0; i < 3000; ++i) {
    const bvalue v = test::random_value(rng, 5);
    const std::string enc = encode_value(v);
    const bdecode_result r = decode(enc, doc);
    ASSERT_TRUE(r) << r.ec.message() << " at " << r.position << " in " << enc;
    ASSERT_TRUE(to_value(doc.root()) == v) << enc;
    ASSERT_EQ(doc.root().raw(), enc);
  }
}

TEST(Bdecode, GarbledInputNeverCrashesAndAcceptsOnlyCanonical) {
  // Mutate valid encodings (flip, insert, delete, duplicate a span). The
  // decoder must return (ASan/UBSan builds check memory safety), and any
  // input it accepts must be canonical: re-encoding the decoded tree
  // reproduces it byte for byte.
  auto rng = test::seeded_rng();
  bdecode_document doc;
  static constexpr char interesting[] = {'i', 'e', 'l', 'd', ':', '-', '0', '1', '9', '\0'};
  std::size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string s = encode_value(test::random_value(rng, 4));
    const int mutations = 1 + static_cast<int>(rng() % 3);
    for (int m = 0; m < mutations; ++m) {
      const std::size_t at = s.empty() ? 0 : rng() % s.size();
      const char c = rng() % 2 ? interesting[rng() % sizeof interesting] : static_cast<char>(rng());
      switch (rng() % 4) {
        case 0:
          if (!s.empty()) s[at] = c;
          break;
        case 1:
          s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 2:
          if (!s.empty()) s.erase(at, 1 + rng() % 3);
          break;
        default:
          if (!s.empty()) s.insert(at, s.substr(at, 1 + rng() % 8));
          break;
      }
    }
    if (decode(s, doc)) {
      ++accepted;
      ASSERT_EQ(encode_value(to_value(doc.root())), s);
    }
  }
  std::cout << "accepted " << accepted << " of 20000 garbled inputs\n";
}

TEST(Bdecode, SteadyStateDecodeDoesNotAllocate) {
  bdecode_document doc;
  const std::string big = "d8:completei5e10:incompletei3e8:intervali1800e5:peers12:abcdefabcdefe";
  ASSERT_TRUE(decode(big, doc));  // warms the token array
  const std::uint64_t before = test::allocations();
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(decode(big, doc));
    ASSERT_EQ(doc.root().dict_find_int("interval"), 1800);
  }
  EXPECT_EQ(test::allocations() - before, 0u);
}

TEST(Bdecode, ErrorCodesHaveDistinctMessages) {
  std::vector<std::string> messages;
  for (int e = 0; e <= static_cast<int>(bdecode_errc::trailing_data); ++e) {
    messages.push_back(make_error_code(static_cast<bdecode_errc>(e)).message());
  }
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ(std::adjacent_find(messages.begin(), messages.end()), messages.end());
  EXPECT_EQ(std::error_code(bdecode_errc::unsorted_keys),
            make_error_code(bdecode_errc::unsorted_keys));
}

}  // namespace
}  // namespace sk
