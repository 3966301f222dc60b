/// tracker_bridge with fake swarms: the paths an integration test cannot
/// force (a swarm that ended between lookup and send, a swarm that does not
/// answer in time, scrape fan-in with unknown and vanished swarms).
///
/// Runs CAF's real scheduler: replies arrive on CAF threads, as in the
/// daemon. Waits are on a condition with a deadline.

#include <condition_variable>
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "net/tracker_bridge.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;

info_hash hash_of(char c) {
  info_hash h;
  h.bytes.fill(static_cast<std::uint8_t>(c));
  return h;
}

/// Records what the bridge delivers.
class recording_sink final : public reply_sink {
 public:
  struct outcome {
    enum kind { got_announce, got_scrape, got_error } what;
    std::uint64_t tag;
    announce_result announce;
    std::vector<scrape_entry> scrape;
    bridge_error error;
  };

  void on_announce(std::shared_ptr<reply_sink>, std::uint64_t tag, announce_result&& r) override {
    push({outcome::got_announce, tag, std::move(r), {}, {}});
  }
  void on_scrape(std::shared_ptr<reply_sink>, std::uint64_t tag,
                 std::vector<scrape_entry>&& e) override {
    push({outcome::got_scrape, tag, {}, std::move(e), {}});
  }
  void on_error(std::shared_ptr<reply_sink>, std::uint64_t tag, bridge_error e) override {
    push({outcome::got_error, tag, {}, {}, e});
  }

  /// The next outcome, or a test failure after `timeout`.
  outcome next(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock<std::mutex> lock{mutex_};
    if (!cv_.wait_for(lock, timeout, [&] { return !outcomes_.empty(); }))
      throw std::runtime_error("no outcome within the deadline");
    outcome o = std::move(outcomes_.front());
    outcomes_.erase(outcomes_.begin());
    return o;
  }

 private:
  void push(outcome&& o) {
    {
      std::lock_guard<std::mutex> lock{mutex_};
      outcomes_.push_back(std::move(o));
    }
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<outcome> outcomes_;
};

/// A locator over a fixed table; `route_queue` hands out a sequence of
/// handles for one hash (to simulate a swarm replaced between lookups).
class fake_locator final : public swarm_locator {
 public:
  caf::actor route(const info_hash& h) override {
    std::lock_guard<std::mutex> lock{mutex_};
    ++routes;
    auto q = route_queue.find(h);
    if (q != route_queue.end() && !q->second.empty()) {
      auto a = q->second.front();
      q->second.erase(q->second.begin());
      return a;
    }
    auto it = table.find(h);
    return it == table.end() ? caf::actor{} : it->second;
  }
  caf::actor find(const info_hash& h) override {
    std::lock_guard<std::mutex> lock{mutex_};
    auto it = table.find(h);
    return it == table.end() ? caf::actor{} : it->second;
  }

  std::mutex mutex_;
  std::map<info_hash, caf::actor> table;
  std::map<info_hash, std::vector<caf::actor>> route_queue;
  int routes = 0;
};

/// A swarm that answers with fixed counts.
caf::behavior answering_swarm(caf::event_based_actor*, std::int64_t complete) {
  return {
      [=](announce_atom, const swarm_announce&) {
        announce_result r;
        r.stats.complete = complete;
        r.interval = 1800;
        r.min_interval = 900;
        r.peers4 = std::string(6, 'x');
        return r;
      },
      [=](scrape_atom) {
        return swarm_stats{complete, 2, 3};
      },
  };
}

/// A swarm that takes requests and never answers.
caf::behavior silent_swarm(caf::event_based_actor* self) {
  return {
      [=](announce_atom, const swarm_announce&) {
        return self->make_response_promise<announce_result>();
      },
      [=](scrape_atom) { return self->make_response_promise<swarm_stats>(); },
  };
}

class Bridge : public ::testing::Test {
 protected:
  /// An actor handle that is already dead.
  caf::actor dead_actor() {
    auto a = sys_.spawn(answering_swarm, 0);
    caf::scoped_actor self{sys_};
    self->send_exit(a, caf::exit_reason::kill);
    self->wait_for(a);
    return a;
  }

  announce_job job(const info_hash& h, std::uint64_t tag) {
    announce_job j;
    j.announce.request.hash = h;
    j.sink = sink_;
    j.tag = tag;
    return j;
  }

  caf::actor_system_config cfg_;
  caf::actor_system sys_{cfg_};
  std::shared_ptr<recording_sink> sink_ = std::make_shared<recording_sink>();
  fake_locator locator_;
};

TEST_F(Bridge, AnnounceReachesTheSwarmAndComesBack) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 7);
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 2}};
  bridge.announce(0, job(hash_of('a'), 42));
  auto o = sink_->next();
  EXPECT_EQ(o.what, recording_sink::outcome::got_announce);
  EXPECT_EQ(o.tag, 42u);
  EXPECT_EQ(o.announce.stats.complete, 7);
  EXPECT_EQ(o.announce.peers4.size(), 6u);
  bridge.stop();
  caf::anon_send_exit(locator_.table[hash_of('a')], caf::exit_reason::user_shutdown);
}

TEST_F(Bridge, BatchesAreAnsweredJobByJob) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 1);
  locator_.table[hash_of('b')] = sys_.spawn(answering_swarm, 2);
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 1}};
  job_batch batch;
  batch.announces.push_back(job(hash_of('a'), 1));
  batch.announces.push_back(job(hash_of('b'), 2));
  scrape_job s;
  s.hashes = {hash_of('a'), hash_of('b')};
  s.sink = sink_;
  s.tag = 3;
  batch.scrapes.push_back(std::move(s));
  bridge.submit(0, std::move(batch));
  std::map<std::uint64_t, recording_sink::outcome> by_tag;
  for (int i = 0; i < 3; ++i) {
    auto o = sink_->next();
    by_tag.emplace(o.tag, std::move(o));
  }
  EXPECT_EQ(by_tag.at(1).announce.stats.complete, 1);
  EXPECT_EQ(by_tag.at(2).announce.stats.complete, 2);
  ASSERT_EQ(by_tag.at(3).scrape.size(), 2u);
  EXPECT_EQ(by_tag.at(3).scrape[1].stats.complete, 2);
  bridge.stop();
  for (auto& kv : locator_.table) caf::anon_send_exit(kv.second, caf::exit_reason::user_shutdown);
}

TEST_F(Bridge, ASwarmThatEndedIsLookedUpOnceMore) {
  // First route: a swarm that has just ended; second: its successor.
  locator_.route_queue[hash_of('a')] = {dead_actor()};
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 5);
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 1}};
  bridge.announce(0, job(hash_of('a'), 1));
  auto o = sink_->next();
  EXPECT_EQ(o.what, recording_sink::outcome::got_announce);
  EXPECT_EQ(o.announce.stats.complete, 5);
  EXPECT_EQ(locator_.routes, 2);
  bridge.stop();
  caf::anon_send_exit(locator_.table[hash_of('a')], caf::exit_reason::user_shutdown);
}

TEST_F(Bridge, OnlyOnceIsRetried) {
  locator_.route_queue[hash_of('a')] = {dead_actor(), dead_actor(), dead_actor()};
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 1}};
  bridge.announce(0, job(hash_of('a'), 1));
  auto o = sink_->next();
  EXPECT_EQ(o.what, recording_sink::outcome::got_error);
  EXPECT_EQ(o.error, bridge_error::swarm_unavailable);
  EXPECT_EQ(locator_.routes, 2);
  bridge.stop();
}

TEST_F(Bridge, NoSwarmAtAllIsAFailure) {
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 1}};
  bridge.announce(0, job(hash_of('z'), 9));
  auto o = sink_->next();
  EXPECT_EQ(o.what, recording_sink::outcome::got_error);
  EXPECT_EQ(o.error, bridge_error::swarm_unavailable);
  bridge.stop();
}

TEST_F(Bridge, ASilentSwarmTimesOut) {
  locator_.table[hash_of('s')] = sys_.spawn(silent_swarm);
  tracker_bridge bridge{sys_, locator_, bridge_config{100ms, 1}};
  const auto start = std::chrono::steady_clock::now();
  bridge.announce(0, job(hash_of('s'), 1));
  auto o = sink_->next();
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(o.what, recording_sink::outcome::got_error);
  EXPECT_EQ(o.error, bridge_error::timeout);
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 2s);
  // A scrape that includes the silent swarm times out as a whole.
  scrape_job s;
  s.hashes = {hash_of('s')};
  s.sink = sink_;
  s.tag = 2;
  bridge.scrape(0, std::move(s));
  auto so = sink_->next();
  EXPECT_EQ(so.tag, 2u);
  EXPECT_EQ(so.error, bridge_error::timeout);
  bridge.stop();
  caf::anon_send_exit(locator_.table[hash_of('s')], caf::exit_reason::user_shutdown);
}

TEST_F(Bridge, ScrapeGivesZerosForUnknownAndVanishedSwarms) {
  locator_.table[hash_of('a')] = sys_.spawn(answering_swarm, 4);
  locator_.table[hash_of('d')] = dead_actor();
  tracker_bridge bridge{sys_, locator_, bridge_config{1000ms, 1}};
  scrape_job s;
  s.hashes = {hash_of('a'), hash_of('d'), hash_of('u')};
  s.sink = sink_;
  s.tag = 1;
  bridge.scrape(0, std::move(s));
  auto o = sink_->next();
  ASSERT_EQ(o.what, recording_sink::outcome::got_scrape);
  ASSERT_EQ(o.scrape.size(), 3u);
  EXPECT_EQ(o.scrape[0].hash, hash_of('a'));
  EXPECT_EQ(o.scrape[0].stats.complete, 4);
  EXPECT_EQ(o.scrape[1].stats.complete, 0) << "ended swarm: zeros";
  EXPECT_EQ(o.scrape[2].stats.complete, 0) << "unknown torrent: zeros";
  EXPECT_EQ(locator_.routes, 0) << "a scrape never creates swarms";
  bridge.stop();
  caf::anon_send_exit(locator_.table[hash_of('a')], caf::exit_reason::user_shutdown);
}

TEST_F(Bridge, StopDropsPendingJobsWithoutCallingSinks) {
  locator_.table[hash_of('s')] = sys_.spawn(silent_swarm);
  {
    tracker_bridge bridge{sys_, locator_, bridge_config{60000ms, 1}};
    bridge.announce(0, job(hash_of('s'), 1));
    bridge.stop();  // the job is in a mailbox or waiting for the swarm
  }
  EXPECT_EQ(sink_.use_count(), 1) << "the job's reference to the sink was released";
  EXPECT_THROW(sink_->next(50ms), std::runtime_error) << "nobody was told anything";
  caf::anon_send_exit(locator_.table[hash_of('s')], caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace sk
