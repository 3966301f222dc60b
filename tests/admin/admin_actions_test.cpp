// Operator actions of the admin API: remediation start/stop, the
// node-wide ban list, the info_hash access list (API, file, SIGHUP), and the
// counters they feed in /metrics. Through the real daemon on free ports and
// real sockets (HTTP and UDP); every wait polls with a deadline.

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "announces.hpp"
#include "harness.hpp"
#include "udp_tracker_client.hpp"

namespace sk::test {
namespace {

using json = nlohmann::json;

const std::string& token = admin_test_token;

// -- one UDP announce -------------------------------------------------------------

/// What a UDP announce got: the action (1 announce, 3 error) and, for an
/// error, its text.
struct udp_answer {
  std::uint32_t action = 0;
  std::string error;
};

/// One UDP announce (started, 1000 bytes left, numwant 50) of raw 20-byte
/// `hash` by `peer` on port 6881.
udp_answer udp_announce(std::uint16_t port, const std::string& hash, const std::string& peer) {
  udp_tracker_client c{port, "127.0.0.1", 5000ms};
  udp_answer out;
  try {
    c.connect();
    announce_request a = announce_of(info_hash::from_bytes(hash), peer_id::from_bytes(peer),
                                     6881, 1000, announce_event::started);
    a.numwant = 50;
    std::string bytes;
    const udp_response r = c.announce(a, bytes);
    EXPECT_EQ(r.transaction, c.last_transaction());
    out.action = static_cast<std::uint32_t>(r.action);
    if (r.action == udp_action::error) out.error = std::string(r.message);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
  }
  return out;
}

class AdminActions : public admin_daemon_test {};

const std::string hash_x = hex_of(id20("x"));

TEST_F(AdminActions, NewEndpointsNeedTheTokenAndCheckTheirInput) {
  start({"--access.mode=deny"});
  const std::vector<std::pair<std::string, std::string>> endpoints = {
      {"POST", "/api/swarms/" + hash_x + "/remediation/start"},
      {"POST", "/api/swarms/" + hash_x + "/remediation/stop"},
      {"GET", "/api/bans"},
      {"POST", "/api/bans"},
      {"DELETE", "/api/bans/-XX"},
      {"GET", "/api/access"},
      {"POST", "/api/access/" + hash_x + "/allow"},
      {"POST", "/api/access/" + hash_x + "/deny"},
      {"POST", "/api/access/reload"}};
  for (const auto& [method, target] : endpoints) {
    expect_json_error(admin_request(admin_port_, method, target, "{}", ""), 401,
                      method + " " + target + " without token");
    expect_json_error(admin_request(admin_port_, method, target, "{}", "Bearer wrong-token-xxxxxx"),
                      401, method + " " + target + " with a wrong token");
  }
  // Bad hashes.
  expect_json_error(request("POST", "/api/swarms/abc/remediation/start"), 400, "short hash");
  expect_json_error(request("POST", "/api/access/" + std::string(40, 'g') + "/deny"), 400,
                    "non-hex hash");
  // Wrong methods.
  expect_json_error(request("GET", "/api/swarms/" + hash_x + "/remediation/start"), 405,
                    "GET start");
  expect_json_error(request("PUT", "/api/bans"), 405, "PUT bans");
  expect_json_error(request("GET", "/api/bans/-XX"), 405, "GET one ban");
  expect_json_error(request("DELETE", "/api/access"), 405, "DELETE access");
  expect_json_error(request("GET", "/api/access/reload"), 405, "GET reload");
  // Bad bodies and prefixes.
  expect_json_error(request("POST", "/api/bans", "{not json"), 400, "bad JSON");
  expect_json_error(request("POST", "/api/bans", "[1]"), 400, "not an object");
  expect_json_error(request("POST", "/api/bans", R"({"reason":"r"})"), 400, "no prefix");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"-XX"})"), 400, "no reason");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"","reason":"r"})"), 400,
                    "empty prefix");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"123456789012345678901","reason":"r"})"),
                    400, "21-byte prefix");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"-X%zz","reason":"r"})"), 400,
                    "bad escape");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"-XX","reason":"a\u0001b"})"), 400,
                    "control character in reason");
  expect_json_error(request("DELETE", "/api/bans/%zz"), 400, "bad percent-encoding");
  expect_json_error(request("DELETE", "/api/bans/-NOPE"), 404, "absent prefix");
  // Unknown swarm, nothing to stop, no file.
  expect_json_error(request("POST", "/api/swarms/" + hash_x + "/remediation/start"), 404,
                    "start for an unknown swarm");
  expect_json_error(request("POST", "/api/swarms/" + hash_x + "/remediation/stop"), 404,
                    "stop for an unknown swarm");
  expect_json_error(request("POST", "/api/access/reload"), 409, "reload without a file");
  // Queries are refused like elsewhere.
  expect_json_error(request("GET", "/api/bans?x=1"), 400, "query on bans");
}

TEST_F(AdminActions, AccessEndpointsAnswer409WhenOff) {
  start();
  json a = get_json("/api/access");
  EXPECT_EQ(a["mode"], "off");
  EXPECT_EQ(a["count"], 0);
  expect_json_error(request("POST", "/api/access/" + hash_x + "/deny"), 409, "deny while off");
  expect_json_error(request("POST", "/api/access/" + hash_x + "/allow"), 409, "allow while off");
  // Off serves everything.
  EXPECT_EQ(http_announce(id20("x"), id20("peer")).find("failure"), std::string::npos);
}

TEST_F(AdminActions, BanRefusesOverHttpAndUdpAndUnbanAcceptsAgain) {
  start({"--clients.banned=-AA=seeded ban"});
  json bans = get_json("/api/bans");
  ASSERT_EQ(bans["bans"].size(), 1u) << bans.dump();
  EXPECT_EQ(bans["bans"][0]["prefix"], "-AA");
  EXPECT_EQ(bans["bans"][0]["reason"], "seeded ban");

  const std::string peer_http = "-XY0001-" + std::string(12, 'h');
  const std::string peer_udp = "-XY0001-" + std::string(12, 'u');
  const std::string hash = id20("banned-torrent");
  EXPECT_EQ(http_announce(hash, peer_http).find("failure"), std::string::npos);

  auto r = request("POST", "/api/bans", R"({"prefix":"-XY0001-","reason":"XY 0.0.1 corrupts data"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body_json(r)["prefix"], "-XY0001-");
  expect_json_error(request("POST", "/api/bans", R"({"prefix":"-XY0001-","reason":"again"})"), 409,
                    "same prefix twice");
  // Every swarm sees the change at once: the existing one and a new one.
  const std::string body = http_announce(hash, peer_http);
  EXPECT_NE(body.find("14:failure reason22:XY 0.0.1 corrupts data"), std::string::npos) << body;
  EXPECT_NE(http_announce(id20("another"), peer_http).find("XY 0.0.1 corrupts data"),
            std::string::npos);
  const auto u = udp_announce(daemon_.udp_port(), hash, peer_udp);
  EXPECT_EQ(u.action, 3u);
  EXPECT_EQ(u.error, "XY 0.0.1 corrupts data");
  // Counted by the thread that answered, after the answer left: a reader
  // may see them a moment later.
  EXPECT_TRUE(eventually([&] { return metric(R"(swarmkeeper_refusals_total{reason="ban"})") >= 3; }));
  EXPECT_TRUE(eventually([&] {
    return metric(R"(swarmkeeper_tracker_requests_total{transport="http",outcome="announce_refused"})") >= 2;
  }));
  EXPECT_TRUE(eventually([&] {
    return metric(R"(swarmkeeper_tracker_requests_total{transport="udp",outcome="announce_refused"})") >= 1;
  }));

  // A binary prefix round-trips in the spec notation; %-encoded in the URL.
  r = request("POST", "/api/bans", R"({"prefix":"exbc%00","reason":"old BitComet"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body_json(r)["prefix"], "exbc%00");
  r = request("DELETE", "/api/bans/exbc%2500");
  ASSERT_EQ(r.status, 200) << r.body;

  r = request("DELETE", "/api/bans/-XY0001-");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["removed"], true);
  EXPECT_EQ(http_announce(hash, peer_http).find("failure"), std::string::npos);
  EXPECT_EQ(udp_announce(daemon_.udp_port(), hash, peer_udp).action, 1u);
  EXPECT_EQ(get_json("/api/bans")["bans"].size(), 1u);
}

TEST_F(AdminActions, DenyModeRefusesHttpAndUdpAndCreatesNoSwarm) {
  const std::string denied = id20("denied");
  const std::string file = write_file("access.txt", "# denied torrents\n\n" + hex_of(denied) + "\n");
  start({"--access.mode=deny", "--access.file=" + file});
  json a = get_json("/api/access");
  EXPECT_EQ(a["mode"], "deny");
  EXPECT_EQ(a["count"], 1);
  EXPECT_EQ(a["hashes"][0], hex_of(denied));

  std::string body = http_announce(denied, id20("p1"));
  EXPECT_NE(body.find("14:failure reason35:torrent not allowed on this tracker"), std::string::npos)
      << body;
  const auto u = udp_announce(daemon_.udp_port(), denied, id20("p2"));
  EXPECT_EQ(u.action, 3u);
  EXPECT_EQ(u.error, "torrent not allowed on this tracker");
  // No swarm was ever created for it.
  expect_json_error(request("GET", "/api/swarms/" + hex_of(denied)), 404, "denied swarm");
  EXPECT_EQ(get_json("/api/swarms")["total"], 0);

  // Deny a served torrent through the API: its next announce is refused,
  // the file keeps the change, and a scrape leaves it out.
  const std::string other = id20("other");
  EXPECT_EQ(http_announce(other, id20("p1")).find("failure"), std::string::npos);
  auto r = request("POST", "/api/access/" + hex_of(other) + "/deny");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["allowed"], false);
  EXPECT_NE(http_announce(other, id20("p1")).find("torrent not allowed"), std::string::npos);
  EXPECT_NE(read_file(file).find(hex_of(other)), std::string::npos) << read_file(file);
  auto s = http_get(daemon_.port(), scrape_target({other}));
  ASSERT_EQ(s.status, 200);
  EXPECT_EQ(s.body, "d5:filesdee") << s.body;
  // Both transports' access refusals: 2 over HTTP, 1 over UDP.
  EXPECT_GE(metric(R"(swarmkeeper_refusals_total{reason="access"})"), 3);
  // An access-list refusal is "denied", never counted as a swarm's refusal.
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="udp",outcome="announce_denied"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="udp",outcome="announce_refused"})"), 0);
  EXPECT_GE(metric("swarmkeeper_scrape_hashes_denied_total"), 1);

  // Allow it again (deny mode: removed from the list, and from the file).
  r = request("POST", "/api/access/" + hex_of(other) + "/allow");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(http_announce(other, id20("p1")).find("failure"), std::string::npos);
  EXPECT_EQ(read_file(file).find(hex_of(other)), std::string::npos);
}

TEST_F(AdminActions, AllowModeServesOnlyListedHashes) {
  const std::string listed = id20("listed");
  const std::string file = write_file("allow.txt", "  " + hex_of(listed) + "  \n");
  start({"--access.mode=allow", "--access.file=" + file});
  EXPECT_EQ(http_announce(listed, id20("p1")).find("failure"), std::string::npos);
  EXPECT_EQ(udp_announce(daemon_.udp_port(), listed, id20("p2")).action, 1u);
  const std::string unlisted = id20("unlisted");
  EXPECT_NE(http_announce(unlisted, id20("p1")).find("torrent not allowed"), std::string::npos);
  EXPECT_EQ(udp_announce(daemon_.udp_port(), unlisted, id20("p2")).action, 3u);
  expect_json_error(request("GET", "/api/swarms/" + hex_of(unlisted)), 404, "unlisted swarm");
  // Allowing it through the API serves it (and writes the file).
  ASSERT_EQ(request("POST", "/api/access/" + hex_of(unlisted) + "/allow").status, 200);
  EXPECT_EQ(http_announce(unlisted, id20("p1")).find("failure"), std::string::npos);
  EXPECT_NE(read_file(file).find(hex_of(unlisted)), std::string::npos);
}

TEST_F(AdminActions, SighupReloadsTheFileAndABadFileKeepsTheOldList) {
  const std::string a = id20("file-a"), b = id20("file-b");
  const std::string file = write_file("deny.txt", hex_of(a) + "\n");
  start({"--access.mode=deny", "--access.file=" + file});
  EXPECT_NE(http_announce(a, id20("p")).find("torrent not allowed"), std::string::npos);
  EXPECT_EQ(http_announce(b, id20("p")).find("failure"), std::string::npos);

  write_file("deny.txt", "# now b\n" + hex_of(b) + "\n");
  daemon_.signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return get_json("/api/access")["hashes"] == json{hex_of(b)}; }));
  EXPECT_EQ(http_announce(a, id20("p")).find("failure"), std::string::npos);
  EXPECT_NE(http_announce(b, id20("p")).find("torrent not allowed"), std::string::npos);

  // A bad file: the old list stays, the error names the line.
  write_file("deny.txt", hex_of(a) + "\nnot-a-hash\n");
  daemon_.signal(SIGHUP);
  ASSERT_TRUE(eventually(
      [&] { return daemon_.stderr_text().find("line 2") != std::string::npos; }))
      << daemon_.stderr_text();
  EXPECT_EQ(get_json("/api/access")["hashes"], json{hex_of(b)});
  EXPECT_NE(http_announce(b, id20("p")).find("torrent not allowed"), std::string::npos);
  auto r = request("POST", "/api/access/reload");
  expect_json_error(r, 422, "reload of a bad file");
  EXPECT_NE(body_json(r)["error"].get<std::string>().find("line 2"), std::string::npos) << r.body;
  EXPECT_TRUE(daemon_.running());

  write_file("deny.txt", hex_of(a) + "\n" + hex_of(b) + "\n");
  r = request("POST", "/api/access/reload");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["count"], 2);
}

TEST_F(AdminActions, BadAccessConfigExitsTwoNamingTheOption) {
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({"--access.mode=sometimes"}), 2);
  EXPECT_NE(d.stderr_text().find("access.mode"), std::string::npos) << d.stderr_text();
  const std::string bad = write_file("bad.txt", "# ok\n" + std::string(40, 'a') + "\nxyz\n");
  daemon_process d2;
  EXPECT_EQ(d2.run_to_exit({"--access.mode=deny", "--access.file=" + bad}), 2);
  EXPECT_NE(d2.stderr_text().find("access.file"), std::string::npos) << d2.stderr_text();
  EXPECT_NE(d2.stderr_text().find("line 3"), std::string::npos) << d2.stderr_text();
  daemon_process d3;
  EXPECT_EQ(d3.run_to_exit({"--access.mode=allow", "--access.file=" + dir_ + "/missing.txt"}), 2);
  EXPECT_NE(d3.stderr_text().find("access.file"), std::string::npos) << d3.stderr_text();
  daemon_process d4;
  EXPECT_EQ(d4.run_to_exit({"--remediation.operator-holdoff=-1s"}), 2);
  EXPECT_NE(d4.stderr_text().find("remediation.operator-holdoff"), std::string::npos)
      << d4.stderr_text();
}

TEST_F(AdminActions, OperatorStartsAndStopsARemediation) {
  start();
  const std::string hash = id20("operator");
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(http_announce(hash, id20("peer-" + std::to_string(i)), 7000 + i, i == 0 ? 0 : 1000)
                  .find("failure"),
              std::string::npos);
  const std::string hex = hex_of(hash);
  const json before = get_json("/api/swarms/" + hex)["knobs"];

  auto r = request("POST", "/api/swarms/" + hex + "/remediation/start");
  ASSERT_EQ(r.status, 202) << r.body;
  EXPECT_EQ(body_json(r)["started"], true);
  expect_json_error(request("POST", "/api/swarms/" + hex + "/remediation/start"), 409,
                    "second start");
  json rem = get_json("/api/remediations");
  ASSERT_EQ(rem["active"].size(), 1u) << rem.dump();
  EXPECT_EQ(rem["active"][0]["hash"], hex);
  // The first strategy is applied (a healthy swarm without reasons gets the
  // starvation strategies): the knobs leave the defaults.
  ASSERT_TRUE(eventually([&] { return get_json("/api/swarms/" + hex)["knobs"] != before; }));

  r = request("POST", "/api/swarms/" + hex + "/remediation/stop");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["stopped"], true);
  // Answered once the swarm runs on its defaults again.
  EXPECT_EQ(get_json("/api/swarms/" + hex)["knobs"], before);
  ASSERT_TRUE(eventually([&] { return get_json("/api/remediations")["active"].empty(); }));
  expect_json_error(request("POST", "/api/swarms/" + hex + "/remediation/stop"), 409,
                    "stop with none running");
  json events = get_json("/api/events")["events"];
  bool started = false, stopped = false, ended = false;
  for (const auto& e : events) {
    if (e["hash"] != hex) continue;
    started = started || (e["kind"] == "remediation-started" &&
                          e["detail"].get<std::string>().rfind("operator", 0) == 0);
    stopped = stopped || e["kind"] == "remediation-stop";
    ended = ended || (e["kind"] == "remediation-ended" &&
                      e["detail"].get<std::string>().find("operator") != std::string::npos);
  }
  EXPECT_TRUE(started && stopped && ended) << events.dump();
  EXPECT_EQ(metric(R"(swarmkeeper_remediations_started_total{trigger="operator"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_remediations_ended_total{how="operator_stop"})"), 1);
  // The history of the swarm records the end by an operator.
  json history;
  const bool end_recorded = eventually([&] {
    history = get_json("/api/swarms/" + hex)["remediation_history"];
    for (const auto& h : history)
      if (h["action"] == "end" &&
          h["reason"].get<std::string>().find("operator") != std::string::npos)
        return true;
    return false;
  });
  EXPECT_TRUE(end_recorded) << history.dump();
  // An operator may start one again despite the hold-off.
  EXPECT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/start").status, 202);
}

TEST_F(AdminActions, RestartCounterIsMonotonicAndTheSwarmKeepsItsPeers) {
  start();
  const std::string hash = id20("restart-counter");
  for (int i = 0; i < 3; ++i) http_announce(hash, id20("peer-" + std::to_string(i)), 7000 + i);
  const std::string hex = hex_of(hash);
  const std::string restarts = R"(swarmkeeper_swarm_restarts_total{state="kept"})";
  EXPECT_EQ(metric(restarts), 0);
  for (int round = 1; round <= 2; ++round) {
    const auto id = get_json("/api/swarms/" + hex)["actor_id"];
    auto r = request("POST", "/api/swarms/" + hex + "/restart");
    ASSERT_EQ(r.status, 202) << r.body;
    ASSERT_TRUE(eventually([&] {
      auto g = request("GET", "/api/swarms/" + hex);
      return g.status == 200 && body_json(g)["actor_id"] != id;
    }));
    ASSERT_TRUE(eventually([&] { return metric(restarts) == round; }));
    EXPECT_EQ(get_json("/api/swarms/" + hex)["peer_count"], 3);
  }
}

TEST_F(AdminActions, MetricsCountRequestsAndLatencyPerTransport) {
  start();
  for (int i = 0; i < 5; ++i) http_announce(id20("lat"), id20("peer-" + std::to_string(i)));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(udp_announce(daemon_.udp_port(), id20("lat"), id20("udp-" + std::to_string(i))).action,
              1u);
  http_get(daemon_.port(), "/nowhere");
  http_get(daemon_.port(), "/announce?info_hash=short");
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="http",outcome="announce_ok"})"), 5);
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="http",outcome="not_found"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="http",outcome="bad_request"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_tracker_requests_total{transport="udp",outcome="announce_ok"})"), 3);
  EXPECT_EQ(metric(R"(swarmkeeper_announce_latency_seconds_count{transport="http"})"), 5);
  EXPECT_EQ(metric(R"(swarmkeeper_announce_latency_seconds_count{transport="udp"})"), 3);
  EXPECT_EQ(metric(R"(swarmkeeper_announce_latency_seconds_bucket{transport="http",le="+Inf"})"), 5);
  EXPECT_GT(metric(R"(swarmkeeper_announce_latency_seconds_sum{transport="http"})"), 0);
}

}  // namespace
}  // namespace sk::test
