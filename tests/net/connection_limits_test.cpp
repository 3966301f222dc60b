/// The per-address bookkeeping of the network limits, without sockets:
/// connections per address (net/connection_slots.hpp), the request-rate
/// buckets (net/address_buckets.hpp, as the gateway builds them), and the
/// "reached" latch that logs a limit once per episode
/// (net/limit_latch.hpp). Time is passed in; no sleeps.

#include <gtest/gtest.h>

#include "net/address_buckets.hpp"
#include "net/address_key.hpp"
#include "net/connection_slots.hpp"
#include "net/gateway.hpp"
#include "net/limit_latch.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

ip_address v4(std::uint32_t host_order) { return ip_address::make_v4(host_order); }

ip_address v6(std::uint8_t subnet, std::uint8_t host) {
  std::uint8_t b[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, subnet, 0, 0, 0, 0, 0, 0, 0, host};
  return ip_address::make_v6(b);
}

const siphash_key fixed_key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

// -- connections per address ----------------------------------------------------

TEST(ConnectionSlots, AnAddressHoldsAtMostItsCapAndGetsSlotsBackAsItsConnectionsEnd) {
  connection_slots slots(3, fixed_key);
  const auto a = v4(0x7f000001u);
  std::vector<connection_slots::ticket> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(slots.open(a));
    ASSERT_TRUE(held.back().held) << i;
  }
  auto refused = slots.open(a);
  EXPECT_FALSE(refused.held) << "the fourth connection of one address";
  EXPECT_EQ(slots.held_by(a), 3u) << "a refusal counts nothing";
  slots.close(refused);  // holds nothing: no-op
  EXPECT_EQ(slots.held_by(a), 3u);
  EXPECT_TRUE(slots.open(v4(0x7f000002u)).held) << "another address is not charged";

  slots.close(held.back());
  held.pop_back();
  EXPECT_EQ(slots.held_by(a), 2u);
  auto again = slots.open(a);
  EXPECT_TRUE(again.held) << "an ended connection frees its address's slot";
  slots.close(again);
  slots.close(again);  // a second close of one ticket gives back nothing more
  EXPECT_EQ(slots.held_by(a), 2u);
}

TEST(ConnectionSlots, AnIpv6Slash64IsOneAddress) {
  connection_slots slots(2, fixed_key);
  EXPECT_TRUE(slots.open(v6(1, 1)).held);
  EXPECT_TRUE(slots.open(v6(1, 2)).held);
  EXPECT_FALSE(slots.open(v6(1, 3)).held) << "every host of one /64 shares its cap";
  EXPECT_TRUE(slots.open(v6(2, 1)).held) << "another /64 is another subscriber";
  EXPECT_EQ(slots.addresses(), 2u);
  EXPECT_EQ(slots.busiest(), 2u);
}

TEST(ConnectionSlots, EntriesExistOnlyWhileConnectionsAreOpen) {
  connection_slots slots(0, fixed_key);  // no cap: only counted
  std::vector<connection_slots::ticket> held;
  for (std::uint32_t i = 0; i < 1000; ++i) held.push_back(slots.open(v4(0x0a000000u + i % 10)));
  for (const auto& t : held) EXPECT_TRUE(t.held);
  EXPECT_EQ(slots.addresses(), 10u);
  EXPECT_EQ(slots.busiest(), 100u);
  for (auto& t : held) slots.close(t);
  EXPECT_EQ(slots.addresses(), 0u) << "an address without connections is forgotten";
  EXPECT_EQ(slots.busiest(), 0u);
}

// -- the request rate ------------------------------------------------------------

TEST(RequestRate, BurstThenRateWithRefusalsNotDelayingTheRefill) {
  // As the gateway builds it: 64 stripes.
  address_buckets rate(10, 5, 4096, fixed_key, rate_limit_stripes);
  EXPECT_EQ(rate.refill_time(), 2s);
  const auto t0 = steady::time_point{} + 1h;
  const auto a = v4(0x7f000001u);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(rate.take(a, t0)) << i;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(rate.take(a, t0 + i * 1ms)) << i;
  // 5 a second: one token per 200 ms, counted from when the burst was
  // spent, whatever was refused meanwhile.
  EXPECT_TRUE(rate.take(a, t0 + 200ms));
  EXPECT_FALSE(rate.take(a, t0 + 300ms));
  EXPECT_TRUE(rate.take(a, t0 + 400ms));
  int after_a_minute = 0;
  while (rate.take(a, t0 + 1min)) ++after_a_minute;
  EXPECT_EQ(after_a_minute, 10) << "never more than the burst";
  EXPECT_TRUE(rate.take(v4(0x7f000002u), t0 + 1min)) << "another address has its own bucket";
}

TEST(RequestRate, AnAttackerRotatingAddressesCannotGrowTheTable) {
  constexpr std::size_t cap = 1024;  // 16 per stripe
  address_buckets rate(5, 1, cap, fixed_key, rate_limit_stripes);
  EXPECT_EQ(rate.capacity(), cap);
  const auto t0 = steady::time_point{} + 1h;
  // A million addresses within one second: nothing expires, the oldest
  // give way, and the table never passes its bound.
  for (std::uint32_t i = 0; i < 1000000; ++i) {
    ASSERT_TRUE(rate.take(v4(0x0b000000u + i), t0)) << "a new address always has its burst";
    if (i % 4096 == 0) {
      ASSERT_LE(rate.tracked(), cap);
    }
  }
  EXPECT_LE(rate.tracked(), cap);
  // IPv6 rotation inside one /64 is one address: no growth at all.
  address_buckets six(5, 1, cap, fixed_key, rate_limit_stripes);
  int granted = 0;
  for (std::uint8_t h = 0; h < 200; ++h) granted += six.take(v6(7, h), t0) ? 1 : 0;
  EXPECT_EQ(granted, 5);
  EXPECT_EQ(six.tracked(), 1u);
}

TEST(RequestRate, SilentAddressesExpire) {
  address_buckets rate(4, 2, 4096, fixed_key, rate_limit_stripes);  // refilled in 2 s
  const auto t0 = steady::time_point{} + 1h;
  for (std::uint32_t i = 0; i < 500; ++i) ASSERT_TRUE(rate.take(v4(0x0c000000u + i), t0));
  EXPECT_EQ(rate.tracked(), 500u);
  // Newcomers after the refill time drop up to two expired entries of
  // their stripe each: most of the silent ones make room (a stripe that
  // got fewer newcomers than half its old entries keeps the rest until its
  // next inserts).
  for (std::uint32_t i = 0; i < 500; ++i) ASSERT_TRUE(rate.take(v4(0x0d000000u + i), t0 + 3s));
  EXPECT_LT(rate.tracked(), 600u) << "the silent ones made room";
  for (std::uint32_t i = 0; i < 2000; ++i) ASSERT_TRUE(rate.take(v4(0x0e000000u + i), t0 + 6s));
  EXPECT_EQ(rate.tracked(), 2000u) << "everything older than a refill time is gone";
}

TEST(RequestRate, TheKeyDependsOnTheSecretAndTheSubscriber) {
  const siphash_key other = {16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_NE(address_key(fixed_key, v4(0x7f000001u)), address_key(other, v4(0x7f000001u)));
  EXPECT_EQ(address_key(fixed_key, v6(3, 1)), address_key(fixed_key, v6(3, 99)));
  EXPECT_NE(address_key(fixed_key, v6(3, 1)), address_key(fixed_key, v6(4, 1)));
  EXPECT_EQ(subscriber_text(v6(3, 1)), "2001:db8:0:3::/64");
  EXPECT_EQ(subscriber_text(v4(0x7f000001u)), "127.0.0.1");
}

// -- once per episode -----------------------------------------------------------

TEST(LimitLatch, TheFirstHitOfAnEpisodeIsTheOnlyOneToLog) {
  limit_latch latch;
  const auto t0 = steady::time_point{} + 1h;
  EXPECT_FALSE(latch.reached());
  EXPECT_FALSE(latch.settle(t0, 30s)) << "nothing to end";
  EXPECT_TRUE(latch.hit(t0));
  int logged = 0;
  for (int i = 1; i <= 10000; ++i) logged += latch.hit(t0 + i * 1ms) ? 1 : 0;
  EXPECT_EQ(logged, 0) << "a long flood logs once";
  EXPECT_TRUE(latch.reached());
  EXPECT_FALSE(latch.settle(t0 + 30s, 30s)) << "the last hit was 10 s ago";
  EXPECT_TRUE(latch.settle(t0 + 10s + 30s, 30s));
  EXPECT_FALSE(latch.reached());
  EXPECT_FALSE(latch.settle(t0 + 1h, 30s)) << "ended once";
  EXPECT_TRUE(latch.hit(t0 + 1h)) << "a new episode logs again";
}

}  // namespace
}  // namespace sk
