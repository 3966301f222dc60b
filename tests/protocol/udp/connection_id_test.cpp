// Connection ids: lifetime under an injected clock, binding to address and
// port, keys.

#include "protocol/connection_id.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>

#include "test_seed.hpp"

namespace {

using sk::connection_id;
using sk::connection_id_issuer;
using sk::endpoint;
using std::chrono::seconds;

constexpr char key_hex[] = "000102030405060708090a0b0c0d0e0f";

sk::connection_id_key test_key() {
  sk::connection_id_key k{};
  EXPECT_TRUE(sk::parse_connection_id_key(key_hex, k));
  return k;
}

endpoint v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d, std::uint16_t port) {
  const std::uint8_t bytes[4] = {a, b, c, d};
  return endpoint{sk::ip_address::make_v4(bytes), port};
}

endpoint v6(std::uint8_t last, std::uint16_t port) {
  std::uint8_t bytes[16] = {0x20, 0x01, 0x0d, 0xb8};
  bytes[15] = last;
  return endpoint{sk::ip_address::make_v6(bytes), port};
}

TEST(ConnectionIdKey, ParsesThirtyTwoHexDigitsInEitherCase) {
  sk::connection_id_key k{};
  ASSERT_TRUE(sk::parse_connection_id_key(key_hex, k));
  for (std::size_t i = 0; i < k.size(); ++i) {
    EXPECT_EQ(k[i], i);
  }
  sk::connection_id_key upper{};
  ASSERT_TRUE(sk::parse_connection_id_key("FFEEDDCCBBAA99887766554433221100", upper));
  EXPECT_EQ(upper[0], 0xff);
  EXPECT_EQ(upper[15], 0x00);
  sk::connection_id_key mixed{};
  ASSERT_TRUE(sk::parse_connection_id_key("aBcDeF0123456789aBcDeF0123456789", mixed));
  EXPECT_EQ(mixed[0], 0xab);
}

TEST(ConnectionIdKey, RejectsWrongLengthAndNonHexAndLeavesOutputAlone) {
  const sk::connection_id_key sentinel = test_key();
  for (const char* bad : {"", "00", "000102030405060708090a0b0c0d0e0",
                          "000102030405060708090a0b0c0d0e0f0", "000102030405060708090a0b0c0d0e0g",
                          " 00102030405060708090a0b0c0d0e0f", "0x0102030405060708090a0b0c0d0e0f"}) {
    sk::connection_id_key k = sentinel;
    EXPECT_FALSE(sk::parse_connection_id_key(bad, k)) << '"' << bad << '"';
    EXPECT_EQ(k, sentinel);
  }
}

TEST(ConnectionIdKey, FromConfig) {
  const connection_id_issuer configured = connection_id_issuer::from_config(key_hex);
  const connection_id_issuer direct(test_key());
  const endpoint c = v4(192, 0, 2, 1, 6881);
  EXPECT_EQ(configured.issue(c, seconds(1000)), direct.issue(c, seconds(1000)));

  EXPECT_THROW(connection_id_issuer::from_config("abc"), std::invalid_argument);
  EXPECT_THROW(connection_id_issuer::from_config("000102030405060708090a0b0c0d0e0z"),
               std::invalid_argument);

  // Empty: a random key per process (per call here), so two differ.
  const connection_id_issuer r1 = connection_id_issuer::from_config("");
  const connection_id_issuer r2 = connection_id_issuer::from_config("");
  EXPECT_NE(r1.issue(c, seconds(1000)), r2.issue(c, seconds(1000)));
}

TEST(ConnectionIdKey, RandomKeysDiffer) {
  std::set<sk::connection_id_key> keys;
  for (int i = 0; i < 64; ++i) {
    keys.insert(sk::random_connection_id_key());
  }
  EXPECT_EQ(keys.size(), 64U);
}

TEST(ConnectionId, EpochIsFloorDivision) {
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(0)), 0);
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(119)), 0);
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(120)), 1);
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(-1)), -1);
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(-120)), -1);
  EXPECT_EQ(connection_id_issuer::epoch_of(seconds(-121)), -2);
}

TEST(ConnectionId, ValidWhenIssued) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(198, 51, 100, 7, 51413);
  const connection_id id = ids.issue(c, seconds(5000));
  EXPECT_TRUE(ids.valid(id, c, seconds(5000)));
}

// Whatever second of its epoch an id is issued in, it is valid for the next
// 120 s (so 119 s and 120 s both pass) and rejected from 240 s on.
TEST(ConnectionId, LifetimeBoundsForEveryIssueSecond) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(198, 51, 100, 7, 51413);
  const std::int64_t base = 999'960;  // a multiple of 120: an epoch start
  ASSERT_EQ(base % connection_id_issuer::epoch_seconds, 0);
  for (std::int64_t t = base; t < base + 2 * connection_id_issuer::epoch_seconds; ++t) {
    const connection_id id = ids.issue(c, seconds(t));
    SCOPED_TRACE("issued at " + std::to_string(t));
    EXPECT_TRUE(ids.valid(id, c, seconds(t)));
    EXPECT_TRUE(ids.valid(id, c, seconds(t + 1)));
    EXPECT_TRUE(ids.valid(id, c, seconds(t + 119)));
    EXPECT_TRUE(ids.valid(id, c, seconds(t + connection_id_issuer::min_lifetime_seconds)));
    EXPECT_FALSE(ids.valid(id, c, seconds(t + connection_id_issuer::max_lifetime_seconds)));
    EXPECT_FALSE(ids.valid(id, c, seconds(t + 241)));
    EXPECT_FALSE(ids.valid(id, c, seconds(t + 3600)));
    // Not valid before its epoch either (an id from the "future").
    EXPECT_FALSE(ids.valid(id, c, seconds(t - connection_id_issuer::epoch_seconds)));
  }
}

TEST(ConnectionId, ExactEdgesAtEpochBoundaries) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(10, 1, 2, 3, 1234);
  // Issued at the first second of epoch 100 (t = 12000): lives 240 s.
  const connection_id early = ids.issue(c, seconds(12000));
  EXPECT_TRUE(ids.valid(early, c, seconds(12239)));
  EXPECT_FALSE(ids.valid(early, c, seconds(12240)));
  // Issued at the last second of epoch 100 (t = 12119): lives 121 s.
  const connection_id late = ids.issue(c, seconds(12119));
  EXPECT_TRUE(ids.valid(late, c, seconds(12239)));
  EXPECT_FALSE(ids.valid(late, c, seconds(12240)));
  // The same id for every second of one epoch, another in the next.
  EXPECT_EQ(early, late);
  EXPECT_NE(ids.issue(c, seconds(12120)), early);
}

TEST(ConnectionId, NegativeAndZeroTimesWork) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(10, 1, 2, 3, 1234);
  const connection_id id = ids.issue(c, seconds(-5));
  EXPECT_TRUE(ids.valid(id, c, seconds(-5)));
  EXPECT_TRUE(ids.valid(id, c, seconds(115)));
  EXPECT_FALSE(ids.valid(id, c, seconds(120)));
  const connection_id at_zero = ids.issue(c, seconds(0));
  EXPECT_TRUE(ids.valid(at_zero, c, seconds(0)));
  EXPECT_TRUE(ids.valid(at_zero, c, seconds(239)));
  EXPECT_FALSE(ids.valid(at_zero, c, seconds(240)));
}

TEST(ConnectionId, BoundToTheAddressNotThePort) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(203, 0, 113, 9, 6881);
  const connection_id id = ids.issue(c, seconds(777));
  EXPECT_TRUE(ids.valid(id, c, seconds(777)));
  EXPECT_FALSE(ids.valid(id, v4(203, 0, 113, 10, 6881), seconds(777))) << "another IPv4 address";
  // Another port of the same address is the same client: libtorrent shares
  // one id among all its sockets (one cache per tracker per process).
  EXPECT_TRUE(ids.valid(id, v4(203, 0, 113, 9, 6882), seconds(777))) << "another port";
  EXPECT_FALSE(ids.valid(id, v4(9, 113, 0, 203, 6881), seconds(777))) << "bytes reversed";

  // A v6 address whose first 4 bytes equal the v4 address is another client.
  std::uint8_t b6[16] = {203, 0, 113, 9};
  const endpoint six{sk::ip_address::make_v6(b6), 6881};
  ASSERT_TRUE(six.ip.v6);
  EXPECT_FALSE(ids.valid(id, six, seconds(777))) << "v6 with the v4 bytes as prefix";

  const endpoint a = v6(1, 6881);
  const connection_id id6 = ids.issue(a, seconds(777));
  EXPECT_TRUE(ids.valid(id6, a, seconds(777)));
  EXPECT_FALSE(ids.valid(id6, v6(2, 6881), seconds(777))) << "another IPv6 address";
  EXPECT_TRUE(ids.valid(id6, v6(1, 6882), seconds(777))) << "another port (v6)";
}

TEST(ConnectionId, V4MappedV6IsTheSameClientAsV4) {
  const connection_id_issuer ids(test_key());
  const endpoint plain = v4(192, 0, 2, 33, 4000);
  const std::uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 33};
  const endpoint via_dual_stack{sk::ip_address::make_v6(mapped), 4000};
  EXPECT_TRUE(ids.valid(ids.issue(plain, seconds(50)), via_dual_stack, seconds(50)));
}

TEST(ConnectionId, StrayBytesPastAV4AddressAreIgnored) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(192, 0, 2, 33, 4000);
  endpoint dirty = c;
  dirty.ip.bytes[7] = 0x55;  // not part of a v4 address
  EXPECT_EQ(ids.issue(c, seconds(50)), ids.issue(dirty, seconds(50)));
}

TEST(ConnectionId, RejectedUnderAnotherKey) {
  const connection_id_issuer ids(test_key());
  sk::connection_id_key other = test_key();
  other[15] ^= 1;
  const connection_id_issuer other_ids(other);
  const endpoint c = v4(192, 0, 2, 1, 6881);
  const connection_id id = ids.issue(c, seconds(300));
  EXPECT_TRUE(ids.valid(id, c, seconds(300)));
  EXPECT_FALSE(other_ids.valid(id, c, seconds(300)));
  EXPECT_NE(other_ids.issue(c, seconds(300)), id);
}

TEST(ConnectionId, InjectedSteadyClockMatchesSeconds) {
  const connection_id_issuer ids(test_key());
  const endpoint c = v4(192, 0, 2, 1, 6881);
  using clock = std::chrono::steady_clock;
  const clock::time_point t0{std::chrono::hours(24 * 365)};  // any point on the clock
  const connection_id id = ids.issue(c, t0);
  EXPECT_EQ(id, ids.issue(c, std::chrono::duration_cast<seconds>(t0.time_since_epoch())));
  EXPECT_TRUE(ids.valid(id, c, t0 + std::chrono::milliseconds(119'999)));
  EXPECT_TRUE(ids.valid(id, c, t0 + seconds(120)));
  EXPECT_FALSE(ids.valid(id, c, t0 + seconds(240)));
  EXPECT_FALSE(ids.valid(id, c, t0 + std::chrono::hours(1)));
}

TEST(ConnectionId, RandomClientsGetDistinctIdsAndForgeriesFail) {
  SCOPED_TRACE(sk::test::seed_trace());
  std::mt19937_64 rng(sk::test::test_seed());
  const connection_id_issuer ids(sk::random_connection_id_key());
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 5000; ++i) {
    const auto r = rng();
    const endpoint c = v4(static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(r >> 8),
                          static_cast<std::uint8_t>(r >> 16), static_cast<std::uint8_t>(r >> 24),
                          static_cast<std::uint16_t>(r >> 32));
    const auto t = seconds(static_cast<std::int64_t>(rng() % 10'000'000));
    const connection_id id = ids.issue(c, t);
    seen.insert(id.value);
    EXPECT_TRUE(ids.valid(id, c, t));
    EXPECT_FALSE(ids.valid(connection_id{id.value ^ (std::uint64_t{1} << (rng() % 64))}, c, t))
        << "one flipped bit";
    EXPECT_FALSE(ids.valid(connection_id{rng()}, c, t)) << "random guess";
  }
  EXPECT_GE(seen.size(), 4990U);  // duplicates only from duplicate random clients
}

}  // namespace
