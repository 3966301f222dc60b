// Message types survive CAF serialization (they must, to cross nodes) and
// are registered under stable names.

#include "runtime/messages.hpp"

#include <gtest/gtest.h>

#include "announces.hpp"
#include "serialization.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using test::pid;
using test::v4;
using test::v6;

struct Messages : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  Messages() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  /// Serializes `msg` as a caf::message and reads it back.
  caf::message round_trip(const caf::message& msg) { return test::round_trip(*sys, msg); }
};

swarm_announce sample_announce(bool with_claimed_ip) {
  swarm_announce a = test::swarm_announce_of(test::ih(0xab, 7), pid(42), v4(192, 0, 2, 1, 6881),
                                             999, announce_event::completed);
  a.request.uploaded = 1ULL << 40;
  a.request.downloaded = 12345;
  a.request.compact = false;
  a.request.no_peer_id = true;
  a.request.key = std::string("k\0y", 3);
  a.request.tracker_id = "tid";
  if (with_claimed_ip) {
    a.request.claimed_ip = v6(1, 2, 0).ip;
  }
  a.own_family_only = true;
  return a;
}

void expect_same(const swarm_announce& x, const swarm_announce& y) {
  EXPECT_EQ(x.own_family_only, y.own_family_only);
  EXPECT_EQ(x.request.hash, y.request.hash);
  EXPECT_EQ(x.request.id, y.request.id);
  EXPECT_EQ(x.request.port, y.request.port);
  EXPECT_EQ(x.request.uploaded, y.request.uploaded);
  EXPECT_EQ(x.request.downloaded, y.request.downloaded);
  EXPECT_EQ(x.request.left, y.request.left);
  EXPECT_EQ(x.request.numwant, y.request.numwant);
  EXPECT_EQ(x.request.event, y.request.event);
  EXPECT_EQ(x.request.compact, y.request.compact);
  EXPECT_EQ(x.request.no_peer_id, y.request.no_peer_id);
  EXPECT_EQ(x.request.key, y.request.key);
  EXPECT_EQ(x.request.tracker_id, y.request.tracker_id);
  EXPECT_EQ(x.request.claimed_ip.has_value(), y.request.claimed_ip.has_value());
  if (x.request.claimed_ip && y.request.claimed_ip) {
    EXPECT_EQ(*x.request.claimed_ip, *y.request.claimed_ip);
  }
  EXPECT_EQ(x.peer, y.peer);
}

TEST_F(Messages, AnnounceRoundTripsWithAndWithoutClaimedIp) {
  for (bool claimed : {true, false}) {
    const auto a = sample_announce(claimed);
    auto out = round_trip(caf::make_message(announce_atom::value, a));
    ASSERT_TRUE((out.match_elements<announce_atom, swarm_announce>()));
    expect_same(a, out.get_as<swarm_announce>(1));
  }
}

TEST_F(Messages, ResultRoundTrips) {
  announce_result r;
  r.stats = {3, 4, 5};
  r.interval = 1800;
  r.min_interval = 900;
  r.peers4 = std::string("\x0a\0\0\x01\x1a\xe1", 6);
  r.peers6 = std::string(18, '\x7f');
  r.peers.push_back(peer_entry{pid(1), v4(10, 0, 0, 1, 1)});
  r.peers.push_back(peer_entry{pid(2), v6(3, 4, 5)});
  r.warning_message = "slow down";
  r.failure_reason = "banned client";
  r.retry_in_minutes = -1;
  auto out = round_trip(caf::make_message(r));
  ASSERT_TRUE(out.match_elements<announce_result>());
  const auto& y = out.get_as<announce_result>(0);
  EXPECT_EQ(y.stats.complete, 3);
  EXPECT_EQ(y.stats.incomplete, 4);
  EXPECT_EQ(y.stats.downloaded, 5);
  EXPECT_EQ(y.interval, 1800);
  EXPECT_EQ(y.min_interval, 900);
  EXPECT_EQ(y.peers4, r.peers4);
  EXPECT_EQ(y.peers6, r.peers6);
  ASSERT_EQ(y.peers.size(), 2u);
  EXPECT_EQ(y.peers[1].id, pid(2));
  EXPECT_EQ(y.peers[1].ep, v6(3, 4, 5));
  EXPECT_EQ(y.warning_message, "slow down");
  EXPECT_EQ(y.failure_reason, "banned client");
  EXPECT_EQ(y.retry_in_minutes, -1);
}

TEST_F(Messages, TypesAreRegisteredUnderStableNames) {
  for (const char* name :
       {"sk::info_hash", "sk::peer_id", "sk::ip_address", "sk::endpoint", "sk::peer_entry",
        "sk::swarm_stats", "sk::announce_request", "sk::swarm_announce", "sk::announce_result"}) {
    EXPECT_NE(sys->types().make_value(name), nullptr) << name;
  }
}

TEST_F(Messages, MessagesPrint) {
  // Rendering for logs and CAF errors goes through inspect() too.
  auto text = caf::deep_to_string(sample_announce(true));
  EXPECT_NE(text.find("swarm_announce"), std::string::npos) << text;
  EXPECT_NE(text.find("6881"), std::string::npos) << text;
}

}  // namespace
}  // namespace sk
