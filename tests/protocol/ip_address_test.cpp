// ip_address text form: RFC 5952 examples, strict parsing, IPv4-mapped
// normalisation, and a differential test against the C library's
// inet_ntop/inet_pton on random addresses (tests may use the OS; protocol/
// may not).

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <string>

#include "protocol/types.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

ip_address parsed(std::string_view text) {
  ip_address a;
  EXPECT_TRUE(ip_address::parse(text, a)) << text;
  return a;
}

std::string canonical(std::string_view text) { return parsed(text).to_string(); }

TEST(IpAddress, V4) {
  EXPECT_EQ(ip_address::make_v4(0x7f000001u).to_string(), "127.0.0.1");
  EXPECT_EQ(ip_address::make_v4(0xffffffffu).to_string(), "255.255.255.255");
  EXPECT_EQ(ip_address::make_v4(0u).to_string(), "0.0.0.0");
  const ip_address a = parsed("10.20.30.40");
  EXPECT_FALSE(a.v6);
  EXPECT_EQ(a, ip_address::make_v4(0x0a141e28u));
  EXPECT_EQ(a.raw(), std::string_view("\x0a\x14\x1e\x28", 4));
}

TEST(IpAddress, Rfc5952Canonical) {
  // RFC 5952 §4: lower case, no leading zeros, "::" for the longest run of
  // two or more zero groups (the first on a tie), never for one group.
  EXPECT_EQ(canonical("2001:0db8:0000:0000:0000:0000:0000:0001"), "2001:db8::1");
  EXPECT_EQ(canonical("2001:DB8::1"), "2001:db8::1");
  EXPECT_EQ(canonical("2001:db8:0:0:1:0:0:1"), "2001:db8::1:0:0:1");
  EXPECT_EQ(canonical("2001:0:0:1:0:0:0:1"), "2001:0:0:1::1");
  EXPECT_EQ(canonical("2001:db8:0:1:1:1:1:1"), "2001:db8:0:1:1:1:1:1");
  EXPECT_EQ(canonical("2001:db8::0:1"), "2001:db8::1");
  EXPECT_EQ(canonical("::1"), "::1");
  EXPECT_EQ(canonical("::"), "::");
  EXPECT_EQ(canonical("fe80::"), "fe80::");
  EXPECT_EQ(canonical("1:0:0:0:0:0:0:0"), "1::");
  EXPECT_EQ(canonical("0:0:0:0:0:0:0:1"), "::1");
  EXPECT_EQ(canonical("1:2:3:4:5:6:7::"), "1:2:3:4:5:6:7:0");
  EXPECT_EQ(canonical("::2:3:4:5:6:7:8"), "0:2:3:4:5:6:7:8");
  EXPECT_EQ(canonical("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  EXPECT_EQ(canonical("::1.2.3.4"), "::102:304");
  EXPECT_EQ(canonical("64:ff9b::192.0.2.33"), "64:ff9b::c000:221");
}

TEST(IpAddress, V4MappedIsNormalisedToV4) {
  const ip_address a = parsed("::ffff:192.0.2.1");
  EXPECT_FALSE(a.v6);
  EXPECT_EQ(a.to_string(), "192.0.2.1");
  EXPECT_EQ(parsed("::FFFF:c000:0201"), a);
  // A v6-flagged mapped address built by hand prints in mixed notation.
  ip_address raw;
  raw.v6 = true;
  raw.bytes = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
  EXPECT_EQ(raw.to_string(), "::ffff:192.0.2.1");
  char buf[ip_address::max_text_length];
  EXPECT_EQ(raw.to_chars(buf), 16u);
}

TEST(IpAddress, RejectsMalformed) {
  for (const char* bad : {"",
                          "1.2.3",
                          "1.2.3.4.5",
                          "256.1.1.1",
                          "1.2.3.256",
                          "01.2.3.4",
                          "1.2.3.04",
                          "1..2.3",
                          ".1.2.3",
                          "1.2.3.4.",
                          "1.2.3.4 ",
                          " 1.2.3.4",
                          "1.2.3.-4",
                          "1.2.3.4a",
                          "1234.1.1.1",
                          ":",
                          ":::",
                          "1::2::3",
                          "12345::",
                          "1:2:3:4:5:6:7:8:9",
                          "1:2:3:4:5:6:7",
                          "g::",
                          "::1%eth0",
                          "[::1]",
                          ":1::",
                          "1::2:",
                          "1:2:3:4:5:6:7:8::",
                          "::1.2.3.4:5",
                          "::1.2.3",
                          "1:2:3:4:5:6:7:1.2.3.4",
                          "::ffff:01.2.3.4",
                          "1:2:3:4:5:6:7:8:",
                          ":1:2:3:4:5:6:7:8",
                          "localhost",
                          "::-1",
                          "0x1.2.3.4"}) {
    ip_address a = ip_address::make_v4(0x01020304u);
    EXPECT_FALSE(ip_address::parse(bad, a)) << '"' << bad << '"';
    EXPECT_EQ(a, ip_address::make_v4(0x01020304u)) << "untouched on failure";
  }
  ip_address a;
  EXPECT_FALSE(ip_address::parse(std::string(100, '1'), a)) << "longer than any address";
  EXPECT_FALSE(ip_address::parse(std::string_view("1.2.3.4\0", 8), a)) << "embedded NUL";
}

TEST(IpAddress, DifferentialAgainstInetNtopAndPton) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 100000; ++i) {
    std::uint8_t b[16];
    for (int g = 0; g < 8; ++g) {
      // Mostly zero groups, so that runs and ties of runs are common.
      const unsigned v = rng() % 3 == 0 ? static_cast<unsigned>(rng() & 0xffff) : 0u;
      b[2 * g] = static_cast<std::uint8_t>(v >> 8);
      b[2 * g + 1] = static_cast<std::uint8_t>(v);
    }
    const ip_address a = ip_address::make_v6(b);
    char expected[INET6_ADDRSTRLEN];
    if (a.v6) {
      // glibc prints ::a.b.c.d for the deprecated IPv4-compatible form
      // (first 96 bits zero); RFC 5952 does not ask for that, so skip it.
      static constexpr std::uint8_t zero12[12] = {};
      if (std::memcmp(b, zero12, 12) == 0) continue;
      ASSERT_NE(inet_ntop(AF_INET6, b, expected, sizeof expected), nullptr);
    } else {
      ASSERT_NE(inet_ntop(AF_INET, b + 12, expected, sizeof expected), nullptr);
    }
    const std::string text = a.to_string();
    ASSERT_EQ(text, expected);
    ip_address back;
    ASSERT_TRUE(ip_address::parse(text, back)) << text;
    ASSERT_EQ(back, a) << text;
    // inet_pton agrees on the bytes of what we print.
    std::uint8_t pton[16];
    ASSERT_EQ(inet_pton(a.v6 ? AF_INET6 : AF_INET, text.c_str(), pton), 1) << text;
    ASSERT_EQ(std::memcmp(pton, a.bytes.data(), a.length()), 0) << text;
  }
}

TEST(IpAddress, RandomTextAgreesWithInetPton) {
  // Random short strings over the address alphabet: parse must accept
  // exactly what inet_pton accepts (glibc is strict in the same ways:
  // no leading zeros in dotted quads, no zone ids), with the same bytes.
  auto rng = test::seeded_rng();
  static constexpr char alphabet[] = "0123456789abcdefABCDEF:.";
  std::size_t agreed_valid = 0;
  for (int i = 0; i < 300000; ++i) {
    std::string s(1 + rng() % 16, ' ');
    for (char& c : s) c = alphabet[rng() % (sizeof alphabet - 1)];
    std::uint8_t pton[16];
    const bool is_v6 = s.find(':') != std::string::npos;
    const bool want = inet_pton(is_v6 ? AF_INET6 : AF_INET, s.c_str(), pton) == 1;
    ip_address a;
    const bool got = ip_address::parse(s, a);
    ASSERT_EQ(got, want) << '"' << s << '"';
    if (got) {
      ++agreed_valid;
      const std::uint8_t v4[4] = {pton[0], pton[1], pton[2], pton[3]};
      const ip_address expected = is_v6 ? ip_address::make_v6(pton) : ip_address::make_v4(v4);
      ASSERT_EQ(a, expected) << s;
    }
  }
  std::cout << agreed_valid << " valid addresses among the random strings\n";
}

}  // namespace
}  // namespace sk
