// The node actor's rooms on CAF's deterministic test scheduler, with the
// simulated clock and an injected wall clock: a swarm that arrives is
// installed and recorded (operator move or membership), and when a member's
// connection drops for longer than the connection timeout its replicas are
// taken over; a member that says it leaves is not dialled again, and a
// leaving node dials nobody. No network: the test's node has no seeds and
// the test system loads no TLS manager, so a dial would throw inside the
// node actor and end it (every test asks the node afterwards).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "cluster/cluster_messages.hpp"
#include "cluster/node.hpp"
#include "cluster/placement.hpp"
#include "runtime/directory.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "test_util.hpp"
#include "tracker/swarm_core.hpp"

namespace sk::cluster {
namespace {

using namespace std::chrono_literals;

/// The wall clock the node records arrivals with.
const auto wall_now = std::chrono::system_clock::time_point{} + 1700000000s;

swarm_snapshot snapshot_with_peers(const info_hash& h, std::uint32_t n, health_time now) {
  swarm_core core(h, test::short_config(5), 1);
  announce_result res;
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto a = test::swarm_announce_of(
        h, i + 1, test::v4(10, 0, 0, static_cast<std::uint8_t>(i + 1), 6000 + i), 10,
        announce_event::started);
    reset_result(res);
    EXPECT_TRUE(core.announce(a, now, res));
  }
  return take_snapshot(core, now);
}

class NodeActor : public test::caf_fixture {
 protected:
  NodeActor() {
    dir = std::make_unique<swarm_directory>(*sys, test::short_config(5), 4);
    dir->set_placement(make_placement(*sys));
  }
  ~NodeActor() override {
    dir->stop_all();
    run();
  }

  node_actor spawn(const std::string& name) {
    cluster_config cfg;
    cfg.node_name = name;
    member_info me{name, "127.0.0.1", 7000, 1};
    auto node = spawn_node_actor(*sys, *dir, cfg, me, [] { return wall_now; });
    track(caf::actor_cast<caf::actor>(node));
    run();
    return node;
  }

  node_status status(const node_actor& node) {
    auto st = ask<node_status>(caf::actor_cast<caf::actor>(node), node_status_atom::value);
    EXPECT_TRUE(st) << sys->render(st.error());
    return st ? *st : node_status{};
  }

  std::unique_ptr<swarm_directory> dir;
};

TEST_F(NodeActor, AnArrivingSwarmIsInstalledAndRecordedOnTheInjectedWallClock) {
  auto node = spawn("n2");
  const auto h = test::ih(0x61);
  const auto other = test::ih(0x62);
  const auto now = sched->clock().now();
  // An operator move announced first: its arrival is labelled "operator".
  caf::anon_send(node, movenote_atom::value, h, std::string("m1"));
  run();
  auto ok = ask<caf::ok_atom>(caf::actor_cast<caf::actor>(node), caf::migrate_atom::value,
                              caf::put_atom::value, snapshot_with_peers(h, 3, now));
  ASSERT_TRUE(ok) << sys->render(ok.error());
  ok = ask<caf::ok_atom>(caf::actor_cast<caf::actor>(node), caf::migrate_atom::value,
                         caf::put_atom::value, snapshot_with_peers(other, 2, now));
  ASSERT_TRUE(ok);
  EXPECT_EQ(dir->size(), 2u);
  auto installed =
      ask<swarm_status>(caf::actor_cast<caf::actor>(dir->find_swarm(h)), status_atom::value);
  ASSERT_TRUE(installed);
  EXPECT_EQ(installed->peer_count, 3u);
  const auto st = status(node);
  EXPECT_EQ(st.name, "n2");
  EXPECT_EQ(st.swarms, 2u);
  ASSERT_EQ(st.members.size(), 1u);
  EXPECT_EQ(st.members[0].state, "live");
  ASSERT_EQ(st.migrations.size(), 2u);
  EXPECT_EQ(st.migrations[0].hash, h.hex());
  EXPECT_EQ(st.migrations[0].reason, "operator");
  EXPECT_EQ(st.migrations[0].to, "n2");
  EXPECT_EQ(st.migrations[0].peers, 3u);
  EXPECT_EQ(st.migrations[0].finished_ms, 1700000000000u);
  EXPECT_EQ(st.migrations[1].reason, "membership");
  EXPECT_EQ(st.migrations[1].from, "") << "not sent by a member";
  // Every arrival is counted by reason (/metrics), beyond the bounded ring.
  using arrival = std::pair<std::string, std::uint64_t>;
  EXPECT_EQ(st.arrivals, (std::vector<arrival>{{"membership", 1}, {"operator", 1}}));
}

TEST_F(NodeActor, ALeavingNodeTakesNoSwarmIn) {
  auto node = spawn("n2");
  const auto now = sched->clock().now();
  auto before = ask<caf::ok_atom>(caf::actor_cast<caf::actor>(node), caf::migrate_atom::value,
                                  caf::put_atom::value, snapshot_with_peers(test::ih(0x71), 2, now));
  ASSERT_TRUE(before);
  // Alone: the leave has nothing to hand over and is over at once.
  auto moved = ask<std::uint64_t>(caf::actor_cast<caf::actor>(node), caf::leave_atom::value);
  ASSERT_TRUE(moved) << sys->render(moved.error());
  EXPECT_EQ(*moved, 0u);
  // A swarm sent now is refused: its sender keeps it (and writes it to its
  // own state file) instead of giving it to a node about to stop.
  auto after = ask<caf::ok_atom>(caf::actor_cast<caf::actor>(node), caf::migrate_atom::value,
                                 caf::put_atom::value, snapshot_with_peers(test::ih(0x72), 2, now));
  EXPECT_FALSE(after);
  EXPECT_EQ(dir->size(), 1u);
  EXPECT_FALSE(dir->find_swarm(test::ih(0x72)));
  EXPECT_EQ(status(node).migrations.size(), 1u);
}

TEST_F(NodeActor, ReplicasOfAMemberLostForTheConnectionTimeoutAreTakenOver) {
  auto node = spawn("n2");
  // A member m1 joins (its node actor: a stand-in that drops what it gets)
  // and sends a replica of one of its swarms.
  const auto h = test::ih(0x63);
  auto snap = snapshot_with_peers(h, 4, sched->clock().now());
  auto m1 = sys->spawn([node, snap](caf::event_based_actor* self) -> caf::behavior {
    self->set_default_handler(caf::drop);
    self->request(node, caf::infinite, caf::join_atom::value,
                  member_info{"m1", "127.0.0.2", 7001, 1})
        .then([self, node, snap](const std::vector<member_info>&) {
          self->send(node, replica_atom::value, std::string("m1"), snap);
        });
    return {[](caf::ok_atom) {}};
  });
  run();
  auto members = ask<std::vector<std::string>>(caf::actor_cast<caf::actor>(node),
                                               members_atom::value, caf::get_atom::value);
  ASSERT_TRUE(members);
  EXPECT_EQ(*members, (std::vector<std::string>{"m1", "n2"}));
  EXPECT_EQ(dir->size(), 0u);
  // Its connection drops: a suspect (still an owner) until the connection
  // timeout passes on the node's clock, then gone: its replica is installed
  // here, the owner now.
  caf::anon_send_exit(m1, caf::exit_reason::kill);
  run();
  auto st = status(node);
  ASSERT_EQ(st.members.size(), 2u);
  EXPECT_EQ(st.members[0].name, "m1");
  EXPECT_EQ(st.members[0].state, "suspect");
  EXPECT_EQ(dir->size(), 0u);
  advance(std::chrono::duration_cast<std::chrono::seconds>(cluster_config{}.connection_timeout) +
          1s);
  st = status(node);
  EXPECT_EQ(st.members[0].state, "gone");
  EXPECT_EQ(dir->size(), 1u);
  ASSERT_EQ(st.migrations.size(), 1u);
  EXPECT_EQ(st.migrations[0].from, "m1");
  EXPECT_EQ(st.migrations[0].reason, "crash-replica");
  EXPECT_EQ(st.migrations[0].peers, 4u);
  EXPECT_EQ(st.migrations[0].finished_ms, 1700000000000u);
  auto taken =
      ask<swarm_status>(caf::actor_cast<caf::actor>(dir->find_swarm(h)), status_atom::value);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->peer_count, 4u);
}

/// A member's node actor stand-in: joins `node` as `me` and drops what it
/// gets afterwards.
caf::actor join_as(caf::actor_system& sys, const node_actor& node, member_info me) {
  return sys.spawn([node, me](caf::event_based_actor* self) -> caf::behavior {
    self->set_default_handler(caf::drop);
    self->request(node, caf::infinite, caf::join_atom::value, me)
        .then([](const std::vector<member_info>&) {});
    return {[](caf::ok_atom) {}};
  });
}

TEST_F(NodeActor, AMemberThatLeftIsNotDialledUntilANewerIncarnationIsHeardOf) {
  auto node = spawn("n2");
  // z9 sorts after n2: n2 is the side that dials it whenever it is not live.
  auto z9 = join_as(*sys, node, member_info{"z9", "127.0.0.9", 7009, 1});
  run();
  ASSERT_EQ(status(node).members.size(), 2u);
  EXPECT_EQ(status(node).members[1].state, "live");
  // It says it leaves, then its process ends (the connection drops).
  caf::anon_send(caf::actor_cast<caf::actor>(node), caf::leave_atom::value, std::string("z9"));
  run();
  caf::anon_send_exit(z9, caf::exit_reason::kill);
  run();
  // Several reconnect periods and past the connection timeout: no dial (it
  // would have ended the node actor), and it is listed as left.
  advance(std::chrono::duration_cast<std::chrono::seconds>(cluster_config{}.connection_timeout) +
          5s);
  auto st = status(node);
  ASSERT_EQ(st.members.size(), 2u);
  EXPECT_EQ(st.members[1].name, "z9");
  EXPECT_EQ(st.members[1].state, "left");
  auto members = ask<std::vector<std::string>>(caf::actor_cast<caf::actor>(node),
                                               members_atom::value, caf::get_atom::value);
  ASSERT_TRUE(members);
  EXPECT_EQ(*members, std::vector<std::string>{"n2"});
  // It starts again (a newer incarnation) and dials here: live again.
  auto again = join_as(*sys, node, member_info{"z9", "127.0.0.9", 7009, 2});
  run();
  st = status(node);
  ASSERT_EQ(st.members.size(), 2u);
  EXPECT_EQ(st.members[1].state, "live");
  caf::anon_send(caf::actor_cast<caf::actor>(node), caf::leave_atom::value, std::string("z9"));
  caf::anon_send_exit(again, caf::exit_reason::kill);
  run();
  EXPECT_EQ(status(node).members[1].state, "left");
}

TEST_F(NodeActor, ALeavingNodeDialsNobody) {
  auto node = spawn("n2");
  auto z9 = join_as(*sys, node, member_info{"z9", "127.0.0.9", 7009, 1});
  run();
  ASSERT_EQ(status(node).members[1].state, "live");
  // n2 leaves (nothing to hand over), then z9's connection drops: a node
  // that is not leaving dials it again at once; this one must not.
  auto moved = ask<std::uint64_t>(caf::actor_cast<caf::actor>(node), caf::leave_atom::value);
  ASSERT_TRUE(moved) << sys->render(moved.error());
  caf::anon_send_exit(z9, caf::exit_reason::kill);
  run();
  // Two reconnect periods within the connection timeout, then past it.
  advance(2s);
  auto st = status(node);
  ASSERT_EQ(st.members.size(), 2u);
  EXPECT_EQ(st.members[1].state, "suspect");
  advance(std::chrono::duration_cast<std::chrono::seconds>(cluster_config{}.connection_timeout));
  st = status(node);
  ASSERT_EQ(st.members.size(), 2u);
  EXPECT_EQ(st.members[1].state, "gone");
}

}  // namespace
}  // namespace sk::cluster
