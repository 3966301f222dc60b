#include "tracker/swarm_config.hpp"

#include <gtest/gtest.h>

namespace sk {
namespace {

using std::chrono::seconds;

TEST(SwarmConfig, DefaultsAreValid) {
  swarm_config cfg;
  EXPECT_EQ(cfg.validate(), "");
  EXPECT_EQ(cfg.announce_interval, seconds(1800));
  EXPECT_EQ(cfg.min_interval, seconds(900));
  EXPECT_EQ(cfg.max_numwant, 50);
  EXPECT_GT(cfg.peer_timeout, cfg.announce_interval);
}

/// Expects `validate()` to fail and to name what is wrong.
void expect_invalid(const swarm_config& cfg, const std::string& mentions) {
  const std::string msg = cfg.validate();
  EXPECT_FALSE(msg.empty()) << "expected an error mentioning '" << mentions << "'";
  EXPECT_NE(msg.find(mentions), std::string::npos) << msg;
}

TEST(SwarmConfig, BadValuesAreRejectedWithAClearMessage) {
  swarm_config c;
  c.announce_interval = seconds(0);
  expect_invalid(c, "announce interval must be positive");
  c = {};
  c.min_interval = seconds(-5);
  expect_invalid(c, "min interval must be positive (got -5 s)");
  c = {};
  c.min_interval = seconds(2000);
  expect_invalid(c, "must not exceed the announce interval");
  c = {};
  c.max_numwant = 0;
  expect_invalid(c, "max numwant");
  c = {};
  c.max_numwant = 20000;
  expect_invalid(c, "max numwant must be between 1 and 10000 (got 20000)");
  c = {};
  c.default_numwant = 60;
  expect_invalid(c, "default numwant");
  c = {};
  c.default_numwant = -2;
  expect_invalid(c, "default numwant");
  c = {};
  c.peer_timeout = c.announce_interval;
  expect_invalid(c, "peer timeout (1800 s) must be longer than the announce interval");
  c = {};
  c.sweep_period = seconds(0);
  expect_invalid(c, "sweep period");
  c = {};
  c.sweep_batch = 0;
  expect_invalid(c, "sweep batch");
  c = {};
  c.idle_lifetime = seconds(-1);
  expect_invalid(c, "idle swarm lifetime");
  c = {};
  c.max_peers = 0;
  expect_invalid(c, "max peers");
  c = {};
  c.idle_lifetime = seconds(0);  // allowed: end at the first empty sweep
  c.default_numwant = 0;         // allowed: peers only on request
  EXPECT_EQ(c.validate(), "");
}

TEST(SwarmConfig, SelfHealingSettingsAreValidated) {
  swarm_config c;
  EXPECT_EQ(c.default_knobs().policy, policy_kind::adaptive);
  EXPECT_EQ(c.health_tick, seconds(60));
  c.default_policy = policy_kind::role_aware;
  EXPECT_EQ(c.default_knobs().policy, policy_kind::role_aware);
  c = {};
  c.health_tick = seconds(0);
  expect_invalid(c, "health tick must be positive");
  c = {};
  c.intervals.starving_leecher_scale = 0.0;
  expect_invalid(c, "starving leecher interval scale");
  c = {};
  c.intervals.starving_leecher_scale = 1.5;
  expect_invalid(c, "starving leecher interval scale");
  c = {};
  c.intervals.large_swarm_scale = 0.5;
  expect_invalid(c, "large swarm interval scale");
  c = {};
  c.intervals.jitter = 0.9;
  expect_invalid(c, "interval jitter");
  c = {};
  c.intervals.large_swarm_peers = 0;
  expect_invalid(c, "large swarm peers");
  c = {};
  c.history_size = 0;
  expect_invalid(c, "history size");
  c = {};
  c.seeder_warning_text.clear();
  expect_invalid(c, "seeder warning text");
  c.warn_seeders_when_degraded = false;
  EXPECT_EQ(c.validate(), "");
  // The detectors', health model's and allocator's own checks are part of it.
  c = {};
  c.behaviour.stall_announces = 0;
  expect_invalid(c, "stall announces");
  c = {};
  c.health.bucket = seconds(0);
  expect_invalid(c, "health bucket");
  c = {};
  c.allocation.leecher_seeder_share = 2.0;
  EXPECT_NE(c.validate(), "");
}

TEST(SwarmConfig, NumwantResolution) {
  swarm_config cfg;
  cfg.default_numwant = 30;
  cfg.max_numwant = 80;
  EXPECT_EQ(cfg.resolve_numwant(-1), 30u);
  EXPECT_EQ(cfg.resolve_numwant(-7), 30u);
  EXPECT_EQ(cfg.resolve_numwant(0), 0u);
  EXPECT_EQ(cfg.resolve_numwant(1), 1u);
  EXPECT_EQ(cfg.resolve_numwant(80), 80u);
  EXPECT_EQ(cfg.resolve_numwant(81), 80u);
  EXPECT_EQ(cfg.resolve_numwant(2147483647), 80u);
}

}  // namespace
}  // namespace sk
