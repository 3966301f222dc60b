// An operator-started remediation plan (runtime/remediation_actor.hpp): strategies
// from the operator reasons even while the swarm reports healthy, the end
// after healthy_time with the baseline, and abort (an operator stop).

#include <gtest/gtest.h>

#include "runtime/remediation_actor.hpp"

namespace sk {
namespace {

using std::chrono::seconds;

health_report healthy_at(std::int64_t t) {
  health_report r;
  r.at = health_time{} + seconds(t);
  r.state = swarm_health::healthy;
  r.seeders = 3;
  r.leechers = 3;
  return r;
}

TEST(OperatorRemediation, ReasonsDefaultToStarvation) {
  EXPECT_EQ(operator_reasons_for(0), reason_few_seeders | reason_stalled_leechers);
  EXPECT_EQ(operator_reasons_for(reason_abusive_clients), std::uint32_t{reason_abusive_clients});
}

TEST(OperatorRemediation, AppliesStrategiesToAHealthySwarmAndEndsWithTheBaseline) {
  remediation_config cfg;
  cfg.watch_ticks = 1;
  cfg.healthy_time = seconds(100);
  swarm_knobs base;
  remediation_plan plan(cfg, base, operator_reasons_for(0));
  auto s = plan.on_report(healthy_at(0));
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(s.knobs->policy, policy_kind::stalled_boost);
  ASSERT_GE(s.records.size(), 2u);
  EXPECT_EQ(s.records[0].action, "start");
  EXPECT_NE(s.records[0].reason.find("operator"), std::string::npos);
  EXPECT_EQ(s.records[1].action, "apply");
  EXPECT_FALSE(s.done);
  // Healthy: the trial is kept and the next strategy escalates.
  s = plan.on_report(healthy_at(10));
  EXPECT_FALSE(s.done);
  EXPECT_GE(plan.active().size(), 1u);
  // Healthy for healthy_time: the end, every knob back to the baseline.
  s = plan.on_report(healthy_at(100));
  EXPECT_TRUE(s.done);
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(s.knobs->policy, base.policy);
  EXPECT_EQ(s.knobs->leecher_interval_scale, base.leecher_interval_scale);
}

TEST(OperatorRemediation, WithoutOperatorReasonsAHealthySwarmGetsNothing) {
  remediation_config cfg;
  cfg.healthy_time = seconds(100);
  remediation_plan plan(cfg, swarm_knobs{});
  auto s = plan.on_report(healthy_at(0));
  EXPECT_FALSE(s.knobs);
  EXPECT_TRUE(plan.active().empty());
}

TEST(OperatorRemediation, AbortRestoresTheBaseline) {
  remediation_plan plan(remediation_config{}, swarm_knobs{}, operator_reasons_for(0));
  plan.on_report(healthy_at(0));
  ASSERT_FALSE(plan.active().empty());
  auto s = plan.abort(healthy_at(5), "stopped by an operator");
  EXPECT_TRUE(s.done);
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(s.knobs->policy, swarm_knobs{}.policy);
  ASSERT_EQ(s.records.size(), 1u);
  EXPECT_EQ(s.records[0].action, "end");
  EXPECT_TRUE(plan.active().empty());
}

}  // namespace
}  // namespace sk
