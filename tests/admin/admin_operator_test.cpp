// Operator state and quiet health through the real daemon: a pinned policy
// and `default`, every operator change in /api/events, `deny` (and a reload)
// ending a live swarm, small swarms reported as unevaluated and kept out of
// the critical gauge, unhealthy swarms by reason, and the repeat / early
// announce counters. Real sockets; every wait polls with a deadline.

#include <csignal>
#include <regex>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "harness.hpp"

namespace sk::test {
namespace {

using json = nlohmann::json;

class AdminOperator : public admin_daemon_test {
 protected:
  /// The events of `hex` (or of no swarm, for a null hash) of kind `kind`.
  std::vector<json> events_of(const json& hex, const std::string& kind) {
    std::vector<json> out;
    const json all = get_json("/api/events");
    for (const auto& e : all["events"])
      if (e["hash"] == hex && e["kind"] == kind) out.push_back(e);
    return out;
  }
  bool has_event(const json& hex, const std::string& kind, const std::string& text) {
    for (const auto& e : events_of(hex, kind))
      if (e["detail"].get<std::string>().find(text) != std::string::npos) return true;
    return false;
  }
  /// Whether the daemon logged a line containing every one of `parts`.
  bool logged(const std::vector<std::string>& parts) {
    std::istringstream in{daemon_.stderr_text()};
    std::string line;
    while (std::getline(in, line)) {
      bool all = true;
      for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
      if (all && line.find(" info ") != std::string::npos) return true;
    }
    return false;
  }
};

TEST_F(AdminOperator, DefaultUnpinsAndEveryPolicyChangeIsLoggedAndAnEvent) {
  start({"--log-level=info"});
  const std::string hash = id20("pin");
  const std::string hex = hex_of(hash);
  http_announce(hash, id20("p1"));
  EXPECT_EQ(get_json("/api/swarms/" + hex)["policy_pinned"], false);

  auto r = request("POST", "/api/swarms/" + hex + "/policy", R"({"policy":"role-aware"})");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_json(r);
  EXPECT_EQ(j["policy"], "role-aware");
  EXPECT_EQ(j["previous"], "adaptive");
  EXPECT_EQ(j["pinned"], true);
  json s = get_json("/api/swarms/" + hex);
  EXPECT_EQ(s["policy"], "role-aware");
  EXPECT_EQ(s["policy_pinned"], true);

  // `default`, as swarmctl documents it: unpinned, back to the config's.
  r = request("POST", "/api/swarms/" + hex + "/policy", R"({"policy":"default"})");
  ASSERT_EQ(r.status, 200) << r.body;
  j = body_json(r);
  EXPECT_EQ(j["policy"], "adaptive");
  EXPECT_EQ(j["previous"], "role-aware");
  EXPECT_EQ(j["pinned"], false);
  EXPECT_EQ(j["was_pinned"], true);
  s = get_json("/api/swarms/" + hex);
  EXPECT_EQ(s["policy"], "adaptive");
  EXPECT_EQ(s["policy_pinned"], false);

  EXPECT_TRUE(has_event(hex, "operator-policy", "adaptive -> role-aware (pinned)"))
      << get_json("/api/events").dump();
  EXPECT_TRUE(has_event(hex, "operator-policy", "role-aware (pinned) -> adaptive"));
  EXPECT_TRUE(eventually([&] { return logged({hex, "policy adaptive -> role-aware"}); }))
      << daemon_.stderr_text();
  EXPECT_TRUE(logged({hex, "policy role-aware (pinned) -> adaptive"})) << daemon_.stderr_text();
}

TEST_F(AdminOperator, APinnedPolicySurvivesTheEndOfARemediation) {
  start();
  const std::string hash = id20("pinned-remediation");
  const std::string hex = hex_of(hash);
  for (int i = 0; i < 3; ++i) http_announce(hash, id20("peer-" + std::to_string(i)), 7000 + i);
  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/policy", R"({"policy":"role-aware"})").status,
            200);
  const json pinned_knobs = get_json("/api/swarms/" + hex)["knobs"];

  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/start").status, 202);
  // A strategy is in force (the starvation strategies shorten the
  // leechers' interval), but the pinned policy is not replaced.
  ASSERT_TRUE(eventually([&] { return get_json("/api/swarms/" + hex)["knobs"] != pinned_knobs; }));
  EXPECT_EQ(get_json("/api/swarms/" + hex)["knobs"]["policy"], "role-aware");

  auto r = request("POST", "/api/swarms/" + hex + "/remediation/stop");
  ASSERT_EQ(r.status, 200) << r.body;
  json s = get_json("/api/swarms/" + hex);
  EXPECT_EQ(s["knobs"], pinned_knobs) << "the operator's policy, not the config default";
  EXPECT_EQ(s["policy_pinned"], true);
  EXPECT_TRUE(has_event(hex, "remediation-ended", "pinned policy role-aware"));
}

TEST_F(AdminOperator, DenyEndsALiveSwarmAndItsRemediation) {
  const std::string file = write_file("deny.txt", "# refused torrents\n");
  start({"--access.mode=deny", "--access.file=" + file, "--log-level=info"});
  const std::string hash = id20("live-then-denied");
  const std::string hex = hex_of(hash);
  for (int i = 0; i < 3; ++i) http_announce(hash, id20("peer-" + std::to_string(i)), 7000 + i);
  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/start").status, 202);
  ASSERT_EQ(get_json("/api/remediations")["active"].size(), 1u);

  auto r = request("POST", "/api/access/" + hex + "/deny");
  ASSERT_EQ(r.status, 200) << r.body;
  json j = body_json(r);
  EXPECT_EQ(j["allowed"], false);
  EXPECT_EQ(j["swarm_ended"], true);
  EXPECT_EQ(j["peers_dropped"], 3);
  // The swarm is gone with its peers and its remediation.
  expect_json_error(request("GET", "/api/swarms/" + hex), 404, "denied swarm");
  EXPECT_EQ(get_json("/api/swarms")["total"], 0);
  ASSERT_TRUE(eventually([&] { return get_json("/api/remediations")["active"].empty(); }));
  // Announces and scrapes answer as for any refused torrent.
  EXPECT_NE(http_announce(hash, id20("peer-0"), 7000).find("torrent not allowed"),
            std::string::npos);
  auto scrape = http_get(daemon_.port(), scrape_target({hash}));
  ASSERT_EQ(scrape.status, 200);
  EXPECT_EQ(scrape.body, "d5:filesdee");
  expect_json_error(request("GET", "/api/swarms/" + hex), 404, "no swarm came back");
  EXPECT_TRUE(has_event(hex, "operator-access", "served -> refused (deny list); its swarm ended (3 peers dropped)"));
  EXPECT_TRUE(eventually(
      [&] { return logged({hex, "served -> refused", "its swarm ended (3 peers dropped)"}); }))
      << daemon_.stderr_text();

  // Allowed again: served by a new, empty swarm.
  ASSERT_EQ(request("POST", "/api/access/" + hex + "/allow").status, 200);
  EXPECT_TRUE(has_event(hex, "operator-access", "refused -> served"));
  EXPECT_EQ(http_announce(hash, id20("peer-9"), 7009).find("failure"), std::string::npos);
  EXPECT_EQ(get_json("/api/swarms/" + hex)["peer_count"], 1);
}

TEST_F(AdminOperator, AReloadEndsTheSwarmsTheNewListRefuses) {
  const std::string file = write_file("deny.txt", "");
  start({"--access.mode=deny", "--access.file=" + file});
  const std::string kept = id20("kept"), refused = id20("refused");
  http_announce(kept, id20("p"));
  http_announce(refused, id20("p"));
  ASSERT_EQ(get_json("/api/swarms")["total"], 2);
  write_file("deny.txt", hex_of(refused) + "\n");
  auto r = request("POST", "/api/access/reload");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body_json(r)["swarms_ended"], 1);
  expect_json_error(request("GET", "/api/swarms/" + hex_of(refused)), 404, "refused swarm");
  EXPECT_EQ(get_json("/api/swarms/" + hex_of(kept))["peer_count"], 1);
  EXPECT_TRUE(has_event(nullptr, "operator-access", "0 -> 1 hashes; 1 swarms of refused"));
}

TEST_F(AdminOperator, ASighupReloadEndsTheSwarmsTheNewListRefusesToo) {
  const std::string file = write_file("deny.txt", "");
  start({"--access.mode=deny", "--access.file=" + file, "--log-level=info"});
  const std::string kept = id20("kept"), refused = id20("refused");
  http_announce(kept, id20("p"));
  http_announce(refused, id20("p"));
  ASSERT_EQ(get_json("/api/swarms")["total"], 2);
  write_file("deny.txt", hex_of(refused) + "\n");
  daemon_.signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return get_json("/api/swarms")["total"] == 1; }))
      << daemon_.stderr_text();
  expect_json_error(request("GET", "/api/swarms/" + hex_of(refused)), 404, "refused swarm");
  EXPECT_EQ(get_json("/api/swarms/" + hex_of(kept))["peer_count"], 1);
  EXPECT_TRUE(eventually([&] { return logged({"SIGHUP", "1 swarms of refused torrents ended"}); }))
      << daemon_.stderr_text();
}

TEST_F(AdminOperator, BansRestartsAndRemediationsAreEvents) {
  start({"--log-level=info"});
  const std::string hash = id20("evented");
  const std::string hex = hex_of(hash);
  for (int i = 0; i < 3; ++i) http_announce(hash, id20("peer-" + std::to_string(i)), 7000 + i);

  ASSERT_EQ(request("POST", "/api/bans", R"({"prefix":"-ZZ0001-","reason":"broken"})").status, 201);
  ASSERT_EQ(request("DELETE", "/api/bans/-ZZ0001-").status, 200);
  EXPECT_TRUE(has_event(nullptr, "operator-ban", "\"-ZZ0001-\": not banned -> banned (broken)"));
  EXPECT_TRUE(has_event(nullptr, "operator-unban", "\"-ZZ0001-\": banned -> not banned"));
  EXPECT_TRUE(logged({"-ZZ0001-", "not banned -> banned"})) << daemon_.stderr_text();
  EXPECT_TRUE(logged({"-ZZ0001-", "banned -> not banned"})) << daemon_.stderr_text();

  const auto old_id = get_json("/api/swarms/" + hex)["actor_id"].get<std::uint64_t>();
  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/restart").status, 202);
  ASSERT_TRUE(eventually([&] { return !events_of(hex, "restart").empty(); }));
  const auto new_id = get_json("/api/swarms/" + hex)["actor_id"].get<std::uint64_t>();
  const std::string change =
      "by an operator (actor " + std::to_string(old_id) + " -> " + std::to_string(new_id) + ")";
  EXPECT_TRUE(has_event(hex, "restart", change));
  EXPECT_TRUE(logged({hex, change})) << daemon_.stderr_text();

  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/start").status, 202);
  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/stop").status, 200);
  EXPECT_TRUE(has_event(hex, "remediation-started", "operator"));
  EXPECT_TRUE(has_event(hex, "remediation-stop", "operator"));
  EXPECT_TRUE(logged({hex, "remediation none -> running"})) << daemon_.stderr_text();
  EXPECT_TRUE(logged({hex, "remediation running -> stopped"})) << daemon_.stderr_text();
  // Without a cluster a move is refused and changes (and records) nothing.
  expect_json_error(request("POST", "/api/swarms/" + hex + "/move", R"({"node":"b"})"), 409,
                    "move without a cluster");
  EXPECT_TRUE(events_of(hex, "operator-move").empty());
}

TEST_F(AdminOperator, SmallSwarmsAreUnevaluatedAndOutOfTheCriticalGauge) {
  start({"--health.tick=1s"});
  const std::string lonely = id20("lonely"), starved = id20("starved");
  http_announce(lonely, id20("only"));
  for (int i = 0; i < 6; ++i) http_announce(starved, id20("l-" + std::to_string(i)), 7000 + i);
  // Both ticked (health.tick=1s).
  ASSERT_TRUE(eventually([&] {
    return get_json("/api/swarms/" + hex_of(lonely))["health_detail"]["evaluated"] == true &&
           get_json("/api/swarms/" + hex_of(starved))["health_detail"]["evaluated"] == true;
  }));
  json small = get_json("/api/swarms/" + hex_of(lonely));
  EXPECT_EQ(small["health"], "unevaluated");
  EXPECT_EQ(small["reasons"], json::array());
  EXPECT_EQ(small["partial_seeds"], 0);
  EXPECT_EQ(small["health_detail"]["partial_seeds"], 0);
  json big = get_json("/api/swarms/" + hex_of(starved));
  EXPECT_EQ(big["health"], "critical");
  EXPECT_NE(std::find(big["reasons"].begin(), big["reasons"].end(), "no-seeders"),
            big["reasons"].end())
      << big.dump();

  EXPECT_EQ(get_json("/api/swarms?health=critical")["total"], 1);
  EXPECT_EQ(get_json("/api/swarms?health=unhealthy")["total"], 1);
  EXPECT_EQ(get_json("/api/swarms?health=unevaluated")["total"], 1);
  EXPECT_EQ(metric(R"(swarmkeeper_swarms{health="critical"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_swarms{health="unevaluated"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_unhealthy_swarms{reason="no-seeders"})"), 1);
  EXPECT_EQ(metric(R"(swarmkeeper_unhealthy_swarms{reason="abusive-clients"})"), 0);

  // Only the big one is remediated, and its history starts from its real
  // state.
  ASSERT_TRUE(eventually([&] { return get_json("/api/remediations")["active"].size() == 1u; }));
  json active = get_json("/api/remediations")["active"];
  EXPECT_EQ(active[0]["hash"], hex_of(starved));
  ASSERT_FALSE(active[0]["actions"].empty());
  EXPECT_EQ(active[0]["actions"][0]["action"], "start");
  EXPECT_EQ(active[0]["actions"][0]["before"]["state"], "critical");
  EXPECT_EQ(active[0]["actions"][0]["before"]["leechers"], 6);
}

TEST_F(AdminOperator, AnOperatorRemediationOfAnUnevaluatedSwarmRecordsWhatItIs) {
  start();  // the default tick (1 min): no evaluation during the test
  const std::string hash = id20("fresh");
  const std::string hex = hex_of(hash);
  http_announce(hash, id20("seed"), 7000, 0);
  http_announce(hash, id20("leech"), 7001, 1000);
  ASSERT_EQ(request("POST", "/api/swarms/" + hex + "/remediation/start").status, 202);
  json history;
  ASSERT_TRUE(eventually([&] {
    history = get_json("/api/swarms/" + hex)["remediation_history"];
    return !history.empty();
  }));
  EXPECT_EQ(history[0]["action"], "start");
  EXPECT_EQ(history[0]["before"]["state"], "unevaluated") << history.dump();
  EXPECT_EQ(history[0]["before"]["seeders"], 1);
  EXPECT_EQ(history[0]["before"]["leechers"], 1);
}

TEST_F(AdminOperator, RepeatsAndEarlyAnnouncesAreCountedNodeWide) {
  start();
  const std::string hash = id20("chatty");
  const std::uint64_t mib = 1ull << 20;
  http_announce(hash, id20("c"), 7000, 100 * mib, "started");
  http_announce(hash, id20("c"), 7000, 100 * mib, "started");  // the same again: a repeat
  http_announce(hash, id20("c"), 7000, 50 * mib);              // news, far too soon: early
  json c = get_json("/api/swarms/" + hex_of(hash))["counters"];
  EXPECT_EQ(c["repeats"], 1) << c.dump();
  EXPECT_EQ(c["early"], 1) << c.dump();
  EXPECT_EQ(metric("swarmkeeper_announce_repeats_total"), 1);
  EXPECT_EQ(metric("swarmkeeper_announces_early_total"), 1);
}

}  // namespace
}  // namespace sk::test
