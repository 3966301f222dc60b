// swarm_core without CAF: injected time, every self-healing rule of one
// announce (ban, min interval, quarantine, family filter, interval control,
// policy switch, seeder appeal) and the copy the supervisor restarts from.

#include "tracker/swarm_core.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "test_util.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::at;
using test::compact;
using test::pid;
using test::v4;
using test::v6;

const info_hash hash = test::ih(0x42);

swarm_announce make(std::uint64_t peer, const endpoint& ep, std::uint64_t left,
                    announce_event ev = announce_event::none, std::int32_t numwant = -1) {
  swarm_announce a;
  a.request.hash = hash;
  a.request.id = pid(peer);
  a.request.port = ep.port;
  a.request.left = left;
  a.request.event = ev;
  a.request.compact = true;
  a.request.numwant = numwant;
  a.peer = ep;
  return a;
}

/// Realistic timing: interval 1200 s, min interval 600 s (early below 570 s).
swarm_config config() {
  swarm_config c;
  c.announce_interval = seconds(1200);
  c.min_interval = seconds(600);
  c.peer_timeout = seconds(3000);
  c.rng_seed = 5;
  return c;
}

announce_result announce(swarm_core& core, const swarm_announce& a, std::int64_t t) {
  announce_result r;
  EXPECT_TRUE(core.announce(a, at(t), r));
  return r;
}

std::set<std::string> compact_set(const std::string& bytes, std::size_t width) {
  std::set<std::string> out;
  for (std::size_t i = 0; i + width <= bytes.size(); i += width) {
    out.insert(bytes.substr(i, width));
  }
  return out;
}

TEST(SwarmCore, BannedClientGetsItsFailureReasonAndIsNotStored) {
  auto c = config();
  std::string error;
  auto bans = client_ban_list::parse("-SK0001-=SK 0.0.1 corrupts data;-XX=no XX", &error);
  ASSERT_TRUE(bans) << error;
  // The ban list is the node's live state, beside the config.
  auto settings = std::make_shared<const swarm_settings>(
      c, node_shared{std::make_shared<live_ban_list>(*bans), nullptr});
  swarm_core core(hash, settings, 1);
  auto r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5, announce_event::started), 0);
  EXPECT_EQ(r.failure_reason, "SK 0.0.1 corrupts data");
  EXPECT_EQ(r.retry_in_minutes, -1) << "a banned client should never retry";
  EXPECT_TRUE(r.peers4.empty());
  EXPECT_EQ(core.table().size(), 0u);
  EXPECT_EQ(core.counters().banned, 1u);
}

TEST(SwarmCore, RepeatedAnnouncesGetNormalRepliesAndAreCounted) {
  // One client, one address, the same announce over both transports and
  // from two listen ports within a second: three normal replies.
  swarm_core core(hash, config(), 1);
  announce(core, make(2, v4(10, 0, 0, 2, 1), 5, announce_event::started), 0);
  for (std::uint16_t port : {6881, 6882, 6881}) {
    auto r = announce(core, make(1, v4(10, 0, 0, 1, port), 5, announce_event::started), 0);
    EXPECT_TRUE(r.failure_reason.empty()) << r.failure_reason;
    EXPECT_TRUE(r.warning_message.empty()) << r.warning_message;
    EXPECT_EQ(r.peers4, compact(v4(10, 0, 0, 2, 1)));  // a fresh peer list
  }
  EXPECT_EQ(core.counters().repeats, 2u);
  EXPECT_EQ(core.counters().warned, 0u);
  EXPECT_EQ(core.counters().refused, 0u);
  EXPECT_EQ(core.table().size(), 2u);
  const peer_traits* t = core.table().traits(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->announces, 1u);
  EXPECT_EQ(t->early_announces, 0u);
  EXPECT_EQ(t->strikes, 0u);
}

TEST(SwarmCore, SustainedEarlyAnnouncesGetAWarningThenAFailureWithRetryIn) {
  auto c = config();
  c.behaviour.duplicate_window = seconds(0);  // every announce is news here
  swarm_core core(hash, c, 1);
  announce(core, make(2, v4(10, 0, 0, 2, 1), 5, announce_event::started), 0);
  auto r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5, announce_event::started), 0);
  EXPECT_TRUE(r.warning_message.empty());
  // Two early announces are tolerated, the third is warned.
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5), 10);
  EXPECT_TRUE(r.warning_message.empty());
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5), 20);
  EXPECT_TRUE(r.warning_message.empty());
  EXPECT_EQ(core.counters().early, 2u);
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5), 30);
  EXPECT_TRUE(r.failure_reason.empty());
  EXPECT_FALSE(r.warning_message.empty());
  EXPECT_EQ(r.peers4, compact(v4(10, 0, 0, 2, 1)));
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 5), 40);
  EXPECT_FALSE(r.warning_message.empty());
  // The fifth: refused with retry in (whole minutes, rounded up), not applied.
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 4), 50);
  EXPECT_FALSE(r.failure_reason.empty());
  EXPECT_GE(r.retry_in_minutes, 1);
  EXPECT_LE(r.retry_in_minutes, 10);
  EXPECT_TRUE(r.peers4.empty());
  EXPECT_EQ(core.table().traits(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip})->left, 5u)
      << "a refused announce is not applied";
  EXPECT_EQ(core.counters().refused, 1u);
  // On time again: clean.
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 4), 700);
  EXPECT_TRUE(r.failure_reason.empty());
  EXPECT_TRUE(r.warning_message.empty());
}

TEST(SwarmCore, MagnetStartIsNeitherAStrikeNorASeeder) {
  swarm_core core(hash, config(), 1);
  // Before the metadata: left = 0, nothing downloaded.
  auto r = announce(core, make(1, v4(10, 0, 0, 1, 1), 0, announce_event::started), 0);
  EXPECT_EQ(core.scrape().complete, 1);
  // The metadata arrived: the real size, a few seconds later.
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 700 << 20), 5);
  EXPECT_TRUE(r.warning_message.empty()) << r.warning_message;
  EXPECT_TRUE(r.failure_reason.empty()) << r.failure_reason;
  EXPECT_EQ(core.scrape().complete, 0);
  EXPECT_EQ(core.scrape().incomplete, 1);
  EXPECT_EQ(core.table().traits(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip})->strikes, 0u);
}

swarm_announce with_key(swarm_announce a, const char* key) {
  a.request.key = key;
  return a;
}

TEST(SwarmCore, RoamingWithTheSameKeyMovesThePeer) {
  swarm_core core(hash, config(), 1);
  announce(core, with_key(make(1, v4(10, 0, 0, 1, 6881), 5, announce_event::started), "AB12"),
           0);
  announce(core, make(2, v4(10, 0, 0, 2, 1), 0, announce_event::started), 0);
  // The client's address changed (same peer_id, same key; hex case differs
  // between transports).
  auto r = announce(core, with_key(make(1, v4(10, 0, 7, 9, 6881), 5), "ab12"), 1200);
  EXPECT_TRUE(r.warning_message.empty()) << r.warning_message;
  EXPECT_EQ(core.table().size(), 2u);
  EXPECT_EQ(core.scrape().incomplete, 1);
  EXPECT_EQ(core.scrape().complete, 1);
  EXPECT_EQ(core.counters().roamed, 1u);
  EXPECT_FALSE(core.table().contains(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip}));
  EXPECT_TRUE(core.table().contains(peer_key{pid(1), v4(10, 0, 7, 9, 1).ip}));
  // The seeder is handed the new address only: no ghost.
  r = announce(core, make(2, v4(10, 0, 0, 2, 1), 0), 1200);
  EXPECT_EQ(r.peers4, compact(v4(10, 0, 7, 9, 6881)));
  // The record kept its history (one peer, not a new arrival).
  EXPECT_EQ(core.table().traits(peer_key{pid(1), v4(10, 0, 7, 9, 1).ip})->announces, 2u);
  EXPECT_TRUE(core.check_invariants());
}

TEST(SwarmCore, AnotherKeyOrAnotherFamilyIsAnotherPeer) {
  swarm_core core(hash, config(), 1);
  announce(core, with_key(make(1, v4(10, 0, 0, 1, 6881), 5, announce_event::started), "AB12"),
           0);
  // The impostor rule: the same peer_id with another key does not evict.
  announce(core, with_key(make(1, v4(10, 0, 0, 66, 6881), 5, announce_event::started), "FFFF"),
           10);
  EXPECT_EQ(core.table().size(), 2u);
  EXPECT_EQ(core.counters().roamed, 0u);
  // Dual stack: the same client over IPv6 is a second endpoint, not a move.
  announce(core, with_key(make(1, v6(0x20, 1, 6881), 5, announce_event::started), "AB12"), 20);
  EXPECT_EQ(core.table().size(), 3u);
  EXPECT_TRUE(core.table().contains(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip}));
  EXPECT_EQ(core.counters().roamed, 0u);
}

TEST(SwarmCore, PartialSeedsInScrapeAndPeerLists) {
  auto c = config();
  c.max_numwant = 200;
  swarm_core core(hash, c, 7);
  // 3 seeders, 5 partial seeds (BEP 21 event=paused), 4 leechers.
  std::set<std::string> seeders, partial, leechers;
  std::uint8_t n = 1;
  for (int i = 0; i < 3; ++i, ++n) {
    announce(core, make(n, v4(10, 0, 1, n, 1), 0, announce_event::started), 0);
    seeders.insert(compact(v4(10, 0, 1, n, 1)));
  }
  for (int i = 0; i < 5; ++i, ++n) {
    announce(core, make(n, v4(10, 0, 1, n, 1), 100, announce_event::paused), 0);
    partial.insert(compact(v4(10, 0, 1, n, 1)));
  }
  for (int i = 0; i < 4; ++i, ++n) {
    announce(core, make(n, v4(10, 0, 1, n, 1), 100, announce_event::started), 0);
    leechers.insert(compact(v4(10, 0, 1, n, 1)));
  }
  const swarm_stats st = core.scrape();
  EXPECT_EQ(st.complete, 3);
  EXPECT_EQ(st.incomplete, 9);  // partial seeds are incomplete ...
  EXPECT_EQ(st.partial, 5);     // ... and BEP 21's downloaders are 9 - 5
  for (int round = 1; round <= 5; ++round) {
    const std::int64_t t = 1200 * round;
    // A partial seed gets downloaders only: no seeder, no partial seed.
    auto r = announce(core, make(4, v4(10, 0, 1, 4, 1), 100, announce_event::paused), t);
    for (const auto& p : compact_set(r.peers4, 6)) EXPECT_EQ(leechers.count(p), 1u);
    EXPECT_EQ(r.peers4.size(), 4u * 6u);
    // A seeder gets no partial seed either.
    r = announce(core, make(1, v4(10, 0, 1, 1, 1), 0), t);
    for (const auto& p : compact_set(r.peers4, 6)) EXPECT_EQ(partial.count(p), 0u);
    // A leecher may get partial seeds: they have pieces it wants.
    r = announce(core, make(10, v4(10, 0, 1, 10, 1), 100), t);
    EXPECT_EQ(r.peers4.size(), 11u * 6u);
  }
  // A partial seed that goes on downloading is a leecher again.
  announce(core, make(4, v4(10, 0, 1, 4, 1), 150), 9000);
  EXPECT_EQ(core.scrape().partial, 4);
  EXPECT_TRUE(core.check_invariants());
}

TEST(SwarmCore, QuarantinedPeersAreNeverReturned) {
  swarm_core core(hash, config(), 3);
  for (std::uint8_t i = 1; i <= 10; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 100, announce_event::started), 0);
  }
  // Peer 1 is quarantined (as the detectors would after broken counters).
  core.table().traits(peer_key{pid(1), v4(10, 0, 0, 1, 1).ip})->set(flag_quarantined);
  const std::string bad = compact(v4(10, 0, 0, 1, 1));
  for (int round = 0; round < 5; ++round) {
    for (std::uint8_t i = 2; i <= 10; ++i) {
      auto r = announce(core, make(i, v4(10, 0, 0, i, 1), 100), 600 * (round + 1));
      EXPECT_EQ(compact_set(r.peers4, 6).count(bad), 0u);
      EXPECT_EQ(r.peers4.size(), 8u * 6u);
    }
  }
  EXPECT_TRUE(core.check_invariants());
}

TEST(SwarmCore, StrictQuarantineQuarantinesAfterOneBrokenCounter) {
  swarm_core core(hash, config(), 3);
  core.set_quarantine_strict(true);
  auto a = make(1, v4(10, 0, 0, 1, 1), 100, announce_event::started);
  a.request.uploaded = 5000;
  announce(core, a, 0);
  announce(core, make(2, v4(10, 0, 0, 2, 1), 100, announce_event::started), 0);
  a.request.event = announce_event::none;
  a.request.uploaded = 10;  // went backwards
  auto r = announce(core, a, 700);
  EXPECT_FALSE(r.warning_message.empty());
  r = announce(core, make(2, v4(10, 0, 0, 2, 1), 100), 700);
  EXPECT_TRUE(r.peers4.empty()) << "the quarantined peer is not handed out";
}

TEST(SwarmCore, OwnFamilyOnlySelectsThatFamily) {
  swarm_core core(hash, config(), 4);
  for (std::uint8_t i = 1; i <= 5; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 100, announce_event::started), 0);
    announce(core, make(100 + i, v6(0, i, 1), 100, announce_event::started), 0);
  }
  auto a = make(50, v4(10, 0, 0, 50, 1), 100, announce_event::started, 4);
  a.own_family_only = true;
  auto r = announce(core, a, 0);
  EXPECT_EQ(r.peers4.size(), 4u * 6u);
  EXPECT_TRUE(r.peers6.empty());
  auto b = make(60, v6(0, 60, 1), 100, announce_event::started, 4);
  b.own_family_only = true;
  r = announce(core, b, 0);
  EXPECT_EQ(r.peers6.size(), 4u * 18u);
  EXPECT_TRUE(r.peers4.empty());
  // Without the flag, numwant is shared by both families.
  auto c = make(70, v4(10, 0, 0, 70, 1), 100, announce_event::started, 10);
  r = announce(core, c, 0);
  EXPECT_EQ(r.peers4.size() / 6 + r.peers6.size() / 18, 10u);
  EXPECT_FALSE(r.peers6.empty());
}

TEST(SwarmCore, IntervalIsExactUntilSomethingCallsForAnother) {
  swarm_core core(hash, config(), 5);
  auto r = announce(core, make(1, v4(10, 0, 0, 1, 1), 100, announce_event::started), 0);
  EXPECT_EQ(r.interval, 1200);
  EXPECT_EQ(r.min_interval, 600);
  core.tick(at(10));  // one leecher: no-seeders, but too small to be "starving"
  r = announce(core, make(2, v4(10, 0, 0, 2, 1), 100, announce_event::started), 20);
  EXPECT_EQ(r.interval, 1200);
}

TEST(SwarmCore, StarvingLeechersGetShorterJitteredIntervalsSeedersDoNot) {
  swarm_core core(hash, config(), 6);
  for (std::uint8_t i = 1; i <= 10; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 100, announce_event::started), 0);
  }
  auto report = core.tick(at(10));
  ASSERT_TRUE(report);
  EXPECT_NE(report->reasons & reason_no_seeders, 0u);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 50; ++i) {
    const auto leecher = core.interval_for(false);
    // 1200 x 0.5 = 600, jittered by +-10 %, never below min interval 600.
    EXPECT_GE(leecher, 600);
    EXPECT_LE(leecher, 660);
    seen.insert(leecher);
  }
  EXPECT_GT(seen.size(), 5u) << "jittered";
  EXPECT_EQ(core.interval_for(true), 1200) << "seeders are not starving";
  // Deterministic: the same seed gives the same jitter.
  swarm_core other = core;
  EXPECT_EQ(other.interval_for(false), core.interval_for(false));
}

TEST(SwarmCore, HealthyLargeSwarmsGetLongerIntervalsWithinPeerTimeout) {
  auto c = config();
  c.intervals.large_swarm_peers = 10;
  swarm_core core(hash, c, 7);
  for (std::uint8_t i = 1; i <= 12; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 0, announce_event::started), 0);
  }
  core.tick(at(10));
  ASSERT_NE(core.last_report(), nullptr);
  EXPECT_EQ(core.last_report()->state, swarm_health::healthy);
  for (int i = 0; i < 50; ++i) {
    const auto iv = core.interval_for(true);
    // 1200 x 1.5 = 1800 +- 10 %, at most peer_timeout - min_interval = 2400.
    EXPECT_GE(iv, 1620);
    EXPECT_LE(iv, 1980);
  }
  // Knobs stretch further, but never beyond the peer timeout bound ...
  swarm_knobs k = core.knobs();
  k.interval_scale = 4.0;
  ASSERT_TRUE(core.set_knobs(k));
  EXPECT_EQ(core.interval_for(true), 2400);
  // ... nor below min interval.
  k.interval_scale = 0.01;
  ASSERT_TRUE(core.set_knobs(k));
  EXPECT_EQ(core.interval_for(false), 600);
  k.interval_scale = 0.0;
  EXPECT_FALSE(core.set_knobs(k));
}

TEST(SwarmCore, PolicySwitchTakesEffectAtTheNextAnnounce) {
  swarm_core core(hash, config(), 8);
  for (std::uint8_t i = 1; i <= 5; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 0, announce_event::started), 0);
  }
  EXPECT_EQ(core.policy(), policy_kind::adaptive);
  auto r = announce(core, make(9, v4(10, 0, 0, 9, 1), 0, announce_event::started), 0);
  EXPECT_TRUE(r.peers4.empty()) << "adaptive: a seeder is never handed seeders";
  core.set_policy(policy_kind::random);
  r = announce(core, make(9, v4(10, 0, 0, 9, 1), 0), 700);
  EXPECT_EQ(r.peers4.size(), 5u * 6u) << "random: anyone";
  core.set_policy(policy_kind::role_aware);
  r = announce(core, make(9, v4(10, 0, 0, 9, 1), 0), 1400);
  EXPECT_TRUE(r.peers4.empty());
}

TEST(SwarmCore, SeedersOfADegradedSwarmAreAskedToKeepSeeding) {
  swarm_core core(hash, config(), 9);
  announce(core, make(1, v4(10, 0, 0, 1, 1), 0, announce_event::started), 0);
  for (std::uint8_t i = 2; i <= 25; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), 100, announce_event::started), 0);
  }
  auto r = announce(core, make(1, v4(10, 0, 0, 1, 1), 0), 700);
  EXPECT_TRUE(r.warning_message.empty()) << "no health evaluation yet";
  auto report = core.tick(at(710));
  ASSERT_TRUE(report);
  EXPECT_NE(report->reasons & reason_few_seeders, 0u);
  r = announce(core, make(1, v4(10, 0, 0, 1, 1), 0), 1400);
  EXPECT_EQ(r.warning_message, config().seeder_warning_text);
  r = announce(core, make(2, v4(10, 0, 0, 2, 1), 90), 1400);
  EXPECT_NE(r.warning_message, config().seeder_warning_text) << "leechers are not asked";
  // The knob forces it on a healthy swarm too; the config switch turns the
  // automatic appeal off.
  auto c = config();
  c.warn_seeders_when_degraded = false;
  swarm_core quiet(hash, c, 9);
  announce(quiet, make(1, v4(10, 0, 0, 1, 1), 0, announce_event::started), 0);
  r = announce(quiet, make(1, v4(10, 0, 0, 1, 1), 0), 700);
  EXPECT_TRUE(r.warning_message.empty());
  quiet.set_seeder_warning(true);
  r = announce(quiet, make(1, v4(10, 0, 0, 1, 1), 0), 1400);
  EXPECT_EQ(r.warning_message, c.seeder_warning_text);
}

TEST(SwarmCore, ACopyServesLikeTheOriginal) {
  swarm_core core(hash, config(), 10);
  for (std::uint8_t i = 1; i <= 20; ++i) {
    announce(core, make(i, v4(10, 0, 0, i, 1), i % 4 == 0 ? 0 : 100, announce_event::started), 0);
  }
  core.set_policy(policy_kind::seeder_rotation);
  remediation_record rec;
  rec.action = "apply";
  core.record(rec);
  swarm_core copy = core;
  EXPECT_TRUE(copy.check_invariants());
  EXPECT_EQ(copy.scrape().complete, core.scrape().complete);
  EXPECT_EQ(copy.scrape().incomplete, core.scrape().incomplete);
  EXPECT_EQ(copy.policy(), policy_kind::seeder_rotation);
  ASSERT_EQ(copy.history().size(), 1u);
  auto a = announce(core, make(3, v4(10, 0, 0, 3, 1), 90), 700);
  auto b = announce(copy, make(3, v4(10, 0, 0, 3, 1), 90), 700);
  EXPECT_EQ(a.peers4, b.peers4) << "same state, same seed: same choice";
}

TEST(SwarmCore, HistoryIsBounded) {
  auto c = config();
  c.history_size = 3;
  swarm_core core(hash, c, 11);
  for (int i = 0; i < 5; ++i) {
    remediation_record rec;
    rec.action = "a" + std::to_string(i);
    core.record(rec);
  }
  ASSERT_EQ(core.history().size(), 3u);
  EXPECT_EQ(core.history().front().action, "a2");
  EXPECT_EQ(core.history().back().action, "a4");
}

TEST(SwarmCore, SweepCountsDeparturesAndStartsTheIdleClock) {
  swarm_core core(hash, config(), 12);
  announce(core, make(1, v4(10, 0, 0, 1, 1), 100, announce_event::started), 0);
  EXPECT_FALSE(core.empty_since());
  auto r = core.sweep(at(3000));
  EXPECT_TRUE(r.cycle_done);
  EXPECT_EQ(r.expired, 1u);
  ASSERT_TRUE(core.empty_since());
  EXPECT_FALSE(core.idle(at(3000)));
  EXPECT_TRUE(core.idle(at(3000) + core.config().idle_lifetime));
  EXPECT_TRUE(core.check_invariants());
}

}  // namespace
}  // namespace sk
