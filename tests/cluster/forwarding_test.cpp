// The directory in a cluster, in one process: a hash another node owns gets
// a forwarder that asks that node's actor with plain data and settles the
// local reply; an operator move hands a local swarm over with its state.
// The "other node" is a local actor that answers like a node actor.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <caf/all.hpp>

#include "actors/cluster/cluster_messages.hpp"
#include "actors/directory.hpp"

namespace sk::cluster {
namespace {

using namespace std::chrono_literals;

struct fake_node_state {
  std::atomic<int> announces{0};
  std::atomic<int> scrapes{0};
  std::atomic<std::size_t> migrated_peers{0};
  std::atomic<int> migrations{0};
};

caf::behavior fake_node(caf::event_based_actor*, std::shared_ptr<fake_node_state> st) {
  return {
      [st](announce_atom, const swarm_announce&, std::uint8_t hops) {
        ++st->announces;
        announce_result r;
        r.interval = 1234;  // a marker: this answer came from the "owner"
        r.min_interval = hops;
        return r;
      },
      [st](scrape_atom, const info_hash&, std::uint8_t) {
        ++st->scrapes;
        return swarm_stats{7, 8, 9};
      },
      [st](caf::migrate_atom, caf::put_atom, const swarm_snapshot& s) {
        st->migrated_peers = s.peers.size();
        ++st->migrations;
        return caf::ok_atom::value;
      },
  };
}

info_hash hash_owned_by(const std::string& owner, const cluster_view& v, std::uint8_t seed) {
  info_hash h;
  for (int i = 0;; ++i) {
    h.bytes.fill(seed);
    h.bytes[0] = static_cast<std::uint8_t>(i);
    h.bytes[1] = static_cast<std::uint8_t>(i >> 8);
    if (v.owner(h) == owner) return h;
  }
}

swarm_announce announce_for(const info_hash& h, std::uint32_t i) {
  swarm_announce a;
  a.request.hash = h;
  a.request.id.bytes.fill(static_cast<std::uint8_t>(i));
  a.request.port = static_cast<std::uint16_t>(7000 + i);
  a.request.left = 10;
  a.request.compact = true;
  a.request.event = announce_event::started;
  a.peer.ip = ip_address::make_v4(0x0a000000u + i);
  a.peer.port = a.request.port;
  return a;
}

class ticket final : public announce_ticket {
 public:
  ticket(swarm_announce a, std::shared_ptr<std::atomic<std::int64_t>> out)
      : announce_ticket(std::move(a)), out_(std::move(out)) {}
  void complete(const announce_result& r) override { *out_ = r.interval; }
  void fail() override { *out_ = -1; }

 private:
  std::shared_ptr<std::atomic<std::int64_t>> out_;
};

class ForwardingTest : public ::testing::Test {
 protected:
  ForwardingTest() {
    register_message_types(cfg_);
    register_types(cfg_);
    cfg_.set("scheduler.max-threads", 2);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    node_state_ = std::make_shared<fake_node_state>();
    node_ = sys_->spawn(fake_node, node_state_);
    auto v = std::make_shared<cluster_view>();
    v->self = "a";
    v->names = {"a", "b"};
    v->nodes["b"] = node_;
    view_ = v;
    dir_ = std::make_unique<swarm_directory>(*sys_, swarm_config{});
    dir_->set_view(view_);
  }
  ~ForwardingTest() override {
    dir_->stop_all();
    caf::anon_send_exit(node_, caf::exit_reason::user_shutdown);
  }
  template <class Pred>
  bool eventually(Pred p) {
    for (int i = 0; i < 1000; ++i) {
      if (p()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return p();
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::shared_ptr<fake_node_state> node_state_;
  caf::actor node_;
  cluster_view_ptr view_;
  std::unique_ptr<swarm_directory> dir_;
};

TEST_F(ForwardingTest, RemoteHashIsForwardedAndSettledLocally) {
  const auto h = hash_owned_by("b", *view_, 1);
  auto fwd = dir_->route(h);
  ASSERT_TRUE(fwd);
  EXPECT_EQ(dir_->size(), 0u);  // a forwarder is not a local swarm
  EXPECT_EQ(dir_->find(h), fwd);
  // Request path (HTTP bridge): the owner's answer comes straight back.
  caf::scoped_actor self{*sys_};
  std::int64_t interval = 0;
  self->request(fwd, 5s, announce_atom::value, announce_for(h, 1))
      .receive([&](const announce_result& r) { interval = r.interval; },
               [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(interval, 1234);
  // Ticket path (UDP): settled on this node with the owner's answer.
  auto out = std::make_shared<std::atomic<std::int64_t>>(0);
  caf::anon_send(fwd, announce_atom::value,
                 announce_ticket_ptr(std::make_shared<ticket>(announce_for(h, 2), out)));
  EXPECT_TRUE(eventually([&] { return out->load() == 1234; }));
  // Scrape.
  swarm_stats st;
  self->request(fwd, 5s, scrape_atom::value)
      .receive([&](const swarm_stats& s) { st = s; },
               [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(st.complete, 7);
  EXPECT_EQ(node_state_->announces.load(), 2);
  EXPECT_EQ(node_state_->scrapes.load(), 1);
}

TEST_F(ForwardingTest, LocalHashIsServedHere) {
  const auto h = hash_owned_by("a", *view_, 2);
  auto swarm = dir_->route(h);
  ASSERT_TRUE(swarm);
  EXPECT_EQ(dir_->size(), 1u);
  caf::scoped_actor self{*sys_};
  bool answered = false;
  self->request(swarm, 5s, announce_atom::value, announce_for(h, 1))
      .receive([&](const announce_result& r) { answered = r.interval != 1234; },
               [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_TRUE(answered);
  EXPECT_EQ(node_state_->announces.load(), 0);
}

TEST_F(ForwardingTest, OperatorMoveHandsTheWholeSwarmOver) {
  const auto h = hash_owned_by("a", *view_, 3);
  auto swarm = dir_->route(h);
  caf::scoped_actor self{*sys_};
  for (std::uint32_t i = 0; i < 5; ++i)
    self->request(swarm, 5s, announce_atom::value, announce_for(h, i))
        .receive([](const announce_result&) {}, [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(dir_->move(h, "nosuch"), "unknown member 'nosuch'");
  EXPECT_EQ(dir_->move(h, "a"), "the swarm is on a already");
  ASSERT_EQ(dir_->move(h, "b"), "");
  EXPECT_EQ(dir_->size(), 0u);
  // An announce sent during the move waits for the handoff, then goes to
  // the new owner.
  std::int64_t interval = 0;
  self->request(dir_->route(h), 5s, announce_atom::value, announce_for(h, 9))
      .receive([&](const announce_result& r) { interval = r.interval; },
               [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(interval, 1234);
  EXPECT_EQ(node_state_->migrations.load(), 1);
  EXPECT_EQ(node_state_->migrated_peers.load(), 5u);
  EXPECT_TRUE(eventually([&] { return dir_->handoffs_pending() == 0; }));
  EXPECT_EQ(dir_->move(h, "b"), "no local swarm for this info_hash");
}

TEST_F(ForwardingTest, ViewChangeHandsTheSwarmToItsNewOwner) {
  // Alone first: everything is local.
  dir_->set_view(nullptr);
  const auto h = hash_owned_by("b", *view_, 4);
  auto swarm = dir_->route(h);
  caf::scoped_actor self{*sys_};
  self->request(swarm, 5s, announce_atom::value, announce_for(h, 1))
      .receive([](const announce_result&) {}, [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(dir_->size(), 1u);
  // b joins and owns h: the swarm moves with its peer.
  EXPECT_EQ(dir_->set_view(view_), 1u);
  EXPECT_TRUE(eventually([&] { return node_state_->migrations.load() == 1; }));
  EXPECT_EQ(node_state_->migrated_peers.load(), 1u);
  EXPECT_EQ(dir_->size(), 0u);
}

}  // namespace
}  // namespace sk::cluster
