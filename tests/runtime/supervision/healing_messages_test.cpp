// The self-healing message types survive CAF serialization (the admin API
// and the cluster will move them between nodes) and are registered under
// stable names.

#include <gtest/gtest.h>

#include <vector>

#include "runtime/messages.hpp"
#include "tracker/swarm_core.hpp"
#include "serialization.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

struct HealingMessages : ::testing::Test {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  HealingMessages() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    register_message_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  caf::message round_trip(const caf::message& msg) { return test::round_trip(*sys, msg); }
};

TEST_F(HealingMessages, StatusWithHistoryRoundTrips) {
  swarm_status s;
  s.hash = test::ih(0x77, 1);
  s.stats = {3, 9, 2};
  s.knobs.policy = policy_kind::flash_crowd;
  s.knobs.leecher_interval_scale = 0.5;
  s.knobs.seeder_warning = true;
  s.evaluated = true;
  s.health.state = swarm_health::critical;
  s.health.reasons = reason_no_seeders | reason_stalled_leechers;
  s.health.leechers = 9;
  s.health.stalled = 7;
  s.health.completion_rate = 1.5;
  s.health.progress_median = 0.25f;
  s.health.at = health_time{} + std::chrono::seconds(1234);
  remediation_record r;
  r.at = s.health.at;
  r.action = "rollback";
  r.strategy = "flash-crowd";
  r.reason = "badness 235.0 -> 235.0: did not help";
  r.detail = to_string(s.knobs);
  r.before = health_signals::of(s.health);
  r.after.state = swarm_health::degraded;
  s.history.push_back(r);
  s.announces = 42;
  s.refused = 1;
  auto out = round_trip(caf::make_message(s));
  ASSERT_TRUE(out.match_elements<swarm_status>());
  const auto& y = out.get_as<swarm_status>(0);
  EXPECT_EQ(y.hash, s.hash);
  EXPECT_EQ(y.stats.incomplete, 9);
  EXPECT_EQ(y.knobs, s.knobs);
  EXPECT_TRUE(y.evaluated);
  EXPECT_EQ(y.health.state, swarm_health::critical);
  EXPECT_EQ(y.health.reasons, s.health.reasons);
  EXPECT_EQ(y.health.stalled, 7u);
  EXPECT_EQ(y.health.completion_rate, 1.5);
  EXPECT_EQ(y.health.progress_median, 0.25f);
  EXPECT_EQ(y.health.at, s.health.at);
  ASSERT_EQ(y.history.size(), 1u);
  EXPECT_EQ(y.history[0].action, "rollback");
  EXPECT_EQ(y.history[0].strategy, "flash-crowd");
  EXPECT_EQ(y.history[0].before.stalled, 7u);
  EXPECT_EQ(y.history[0].after.state, swarm_health::degraded);
  EXPECT_EQ(y.announces, 42u);
  EXPECT_EQ(y.refused, 1u);
}

TEST_F(HealingMessages, SupervisorEventsRoundTrip) {
  std::vector<supervisor_event> ev{
      {health_time{} + std::chrono::seconds(5), test::ih(1), "restart", "crashed"}};
  auto out = round_trip(caf::make_message(ev));
  ASSERT_TRUE(out.match_elements<std::vector<supervisor_event>>());
  const auto& y = out.get_as<std::vector<supervisor_event>>(0);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].kind, "restart");
  EXPECT_EQ(y[0].hash, test::ih(1));
}

TEST_F(HealingMessages, TypesAreRegisteredUnderStableNames) {
  for (const char* name :
       {"sk::health_report", "sk::swarm_knobs", "sk::remediation_record", "sk::remediation_records",
        "sk::supervisor_event", "sk::supervisor_events", "sk::swarm_status", "sk::info_hashes"}) {
    EXPECT_NE(sys->types().make_value(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace sk
