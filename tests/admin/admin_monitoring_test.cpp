// Monitoring through the real daemon: the read-only metrics token, the
// node-wide peer families, /health kept out of the tracker requests, the
// log level changed at run time and the log line formats.
//
// Every wait polls a condition with a deadline (no fixed sleeps).

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "harness.hpp"

namespace sk::test {
namespace {

using json = nlohmann::json;

const std::string metrics_token = "metrics-only-token-0123456789";

class Monitoring : public admin_daemon_test {
 protected:
  http_response as(const std::string& token, const std::string& method, const std::string& target,
                   const std::string& body = {}) {
    return admin_request(admin_port_, method, target, body, "Bearer " + token);
  }

  std::vector<std::string> stderr_lines() const {
    std::vector<std::string> out;
    std::istringstream in{daemon_.stderr_text()};
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) out.push_back(line);
    return out;
  }
};

TEST_F(Monitoring, TheMetricsTokenReadsMetricsAndNothingElse) {
  const std::string file = write_file("metrics.token", metrics_token + "\n");
  start({"--admin.metrics-token-file=" + file});
  auto r = as(metrics_token, "GET", "/metrics");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.body.find("# TYPE swarmkeeper_build_info gauge"), std::string::npos);
  // Everything else is refused with 403, reads and actions alike, and the
  // action does not happen.
  expect_json_error(as(metrics_token, "GET", "/api/node"), 403, "node with the metrics token");
  expect_json_error(as(metrics_token, "GET", "/api/bans"), 403, "bans with the metrics token");
  expect_json_error(
      as(metrics_token, "POST", "/api/bans", R"({"prefix":"-XX0001-","reason":"test"})"), 403,
      "ban with the metrics token");
  expect_json_error(as(metrics_token, "PUT", "/api/log/level", R"({"level":"debug"})"), 403,
                    "log level with the metrics token");
  expect_json_error(as(metrics_token, "POST", "/metrics"), 403, "POST /metrics");
  EXPECT_EQ(body_json(as(metrics_token, "GET", "/api/node")).at("error"),
            "the metrics token may only GET /metrics");
  EXPECT_EQ(get_json("/api/bans").at("bans").size(), 0u);
  EXPECT_EQ(get_json("/api/node").at("log").at("level"), "warn");
  // The admin token still reaches everything, /metrics included; a wrong
  // token is a 401 as before.
  EXPECT_EQ(request("GET", "/metrics").status, 200);
  expect_json_error(as(metrics_token + "x", "GET", "/metrics"), 401, "wrong token");
  // Refused requests are counted as unauthorized.
  EXPECT_GE(metric(R"(swarmkeeper_admin_requests_total{outcome="unauthorized"})"), 6);
}

TEST_F(Monitoring, AMetricsTokenLikeTheAdminTokenOrTooShortIsAConfigError) {
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({"--admin-port=1", "--admin-token=" + admin_test_token,
                           "--admin.metrics-token=" + admin_test_token}),
            2);
  EXPECT_NE(d.stderr_text().find("admin.metrics-token must differ from admin.token"),
            std::string::npos)
      << d.stderr_text();
  daemon_process e;
  EXPECT_EQ(e.run_to_exit({"--admin-port=1", "--admin-token=" + admin_test_token,
                           "--admin.metrics-token=short"}),
            2);
  EXPECT_NE(e.stderr_text().find("admin.metrics-token must be at least 16 printable"),
            std::string::npos)
      << e.stderr_text();
  EXPECT_EQ(e.stderr_text().find("short"), std::string::npos) << "the token is never echoed";
}

TEST_F(Monitoring, MetricsCountPeersByRoleAndFamilyAndHealthChecksApart) {
  start();
  const std::string hash = id20("monitored");
  http_announce(hash, id20("seeder"), 6881, 0);
  http_announce(hash, id20("leecher"), 6882, 1000);
  http_announce(hash, id20("paused"), 6883, 500, "paused");
  http_announce(hash, id20("finisher"), 6884, 1000);
  http_announce(hash, id20("finisher"), 6884, 0, "completed");
  EXPECT_EQ(metric(R"(swarmkeeper_peers_by_role{role="seeder"})"), 2);
  EXPECT_EQ(metric(R"(swarmkeeper_peers_by_role{role="leecher"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_peers_by_role{role="partial_seed"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_peers_by_family{family="ipv4"})"), 4);
  EXPECT_EQ(metric(R"(swarmkeeper_peers_by_family{family="ipv6"})"), 0);
  EXPECT_EQ(metric("swarmkeeper_completed_total"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_announces_total{transport="http"})"), 5);
  // The peers by role add up to the peers by health.
  double by_health = 0;
  for (const char* h : {"healthy", "degraded", "critical", "unevaluated"})
    by_health += metric(std::string(R"(swarmkeeper_peers{health=")") + h + "\"}");
  EXPECT_EQ(by_health, 4);

  for (int i = 0; i < 3; ++i) ASSERT_EQ(http_get(daemon_.port(), "/health").status, 200);
  EXPECT_GE(metric("swarmkeeper_health_checks_total"), 3);
  const auto r = request("GET", "/metrics");
  EXPECT_EQ(r.body.find("outcome=\"health\""), std::string::npos) << r.body;
}

TEST_F(Monitoring, TheLogLevelChangesAtRunTime) {
  start();  // at warn (the harness's level)
  const auto ban = [&](const std::string& prefix) {
    return request("POST", "/api/bans", R"({"prefix":")" + prefix + R"(","reason":"test"})").status;
  };
  // A ban is logged at info: not at warn.
  ASSERT_EQ(ban("-AA0001-"), 201);
  auto r = request("PUT", "/api/log/level", R"({"level":"info"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r), (json{{"level", "info"}, {"previous", "warn"}}));
  EXPECT_EQ(get_json("/api/node").at("log").at("level"), "info");
  EXPECT_EQ(get_json("/api/log/level").at("level"), "info");
  ASSERT_EQ(ban("-BB0001-"), 201);
  EXPECT_TRUE(eventually([&] {
    return daemon_.stderr_text().find("prefix \"-BB0001-\"") != std::string::npos;
  })) << daemon_.stderr_text();
  EXPECT_EQ(daemon_.stderr_text().find("prefix \"-AA0001-\""), std::string::npos);
  EXPECT_NE(daemon_.stderr_text().find("admin: log level warn -> info"), std::string::npos);

  expect_json_error(request("PUT", "/api/log/level", R"({"level":"chatty"})"), 400, "bad level");
  EXPECT_NE(body_json(request("PUT", "/api/log/level", R"({"level":"chatty"})"))
                .at("error")
                .get<std::string>()
                .find("one of trace, debug, info, warn, error, critical, off"),
            std::string::npos);
  expect_json_error(request("PUT", "/api/log/level", "not json"), 400, "not JSON");
  expect_json_error(request("PUT", "/api/log/level", R"({"lvl":"info"})"), 400, "no level");
  EXPECT_EQ(get_json("/api/node").at("log").at("level"), "info");
}

/// `2026-12-01T16:50:00.123Z`: UTC, milliseconds, the zone.
const std::regex utc_time{R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$)"};

TEST_F(Monitoring, TextLogLinesStartWithTheUtcTime) {
  start();
  // A warn line (the change) and an info line (the ban).
  ASSERT_EQ(request("PUT", "/api/log/level", R"({"level":"info"})").status, 200);
  ASSERT_EQ(request("POST", "/api/bans", R"({"prefix":"-CC0001-","reason":"test"})").status, 201);
  ASSERT_TRUE(eventually([&] {
    return daemon_.stderr_text().find("prefix \"-CC0001-\"") != std::string::npos;
  })) << daemon_.stderr_text();
  const auto lines = stderr_lines();
  ASSERT_GE(lines.size(), 2u);
  const std::regex line_re{R"(^(\S+) (trace|debug|info|warn|error|critical) (.+)$)"};
  std::set<std::string> levels;
  for (const auto& line : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, line_re)) << line;
    EXPECT_TRUE(std::regex_match(m[1].str(), utc_time)) << line;
    levels.insert(m[2]);
  }
  EXPECT_EQ(levels, (std::set<std::string>{"info", "warn"}));
}

TEST_F(Monitoring, JsonLogLinesAreOneObjectEach) {
  start({"--log.format=json"});
  ASSERT_EQ(request("PUT", "/api/log/level", R"({"level":"info"})").status, 200);
  // A reason with quotes and a backslash: escaped in the line.
  ASSERT_EQ(
      request("POST", "/api/bans", R"({"prefix":"-DD0001-","reason":"say \"no\" \\ now"})").status,
      201);
  ASSERT_TRUE(eventually([&] {
    return daemon_.stderr_text().find("-DD0001-") != std::string::npos;
  })) << daemon_.stderr_text();
  const auto lines = stderr_lines();
  ASSERT_GE(lines.size(), 2u);
  bool saw_change = false, saw_ban = false;
  for (const auto& line : lines) {
    const json j = json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    ASSERT_EQ(j.size(), 3u) << line;
    EXPECT_TRUE(std::regex_match(j.at("time").get<std::string>(), utc_time)) << line;
    EXPECT_TRUE(j.at("level").is_string()) << line;
    const std::string msg = j.at("msg").get<std::string>();
    if (msg == "admin: log level warn -> info") saw_change = j.at("level") == "warn";
    if (msg.find("-DD0001-") != std::string::npos)
      saw_ban = j.at("level") == "info" && msg.find("(say \"no\" \\ now)") != std::string::npos;
  }
  EXPECT_TRUE(saw_change) << daemon_.stderr_text();
  EXPECT_TRUE(saw_ban) << daemon_.stderr_text();
}

TEST_F(Monitoring, AnUnknownLogFormatIsAConfigError) {
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({"--log.format=xml"}), 2);
  EXPECT_NE(d.stderr_text().find("log.format"), std::string::npos) << d.stderr_text();
}

}  // namespace
}  // namespace sk::test
