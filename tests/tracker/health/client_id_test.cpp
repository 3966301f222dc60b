#include "tracker/client_id.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace sk {
namespace {

using style = client_info::style_type;

/// A peer_id from `head`, padded to 20 bytes with `fill`.
peer_id make_id(std::string head, char fill = 'x') {
  head.resize(20, fill);
  return peer_id::from_bytes(head);
}

TEST(ClientId, AzureusStyleKnownClients) {
  struct expected {
    const char* head;
    const char* code;
    const char* name;
    const char* version;
  };
  const expected cases[] = {
      {"-qB4520-", "qB", "qBittorrent", "4.5.2"},
      {"-qB45A0-", "qB", "qBittorrent", "4.5.10"},
      {"-TR4040-", "TR", "Transmission", "4.0.4"},
      {"-TR2940-", "TR", "Transmission", "2.94"},
      {"-TR300Z-", "TR", "Transmission", "3.00+"},
      {"-LT2090-", "LT", "libtorrent (Rasterbar)", "2.0.9"},
      {"-LT1217-", "LT", "libtorrent (Rasterbar)", "1.2.1.7"},
      {"-lt0D80-", "lt", "libTorrent (rakshasa)", "0.13.8"},
      {"-UT355W-", "UT", "uTorrent", "3.5.5W"},
      {"-DE13F0-", "DE", "Deluge", "1.3.15"},
      {"-AZ5770-", "AZ", "Vuze", "5.7.7"},
      {"-BC0150-", "BC", "BitComet", "0.1.5"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.head);
    const client_info info = identify_client(make_id(c.head));
    EXPECT_EQ(info.style, style::azureus);
    EXPECT_EQ(info.code, c.code);
    EXPECT_EQ(info.name, c.name);
    EXPECT_EQ(info.version, c.version);
  }
}

TEST(ClientId, AzureusStyleUnknownCodeKeepsCodeAsName) {
  const client_info info = identify_client(make_id("-ZZ1234-"));
  EXPECT_EQ(info.style, style::azureus);
  EXPECT_EQ(info.code, "ZZ");
  EXPECT_EQ(info.name, "ZZ");
  EXPECT_EQ(info.version, "1.2.3.4");
  EXPECT_EQ(info.to_string(), "ZZ 1.2.3.4");
}

TEST(ClientId, AzureusStyleNeedsBothDashesAndAlphanumerics) {
  EXPECT_EQ(identify_client(make_id("-qB4520x")).style, style::unknown);
  EXPECT_EQ(identify_client(make_id("-qB45%0-")).style, style::unknown);
  EXPECT_EQ(identify_client(make_id("xqB4520-")).style, style::unknown);
}

TEST(ClientId, ShadowStyle) {
  client_info info = identify_client(make_id("S58B-----"));
  EXPECT_EQ(info.style, style::shadow);
  EXPECT_EQ(info.code, "S");
  EXPECT_EQ(info.name, "Shadow");
  EXPECT_EQ(info.version, "5.8.11");

  info = identify_client(make_id("T03I-----"));
  EXPECT_EQ(info.style, style::shadow);
  EXPECT_EQ(info.name, "BitTornado");
  EXPECT_EQ(info.version, "0.3.18");

  // Five version characters, then the three dashes.
  info = identify_client(make_id("A1a.9---"));
  EXPECT_EQ(info.style, style::unknown);  // only 7 bytes before the random part
  info = identify_client(make_id("A1a.9Z---"));
  EXPECT_EQ(info.style, style::shadow);
  EXPECT_EQ(info.name, "ABC");
  EXPECT_EQ(info.version, "1.36.62.9.35");
}

TEST(ClientId, ShadowStyleNeedsDashPadding) {
  EXPECT_EQ(identify_client(make_id("S58B--x--")).style, style::unknown);
  EXPECT_EQ(identify_client(make_id("S--------")).style, style::unknown);
}

TEST(ClientId, MainlineStyle) {
  client_info info = identify_client(make_id("M4-3-6--"));
  EXPECT_EQ(info.style, style::mainline);
  EXPECT_EQ(info.code, "M");
  EXPECT_EQ(info.name, "BitTorrent Mainline");
  EXPECT_EQ(info.version, "4.3.6");

  info = identify_client(make_id("M7-10-2-"));
  EXPECT_EQ(info.style, style::mainline);
  EXPECT_EQ(info.version, "7.10.2");

  info = identify_client(make_id("Q1-10-0-"));
  EXPECT_EQ(info.style, style::mainline);
  EXPECT_EQ(info.name, "Queen Bee");
}

TEST(ClientId, OldBitCometAndTixati) {
  std::string bc = "exbc";
  bc += static_cast<char>(0);
  bc += static_cast<char>(59);
  client_info info = identify_client(make_id(bc));
  EXPECT_EQ(info.style, style::special);
  EXPECT_EQ(info.code, "BC");
  EXPECT_EQ(info.name, "BitComet");
  EXPECT_EQ(info.version, "0.59");

  info = identify_client(make_id("TIX0283-"));
  EXPECT_EQ(info.style, style::special);
  EXPECT_EQ(info.code, "TIX");
  EXPECT_EQ(info.name, "Tixati");
  EXPECT_EQ(info.version, "2.83");
  EXPECT_EQ(info.to_string(), "Tixati 2.83");
}

TEST(ClientId, JunkIsUnknown) {
  for (char fill : {'\0', '\xff', 'x', '-', ' '}) {
    const client_info info = identify_client(make_id("", fill));
    EXPECT_EQ(info.style, style::unknown) << static_cast<int>(fill);
    EXPECT_TRUE(info.code.empty());
    EXPECT_TRUE(info.version.empty());
    EXPECT_EQ(info.name, "unknown");
    EXPECT_EQ(info.to_string(), "unknown");
  }
}

/// Every result is self-consistent: a recognised style has a code and a name,
/// an unknown one has neither code nor version.
void expect_consistent(const peer_id& id) {
  const client_info info = identify_client(id);
  if (info.style == style::unknown) {
    EXPECT_TRUE(info.code.empty()) << id.hex();
    EXPECT_TRUE(info.version.empty()) << id.hex();
    EXPECT_EQ(info.name, "unknown") << id.hex();
  } else {
    EXPECT_FALSE(info.code.empty()) << id.hex();
    EXPECT_FALSE(info.name.empty()) << id.hex();
    EXPECT_LE(info.code.size(), 3u) << id.hex();
  }
  (void)info.to_string();
}

TEST(ClientId, RandomSweepNeverCrashes) {
  // SK_TEST_SEED replays a failure.
  const char* env = std::getenv("SK_TEST_SEED");
  const std::uint64_t seed = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::printf("client id sweep seed: %llu\n", static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Random bytes, and bytes drawn from the characters the layouts use, so the
  // parsers' deeper branches are reached too.
  static constexpr char alphabet[] = "-0123456789ABCMQSTXZabelqtx.%";
  for (int round = 0; round < 20000; ++round) {
    std::string raw(20, '\0');
    const bool structured = (round % 2) == 1;
    for (auto& c : raw) {
      c = structured ? alphabet[rng() % (sizeof(alphabet) - 1)] : static_cast<char>(rng());
    }
    if (structured && round % 4 == 1) raw[0] = '-';
    expect_consistent(peer_id::from_bytes(raw));
  }
}

TEST(ClientId, EverySingleBytePrefixNeverCrashes) {
  for (int b = 0; b < 256; ++b) {
    for (char fill : {'-', '0', 'A', '\0'}) {
      std::string raw(20, fill);
      raw[0] = static_cast<char>(b);
      expect_consistent(peer_id::from_bytes(raw));
    }
  }
}

// --- ban list ---------------------------------------------------------------

TEST(BanList, ParsesRulesInOrder) {
  std::string error;
  const auto list =
      client_ban_list::parse("-XX0001-=XX 0.0.1 corrupts data;-YY=YY not allowed", &error);
  ASSERT_TRUE(list) << error;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->rules()[0].prefix, "-XX0001-");
  EXPECT_EQ(list->rules()[0].reason, "XX 0.0.1 corrupts data");
  EXPECT_EQ(list->rules()[1].prefix, "-YY");
  EXPECT_EQ(list->rules()[1].reason, "YY not allowed");
}

TEST(BanList, EmptyAndBlankRulesAreSkipped) {
  std::string error;
  auto list = client_ban_list::parse("", &error);
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());
  list = client_ban_list::parse(" ; ;;\t", &error);
  ASSERT_TRUE(list);
  EXPECT_TRUE(list->empty());
  list = client_ban_list::parse("  -XX = old client ;", &error);
  ASSERT_TRUE(list) << error;
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(list->rules()[0].prefix, "-XX");
  EXPECT_EQ(list->rules()[0].reason, "old client");
}

TEST(BanList, LongestPrefixWins) {
  const auto list =
      client_ban_list::parse("-XX=all XX clients;-XX0105-=XX 1.0.5 is broken;-X=any X", nullptr);
  ASSERT_TRUE(list);
  const ban_rule* r = list->match(make_id("-XX0105-"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, "XX 1.0.5 is broken");
  r = list->match(make_id("-XX0200-"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, "all XX clients");
  r = list->match(make_id("-XY0200-"));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->reason, "any X");
  EXPECT_EQ(list->match(make_id("-qB4520-")), nullptr);
}

TEST(BanList, PercentEscapesWriteBinaryPrefixes) {
  std::string error;
  const auto list = client_ban_list::parse("exbc%00=old BitComet;%3D%3b%25=odd", &error);
  ASSERT_TRUE(list) << error;
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->rules()[0].prefix, std::string("exbc\0", 5));
  EXPECT_EQ(list->rules()[1].prefix, "=;%");
  std::string raw = std::string("exbc\0", 5);
  raw.resize(20, 'r');
  EXPECT_NE(list->match(peer_id::from_bytes(raw)), nullptr);
  raw[4] = 1;
  EXPECT_EQ(list->match(peer_id::from_bytes(raw)), nullptr);
}

TEST(BanList, ParseErrorsNameTheRule) {
  struct bad {
    const char* spec;
    const char* error;
  };
  const bad cases[] = {
      {"-XX", "ban rule 1 (\"-XX\"): missing '=reason'"},
      {"-AA=ok;=no prefix", "ban rule 2 (\"\"): empty prefix"},
      {"-XX=", "ban rule 1 (\"-XX\"): missing reason after '='"},
      {"-XX=  ", "ban rule 1 (\"-XX\"): missing reason after '='"},
      {"-XX=one;-YY=two;-XX=three", "ban rule 3 (\"-XX\"): prefix \"-XX\" is listed twice"},
      {"123456789012345678901=too long",
       "ban rule 1 (\"123456789012345678901\"): prefix is 21 bytes, a peer_id has only 20"},
      {"%zz=bad", "ban rule 1 (\"%zz\"): '%' must be followed by two hex digits"},
      {"-X%4=bad", "ban rule 1 (\"-X%4\"): '%' must be followed by two hex digits"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    std::string error;
    EXPECT_FALSE(client_ban_list::parse(c.spec, &error));
    EXPECT_EQ(error, c.error);
  }
  // A null error pointer is allowed.
  EXPECT_FALSE(client_ban_list::parse("-XX", nullptr));
}

TEST(BanList, ReasonLimits) {
  std::string error;
  EXPECT_FALSE(client_ban_list::parse("-XX=" + std::string(257, 'r'), &error));
  EXPECT_NE(error.find("longer than 256"), std::string::npos) << error;
  EXPECT_TRUE(client_ban_list::parse("-XX=" + std::string(256, 'r'), &error));
  EXPECT_FALSE(client_ban_list::parse("-XX=bad\x01reason", &error));
  EXPECT_NE(error.find("control"), std::string::npos) << error;
  // Twenty bytes is a whole peer_id: allowed.
  EXPECT_TRUE(client_ban_list::parse("12345678901234567890=exact", &error)) << error;
}

TEST(BanList, AddAndRemove) {
  client_ban_list list;
  EXPECT_TRUE(list.add("-XX", "no"));
  EXPECT_FALSE(list.add("-XX", "again"));
  EXPECT_FALSE(list.add("", "empty"));
  EXPECT_FALSE(list.add(std::string(21, 'p'), "long"));
  EXPECT_FALSE(list.add("-YY", ""));
  EXPECT_FALSE(list.add("-YY", "tab\tinside"));
  EXPECT_TRUE(list.add("-XX01", "more specific"));
  EXPECT_EQ(list.size(), 2u);
  EXPECT_EQ(list.match(make_id("-XX0100-"))->reason, "more specific");
  EXPECT_TRUE(list.remove("-XX01"));
  EXPECT_FALSE(list.remove("-XX01"));
  EXPECT_EQ(list.match(make_id("-XX0100-"))->reason, "no");
  EXPECT_TRUE(list.remove("-XX"));
  EXPECT_EQ(list.match(make_id("-XX0100-")), nullptr);
}

}  // namespace
}  // namespace sk
