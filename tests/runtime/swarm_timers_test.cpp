// swarm_timers: the node's wheel of the swarms' wake-ups. Every wake-up
// comes at the first collect at or after its time, never before, once;
// re-arming replaces, disarming removes; times past a turn of the wheel and
// times already passed; a swarm whose actor is gone is not reported. Checked
// against a model under random arms, disarms and collects.

#include "runtime/swarm_timers.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <caf/all.hpp>

namespace sk {
namespace {

using namespace std::chrono_literals;
using time_point = swarm_timers::time_point;

class SwarmTimers : public ::testing::Test {
 protected:
  SwarmTimers() {
    cfg_.set("logger.file-verbosity", caf::atom("quiet"));
    sys_ = std::make_unique<caf::actor_system>(cfg_);
  }

  /// An actor to wake (it never runs a message here).
  caf::actor spawn() {
    auto a = sys_->spawn(
        [](caf::event_based_actor*) -> caf::behavior { return {[](caf::tick_atom) {}}; });
    actors_.push_back(a);
    return a;
  }
  static caf::actor_control_block* ctrl(const caf::actor& a) {
    return caf::actor_cast<caf::abstract_actor*>(a)->ctrl();
  }
  static caf::actor_control_block* ctrl(const caf::strong_actor_ptr& p) { return p.get(); }

  ~SwarmTimers() override {
    for (auto& a : actors_) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }

  const time_point t0 = time_point{} + std::chrono::hours(1);
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::vector<caf::actor> actors_;
};

TEST_F(SwarmTimers, WakesAtItsTimeNeverBeforeAndOnce) {
  swarm_timers w;
  swarm_timer t;
  auto a = spawn();
  w.arm(t, ctrl(a), wake_sweep, t0 + 10s);
  w.arm(t, ctrl(a), wake_tick, t0 + 60s);
  EXPECT_EQ(w.armed(), 1u);
  std::vector<swarm_timers::due> out;
  EXPECT_EQ(w.collect(t0, out), 0u);
  EXPECT_EQ(w.collect(t0 + 10s - 1ns, out), 0u);
  ASSERT_EQ(w.collect(t0 + 10s, out), 1u);
  EXPECT_EQ(ctrl(out[0].swarm), ctrl(a));
  EXPECT_EQ(out[0].what, wake_sweep);
  EXPECT_FALSE(t.armed(wake_sweep));
  EXPECT_TRUE(t.armed(wake_tick));
  EXPECT_EQ(w.armed(), 1u);  // the tick is still to come
  out.clear();
  EXPECT_EQ(w.collect(t0 + 10s, out), 0u);
  EXPECT_EQ(w.collect(t0 + 59s, out), 0u);
  ASSERT_EQ(w.collect(t0 + 61s, out), 1u);
  EXPECT_EQ(out[0].what, wake_tick);
  EXPECT_EQ(w.armed(), 0u);
  out.clear();
  EXPECT_EQ(w.collect(t0 + 200s, out), 0u);
}

TEST_F(SwarmTimers, BothDueAtOnceComeAsOneAndReArmingReplaces) {
  swarm_timers w;
  swarm_timer t;
  auto a = spawn();
  w.arm(t, ctrl(a), wake_sweep, t0 + 5s);
  w.arm(t, ctrl(a), wake_tick, t0 + 5s);
  w.arm(t, ctrl(a), wake_sweep, t0 + 7s);  // replaces the sweep at 5 s
  std::vector<swarm_timers::due> out;
  ASSERT_EQ(w.collect(t0 + 6s, out), 1u);
  EXPECT_EQ(out[0].what, wake_tick);
  out.clear();
  w.arm(t, ctrl(a), wake_tick, t0 + 7s);
  ASSERT_EQ(w.collect(t0 + 8s, out), 1u);
  EXPECT_EQ(out[0].what, wake_sweep | wake_tick);
}

TEST_F(SwarmTimers, DisarmedNothingComes) {
  swarm_timers w;
  swarm_timer t;
  auto a = spawn();
  w.arm(t, ctrl(a), wake_sweep, t0 + 1s);
  w.arm(t, ctrl(a), wake_tick, t0 + 2s);
  w.disarm(t);
  w.disarm(t);  // twice is harmless
  EXPECT_EQ(w.armed(), 0u);
  EXPECT_FALSE(t.armed(wake_sweep));
  EXPECT_FALSE(t.armed(wake_tick));
  std::vector<swarm_timers::due> out;
  EXPECT_EQ(w.collect(t0 + 10s, out), 0u);
}

TEST_F(SwarmTimers, TimesPastATurnOfTheWheelAndTimesAlreadyPassed) {
  swarm_timers w;
  swarm_timer far;
  swarm_timer late;
  auto a = spawn();
  auto b = spawn();
  std::vector<swarm_timers::due> out;
  EXPECT_EQ(w.collect(t0, out), 0u);
  // Three turns of the wheel ahead: its slot comes round twice before it
  // is due.
  const auto turn = std::chrono::duration_cast<std::chrono::nanoseconds>(swarm_timers::slot_count *
                                                                         swarm_timers::step{1});
  const auto step = std::chrono::duration_cast<std::chrono::nanoseconds>(swarm_timers::step{1});
  w.arm(far, ctrl(a), wake_sweep, t0 + 3 * turn + step / 2);
  for (auto now = t0; now < t0 + 3 * turn; now += step) {
    ASSERT_EQ(w.collect(now, out), 0u) << (now - t0).count();
  }
  // A time before the last collect comes at the next one.
  w.arm(late, ctrl(b), wake_tick, t0 - 5s);
  ASSERT_EQ(w.collect(t0 + 3 * turn, out), 1u);
  EXPECT_EQ(ctrl(out[0].swarm), ctrl(b));
  out.clear();
  // The collector may also skip far ahead: everything due comes at once.
  ASSERT_EQ(w.collect(t0 + 1000s, out), 1u);
  EXPECT_EQ(ctrl(out[0].swarm), ctrl(a));
}

TEST_F(SwarmTimers, AnActorThatIsGoneIsNotWoken) {
  swarm_timers w;
  swarm_timer t;
  caf::weak_actor_ptr watch;
  {
    auto a = sys_->spawn(
        [](caf::event_based_actor*) -> caf::behavior { return {[](caf::tick_atom) {}}; });
    w.arm(t, ctrl(a), wake_sweep, t0 + 1s);
    watch = caf::weak_actor_ptr{ctrl(a)};
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  sys_->await_all_actors_done();
  // The scheduler's worker lets go of its reference after the actor counts
  // as done; "gone" is when nothing holds one any more.
  for (int i = 0; i < 10000 && watch.lock() != nullptr; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(watch.lock(), nullptr);
  std::vector<swarm_timers::due> out;
  EXPECT_EQ(w.collect(t0 + 2s, out), 0u);
  w.disarm(t);
}

// Random arms, re-arms, disarms and collects against a model: each timer's
// two due times; a collect must report exactly those at or before now.
TEST_F(SwarmTimers, MatchesAModelUnderRandomUse) {
  constexpr int n = 200;
  swarm_timers w;
  std::vector<std::unique_ptr<swarm_timer>> timers;
  std::vector<caf::actor> who;
  std::map<caf::actor_control_block*, int> index;
  for (int i = 0; i < n; ++i) {
    timers.push_back(std::make_unique<swarm_timer>());
    who.push_back(spawn());
    index[ctrl(who.back())] = i;
  }
  constexpr auto none = time_point::max();
  std::vector<time_point> sweep(n, none);
  std::vector<time_point> tick(n, none);
  std::mt19937_64 rng(7);
  auto now = t0;
  std::vector<swarm_timers::due> out;
  for (int round = 0; round < 20000; ++round) {
    const int i = static_cast<int>(rng() % n);
    switch (rng() % 8) {
      case 0:
      case 1:
      case 2: {
        // Mostly within a minute; sometimes past a turn of the wheel, or passed.
        const auto r = rng() % 10;
        const auto ahead = r == 0   ? std::chrono::milliseconds(rng() % 400000)
                           : r == 1 ? -std::chrono::milliseconds(rng() % 5000)
                                    : std::chrono::milliseconds(rng() % 60000);
        const auto kind = rng() % 2 == 0 ? wake_sweep : wake_tick;
        w.arm(*timers[i], ctrl(who[i]), kind, now + ahead);
        (kind == wake_sweep ? sweep : tick)[i] = now + ahead;
        break;
      }
      case 3:
        if (rng() % 8 == 0) {
          w.disarm(*timers[i]);
          sweep[i] = tick[i] = none;
        }
        break;
      default: {
        // Usually the next 100-ms step, sometimes a long gap.
        now += rng() % 50 == 0 ? std::chrono::milliseconds(rng() % 300000)
                               : std::chrono::milliseconds(rng() % 150);
        out.clear();
        w.collect(now, out);
        std::vector<std::uint8_t> got(n, 0);
        for (const auto& d : out) {
          const int k = index.at(ctrl(d.swarm));
          ASSERT_EQ(got[k], 0) << "reported twice in one collect";
          got[k] = d.what;
        }
        for (int k = 0; k < n; ++k) {
          std::uint8_t expect = 0;
          if (sweep[k] <= now) {
            expect |= wake_sweep;
            sweep[k] = none;
          }
          if (tick[k] <= now) {
            expect |= wake_tick;
            tick[k] = none;
          }
          ASSERT_EQ(got[k], expect) << "timer " << k << " in round " << round;
          ASSERT_EQ(timers[k]->armed(wake_sweep), sweep[k] != none);
          ASSERT_EQ(timers[k]->armed(wake_tick), tick[k] != none);
        }
      }
    }
  }
  std::size_t armed = 0;
  for (int k = 0; k < n; ++k) armed += (sweep[k] != none || tick[k] != none);
  EXPECT_EQ(w.armed(), armed);
  for (auto& t : timers) w.disarm(*t);
  EXPECT_EQ(w.armed(), 0u);
}

}  // namespace
}  // namespace sk
