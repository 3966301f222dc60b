// The Prometheus writer (admin/admin_exposition.hpp) and the /metrics
// families (admin/admin_metrics.hpp), and the admin actor answering jobs on
// CAF's deterministic scheduler: no server, no daemon.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "admin/admin_exposition.hpp"
#include "admin/admin_metrics.hpp"
#include "admin/admin_routes.hpp"
#include "admin/admin_state.hpp"
#include "caf_fixture.hpp"
#include "runtime/directory.hpp"
#include "test_util.hpp"

namespace sk::admin_api {
namespace {

TEST(AdminExposition, WritesHelpTypeAndSamples) {
  exposition m;
  auto f = m.add("sk_things_total", metric_type::counter, "Things.");
  f.sample("", 3);
  f.sample(label("kind", "a") + "," + label("size", "big"), 2.5);
  auto h = m.add("sk_wait_seconds", metric_type::histogram, "Waits.");
  h.series("_bucket", label("le", "+Inf"), 1);
  h.series("_sum", "", 0.25);
  h.series("_count", "", 1);
  EXPECT_EQ(m.text(),
            "# HELP sk_things_total Things.\n"
            "# TYPE sk_things_total counter\n"
            "sk_things_total 3\n"
            "sk_things_total{kind=\"a\",size=\"big\"} 2.5\n"
            "# HELP sk_wait_seconds Waits.\n"
            "# TYPE sk_wait_seconds histogram\n"
            "sk_wait_seconds_bucket{le=\"+Inf\"} 1\n"
            "sk_wait_seconds_sum 0.25\n"
            "sk_wait_seconds_count 1\n");
  EXPECT_EQ(m.families(), (std::vector<std::string>{"sk_things_total", "sk_wait_seconds"}));
}

TEST(AdminExposition, AFamilyIsDefinedOnceAndWritesOnlyUnderItsOwnHeader) {
  exposition m;
  auto first = m.add("sk_a", metric_type::gauge, "A.");
  EXPECT_THROW(m.add("sk_a", metric_type::counter, "A again."), std::logic_error);
  m.add("sk_b", metric_type::gauge, "B.").sample("", 1);
  EXPECT_THROW(first.sample("", 1), std::logic_error);
}

TEST(AdminExposition, FormatsValuesAndEscapesLabels) {
  EXPECT_EQ(exposition::format(0), "0");
  EXPECT_EQ(exposition::format(-7), "-7");
  EXPECT_EQ(exposition::format(1e14), "100000000000000");
  EXPECT_EQ(exposition::format(0.5), "0.5");
  EXPECT_EQ(exposition::format(std::nan("")), "NaN");
  EXPECT_EQ(exposition::format(1.0 / 0.0), "+Inf");
  EXPECT_EQ(exposition::format(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(label("k", "plain"), "k=\"plain\"");
  EXPECT_EQ(label("k", "a\"b\\c\nd"), "k=\"a\\\"b\\\\c\\nd\"");
}

/// A directory (no transports) on the deterministic scheduler, the admin
/// state around it and the admin actor.
class AdminActor : public test::caf_fixture {
 protected:
  AdminActor() {
    state->cfg.token = "unused-here";
    state->dir = dir.get();
    state->host_name = "test-host";
    state->info.version = "test";
    actor = track(sys->spawn<caf::hidden>(admin_actor, state));
  }
  ~AdminActor() override {
    dir->stop_all();
    run();
  }

  struct answer {
    unsigned status = 0;
    std::string content_type;
    std::string body;
  };

  /// Sends one job to the admin actor and runs the scheduler until it answered.
  answer ask(const std::string& method, const std::string& target, std::string body = {}) {
    auto out = std::make_shared<answer>();
    auto job = std::make_shared<admin_job>();
    job->method = method;
    job->target = target;
    job->body = std::move(body);
    job->reply_fn = [out](unsigned st, std::string ct, std::string b) {
      out->status = st;
      out->content_type = std::move(ct);
      out->body = std::move(b);
    };
    caf::anon_send(actor, std::move(job));
    run();
    return *out;
  }

  std::unique_ptr<swarm_directory> dir =
      std::make_unique<swarm_directory>(*sys, test::short_config(3), 4);
  std::shared_ptr<admin_state> state = std::make_shared<admin_state>();
  caf::actor actor;
};

TEST_F(AdminActor, MetricsWriteEveryFamilyOnceWithoutTheUdpDuplicates) {
  dir->route(test::ih(1));
  dir->route(test::ih(2));
  run();
  const auto r = ask("GET", "/metrics");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(r.content_type, "text/plain; version=0.0.4; charset=utf-8");
  std::map<std::string, int> types;
  std::regex type_re("^# TYPE ([a-z_]+) ");
  std::istringstream lines(r.body);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, type_re)) ++types[m[1]];
  }
  for (const auto& [name, n] : types) EXPECT_EQ(n, 1) << name;
  EXPECT_EQ(types.count("swarmkeeper_tracker_requests_total"), 1u);
  EXPECT_EQ(types.count("swarmkeeper_swarms"), 1u);
  // The UDP server's answers are counted by transport in
  // swarmkeeper_tracker_requests_total only.
  EXPECT_EQ(types.count("swarmkeeper_udp_requests_total"), 0u);
  EXPECT_EQ(types.count("swarmkeeper_udp_swarm_failures_total"), 0u);
  // No transport runs here: none of their own families either.
  EXPECT_EQ(types.count("swarmkeeper_udp_datagrams_received_total"), 0u);
  EXPECT_EQ(types.count("swarmkeeper_http_connections"), 0u);
  EXPECT_NE(r.body.find("swarmkeeper_swarms{health=\"unevaluated\"} 2\n"), std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("swarmkeeper_remediations_active 0\n"), std::string::npos);
}

TEST_F(AdminActor, RoutesJobsToHandlers) {
  auto r = ask("GET", "/api/node");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["node"], "test-host");
  EXPECT_EQ(j["version"], "test");
  EXPECT_EQ(j["actors"]["swarms"], 0);

  dir->route(test::ih(7));
  run();
  r = ask("GET", "/api/swarms?sort=hash&limit=5");
  ASSERT_EQ(r.status, 200u) << r.body;
  j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["total"], 1);
  EXPECT_EQ(j["limit"], 5);
  ASSERT_EQ(j["swarms"].size(), 1u);
  EXPECT_EQ(j["swarms"][0]["hash"], test::ih(7).hex());

  r = ask("GET", "/api/swarms?sort=color");
  EXPECT_EQ(r.status, 400u);
  r = ask("GET", "/api/swarms/" + test::ih(7).hex());
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["owner_node"], "test-host");
  r = ask("GET", "/api/swarms/" + test::ih(8).hex());
  EXPECT_EQ(r.status, 404u);
  // No ban list, no access list, no supervisor.
  EXPECT_EQ(ask("DELETE", "/api/bans/-XX").status, 503u);
  EXPECT_EQ(ask("GET", "/api/access").status, 200u);
  EXPECT_EQ(ask("POST", "/api/access/reload").status, 409u);
  EXPECT_EQ(ask("GET", "/api/events").status, 200u);
  EXPECT_EQ(ask("POST", "/api/swarms/" + test::ih(7).hex() + "/remediation/start").status, 503u);
  EXPECT_EQ(ask("POST", "/api/node").status, 405u);
}

}  // namespace
}  // namespace sk::admin_api
