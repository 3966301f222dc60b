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

#include <spdlog/spdlog.h>

#include "admin/admin_auth.hpp"
#include "admin/admin_exposition.hpp"
#include "admin/admin_log.hpp"
#include "admin/admin_metrics.hpp"
#include "admin/admin_process_metrics.hpp"
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
    actor = sys->spawn<caf::hidden>(admin_actor, state);
    track(caf::actor_cast<caf::actor>(actor));
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
  admin_actor_type actor;
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

TEST_F(AdminActor, PrefixSearchFindsEverySwarmNotOnlyTheFirstPage) {
  // A fan-out of 3: a plain list sees 3 of the 20 swarms, a prefix search
  // looks at all 20 and asks only the matches.
  state->cfg.max_fanout = 3;
  for (int i = 1; i <= 20; ++i) dir->route(test::ih(static_cast<std::uint8_t>(i)));
  run();
  auto list = [this](const std::string& target) {
    auto r = ask("GET", target);
    EXPECT_EQ(r.status, 200u) << target << ": " << r.body;
    return nlohmann::json::parse(r.body, nullptr, false);
  };
  nlohmann::json j = list("/api/swarms?sort=hash");
  EXPECT_EQ(j["total"], 3);
  EXPECT_EQ(j["truncated"], true);
  for (int i = 1; i <= 20; ++i) {
    const std::string hex = test::ih(static_cast<std::uint8_t>(i)).hex();
    // Three digits ("0a0", "141", ...) name exactly one of the 20.
    j = list("/api/swarms?prefix=" + hex.substr(0, 3));
    EXPECT_EQ(j["total"], 1) << hex << ": " << j.dump();
    EXPECT_EQ(j["truncated"], false) << hex;
    EXPECT_EQ(j["prefix"], hex.substr(0, 3));
    ASSERT_EQ(j["swarms"].size(), 1u) << hex;
    EXPECT_EQ(j["swarms"][0]["hash"], hex);
  }
  // Either case; the answer names the prefix in lower case.
  j = list("/api/swarms?prefix=0A0A");
  ASSERT_EQ(j["swarms"].size(), 1u) << j.dump();
  EXPECT_EQ(j["swarms"][0]["hash"], test::ih(10).hex());
  EXPECT_EQ(j["prefix"], "0a0a");
  // The whole hash, and a prefix nobody has.
  j = list("/api/swarms?prefix=" + test::ih(20).hex());
  EXPECT_EQ(j["total"], 1);
  j = list("/api/swarms?prefix=ff");
  EXPECT_EQ(j["total"], 0);
  EXPECT_EQ(j["truncated"], false);
  EXPECT_TRUE(j["swarms"].empty());
  // "0" matches 15 (0x01..0x0f): more than the fan-out, so truncated; the
  // other filters and the page still apply to what was found.
  j = list("/api/swarms?prefix=0&sort=hash&limit=2&offset=1");
  EXPECT_EQ(j["total"], 3);
  EXPECT_EQ(j["truncated"], true);
  ASSERT_EQ(j["swarms"].size(), 2u);
  for (const auto& s : j["swarms"]) EXPECT_EQ(s["hash"].get<std::string>()[0], '0');
  j = list("/api/swarms?prefix=1&health=healthy");
  EXPECT_EQ(j["total"], 0);
  // Bad prefixes: a clear 400, whatever the other parameters.
  for (const char* bad : {"/api/swarms?prefix=", "/api/swarms?prefix=xyz", "/api/swarms?prefix=0x1",
                          "/api/swarms?prefix=ab%20cd", "/api/swarms?prefix=-1&sort=hash"}) {
    auto r = ask("GET", bad);
    EXPECT_EQ(r.status, 400u) << bad << ": " << r.body;
    EXPECT_NE(r.body.find("prefix must be 1 to 40 hex digits"), std::string::npos) << r.body;
  }
  auto r = ask("GET", "/api/swarms?prefix=" + std::string(41, 'a'));
  EXPECT_EQ(r.status, 400u) << r.body;
  EXPECT_NE(r.body.find("prefix must be 1 to 40 hex digits"), std::string::npos) << r.body;
}

/// The value of the sample `key` (name and labels) in `text`; -1 if absent.
double sample_of(const std::string& text, const std::string& key) {
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size() + 1, key + " ") == 0)
      return std::stod(line.substr(key.size() + 1));
  return -1;
}

TEST_F(AdminActor, MetricsCountEverySwarmNotOnlyTheFanOut) {
  // The swarm families come from the node-wide totals: a fan-out limit of
  // one swarm does not cap them.
  state->cfg.max_fanout = 1;
  for (int i = 1; i <= 5; ++i) dir->route(test::ih(i));
  run();
  auto r = ask("GET", "/metrics");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(sample_of(r.body, R"(swarmkeeper_swarms{health="unevaluated"})"), 5) << r.body;
  EXPECT_EQ(sample_of(r.body, R"(swarmkeeper_swarms{health="healthy"})"), 0);
  EXPECT_EQ(sample_of(r.body, R"(swarmkeeper_peers_by_role{role="seeder"})"), 0);
  // An ended swarm takes its share back.
  ASSERT_TRUE(dir->end_swarm(test::ih(3)));
  run();
  r = ask("GET", "/metrics");
  EXPECT_EQ(sample_of(r.body, R"(swarmkeeper_swarms{health="unevaluated"})"), 4) << r.body;
}

TEST_F(AdminActor, MetricsHaveBuildInfoAndTheStandardProcessFamilies) {
  const auto r = ask("GET", "/metrics");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(sample_of(r.body, R"(swarmkeeper_build_info{version="test"})"), 1) << r.body;
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                           "process_start_time_seconds"})
    EXPECT_GE(sample_of(r.body, name), 0) << name << " missing:\n" << r.body;
  EXPECT_NE(r.body.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
  EXPECT_GT(sample_of(r.body, "process_open_fds"), 0);
  EXPECT_GE(sample_of(r.body, "process_virtual_memory_bytes"),
            sample_of(r.body, "process_resident_memory_bytes"));
  // No transport, prober or cluster here: their families are left out.
  EXPECT_EQ(r.body.find("swarmkeeper_probes_total"), std::string::npos);
  EXPECT_EQ(r.body.find("swarmkeeper_cluster_members"), std::string::npos);
  EXPECT_EQ(r.body.find("swarmkeeper_resident_memory_bytes"), std::string::npos);
}

TEST(ProcessMetrics, ParsesProcStatFromTheLastParenthesis) {
  // A command with blanks and parentheses; utime 250, stime 50 ticks,
  // starttime 1000 ticks, vsize 8192, rss 3 pages.
  const std::string stat =
      "4242 (sk (a) b) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 9 0 1000 8192 3 18446744073709551615";
  proc_stat st;
  ASSERT_TRUE(parse_proc_stat(stat, 100, 4096, st));
  EXPECT_DOUBLE_EQ(st.cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(st.start_seconds_since_boot, 10.0);
  EXPECT_DOUBLE_EQ(st.virtual_bytes, 8192);
  EXPECT_DOUBLE_EQ(st.resident_bytes, 3 * 4096);
  EXPECT_FALSE(parse_proc_stat("4242 (sk) S 1 2 3", 100, 4096, st));
  EXPECT_FALSE(parse_proc_stat("no parenthesis", 100, 4096, st));
}

TEST(AdminAuthorize, TheMetricsTokenMayOnlyGetMetrics) {
  const std::string admin = "admin-token-0123456789";
  const std::string metrics = "metrics-token-0123456789";
  auto as = [&](const std::string& token, const char* method, const char* target,
                const std::string& configured_metrics_token) {
    return authorize(method, target, token.empty() ? "" : "Bearer " + token, admin,
                     configured_metrics_token)
        .status;
  };
  // The admin token: everything.
  EXPECT_EQ(as(admin, "GET", "/metrics", metrics), 0u);
  EXPECT_EQ(as(admin, "PUT", "/api/log/level", metrics), 0u);
  EXPECT_EQ(as(admin, "POST", "/api/bans", metrics), 0u);
  // The metrics token: GET /metrics (with or without a query), else 403.
  EXPECT_EQ(as(metrics, "GET", "/metrics", metrics), 0u);
  EXPECT_EQ(as(metrics, "GET", "/metrics?x=1", metrics), 0u);
  EXPECT_EQ(as(metrics, "POST", "/metrics", metrics), 403u);
  EXPECT_EQ(as(metrics, "GET", "/metrics/", metrics), 403u);
  EXPECT_EQ(as(metrics, "GET", "/api/node", metrics), 403u);
  EXPECT_EQ(as(metrics, "POST", "/api/bans", metrics), 403u);
  EXPECT_EQ(as(metrics, "PUT", "/api/log/level", metrics), 403u);
  EXPECT_STREQ(authorize("GET", "/api/node", "Bearer " + metrics, admin, metrics).message,
               "the metrics token may only GET /metrics");
  // Without a configured metrics token it is just a wrong token.
  EXPECT_EQ(as(metrics, "GET", "/metrics", ""), 401u);
  EXPECT_EQ(as("", "GET", "/metrics", metrics), 401u);
  EXPECT_EQ(as("metrics-token-012345678", "GET", "/metrics", metrics), 401u);
  EXPECT_EQ(authorize("GET", "/metrics", "Basic " + metrics, admin, metrics).status, 401u);
}

TEST_F(AdminActor, LogLevelChangesAtRunTimeAndBadInputIsA400) {
  const auto before = spdlog::default_logger_raw()->level();
  spdlog::set_level(spdlog::level::info);
  auto r = ask("GET", "/api/log/level");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["level"], "info");

  r = ask("PUT", "/api/log/level", R"({"level":"debug"})");
  ASSERT_EQ(r.status, 200u) << r.body;
  auto j = nlohmann::json::parse(r.body);
  EXPECT_EQ(j["level"], "debug");
  EXPECT_EQ(j["previous"], "info");
  EXPECT_EQ(spdlog::default_logger_raw()->level(), spdlog::level::debug);
  r = ask("GET", "/api/node");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["log"]["level"], "debug");

  const std::pair<const char*, const char*> bad[] = {
      {R"({"level":"loud"})",
       "unknown log level \"loud\" (one of trace, debug, info, warn, "
       "error, critical, off)"},
      {R"({"level":"warning"})", "unknown log level \"warning\""},
      {R"({"level":3})", "body needs a string field \"level\""},
      {R"({})", "body needs a string field \"level\""},
      {R"(["debug"])", "body must be a JSON object"},
      {"debug", "body must be a JSON object"},
      {"", "body must be a JSON object"},
  };
  for (const auto& [body, message] : bad) {
    r = ask("PUT", "/api/log/level", body);
    EXPECT_EQ(r.status, 400u) << body;
    const auto e = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_TRUE(e.is_object()) << r.body;
    EXPECT_EQ(e["error"].get<std::string>().rfind(message, 0), 0u) << body << ": " << r.body;
  }
  // A refused change changes nothing.
  EXPECT_EQ(spdlog::default_logger_raw()->level(), spdlog::level::debug);
  EXPECT_EQ(ask("POST", "/api/log/level", R"({"level":"info"})").status, 405u);
  spdlog::set_level(before);
}

TEST(AdminLog, LevelNamesAreTheConfigsAndSpdlogs) {
  for (const auto& name : log_level_names()) {
    const auto level = parse_log_level(name);
    ASSERT_TRUE(level.has_value()) << name;
    EXPECT_EQ(log_level_names()[static_cast<std::size_t>(*level)], name);
  }
  EXPECT_EQ(parse_log_level("warn"), spdlog::level::warn);
  EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
  EXPECT_FALSE(parse_log_level("Warn").has_value());
  EXPECT_FALSE(parse_log_level("").has_value());
}

}  // namespace
}  // namespace sk::admin_api
