// swarm_directory: deterministic tests on the testing scheduler, and
// concurrent routing from plain threads on the real scheduler.

#include "runtime/directory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "runtime/swarm_actor.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::pid;
using test::v4;

swarm_config short_config() { return test::short_config(7); }

class Directory : public test::caf_fixture {
 protected:
  ~Directory() override {
    // Swarms must be gone before the fixture's own teardown.
    if (dir) {
      dir->stop_all();
    }
    run();
  }
  std::unique_ptr<swarm_directory> dir = std::make_unique<swarm_directory>(*sys, short_config(), 8);
};

TEST_F(Directory, RouteSpawnsOnceAndFindNeverSpawns) {
  const auto h1 = test::ih(1);
  const auto h2 = test::ih(2);
  EXPECT_FALSE(dir->find(h1));
  EXPECT_EQ(dir->size(), 0u);
  auto a = dir->route(h1);
  ASSERT_TRUE(a);
  EXPECT_EQ(dir->route(h1), a);
  EXPECT_EQ(dir->find(h1), a);
  EXPECT_EQ(dir->size(), 1u);
  EXPECT_FALSE(dir->find(h2));
  EXPECT_EQ(dir->size(), 1u);
  auto b = dir->route(h2);
  EXPECT_NE(a, b);
  EXPECT_EQ(dir->size(), 2u);
  run();
  // The routed actor is the swarm of that hash: it serves announces.
  auto r = test::announce_by_ticket(
      a, test::swarm_announce_of(h1, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stats.incomplete, 1);
  EXPECT_EQ(r->interval, 60);
}

TEST_F(Directory, TypedHandlesAreTheSameActorsAsTheUntypedOnes) {
  const auto sup = dir->start_supervisor(supervisor_config{});
  const auto h = test::ih(0x41);
  EXPECT_FALSE(dir->find_swarm(h));
  const swarm_interface routed = dir->route_swarm(h);
  ASSERT_TRUE(routed);
  EXPECT_EQ(dir->find_swarm(h), routed);
  EXPECT_EQ(dir->route(h), test::untyped(routed));
  EXPECT_EQ(dir->find(h), test::untyped(routed));
  const auto local = dir->local_swarms();
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].first, h);
  EXPECT_EQ(swarm_interface{local[0].second}, routed);
  ASSERT_EQ(dir->snapshot().size(), 1u);
  EXPECT_EQ(dir->snapshot()[0].second, test::untyped(routed));
  // Alone, a swarm is local and its supervisor calls go to this node's
  // supervisor.
  const auto loc = dir->locate(h);
  EXPECT_EQ(loc.swarm, routed);
  EXPECT_EQ(loc.actor, test::untyped(routed));
  EXPECT_FALSE(loc.remote);
  EXPECT_TRUE(loc.owner.empty());
  EXPECT_EQ(loc.supervision, swarm_supervision_interface{sup});
  EXPECT_FALSE(dir->locate(test::ih(0x42)).swarm);
  run();
}

TEST_F(Directory, PrefixSearchLooksAtEverySwarmAndCopiesOnlyMatches) {
  // 600 swarms over 8 stripes: the first byte is (i % 16) << 4 and the
  // second i / 16, so "3" and "30" match the 38 with i % 16 == 3, "31" and
  // "3a" none, "300" the 16 of those with a second byte below 0x10.
  std::vector<info_hash> hashes;
  for (unsigned i = 0; i < 600; ++i) {
    info_hash h = test::ih(0x77, static_cast<std::uint8_t>(i % 256));
    h.bytes[0] = static_cast<std::uint8_t>((i % 16) << 4);
    h.bytes[1] = static_cast<std::uint8_t>(i / 16);
    hashes.push_back(h);
    ASSERT_TRUE(dir->route(h));
  }
  ASSERT_EQ(dir->size(), 600u);
  auto expected = [&](const hash_prefix& p) {
    std::vector<info_hash> out;
    for (const auto& h : hashes)
      if (p.matches(h)) out.push_back(h);
    std::sort(out.begin(), out.end());
    return out;
  };
  auto found = [&](const hash_prefix& p, std::size_t limit) {
    std::vector<info_hash> out;
    for (const auto& e : dir->local_entries_where(
             limit, [&p](const info_hash& h) { return p.matches(h); })) {
      EXPECT_EQ(swarm_interface{e.actor}, dir->find_swarm(e.hash));
      out.push_back(e.hash);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const char* text : {"3", "30", "300", "301", "31", "3a", "f", "f0", "00", "0"}) {
    const hash_prefix p = *parse_hash_prefix(text);
    EXPECT_EQ(found(p, 1000), expected(p)) << text;
  }
  EXPECT_EQ(expected(*parse_hash_prefix("3")).size(), 38u);
  EXPECT_EQ(expected(*parse_hash_prefix("300")).size(), 16u);
  EXPECT_TRUE(expected(*parse_hash_prefix("3a")).empty());
  // A full hash finds its one swarm.
  const hash_prefix whole = *parse_hash_prefix(hashes[599].hex());
  EXPECT_EQ(found(whole, 1000), std::vector<info_hash>{hashes[599]});
  // The limit counts matches: 5 of the 38, each a real match, even though a
  // page of the first 5 swarms listed would hold hardly any of them.
  const auto five = found(*parse_hash_prefix("3"), 5);
  ASSERT_EQ(five.size(), 5u);
  for (const auto& h : five) EXPECT_EQ(h.bytes[0] >> 4, 3);
  run();
}

TEST_F(Directory, ManyHashesSpreadOverStripesAndStayDistinct) {
  std::vector<caf::actor> swarms;
  for (std::uint8_t i = 0; i < 100; ++i) {
    swarms.push_back(dir->route(test::ih(0x30, i)));
  }
  EXPECT_EQ(dir->size(), 100u);
  for (std::uint8_t i = 0; i < 100; ++i) {
    EXPECT_EQ(dir->find(test::ih(0x30, i)), swarms[i]);
  }
  std::sort(swarms.begin(), swarms.end());
  EXPECT_EQ(std::unique(swarms.begin(), swarms.end()), swarms.end());
}

TEST_F(Directory, IdleSwarmLeavesTheDirectoryAndRouteSpawnsAFreshOne) {
  const auto h = test::ih(3);
  auto first = dir->route(h);
  run();
  watch(first);
  auto r = test::announce_by_ticket(
      first, test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_TRUE(r);
  r = test::announce_by_ticket(
      first, test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::stopped),
      [this] { run(); });
  ASSERT_TRUE(r);
  advance(seconds(95));
  EXPECT_EQ(dir->find(h), first);
  advance(seconds(20));
  EXPECT_TRUE(exited(first));
  EXPECT_FALSE(dir->find(h));
  EXPECT_EQ(dir->size(), 0u);
  // A request that raced with the ending gets request_receiver_down...
  auto late = test::announce_by_ticket(
      first, test::swarm_announce_of(h, 2, v4(10, 0, 0, 2, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), caf::sec::request_receiver_down);
  // ...and routing again yields a new, working swarm.
  auto second = dir->route(h);
  ASSERT_TRUE(second);
  EXPECT_NE(second, first);
  run();
  r = test::announce_by_ticket(
      second, test::swarm_announce_of(h, 2, v4(10, 0, 0, 2, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stats.incomplete, 1);
}

TEST_F(Directory, StopAllEndsEverySwarmAndRouteSpawnsNoMore) {
  auto a = dir->route(test::ih(4));
  auto b = dir->route(test::ih(5));
  run();
  watch(a);
  watch(b);
  dir->stop_all();
  run();
  for (const auto& swarm : {a, b}) {
    caf::error reason;
    EXPECT_TRUE(exited(swarm, &reason));
    EXPECT_EQ(reason, caf::exit_reason::user_shutdown);
  }
  EXPECT_EQ(dir->size(), 0u);
  EXPECT_FALSE(dir->find(test::ih(4)));
  EXPECT_FALSE(dir->route(test::ih(6)));
  EXPECT_EQ(dir->size(), 0u);
  dir->stop_all();  // idempotent
}

TEST_F(Directory, DestroyingTheDirectoryStopsItsSwarms) {
  auto swarm = dir->route(test::ih(8));
  run();
  watch(swarm);
  dir.reset();
  run();
  EXPECT_TRUE(exited(swarm));
}

TEST_F(Directory, EndSwarmStopsItAndDropsItsEntry) {
  const auto h = test::ih(0x31);
  auto swarm = dir->route(h);
  run();
  ASSERT_TRUE(test::announce_by_ticket(
      swarm, test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started),
      [this] { run(); }));
  watch(swarm);
  EXPECT_TRUE(dir->end_swarm(h));
  EXPECT_FALSE(dir->find(h)) << "gone at once, before the actor has even run";
  EXPECT_EQ(dir->size(), 0u);
  run();
  caf::error reason;
  ASSERT_TRUE(exited(swarm, &reason));
  EXPECT_EQ(reason, caf::exit_reason::user_shutdown);
  EXPECT_FALSE(dir->end_swarm(h));
  EXPECT_FALSE(dir->end_swarm(test::ih(0x32))) << "never existed";
  // Its peers went with it: a new swarm of the hash starts empty.
  auto fresh = dir->route(h);
  run();
  auto r = test::announce_by_ticket(
      fresh, test::swarm_announce_of(h, 2, v4(10, 0, 0, 2, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stats.incomplete, 1);
}

TEST_F(Directory, RepeatAndEarlyCountsAddUpNodeWideAndOutliveTheirSwarm) {
  auto cfg = short_config();
  cfg.announce_interval = seconds(120);
  cfg.min_interval = seconds(90);  // early: sooner than 60 s (90 - 30 s slack)
  cfg.peer_timeout = seconds(300);
  dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
  const auto h = test::ih(0x33);
  auto announce = [&](const swarm_announce& a) {
    auto r = test::announce_by_ticket(dir->route_swarm(h), a, [this] { run(); });
    ASSERT_TRUE(r) << sys->render(r.error());
    EXPECT_TRUE(r->failure_reason.empty() && r->warning_message.empty());
  };
  dir->route(h);
  run();
  const auto first = test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started);
  announce(first);
  announce(first);  // the same announce again at once: a repeat
  advance(seconds(10));
  auto moved = first;
  moved.request.event = announce_event::none;
  moved.request.downloaded = 64ull << 20;  // news, but only 10 s later: early
  announce(moved);
  auto st = ask<swarm_status>(dir->find(h), status_atom::value);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->repeats, 1u);
  EXPECT_EQ(st->early, 1u);
  EXPECT_EQ(dir->totals().repeats.load(), 1u);
  EXPECT_EQ(dir->totals().early.load(), 1u);
  // The swarm ends: the node's counts stay (a counter never falls), and a
  // new swarm of the hash adds to them.
  ASSERT_TRUE(dir->end_swarm(h));
  run();
  EXPECT_EQ(dir->totals().repeats.load(), 1u);
  announce(first);
  announce(first);
  EXPECT_EQ(dir->totals().repeats.load(), 2u);
  EXPECT_EQ(dir->totals().early.load(), 1u);
}

TEST_F(Directory, InvalidConfigOrStripeCountThrows) {
  swarm_config bad = short_config();
  bad.min_interval = seconds(1000);
  EXPECT_THROW(swarm_directory(*sys, bad), std::invalid_argument);
  try {
    swarm_directory d(*sys, bad);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("min interval"), std::string::npos) << e.what();
  }
  EXPECT_THROW(swarm_directory(*sys, short_config(), 0), std::invalid_argument);
}

TEST_F(Directory, SupervisedSwarmsAreRestartedInPlace) {
  swarm_config cfg = short_config();
  cfg.test_hooks = true;
  dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
  auto sup = dir->start_supervisor(supervisor_config{});
  ASSERT_TRUE(sup);
  EXPECT_EQ(dir->supervisor_handle(), sup);
  EXPECT_EQ(dir->supervisor(), test::untyped(sup));
  EXPECT_EQ(dir->start_supervisor(supervisor_config{}), sup) << "one per directory";
  const auto h = test::ih(9);
  auto first = dir->route(h);
  run();
  ASSERT_TRUE(test::announce_by_ticket(
      first, test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started),
      [this] { run(); }));
  watch(first);
  caf::anon_send(first, crash_atom::value);
  run();
  ASSERT_TRUE(exited(first));
  auto second = dir->find(h);
  ASSERT_TRUE(second);
  EXPECT_NE(second, first);
  EXPECT_EQ(dir->size(), 1u);
  auto r = test::announce_by_ticket(
      second, test::swarm_announce_of(h, 2, v4(10, 0, 0, 2, 1), 1, announce_event::started),
      [this] { run(); });
  ASSERT_TRUE(r);
  EXPECT_EQ(r->stats.incomplete, 2) << "the first peer survived the crash";
  // stop_all ends the supervisor too.
  watch(test::untyped(sup));
  dir->stop_all();
  run();
  caf::error reason;
  EXPECT_TRUE(exited(test::untyped(sup), &reason));
  EXPECT_EQ(reason, caf::exit_reason::user_shutdown);
}

TEST_F(Directory, InvalidSupervisorConfigThrows) {
  supervisor_config bad;
  bad.max_restarts = 0;
  EXPECT_THROW(dir->start_supervisor(bad), std::invalid_argument);
  EXPECT_FALSE(dir->supervisor());
}

// Concurrent routing needs real threads, so a real scheduler.
TEST(DirectoryConcurrency, ConcurrentRoutesOfTheSameHashGetTheSameActor) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  register_message_types(cfg);
  caf::actor_system sys{cfg};
  {
    swarm_directory dir(sys, short_config(), 4);  // few stripes: more contention
    constexpr int threads = 8;
    constexpr int hashes = 300;
    std::vector<std::vector<caf::actor>> seen(threads, std::vector<caf::actor>(hashes));
    std::atomic<int> ready{0};
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::vector<int> order(hashes);
        for (int i = 0; i < hashes; ++i) {
          order[i] = i;
        }
        std::shuffle(order.begin(), order.end(), std::mt19937(static_cast<unsigned>(t)));
        ready.fetch_add(1);
        while (ready.load() < threads) {
        }  // start together
        for (int i : order) {
          const auto h = test::ih(static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i));
          seen[t][i] = (t % 2 == 0 || i % 3 != 0) ? dir.route(h) : dir.find(h);
        }
      });
    }
    for (auto& th : pool) {
      th.join();
    }
    EXPECT_EQ(dir.size(), static_cast<std::size_t>(hashes));
    for (int i = 0; i < hashes; ++i) {
      const auto h = test::ih(static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i));
      const auto owner = dir.find(h);
      ASSERT_TRUE(owner);
      for (int t = 0; t < threads; ++t) {
        // find() may have run before anyone routed; route() never disagrees.
        if (seen[t][i]) {
          ASSERT_EQ(seen[t][i], owner) << "hash " << i << " thread " << t;
        } else {
          ASSERT_TRUE(t % 2 == 1 && i % 3 == 0) << "route returned nothing";
        }
      }
    }
    // The swarms work on the real scheduler too.
    const auto h = test::ih(0, 1);
    auto r = test::announce_and_wait(
        dir.find_swarm(h),
        test::swarm_announce_of(h, 1, v4(10, 0, 0, 1, 1), 1, announce_event::started));
    EXPECT_TRUE(r) << sys.render(r.error());
    if (r) {
      EXPECT_EQ(r->stats.incomplete, 1);
    }
    dir.stop_all();
  }
  // ~actor_system waits for the swarms, which stop_all() ended.
}

}  // namespace
}  // namespace sk
