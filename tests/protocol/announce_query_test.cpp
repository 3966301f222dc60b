// Announce and scrape query parsing: a real client query, every query_error
// with its exact failure text, the decisions documented in announce.cpp
// ('+' is a space, numwant=-1 is the default, event=paused is BEP 21's paused, ...),
// parameter order independence, random round trips, and no allocation on a
// warm request.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "protocol/announce.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

/// Every byte as %XX (what libtorrent does for binary values).
std::string pct(std::string_view bytes, bool upper = true) {
  static constexpr char up[] = "0123456789ABCDEF";
  static constexpr char low[] = "0123456789abcdef";
  const char* digits = upper ? up : low;
  std::string out;
  for (unsigned char c : bytes) {
    out += '%';
    out += digits[c >> 4];
    out += digits[c & 0xf];
  }
  return out;
}

const std::string k_hash = std::string("\x12\x34\x56\x78\x9a\xbc\xde\xf0\x00\x11", 10) +
                           std::string("\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xff", 10);
const std::string k_peer = "-qB4650-abcdefghijkl";

/// A query like qBittorrent's; `without` drops parameters by name, `extra`
/// is appended.
std::string client_query(std::vector<std::string> without = {}, const std::string& extra = "") {
  const std::vector<std::pair<std::string, std::string>> params = {
      {"info_hash", pct(k_hash)}, {"peer_id", k_peer}, {"port", "6881"}, {"uploaded", "0"},
      {"downloaded", "0"},        {"left", "1000"},    {"corrupt", "0"}, {"key", "A1B2C3D4"},
      {"event", "started"},       {"numwant", "200"},  {"compact", "1"}, {"no_peer_id", "1"},
      {"supportcrypto", "1"},     {"redundant", "0"}};
  std::string q;
  for (const auto& [name, value] : params) {
    if (std::find(without.begin(), without.end(), name) != without.end()) continue;
    if (!q.empty()) q += '&';
    q += name + "=" + value;
  }
  if (!extra.empty()) q += "&" + extra;
  return q;
}

query_error parse(const std::string& q, announce_request& out, const query_limits& l = {}) {
  return parse_announce_query(q, l, out);
}

TEST(AnnounceQuery, RealClientQuery) {
  announce_request r;
  ASSERT_EQ(parse(client_query(), r), query_error::ok);
  EXPECT_EQ(r.hash.view(), k_hash);
  EXPECT_EQ(r.id.view(), k_peer);
  EXPECT_EQ(r.port, 6881);
  EXPECT_EQ(r.uploaded, 0u);
  EXPECT_EQ(r.downloaded, 0u);
  EXPECT_EQ(r.left, 1000u);
  EXPECT_EQ(r.event, announce_event::started);
  EXPECT_EQ(r.numwant, 50) << "clamped to max_numwant";
  EXPECT_TRUE(r.compact);
  EXPECT_TRUE(r.no_peer_id);
  EXPECT_EQ(r.key, "A1B2C3D4");
  EXPECT_EQ(r.tracker_id, "");
  EXPECT_FALSE(r.claimed_ip);
}

TEST(AnnounceQuery, Defaults) {
  announce_request r;
  ASSERT_EQ(parse("info_hash=" + pct(k_hash) + "&peer_id=" + pct(k_peer) + "&port=1", r),
            query_error::ok);
  EXPECT_EQ(r.port, 1);
  EXPECT_EQ(r.numwant, -1);
  EXPECT_EQ(r.event, announce_event::none);
  EXPECT_TRUE(r.compact);
  EXPECT_FALSE(r.no_peer_id);
  EXPECT_EQ(r.uploaded + r.downloaded + r.left, 0u);
}

// ---------------------------------------------------------------------------
// Every query_error, with its failure text pinned.
// ---------------------------------------------------------------------------

const std::map<query_error, std::string_view>& pinned_texts() {
  static const std::map<query_error, std::string_view> texts = {
      {query_error::ok, "no error"},
      {query_error::query_too_long, "query string too long"},
      {query_error::bad_escape, "malformed percent-escape in query string"},
      {query_error::missing_info_hash, "missing info_hash"},
      {query_error::bad_info_hash_length, "info_hash must be exactly 20 bytes"},
      {query_error::missing_peer_id, "missing peer_id"},
      {query_error::bad_peer_id_length, "peer_id must be exactly 20 bytes"},
      {query_error::missing_port, "missing port"},
      {query_error::bad_port, "port must be a decimal number from 1 to 65535"},
      {query_error::port_zero, "port 0 is not a valid listening port"},
      {query_error::bad_uploaded, "uploaded must be a non-negative decimal number of bytes"},
      {query_error::bad_downloaded, "downloaded must be a non-negative decimal number of bytes"},
      {query_error::bad_left, "left must be a non-negative decimal number of bytes"},
      {query_error::bad_numwant, "numwant must be a decimal number"},
      {query_error::bad_compact, "compact must be 0 or 1"},
      {query_error::bad_no_peer_id, "no_peer_id must be 0 or 1"},
      {query_error::unknown_event, "event must be started, completed, stopped, paused or empty"},
      {query_error::bad_ip, "ip must be an IPv4 or IPv6 address"},
      {query_error::duplicate_parameter, "a parameter was given twice with different values"},
      {query_error::too_many_scrape_hashes, "too many info_hash values in one scrape"},
  };
  return texts;
}

TEST(QueryErrors, EveryErrorHasItsPinnedDistinctText) {
  const auto& texts = pinned_texts();
  const int last = static_cast<int>(query_error::too_many_scrape_hashes);
  ASSERT_EQ(texts.size(), static_cast<std::size_t>(last + 1)) << "a new error needs a pinned text";
  std::vector<std::string_view> all;
  for (int i = 0; i <= last; ++i) {
    const auto e = static_cast<query_error>(i);
    EXPECT_EQ(failure_text(e), texts.at(e)) << i;
    EXPECT_EQ(make_error_code(e).message(), texts.at(e));
    EXPECT_EQ(std::error_code(e).category().name(), std::string("sk.query"));
    all.push_back(failure_text(e));
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end()) << "texts must differ";
}

struct error_case {
  const char* name;
  std::string query;
  query_error error;
};

class AnnounceErrors : public ::testing::TestWithParam<error_case> {};

TEST_P(AnnounceErrors, ExactErrorAndText) {
  const error_case& c = GetParam();
  announce_request r;
  const query_error e = parse(c.query, r);
  EXPECT_EQ(e, c.error) << c.query << " -> " << failure_text(e);
  EXPECT_EQ(failure_text(e), pinned_texts().at(c.error));
}

std::string with(const std::string& name, const std::string& value) {
  return client_query({name}, name + "=" + value);
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, AnnounceErrors,
    ::testing::Values(
        error_case{"escape_bad_hex", with("info_hash", "%G1" + pct(k_hash.substr(1))),
                   query_error::bad_escape},
        error_case{"escape_truncated_end", with("key", "abc%4"), query_error::bad_escape},
        error_case{"escape_lone_percent", with("peer_id", "%"), query_error::bad_escape},
        error_case{"escape_in_port", with("port", "%3"), query_error::bad_escape},
        error_case{"escape_in_event", with("event", "%zzstarted"), query_error::bad_escape},
        error_case{"escape_in_ip", with("ip", "1.2.3.4%"), query_error::bad_escape},
        error_case{"missing_info_hash", client_query({"info_hash"}),
                   query_error::missing_info_hash},
        error_case{"info_hash_19", with("info_hash", pct(k_hash.substr(1))),
                   query_error::bad_info_hash_length},
        error_case{"info_hash_21", with("info_hash", pct(k_hash) + "A"),
                   query_error::bad_info_hash_length},
        error_case{"info_hash_empty", with("info_hash", ""), query_error::bad_info_hash_length},
        error_case{"info_hash_no_equals", client_query({"info_hash"}, "info_hash"),
                   query_error::bad_info_hash_length},
        error_case{"missing_peer_id", client_query({"peer_id"}), query_error::missing_peer_id},
        error_case{"peer_id_short", with("peer_id", "-qB4650-abc"),
                   query_error::bad_peer_id_length},
        error_case{"peer_id_long", with("peer_id", k_peer + "x"), query_error::bad_peer_id_length},
        error_case{"missing_port", client_query({"port"}), query_error::missing_port},
        error_case{"port_text", with("port", "http"), query_error::bad_port},
        error_case{"port_65536", with("port", "65536"), query_error::bad_port},
        error_case{"port_negative", with("port", "-1"), query_error::bad_port},
        error_case{"port_empty", with("port", ""), query_error::bad_port},
        error_case{"port_space", with("port", "+6881"), query_error::bad_port},
        error_case{"port_huge", with("port", "99999999999999999999999"), query_error::bad_port},
        error_case{"port_zero", with("port", "0"), query_error::port_zero},
        error_case{"port_zeros", with("port", "000"), query_error::port_zero},
        error_case{"uploaded_negative", with("uploaded", "-1"), query_error::bad_uploaded},
        error_case{"uploaded_overflow", with("uploaded", "18446744073709551616"),
                   query_error::bad_uploaded},
        error_case{"uploaded_text", with("uploaded", "12kb"), query_error::bad_uploaded},
        error_case{"downloaded_negative", with("downloaded", "-5"), query_error::bad_downloaded},
        error_case{"downloaded_empty", with("downloaded", ""), query_error::bad_downloaded},
        error_case{"left_negative", with("left", "-1"), query_error::bad_left},
        error_case{"left_hex", with("left", "0x10"), query_error::bad_left},
        error_case{"left_overflow", with("left", "99999999999999999999"), query_error::bad_left},
        error_case{"numwant_text", with("numwant", "all"), query_error::bad_numwant},
        error_case{"numwant_empty", with("numwant", ""), query_error::bad_numwant},
        error_case{"numwant_minus", with("numwant", "-"), query_error::bad_numwant},
        error_case{"numwant_overflow", with("numwant", "18446744073709551616"),
                   query_error::bad_numwant},
        error_case{"compact_2", with("compact", "2"), query_error::bad_compact},
        error_case{"compact_yes", with("compact", "yes"), query_error::bad_compact},
        error_case{"compact_empty", with("compact", ""), query_error::bad_compact},
        error_case{"no_peer_id_2", with("no_peer_id", "2"), query_error::bad_no_peer_id},
        error_case{"event_start", with("event", "start"), query_error::unknown_event},
        error_case{"event_upper", with("event", "STARTED"), query_error::unknown_event},
        error_case{"event_long", with("event", std::string(100, 'x')), query_error::unknown_event},
        error_case{"ip_partial", with("ip", "1.2.3"), query_error::bad_ip},
        error_case{"ip_hostname", with("ip", "tracker.example.org"), query_error::bad_ip},
        error_case{"ip_zone", with("ip", "fe80::1%25eth0"), query_error::bad_ip},
        error_case{"ip_too_long", with("ip", std::string(60, '1')), query_error::bad_ip},
        error_case{"dup_port", client_query({}, "port=6882"), query_error::duplicate_parameter},
        error_case{"dup_hash", client_query({}, "info_hash=" + pct(std::string(20, 'x'))),
                   query_error::duplicate_parameter},
        error_case{"dup_event", client_query({}, "event=stopped"),
                   query_error::duplicate_parameter},
        error_case{"dup_key", client_query({}, "key=other"), query_error::duplicate_parameter},
        error_case{"dup_numwant", client_query({}, "numwant=10"), query_error::duplicate_parameter},
        error_case{"dup_compact", client_query({}, "compact=0"), query_error::duplicate_parameter},
        error_case{"dup_ip", with("ip", "1.2.3.4&ip=1.2.3.5"), query_error::duplicate_parameter},
        error_case{"dup_left", client_query({}, "left=1"), query_error::duplicate_parameter}),
    [](const ::testing::TestParamInfo<error_case>& info) { return std::string(info.param.name); });

TEST(AnnounceQuery, QueryTooLong) {
  announce_request r;
  query_limits l;
  const std::string q = client_query();
  l.max_query_length = q.size();
  EXPECT_EQ(parse(q, r, l), query_error::ok);
  l.max_query_length = q.size() - 1;
  EXPECT_EQ(parse(q, r, l), query_error::query_too_long);
  EXPECT_EQ(failure_text(query_error::query_too_long), "query string too long");
}

TEST(AnnounceQuery, FirstErrorWinsAndMissingComesLast) {
  announce_request r;
  // Two bad values: the leftmost decides.
  EXPECT_EQ(parse(client_query({"port", "left"}, "left=-1&port=0"), r), query_error::bad_left);
  EXPECT_EQ(parse(client_query({"port", "left"}, "port=0&left=-1"), r), query_error::port_zero);
  // A bad value beats a missing parameter.
  EXPECT_EQ(parse(client_query({"info_hash", "port"}, "port=x"), r), query_error::bad_port);
  // Missing: info_hash, then peer_id, then port.
  EXPECT_EQ(parse("", r), query_error::missing_info_hash);
  EXPECT_EQ(parse(client_query({"peer_id", "port"}), r), query_error::missing_peer_id);
}

// ---------------------------------------------------------------------------
// Documented decisions
// ---------------------------------------------------------------------------

TEST(AnnounceQuery, PlusIsSpaceAndEscapesAreBinarySafe) {
  announce_request r;
  ASSERT_EQ(parse(with("key", "a+b%2Bc%20d%00e"), r), query_error::ok);
  EXPECT_EQ(r.key, std::string("a b+c d\0e", 9));
  // Raw bytes, mixed-case hex and '+' all count as one byte each.
  std::string hash_text = "abc+%7e%7E" + pct(k_hash.substr(6), false);
  ASSERT_EQ(parse(with("info_hash", hash_text), r), query_error::ok);
  EXPECT_EQ(r.hash.view(), "abc ~~" + k_hash.substr(6));
  // A raw high byte (clients should escape it; we do not insist).
  ASSERT_EQ(parse(with("peer_id", std::string(19, 'p') + "\xff"), r), query_error::ok);
  EXPECT_EQ(r.id.view(), std::string(19, 'p') + "\xff");
}

TEST(AnnounceQuery, Numwant) {
  announce_request r;
  struct c {
    const char* value;
    std::int32_t expected;
  };
  for (const c& x : {c{"-1", -1}, c{"-5", -1}, c{"0", 0}, c{"1", 1}, c{"50", 50}, c{"51", 50},
                     c{"4294967296", 50}, c{"18446744073709551615", 50}, c{"007", 7}}) {
    ASSERT_EQ(parse(with("numwant", x.value), r), query_error::ok) << x.value;
    EXPECT_EQ(r.numwant, x.expected) << x.value;
  }
  query_limits l;
  l.max_numwant = 200;
  ASSERT_EQ(parse(with("numwant", "150"), r, l), query_error::ok);
  EXPECT_EQ(r.numwant, 150);
}

TEST(AnnounceQuery, NumbersAtTheirLimits) {
  announce_request r;
  ASSERT_EQ(parse(client_query({"uploaded", "downloaded", "left", "port"},
                               "uploaded=18446744073709551615&downloaded=0&left=000123&port=65535"),
                  r),
            query_error::ok);
  EXPECT_EQ(r.uploaded, UINT64_MAX);
  EXPECT_EQ(r.downloaded, 0u);
  EXPECT_EQ(r.left, 123u);
  EXPECT_EQ(r.port, 65535);
}

TEST(AnnounceQuery, Events) {
  announce_request r;
  struct c {
    const char* value;
    announce_event expected;
  };
  for (const c& x :
       {c{"started", announce_event::started}, c{"completed", announce_event::completed},
        c{"stopped", announce_event::stopped}, c{"", announce_event::none},
        c{"empty", announce_event::none}, c{"paused", announce_event::paused},
        c{"%73topped", announce_event::stopped}}) {
    ASSERT_EQ(parse(with("event", x.value), r), query_error::ok) << x.value;
    EXPECT_EQ(r.event, x.expected) << x.value;
  }
}

TEST(AnnounceQuery, FlagsAndTrackerId) {
  announce_request r;
  ASSERT_EQ(
      parse(client_query({"compact", "no_peer_id"}, "compact=0&no_peer_id=0&trackerid=T%21"), r),
      query_error::ok);
  EXPECT_FALSE(r.compact);
  EXPECT_FALSE(r.no_peer_id);
  EXPECT_EQ(r.tracker_id, "T!");
}

TEST(AnnounceQuery, ClaimedIp) {
  announce_request r;
  ASSERT_EQ(parse(with("ip", "203.0.113.7"), r), query_error::ok);
  ASSERT_TRUE(r.claimed_ip);
  EXPECT_EQ(r.claimed_ip->to_string(), "203.0.113.7");
  ASSERT_EQ(parse(with("ip", "2001%3Adb8%3A%3A1"), r), query_error::ok);
  ASSERT_TRUE(r.claimed_ip);
  EXPECT_TRUE(r.claimed_ip->v6);
  EXPECT_EQ(r.claimed_ip->to_string(), "2001:db8::1");
  ASSERT_EQ(parse(with("ip", "::ffff:198.51.100.1"), r), query_error::ok);
  EXPECT_FALSE(r.claimed_ip->v6) << "mapped addresses become IPv4";
  ASSERT_EQ(parse(with("ip", ""), r), query_error::ok);
  EXPECT_FALSE(r.claimed_ip) << "an empty ip is no ip";
}

TEST(AnnounceQuery, RepeatsWithTheSameValueAreAccepted) {
  announce_request r;
  const std::string q = client_query() + "&port=06881&info_hash=" + pct(k_hash, false) +
                        "&event=started&key=A1B2C3D4&compact=1&numwant=60&ip=1.2.3.4&ip=1.2.3.4";
  ASSERT_EQ(parse(q, r), query_error::ok) << "same value (as parsed) twice is not a conflict";
  EXPECT_EQ(r.port, 6881);
  EXPECT_EQ(r.numwant, 50) << "numwant=200 and =60 both clamp to 50";
}

TEST(AnnounceQuery, UnknownParametersAreIgnoredUndecoded) {
  announce_request r;
  ASSERT_EQ(parse(client_query({}, "foo=%ZZ&=x&&&bar&info_hash2=1&%zz=1&PORT=0"), r),
            query_error::ok);
  EXPECT_EQ(r.port, 6881) << "names are case-sensitive: PORT is unknown";
  // An escaped name is decoded before matching.
  ASSERT_EQ(parse(client_query({"port"}, "p%6Frt=7"), r), query_error::ok);
  EXPECT_EQ(r.port, 7);
}

TEST(AnnounceQuery, ReusedRequestIsReset) {
  announce_request r;
  ASSERT_EQ(parse(client_query({}, "ip=1.2.3.4&trackerid=abc"), r), query_error::ok);
  ASSERT_TRUE(r.claimed_ip);
  ASSERT_EQ(parse("info_hash=" + pct(k_hash) + "&peer_id=" + k_peer + "&port=9", r),
            query_error::ok);
  EXPECT_FALSE(r.claimed_ip);
  EXPECT_EQ(r.key, "");
  EXPECT_EQ(r.tracker_id, "");
  EXPECT_EQ(r.event, announce_event::none);
  EXPECT_EQ(r.left, 0u);
  EXPECT_EQ(r.numwant, -1);
  EXPECT_FALSE(r.no_peer_id);
}

TEST(AnnounceQuery, EveryOrderOfParametersGivesTheSameRequest) {
  // The "every split" check for a query: cut the query at every '&' and
  // reassemble the pieces in every rotation and many shuffles.
  auto rng = test::seeded_rng();
  const std::string q = client_query({}, "ip=%3A%3A1&trackerid=xyz");
  std::vector<std::string> pairs;
  for (std::size_t i = 0, j; i <= q.size(); i = j + 1) {
    j = q.find('&', i);
    if (j == std::string::npos) j = q.size();
    pairs.push_back(q.substr(i, j - i));
  }
  announce_request expected;
  ASSERT_EQ(parse(q, expected), query_error::ok);
  for (int round = 0; round < 200; ++round) {
    if (round < static_cast<int>(pairs.size())) {
      std::rotate(pairs.begin(), pairs.begin() + 1, pairs.end());
    } else {
      std::shuffle(pairs.begin(), pairs.end(), rng);
    }
    std::string joined;
    for (const auto& p : pairs) joined += (joined.empty() ? "" : "&") + p;
    announce_request r;
    ASSERT_EQ(parse(joined, r), query_error::ok) << joined;
    EXPECT_EQ(r.hash, expected.hash);
    EXPECT_EQ(r.id, expected.id);
    EXPECT_EQ(r.port, expected.port);
    EXPECT_EQ(r.left, expected.left);
    EXPECT_EQ(r.numwant, expected.numwant);
    EXPECT_EQ(r.event, expected.event);
    EXPECT_EQ(r.key, expected.key);
    EXPECT_EQ(r.tracker_id, expected.tracker_id);
    EXPECT_EQ(r.claimed_ip, expected.claimed_ip);
  }
}

/// Encodes bytes the way some client might: unreserved bytes raw or
/// escaped, space as '+' or %20, hex digits in either case.
std::string random_encode(std::mt19937_64& rng, std::string_view bytes) {
  static constexpr char hex_up[] = "0123456789ABCDEF";
  static constexpr char hex_low[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    const bool unreserved = std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved && rng() % 2) {
      out += static_cast<char>(c);
    } else if (c == ' ' && rng() % 2) {
      out += '+';
    } else {
      const char* hex = rng() % 2 ? hex_up : hex_low;
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

TEST(AnnounceQuery, RandomRoundTrip) {
  auto rng = test::seeded_rng();
  const char* events[] = {"started", "completed", "stopped", ""};
  const announce_event event_values[] = {announce_event::started, announce_event::completed,
                                         announce_event::stopped, announce_event::none};
  announce_request r;
  for (int i = 0; i < 20000; ++i) {
    const std::string hash = test::random_bytes(rng, 20);
    const std::string id = test::random_bytes(rng, 20);
    const auto port = static_cast<std::uint16_t>(1 + rng() % 65535);
    const std::uint64_t up = rng() >> (rng() % 64), down = rng() >> (rng() % 64),
                        left = rng() >> (rng() % 64);
    const int ev = static_cast<int>(rng() % 4);
    const int numwant = static_cast<int>(rng() % 60) - 1;
    const bool compact = rng() % 2, no_peer_id = rng() % 2;
    const std::string key = test::random_bytes(rng, rng() % 12);
    std::uint8_t v6[16];
    for (auto& b : v6) b = static_cast<std::uint8_t>(rng() % 3 ? 0 : rng());
    const ip_address ip = rng() % 2 ? ip_address::make_v4(static_cast<std::uint32_t>(rng()))
                                    : ip_address::make_v6(v6);

    std::vector<std::string> pairs = {
        "info_hash=" + random_encode(rng, hash),
        "peer_id=" + random_encode(rng, id),
        "port=" + std::to_string(port),
        "uploaded=" + std::to_string(up),
        "downloaded=" + std::to_string(down),
        "left=" + std::to_string(left),
        "event=" + std::string(events[ev]),
        "numwant=" + std::to_string(numwant),
        "compact=" + std::string(compact ? "1" : "0"),
        "no_peer_id=" + std::string(no_peer_id ? "1" : "0"),
        "key=" + random_encode(rng, key),
        "ip=" + random_encode(rng, ip.to_string()),
        "x" + std::to_string(rng() % 100) + "=" + random_encode(rng, test::random_bytes(rng, 5)),
    };
    std::shuffle(pairs.begin(), pairs.end(), rng);
    std::string q;
    for (const auto& p : pairs) q += (q.empty() ? "" : "&") + p;

    ASSERT_EQ(parse(q, r), query_error::ok) << q;
    ASSERT_EQ(r.hash.view(), hash) << q;
    ASSERT_EQ(r.id.view(), id) << q;
    ASSERT_EQ(r.port, port);
    ASSERT_EQ(r.uploaded, up);
    ASSERT_EQ(r.downloaded, down);
    ASSERT_EQ(r.left, left);
    ASSERT_EQ(r.event, event_values[ev]);
    ASSERT_EQ(r.numwant, std::min(numwant, 50)) << "clamped to max_numwant";
    ASSERT_EQ(r.compact, compact);
    ASSERT_EQ(r.no_peer_id, no_peer_id);
    ASSERT_EQ(r.key, key) << q;
    ASSERT_TRUE(r.claimed_ip);
    ASSERT_EQ(*r.claimed_ip, ip) << q;
  }
}

TEST(AnnounceQuery, NoCrashOnGarbage) {
  // Random bytes and mutated real queries: any result is fine, no crash
  // (the ASan/UBSan build checks memory), and an ok result has its
  // invariants (port != 0, numwant <= cap).
  auto rng = test::seeded_rng();
  announce_request r;
  const std::string base = client_query({}, "ip=1.2.3.4&trackerid=z");
  for (int i = 0; i < 50000; ++i) {
    std::string q = i % 2 ? test::random_bytes(rng, rng() % 300) : base;
    for (int m = 0; m < 4; ++m) {
      if (q.empty()) break;
      const std::size_t at = rng() % q.size();
      switch (rng() % 3) {
        case 0:
          q[at] = "%&=+0aZ\xff"[rng() % 8];
          break;
        case 1:
          q.erase(at, 1 + rng() % 5);
          break;
        default:
          q.insert(at, 1, "%&="[rng() % 3]);
          break;
      }
    }
    if (parse(q, r) == query_error::ok) {
      ASSERT_NE(r.port, 0);
      ASSERT_LE(r.numwant, 50);
    }
  }
}

TEST(AnnounceQuery, WarmRequestParsesWithoutAllocating) {
  announce_request r;
  const std::string q = client_query({}, "trackerid=0123456789abcdef0123&ip=2001:db8::1");
  ASSERT_EQ(parse(q, r), query_error::ok);  // warms key/tracker_id capacity
  const std::uint64_t before = test::allocations();
  for (int i = 0; i < 100; ++i) ASSERT_EQ(parse(q, r), query_error::ok);
  EXPECT_EQ(test::allocations() - before, 0u);
}

// ---------------------------------------------------------------------------
// Scrape
// ---------------------------------------------------------------------------

TEST(ScrapeQuery, RepeatedInfoHashes) {
  std::vector<info_hash> out;
  const std::string h2(20, '\x01');
  ASSERT_EQ(
      parse_scrape_query("info_hash=" + pct(k_hash) + "&foo=%zz&info_hash=" + pct(h2), {}, out),
      query_error::ok);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].view(), k_hash);
  EXPECT_EQ(out[1].view(), h2);
  ASSERT_EQ(parse_scrape_query("", {}, out), query_error::ok);
  EXPECT_TRUE(out.empty()) << "no hashes: the caller decides about full scrapes";
}

TEST(ScrapeQuery, Errors) {
  std::vector<info_hash> out;
  query_limits l;
  l.max_query_length = 8192;  // room for 75 escaped hashes
  EXPECT_EQ(parse_scrape_query("info_hash=abc", l, out), query_error::bad_info_hash_length);
  EXPECT_EQ(parse_scrape_query("info_hash=" + pct(k_hash) + "%", l, out), query_error::bad_escape);
  std::string q;
  for (int i = 0; i < 75; ++i) q += (i ? "&" : "") + std::string("info_hash=") + pct(k_hash);
  EXPECT_EQ(parse_scrape_query(q, l, out), query_error::too_many_scrape_hashes);
  EXPECT_EQ(failure_text(query_error::too_many_scrape_hashes),
            "too many info_hash values in one scrape");
  q.resize(q.rfind('&'));  // 74 hashes: exactly the cap
  EXPECT_EQ(parse_scrape_query(q, l, out), query_error::ok);
  EXPECT_EQ(out.size(), 74u);
  l.max_scrape_hashes = 2;
  EXPECT_EQ(parse_scrape_query(q, l, out), query_error::too_many_scrape_hashes);
  l.max_query_length = 10;
  EXPECT_EQ(parse_scrape_query(q, l, out), query_error::query_too_long);
}

TEST(ScrapeQuery, WarmVectorDoesNotAllocate) {
  std::vector<info_hash> out;
  out.reserve(74);
  const std::string q = "info_hash=" + pct(k_hash) + "&info_hash=" + pct(k_hash);
  const std::uint64_t before = test::allocations();
  for (int i = 0; i < 100; ++i) ASSERT_EQ(parse_scrape_query(q, {}, out), query_error::ok);
  EXPECT_EQ(test::allocations() - before, 0u);
}

}  // namespace
}  // namespace sk
