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

namespace sk {
namespace {

TEST(SwarmSettingsNodeState, LiveStateTravelsBesideTheConfigNotInIt) {
  // Equal configs are equal whatever live state their settings carry: the
  // ban list and the census are not settings.
  swarm_config a;
  swarm_config b;
  EXPECT_TRUE(same_config(a, b));
  auto bans = std::make_shared<live_ban_list>();
  auto census = std::make_shared<node_census>(node_caps{5, 7});
  const swarm_settings with(a, node_shared{bans, census});
  const swarm_settings without(b);
  EXPECT_TRUE(same_config(with.config, without.config));
  EXPECT_EQ(with.node.bans, bans);
  EXPECT_EQ(with.node.census, census);
  EXPECT_EQ(with.node.census->caps().max_swarms, 5u);
  EXPECT_EQ(without.node.bans, nullptr);
  EXPECT_EQ(without.node.census, nullptr);
  // share_settings makes settings without node state.
  EXPECT_EQ(share_settings(a)->node.bans, nullptr);
  b.max_peers = 3;
  EXPECT_FALSE(same_config(a, b));
  EXPECT_EQ(swarm_config{}.max_peers, 200000u);
}

TEST(NodeCaps, ValidationAndTheCensusCounts) {
  EXPECT_EQ(node_caps{}.validate(), "");
  const node_caps no_swarms{0, 1};
  const node_caps no_peers{1, 0};
  EXPECT_NE(no_swarms.validate().find("max swarms"), std::string::npos);
  EXPECT_NE(no_peers.validate().find("max peers"), std::string::npos);
  node_census c(node_caps{2, 3});
  EXPECT_FALSE(c.swarms_full());
  c.add_swarms(2);
  EXPECT_TRUE(c.swarms_full());
  c.add_swarms(-1);
  EXPECT_FALSE(c.swarms_full());
  c.add_peers(3);
  EXPECT_TRUE(c.peers_full());
  // The reached state changes once each way: the caller logs each moment
  // once.
  EXPECT_TRUE(c.reach(node_cap::peers));
  EXPECT_FALSE(c.reach(node_cap::peers));
  EXPECT_EQ(c.reached(node_cap::peers), 1);
  EXPECT_TRUE(c.clear(node_cap::peers));
  EXPECT_FALSE(c.clear(node_cap::peers));
  c.swarm_at_peer_cap(1);
  c.swarm_at_peer_cap(1);
  EXPECT_EQ(c.reached(node_cap::swarm_peers), 2);
  c.count_refusal(node_cap::new_swarm_budget);
  EXPECT_EQ(c.refusals(node_cap::new_swarm_budget), 1u);
  EXPECT_EQ(c.refusals(node_cap::swarms), 0u);
  EXPECT_EQ(to_string(node_cap::swarm_peers), "swarm_peers");
}

}  // namespace
}  // namespace sk
