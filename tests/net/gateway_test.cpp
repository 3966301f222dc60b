/// The gateway with fake swarms: the rules both transports rely on (access
/// list before routing, the trusted-address rule per transport, admission,
/// one retry when a swarm ended, deadlines, exactly one answer, shutdown)
/// and the paths an integration test cannot force.
///
/// Runs CAF's real scheduler: answers arrive on CAF threads, as in the
/// daemon. Deadlines are driven by calling `sweep` with a chosen time (no
/// sleeps); waits for answers are on a condition with a deadline.

#include "net/gateway.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "announces.hpp"
#include "net/address_buckets.hpp"
#include "tracker/access_list.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

info_hash hash_of(char c) {
  info_hash h;
  h.bytes.fill(static_cast<std::uint8_t>(c));
  return h;
}

/// What one request was answered with.
struct outcome {
  enum kind { result, scrape, refusal } what = refusal;
  announce_result announce;
  std::vector<scrape_answer> answers;
  gateway_refusal why = gateway_refusal::swarm_unavailable;
  std::int64_t retry_in = 0;
};

/// Collects answers of every request (any thread).
class recorder {
 public:
  // Notifies under the lock: the waiter may return and destroy this object
  // as soon as it can take the lock, so the notify must be over by then.
  void push(outcome&& o) {
    std::lock_guard<std::mutex> lock{mutex_};
    outcomes_.push_back(std::move(o));
    cv_.notify_all();
  }
  /// The next answer, or an exception after `timeout`.
  outcome next(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock<std::mutex> lock{mutex_};
    if (!cv_.wait_for(lock, timeout, [&] { return !outcomes_.empty(); }))
      throw std::runtime_error("no answer within the deadline");
    outcome o = std::move(outcomes_.front());
    outcomes_.erase(outcomes_.begin());
    return o;
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lock{mutex_};
    return outcomes_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<outcome> outcomes_;
};

/// Records a refusal the same way for both kinds of request.
template <class Base>
class recording_reply : public Base {
 public:
  explicit recording_reply(recorder& r) : r_(r) {}
  void on_refusal(gateway_refusal why, std::int64_t retry_in) override {
    outcome o;
    o.why = why;
    o.retry_in = retry_in;
    r_.push(std::move(o));
  }

 protected:
  recorder& r_;
};

class test_announce_reply final : public recording_reply<announce_reply> {
 public:
  using recording_reply::recording_reply;
  void on_result(const announce_result& res) override {
    outcome o;
    o.what = outcome::result;
    o.announce = res;
    r_.push(std::move(o));
  }
};

class test_scrape_reply final : public recording_reply<scrape_reply> {
 public:
  using recording_reply::recording_reply;
  void on_result(std::vector<scrape_answer>&& a) override {
    outcome o;
    o.what = outcome::scrape;
    o.answers = std::move(a);
    r_.push(std::move(o));
  }
};

/// A locator over a fixed table; `route_queue` hands out a sequence of
/// handles for one hash first, to whichever lookup comes (a swarm replaced
/// between lookups). The test swarms are dynamically typed behaviours that
/// handle the network calls of `swarm_interface`.
class fake_locator final : public swarm_locator {
 public:
  route_result route(const info_hash& h) override {
    std::lock_guard<std::mutex> lock{mutex_};
    ++routes;
    if (auto a = lookup(h)) return {std::move(a), route_status::served};
    return {{}, route_status::stopping};
  }
  swarm_interface find(const info_hash& h) override {
    std::lock_guard<std::mutex> lock{mutex_};
    ++finds;
    return lookup(h);
  }
  /// Lookups of either kind.
  int lookups() {
    std::lock_guard<std::mutex> lock{mutex_};
    return routes + finds;
  }

  std::mutex mutex_;
  std::map<info_hash, caf::actor> table;
  std::map<info_hash, std::vector<caf::actor>> route_queue;
  int routes = 0;
  int finds = 0;

 private:
  swarm_interface lookup(const info_hash& h) {
    auto q = route_queue.find(h);
    if (q != route_queue.end() && !q->second.empty()) {
      auto a = q->second.front();
      q->second.erase(q->second.begin());
      return caf::actor_cast<swarm_interface>(a);
    }
    auto it = table.find(h);
    return it == table.end() ? swarm_interface{} : caf::actor_cast<swarm_interface>(it->second);
  }
};

/// A swarm that answers every ticket with fixed counts; the peer the
/// gateway decided on comes back as the one compact peer.
caf::behavior answering_swarm(caf::event_based_actor*, std::int64_t complete) {
  return {
      [=](announce_atom, const announce_ticket_ptr& t) {
        announce_result r;
        r.stats.complete = complete;
        r.interval = 1800;
        r.peers4.assign(reinterpret_cast<const char*>(t->announce.peer.ip.bytes.data()), 4);
        r.peers6 = t->announce.own_family_only ? "own" : "both";
        t->complete(r);
      },
      [=](scrape_atom, const scrape_ticket_ptr& t) {
        t->complete(swarm_stats{complete, 2, 3, 0});
      },
  };
}

/// A swarm that keeps every ticket unanswered until told to answer them.
struct silent_state {
  std::vector<announce_ticket_ptr> announces;
  std::vector<scrape_ticket_ptr> scrapes;
};
caf::behavior silent_swarm(caf::stateful_actor<silent_state>* self) {
  return {
      [=](announce_atom, const announce_ticket_ptr& t) { self->state.announces.push_back(t); },
      [=](scrape_atom, const scrape_ticket_ptr& t) { self->state.scrapes.push_back(t); },
      [=](caf::get_atom) { return self->state.announces.size(); },
      [=](caf::ok_atom) {
        announce_result r;
        r.stats.complete = 99;
        for (auto& t : self->state.announces) t->complete(r);
        self->state.announces.clear();
        self->state.scrapes.clear();
        return caf::ok_atom::value;
      },
  };
}

class Gateway : public ::testing::Test {
 protected:
  ~Gateway() override {
    for (auto& kv : locator_.table) caf::anon_send_exit(kv.second, caf::exit_reason::user_shutdown);
  }

  /// Waits (with a deadline) until `silent` holds `n` announce tickets: the
  /// dispatcher delivers them asynchronously.
  void await_held(const caf::actor& silent, std::size_t n) {
    caf::scoped_actor self{sys_};
    const auto deadline = steady::now() + 5s;
    for (;;) {
      std::size_t held = 0;
      self->request(silent, 5s, caf::get_atom::value)
          .receive([&](std::size_t k) { held = k; }, [](caf::error&) {});
      if (held >= n) return;
      if (steady::now() > deadline) throw std::runtime_error("tickets never arrived");
      std::this_thread::sleep_for(1ms);
    }
  }

  caf::actor dead_actor() {
    auto a = sys_.spawn(answering_swarm, 0);
    caf::scoped_actor self{sys_};
    self->send_exit(a, caf::exit_reason::kill);
    self->wait_for(a);
    return a;
  }

  announce_request request(char c, std::uint16_t port = 6881) {
    return test::announce_of(hash_of(c), peer_id{}, port, 0);
  }

  std::shared_ptr<test_announce_reply> announce_reply_() {
    return std::make_shared<test_announce_reply>(rec_);
  }
  std::shared_ptr<test_scrape_reply> scrape_reply_() {
    return std::make_shared<test_scrape_reply>(rec_);
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_{cfg_};
  recorder rec_;
  fake_locator locator_;
  const ip_address source_ = ip_address::make_v4(0x0a000001u);  // 10.0.0.1
};

TEST_F(Gateway, AnnounceReachesTheSwarmAndComesBack) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 7);
  gateway gw{sys_, locator_, gateway_config{}};
  const auto lane = gw.add_lanes(2);
  gw.announce(lane + 1, transport::udp, request('a'), source_, true, announce_reply_());
  gw.flush(lane + 1);
  auto o = rec_.next();
  ASSERT_EQ(o.what, outcome::result) << refusal_text(o.why);
  EXPECT_EQ(o.announce.stats.complete, 7);
  EXPECT_EQ(o.announce.peers4, std::string("\x0a\x00\x00\x01", 4));
  EXPECT_EQ(o.announce.peers6, "own");
  EXPECT_EQ(gw.in_flight(lane + 1), 0u);
  EXPECT_EQ(gw.counters(transport::udp).announces, 1u);
  EXPECT_EQ(gw.counters(transport::http).announces, 0u);
}

TEST_F(Gateway, TheClaimedAddressIsBelievedOnlyWhereTrusted) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 1);
  gateway_config c;
  c.trust_claimed_ip[static_cast<std::size_t>(transport::http)] = true;
  gateway gw{sys_, locator_, c};
  const auto lane = gw.add_lanes(1);
  auto claimed = request('a');
  claimed.claimed_ip = ip_address::make_v4(0xc0000201u);  // 192.0.2.1
  gw.announce(lane, transport::http, announce_request(claimed), source_, false, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().announce.peers4, std::string("\xc0\x00\x02\x01", 4));
  gw.announce(lane, transport::udp, announce_request(claimed), source_, true, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().announce.peers4, std::string("\x0a\x00\x00\x01", 4))
      << "UDP is not trusted here: the source address stands";
}

TEST_F(Gateway, TheAccessListRefusesBeforeRouting) {
  access_list denied;
  denied.add(hash_of('x'));
  const auto access = std::make_shared<access_control>(access_mode::deny, "", denied);
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 4);
  gateway gw{sys_, locator_, gateway_config{}, access};
  EXPECT_EQ(gw.access(), access);
  const auto lane = gw.add_lanes(1);
  gw.announce(lane, transport::http, request('x'), source_, false, announce_reply_());
  gw.flush(lane);
  auto o = rec_.next();
  EXPECT_EQ(o.what, outcome::refusal);
  EXPECT_EQ(o.why, gateway_refusal::denied);
  EXPECT_EQ(o.retry_in, 0) << "a refused torrent stays refused: no retry in";
  EXPECT_EQ(locator_.lookups(), 0) << "a refused hash never reaches the directory";
  EXPECT_EQ(gw.counters(transport::http).denied_announces, 1u);
  EXPECT_EQ(access->refused_http_announces.load(), 1u);
  EXPECT_EQ(refusal_text(gateway_refusal::denied), "torrent not allowed on this tracker");

  // A scrape answers every hash in order (duplicates kept); refused ones
  // are marked, never looked up.
  gw.scrape(lane, transport::udp, {hash_of('a'), hash_of('x'), hash_of('a')}, source_,
            scrape_reply_());
  gw.flush(lane);
  o = rec_.next();
  ASSERT_EQ(o.what, outcome::scrape);
  ASSERT_EQ(o.answers.size(), 3u);
  EXPECT_TRUE(o.answers[0].served);
  EXPECT_EQ(o.answers[0].stats.complete, 4);
  EXPECT_FALSE(o.answers[1].served);
  EXPECT_EQ(o.answers[1].hash, hash_of('x'));
  EXPECT_EQ(o.answers[2].stats.complete, 4);
  EXPECT_EQ(locator_.finds, 2);
  EXPECT_EQ(access->refused_udp_scrapes.load(), 1u);
}

TEST(GatewayTexts, RetryableRefusalsFitInTheSmallestRequestsErrorPacket) {
  // A one-hash UDP scrape is 36 bytes; its error packet is 8 + text.
  for (auto r : {gateway_refusal::overloaded, gateway_refusal::swarm_unavailable,
                 gateway_refusal::timeout, gateway_refusal::shutting_down}) {
    EXPECT_TRUE(retryable(r));
    EXPECT_LE(8 + refusal_text(r).size(), 36u) << refusal_text(r);
  }
  EXPECT_FALSE(retryable(gateway_refusal::denied));
  EXPECT_LE(8 + refusal_text(gateway_refusal::denied).size(), 98u);
  // The caps answer announces only (98 bytes), are retryable, and each says
  // which cap it is.
  std::set<std::string_view> seen;
  for (auto r : {gateway_refusal::swarm_limit, gateway_refusal::new_swarm_budget,
                 gateway_refusal::peer_limit, gateway_refusal::swarm_full}) {
    EXPECT_TRUE(retryable(r));
    EXPECT_LE(8 + refusal_text(r).size(), 98u) << refusal_text(r);
    EXPECT_NE(refusal_text(r), refusal_text(gateway_refusal::overloaded));
    EXPECT_TRUE(seen.insert(refusal_text(r)).second) << refusal_text(r);
  }
}

TEST_F(Gateway, ASwarmThatEndedIsRoutedOnceMore) {
  // First route: a swarm that has just ended (its mailbox drops the
  // ticket); second: its successor.
  locator_.route_queue[hash_of('a')] = {dead_actor()};
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 5);
  gateway gw{sys_, locator_, gateway_config{}};
  const auto lane = gw.add_lanes(1);
  gw.announce(lane, transport::http, request('a'), source_, false, announce_reply_());
  gw.flush(lane);
  auto o = rec_.next();
  ASSERT_EQ(o.what, outcome::result);
  EXPECT_EQ(o.announce.stats.complete, 5);
  EXPECT_EQ(locator_.lookups(), 2) << "the first lookup and one more";
  EXPECT_EQ(gw.counters(transport::http).rerouted, 1u);
}

TEST_F(Gateway, AScrapeDroppedByAnEndedActorGoesOnceMoreToTheActorNamedNow) {
  // The actor the scrape was sent to ended unread (a swarm that went to
  // sleep as data between the lookup and the delivery); the directory now
  // names its successor, which answers.
  locator_.route_queue[hash_of('a')] = {dead_actor()};
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 5);
  gateway gw{sys_, locator_, gateway_config{}};
  const auto lane = gw.add_lanes(1);
  gw.scrape(lane, transport::udp, {hash_of('a')}, source_, scrape_reply_());
  gw.flush(lane);
  auto o = rec_.next();
  ASSERT_EQ(o.what, outcome::scrape);
  ASSERT_EQ(o.answers.size(), 1u);
  EXPECT_EQ(o.answers[0].stats.complete, 5);
  EXPECT_EQ(locator_.finds, 2) << "the first lookup and one more";
  EXPECT_EQ(gw.counters(transport::udp).rerouted, 1u);

  // A swarm that ended for good (the directory names none): zeros, once.
  locator_.route_queue[hash_of('b')] = {dead_actor()};
  gw.scrape(lane, transport::udp, {hash_of('b')}, source_, scrape_reply_());
  gw.flush(lane);
  o = rec_.next();
  ASSERT_EQ(o.what, outcome::scrape);
  EXPECT_TRUE(o.answers[0].served);
  EXPECT_EQ(o.answers[0].stats.complete, 0);
  EXPECT_EQ(gw.counters(transport::udp).rerouted, 1u);

  // Dropped unread again by the actor named the second time: zeros, not a
  // third lookup.
  locator_.route_queue[hash_of('c')] = {dead_actor(), dead_actor()};
  locator_.table[hash_of('c')] = sys_.spawn(answering_swarm, 7);
  const int finds_before = locator_.finds;
  gw.scrape(lane, transport::udp, {hash_of('c')}, source_, scrape_reply_());
  gw.flush(lane);
  o = rec_.next();
  ASSERT_EQ(o.what, outcome::scrape);
  EXPECT_EQ(o.answers[0].stats.complete, 0);
  EXPECT_EQ(locator_.finds - finds_before, 2);
  EXPECT_EQ(gw.counters(transport::udp).rerouted, 2u);
  EXPECT_THROW(rec_.next(100ms), std::runtime_error) << "answered once";
}

TEST_F(Gateway, OnlyOnceIsRetriedThenTheSwarmIsUnavailable) {
  locator_.route_queue[hash_of('a')] = {dead_actor(), dead_actor(), dead_actor()};
  gateway_config c;
  c.retry_in_minutes = 3;
  gateway gw{sys_, locator_, c};
  const auto lane = gw.add_lanes(1);
  gw.announce(lane, transport::http, request('a'), source_, false, announce_reply_());
  gw.flush(lane);
  auto o = rec_.next();
  EXPECT_EQ(o.what, outcome::refusal);
  EXPECT_EQ(o.why, gateway_refusal::swarm_unavailable);
  EXPECT_EQ(o.retry_in, 3);
  EXPECT_EQ(locator_.lookups(), 2);
  // No swarm at all (the directory could not spawn one): the same.
  gw.announce(lane, transport::http, request('z'), source_, false, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().why, gateway_refusal::swarm_unavailable);
  EXPECT_EQ(gw.counters(transport::http).unavailable, 2u);
}

TEST_F(Gateway, ASilentSwarmTimesOutAtTheSweepAndALateAnswerIsIgnored) {
  auto silent = sys_.spawn(silent_swarm);
  locator_.table[hash_of('s')] = silent;
  gateway_config c;
  c.request_timeout = 5s;
  gateway gw{sys_, locator_, c};
  const auto lane = gw.add_lanes(1);
  const auto admitted = steady::now();
  gw.announce(lane, transport::udp, request('s'), source_, true, announce_reply_());
  gw.flush(lane);
  gw.scrape(lane, transport::udp, {hash_of('s')}, source_, scrape_reply_());
  gw.flush(lane);
  EXPECT_EQ(gw.in_flight(lane), 2u);
  gw.sweep(lane, admitted + 4s);  // not yet overdue
  EXPECT_EQ(rec_.count(), 0u);
  gw.sweep(lane, admitted + 6s);
  auto a = rec_.next();
  auto s = rec_.next();
  EXPECT_EQ(a.why, gateway_refusal::timeout);
  EXPECT_EQ(s.why, gateway_refusal::timeout);
  EXPECT_EQ(gw.in_flight(lane), 0u);
  EXPECT_EQ(gw.counters(transport::udp).timeouts, 2u);
  // The swarm answers after all: nobody is told twice.
  await_held(silent, 1);
  caf::scoped_actor self{sys_};
  self->request(silent, 5s, caf::ok_atom::value).receive([](caf::ok_atom) {}, [](caf::error&) {});
  EXPECT_THROW(rec_.next(100ms), std::runtime_error);
  EXPECT_EQ(gw.in_flight(lane), 0u);
}

TEST_F(Gateway, AFullLaneIsOverloadedAndAClosedOneShutsDown) {
  auto silent = sys_.spawn(silent_swarm);
  locator_.table[hash_of('s')] = silent;
  gateway_config c;
  c.max_in_flight = 1;
  gateway gw{sys_, locator_, c};
  const auto lane = gw.add_lanes(2);
  gw.announce(lane, transport::http, request('s'), source_, false, announce_reply_());
  gw.flush(lane);
  gw.announce(lane, transport::http, request('s'), source_, false, announce_reply_());
  gw.flush(lane);
  auto o = rec_.next();
  EXPECT_EQ(o.why, gateway_refusal::overloaded);
  EXPECT_EQ(o.retry_in, c.retry_in_minutes);
  // The other lane has its own admission.
  gw.announce(lane + 1, transport::http, request('s'), source_, false, announce_reply_());
  gw.flush(lane + 1);
  EXPECT_EQ(gw.in_flight(lane + 1), 1u);

  // Abandon answers what waits; a closed lane admits nothing.
  gw.abandon(lane);
  EXPECT_EQ(rec_.next().why, gateway_refusal::shutting_down);
  gw.announce(lane, transport::http, request('s'), source_, false, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().why, gateway_refusal::shutting_down);
  EXPECT_EQ(gw.in_flight(lane), 0u);
  // After abandon, a swarm's late answer reaches nobody of that lane; the
  // open lane's request is answered.
  await_held(silent, 2);
  caf::scoped_actor self{sys_};
  self->request(silent, 5s, caf::ok_atom::value).receive([](caf::ok_atom) {}, [](caf::error&) {});
  o = rec_.next();
  EXPECT_EQ(o.what, outcome::result);
  EXPECT_EQ(o.announce.stats.complete, 99);
  EXPECT_THROW(rec_.next(100ms), std::runtime_error);
}

TEST_F(Gateway, EveryRequestIsAnsweredExactlyOnceUnderRacingSweeps) {
  // Many announces to an answering swarm while the lane sweeps with a time
  // far past every deadline: each request gets one answer, result or
  // timeout, never both and never none.
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 1);
  gateway gw{sys_, locator_, gateway_config{}};
  const auto lane = gw.add_lanes(1);
  constexpr int n = 2000;
  for (int i = 0; i < n; ++i) {
    gw.announce(lane, transport::udp, request('a'), source_, true, announce_reply_());
    gw.flush(lane);
    if (i % 7 == 0) gw.sweep(lane, steady::now() + 1h);
  }
  int results = 0, timeouts = 0;
  for (int i = 0; i < n; ++i) {
    auto o = rec_.next();
    (o.what == outcome::result ? results : timeouts) += 1;
  }
  EXPECT_EQ(results + timeouts, n);
  EXPECT_THROW(rec_.next(100ms), std::runtime_error);
  EXPECT_EQ(gw.in_flight(lane), 0u);
  EXPECT_EQ(static_cast<int>(gw.counters(transport::udp).timeouts), timeouts);
}

TEST_F(Gateway, AnAddressOverItsRequestRateIsRefusedBeforeAnythingElse) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 1);
  gateway_config c;
  c.request_burst = 3;
  c.requests_per_second = 0.001;  // one more token every 1000 s: none during the test
  c.retry_in_minutes = 2;
  gateway gw{sys_, locator_, c};
  ASSERT_NE(gw.rate_limit(), nullptr);
  const auto lane = gw.add_lanes(1);
  // Three requests of any kind spend the burst: an announce, a scrape, a
  // UDP connect.
  gw.announce(lane, transport::http, request('a'), source_, false, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().what, outcome::result);
  gw.scrape(lane, transport::udp, {hash_of('a')}, source_, scrape_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().what, outcome::scrape);
  EXPECT_TRUE(gw.take_connect_token(transport::udp, source_));
  EXPECT_FALSE(gw.rate_limit_reached());
  const int lookups = locator_.lookups();

  gw.announce(lane, transport::http, request('a'), source_, false, announce_reply_());
  auto o = rec_.next();
  ASSERT_EQ(o.what, outcome::refusal);
  EXPECT_EQ(o.why, gateway_refusal::rate_limited);
  EXPECT_EQ(o.retry_in, 2) << "retryable: BEP 31 retry in";
  gw.scrape(lane, transport::udp, {hash_of('a')}, source_, scrape_reply_());
  o = rec_.next();
  ASSERT_EQ(o.what, outcome::refusal);
  EXPECT_EQ(o.why, gateway_refusal::rate_limited);
  EXPECT_FALSE(gw.take_connect_token(transport::udp, source_));
  EXPECT_EQ(locator_.lookups(), lookups) << "a limited request never reaches the directory";
  EXPECT_EQ(gw.in_flight(lane), 0u);
  EXPECT_TRUE(gw.rate_limit_reached());
  EXPECT_EQ(gw.counters(transport::http).rate_limited_announces, 1u);
  EXPECT_EQ(gw.counters(transport::udp).rate_limited_scrapes, 1u);
  EXPECT_EQ(gw.counters(transport::udp).rate_limited_connects, 1u);
  EXPECT_EQ(gw.counters(transport::http).announces, 1u) << "refused ones are not admitted";
  // The text fits a UDP error packet answering a one-hash scrape (36 bytes).
  EXPECT_LE(refusal_text(gateway_refusal::rate_limited).size(), 28u);

  // Another address has its own burst.
  const ip_address other = ip_address::make_v4(0x0a000002u);
  gw.announce(lane, transport::udp, request('a'), other, true, announce_reply_());
  gw.flush(lane);
  EXPECT_EQ(rec_.next().what, outcome::result);
  EXPECT_EQ(gw.rate_limit()->tracked(), 2u);
}

TEST_F(Gateway, NoRateMeansNoLimit) {
  gateway_config c;
  c.requests_per_second = 0;
  gateway gw{sys_, locator_, c};
  EXPECT_EQ(gw.rate_limit(), nullptr);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(gw.take_connect_token(transport::udp, source_));
  EXPECT_EQ(gw.counters(transport::udp).rate_limited_connects, 0u);
}

}  // namespace
}  // namespace sk
