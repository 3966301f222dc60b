// swarmctl's tables and renderers on JSON shaped like the admin API's
// answers (admin/admin_server.cpp), and on malformed answers.

#include <iterator>
#include <sstream>

#include <gtest/gtest.h>

#include "app/swarmctl/format.hpp"

namespace sk::swarmctl {
namespace {

using json = nlohmann::json;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

TEST(TextTable, AlignsColumnsWithoutTrailingBlanks) {
  text_table t{{{"NAME"}, {"N", text_table::align::right}, {"NOTE"}}};
  t.add({"a", "5", ""});
  t.add({"longer", "123", "x"});
  EXPECT_EQ(t.render(),
            "NAME      N  NOTE\n"
            "a         5\n"
            "longer  123  x\n");
  EXPECT_EQ(t.rows(), 2u);
  EXPECT_THROW(t.add({"1", "2", "3", "4"}), std::invalid_argument);
}

TEST(Values, FieldsNumbersDurationsBytesPercent) {
  json j = {{"s", "x"}, {"i", 42}, {"d", 0.12345}, {"b", true}, {"n", nullptr},
            {"a", {"p", "q"}}, {"big", 1e20}};
  EXPECT_EQ(field(j, "s"), "x");
  EXPECT_EQ(field(j, "i"), "42");
  EXPECT_EQ(field(j, "d"), "0.123");
  EXPECT_EQ(field(j, "b"), "yes");
  EXPECT_EQ(field(j, "n"), "-");
  EXPECT_EQ(field(j, "missing"), "-");
  EXPECT_EQ(field(j, "a"), "p,q");
  EXPECT_EQ(field(json::array(), "x"), "-");
  EXPECT_EQ(field(j, "big"), "1e+20");

  EXPECT_EQ(duration_text(0.4), "0.4s");
  EXPECT_EQ(duration_text(12), "12s");
  EXPECT_EQ(duration_text(245), "4m 5s");
  EXPECT_EQ(duration_text(3900), "1h 5m");
  EXPECT_EQ(duration_text(3720), "1h 2m");
  EXPECT_EQ(duration_text(2 * 86400 + 3 * 3600), "2d 3h");
  EXPECT_EQ(duration_text(nullptr), "-");
  EXPECT_EQ(duration_text(-1), "-");

  EXPECT_EQ(bytes_text(512), "512 B");
  EXPECT_EQ(bytes_text(3277), "3.2 KiB");
  EXPECT_EQ(bytes_text(18874368), "18.0 MiB");
  EXPECT_EQ(bytes_text(3.5 * 1024 * 1024 * 1024), "3.5 GiB");
  EXPECT_EQ(bytes_text("x"), "-");
  EXPECT_EQ(bytes_text(-5), "-");

  EXPECT_EQ(rate_text(0.5), "0.50/s");
  EXPECT_EQ(rate_text(12.34), "12.3/s");
  EXPECT_EQ(rate_text(140.4), "140/s");
  EXPECT_EQ(rate_text(0), "0/s");
  EXPECT_EQ(rate_text(0.004), "0.004/s");
  EXPECT_EQ(rate_text(2, {}, "/h"), "2.00/h");
  EXPECT_EQ(rate_text(nullptr), "-");

  // --raw: the numbers exactly as the API sent them.
  style raw;
  raw.raw = true;
  EXPECT_EQ(bytes_text(18874369, raw), "18874369");
  EXPECT_EQ(duration_text(3900, raw), "3900");
  EXPECT_EQ(duration_text(0.125, raw), "0.125");
  EXPECT_EQ(rate_text(0.016666666666666666, raw), "0.016666666666666666");
  EXPECT_EQ(percent_text(0.421875, raw), "0.421875");
  EXPECT_EQ(bytes_text("x", raw), "-");

  EXPECT_EQ(percent_text(0.42), "42%");
  EXPECT_EQ(percent_text(1.0), "100%");
  EXPECT_EQ(percent_text(nullptr), "-");
}

const std::string h1 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const std::string h2 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

json swarm_entry(const std::string& hash, int seeders, int leechers, const char* health,
                 json reasons) {
  return {{"hash", hash},       {"actor_id", 7},         {"peers", seeders + leechers},
          {"seeders", seeders}, {"leechers", leechers},  {"downloaded", 0},
          {"health", health},   {"reasons", reasons},    {"announce_rate", 0.5},
          {"policy", "adaptive"}};
}

TEST(RenderSwarms, OneRowPerSwarmWithHeader) {
  json j = {{"total", 2},
            {"offset", 0},
            {"limit", 100},
            {"truncated", false},
            {"swarms",
             {swarm_entry(h1, 1, 2, "healthy", json::array()),
              swarm_entry(h2, 0, 5, "critical", {"no-seeders", "stalled"})}}};
  auto l = lines(render_swarms(j));
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].substr(0, 4), "HASH");
  EXPECT_NE(l[0].find("PEERS"), std::string::npos);
  EXPECT_NE(l[0].find("POLICY"), std::string::npos);
  std::istringstream r1(l[1]);
  std::vector<std::string> cells{std::istream_iterator<std::string>(r1), {}};
  EXPECT_EQ(cells,
            (std::vector<std::string>{h1, "3", "1", "2", "0.50/s", "healthy", "-", "adaptive"}));
  EXPECT_NE(l[2].find("no-seeders,stalled"), std::string::npos);
  EXPECT_EQ(l[3], "2 swarms");
}

TEST(RenderSwarms, PagingEmptyAndTruncationNotes) {
  json page = {{"total", 5}, {"offset", 2}, {"limit", 1}, {"truncated", true},
               {"swarms", {swarm_entry(h1, 1, 0, "healthy", json::array())}}};
  const auto text = render_swarms(page);
  EXPECT_NE(text.find("showing 3-3 of 5"), std::string::npos) << text;
  EXPECT_NE(text.find("fan-out limit"), std::string::npos) << text;
  EXPECT_EQ(render_swarms({{"total", 0}, {"swarms", json::array()}}), "no swarms\n");
  EXPECT_NE(render_swarms({{"total", 3}, {"offset", 9}, {"swarms", json::array()}})
                .find("lower --offset"),
            std::string::npos);
}

TEST(RenderSwarm, DetailAndPeerTable) {
  json j = swarm_entry(h1, 1, 1, "degraded", {"few-seeders"});
  j["owner_node"] = "node-a";
  j["peer_count"] = 3;
  j["peers_listed"] = {{{"address", "10.0.0.1"},
                        {"port", 6881},
                        {"peer_id", "2d5452333030302d"},
                        {"client", "Transmission 3.00"},
                        {"seeder", true},
                        {"left", 0},
                        {"progress", 1.0},
                        {"announces", 4},
                        {"flags", json::array()}},
                       {{"address", "10.0.0.2"},
                        {"port", 6882},
                        {"peer_id", "2d7142343530302d"},
                        {"client", "qBittorrent 4.5.0"},
                        {"seeder", false},
                        {"left", 500},
                        {"progress", 0.5},
                        {"announces", 1},
                        {"flags", {"stalled"}}}};
  j["knobs"] = {{"policy", "adaptive"}, {"interval_scale", 1.0}};
  j["remediation_history"] = {{{"age_seconds", 30}, {"action", "apply"}, {"strategy", "boost"},
                               {"reason", "stalled"}, {"detail", "x"}}};
  const auto text = render_swarm(j);
  EXPECT_NE(text.find("health:"), std::string::npos) << text;
  EXPECT_NE(text.find("degraded (few-seeders)"), std::string::npos) << text;
  EXPECT_NE(text.find("policy:"), std::string::npos);
  EXPECT_NE(text.find("peers (first 2 of 3):"), std::string::npos) << text;
  EXPECT_NE(text.find("ADDRESS"), std::string::npos);
  bool seeder_row = false, leecher_row = false;
  for (const auto& l : lines(text)) {
    if (l.find("10.0.0.1") == 0) {
      seeder_row = true;
      EXPECT_NE(l.find("seeder"), std::string::npos) << l;
      EXPECT_NE(l.find("100%"), std::string::npos) << l;
    }
    if (l.find("10.0.0.2") == 0) {
      leecher_row = true;
      EXPECT_NE(l.find("leecher"), std::string::npos) << l;
      EXPECT_NE(l.find("stalled"), std::string::npos) << l;
      EXPECT_NE(l.find("2d7142343530302d"), std::string::npos) << l;
    }
  }
  EXPECT_TRUE(seeder_row && leecher_row) << text;
  EXPECT_NE(text.find("remediation history:"), std::string::npos);
  // `left` in bytes for humans, exact with --raw.
  j["peers_listed"][1]["left"] = 3 * 1024 * 1024 + 1;
  bool human = false;
  for (const auto& l : lines(render_swarm(j)))
    if (l.find("10.0.0.2") == 0) human = l.find("3.0 MiB") != std::string::npos;
  EXPECT_TRUE(human) << render_swarm(j);
  style raw;
  raw.raw = true;
  bool exact = false;
  for (const auto& l : lines(render_swarm(j, raw)))
    if (l.find("10.0.0.2") == 0) exact = l.find(" 3145729 ") != std::string::npos;
  EXPECT_TRUE(exact) << render_swarm(j, raw);
  EXPECT_NE(text.find("30s"), std::string::npos);
}

TEST(Renderers, SurviveUnexpectedShapes) {
  // A different daemon version, or a proxy's page parsed as JSON: never a
  // crash, at worst dashes.
  for (const json& j : {json(nullptr), json(42), json("text"), json::array(),
                        json{{"swarms", "not a list"}, {"total", "x"}},
                        json{{"peers_listed", {1, 2}}, {"health_detail", 3}},
                        json{{"active", {{{"actions", 5}}}}, {"recent", {7}}},
                        json{{"events", {nullptr}}}, json{{"bans", {{{"prefix", 1}}}}}}) {
    EXPECT_NO_THROW(render_node(j, true)) << j;
    EXPECT_NO_THROW(render_swarms(j)) << j;
    EXPECT_NO_THROW(render_swarm(j)) << j;
    EXPECT_NO_THROW(render_remediations(j)) << j;
    EXPECT_NO_THROW(render_events(j)) << j;
    EXPECT_NO_THROW(render_bans(j)) << j;
    EXPECT_NO_THROW(render_access(j)) << j;
  }
}

TEST(Renderers, NodeEventsRemediationsBansAccess) {
  json node = {{"node", "host1"},
               {"version", "0.1.0"},
               {"uptime_seconds", 65},
               {"actors", {{"swarms", 3}, {"running", 9}}},
               {"memory", {{"resident_bytes", 2 * 1024 * 1024}}},
               {"config", {{"admin.port", "8081"}}}};
  auto text = render_node(node, false);
  EXPECT_NE(text.find("uptime:"), std::string::npos);
  EXPECT_NE(text.find("1m 5s"), std::string::npos) << text;
  EXPECT_NE(text.find("2.0 MiB"), std::string::npos) << text;
  EXPECT_EQ(text.find("admin.port"), std::string::npos);
  EXPECT_NE(render_node(node, true).find("admin.port"), std::string::npos);

  json events = {{"events", {{{"age_seconds", 5}, {"hash", h1}, {"kind", "restart"}, {"detail", "killed"}}}}};
  text = render_events(events);
  EXPECT_NE(text.find("KIND"), std::string::npos);
  EXPECT_NE(text.find(h1), std::string::npos);
  EXPECT_NE(text.find("restart"), std::string::npos);
  EXPECT_EQ(render_events({{"events", json::array()}}), "no supervisor events\n");

  json rem = {{"active", {swarm_entry(h2, 0, 3, "critical", {"no-seeders"})}},
              {"recent", events["events"]}};
  rem["active"][0]["actions"] = {{{"age_seconds", 3}, {"action", "apply"}, {"strategy", "seeder-rotation"}}};
  text = render_remediations(rem);
  EXPECT_NE(text.find("active remediations:"), std::string::npos);
  EXPECT_NE(text.find("apply seeder-rotation (3s ago)"), std::string::npos) << text;
  EXPECT_NE(text.find("recent remediation events:"), std::string::npos);
  EXPECT_NE(render_remediations({{"active", json::array()}, {"recent", json::array()}})
                .find("no active remediations"),
            std::string::npos);

  text = render_bans({{"bans", {{{"prefix", "-XX0001-"}, {"reason", "fake completions"}}}}});
  EXPECT_NE(text.find("-XX0001-  fake completions"), std::string::npos) << text;
  EXPECT_EQ(render_bans({{"bans", json::array()}}), "no bans\n");

  text = render_access({{"mode", "allow"}, {"file", ""}, {"count", 3}, {"hashes", {h1, h2}}});
  EXPECT_NE(text.find("mode:"), std::string::npos);
  EXPECT_NE(text.find(h2 + "\n"), std::string::npos);
  EXPECT_NE(text.find("... and 1 more"), std::string::npos) << text;
}

TEST(CollectHashes, OnlyHashAndSwarmKeysWithFortyHexDigits) {
  json j = {{"swarms", {{{"hash", h1}, {"peers_listed", {{{"peer_id", h2}}}}}}},
            {"swarm", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB"},
            {"hash", "short"}};
  std::set<std::string> seen;
  collect_hashes(j, seen);
  EXPECT_EQ(seen, (std::set<std::string>{h1, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"}));
}

}  // namespace
}  // namespace sk::swarmctl
