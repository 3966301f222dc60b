// What a swarm keeps, and when: the node-wide settings shared instead of
// copied, state only some swarms need allocated on first need and dropped
// after, small peer tables without an index, the compact peer fields. And
// that none of it changes what the table answers: a table that crosses the
// small-table size both ways, compacting as it goes, against a model.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "tracker/peer_fields.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::at;
using test::pid;
using test::v4;
using test::v6;
using change = peer_table::change;

// -- key_text, optional_time -------------------------------------------------------

TEST(KeyText, EveryFormReadsBackAsWritten) {
  const std::string samples[] = {"",          "0",         "00000000",  "DEADBEEF",  "deadbeef",
                                 "1a2B",      "k1",        "abcdefg",   "ABCDEFGH",  "abcdefgh",
                                 "0123456789", "ZZZZZZZZ", std::string("\0\x01\xff", 3),
                                 "0000000F",  "f",         "F",         "123456789abcdef0"};
  for (const std::string& s : samples) {
    key_text k = s;
    EXPECT_EQ(k.str(), s);
    EXPECT_EQ(k.size(), s.size());
    EXPECT_EQ(k.empty(), s.empty());
    EXPECT_TRUE(k == s);
    const key_text copy = k;
    EXPECT_EQ(copy.str(), s);
    key_text moved = std::move(k);
    EXPECT_EQ(moved.str(), s);
    EXPECT_TRUE(k.empty());  // NOLINT: moved-from is empty
    moved = copy;
    EXPECT_EQ(moved, copy);
  }
}

TEST(KeyText, KeysRealClientsSendStayInline) {
  // UDP keys as the parser writes them, libtorrent's in either case, short text.
  for (const char* s : {"0A1B2C3D", "0a1b2c3d", "00000001", "k1", "abcdefg"}) {
    EXPECT_FALSE(key_text(s).on_heap()) << s;
  }
  // Mixed-case hex, longer text: on the heap, still exact.
  for (const char* s : {"0a1B2c3D", "abcdefgh", "a key with spaces"}) {
    const key_text k(s);
    EXPECT_TRUE(k.on_heap()) << s;
    EXPECT_EQ(k.str(), s);
  }
  key_text k = "a key with spaces";
  k = "1234";  // from the heap back inline
  EXPECT_FALSE(k.on_heap());
  EXPECT_EQ(k, "1234");
  k = std::string_view(k.str());  // assigning its own text
  EXPECT_EQ(k, "1234");
}

TEST(KeyText, MatchesIgnoringCaseAsTheDetectorsDo) {
  EXPECT_TRUE(same_key_text(key_text("DEADBEEF"), "deadbeef"));
  EXPECT_TRUE(same_key_text(key_text("deadbeef"), "DeadBeef"));
  EXPECT_FALSE(same_key_text(key_text("DEADBEEF"), "DEADBEE"));
  EXPECT_FALSE(same_key_text(key_text(""), "0"));
  EXPECT_TRUE(same_key_text(key_text("a key with spaces"), "A KEY WITH SPACES"));
}

TEST(OptionalTime, BehavesLikeStdOptional) {
  optional_time t;
  EXPECT_FALSE(t.has_value());
  EXPECT_FALSE(t);
  const auto when = at(42);
  t = when;
  ASSERT_TRUE(t);
  EXPECT_EQ(*t, when);
  t.reset();
  EXPECT_FALSE(t.has_value());
  t = at(0);  // the clock's epoch is a value like any other
  EXPECT_TRUE(t.has_value());
  t = std::nullopt;
  EXPECT_FALSE(t.has_value());
  EXPECT_EQ(sizeof(peer_traits), 96u);
}

// -- shared settings ------------------------------------------------------------------

TEST(SwarmSettings, EqualConfigsShareOneObjectOtherConfigsDoNot) {
  const swarm_config cfg = test::short_config(1);
  swarm_core a(test::ih(1), cfg, 1);
  swarm_core b(test::ih(2), cfg, 2);
  EXPECT_EQ(a.settings(), b.settings());
  EXPECT_EQ(&a.config(), &b.config());
  swarm_config other = cfg;
  other.seeder_warning_text = "seed, please";
  swarm_core c(test::ih(3), other, 3);
  EXPECT_NE(c.settings(), a.settings());
  EXPECT_EQ(c.config().seeder_warning_text, "seed, please");
  // Every field takes part: a config differing in one nested threshold is
  // not shared either.
  swarm_config nested = cfg;
  nested.health.min_peers = 7;
  EXPECT_FALSE(same_config(nested, cfg));
  nested = cfg;
  nested.allocation.contribution_floor = 3;
  EXPECT_FALSE(same_config(nested, cfg));
  EXPECT_TRUE(same_config(cfg, test::short_config(1)));
}

TEST(SwarmSettings, DerivedDetectorThresholdsFollowTheStrictKnob) {
  swarm_config cfg = test::short_config(1);
  cfg.behaviour.quarantine_strikes = 3;
  cfg.behaviour.early_refuse_after = 5;
  swarm_core core(test::ih(1), cfg, 1);
  EXPECT_EQ(core.behaviour().min_interval, cfg.min_interval);
  EXPECT_EQ(core.behaviour().quarantine_strikes, 3u);
  core.set_quarantine_strict(true);
  EXPECT_EQ(core.behaviour().quarantine_strikes, 1u);
  EXPECT_EQ(core.behaviour().early_refuse_after, 1u);
  EXPECT_EQ(core.behaviour().min_interval, cfg.min_interval);
  swarm_knobs k = core.knobs();
  k.quarantine_strict = false;
  ASSERT_TRUE(core.set_knobs(k));
  EXPECT_EQ(core.behaviour().quarantine_strikes, 3u);
}

// -- state allocated on first need ------------------------------------------------------

swarm_announce make(std::uint64_t peer, const endpoint& ep, std::uint64_t left,
                    announce_event ev = announce_event::started) {
  swarm_announce a;
  a.request.hash = test::ih(1);
  a.request.id = pid(peer);
  a.request.port = ep.port;
  a.request.left = left;
  a.request.event = ev;
  a.peer = ep;
  return a;
}

TEST(SwarmCoreMemory, HistoryExistsOnlyOnceSomethingWasRecordedAndCopiesDeep) {
  swarm_core core(test::ih(1), test::short_config(1), 1);
  EXPECT_TRUE(core.history().empty());
  remediation_record r;
  r.action = "start";
  core.record(r);
  swarm_core copy = core;
  r.action = "apply";
  core.record(r);
  ASSERT_EQ(core.history().size(), 2u);
  ASSERT_EQ(copy.history().size(), 1u);
  EXPECT_EQ(copy.history().front().action, "start");
  EXPECT_TRUE(copy.check_invariants());
}

TEST(SwarmCoreMemory, ProbeStateIsDroppedOnceNothingIsOutstanding) {
  swarm_config cfg = test::short_config(1);
  cfg.probe.enabled = true;
  swarm_core core(test::ih(1), cfg, 1);
  core.set_probing(true);
  announce_result out;
  const endpoint ep = v4(10, 0, 0, 1, 6881);
  core.announce(make(1, ep, 100), at(0), out);
  ASSERT_EQ(core.outstanding_probes(), 1u);
  const auto requests = core.take_probe_requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_FALSE(core.has_probe_requests());
  EXPECT_EQ(core.outstanding_probes(), 1u);
  EXPECT_TRUE(core.apply_probe_result(peer_key{pid(1), ep.ip}, ep.port,
                                      probe_outcome::reachable, at(1)));
  EXPECT_EQ(core.outstanding_probes(), 0u);
  EXPECT_TRUE(core.check_invariants());
}

TEST(SwarmCoreMemory, OnePeerSwarmKeepsAFewBucketsOfHealthWindow) {
  swarm_core core(test::ih(1), test::short_config(1), 1);
  announce_result out;
  core.announce(make(1, v4(10, 0, 0, 1, 6881), 100), at(0), out);
  core.tick(at(10));
  EXPECT_LE(core.tracker().window_buckets(), 1u);
  EXPECT_FALSE(core.tracker().window_is_ring());
  // Quiet for a whole window: nothing left of it.
  core.tick(at(10 + 3600));
  EXPECT_EQ(core.tracker().window_buckets(), 0u);
}

// Compacting gives memory back and nothing else: a core compacted after
// every step answers exactly like its twin that never is (peers chosen,
// intervals, warnings, counts, health reports).
TEST(SwarmCoreMemory, CompactingChangesNoAnswer) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    swarm_config cfg = test::short_config(seed);
    cfg.health.min_peers = 3;
    swarm_core plain(test::ih(1), cfg, seed);
    swarm_core compacted(test::ih(1), cfg, seed);
    fast_rng rng(seed);
    std::int64_t now = 0;
    for (int step = 0; step < 1500; ++step) {
      now += rng.below(4);
      const bool growing = (step / 250) % 2 == 0;
      const std::uint64_t p = rng.below(30);
      const endpoint ep = p % 5 == 0 ? v6(0, static_cast<std::uint8_t>(p), 6881)
                                     : v4(10, 0, 0, static_cast<std::uint8_t>(p), 6881);
      const auto ev = rng.below(10) < (growing ? 1u : 6u) ? announce_event::stopped
                                                           : announce_event::none;
      const swarm_announce a = make(p, ep, rng.below(3) == 0 ? 0 : 1000 - rng.below(900), ev);
      announce_result r1, r2;
      plain.announce(a, at(now), r1);
      compacted.announce(a, at(now), r2);
      ASSERT_EQ(r1.peers4, r2.peers4) << step;
      ASSERT_EQ(r1.peers6, r2.peers6) << step;
      ASSERT_EQ(r1.interval, r2.interval) << step;
      ASSERT_EQ(r1.warning_message, r2.warning_message) << step;
      ASSERT_EQ(r1.failure_reason, r2.failure_reason) << step;
      ASSERT_EQ(r1.stats.complete, r2.stats.complete) << step;
      ASSERT_EQ(r1.stats.incomplete, r2.stats.incomplete) << step;
      if (step % 20 == 0) {
        const auto h1 = plain.tick(at(now));
        const auto h2 = compacted.tick(at(now));
        ASSERT_EQ(h1.has_value(), h2.has_value()) << step;
        ASSERT_EQ(plain.last_report()->state, compacted.last_report()->state) << step;
        ASSERT_EQ(plain.last_report()->reasons, compacted.last_report()->reasons) << step;
        ASSERT_EQ(plain.last_report()->announce_rate, compacted.last_report()->announce_rate);
      }
      if (step % 30 == 0) {
        plain.sweep(at(now));
        compacted.sweep(at(now));
      }
      compacted.compact(at(now));
      ASSERT_TRUE(compacted.check_invariants()) << step;
    }
  }
}

// -- the peer table ----------------------------------------------------------------------

TEST(PeerTableMemory, SmallTablesHaveNoIndexUntilTheyGrow) {
  peer_table t(7);
  for (std::uint64_t p = 0; p < peer_table::small_table; ++p) {
    t.announce(pid(p), v4(10, 0, 0, static_cast<std::uint8_t>(p), 6881), 5,
               announce_event::started, at(0));
    EXPECT_FALSE(t.has_index()) << p;
  }
  t.announce(pid(100), v4(10, 0, 1, 1, 6881), 5, announce_event::started, at(0));
  EXPECT_TRUE(t.has_index());
  EXPECT_TRUE(t.check_invariants());
  // Shrunk to half the small size: the next compaction drops the index.
  for (std::uint64_t p = 0; p < 5; ++p) {
    t.announce(pid(p), v4(10, 0, 0, static_cast<std::uint8_t>(p), 6881), 5,
               announce_event::stopped, at(1));
  }
  t.compact();
  EXPECT_FALSE(t.has_index());
  EXPECT_TRUE(t.check_invariants());
  EXPECT_TRUE(t.contains(peer_key{pid(100), v4(10, 0, 1, 1, 0).ip}));
  EXPECT_FALSE(t.contains(peer_key{pid(0), v4(10, 0, 0, 0, 0).ip}));
}

TEST(PeerTableMemory, SweepCycleGivesBackWhatAShrunkenTableHolds) {
  peer_table t(7);
  for (std::uint64_t p = 0; p < 2000; ++p) {
    t.announce(pid(p), v4(10, 0, static_cast<std::uint8_t>(p >> 8), static_cast<std::uint8_t>(p), 1),
               p % 4 == 0 ? 0 : 5, announce_event::started, at(p < 1990 ? 0 : 500));
  }
  const std::size_t full = t.heap_bytes();
  // 1990 of them expire; a whole cycle compacts.
  while (!t.sweep(at(1000), seconds(600), 1024).cycle_done) {
  }
  ASSERT_EQ(t.size(), 10u);
  EXPECT_LT(t.heap_bytes() * 20, full);
  EXPECT_TRUE(t.check_invariants());
  // The peer just removed is still known until the next cycle completes.
  const endpoint leaving = v4(10, 0, 7, 203, 1);
  peer_traits* tr = t.announce_ex(pid(1995), leaving, 5, announce_event::none, at(1001)).second;
  ASSERT_NE(tr, nullptr);
  tr->announces = 9;
  ASSERT_EQ(t.announce(pid(1995), leaving, 5, announce_event::stopped, at(1001)), change::removed);
  EXPECT_EQ(t.last_removed().announces, 9u);
  while (!t.sweep(at(1002), seconds(600), 1024).cycle_done) {
  }
  EXPECT_EQ(t.last_removed().announces, 0u);
}

TEST(PeerTableMemory, AReservedTableSizesItsArraysOnceAndAnswersAsAGrownOne) {
  // A swarm waking from its sleeping form reserves for its peers before it
  // adds them: less room than step-by-step growth leaves, and the same
  // table in every answer (same seed, same peers, same order).
  peer_table grown(7);
  peer_table reserved(7);
  // [seeders, leechers][IPv4, IPv6]: 3 + 1 seeders, 6 + 2 leechers.
  reserved.reserve({{{3, 1}, {6, 2}}});
  const std::size_t empty_bytes = reserved.heap_bytes();
  EXPECT_GT(empty_bytes, 0u);
  for (std::uint64_t p = 0; p < 12; ++p) {
    const bool six = p % 4 == 3;  // peers 3, 7, 11
    const bool seeder = p == 0 || p == 1 || p == 2 || p == 3;
    const endpoint ep = six ? v6(0x20, static_cast<std::uint8_t>(p), 6881)
                            : v4(10, 0, 0, static_cast<std::uint8_t>(p), 6881);
    for (peer_table* t : {&grown, &reserved})
      t->announce(pid(p), ep, seeder ? 0 : 5, announce_event::started, at(1));
  }
  // Every per-peer array fitted in what was reserved: what came since is the
  // index (built past the small-table size: 16 slots of 8 bytes for 12
  // peers) and the list of traits handed out (4 bytes per peer at most).
  EXPECT_LE(reserved.heap_bytes() - empty_bytes, 16u * 8 + 12u * 4);
  EXPECT_LT(reserved.heap_bytes(), grown.heap_bytes());
  EXPECT_TRUE(reserved.check_invariants());
  EXPECT_EQ(reserved.seeders(), grown.seeders());
  EXPECT_EQ(reserved.ipv6_count(), 3u);
  for (std::uint64_t p = 0; p < 12; ++p) {
    std::string a4, a6, b4, b6;
    const peer_key me{pid(p), v4(10, 0, 0, static_cast<std::uint8_t>(p), 0).ip};
    EXPECT_EQ(grown.select_compact(me, 5, a4, a6), reserved.select_compact(me, 5, b4, b6));
    EXPECT_EQ(a4, b4);
    EXPECT_EQ(a6, b6);
  }
  // More than max_peers is never reserved for.
  peer_table capped(7, 4);
  capped.reserve({{{1000, 1000}, {1000, 1000}}});
  EXPECT_LT(capped.heap_bytes(), reserved.heap_bytes());
}

TEST(PeerTableMemory, PerPeerBytesOfALargeTable) {
  peer_table t(7);
  for (std::uint64_t p = 0; p < 4096; ++p) {
    t.announce(pid(p), v4(10, 1, static_cast<std::uint8_t>(p >> 8), static_cast<std::uint8_t>(p), 1),
               p % 4 == 0 ? 0 : 5, announce_event::started, at(0));
  }
  // 152-byte record, 16 hot bytes, 6 compact bytes, 4 + 4 for slot and pool,
  // 8 per index slot at load 3/8 .. 3/4, plus the arrays' growth room (the
  // records grow by half: at 4096 peers they have room for 5393).
  const double per_peer = static_cast<double>(t.heap_bytes()) / 4096.0;
  EXPECT_LT(per_peer, 260.0);
  EXPECT_GT(per_peer, 182.0);
}

// Crossing the small-table size both ways, with sweeps (which compact) in
// between, every answer stays what a model says: membership, ports, roles,
// counts, the other-address walk of the roaming rule.
TEST(PeerTableMemory, RandomOperationsAroundTheSmallSizeMatchAModel) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fast_rng rng(seed);
    peer_table t(seed);
    struct ref_peer {
      std::uint16_t port;
      bool seeder;
      std::int64_t last_seen;
    };
    std::map<std::tuple<int, int>, ref_peer> ref;
    std::int64_t now = 0;
    auto address = [](int a) {
      return a % 4 == 0 ? v6(0, static_cast<std::uint8_t>(a), 0)
                        : v4(10, 9, 0, static_cast<std::uint8_t>(a), 0);
    };
    for (int step = 0; step < 3000; ++step) {
      now += 1;
      // Phases: grow to about 16 peers, shrink to about 2, and again.
      const bool growing = (step / 300) % 2 == 0;
      const int op = static_cast<int>(rng.below(100));
      const int p = static_cast<int>(rng.below(12));
      const int a = static_cast<int>(rng.below(3));
      endpoint ep = address(a);
      ep.port = static_cast<std::uint16_t>(1 + rng.below(3));
      if (op < 5) {
        // A whole sweep cycle that expires nobody (the timeout is long),
        // compacting at its end.
        while (!t.sweep(at(now), seconds(100000), 4).cycle_done) {
        }
      } else {
        const bool stop = rng.below(10) < (growing ? 2u : 7u);
        const std::uint64_t left = rng.below(3) == 0 ? 0 : 7;
        const auto c = t.announce(pid(static_cast<std::uint64_t>(p)), ep, left,
                                  stop ? announce_event::stopped : announce_event::none, at(now));
        const auto key = std::make_tuple(p, a);
        const auto it = ref.find(key);
        if (stop) {
          ASSERT_EQ(c, it == ref.end() ? change::ignored : change::removed) << step;
          if (it != ref.end()) ref.erase(it);
        } else {
          ASSERT_EQ(c, it == ref.end() ? change::added : change::updated) << step;
          ref[key] = {ep.port, left == 0, now};
        }
      }
      ASSERT_EQ(t.size(), ref.size()) << step;
      std::size_t seeders = 0;
      for (const auto& [k, r] : ref) {
        endpoint stored;
        const auto [pp, aa] = k;
        ASSERT_TRUE(t.find(peer_key{pid(static_cast<std::uint64_t>(pp)), address(aa).ip}, stored));
        ASSERT_EQ(stored.port, r.port) << step;
        ASSERT_EQ(t.is_seeder(peer_key{pid(static_cast<std::uint64_t>(pp)), address(aa).ip}),
                  r.seeder);
        seeders += r.seeder;
      }
      ASSERT_EQ(t.seeders(), seeders) << step;
      // The roaming rule's walk: every other address of one id and family.
      std::set<int> others;
      t.for_each_other_address(pid(static_cast<std::uint64_t>(p)), address(a).ip,
                               [&](const peer_key& k, const peer_traits&) {
                                 for (int b = 0; b < 3; ++b) {
                                   if (address(b).ip == k.ip) others.insert(b);
                                 }
                               });
      std::set<int> want;
      for (int b = 0; b < 3; ++b) {
        if (b != a && (b % 4 == 0) == (a % 4 == 0) && ref.count(std::make_tuple(p, b)) != 0) {
          want.insert(b);
        }
      }
      ASSERT_EQ(others, want) << step;
      if (t.size() > peer_table::small_table) {
        ASSERT_TRUE(t.has_index());
      }
      if (step % 50 == 0) {
        ASSERT_TRUE(t.check_invariants()) << step;
      }
    }
  }
}

}  // namespace
}  // namespace sk
