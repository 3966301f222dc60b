/// Each cap through the gateway, on the real directory and real swarm
/// actors: the node's swarms, the node's peers, the peers of one swarm and
/// the new-swarm budget of an address. At a cap a new torrent or a new peer
/// is refused with the gateway's text and `retry in`; existing swarms and
/// known peers are served; the census counts, and the cap clears when what
/// filled it goes.
///
/// CAF's real scheduler; waits for answers are on a condition with a
/// deadline, no sleeps.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "net/gateway.hpp"
#include "runtime/directory.hpp"
#include "tracker/node_census.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;

info_hash hash_of(std::uint32_t n) {
  info_hash h;
  h.bytes.fill(0x5a);
  for (int i = 0; i < 4; ++i) h.bytes[i] = static_cast<std::uint8_t>(n >> (8 * i));
  return h;
}

peer_id peer_of(std::uint32_t n) {
  peer_id p;
  p.bytes.fill('p');
  for (int i = 0; i < 4; ++i) p.bytes[16 + i] = static_cast<std::uint8_t>(n >> (8 * i));
  return p;
}

/// One answer: a swarm's result or the gateway's refusal.
struct answer {
  bool refused = false;
  gateway_refusal why = gateway_refusal::swarm_unavailable;
  std::int64_t retry_in = 0;
  announce_result result;
};

class answers {
 public:
  // Notifies under the lock: the waiter may return and destroy this object
  // as soon as it can take the lock, so the notify must be over by then.
  void push(answer a) {
    std::lock_guard<std::mutex> lock{mtx_};
    q_.push_back(std::move(a));
    cv_.notify_all();
  }
  answer next() {
    std::unique_lock<std::mutex> lock{mtx_};
    if (!cv_.wait_for(lock, 10s, [&] { return !q_.empty(); }))
      throw std::runtime_error("no answer within the deadline");
    answer a = std::move(q_.front());
    q_.pop_front();
    return a;
  }

 private:
  std::mutex mtx_;
  std::condition_variable cv_;
  std::deque<answer> q_;
};

class reply final : public announce_reply {
 public:
  explicit reply(answers& a) : a_(a) {}
  void on_result(const announce_result& r) override {
    answer x;
    x.result = r;
    a_.push(std::move(x));
  }
  void on_refusal(gateway_refusal why, std::int64_t retry_in) override {
    answer x;
    x.refused = true;
    x.why = why;
    x.retry_in = retry_in;
    a_.push(std::move(x));
  }

 private:
  answers& a_;
};

class GatewayCaps : public ::testing::Test {
 protected:
  void start(node_caps caps, std::size_t peers_per_swarm, std::uint32_t burst = 1000) {
    swarm_config sc;
    sc.max_peers = peers_per_swarm;
    census_ = std::make_shared<node_census>(caps);
    dir_.emplace(sys_, sc, node_shared{nullptr, census_});
    gateway_config gc;
    gc.retry_in_minutes = 2;
    gc.new_swarm_burst = burst;
    gc.new_swarms_per_minute = 1;
    gw_.emplace(sys_, *dir_, gc);
    lane_ = gw_->add_lanes(1);
  }

  ~GatewayCaps() override {
    gw_.reset();
    if (dir_) dir_->stop_all();
  }

  /// Announces `hash` as peer `peer` from 10.0.0.`source` and waits.
  answer announce(std::uint32_t hash, std::uint32_t peer, std::uint32_t source = 1,
                  announce_event ev = announce_event::none) {
    announce_request r;
    r.hash = hash_of(hash);
    r.id = peer_of(peer);
    r.port = static_cast<std::uint16_t>(6000 + peer % 1000);
    r.left = 100;
    r.event = ev;
    gw_->announce(lane_, transport::udp, std::move(r), ip_address::make_v4(0x0a000000u + source),
                  false, std::make_shared<reply>(answers_));
    gw_->flush(lane_);
    return answers_.next();
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_{cfg_};
  std::shared_ptr<node_census> census_;
  std::optional<swarm_directory> dir_;
  std::optional<gateway> gw_;
  std::size_t lane_ = 0;
  answers answers_;
};

TEST_F(GatewayCaps, AtTheSwarmCapANewTorrentIsRefusedAndExistingOnesServed) {
  node_caps caps;
  caps.max_swarms = 3;
  start(caps, 100);
  for (std::uint32_t h = 1; h <= 3; ++h) ASSERT_FALSE(announce(h, h, h).refused) << h;
  EXPECT_EQ(census_->swarms(), 3);
  EXPECT_EQ(census_->reached(node_cap::swarms), 0);

  const answer refused = announce(4, 4, 4);
  ASSERT_TRUE(refused.refused);
  EXPECT_EQ(refused.why, gateway_refusal::swarm_limit);
  EXPECT_EQ(refused.retry_in, 2);
  EXPECT_EQ(dir_->size(), 3u) << "nothing was created for the refused torrent";
  EXPECT_EQ(census_->refusals(node_cap::swarms), 1u);
  EXPECT_EQ(census_->reached(node_cap::swarms), 1);
  EXPECT_EQ(gw_->counters(transport::udp).capped, 1u);

  // An existing swarm serves a new peer and hands out the old one.
  const answer served = announce(1, 50, 9);
  ASSERT_FALSE(served.refused) << refusal_text(served.why);
  EXPECT_EQ(served.result.stats.incomplete, 2);
  EXPECT_EQ(served.result.peers4.size(), 6u);

  // A swarm that goes makes room: the cap clears and a new torrent is taken.
  ASSERT_TRUE(dir_->end_swarm(hash_of(2)));
  EXPECT_EQ(census_->swarms(), 2);
  EXPECT_EQ(census_->reached(node_cap::swarms), 0);
  EXPECT_FALSE(announce(5, 5, 5).refused);
  EXPECT_EQ(census_->swarms(), 3);
}

TEST_F(GatewayCaps, AFullSwarmRefusesNewPeersAndServesKnownOnes) {
  start(node_caps{}, 3);
  for (std::uint32_t p = 1; p <= 3; ++p) ASSERT_FALSE(announce(1, p).refused) << p;
  const answer full = announce(1, 4);
  ASSERT_TRUE(full.refused);
  EXPECT_EQ(full.why, gateway_refusal::swarm_full);
  EXPECT_EQ(full.retry_in, 2);
  EXPECT_EQ(census_->refusals(node_cap::swarm_peers), 1u);
  EXPECT_EQ(census_->reached(node_cap::swarm_peers), 1) << "one swarm at its cap";
  EXPECT_EQ(census_->peers(), 3);

  // Known peers keep announcing and get the others.
  const answer known = announce(1, 2);
  ASSERT_FALSE(known.refused);
  EXPECT_EQ(known.result.stats.incomplete, 3);
  EXPECT_EQ(known.result.peers4.size(), 12u);
  // Another swarm is not affected.
  EXPECT_FALSE(announce(2, 4).refused);

  // A peer leaves: room for one, the swarm is below its cap again.
  ASSERT_FALSE(announce(1, 1, 1, announce_event::stopped).refused);
  EXPECT_EQ(census_->reached(node_cap::swarm_peers), 0);
  EXPECT_FALSE(announce(1, 4).refused);
}

TEST_F(GatewayCaps, AFullNodeRefusesNewPeersEverywhereAndClearsWhenOneLeaves) {
  node_caps caps;
  caps.max_peers = 4;
  start(caps, 100);
  ASSERT_FALSE(announce(1, 1).refused);
  ASSERT_FALSE(announce(1, 2).refused);
  ASSERT_FALSE(announce(2, 3).refused);
  ASSERT_FALSE(announce(3, 4).refused);
  EXPECT_EQ(census_->peers(), 4);

  for (std::uint32_t h : {1u, 2u, 4u}) {
    const answer a = announce(h, 10 + h);
    ASSERT_TRUE(a.refused) << h;
    EXPECT_EQ(a.why, gateway_refusal::peer_limit);
    EXPECT_EQ(a.retry_in, 2);
  }
  EXPECT_EQ(census_->refusals(node_cap::peers), 3u);
  EXPECT_EQ(census_->reached(node_cap::peers), 1);
  EXPECT_EQ(census_->peers(), 4) << "a refused peer is not stored";

  // Known peers are served.
  const answer known = announce(1, 1);
  ASSERT_FALSE(known.refused);
  EXPECT_EQ(known.result.peers4.size(), 6u);

  // One leaves: the node is below its cap and takes a new peer.
  ASSERT_FALSE(announce(2, 3, 1, announce_event::stopped).refused);
  EXPECT_EQ(census_->peers(), 3);
  EXPECT_EQ(census_->reached(node_cap::peers), 0);
  EXPECT_FALSE(announce(1, 20).refused);
  EXPECT_EQ(census_->peers(), 4);
}

TEST_F(GatewayCaps, AnAddressOverItsBudgetCreatesNoMoreSwarmsButUsesExistingOnes) {
  start(node_caps{}, 100, 2);
  ASSERT_FALSE(announce(1, 1, 7).refused);
  ASSERT_FALSE(announce(2, 1, 7).refused);
  const answer spent = announce(3, 1, 7);
  ASSERT_TRUE(spent.refused);
  EXPECT_EQ(spent.why, gateway_refusal::new_swarm_budget);
  EXPECT_EQ(spent.retry_in, 2);
  EXPECT_EQ(dir_->size(), 2u);
  EXPECT_EQ(census_->refusals(node_cap::new_swarm_budget), 1u);
  EXPECT_EQ(census_->reached(node_cap::new_swarm_budget), 1);

  // The same address may still announce to swarms that exist, and another
  // address may create the torrent it could not.
  EXPECT_FALSE(announce(1, 2, 7).refused);
  EXPECT_FALSE(announce(3, 1, 8).refused);
  EXPECT_EQ(dir_->size(), 3u);
  // A refill time without refusals clears the "reached" state.
  gw_->sweep(lane_, std::chrono::steady_clock::now() + 10min);
  EXPECT_EQ(census_->reached(node_cap::new_swarm_budget), 0);
}

}  // namespace
}  // namespace sk
