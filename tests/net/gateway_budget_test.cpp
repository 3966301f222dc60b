/// The per-address budget for creating new swarms (net/creation_budget.hpp):
/// burst, refill, the IPv6 /64 key, bounded memory and expiry. Time is
/// passed in; no sleeps.

#include "net/creation_budget.hpp"

#include <gtest/gtest.h>

namespace sk {
namespace {

using namespace std::chrono_literals;
using clock_type = creation_budget::clock;

ip_address v4(std::uint32_t host_order) { return ip_address::make_v4(host_order); }

ip_address v6(std::uint8_t subnet, std::uint8_t host) {
  std::uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, subnet, 0, 0, 0, 0, 0, 0, 0, host};
  return ip_address::make_v6(b);
}

const siphash_key fixed_key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

TEST(CreationBudget, TheBurstIsSpentThenRefillsAtTheRate) {
  creation_budget b(5, 60, 1024, fixed_key);  // 5 at once, then one a second
  const auto t0 = clock_type::time_point{} + 1h;
  const auto a = v4(0x0a000001u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(b.take(a, t0)) << i;
  EXPECT_FALSE(b.take(a, t0)) << "the burst is spent";
  EXPECT_FALSE(b.take(a, t0 + 500ms)) << "half a token is not a token";
  EXPECT_TRUE(b.take(a, t0 + 1s));
  EXPECT_FALSE(b.take(a, t0 + 1s));
  // Three seconds later: three tokens, never more than the burst.
  EXPECT_TRUE(b.take(a, t0 + 4s));
  EXPECT_TRUE(b.take(a, t0 + 4s));
  EXPECT_TRUE(b.take(a, t0 + 4s));
  EXPECT_FALSE(b.take(a, t0 + 4s));
  int after_an_hour = 0;
  while (b.take(a, t0 + 1h)) ++after_an_hour;
  EXPECT_EQ(after_an_hour, 5) << "an idle hour refills to the burst, not beyond";
}

TEST(CreationBudget, RefusedAttemptsDoNotSpendOrDelayTheRefill) {
  creation_budget b(1, 60, 1024, fixed_key);
  const auto t0 = clock_type::time_point{} + 1h;
  const auto a = v4(0x0a000001u);
  EXPECT_TRUE(b.take(a, t0));
  for (int i = 1; i < 10; ++i) EXPECT_FALSE(b.take(a, t0 + i * 100ms));
  EXPECT_TRUE(b.take(a, t0 + 1s)) << "one second after the last token, whatever was refused";
}

TEST(CreationBudget, AddressesHaveTheirOwnBucketsAndAnIpv6Slash64IsOne) {
  creation_budget b(2, 1, 1024, fixed_key);
  const auto t0 = clock_type::time_point{} + 1h;
  EXPECT_TRUE(b.take(v4(0x0a000001u), t0));
  EXPECT_TRUE(b.take(v4(0x0a000001u), t0));
  EXPECT_FALSE(b.take(v4(0x0a000001u), t0));
  EXPECT_TRUE(b.take(v4(0x0a000002u), t0)) << "another address is not charged";
  // One subscriber's /64: every host address shares the bucket.
  EXPECT_TRUE(b.take(v6(1, 1), t0));
  EXPECT_TRUE(b.take(v6(1, 2), t0));
  EXPECT_FALSE(b.take(v6(1, 3), t0));
  EXPECT_TRUE(b.take(v6(2, 1), t0)) << "another /64 is another subscriber";
  // An IPv4 address and the IPv6 address with the same leading bytes differ.
  EXPECT_EQ(b.tracked(), 4u);
}

TEST(CreationBudget, MemoryIsBoundedAndAForgottenAddressStartsFull) {
  constexpr std::size_t cap = 64;  // 4 per stripe
  creation_budget b(3, 1, cap, fixed_key);
  const auto t0 = clock_type::time_point{} + 1h;
  const auto first = v4(0xc0a80001u);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(b.take(first, t0));
  ASSERT_FALSE(b.take(first, t0));
  // A flood of other addresses, all within the same second: nothing
  // expires, so the oldest entries give way.
  for (std::uint32_t i = 0; i < 5000; ++i) {
    EXPECT_TRUE(b.take(v4(0x0b000000u + i), t0)) << "a new address always has its burst";
    EXPECT_LE(b.tracked(), cap);
  }
  EXPECT_TRUE(b.take(first, t0)) << "evicted: a fresh bucket, as a new address would get";
}

TEST(CreationBudget, EntriesExpireOnceTheirBucketWouldBeFullAgain) {
  creation_budget b(2, 60, 1024, fixed_key);  // refilled from empty in 2 s
  EXPECT_EQ(b.refill_time(), 2s);
  const auto t0 = clock_type::time_point{} + 1h;
  for (std::uint32_t i = 0; i < 200; ++i) ASSERT_TRUE(b.take(v4(0x0c000000u + i), t0));
  EXPECT_EQ(b.tracked(), 200u);
  // Later arrivals clean up the expired entries as they come (two looked
  // at per insert).
  for (std::uint32_t i = 0; i < 200; ++i) ASSERT_TRUE(b.take(v4(0x0d000000u + i), t0 + 3s));
  EXPECT_EQ(b.tracked(), 200u) << "each insert dropped expired entries";
  // Entries still counting down are kept.
  creation_budget c(2, 60, 1024, fixed_key);
  for (std::uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(c.take(v4(0x0c000000u + i), t0));
  for (std::uint32_t i = 0; i < 100; ++i) ASSERT_TRUE(c.take(v4(0x0d000000u + i), t0 + 1s));
  EXPECT_EQ(c.tracked(), 200u);
}

}  // namespace
}  // namespace sk
