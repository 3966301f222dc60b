// The directory in a cluster, in one process: a hash another node owns gets
// a forwarder (the cluster's placement) that asks that node's actor with
// plain data and settles the local ticket; an operator move hands a local
// swarm over with its state. The "other node" is a local actor that answers
// like a node actor, or (RemoteCallsTest) a second directory behind the
// node actor's own relay room.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <caf/all.hpp>

#include <future>
#include <optional>

#include "cluster/cluster_messages.hpp"
#include "cluster/placement.hpp"
#include "cluster/remote_calls.hpp"
#include "cluster/view.hpp"
#include "runtime/directory.hpp"
#include "announces.hpp"

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

/// Peer `i` (every id byte `i`; 10.0.0.i, port 7000 + i) starts on `h`.
swarm_announce announce_for(const info_hash& h, std::uint32_t i) {
  peer_id id;
  id.bytes.fill(static_cast<std::uint8_t>(i));
  const endpoint from{ip_address::make_v4(0x0a000000u + i), static_cast<std::uint16_t>(7000 + i)};
  return test::swarm_announce_of(h, id, from, 10, announce_event::started);
}

/// A ticket whose outcome a test thread waits for: the result,
/// `sec::invalid_argument` (failed) or `sec::request_receiver_down`
/// (dropped unread).
class waited_ticket final : public announce_ticket {
 public:
  waited_ticket(swarm_announce a, std::promise<caf::expected<announce_result>> done)
      : announce_ticket(std::move(a)), done_(std::move(done)) {}
  ~waited_ticket() override {
    if (!settled_) done_.set_value(caf::make_error(caf::sec::request_receiver_down));
  }
  void complete(const announce_result& r) override { settle(r); }
  void fail() override { settle(caf::make_error(caf::sec::invalid_argument)); }

 private:
  void settle(caf::expected<announce_result> x) {
    if (settled_) return;
    settled_ = true;
    done_.set_value(std::move(x));
  }
  std::promise<caf::expected<announce_result>> done_;
  bool settled_ = false;
};

class waited_scrape final : public scrape_ticket {
 public:
  explicit waited_scrape(std::promise<std::optional<swarm_stats>> done) : done_(std::move(done)) {}
  ~waited_scrape() override {
    if (!settled_) done_.set_value(std::nullopt);
  }
  void complete(const swarm_stats& s) override {
    if (settled_) return;
    settled_ = true;
    done_.set_value(s);
  }

 private:
  std::promise<std::optional<swarm_stats>> done_;
  bool settled_ = false;
};

/// Sends `a` to `to` as a ticket (as the gateway does) and waits for how it
/// ends (at most 10 s: then `sec::request_timeout`).
template <class Handle>
caf::expected<announce_result> announce_to(const Handle& to, swarm_announce a) {
  std::promise<caf::expected<announce_result>> done;
  auto outcome = done.get_future();
  caf::anon_send(
      to, announce_atom::value,
      announce_ticket_ptr(std::make_shared<waited_ticket>(std::move(a), std::move(done))));
  if (outcome.wait_for(10s) != std::future_status::ready)
    return caf::make_error(caf::sec::request_timeout);
  return outcome.get();
}

/// Scrapes `to` with a ticket and waits: the counts, or nothing (dropped:
/// the client counts zeros).
template <class Handle>
std::optional<swarm_stats> scrape_of(const Handle& to) {
  std::promise<std::optional<swarm_stats>> done;
  auto outcome = done.get_future();
  caf::anon_send(to, scrape_atom::value,
                 scrape_ticket_ptr(std::make_shared<waited_scrape>(std::move(done))));
  if (outcome.wait_for(10s) != std::future_status::ready) return std::nullopt;
  return outcome.get();
}

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
    dir_->set_placement(make_placement(*sys_));
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
  const auto loc = dir_->locate(h);
  EXPECT_TRUE(loc.remote);
  EXPECT_EQ(loc.owner, "b");
  EXPECT_EQ(caf::actor_cast<caf::actor>(loc.swarm), fwd);
  EXPECT_EQ(caf::actor_cast<caf::actor>(loc.supervision), fwd);
  // The ticket: settled on this node with the owner's answer, which saw
  // the first hop.
  auto r = announce_to(dir_->route_swarm(h), announce_for(h, 2));
  ASSERT_TRUE(r) << sys_->render(r.error());
  EXPECT_EQ(r->interval, 1234);
  EXPECT_EQ(r->min_interval, first_hop);
  // Scrape.
  auto st = scrape_of(dir_->find_swarm(h));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->complete, 7);
  EXPECT_EQ(node_state_->announces.load(), 1);
  EXPECT_EQ(node_state_->scrapes.load(), 1);
}

TEST_F(ForwardingTest, LocalHashIsServedHere) {
  const auto h = hash_owned_by("a", *view_, 2);
  auto swarm = dir_->route(h);
  ASSERT_TRUE(swarm);
  EXPECT_EQ(dir_->size(), 1u);
  auto r = announce_to(swarm, announce_for(h, 1));
  ASSERT_TRUE(r) << sys_->render(r.error());
  EXPECT_NE(r->interval, 1234);
  EXPECT_EQ(node_state_->announces.load(), 0);
}

TEST_F(ForwardingTest, OperatorMoveHandsTheWholeSwarmOver) {
  const auto h = hash_owned_by("a", *view_, 3);
  auto swarm = dir_->route(h);
  for (std::uint32_t i = 0; i < 5; ++i) ASSERT_TRUE(announce_to(swarm, announce_for(h, i)));
  EXPECT_EQ(dir_->move(h, "nosuch"), "unknown member 'nosuch'");
  EXPECT_EQ(dir_->move(h, "a"), "the swarm is on a already");
  ASSERT_EQ(dir_->move(h, "b"), "");
  EXPECT_EQ(dir_->size(), 0u);
  // An announce sent during the move waits for the handoff, then goes to
  // the new owner.
  auto r = announce_to(dir_->route_swarm(h), announce_for(h, 9));
  ASSERT_TRUE(r) << sys_->render(r.error());
  EXPECT_EQ(r->interval, 1234);
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
  ASSERT_TRUE(announce_to(swarm, announce_for(h, 1)));
  EXPECT_EQ(dir_->size(), 1u);
  // b joins and owns h: the swarm moves with its peer.
  EXPECT_EQ(dir_->set_view(view_), 1u);
  EXPECT_TRUE(eventually([&] { return node_state_->migrations.load() == 1; }));
  EXPECT_EQ(node_state_->migrated_peers.load(), 1u);
  EXPECT_EQ(dir_->size(), 0u);
}

// -- operator calls through a forwarder ----------------------------------------

/// A node actor for `dir` with only the node actor's own relay room
/// (remote_calls.hpp), so two directories in one process form a cluster.
node_relay_part::behavior_type test_node(node_relay_part::pointer self, swarm_directory* dir) {
  return relay_behavior(self, *dir);
}

/// Nodes a and b: each a directory with a supervisor and a node actor; b's
/// swarms are reached from a through forwarders.
class RemoteCallsTest : public ::testing::Test {
 protected:
  RemoteCallsTest() {
    register_message_types(cfg_);
    register_types(cfg_);
    cfg_.set("scheduler.max-threads", 2);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    for (auto* d : {&a_, &b_}) {
      *d = std::make_unique<swarm_directory>(*sys_, swarm_config{});
      (*d)->start_supervisor(supervisor_config{});
      (*d)->set_placement(make_placement(*sys_));
    }
    node_a_ = caf::actor_cast<caf::actor>(sys_->spawn(test_node, a_.get()));
    node_b_ = caf::actor_cast<caf::actor>(sys_->spawn(test_node, b_.get()));
    view_a_ = make_view("a", "b", node_b_);
    view_b_ = make_view("b", "a", node_a_);
    a_->set_view(view_a_);
    b_->set_view(view_b_);
    self_ = std::make_unique<caf::scoped_actor>(*sys_);
  }
  ~RemoteCallsTest() override {
    a_->stop_all();
    b_->stop_all();
    caf::anon_send_exit(node_a_, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(node_b_, caf::exit_reason::user_shutdown);
  }
  static cluster_view_ptr make_view(std::string self, std::string other, caf::actor node) {
    auto v = std::make_shared<cluster_view>();
    v->self = self;
    v->names = {"a", "b"};
    v->nodes[other] = std::move(node);
    return v;
  }
  /// A swarm on b with `n` peers.
  caf::actor swarm_on_b(const info_hash& h, std::uint32_t n) {
    auto swarm = b_->route(h);
    for (std::uint32_t i = 0; i < n; ++i) {
      auto r = announce_to(swarm, announce_for(h, i));
      if (!r) ADD_FAILURE() << sys_->render(r.error());
    }
    return swarm;
  }
  template <class T, class... Ts>
  caf::expected<T> ask(const caf::actor& to, Ts&&... xs) {
    caf::expected<T> out{caf::sec::request_timeout};
    (*self_)->request(to, 5s, std::forward<Ts>(xs)...)
        .receive([&](T& x) { out = std::move(x); }, [&](caf::error& e) { out = std::move(e); });
    return out;
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
  std::unique_ptr<swarm_directory> a_, b_;
  caf::actor node_a_, node_b_;
  cluster_view_ptr view_a_, view_b_;
  /// Asks on behalf of the test (destroyed before the actor system).
  std::unique_ptr<caf::scoped_actor> self_;
};

TEST_F(RemoteCallsTest, StatusPolicyAndKnobsOfTheOwnersSwarm) {
  const auto h = hash_owned_by("b", *view_a_, 5);
  auto swarm = swarm_on_b(h, 3);
  const auto loc = a_->locate(h);
  ASSERT_TRUE(loc.actor);
  EXPECT_TRUE(loc.remote);
  EXPECT_EQ(loc.owner, "b");
  EXPECT_NE(loc.actor, swarm);
  EXPECT_EQ(b_->locate(h).owner, "b");
  EXPECT_FALSE(b_->locate(h).remote);

  auto st = ask<swarm_status>(loc.actor, status_atom::value, caf::get_atom::value,
                              std::uint32_t{10});
  ASSERT_TRUE(st) << sys_->render(st.error());
  EXPECT_EQ(st->hash, h);
  EXPECT_EQ(st->peer_count, 3u);
  EXPECT_EQ(st->peers.size(), 3u);
  EXPECT_EQ(st->actor_id, swarm.id());

  // Pinned by b's supervisor: asked through a, and asked on b.
  auto change = ask<policy_change>(loc.actor, policy_atom::value, caf::put_atom::value, h,
                                   std::string("role-aware"));
  ASSERT_TRUE(change) << sys_->render(change.error());
  EXPECT_TRUE(change->pinned);
  EXPECT_EQ(change->policy, "role-aware");
  auto pinned_a = ask<bool>(loc.actor, policy_atom::value, caf::get_atom::value, h);
  auto pinned_b = ask<bool>(b_->supervisor(), policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned_a && pinned_b);
  EXPECT_TRUE(*pinned_a);
  EXPECT_TRUE(*pinned_b);
  auto policy = ask<std::string>(swarm, policy_atom::value, caf::get_atom::value);
  ASSERT_TRUE(policy);
  EXPECT_EQ(*policy, "role-aware");
  // a's own supervisor knows nothing of it.
  auto pinned_here = ask<bool>(a_->supervisor(), policy_atom::value, caf::get_atom::value, h);
  ASSERT_TRUE(pinned_here);
  EXPECT_FALSE(*pinned_here);

  // Knobs and the plain swarm calls.
  auto knobs = ask<swarm_knobs>(loc.actor, knobs_atom::value, caf::get_atom::value);
  ASSERT_TRUE(knobs);
  swarm_knobs k = *knobs;
  k.interval_scale = 2.0;
  auto previous = ask<swarm_knobs>(loc.actor, knobs_atom::value, caf::put_atom::value, k);
  ASSERT_TRUE(previous);
  EXPECT_EQ(previous->interval_scale, 1.0);
  auto now = ask<swarm_knobs>(swarm, knobs_atom::value, caf::get_atom::value);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->interval_scale, 2.0);
  auto history = ask<std::vector<remediation_record>>(loc.actor, history_atom::value,
                                                       caf::get_atom::value);
  EXPECT_TRUE(history);
  // No health tick yet: the swarm's own error comes back.
  auto health = ask<health_report>(loc.actor, health_atom::value, caf::get_atom::value);
  ASSERT_FALSE(health);
  EXPECT_EQ(health.error(), caf::sec::runtime_error);
}

TEST_F(RemoteCallsTest, RestartReplacesTheOwnersSwarmNotTheForwarder) {
  const auto h = hash_owned_by("b", *view_a_, 6);
  auto swarm = swarm_on_b(h, 4);
  const auto loc = a_->locate(h);
  ASSERT_TRUE(loc.remote);
  auto outcome = ask<std::string>(loc.actor, restart_atom::value, h);
  ASSERT_TRUE(outcome) << sys_->render(outcome.error());
  EXPECT_EQ(*outcome, "restarting");
  ASSERT_TRUE(eventually([&] {
    auto now = b_->find(h);
    return now && now != swarm;
  }));
  // Same forwarder, new actor on b, peers kept.
  EXPECT_EQ(a_->locate(h).actor, loc.actor);
  auto st = ask<swarm_status>(loc.actor, status_atom::value);
  ASSERT_TRUE(st) << sys_->render(st.error());
  EXPECT_EQ(st->actor_id, b_->find(h).id());
  EXPECT_NE(st->actor_id, swarm.id());
  EXPECT_EQ(st->peer_count, 4u);
}

TEST_F(RemoteCallsTest, RemediationStartAndStopOnTheOwner) {
  const auto h = hash_owned_by("b", *view_a_, 7);
  swarm_on_b(h, 2);
  const auto loc = a_->locate(h);
  auto started = ask<std::string>(loc.actor, remediate_atom::value, start_atom::value, h);
  ASSERT_TRUE(started) << sys_->render(started.error());
  EXPECT_EQ(*started, "started");
  auto active = ask<std::vector<info_hash>>(b_->supervisor(), remediate_atom::value,
                                            caf::get_atom::value);
  ASSERT_TRUE(active);
  EXPECT_EQ(*active, std::vector<info_hash>{h});
  auto stopped = ask<std::string>(loc.actor, remediate_atom::value, stop_atom::value, h);
  ASSERT_TRUE(stopped) << sys_->render(stopped.error());
  EXPECT_EQ(*stopped, "stopped");
}

TEST_F(RemoteCallsTest, UnknownSwarmOnTheOwnerIsNotFound) {
  const auto h = hash_owned_by("b", *view_a_, 8);
  const auto loc = a_->locate(h);  // a forwarder; b has no swarm
  ASSERT_TRUE(loc.remote);
  auto st = ask<swarm_status>(loc.actor, status_atom::value);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error(), caf::sec::cannot_forward_to_invalid_actor);
  EXPECT_EQ(b_->size(), 0u);  // asking creates nothing
  auto outcome = ask<std::string>(loc.actor, restart_atom::value, h);
  ASSERT_TRUE(outcome);
  EXPECT_EQ(*outcome, "unknown");
}

TEST_F(RemoteCallsTest, OwnerRefusesCallsOutsideTheOperatorInterface) {
  const auto h = hash_owned_by("b", *view_a_, 9);
  auto swarm = swarm_on_b(h, 1);
  // A migration request in an envelope would end the swarm: refused.
  auto snap = ask<swarm_snapshot>(node_b_, swarm_call_atom::value, h, first_hop,
                                  caf::make_message(caf::migrate_atom::value, caf::get_atom::value));
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error(), caf::sec::unexpected_message);
  // A supervisor call about another hash than the envelope's: refused.
  auto other = hash_owned_by("b", *view_a_, 10);
  auto outcome = ask<std::string>(node_b_, supervisor_call_atom::value, h, first_hop,
                                  caf::make_message(restart_atom::value, other));
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error(), caf::sec::unexpected_message);
  EXPECT_EQ(b_->find(h), swarm);
  auto st = ask<swarm_status>(swarm, status_atom::value);
  EXPECT_TRUE(st);
}

TEST_F(RemoteCallsTest, DisagreeingViewsEndAfterMaxHops) {
  // a thinks b owns h; b (leaving: its view lists a only) thinks a does and
  // has a forwarder for it. The call goes a -> b -> a and is refused there
  // instead of circling.
  const auto h = hash_owned_by("b", *view_a_, 11);
  auto leaving = std::make_shared<cluster_view>(*view_b_);
  leaving->names = {"a"};
  b_->set_view(leaving);
  const auto at_b = b_->locate(h);
  ASSERT_TRUE(at_b.remote);
  EXPECT_EQ(at_b.owner, "a");
  auto st = ask<swarm_status>(a_->locate(h).actor, status_atom::value);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error(), caf::sec::request_receiver_down);
  auto outcome = ask<std::string>(a_->locate(h).actor, restart_atom::value, h);
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error(), caf::sec::request_receiver_down);
}

TEST_F(RemoteCallsTest, AnnouncesAndScrapesReachTheOwnersSwarmAsTickets) {
  const auto h = hash_owned_by("b", *view_a_, 14);
  const auto fwd = a_->route_swarm(h);
  ASSERT_TRUE(a_->locate(h).remote);
  // b creates the swarm (a believes b owns it) and serves the announce
  // through its one entry point; a's ticket is settled with b's answer.
  auto r = announce_to(fwd, announce_for(h, 1));
  ASSERT_TRUE(r) << sys_->render(r.error());
  EXPECT_EQ(r->stats.incomplete, 1);
  EXPECT_EQ(b_->size(), 1u);
  EXPECT_EQ(a_->size(), 0u);
  r = announce_to(fwd, announce_for(h, 2));
  ASSERT_TRUE(r) << sys_->render(r.error());
  EXPECT_EQ(r->stats.incomplete, 2);
  EXPECT_EQ(r->peers4.size(), 6u) << "the first peer, as b's swarm selected it";
  auto st = scrape_of(a_->find_swarm(h));
  ASSERT_TRUE(st);
  EXPECT_EQ(st->incomplete, 2);
  // The owner's own swarm agrees.
  auto local = b_->find_swarm(h);
  auto status = ask<swarm_status>(caf::actor_cast<caf::actor>(local), status_atom::value);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->peer_count, 2u);
  // An unknown torrent scrapes zeros through a and creates nothing on b.
  const auto unknown = hash_owned_by("b", *view_a_, 15);
  auto zeros = scrape_of(a_->find_swarm(unknown));
  ASSERT_TRUE(zeros);
  EXPECT_EQ(zeros->complete + zeros->incomplete, 0);
  EXPECT_EQ(b_->size(), 1u);
}

TEST_F(RemoteCallsTest, DisagreeingViewsEndAnAnnounceAfterMaxHops) {
  const auto h = hash_owned_by("b", *view_a_, 16);
  auto leaving = std::make_shared<cluster_view>(*view_b_);
  leaving->names = {"a"};
  b_->set_view(leaving);
  ASSERT_TRUE(b_->locate(h).remote) << "b forwards h to a";
  // a -> b -> a: refused there; a's ticket fails (the client retries) and
  // no node created a swarm.
  auto r = announce_to(a_->route_swarm(h), announce_for(h, 1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), caf::sec::invalid_argument) << "the ticket failed";
  EXPECT_EQ(a_->size() + b_->size(), 0u);
  auto zeros = scrape_of(a_->find_swarm(h));
  ASSERT_TRUE(zeros);
  EXPECT_EQ(zeros->incomplete, 0);
}

TEST_F(RemoteCallsTest, TypedHandlesReachTheSwarmAndTheForwarderAlike) {
  const auto h = hash_owned_by("b", *view_a_, 13);
  swarm_on_b(h, 2);
  // The forwarder's interface contains the swarm's and the supervisor's
  // per-swarm calls: these conversions are checked at compile time.
  const auto fwd = caf::actor_cast<forwarder_interface>(a_->locate(h).actor);
  const swarm_interface through = fwd;
  const swarm_supervision_interface supervision_through = fwd;
  const swarm_interface local = b_->find_swarm(h);
  const swarm_supervision_interface supervision_local = b_->supervisor_handle();
  // What the directory's locate() hands the admin API is the same pair.
  EXPECT_EQ(a_->locate(h).swarm, through);
  EXPECT_EQ(a_->locate(h).supervision, supervision_through);
  EXPECT_EQ(b_->locate(h).swarm, local);
  EXPECT_EQ(b_->locate(h).supervision, supervision_local);
  auto& self = *self_;
  std::vector<swarm_status> answers;
  for (const auto& to : {local, through})
    self->request(to, 5s, status_atom::value, caf::get_atom::value, std::uint32_t{5})
        .receive([&](swarm_status& s) { answers.push_back(std::move(s)); },
                 [&](caf::error& e) { FAIL() << sys_->render(e); });
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0].actor_id, answers[1].actor_id);
  EXPECT_EQ(answers[0].peer_count, 2u);
  EXPECT_EQ(answers[1].peers.size(), 2u);
  std::vector<bool> pinned;
  for (const auto& to : {supervision_local, supervision_through})
    self->request(to, 5s, policy_atom::value, caf::get_atom::value, h)
        .receive([&](bool p) { pinned.push_back(p); },
                 [&](caf::error& e) { FAIL() << sys_->render(e); });
  EXPECT_EQ(pinned, (std::vector<bool>{false, false}));
}

TEST(RemoteCallFilter, OnlyTheDeclaredOperatorCallsPass) {
  info_hash h;
  h.bytes.fill(1);
  info_hash other;
  other.bytes.fill(2);
  EXPECT_TRUE(is_swarm_call(caf::make_message(status_atom::value)));
  EXPECT_TRUE(is_swarm_call(
      caf::make_message(status_atom::value, caf::get_atom::value, std::uint32_t{3})));
  EXPECT_TRUE(is_swarm_call(
      caf::make_message(policy_atom::value, caf::put_atom::value, std::string("adaptive"))));
  // Wrong element type, extra element, not an operator call.
  EXPECT_FALSE(is_swarm_call(
      caf::make_message(status_atom::value, caf::get_atom::value, std::uint64_t{3})));
  EXPECT_FALSE(is_swarm_call(caf::make_message(status_atom::value, 1)));
  EXPECT_FALSE(is_swarm_call(caf::make_message(caf::migrate_atom::value, caf::get_atom::value)));
  EXPECT_FALSE(is_swarm_call(caf::make_message(crash_atom::value)));
  EXPECT_FALSE(is_swarm_call(caf::make_message(restart_atom::value, h)));
  EXPECT_TRUE(is_supervisor_call(caf::make_message(restart_atom::value, h), h));
  EXPECT_TRUE(is_supervisor_call(
      caf::make_message(policy_atom::value, caf::put_atom::value, h, std::string("x")), h));
  EXPECT_TRUE(
      is_supervisor_call(caf::make_message(remediate_atom::value, stop_atom::value, h), h));
  EXPECT_FALSE(is_supervisor_call(caf::make_message(restart_atom::value, other), h));
  EXPECT_FALSE(is_supervisor_call(caf::make_message(events_atom::value), h));
  EXPECT_FALSE(is_supervisor_call(caf::make_message(caf::get_atom::value, h), h));
}

TEST_F(RemoteCallsTest, EnvelopeCrossesTheWire) {
  // Everything in an envelope and its answers is a registered type.
  const auto h = hash_owned_by("b", *view_a_, 12);
  swarm_knobs k;
  k.interval_scale = 0.5;
  const caf::message calls[] = {
      caf::make_message(swarm_call_atom::value, h, first_hop,
                        caf::make_message(status_atom::value, caf::get_atom::value,
                                          std::uint32_t{7})),
      caf::make_message(swarm_call_atom::value, h, first_hop,
                        caf::make_message(knobs_atom::value, caf::put_atom::value, k)),
      caf::make_message(supervisor_call_atom::value, h, first_hop,
                        caf::make_message(policy_atom::value, caf::put_atom::value, h,
                                          std::string("role-aware"))),
  };
  for (const auto& m : calls) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys_, buf};
    auto copy = m;
    ASSERT_FALSE(sink(copy));
    caf::message out;
    caf::binary_deserializer source{*sys_, buf};
    ASSERT_FALSE(source(out));
    ASSERT_TRUE((out.match_elements<caf::atom_value, info_hash, std::uint8_t, caf::message>()));
    const auto& call = out.get_as<caf::message>(3);
    if (out.get_as<caf::atom_value>(0) == swarm_call_atom::value)
      EXPECT_TRUE(is_swarm_call(call));
    else
      EXPECT_TRUE(is_supervisor_call(call, h));
    EXPECT_EQ(call.size(), m.get_as<caf::message>(3).size());
  }
  for (auto answer : {caf::make_message(swarm_status{}), caf::make_message(policy_change{}),
                      caf::make_message(swarm_knobs{})}) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys_, buf};
    EXPECT_FALSE(sink(answer));
  }
}

}  // namespace
}  // namespace sk::cluster
