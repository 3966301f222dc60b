// peer_table without CAF: every call gets its time from the test.

#include "tracker/peer_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "tracker/swarm_config.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using test::at;
using test::compact;
using test::pid;
using test::v4;
using test::v6;
using change = peer_table::change;
constexpr auto none = announce_event::none;
constexpr auto started = announce_event::started;
constexpr auto completed = announce_event::completed;
constexpr auto stopped = announce_event::stopped;

/// Splits a compact string into its entries of `width` bytes.
std::vector<std::string> entries_of(const std::string& s, std::size_t width) {
  EXPECT_EQ(s.size() % width, 0u);
  std::vector<std::string> out;
  for (std::size_t i = 0; i + width <= s.size(); i += width) {
    out.push_back(s.substr(i, width));
  }
  return out;
}

TEST(PeerTable, NewPeerIsAddedAndReannounceFromSameAddressUpdatesIt) {
  peer_table t(1);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 6881), 100, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 7000), 100, none, at(10)), change::updated);
  EXPECT_EQ(t.size(), 1u);
  endpoint ep;
  ASSERT_TRUE(t.find({pid(1), v4(10, 0, 0, 1, 0).ip}, ep));
  EXPECT_EQ(ep.port, 7000);
  // The ready-made compact bytes follow the port change.
  t.announce(pid(2), v4(10, 0, 0, 2, 6881), 100, started, at(10));
  std::string p4, p6;
  EXPECT_EQ(t.select_compact({pid(2), v4(10, 0, 0, 2, 0).ip}, 50, p4, p6), 1u);
  EXPECT_EQ(p4, compact(v4(10, 0, 0, 1, 7000)));
  EXPECT_TRUE(p6.empty());
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTable, SamePeerIdFromAnotherAddressIsAnotherPeer) {
  peer_table t(1);
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 100, started, at(0));
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 9, 6881), 100, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(1), v6(0, 1, 6881), 100, started, at(0)), change::added);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.leechers(), 3u);
  EXPECT_EQ(t.ipv4_count(), 2u);
  EXPECT_EQ(t.ipv6_count(), 1u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTable, StoppedRemovesKnownPeerAndIgnoresUnknown) {
  peer_table t(1);
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, started, at(0));
  t.announce(pid(2), v4(10, 0, 0, 2, 6881), 5, started, at(0));
  EXPECT_EQ(t.announce(pid(3), v4(10, 0, 0, 3, 6881), 5, stopped, at(1)), change::ignored);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, stopped, at(1)), change::removed);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_FALSE(t.contains({pid(1), v4(10, 0, 0, 1, 0).ip}));
  EXPECT_TRUE(t.contains({pid(2), v4(10, 0, 0, 2, 0).ip}));
  EXPECT_EQ(t.stats().complete, 0);
  EXPECT_EQ(t.stats().incomplete, 1);
  // Stopped from the right id but another address removes nothing.
  EXPECT_EQ(t.announce(pid(2), v4(10, 0, 0, 7, 6881), 5, stopped, at(2)), change::ignored);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTable, CompletedCountsOncePerPeer) {
  peer_table t(1);
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 10, started, at(0));
  EXPECT_EQ(t.downloaded(), 0u);
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, completed, at(1));
  EXPECT_EQ(t.downloaded(), 1u);
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, completed, at(2));  // again: no change
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, none, at(3));
  EXPECT_EQ(t.downloaded(), 1u);
  // A peer first seen with `completed` (e.g. after a tracker restart) counts.
  EXPECT_EQ(t.announce(pid(2), v4(10, 0, 0, 2, 6881), 0, completed, at(4)), change::added);
  EXPECT_EQ(t.downloaded(), 2u);
  t.announce(pid(2), v4(10, 0, 0, 2, 6881), 0, completed, at(5));
  EXPECT_EQ(t.downloaded(), 2u);
  // Completions stay counted after the peers leave.
  t.announce(pid(1), v4(10, 0, 0, 1, 6881), 0, stopped, at(6));
  EXPECT_EQ(t.stats().downloaded, 2);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTable, SeederAndLeecherCountsAreExactThroughTransitions) {
  peer_table t(1);
  auto expect_counts = [&](std::int64_t seeders, std::int64_t leechers) {
    EXPECT_EQ(t.stats().complete, seeders);
    EXPECT_EQ(t.stats().incomplete, leechers);
    EXPECT_TRUE(t.check_invariants());
  };
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 100, started, at(0));
  t.announce(pid(2), v4(10, 0, 0, 2, 1), 100, started, at(0));
  t.announce(pid(3), v6(0, 3, 1), 0, started, at(0));
  expect_counts(1, 2);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 50, none, at(1));  // progress, still leecher
  expect_counts(1, 2);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 0, completed, at(2));  // leecher -> seeder
  expect_counts(2, 1);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 0, none, at(3));  // seeder stays seeder
  expect_counts(2, 1);
  t.announce(pid(3), v6(0, 3, 1), 7, none, at(4));  // seeder -> leecher (re-check)
  expect_counts(1, 2);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 0, stopped, at(5));  // seeder leaves
  expect_counts(0, 2);
  t.announce(pid(2), v4(10, 0, 0, 2, 1), 100, stopped, at(5));  // leecher leaves
  expect_counts(0, 1);
  t.sweep(at(10000), std::chrono::seconds(100), 100);  // the last one expires
  expect_counts(0, 0);
  EXPECT_TRUE(t.empty());
}

TEST(PeerTable, PeerExpiresExactlyAtTimeout) {
  peer_table t(1);
  const auto timeout = std::chrono::seconds(100);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 1, started, at(0));
  t.announce(pid(2), v4(10, 0, 0, 2, 1), 1, started, at(50));
  auto r = t.sweep(at(99), timeout, 10);
  EXPECT_EQ(r.examined, 2u);
  EXPECT_EQ(r.expired, 0u);
  EXPECT_TRUE(r.cycle_done);
  r = t.sweep(at(100), timeout, 10);
  EXPECT_EQ(r.expired, 1u);
  EXPECT_FALSE(t.contains({pid(1), v4(10, 0, 0, 1, 0).ip}));
  // A re-announce refreshes: peer 2 seen at 120 survives 149 and 219.
  t.announce(pid(2), v4(10, 0, 0, 2, 1), 1, none, at(120));
  EXPECT_EQ(t.sweep(at(219), timeout, 10).expired, 0u);
  EXPECT_EQ(t.sweep(at(220), timeout, 10).expired, 1u);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.leechers(), 0u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTable, SweepExaminesAtMostBudgetPeersPerCall) {
  peer_table t(1);
  const auto timeout = std::chrono::seconds(100);
  // 1000 peers: even-numbered announced at 0 (stale at 150), odd at 100.
  for (std::uint32_t i = 0; i < 1000; ++i) {
    t.announce(pid(i),
               v4(10, 1, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i), 1), 1,
               started, at(i % 2 == 0 ? 0 : 100));
  }
  std::size_t calls = 0;
  std::size_t examined = 0;
  std::size_t expired = 0;
  for (;;) {
    auto r = t.sweep(at(150), timeout, 64);
    ++calls;
    EXPECT_LE(r.examined, 64u);
    examined += r.examined;
    expired += r.expired;
    EXPECT_TRUE(t.check_invariants());
    if (r.cycle_done) {
      break;
    }
    ASSERT_LT(calls, 100u) << "sweep never finished its cycle";
  }
  EXPECT_EQ(examined, 1000u);  // every peer examined exactly once
  EXPECT_EQ(expired, 500u);
  EXPECT_EQ(calls, 16u);  // ceil(1000 / 64)
  EXPECT_EQ(t.size(), 500u);
  EXPECT_EQ(t.leechers(), 500u);
  // The next cycle starts over and finds nothing more to expire.
  auto r = t.sweep(at(150), timeout, 10000);
  EXPECT_EQ(r.examined, 500u);
  EXPECT_EQ(r.expired, 0u);
  EXPECT_TRUE(r.cycle_done);
}

TEST(PeerTable, SweepOfEmptyTableFinishesAtOnce) {
  peer_table t(1);
  auto r = t.sweep(at(0), std::chrono::seconds(1), 10);
  EXPECT_EQ(r.examined, 0u);
  EXPECT_TRUE(r.cycle_done);
}

TEST(PeerTable, RequesterIsNeverReturned) {
  for (int v6_requester = 0; v6_requester < 2; ++v6_requester) {
    peer_table t(7);
    for (std::uint8_t i = 0; i < 4; ++i) {
      t.announce(pid(i), v4(10, 0, 0, i, 1000 + i), 1, started, at(0));
    }
    for (std::uint8_t i = 0; i < 4; ++i) {
      t.announce(pid(10 + i), v6(0, i, 2000 + i), 1, started, at(0));
    }
    const endpoint me = v6_requester ? v6(0, 2, 2002) : v4(10, 0, 0, 2, 1002);
    const peer_id my_id = v6_requester ? pid(12) : pid(2);
    const std::string mine = compact(me);
    for (int round = 0; round < 500; ++round) {
      std::string p4, p6;
      EXPECT_EQ(t.select_compact({my_id, me.ip}, 50, p4, p6), 7u);
      for (auto& e : entries_of(p4, 6)) {
        ASSERT_NE(e, mine);
      }
      for (auto& e : entries_of(p6, 18)) {
        ASSERT_NE(e, mine);
      }
      std::vector<peer_entry> entries;
      EXPECT_EQ(t.select_entries({my_id, me.ip}, 3, entries), 3u);
      for (auto& e : entries) {
        ASSERT_FALSE(e.id == my_id && e.ep.ip == me.ip);
      }
    }
  }
}

TEST(PeerTable, SamePeerIdAtAnotherAddressIsNotTheRequester) {
  // The requester is (id, address): its twin id at another address is
  // another peer and may be returned, the requester itself never.
  peer_table t(3);
  const endpoint me = v4(10, 0, 0, 2, 2);
  const endpoint twin = v4(10, 0, 0, 1, 1);
  t.announce(pid(1), me, 1, started, at(0));
  t.announce(pid(2), v4(10, 0, 0, 3, 3), 1, started, at(0));
  t.announce(pid(1), twin, 1, started, at(0));  // last touched: the twin
  for (int round = 0; round < 50; ++round) {
    std::string p4, p6;
    ASSERT_EQ(t.select_compact({pid(1), me.ip}, 50, p4, p6), 2u);
    auto got = entries_of(p4, 6);
    ASSERT_EQ(std::count(got.begin(), got.end(), compact(me)), 0);
    ASSERT_EQ(std::count(got.begin(), got.end(), compact(twin)), 1);
  }
}

TEST(PeerTable, LonePeerGetsNobody) {
  peer_table t(1);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 1, started, at(0));
  std::string p4, p6;
  EXPECT_EQ(t.select_compact({pid(1), v4(10, 0, 0, 1, 1).ip}, 50, p4, p6), 0u);
  EXPECT_TRUE(p4.empty());
  EXPECT_TRUE(p6.empty());
}

TEST(PeerTable, UnknownRequesterMayGetEveryone) {
  peer_table t(1);
  for (std::uint8_t i = 0; i < 5; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 1), 1, started, at(0));
  }
  std::string p4, p6;
  EXPECT_EQ(t.select_compact({pid(99), v4(10, 0, 0, 99, 1).ip}, 50, p4, p6), 5u);
  auto got = entries_of(p4, 6);
  std::set<std::string> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct.size(), 5u);
}

TEST(PeerTable, NumwantIsHonouredCappedAndDefaulted) {
  swarm_config cfg;  // default 50, cap 50
  peer_table t(3);
  for (std::uint32_t i = 0; i < 200; ++i) {
    t.announce(pid(i),
               v4(10, 2, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i), 1), 1,
               started, at(0));
  }
  const peer_key me{pid(0), v4(10, 2, 0, 0, 1).ip};
  auto count_for = [&](std::int32_t numwant) {
    std::string p4, p6;
    const std::size_t n = t.select_compact(me, cfg.resolve_numwant(numwant), p4, p6);
    EXPECT_EQ(p4.size(), 6 * n);
    auto got = entries_of(p4, 6);
    EXPECT_EQ(std::set<std::string>(got.begin(), got.end()).size(), n) << "duplicates";
    return n;
  };
  EXPECT_EQ(count_for(10), 10u);
  EXPECT_EQ(count_for(0), 0u);
  EXPECT_EQ(count_for(-1), 50u);    // not given: default
  EXPECT_EQ(count_for(1000), 50u);  // capped
  cfg.default_numwant = 30;
  cfg.max_numwant = 80;
  EXPECT_EQ(count_for(-1), 30u);
  EXPECT_EQ(count_for(75), 75u);
  EXPECT_EQ(count_for(81), 80u);
  // Fewer others than wanted: all 199 others at most.
  cfg.max_numwant = 10000;
  EXPECT_EQ(count_for(500), 199u);
}

TEST(PeerTable, CompactRepliesSplitIpv4AndIpv6WithExactBytes) {
  peer_table t(5);
  const endpoint a = v4(192, 168, 1, 10, 6881);
  const endpoint b = v4(172, 16, 0, 1, 51413);
  const endpoint c = v6(0xab, 0xcd, 443);
  const endpoint me = v4(10, 0, 0, 1, 1);
  t.announce(pid(1), a, 0, started, at(0));
  t.announce(pid(2), b, 1, started, at(0));
  t.announce(pid(3), c, 1, started, at(0));
  t.announce(pid(4), me, 1, started, at(0));
  std::string p4, p6;
  EXPECT_EQ(t.select_compact({pid(4), me.ip}, 50, p4, p6), 3u);
  auto got4 = entries_of(p4, 6);
  std::sort(got4.begin(), got4.end());
  std::vector<std::string> want4{compact(a), compact(b)};
  std::sort(want4.begin(), want4.end());
  EXPECT_EQ(got4, want4);
  ASSERT_EQ(p6, compact(c));
  // 2001:db8::abcd, port 443, exactly as BEP 7 lays it out.
  const std::string bep7("\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\xab\xcd\x01\xbb", 18);
  EXPECT_EQ(p6, bep7);
  EXPECT_EQ(compact(a), std::string("\xc0\xa8\x01\x0a\x1a\xe1", 6));
}

TEST(PeerTable, NonCompactSelectionCarriesIdsAndEndpoints) {
  peer_table t(5);
  std::map<std::string, endpoint> announced;
  for (std::uint8_t i = 1; i <= 3; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 6880 + i), 1, started, at(0));
    announced[std::string(pid(i).view())] = v4(10, 0, 0, i, 6880 + i);
  }
  t.announce(pid(4), v6(0, 4, 6884), 1, started, at(0));
  announced[std::string(pid(4).view())] = v6(0, 4, 6884);
  std::vector<peer_entry> out;
  EXPECT_EQ(t.select_entries({pid(1), v4(10, 0, 0, 1, 0).ip}, 50, out), 3u);
  ASSERT_EQ(out.size(), 3u);
  std::set<std::string> ids;
  for (auto& e : out) {
    auto it = announced.find(std::string(e.id.view()));
    ASSERT_NE(it, announced.end());
    EXPECT_EQ(e.ep, it->second);
    ids.insert(std::string(e.id.view()));
  }
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.count(std::string(pid(1).view())), 0u);
}

TEST(PeerTable, FullTableRejectsNewPeersButKeepsServingKnownOnes) {
  peer_table t(1, 2);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 1), 1, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(2), v4(10, 0, 0, 2, 1), 1, started, at(0)), change::added);
  EXPECT_EQ(t.announce(pid(3), v4(10, 0, 0, 3, 1), 1, started, at(0)), change::rejected);
  EXPECT_EQ(t.announce(pid(1), v4(10, 0, 0, 1, 1), 0, none, at(1)), change::updated);
  EXPECT_EQ(t.size(), 2u);
  std::string p4, p6;
  EXPECT_EQ(t.select_compact({pid(3), v4(10, 0, 0, 3, 1).ip}, 50, p4, p6), 2u);
  t.announce(pid(2), v4(10, 0, 0, 2, 1), 1, stopped, at(2));
  EXPECT_EQ(t.announce(pid(3), v4(10, 0, 0, 3, 1), 1, started, at(2)), change::added);
}

TEST(PeerTable, LargeSwarmSampleIsDistinct) {
  peer_table t(11);
  for (std::uint32_t i = 0; i < 100000; ++i) {
    t.announce(pid(i),
               v4(10, static_cast<std::uint8_t>(i >> 16), static_cast<std::uint8_t>(i >> 8),
                  static_cast<std::uint8_t>(i), 1),
               1, started, at(0));
  }
  for (int round = 0; round < 100; ++round) {
    std::string p4, p6;
    ASSERT_EQ(t.select_compact({pid(5), v4(10, 0, 0, 5, 1).ip}, 200, p4, p6), 200u);
    auto got = entries_of(p4, 6);
    ASSERT_EQ(std::set<std::string>(got.begin(), got.end()).size(), 200u);
    ASSERT_EQ(std::count(got.begin(), got.end(), compact(v4(10, 0, 0, 5, 1))), 0);
  }
}

/// Pearson's chi-square of observed counts against equal expectation.
double chi_square(const std::map<std::string, int>& counts, std::size_t categories, int total) {
  const double expected = static_cast<double>(total) / static_cast<double>(categories);
  double chi = 0;
  for (auto& kv : counts) {
    chi += (kv.second - expected) * (kv.second - expected) / expected;
  }
  // Categories never seen contribute `expected` each.
  chi += static_cast<double>(categories - counts.size()) * expected;
  return chi;
}

// Statistical tests: fixed seeds, so they are deterministic; the bounds sit
// far in the tail (p < 1e-6 for a correct sampler), while a biased sampler
// (e.g. one that never picks the slot after the requester, or splits the
// families 50/50) lands far beyond them.

TEST(PeerTableUniformity, EachOtherPeerIsPickedEquallyOften) {
  peer_table t(20240601);
  for (std::uint8_t i = 0; i < 20; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 1), 1, started, at(0));
  }
  const peer_key me{pid(7), v4(10, 0, 0, 7, 1).ip};  // requester mid-table
  const int trials = 20000;
  std::map<std::string, int> counts;
  for (int i = 0; i < trials; ++i) {
    std::string p4, p6;
    t.select_compact(me, 5, p4, p6);
    for (auto& e : entries_of(p4, 6)) {
      ++counts[e];
    }
  }
  EXPECT_EQ(counts.size(), 19u);
  EXPECT_EQ(counts.count(compact(v4(10, 0, 0, 7, 1))), 0u);
  // 18 degrees of freedom: p = 1e-6 at about 61.9.
  EXPECT_LT(chi_square(counts, 19, trials * 5), 61.9);
}

/// Counts how often each unordered pair is drawn with numwant 2.
std::map<std::string, int> pair_counts(peer_table& t, const peer_key& me, int trials) {
  std::map<std::string, int> counts;
  for (int i = 0; i < trials; ++i) {
    std::string p4, p6;
    EXPECT_EQ(t.select_compact(me, 2, p4, p6), 2u);
    auto got = entries_of(p4, 6);
    for (auto& e : entries_of(p6, 18)) {
      got.push_back(e);
    }
    EXPECT_EQ(got.size(), 2u);
    std::sort(got.begin(), got.end());
    ++counts[got[0] + got[1]];
  }
  return counts;
}

TEST(PeerTableUniformity, EveryPairIsEquallyLikelyWhereverTheRequesterSits) {
  // 6 peers, requester excluded: C(5,2) = 10 pairs. Moving the requester
  // across slots checks the slot remapping around it.
  for (std::uint8_t me_index : {0, 2, 5}) {
    peer_table t(99 + me_index);
    for (std::uint8_t i = 0; i < 6; ++i) {
      t.announce(pid(i), v4(10, 0, 0, i, 1), 1, started, at(0));
    }
    const int trials = 20000;
    auto counts = pair_counts(t, {pid(me_index), v4(10, 0, 0, me_index, 1).ip}, trials);
    EXPECT_EQ(counts.size(), 10u) << "requester " << int(me_index);
    // 9 degrees of freedom: p = 1e-6 at about 44.8.
    EXPECT_LT(chi_square(counts, 10, trials), 44.8) << "requester " << int(me_index);
  }
}

TEST(PeerTableUniformity, PairsAcrossFamiliesAreEquallyLikely) {
  // Requester v4 + 2 v4 + 4 v6 others: C(6,2) = 15 pairs, of which 1 is
  // v4-v4, 8 mixed and 6 v6-v6. A 50/50 family split would give the v4-v4
  // pair ~4x its share.
  peer_table t(4242);
  t.announce(pid(0), v4(10, 0, 0, 0, 1), 1, started, at(0));
  for (std::uint8_t i = 1; i <= 2; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 1), 1, started, at(0));
  }
  for (std::uint8_t i = 3; i <= 6; ++i) {
    t.announce(pid(i), v6(0, i, 1), 1, started, at(0));
  }
  const int trials = 30000;
  auto counts = pair_counts(t, {pid(0), v4(10, 0, 0, 0, 1).ip}, trials);
  EXPECT_EQ(counts.size(), 15u);
  // 14 degrees of freedom: p = 1e-6 at about 54.6.
  EXPECT_LT(chi_square(counts, 15, trials), 54.6);
}

TEST(PeerTableUniformity, SameSeedSameSelection) {
  auto run = [](std::uint64_t seed) {
    peer_table t(seed);
    for (std::uint8_t i = 0; i < 50; ++i) {
      t.announce(pid(i), v4(10, 0, 0, i, 1), 1, started, at(0));
    }
    std::string p4, p6;
    t.select_compact({pid(0), v4(10, 0, 0, 0, 1).ip}, 10, p4, p6);
    return p4;
  };
  EXPECT_EQ(run(5), run(5));
  EXPECT_NE(run(5), run(6));
}

// Random operations against a simple reference model (std::map), checking
// counts and internal cross-references after every step.
TEST(PeerTable, RandomOperationsMatchReferenceModel) {
  struct ref_peer {
    std::uint16_t port;
    bool seeder;
    bool completed;
    std::int64_t last_seen;
  };
  const std::uint64_t seed = 0x5eed;
  SCOPED_TRACE("seed " + std::to_string(seed));
  fast_rng rng(seed);
  peer_table t(seed);
  std::map<std::tuple<int, int>, ref_peer> ref;  // (peer number, address number)
  std::int64_t downloaded = 0;
  std::int64_t now = 0;
  const std::int64_t timeout = 300;
  auto address = [](int a) {
    return a % 3 == 0 ? v6(0, static_cast<std::uint8_t>(a), 0)
                      : v4(10, 9, 0, static_cast<std::uint8_t>(a), 0);
  };
  for (int step = 0; step < 20000; ++step) {
    now += rng.below(5);
    const int op = static_cast<int>(rng.below(100));
    if (op < 90) {
      const int p = static_cast<int>(rng.below(60));
      const int a = static_cast<int>(rng.below(8));
      endpoint ep = address(a);
      ep.port = static_cast<std::uint16_t>(1 + rng.below(3));
      const std::uint64_t left = rng.below(3) == 0 ? 0 : 1 + rng.below(100);
      const auto ev = static_cast<announce_event>(rng.below(4));
      const auto c = t.announce(pid(static_cast<std::uint64_t>(p)), ep, left, ev, at(now));
      auto key = std::make_tuple(p, a);
      auto it = ref.find(key);
      // One id has at most default_max_addresses_per_id addresses per family.
      std::size_t same_family = 0;
      for (const auto& kv : ref) {
        const int other = std::get<1>(kv.first);
        same_family += std::get<0>(kv.first) == p && (other % 3 == 0) == (a % 3 == 0);
      }
      if (it == ref.end() && ev != announce_event::stopped &&
          same_family >= peer_table::default_max_addresses_per_id) {
        ASSERT_EQ(c, peer_table::change::rejected) << "step " << step;
      } else if (ev == announce_event::stopped) {
        if (it != ref.end()) {
          ref.erase(it);
        }
      } else if (it == ref.end()) {
        ref[key] = {ep.port, left == 0, ev == announce_event::completed, now};
        if (ev == announce_event::completed) {
          ++downloaded;
        }
      } else {
        it->second.port = ep.port;
        it->second.seeder = left == 0;
        it->second.last_seen = now;
        if (ev == announce_event::completed && !it->second.completed) {
          it->second.completed = true;
          ++downloaded;
        }
      }
    } else if (op < 95) {
      // A full sweep cycle in small steps.
      for (int guard = 0;; ++guard) {
        ASSERT_LT(guard, 1000);
        if (t.sweep(at(now), std::chrono::seconds(timeout), 1 + rng.below(7)).cycle_done) {
          break;
        }
      }
      for (auto it = ref.begin(); it != ref.end();) {
        if (now - it->second.last_seen >= timeout) {
          it = ref.erase(it);
        } else {
          ++it;
        }
      }
    } else {
      // Selection never returns the requester nor duplicates.
      const int p = static_cast<int>(rng.below(60));
      const int a = static_cast<int>(rng.below(8));
      std::vector<peer_entry> out;
      const std::size_t want = rng.below(20);
      const auto me = address(a);
      const std::size_t got =
          t.select_entries({pid(static_cast<std::uint64_t>(p)), me.ip}, want, out);
      const std::size_t others = ref.size() - ref.count(std::make_tuple(p, a));
      ASSERT_EQ(got, std::min(want, others));
      for (auto& e : out) {
        ASSERT_FALSE(e.id == pid(static_cast<std::uint64_t>(p)) && e.ep.ip == me.ip);
      }
    }
    std::int64_t seeders = 0;
    for (auto& kv : ref) {
      seeders += kv.second.seeder;
    }
    ASSERT_EQ(t.size(), ref.size()) << "step " << step;
    ASSERT_EQ(t.stats().complete, seeders) << "step " << step;
    ASSERT_EQ(t.stats().incomplete, static_cast<std::int64_t>(ref.size()) - seeders)
        << "step " << step;
    ASSERT_EQ(t.stats().downloaded, downloaded) << "step " << step;
    ASSERT_TRUE(t.check_invariants()) << "step " << step;
  }
}

// -- traits, quarantine, family filter (self-healing layer) -------------------

TEST(PeerTableTraits, AnnounceExExposesTheTouchedRecordsTraits) {
  peer_table t(1);
  auto [c1, tr1] = t.announce_ex(pid(1), v4(10, 0, 0, 1, 6881), 100, started, at(0));
  ASSERT_EQ(c1, change::added);
  ASSERT_NE(tr1, nullptr);
  EXPECT_EQ(tr1->announces, 0u);  // fresh: the table writes no trait itself
  EXPECT_EQ(tr1->flags, 0);
  tr1->announces = 1;
  tr1->set(flag_stalled);
  tr1->key = "k1";
  auto [c2, tr2] = t.announce_ex(pid(1), v4(10, 0, 0, 1, 6881), 50, none, at(10));
  ASSERT_EQ(c2, change::updated);
  EXPECT_EQ(tr2->announces, 1u);
  EXPECT_TRUE(tr2->has(flag_stalled));
  EXPECT_EQ(tr2->key, "k1");
  // Leaving: the caller still sees what the peer was.
  auto [c3, tr3] = t.announce_ex(pid(1), v4(10, 0, 0, 1, 6881), 50, stopped, at(20));
  ASSERT_EQ(c3, change::removed);
  ASSERT_EQ(tr3, &t.last_removed());
  EXPECT_EQ(tr3->key, "k1");
  EXPECT_TRUE(tr3->has(flag_stalled));
  // Unknown stop and full table give nothing.
  EXPECT_EQ(t.announce_ex(pid(1), v4(10, 0, 0, 1, 6881), 50, stopped, at(21)).second, nullptr);
  peer_table full(1, 1);
  full.announce(pid(1), v4(10, 0, 0, 1, 1), 0, started, at(0));
  EXPECT_EQ(full.announce_ex(pid(2), v4(10, 0, 0, 2, 1), 0, started, at(0)),
            std::make_pair(change::rejected, static_cast<peer_traits*>(nullptr)));
  // Coming back: reset traits.
  auto [c4, tr4] = t.announce_ex(pid(1), v4(10, 0, 0, 1, 6881), 50, started, at(30));
  ASSERT_EQ(c4, change::added);
  EXPECT_EQ(tr4->announces, 0u);
  EXPECT_FALSE(tr4->has(flag_stalled));
  EXPECT_TRUE(tr4->key.empty());
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTableTraits, TraitsLookupAndForEach) {
  peer_table t(1);
  t.announce(pid(1), v4(10, 0, 0, 1, 1), 0, started, at(0));
  t.announce(pid(2), v6(0, 2, 2), 10, started, at(0));
  t.announce(pid(3), v4(10, 0, 0, 3, 3), 10, started, at(0));
  EXPECT_EQ(t.traits(peer_key{pid(9), v4(10, 0, 0, 9, 9).ip}), nullptr);
  t.traits(peer_key{pid(2), v6(0, 2, 2).ip})->uploaded = 77;
  const peer_table& ct = t;
  EXPECT_EQ(ct.traits(peer_key{pid(2), v6(0, 2, 2).ip})->uploaded, 77u);
  EXPECT_TRUE(t.is_seeder(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip}));
  EXPECT_FALSE(t.is_seeder(peer_key{pid(2), v6(0, 2, 2).ip}));
  std::map<std::string, std::tuple<bool, std::uint64_t>> seen;
  ct.for_each([&](const peer_key& k, const endpoint& ep, bool seeder, const peer_traits& tr) {
    EXPECT_EQ(k.ip, ep.ip);
    seen[compact(ep)] = std::make_tuple(seeder, tr.uploaded);
  });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[compact(v4(10, 0, 0, 1, 1))], std::make_tuple(true, std::uint64_t{0}));
  EXPECT_EQ(seen[compact(v6(0, 2, 2))], std::make_tuple(false, std::uint64_t{77}));
  EXPECT_EQ(seen[compact(v4(10, 0, 0, 3, 3))], std::make_tuple(false, std::uint64_t{0}));
}

TEST(PeerTableTraits, SweepReportsEachExpiredPeer) {
  peer_table t(1);
  for (std::uint8_t i = 0; i < 10; ++i) {
    auto [c, tr] = t.announce_ex(pid(i), v4(10, 0, 0, i, 1), i % 2 == 0 ? 0 : 5, started,
                                 at(i < 6 ? 0 : 100));
    ASSERT_EQ(c, change::added);
    tr->strikes = i;
  }
  std::map<std::uint32_t, bool> expired;  // strikes -> seeder
  peer_table::sweep_result r;
  do {
    r = t.sweep(at(200), std::chrono::seconds(150), 3,
                [&](const peer_key& k, bool seeder, const peer_traits& tr) {
                  EXPECT_EQ(k.id, pid(tr.strikes));
                  expired[tr.strikes] = seeder;
                });
  } while (!r.cycle_done);
  EXPECT_EQ(expired, (std::map<std::uint32_t, bool>{
                         {0, true}, {1, false}, {2, true}, {3, false}, {4, true}, {5, false}}));
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.seeders(), 2u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTableQuarantine, QuarantinedPeersLeaveSelectionButStayCounted) {
  peer_table t(3);
  for (std::uint8_t i = 0; i < 20; ++i) {
    t.announce(pid(i), i % 2 == 0 ? v4(10, 0, 0, i, 1) : v6(0, i, 1), i < 5 ? 0 : 9, started,
               at(0));
  }
  std::set<std::string> banned;
  for (std::uint8_t i = 0; i < 20; i += 3) {
    const endpoint ep = i % 2 == 0 ? v4(10, 0, 0, i, 1) : v6(0, i, 1);
    t.traits(peer_key{pid(i), ep.ip})->set(flag_quarantined);
    banned.insert(compact(ep));
  }
  t.sync();
  EXPECT_TRUE(t.check_invariants());
  EXPECT_EQ(t.quarantined_count(), banned.size());
  EXPECT_EQ(t.size(), 20u);
  EXPECT_EQ(t.seeders(), 5u);
  EXPECT_EQ(t.leechers(), 15u);
  const peer_key me{pid(1), v6(0, 1, 1).ip};
  for (int r = 0; r < 50; ++r) {
    std::string p4, p6;
    EXPECT_EQ(t.select_compact(me, 100, p4, p6), 20 - banned.size() - 1);
    for (auto& e : entries_of(p4, 6)) EXPECT_EQ(banned.count(e), 0u);
    for (auto& e : entries_of(p6, 18)) EXPECT_EQ(banned.count(e), 0u);
  }
  // A stopped / expired quarantined peer leaves cleanly; release the rest.
  t.announce(pid(0), v4(10, 0, 0, 0, 1), 0, stopped, at(1));
  EXPECT_EQ(t.seeders(), 4u);
  t.for_each_mut([](const peer_key&, const endpoint&, bool, peer_traits& tr) {
    tr.set(flag_quarantined, false);
  });
  std::string p4, p6;
  EXPECT_EQ(t.select_compact(me, 100, p4, p6), 18u);
  EXPECT_EQ(t.quarantined_count(), 0u);
  EXPECT_TRUE(t.check_invariants());
}

TEST(PeerTableQuarantine, QuarantinedRequesterIsStillNotReturnedToItself) {
  peer_table t(3);
  for (std::uint8_t i = 0; i < 5; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 1), 9, started, at(0));
  }
  const peer_key me{pid(2), v4(10, 0, 0, 2, 1).ip};
  t.traits(me)->set(flag_quarantined);
  std::vector<peer_entry> out;
  EXPECT_EQ(t.select_entries(me, 10, out), 4u);
  for (auto& e : out) EXPECT_NE(e.id, pid(2));
}

TEST(PeerTableFamily, FilterReturnsUpToNOfOneFamily) {
  peer_table t(5);
  for (std::uint8_t i = 0; i < 100; ++i) {
    t.announce(pid(i), i < 10 ? v4(10, 0, 0, i, 1) : v6(0, i, 1), 9, started, at(0));
  }
  const peer_key me{pid(0), v4(10, 0, 0, 0, 1).ip};
  std::string p4, p6;
  EXPECT_EQ(t.select_compact(me, 5, p4, p6, family_filter::v4_only), 5u);
  EXPECT_EQ(p4.size(), 30u);
  EXPECT_TRUE(p6.empty());
  p4.clear();
  EXPECT_EQ(t.select_compact(me, 50, p4, p6, family_filter::v4_only), 9u);  // all but me
  EXPECT_TRUE(p6.empty());
  p4.clear();
  EXPECT_EQ(t.select_compact(me, 50, p4, p6, family_filter::v6_only), 50u);
  EXPECT_TRUE(p4.empty());
  EXPECT_EQ(p6.size(), 50u * 18);
  std::vector<peer_entry> out;
  EXPECT_EQ(t.select_entries(me, 30, out, family_filter::v6_only), 30u);
  for (auto& e : out) EXPECT_TRUE(e.ep.ip.v6);
}

// Random announces, role flips, port changes, stops, quarantine toggles
// (some written through announce_ex, some through traits(), some through
// for_each_mut), sweeps and filtered selections against a reference model.
TEST(PeerTableQuarantine, RandomOperationsKeepPartitionPoolsAndCounts) {
  fast_rng rng(20261129);
  peer_table t(9);
  struct model_peer {
    bool seeder;
    bool quarantined;
    std::int64_t seen;
  };
  std::map<std::pair<int, bool>, model_peer> ref;  // (n, v6) -> peer
  auto ep_of = [](int n, bool ipv6, std::uint16_t port) {
    return ipv6 ? v6(static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n), port)
                : v4(10, 1, static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n), port);
  };
  std::int64_t now = 0;
  for (int step = 0; step < 6000; ++step) {
    now += rng.below(3);
    const int n = static_cast<int>(rng.below(150));
    const bool ipv6 = rng.below(3) == 0;
    const endpoint ep = ep_of(n, ipv6, static_cast<std::uint16_t>(1 + rng.below(3)));
    const std::uint32_t op = rng.below(10);
    if (op < 5) {
      const bool seeder = rng.below(3) == 0;
      auto [c, tr] = t.announce_ex(pid(static_cast<std::uint64_t>(n)), ep, seeder ? 0 : 7,
                                   none, at(now));
      ASSERT_TRUE(c == change::added || c == change::updated);
      auto& m = ref[{n, ipv6}];
      if (c == change::added) {
        m.quarantined = false;
      }
      m.seeder = seeder;
      m.seen = now;
      if (rng.below(4) == 0) {
        m.quarantined = !m.quarantined;
        tr->set(flag_quarantined, m.quarantined);
      }
    } else if (op == 5) {
      const auto c = t.announce(pid(static_cast<std::uint64_t>(n)), ep, 0, stopped, at(now));
      ASSERT_EQ(c, ref.erase({n, ipv6}) ? change::removed : change::ignored);
    } else if (op == 6) {
      if (peer_traits* tr = t.traits(peer_key{pid(static_cast<std::uint64_t>(n)), ep.ip})) {
        auto& m = ref.at({n, ipv6});
        m.quarantined = rng.below(2) == 0;
        tr->set(flag_quarantined, m.quarantined);
      }
    } else if (op == 7) {
      if (rng.below(20) == 0) {
        t.for_each_mut([&](const peer_key& k, const endpoint&, bool, peer_traits& tr) {
          const bool q = rng.below(5) == 0;
          tr.set(flag_quarantined, q);
          for (auto& kv : ref) {
            if (ep_of(kv.first.first, kv.first.second, 1).ip == k.ip) kv.second.quarantined = q;
          }
        });
      }
    } else if (op == 8) {
      t.sweep(at(now), std::chrono::seconds(40), 1 + rng.below(20),
              [&](const peer_key& k, bool seeder, const peer_traits&) {
                bool found = false;
                for (auto it = ref.begin(); it != ref.end(); ++it) {
                  if (ep_of(it->first.first, it->first.second, 1).ip == k.ip) {
                    EXPECT_EQ(it->second.seeder, seeder);
                    EXPECT_GE(now - it->second.seen, 40);
                    ref.erase(it);
                    found = true;
                    break;
                  }
                }
                EXPECT_TRUE(found);
              });
    } else {
      const auto fam = static_cast<family_filter>(rng.below(3));
      const peer_key me{pid(static_cast<std::uint64_t>(n)), ep.ip};
      std::vector<peer_entry> out;
      const std::size_t want = rng.below(40);
      const std::size_t got = t.select_entries(me, want, out, fam);
      std::size_t open = 0;
      for (auto& kv : ref) {
        const bool fam_ok = fam == family_filter::both ||
                            (fam == family_filter::v6_only) == kv.first.second;
        const bool self = kv.first == std::make_pair(n, ipv6);
        open += fam_ok && !self && !kv.second.quarantined;
      }
      ASSERT_EQ(got, std::min(want, open)) << "step " << step;
      for (auto& e : out) {
        int en = e.ep.ip.v6 ? (e.ep.ip.bytes[14] << 8 | e.ep.ip.bytes[15])
                            : (e.ep.ip.bytes[2] << 8 | e.ep.ip.bytes[3]);
        ASSERT_FALSE(ref.at({en, e.ep.ip.v6}).quarantined) << "step " << step;
        ASSERT_FALSE(en == n && e.ep.ip.v6 == ipv6);
      }
    }
    std::size_t seeders = 0;
    std::size_t quarantined = 0;
    for (auto& kv : ref) {
      seeders += kv.second.seeder;
      quarantined += kv.second.quarantined;
    }
    ASSERT_EQ(t.size(), ref.size()) << "step " << step;
    ASSERT_EQ(t.seeders(), seeders) << "step " << step;
    ASSERT_EQ(t.leechers(), ref.size() - seeders) << "step " << step;
    ASSERT_TRUE(t.check_invariants()) << "step " << step;
    t.sync();
    ASSERT_EQ(t.quarantined_count(), quarantined) << "step " << step;
    ASSERT_TRUE(t.check_invariants()) << "step " << step;
  }
}

}  // namespace
}  // namespace sk

namespace sk {
namespace {

// The key index is open addressing with backward-shift deletion, grown from
// stored tags: churn through several resizes with keys that differ in one
// byte of the id (shared client prefixes) or only in the address (the same
// id from many hosts), checking every lookup against a reference set.
TEST(PeerTableIndex, ChurnThroughResizesKeepsEveryLookupExact) {
  fast_rng rng(77);
  // Up to 20 addresses per id: many records share each probe run.
  peer_table t(5, 1000000, 0);
  std::set<std::pair<int, int>> ref;  // (id number, host)
  auto id_of = [](int n) {
    peer_id id = test::pid(0);
    id.bytes[19] = static_cast<std::uint8_t>(n);
    id.bytes[18] = static_cast<std::uint8_t>(n >> 8);
    return id;
  };
  auto ep_of = [](int host) {
    return test::v4(10, 9, static_cast<std::uint8_t>(host >> 8), static_cast<std::uint8_t>(host),
                    6881);
  };
  std::int64_t now = 0;
  for (int step = 0; step < 40000; ++step) {
    // Grow to ~3000 peers, then shrink to ~0, then grow again.
    const bool growing = (step / 10000) % 2 == 0;
    const int n = static_cast<int>(rng.below(300));
    const int host = static_cast<int>(rng.below(20));
    const bool remove = rng.below(10) < (growing ? 2u : 8u);
    const auto c =
        t.announce(id_of(n), ep_of(host), 5, remove ? stopped : started, test::at(++now));
    if (remove) {
      ASSERT_EQ(c, ref.erase({n, host}) ? change::removed : change::ignored);
    } else {
      ASSERT_EQ(c, ref.insert({n, host}).second ? change::added : change::updated);
    }
    const int qn = static_cast<int>(rng.below(300));
    const int qh = static_cast<int>(rng.below(20));
    ASSERT_EQ(t.contains(peer_key{id_of(qn), ep_of(qh).ip}), ref.count({qn, qh}) == 1);
    ASSERT_EQ(t.size(), ref.size());
    if (step % 1000 == 0) {
      ASSERT_TRUE(t.check_invariants()) << step;
    }
  }
  ASSERT_TRUE(t.check_invariants());
  for (const auto& [n, host] : ref) {
    endpoint ep;
    ASSERT_TRUE(t.find(peer_key{id_of(n), ep_of(host).ip}, ep));
    EXPECT_EQ(ep, ep_of(host));
  }
}

// Flags written through a handed-out pointer reach the table's hot copy
// (which selection reads) at the next sync; `check_invariants` compares the
// two for every record not pending.
TEST(PeerTableTraits, FlagsWrittenThroughPointersReachTheHotCopyAtSync) {
  peer_table t(3);
  for (std::uint8_t i = 1; i <= 20; ++i) {
    t.announce(pid(i), v4(10, 0, 0, i, 6881), i % 3 == 0 ? 0 : 9, started, at(1));
  }
  peer_traits* tr = t.traits(peer_key{pid(4), v4(10, 0, 0, 4, 6881).ip});
  ASSERT_NE(tr, nullptr);
  tr->set(flag_unreachable);
  tr->set(flag_stalled);
  EXPECT_TRUE(t.check_invariants());  // pending: exempt
  t.sync();
  EXPECT_TRUE(t.check_invariants());
  t.for_each_mut([](const peer_key&, const endpoint&, bool, peer_traits& x) {
    x.set(flag_poor_contributor);
  });
  t.sync();
  EXPECT_TRUE(t.check_invariants());
  std::size_t poor = 0;
  t.for_each([&](const peer_key&, const endpoint&, bool, const peer_traits& x) {
    poor += x.has(flag_poor_contributor);
  });
  EXPECT_EQ(poor, 20u);
}

}  // namespace
}  // namespace sk
