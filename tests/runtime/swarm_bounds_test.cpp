// The bounds of a swarm actor against one outsider: its mailbox backlog,
// the token bucket and the node's budget of per-swarm log lines (on an
// injected clock), and the counters and first-time log lines of the
// per-address bound.

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "runtime/message_types.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_actor_log.hpp"
#include "runtime/token_bucket.hpp"
#include "announces.hpp"
#include "caf_fixture.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using test::v4;
using clock_type = std::chrono::steady_clock;

// -- token_bucket ---------------------------------------------------------------------

TEST(TokenBucket, StartsFullRefillsByElapsedTimeAndNeverBeyondTheBurst) {
  token_bucket<> b(10.0, 2.0);  // ten a second, two at once
  const auto t0 = clock_type::time_point{} + std::chrono::hours(3);
  EXPECT_TRUE(b.take(t0));
  EXPECT_TRUE(b.take(t0));
  EXPECT_FALSE(b.take(t0)) << "the burst is two";
  EXPECT_TRUE(b.take(t0 + std::chrono::milliseconds(100))) << "one token per 100 ms";
  EXPECT_FALSE(b.take(t0 + std::chrono::milliseconds(150)));
  // A clock that runs backwards refills nothing and takes nothing away.
  EXPECT_FALSE(b.take(t0));
  EXPECT_NEAR(b.available(t0 + std::chrono::milliseconds(150)), 0.5, 1e-9);
  // An hour of quiet fills it to the burst, not to 36,000.
  EXPECT_DOUBLE_EQ(b.available(t0 + std::chrono::hours(1)), 2.0);
  EXPECT_TRUE(b.take(t0 + std::chrono::hours(1)));
  EXPECT_TRUE(b.take(t0 + std::chrono::hours(1)));
  EXPECT_FALSE(b.take(t0 + std::chrono::hours(1)));
}

TEST(TokenBucket, RatesPerMinuteCountMinutes) {
  token_bucket<std::ratio<60>> b(6.0, 1.0);  // six a minute
  const auto t0 = clock_type::time_point{} + std::chrono::hours(3);
  EXPECT_TRUE(b.take(t0));
  EXPECT_FALSE(b.take(t0 + seconds(9)));
  EXPECT_TRUE(b.take(t0 + seconds(10)));
}

// -- log_limiter ----------------------------------------------------------------------

TEST(LogLimiter, ABurstThenTheRateAndOneSummaryPerPeriod) {
  log_limits l;
  l.lines_per_minute = 6;
  l.burst = 3;
  l.summary_period = seconds(60);
  log_limiter lim(l);
  const auto t0 = clock_type::time_point{} + std::chrono::hours(5);
  EXPECT_TRUE(lim.admit(t0));
  EXPECT_TRUE(lim.admit(t0));
  EXPECT_TRUE(lim.admit(t0));
  EXPECT_FALSE(lim.admit(t0));
  EXPECT_FALSE(lim.admit(t0 + seconds(5)));
  EXPECT_EQ(lim.pending(), 2u);
  // Six per minute: one token every 10 s (5 s are gone already).
  EXPECT_TRUE(lim.admit(t0 + seconds(10)));
  EXPECT_FALSE(lim.admit(t0 + seconds(11)));
  EXPECT_EQ(lim.take_summary(t0 + seconds(59)), 0u) << "not a period since the first refusal";
  EXPECT_EQ(lim.take_summary(t0 + seconds(60)), 3u);
  EXPECT_EQ(lim.take_summary(t0 + seconds(200)), 0u) << "nothing refused since";
  EXPECT_EQ(lim.suppressed_total(), 3u);
  // A long quiet time refills the burst, never beyond it.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(lim.admit(t0 + minutes(60)));
  EXPECT_FALSE(lim.admit(t0 + minutes(60)));
}

TEST(LogLimiter, AZeroRateAdmitsTheBurstOnly) {
  log_limits l;
  l.lines_per_minute = 0;
  l.burst = 2;
  log_limiter lim(l);
  const auto t0 = clock_type::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(lim.admit(t0));
  EXPECT_TRUE(lim.admit(t0 + minutes(1)));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(lim.admit(t0 + minutes(2 + i)));
  EXPECT_EQ(lim.suppressed_total(), 100u);
}

/// The default logger writes into a string while the test runs.
class captured_log {
 public:
  captured_log() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
  }
  ~captured_log() { spdlog::set_default_logger(previous_); }
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream in(out_.str());
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }
  std::size_t count(const std::string& needle) const {
    std::size_t n = 0;
    for (const auto& l : lines()) n += l.find(needle) != std::string::npos;
    return n;
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(SwarmLog, LinesBeyondTheBudgetAreCountedAndSummarised) {
  captured_log log;
  log_limits l;
  l.lines_per_minute = 0;
  l.burst = 4;
  swarm_log& sl = swarm_log::instance();
  sl.configure(l);
  const std::uint64_t before = sl.suppressed_total();
  const auto t0 = clock_type::time_point{} + std::chrono::hours(2);
  for (int i = 0; i < 1000; ++i) sl.info(t0 + seconds(i / 100), "remediation of swarm {}: start", i);
  EXPECT_EQ(log.count("remediation of swarm"), 4u);
  EXPECT_EQ(sl.suppressed_total() - before, 996u);
  EXPECT_EQ(log.count("suppressed"), 0u) << "no summary before a period has passed";
  sl.flush(t0 + seconds(61));
  EXPECT_EQ(log.count("996 per-swarm info lines suppressed"), 1u);
  sl.flush(t0 + seconds(200));
  EXPECT_EQ(log.count("suppressed"), 1u) << "one summary for one window";
  sl.configure(log_limits{});
}

// -- the mailbox backlog ---------------------------------------------------------------

class SwarmBounds : public test::caf_fixture {
 protected:
  const info_hash hash = test::ih(0x77);
  swarm_config cfg;

  SwarmBounds() {
    cfg.announce_interval = seconds(60);
    cfg.min_interval = seconds(30);
    cfg.peer_timeout = seconds(200);
    cfg.behaviour.early_refuse_after = 0;
  }
};

TEST_F(SwarmBounds, TicketsBeyondTheBacklogAreAnsweredBusyUnapplied) {
  cfg.max_backlog = 5;
  auto swarm = track(test::untyped(spawn_swarm(*sys, hash, cfg, 7)));
  run();
  constexpr int sent = 20;
  std::vector<std::shared_ptr<test::ticket_outcome<announce_result>>> outs;
  for (int i = 0; i < sent; ++i) {
    auto out = std::make_shared<test::ticket_outcome<announce_result>>();
    outs.push_back(out);
    auto a = test::swarm_announce_of(hash, static_cast<std::uint64_t>(i),
                                     v4(10, 0, 1, static_cast<std::uint8_t>(i), 6881), 100,
                                     announce_event::started);
    caf::anon_send(swarm, announce_atom::value,
                   announce_ticket_ptr(std::make_shared<test::recording_announce_ticket>(a, out)));
  }
  run();  // all 20 wait in the mailbox, then are served in order
  int busy = 0;
  int served = 0;
  for (int i = 0; i < sent; ++i) {
    ASSERT_TRUE(outs[i]->result) << i;
    const announce_result& r = *outs[i]->result;
    if (r.failure_reason == swarm_busy_reason) {
      ++busy;
      EXPECT_EQ(r.retry_in_minutes, cfg.busy_retry_in_minutes);
      // Shed from the front: the oldest, while more than 5 wait behind.
      EXPECT_LT(i, sent - 5) << "ticket " << i << " had at most 5 behind it";
    } else {
      EXPECT_TRUE(r.failure_reason.empty());
      ++served;
    }
  }
  // Ticket i has sent - 1 - i behind it: busy while that is above 5.
  EXPECT_EQ(busy, sent - 1 - 5);
  EXPECT_EQ(served, 6);
  // Shed announces were not applied.
  auto st = test::scrape_by_ticket(swarm, [this] { run(); });
  ASSERT_TRUE(st);
  EXPECT_EQ(st->incomplete, served);
}

TEST_F(SwarmBounds, AnUnboundedBacklogServesEveryTicket) {
  cfg.max_backlog = 0;
  auto swarm = track(test::untyped(spawn_swarm(*sys, hash, cfg, 7)));
  run();
  std::vector<std::shared_ptr<test::ticket_outcome<announce_result>>> outs;
  for (int i = 0; i < 50; ++i) {
    auto out = std::make_shared<test::ticket_outcome<announce_result>>();
    outs.push_back(out);
    auto a = test::swarm_announce_of(hash, static_cast<std::uint64_t>(i),
                                     v4(10, 0, 2, static_cast<std::uint8_t>(i), 6881), 100,
                                     announce_event::started);
    caf::anon_send(swarm, announce_atom::value,
                   announce_ticket_ptr(std::make_shared<test::recording_announce_ticket>(a, out)));
  }
  run();
  for (const auto& o : outs) {
    ASSERT_TRUE(o->result);
    EXPECT_TRUE(o->result->failure_reason.empty());
  }
}

// -- the per-address bound's counter and its one log line --------------------------------

class counting_registry final : public swarm_registry {
 public:
  bool erase_if_owner(const info_hash&, const caf::actor_addr&) override { return true; }
  std::shared_ptr<swarm_totals> totals() const override { return totals_; }
  std::shared_ptr<swarm_totals> totals_ = std::make_shared<swarm_totals>();
};

TEST_F(SwarmBounds, AddressRefusalsAreCountedAndLoggedOnce) {
  captured_log log;
  cfg.max_peers_per_address = 2;
  auto reg = std::make_shared<counting_registry>();
  auto swarm = track(test::untyped(spawn_swarm(*sys, hash, cfg, 7, reg)));
  run();
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    auto r = test::announce_by_ticket(
        swarm,
        test::swarm_announce_of(hash, static_cast<std::uint64_t>(i),
                                v4(10, 0, 3, 1, static_cast<std::uint16_t>(6000 + i)), 100,
                                announce_event::started),
        [this] { run(); });
    ASSERT_TRUE(r);
    refused += r->failure_reason == address_full_reason;
  }
  EXPECT_EQ(refused, 8);
  EXPECT_EQ(reg->totals_->address_refused.load(), 8u);
  EXPECT_EQ(log.count("tracker.max-peers-per-address"), 1u);
}

// On a real scheduler, with tickets arriving from several threads while the
// swarm runs: its backlog count reads messages enqueued during the handler.
TEST(SwarmBoundsConcurrency, TicketsFromSeveralThreadsAreEachAnsweredAndShedOnesUnapplied) {
  caf::actor_system_config sys_cfg;
  sys_cfg.set("scheduler.max-threads", 2);
  sys_cfg.set("logger.file-verbosity", caf::atom("quiet"));
  register_message_types(sys_cfg);
  caf::actor_system sys{sys_cfg};
  const info_hash hash = test::ih(0x78);
  swarm_config cfg;
  cfg.announce_interval = seconds(60);
  cfg.min_interval = seconds(30);
  cfg.peer_timeout = seconds(600);
  cfg.behaviour.early_refuse_after = 0;
  cfg.max_backlog = 8;
  auto swarm = spawn_swarm(sys, hash, cfg, 7);
  constexpr int threads = 3;
  constexpr int per_thread = 1500;
  std::vector<std::vector<std::future<caf::expected<announce_result>>>> outcomes(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        auto ticket = std::make_shared<test::waitable_announce_ticket>(test::swarm_announce_of(
            hash, static_cast<std::uint64_t>(t * per_thread + i),
            v4(10, static_cast<std::uint8_t>(t), static_cast<std::uint8_t>(i >> 8),
               static_cast<std::uint8_t>(i & 0xff), 6881),
            100, announce_event::started));
        outcomes[t].push_back(ticket->outcome());
        caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(std::move(ticket)));
      }
    });
  }
  for (auto& th : pool) th.join();
  int served = 0;
  int busy = 0;
  for (auto& per : outcomes) {
    for (auto& f : per) {
      ASSERT_EQ(f.wait_for(seconds(30)), std::future_status::ready);
      auto r = f.get();
      ASSERT_TRUE(r) << sys.render(r.error());
      if (r->failure_reason == swarm_busy_reason)
        ++busy;
      else if (r->failure_reason.empty())
        ++served;
      else
        ADD_FAILURE() << r->failure_reason;
    }
  }
  EXPECT_EQ(served + busy, threads * per_thread);
  EXPECT_GT(busy, 0) << "the senders never got ahead of the swarm: nothing tested the backlog";
  EXPECT_GT(served, 0);
  // Every served ticket added its peer; a shed one added none.
  caf::scoped_actor self{sys};
  std::int64_t incomplete = -1;
  self->request(swarm, seconds(10), status_atom::value)
      .receive([&](const swarm_status& st) { incomplete = st.stats.incomplete; },
               [&](const caf::error& e) { ADD_FAILURE() << sys.render(e); });
  EXPECT_EQ(incomplete, served);
  self->send_exit(swarm, caf::exit_reason::user_shutdown);
}

}  // namespace
}  // namespace sk
