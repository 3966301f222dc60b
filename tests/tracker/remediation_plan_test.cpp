// The remediation plan without CAF: strategies from reasons, trial,
// keep/rollback by measured effect, escalation, exhaustion, the end after a
// healthy stretch with the baseline restored, an operator's pinned policy,
// and unevaluated reports.

#include "tracker/remediation_plan.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sk {
namespace {

using std::chrono::seconds;

health_report report(std::int64_t t, swarm_health state, std::uint32_t reasons,
                     std::uint64_t seeders, std::uint64_t leechers, std::uint64_t stalled,
                     double completions = 0.0) {
  health_report r;
  r.at = health_time{} + seconds(t);
  r.state = state;
  r.reasons = reasons;
  r.seeders = seeders;
  r.leechers = leechers;
  r.stalled = stalled;
  r.completion_rate = completions;
  return r;
}

std::vector<std::string> actions(const remediation_plan::step& s) {
  std::vector<std::string> out;
  for (const auto& r : s.records) {
    out.push_back(r.action + (r.strategy.empty() ? "" : " " + r.strategy));
  }
  return out;
}

remediation_config config() {
  remediation_config c;
  c.watch_ticks = 2;
  c.healthy_time = seconds(60);
  return c;
}

constexpr std::uint32_t starving = reason_no_seeders | reason_stalled_leechers;

TEST(RemediationPlan, StrategiesFollowTheReasons) {
  using v = std::vector<strategy>;
  EXPECT_EQ(candidate_strategies(starving),
            (v{strategy::stalled_boost, strategy::flash_crowd, strategy::seeder_rotation}));
  EXPECT_EQ(candidate_strategies(reason_abusive_clients | reason_few_seeders),
            (v{strategy::strict_quarantine, strategy::flash_crowd, strategy::seeder_rotation}));
  EXPECT_EQ(candidate_strategies(reason_seeders_leave_early), (v{strategy::keep_seeding}));
  EXPECT_EQ(candidate_strategies(reason_unreachable_peers), (v{strategy::reachability}));
  EXPECT_TRUE(candidate_strategies(0).empty());
  EXPECT_LT(
      badness(health_signals::of(report(0, swarm_health::degraded, reason_few_seeders, 1, 20, 0))),
      badness(health_signals::of(report(0, swarm_health::critical, starving, 0, 20, 15))));
}

TEST(RemediationPlan, AppliesKeepsWhatHelpsAndEndsHealthyWithTheBaseline) {
  swarm_knobs base;
  remediation_plan plan(config(), base);
  auto s = plan.on_report(report(0, swarm_health::critical, starving, 0, 20, 15));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"start", "apply stalled-boost"}));
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(s.knobs->policy, policy_kind::stalled_boost);
  EXPECT_EQ(s.knobs->leecher_interval_scale, 0.5);
  // One tick: still on trial.
  s = plan.on_report(report(60, swarm_health::critical, starving, 0, 20, 15));
  EXPECT_TRUE(s.records.empty());
  EXPECT_FALSE(s.knobs);
  // Second tick: fewer stalled -> kept; still critical -> escalate.
  s = plan.on_report(report(120, swarm_health::critical, starving, 0, 20, 5));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"keep stalled-boost", "exhausted"}))
      << "flash-crowd would replace the kept policy: skipped, seeder-rotation too";
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[0].before.stalled, 15u);
  EXPECT_EQ(s.records[0].after.stalled, 5u);
  // Healthy, but not yet for 60 s.
  s = plan.on_report(report(180, swarm_health::healthy, 0, 5, 20, 0));
  EXPECT_FALSE(s.done);
  s = plan.on_report(report(220, swarm_health::healthy, 0, 5, 20, 0));
  EXPECT_FALSE(s.done);
  s = plan.on_report(report(240, swarm_health::healthy, 0, 5, 20, 0));
  EXPECT_TRUE(s.done);
  EXPECT_EQ(actions(s), (std::vector<std::string>{"end"}));
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(*s.knobs, base);
  EXPECT_TRUE(plan.done());
  EXPECT_TRUE(
      plan.on_report(report(300, swarm_health::critical, starving, 0, 1, 1)).records.empty());
}

TEST(RemediationPlan, RollsBackWhatDidNotHelpAndTriesTheNext) {
  remediation_plan plan(config(), swarm_knobs{});
  const auto few = reason_few_seeders;
  auto s = plan.on_report(report(0, swarm_health::degraded, few, 1, 20, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"start", "apply flash-crowd"}));
  EXPECT_EQ(s.knobs->policy, policy_kind::flash_crowd);
  EXPECT_TRUE(s.knobs->seeder_warning);
  plan.on_report(report(60, swarm_health::degraded, few, 1, 20, 0));
  s = plan.on_report(report(120, swarm_health::degraded, few, 1, 20, 0));
  EXPECT_EQ(actions(s),
            (std::vector<std::string>{"rollback flash-crowd", "apply seeder-rotation"}));
  EXPECT_EQ(s.knobs->policy, policy_kind::seeder_rotation);
  EXPECT_EQ(s.knobs->leecher_interval_scale, 1.0) << "flash-crowd's shorter interval rolled back";
  plan.on_report(report(180, swarm_health::degraded, few, 1, 20, 0));
  s = plan.on_report(report(240, swarm_health::degraded, few, 1, 20, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"rollback seeder-rotation", "exhausted"}));
  EXPECT_EQ(s.knobs->policy, policy_kind::adaptive);
  // Exhausted is said once; a new reason brings a new strategy.
  s = plan.on_report(report(300, swarm_health::degraded, few, 1, 20, 0));
  EXPECT_TRUE(s.records.empty());
  s = plan.on_report(report(360, swarm_health::degraded, few | reason_abusive_clients, 1, 20, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"apply strict-quarantine"}));
  EXPECT_TRUE(s.knobs->quarantine_strict);
}

TEST(RemediationPlan, EscalatesOnTopOfWhatHelped) {
  remediation_plan plan(config(), swarm_knobs{});
  const auto r0 = reason_abusive_clients | reason_few_seeders;
  plan.on_report(report(0, swarm_health::degraded, r0, 1, 20, 0));
  plan.on_report(report(60, swarm_health::degraded, r0, 1, 20, 0));
  // The abusive reason went away: strict quarantine helped; few seeders left.
  auto s = plan.on_report(report(120, swarm_health::degraded, reason_few_seeders, 1, 20, 0));
  EXPECT_EQ(actions(s),
            (std::vector<std::string>{"keep strict-quarantine", "escalate flash-crowd"}));
  EXPECT_TRUE(s.knobs->quarantine_strict);
  EXPECT_EQ(s.knobs->policy, policy_kind::flash_crowd);
  EXPECT_EQ(plan.active().size(), 2u);
}

/// Feeds `reports` to `a` and to a plan resumed from `a`'s progress taken
/// after `split` of them (with `gap` seconds passing in between, as a
/// restart would); the two must decide alike from there on.
void expect_resumed_alike(const std::vector<health_report>& reports, std::size_t split,
                          std::int64_t gap_s, remediation_plan a) {
  for (std::size_t i = 0; i < split; ++i) a.on_report(reports[i]);
  const health_time taken = reports[split - 1].at + seconds(1);
  remediation_progress p = aged(a.progress(taken), gap_s * 1000);
  // The resumed plan lives on a clock `gap_s` later: shift its reports.
  remediation_plan b(config(), p, taken + seconds(gap_s));
  EXPECT_EQ(b.knobs(), a.knobs());
  EXPECT_EQ(b.baseline(), a.baseline());
  EXPECT_EQ(b.active(), a.active());
  EXPECT_EQ(b.on_trial(), a.on_trial());
  EXPECT_EQ(b.policy_pinned(), a.policy_pinned());
  for (std::size_t i = split; i < reports.size(); ++i) {
    health_report later = reports[i];
    later.at += seconds(gap_s);
    auto sa = a.on_report(reports[i]);
    auto sb = b.on_report(later);
    EXPECT_EQ(actions(sb), actions(sa)) << "report " << i;
    EXPECT_EQ(sb.knobs, sa.knobs) << "report " << i;
    EXPECT_EQ(sb.done, sa.done) << "report " << i;
  }
  EXPECT_TRUE(a.done());
  EXPECT_TRUE(b.done());
}

TEST(RemediationPlan, AResumedPlanGoesOnWhereItStood) {
  const auto few = reason_few_seeders;
  const std::vector<health_report> reports = {
      report(0, swarm_health::degraded, few, 1, 20, 0),     // start, apply flash-crowd
      report(60, swarm_health::degraded, few, 1, 20, 0),    // on trial
      report(120, swarm_health::degraded, few, 1, 20, 0),   // rollback, apply seeder-rotation
      report(180, swarm_health::degraded, few, 4, 20, 0),   // on trial
      report(240, swarm_health::healthy, 0, 6, 20, 0),      // keep seeder-rotation
      report(270, swarm_health::healthy, 0, 6, 20, 0),      // healthy for 30 s
      report(330, swarm_health::healthy, 0, 6, 20, 0),      // end
  };
  // Split mid-trial (the trial's watch continues: ticks and time), right
  // after a rollback, and in the healthy stretch (the end comes as due).
  for (std::size_t split : {2u, 3u, 4u, 6u}) {
    SCOPED_TRACE("split after " + std::to_string(split));
    expect_resumed_alike(reports, split, 0, remediation_plan(config(), swarm_knobs{}));
  }
  // Time away counts as time: 30 s down mid-trial and in the healthy
  // stretch, every later report 30 s later too, the same decisions.
  expect_resumed_alike(reports, 3, 30, remediation_plan(config(), swarm_knobs{}));
  expect_resumed_alike(reports, 6, 30, remediation_plan(config(), swarm_knobs{}));
  // A pinned operator plan keeps its pin and its operator reasons.
  swarm_knobs pinned;
  pinned.policy = policy_kind::role_aware;
  remediation_plan op(config(), pinned, reason_few_seeders, true);
  op.on_report(report(0, swarm_health::degraded, few, 1, 20, 0));
  const remediation_progress p = op.progress(health_time{} + seconds(1));
  EXPECT_TRUE(p.policy_pinned);
  EXPECT_EQ(p.operator_reasons, reason_few_seeders);
  EXPECT_EQ(p.baseline.policy, policy_kind::role_aware);
  remediation_plan back(config(), p, health_time{} + seconds(1));
  EXPECT_EQ(back.knobs().policy, policy_kind::role_aware);
  EXPECT_TRUE(back.policy_pinned());
}

TEST(RemediationPlan, ProgressFromAFileCannotNameAStrategyThatDoesNotExist) {
  remediation_progress p;
  p.started = true;
  p.active = {static_cast<std::uint16_t>(strategy::keep_seeding), 200};
  p.tried = {7, static_cast<std::uint16_t>(strategy::keep_seeding)};
  p.trial = 99;
  p.trial_age_ms = 5000;
  remediation_plan plan(config(), p, health_time{} + seconds(100));
  EXPECT_EQ(plan.active(), (std::vector<strategy>{strategy::keep_seeding}));
  EXPECT_FALSE(plan.on_trial());
  EXPECT_FALSE(plan.done());
}

TEST(RemediationPlan, AbortRestoresTheBaseline) {
  swarm_knobs base;
  base.policy = policy_kind::role_aware;
  remediation_plan plan(config(), base);
  plan.on_report(report(0, swarm_health::critical, starving, 0, 20, 15));
  auto s = plan.abort(report(10, swarm_health::critical, starving, 0, 20, 15), "swarm gone");
  EXPECT_TRUE(s.done);
  EXPECT_EQ(*s.knobs, base);
  EXPECT_EQ(actions(s), (std::vector<std::string>{"end"}));
}

TEST(RemediationPlan, APinnedPolicyIsNeverReplaced) {
  swarm_knobs base;
  base.policy = policy_kind::role_aware;
  remediation_plan plan(config(), base, 0, /*policy_pinned=*/true);
  auto s = plan.on_report(report(0, swarm_health::critical,
                                 reason_no_seeders | reason_stalled_leechers, 0, 10, 8));
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(plan.on_trial(), strategy::stalled_boost);
  EXPECT_EQ(s.knobs->policy, policy_kind::role_aware);
  EXPECT_LT(s.knobs->leecher_interval_scale, 1.0) << "its other knob is turned";
  // Every strategy, rolled back or kept, leaves the policy alone.
  for (std::int64_t t = 60; t <= 600; t += 60) {
    s = plan.on_report(report(t, swarm_health::critical,
                              reason_no_seeders | reason_stalled_leechers, 0, 10, 8));
    EXPECT_EQ(plan.knobs().policy, policy_kind::role_aware) << "at " << t;
  }
}

TEST(RemediationPlan, UnderAPinAStrategyThatOnlySetsThePolicyIsNotTried) {
  remediation_plan plan(config(), swarm_knobs{}, 0, /*policy_pinned=*/true);
  auto s = plan.on_report(report(0, swarm_health::degraded, reason_unreachable_peers, 5, 5, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"start", "exhausted"}));
  EXPECT_FALSE(s.knobs);
  // Unpinned, the same report tries reachability.
  remediation_plan free(config(), swarm_knobs{});
  s = free.on_report(report(0, swarm_health::degraded, reason_unreachable_peers, 5, 5, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"start", "apply reachability"}));
}

TEST(RemediationPlan, RebaseAppliesAPinAtOnceAndTheEndRestoresIt) {
  remediation_plan plan(config(), swarm_knobs{});
  auto s = plan.on_report(report(0, swarm_health::critical, reason_no_seeders, 0, 10, 0));
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(s.knobs->policy, policy_kind::flash_crowd);
  swarm_knobs pinned;
  pinned.policy = policy_kind::random;
  auto k = plan.rebase(pinned, true);
  ASSERT_TRUE(k);
  EXPECT_EQ(k->policy, policy_kind::random);
  EXPECT_TRUE(k->seeder_warning) << "flash-crowd's other knobs stay";
  EXPECT_EQ(plan.knobs(), *k);
  EXPECT_EQ(plan.baseline(), pinned);
  EXPECT_TRUE(plan.policy_pinned());
  s = plan.abort(report(10, swarm_health::critical, reason_no_seeders, 0, 10, 0), "stop");
  ASSERT_TRUE(s.knobs);
  EXPECT_EQ(*s.knobs, pinned);
  EXPECT_FALSE(plan.rebase(swarm_knobs{}, false)) << "done: nothing to set";
}

TEST(RemediationPlan, UnevaluatedIsNeitherUnhealthyNorWorseThanHealthy) {
  health_signals healthy = health_signals::of(report(0, swarm_health::healthy, 0, 1, 1, 0));
  health_signals small = healthy;
  small.state = swarm_health::unevaluated;
  EXPECT_EQ(badness(small), badness(healthy));
  // A remediated swarm that shrinks below the health model's minimum is
  // judged no further and ends after healthy_time, like a healthy one.
  remediation_plan plan(config(), swarm_knobs{});
  plan.on_report(report(0, swarm_health::critical, reason_no_seeders, 0, 10, 0));
  ASSERT_TRUE(plan.on_trial());
  auto s = plan.on_report(report(30, swarm_health::unevaluated, 0, 0, 2, 0));
  EXPECT_TRUE(actions(s).empty()) << "nothing new is tried on an unevaluated swarm";
  s = plan.on_report(report(60, swarm_health::unevaluated, 0, 0, 2, 0));
  EXPECT_EQ(actions(s), (std::vector<std::string>{"keep flash-crowd"}));
  EXPECT_FALSE(s.done);
  s = plan.on_report(report(30 + config().healthy_time.count(), swarm_health::unevaluated, 0, 0,
                            2, 0));
  EXPECT_TRUE(s.done);
  ASSERT_FALSE(s.records.empty());
  EXPECT_EQ(s.records.back().action, "end");
  EXPECT_EQ(s.records.back().after.state, swarm_health::unevaluated) << "the real state";
}

TEST(RemediationPlan, ConfigIsValidated) {
  EXPECT_EQ(remediation_config{}.validate(), "");
  remediation_config c;
  c.watch_ticks = 0;
  EXPECT_NE(c.validate().find("watch ticks"), std::string::npos);
  c = {};
  c.leecher_interval_scale = 1.5;
  EXPECT_NE(c.validate().find("leecher interval scale"), std::string::npos);
}

}  // namespace
}  // namespace sk
