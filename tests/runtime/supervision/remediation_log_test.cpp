// Many swarms remediating at once behind a real directory and supervisor:
// their per-swarm info lines stay within the node's budget
// (runtime/swarm_actor_log.hpp), the rest are counted and summarised, and
// the remediations themselves run as they would without a budget.

#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "runtime/directory.hpp"
#include "runtime/supervisor.hpp"
#include "runtime/swarm_actor_log.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::v4;

class RemediationLog : public test::caf_fixture {
 protected:
  RemediationLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    cfg.health_tick = seconds(10);
    cfg.behaviour.stall_announces = 2;
    cfg.behaviour.stall_time = seconds(60);
    scfg.remediation_cfg.watch_ticks = 2;
  }
  ~RemediationLog() override {
    if (dir) dir->stop_all();
    run();
    swarm_log::instance().configure(log_limits{});
    spdlog::set_default_logger(previous_);
  }

  std::size_t count(const std::string& needle) const {
    std::size_t n = 0;
    std::istringstream in(out_.str());
    for (std::string l; std::getline(in, l);) n += l.find(needle) != std::string::npos;
    return n;
  }

  /// `swarms` swarms of 10 leechers without seeders that make no progress:
  /// each goes critical and gets a remediation.
  std::size_t starve_many(int swarms) {
    dir = std::make_unique<swarm_directory>(*sys, cfg, 8);
    dir->start_supervisor(scfg);
    run();
    for (int round = 0; round < 3; ++round) {
      for (int s = 0; s < swarms; ++s) {
        const info_hash h = test::ih(static_cast<std::uint8_t>(s), 7);
        auto swarm = dir->route_swarm(h);
        run();
        for (std::uint64_t i = 1; i <= 10; ++i) {
          auto r = test::announce_by_ticket(
              swarm,
              test::swarm_announce_of(h, i, v4(10, static_cast<std::uint8_t>(s), 0, static_cast<std::uint8_t>(i), 6881), 1000,
                                      round == 0 ? announce_event::started : announce_event::none),
              [this] { run(); });
          EXPECT_TRUE(r);
        }
      }
      advance(seconds(round < 2 ? 60 : 30));
    }
    auto sup = dir->supervisor_handle();
    auto r = ask<std::vector<info_hash>>(test::untyped(sup), remediate_atom::value,
                                         caf::get_atom::value);
    EXPECT_TRUE(r);
    return r ? r->size() : 0;
  }

  swarm_config cfg;
  supervisor_config scfg;
  std::unique_ptr<swarm_directory> dir;

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(RemediationLog, WithoutABudgetEverySwarmWritesItsLines) {
  log_limits l;
  l.burst = 1000000;
  swarm_log::instance().configure(l);
  constexpr int swarms = 40;
  EXPECT_EQ(starve_many(swarms), static_cast<std::size_t>(swarms));
  // A start line and at least one action line per swarm.
  EXPECT_GE(count("remediation started"), static_cast<std::size_t>(swarms));
  EXPECT_GE(count("remediation of swarm"), static_cast<std::size_t>(2 * swarms));
  EXPECT_EQ(count("suppressed"), 0u);
}

TEST_F(RemediationLog, ManyRemediatingSwarmsStayWithinTheBudget) {
  log_limits l;
  l.lines_per_minute = 0;
  l.burst = 10;
  swarm_log::instance().configure(l);
  const std::uint64_t before = swarm_log::instance().suppressed_total();
  constexpr int swarms = 40;
  // Every swarm still gets its remediation: only the lines are held back.
  EXPECT_EQ(starve_many(swarms), static_cast<std::size_t>(swarms));
  const std::size_t written = count("remediation started") + count("remediation of swarm");
  EXPECT_LE(written, 10u);
  EXPECT_GT(written, 0u);
  const std::uint64_t held = swarm_log::instance().suppressed_total() - before;
  EXPECT_GE(held, static_cast<std::uint64_t>(3 * swarms - 10));
  // The summary comes with a later health tick (a minute after the first
  // refusal), not with the next per-swarm line.
  advance(seconds(70), seconds(10));
  EXPECT_GE(count("per-swarm info lines suppressed"), 1u);
}

}  // namespace
}  // namespace sk
