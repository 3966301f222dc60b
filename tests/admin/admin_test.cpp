// The admin API and /metrics, through the real daemon on free ports.
//
// Every wait polls a condition with a deadline (no fixed sleeps).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "harness.hpp"
#include "admin/admin_auth.hpp"
#include "admin/admin_server.hpp"

namespace sk::test {
namespace {

using json = nlohmann::json;

const std::string& token = admin_test_token;

class AdminApi : public ::testing::Test {
 protected:
  void start(std::vector<std::string> extra = {}) {
    admin_port_ = start_daemon_with_admin(daemon_, extra);
  }

  /// Announces `peer` (a label) to `hash` (a label) over HTTP.
  void announce(const std::string& hash, const std::string& peer, std::uint16_t port = 6881,
                std::uint64_t left = 1000, const std::string& peer_id = {}) {
    announce_params p{id20(hash), peer_id.empty() ? id20(peer) : peer_id, port, left};
    auto r = http_get(daemon_.port(), announce_target(p));
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body.find("failure"), std::string::npos) << r.body;
  }

  http_response get(const std::string& target) { return admin_request(admin_port_, "GET", target); }

  json get_json(const std::string& target) {
    auto r = get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return body_json(r);
  }

  daemon_process daemon_;
  std::uint16_t admin_port_ = 0;
};

TEST(AdminToken, ConstantTimeEqualComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("", ""));
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "ab"));
  EXPECT_FALSE(constant_time_equal("ab", "abc"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_FALSE(constant_time_equal(std::string("a\0", 2), "a"));
}

TEST_F(AdminApi, ClusterWithoutClusterIsThisNodeAlone) {
  start();
  expect_json_error(admin_request(admin_port_, "GET", "/api/cluster", {}, ""), 401, "no token");
  announce("cluster-a", "peer-1");
  announce("cluster-b", "peer-1");
  const json node = get_json("/api/node");
  EXPECT_TRUE(node.at("cluster_node").is_null()) << node.dump();
  const json j = get_json("/api/cluster");
  EXPECT_EQ(j.at("enabled"), false) << j.dump();
  EXPECT_EQ(j.at("node"), node.at("node"));
  ASSERT_EQ(j.at("members").size(), 1u) << j.dump();
  const json& me = j.at("members")[0];
  EXPECT_EQ(me.at("name"), node.at("node"));
  EXPECT_EQ(me.at("state"), "live");
  EXPECT_EQ(me.at("self"), true);
  EXPECT_EQ(me.at("swarms"), 2);
  EXPECT_TRUE(j.at("migrations").is_array());
  EXPECT_TRUE(j.at("migrations").empty());
  expect_json_error(admin_request(admin_port_, "POST", "/api/cluster"), 405, "POST");
  expect_json_error(admin_request(admin_port_, "GET", "/api/cluster?x=1"), 400, "query");
}

TEST_F(AdminApi, TokenIsRequired) {
  start();
  auto none = admin_request(admin_port_, "GET", "/api/node", {}, "");
  expect_json_error(none, 401, "no token");
  EXPECT_EQ(none.header("www-authenticate"), "Bearer");
  expect_json_error(admin_request(admin_port_, "GET", "/api/node", {}, "Bearer wrong-token-xxxxxx"),
                    401, "wrong token");
  expect_json_error(admin_request(admin_port_, "GET", "/api/node", {}, "Bearer " + token + "x"),
                    401, "token with a suffix");
  expect_json_error(admin_request(admin_port_, "GET", "/api/node", {}, "Basic " + token), 401,
                    "not a bearer token");
  expect_json_error(admin_request(admin_port_, "GET", "/metrics", {}, ""), 401, "metrics");
  expect_json_error(admin_request(admin_port_, "GET", "/nothing", {}, ""), 401, "unknown path");
  EXPECT_EQ(admin_request(admin_port_, "GET", "/api/node").status, 200);
}

TEST(AdminConfig, MissingOrWeakTokenRefusesToStart) {
  {
    daemon_process d;
    EXPECT_EQ(d.run_to_exit({"--admin-port=" + std::to_string(free_port())}), 2);
    EXPECT_NE(d.stderr_text().find("admin token"), std::string::npos) << d.stderr_text();
  }
  {
    daemon_process d;
    EXPECT_EQ(d.run_to_exit({"--admin-port=" + std::to_string(free_port()), "--admin-token=short"}),
              2);
    EXPECT_NE(d.stderr_text().find("admin.token"), std::string::npos) << d.stderr_text();
    EXPECT_EQ(d.stderr_text().find("short"), std::string::npos) << "the token is echoed";
  }
  {
    daemon_process d;
    EXPECT_EQ(d.run_to_exit({"--admin-port=" + std::to_string(free_port()),
                             "--admin.token-file=/nonexistent/token"}),
              2);
    EXPECT_NE(d.stderr_text().find("admin.token-file"), std::string::npos) << d.stderr_text();
  }
}

TEST(AdminConfig, TokenFromFile) {
  char path[] = "/tmp/sk-admin-token-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string file_token = "file-token-abcdefghijklmnop";
  ASSERT_EQ(::write(fd, (file_token + "\n").data(), file_token.size() + 1),
            static_cast<ssize_t>(file_token.size() + 1));
  ::close(fd);
  daemon_process d;
  const auto port = free_port();
  d.start({"--admin-port=" + std::to_string(port), std::string("--admin.token-file=") + path});
  const auto deadline = clock::now() + 10s;
  int status = 0;
  while (clock::now() < deadline) {
    try {
      status = admin_request(port, "GET", "/api/node", {}, "Bearer " + file_token).status;
      if (status == 200) break;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(status, 200);
  EXPECT_EQ(admin_request(port, "GET", "/api/node", {}, "Bearer " + token).status, 401);
  ::unlink(path);
}

TEST_F(AdminApi, BadInputGetsJsonErrors) {
  start();
  announce("bad-input", "p1");
  const std::string hash = hex_of(id20("bad-input"));
  const std::string unknown = std::string(40, 'a');
  expect_json_error(get("/api/swarms/xyz"), 400, "short hash");
  expect_json_error(get("/api/swarms/" + std::string(40, 'g')), 400, "non-hex hash");
  expect_json_error(get("/api/swarms/" + unknown), 404, "unknown swarm");
  expect_json_error(get("/api/nothing"), 404, "unknown path");
  expect_json_error(get("/index.html"), 404, "unknown file at the root");
  EXPECT_EQ(get("/").status, 302) << "the root redirects to the web console";
  expect_json_error(get("/api/swarms/" + hash + "/nothing"), 404, "unknown action");
  expect_json_error(get("/api/swarms?health=purple"), 400, "bad health filter");
  expect_json_error(get("/api/swarms?sort=colour"), 400, "bad sort");
  expect_json_error(get("/api/swarms?limit=-1"), 400, "negative limit");
  expect_json_error(get("/api/swarms?limit=abc"), 400, "non-numeric limit");
  expect_json_error(get("/api/swarms?bogus=1"), 400, "unknown parameter");
  expect_json_error(get("/api/swarms?health=%zz"), 400, "bad escape");
  expect_json_error(get("/api/node?x=1"), 400, "query where none is taken");
  expect_json_error(admin_request(admin_port_, "POST", "/api/node"), 405, "POST to a GET endpoint");
  expect_json_error(admin_request(admin_port_, "DELETE", "/api/swarms"), 405, "DELETE");
  expect_json_error(get("/api/swarms/" + hash + "/policy"), 405, "GET of an action");
  const std::string policy = "/api/swarms/" + hash + "/policy";
  expect_json_error(admin_request(admin_port_, "POST", policy, R"({"policy":"nope"})"), 400,
                    "unknown policy");
  expect_json_error(admin_request(admin_port_, "POST", policy, "not json"), 400, "not JSON");
  expect_json_error(admin_request(admin_port_, "POST", policy, "[1,2]"), 400, "not an object");
  expect_json_error(admin_request(admin_port_, "POST", policy, R"({"policy":7})"), 400,
                    "policy not a string");
  expect_json_error(admin_request(admin_port_, "POST", "/api/swarms/" + unknown + "/policy",
                                  R"({"policy":"random"})"),
                    404, "policy of an unknown swarm");
  expect_json_error(admin_request(admin_port_, "POST", "/api/swarms/" + unknown + "/restart"), 404,
                    "restart of an unknown swarm");
  {
    // The declared length alone is refused (no body sent: the server closes
    // without unread bytes, so the client reads the answer, not a reset).
    http_connection c{"127.0.0.1", admin_port_};
    c.send("POST " + policy + " HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer " + token +
           "\r\nContent-Length: 100000\r\n\r\n");
    expect_json_error(c.read_response(), 413, "oversized body");
  }
  expect_json_error(get("/api/swarms?health=" + std::string(3000, 'h')), 414, "long URL");
  {
    // Garbage instead of HTTP: a 400, never a crash.
    http_connection c{"127.0.0.1", admin_port_};
    c.send("\x01\x02 nonsense\r\n\r\n");
    expect_json_error(c.read_response(), 400, "garbage");
  }
  // Still serving.
  EXPECT_EQ(get("/api/node").status, 200);
}

TEST_F(AdminApi, NodeReportsFieldsAndRedactsSecrets) {
  const std::string key = "00112233445566778899aabbccddeeff";
  start({"--udp.connection-id-key=" + key});
  announce("node-swarm", "p1");
  json j = get_json("/api/node");
  for (const char* field : {"version", "node", "uptime_seconds", "config", "scheduler_threads",
                            "actors", "memory", "requests"})
    EXPECT_TRUE(j.contains(field)) << field << " missing: " << j.dump();
  EXPECT_FALSE(j["version"].get<std::string>().empty());
  EXPECT_GE(j["scheduler_threads"].get<int>(), 1);
  EXPECT_EQ(j["actors"]["swarms"].get<int>(), 1);
  EXPECT_GT(j["memory"]["resident_bytes"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(j["requests"].contains("udp"));
  EXPECT_EQ(j["config"]["admin.token"], "<redacted>");
  EXPECT_EQ(j["config"]["udp.connection-id-key"], "<redacted>");
  EXPECT_EQ(j["config"]["admin.port"], std::to_string(admin_port_));
  EXPECT_EQ(j["config"]["admin.bind"], "127.0.0.1");
  const std::string text = j.dump();
  EXPECT_EQ(text.find(token), std::string::npos) << "token leaked";
  EXPECT_EQ(text.find(key), std::string::npos) << "connection id key leaked";
}

TEST_F(AdminApi, SwarmsListFiltersSortsAndPages) {
  // min-peers 1: these small swarms are judged (by default they would stay
  // unevaluated; see admin_operator_test.cpp).
  start({"--health.tick=1s", "--health.min-peers=1"});
  // Swarm sizes 1, 2 and 3.
  for (int s = 1; s <= 3; ++s)
    for (int p = 0; p < s; ++p)
      announce("list-" + std::to_string(s), "peer-" + std::to_string(s) + "-" + std::to_string(p),
               static_cast<std::uint16_t>(7000 + p));
  json all = get_json("/api/swarms");
  ASSERT_EQ(all["total"], 3) << all.dump();
  ASSERT_EQ(all["swarms"].size(), 3u);
  EXPECT_EQ(all["swarms"][0]["hash"], hex_of(id20("list-3")));
  EXPECT_EQ(all["swarms"][0]["peers"], 3);
  EXPECT_EQ(all["swarms"][1]["peers"], 2);
  EXPECT_EQ(all["swarms"][2]["peers"], 1);
  json page = get_json("/api/swarms?sort=size&limit=1&offset=1");
  EXPECT_EQ(page["total"], 3);
  ASSERT_EQ(page["swarms"].size(), 1u);
  EXPECT_EQ(page["swarms"][0]["hash"], hex_of(id20("list-2")));
  EXPECT_EQ(get_json("/api/swarms?offset=5")["swarms"].size(), 0u);
  EXPECT_EQ(get_json("/api/swarms?sort=rate")["total"], 3);
  // Wait until every swarm has been evaluated (health.tick=1s), then check
  // that the filters partition the list consistently.
  const auto deadline = clock::now() + 15s;
  json evaluated;
  for (;;) {
    evaluated = get_json("/api/swarms");
    bool all_done = true;
    for (const auto& s : evaluated["swarms"]) all_done = all_done && s["health"] != "unevaluated";
    if (all_done) break;
    ASSERT_LT(clock::now(), deadline) << "swarms not evaluated: " << evaluated.dump();
    std::this_thread::sleep_for(100ms);
  }
  std::map<std::string, int> by_health;
  for (const auto& s : evaluated["swarms"]) by_health[s["health"].get<std::string>()] += 1;
  int unhealthy = 0;
  for (const char* h : {"healthy", "degraded", "critical"}) {
    json f = get_json(std::string("/api/swarms?health=") + h);
    EXPECT_EQ(f["total"], by_health[h]) << h;
    for (const auto& s : f["swarms"]) EXPECT_EQ(s["health"], h);
    if (std::string(h) != "healthy") unhealthy += by_health[h];
  }
  EXPECT_EQ(get_json("/api/swarms?health=unhealthy")["total"], unhealthy);
  // Leechers only: every swarm lacks seeders, so none is healthy.
  EXPECT_EQ(by_health["healthy"], 0) << evaluated.dump();
}

TEST_F(AdminApi, SwarmDetailShowsAnnouncedPeers) {
  start();
  announce("detail", "", 6881, 1000, "-qB4520-abcdefghijkl");
  announce("detail", "", 6882, 0, "-TR2940-abcdefghijkl");
  const std::string hash = hex_of(id20("detail"));
  json j = get_json("/api/swarms/" + hash);
  EXPECT_EQ(j["hash"], hash);
  EXPECT_TRUE(j["actor_id"].is_number());
  EXPECT_FALSE(j["owner_node"].get<std::string>().empty());
  EXPECT_EQ(j["peer_count"], 2);
  EXPECT_EQ(j["seeders"], 1);
  EXPECT_EQ(j["leechers"], 1);
  EXPECT_EQ(j["policy"], "adaptive");
  for (const char* f : {"counters", "health_detail", "knobs", "interval", "remediation_history"})
    EXPECT_TRUE(j.contains(f)) << f;
  EXPECT_EQ(j["counters"]["announces"], 2);
  ASSERT_EQ(j["peers_listed"].size(), 2u) << j.dump();
  std::set<std::string> clients;
  std::set<int> ports;
  for (const auto& p : j["peers_listed"]) {
    EXPECT_EQ(p["address"], "127.0.0.1");
    clients.insert(p["client"].get<std::string>());
    ports.insert(p["port"].get<int>());
    EXPECT_TRUE(p["flags"].is_array());
    EXPECT_EQ(p["seeder"].get<bool>(), p["left"] == 0);
  }
  EXPECT_EQ(clients, (std::set<std::string>{"qBittorrent 4.5.2", "Transmission 2.94"}));
  EXPECT_EQ(ports, (std::set<int>{6881, 6882}));
}

TEST_F(AdminApi, PolicyChangeShowsInStatus) {
  start();
  announce("policy", "p1");
  const std::string hash = hex_of(id20("policy"));
  auto r = admin_request(admin_port_, "POST", "/api/swarms/" + hash + "/policy",
                         R"({"policy":"role-aware"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_json(r);
  EXPECT_EQ(j["policy"], "role-aware");
  EXPECT_EQ(j["previous"], "adaptive");
  json s = get_json("/api/swarms/" + hash);
  EXPECT_EQ(s["policy"], "role-aware");
  EXPECT_EQ(s["knobs"]["policy"], "role-aware");
  // The next announce is served (under the new policy) and the swarm keeps it.
  announce("policy", "p2");
  s = get_json("/api/swarms/" + hash);
  EXPECT_EQ(s["policy"], "role-aware");
  EXPECT_EQ(s["peer_count"], 2);
}

TEST_F(AdminApi, PolicyChangeShowsInTheNextAnnounce) {
  start();
  // Two seeders (ports 7001, 7002) and three leechers (7101..7103).
  for (int i = 1; i <= 2; ++i) announce("next", "seeder-" + std::to_string(i), 7000 + i, 0);
  for (int i = 1; i <= 3; ++i) announce("next", "leecher-" + std::to_string(i), 7100 + i, 1000);
  const std::string hash = hex_of(id20("next"));
  ASSERT_EQ(admin_request(admin_port_, "POST", "/api/swarms/" + hash + "/policy",
                          R"({"policy":"role-aware"})")
                .status,
            200);
  // Under role-aware a seeder is handed leechers only: its next announce
  // (compact, IPv4: 6 bytes per peer) names none of the seeders' ports.
  announce_params p{id20("next"), id20("seeder-1"), 7001, 0};
  p.compact = 1;
  p.numwant = 50;
  auto r = http_get(daemon_.port(), announce_target(p));
  ASSERT_EQ(r.status, 200);
  const auto key = r.body.find("5:peers");
  ASSERT_NE(key, std::string::npos) << r.body;
  const auto colon = r.body.find(':', key + 7);
  const std::size_t len = std::stoul(r.body.substr(key + 7, colon - key - 7));
  const std::string peers = r.body.substr(colon + 1, len);
  ASSERT_EQ(peers.size() % 6, 0u);
  std::set<int> ports;
  for (std::size_t i = 0; i < peers.size(); i += 6)
    ports.insert((static_cast<unsigned char>(peers[i + 4]) << 8) |
                 static_cast<unsigned char>(peers[i + 5]));
  EXPECT_EQ(ports, (std::set<int>{7101, 7102, 7103}));
  EXPECT_EQ(get_json("/api/swarms/" + hash)["policy"], "role-aware");
}

TEST_F(AdminApi, RestartKeepsPeers) {
  start();
  for (int i = 0; i < 4; ++i) announce("restart", "peer-" + std::to_string(i), 7000 + i);
  const std::string hash = hex_of(id20("restart"));
  json before = get_json("/api/swarms/" + hash);
  ASSERT_EQ(before["peer_count"], 4);
  auto r = admin_request(admin_port_, "POST", "/api/swarms/" + hash + "/restart");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(body_json(r)["old_actor_id"], before["actor_id"]);
  // Wait for the supervisor to put the new actor in place.
  const auto deadline = clock::now() + 10s;
  json after;
  for (;;) {
    auto g = get("/api/swarms/" + hash);
    if (g.status == 200) {
      after = body_json(g);
      if (after["actor_id"] != before["actor_id"]) break;
    }
    ASSERT_LT(clock::now(), deadline) << "swarm not restarted";
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(after["peer_count"], 4);
  EXPECT_EQ(after["peers_listed"].size(), 4u);
  json events = get_json("/api/events");
  bool found = false;
  for (const auto& e : events["events"])
    found = found || (e["kind"] == "restart" && e["hash"] == hash);
  EXPECT_TRUE(found) << events.dump();
  // The restarted swarm still serves announces with its old peers.
  announce("restart", "peer-new", 7100);
  EXPECT_EQ(get_json("/api/swarms/" + hash)["peer_count"], 5);
}

TEST_F(AdminApi, RemediationsAndEventsAreJson) {
  start();
  json r = get_json("/api/remediations");
  EXPECT_TRUE(r["active"].is_array());
  EXPECT_TRUE(r["recent"].is_array());
  EXPECT_TRUE(get_json("/api/events")["events"].is_array());
}

/// A strict check of the Prometheus text format 0.0.4 as we write it: every
/// sample's family has HELP and TYPE first, counters end in _total, names
/// and labels are well formed, values parse, no family repeats.
void check_exposition(const std::string& text) {
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*)");
  static const std::regex type(
      R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*"(,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\\n]*")*\})? (-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?|NaN|\+Inf|-Inf))");
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  std::istringstream in{text};
  std::string line, current, current_type;
  std::set<std::string> seen;
  bool have_help = false;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      ASSERT_TRUE(seen.insert(m[1]).second) << "family repeated: " << line;
      current = m[1];
      have_help = true;
      current_type.clear();
    } else if (std::regex_match(line, m, type)) {
      ASSERT_TRUE(have_help && m[1] == current) << "TYPE without HELP: " << line;
      current_type = m[2];
      if (current_type == "counter") {
        EXPECT_TRUE(current.size() > 6 && current.compare(current.size() - 6, 6, "_total") == 0)
            << "counter without _total: " << current;
      }
    } else if (std::regex_match(line, m, sample)) {
      // A histogram's samples are <family>_bucket, _sum and _count.
      const std::string name = m[1];
      const bool histogram_part =
          current_type == "histogram" &&
          (name == current + "_bucket" || name == current + "_sum" || name == current + "_count");
      ASSERT_TRUE(name == current || histogram_part) << "sample outside its family: " << line;
      ASSERT_FALSE(current_type.empty()) << "sample before TYPE: " << line;
    } else {
      FAIL() << "not a valid exposition line: '" << line << "'";
    }
  }
}

TEST_F(AdminApi, MetricsAreValidExposition) {
  start();
  announce("metrics-1", "p1");
  announce("metrics-2", "p1");
  announce("metrics-2", "p2");
  auto r = get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  check_exposition(r.body);
  // UDP answers are counted by transport with HTTP's (one family).
  EXPECT_NE(r.body.find("swarmkeeper_tracker_requests_total{transport=\"udp\",outcome=\"announce_ok\"}"),
            std::string::npos);
  EXPECT_EQ(r.body.find("swarmkeeper_udp_requests_total"), std::string::npos);
  EXPECT_NE(r.body.find("swarmkeeper_remediations_active 0"), std::string::npos);
  // Both swarms are counted once and their three peers too (whatever state).
  std::regex swarms_re(R"(swarmkeeper_swarms\{health="[a-z]+"\} ([0-9]+))");
  std::regex peers_re(R"(swarmkeeper_peers\{health="[a-z]+"\} ([0-9]+))");
  int swarms = 0, peers = 0;
  for (std::sregex_iterator it(r.body.begin(), r.body.end(), swarms_re), end; it != end; ++it)
    swarms += std::stoi((*it)[1]);
  for (std::sregex_iterator it(r.body.begin(), r.body.end(), peers_re), end; it != end; ++it)
    peers += std::stoi((*it)[1]);
  EXPECT_EQ(swarms, 2);
  EXPECT_EQ(peers, 3);

  const std::string promtool = PROMTOOL_BIN;
  // Never skipped: deploy/install-deps.sh provides promtool (.tools/).
  ASSERT_FALSE(promtool.empty()) << "promtool not found: run deploy/install-deps.sh";
  char path[] = "/tmp/sk-metrics-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, r.body.data(), r.body.size()), static_cast<ssize_t>(r.body.size()));
  ::close(fd);
  const std::string cmd = promtool + " check metrics < " + path + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = ::pclose(p);
  ::unlink(path);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "promtool: " << out;
}

}  // namespace
}  // namespace sk::test
