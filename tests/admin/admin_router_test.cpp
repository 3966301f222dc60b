// The routing table (admin/admin_router.hpp) and the admin API's own table
// (admin/admin_routes.hpp), without any server: matching, parameters, 404
// against 405, and the answers dispatch() gives before any handler runs.

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "admin/admin_router.hpp"
#include "admin/admin_routes.hpp"

namespace sk::admin_api {
namespace {

using sv_list = std::vector<std::string_view>;

TEST(AdminRouter, SplitPathDropsEmptySegments) {
  EXPECT_EQ(split_path(""), sv_list{});
  EXPECT_EQ(split_path("/"), sv_list{});
  EXPECT_EQ(split_path("//"), sv_list{});
  EXPECT_EQ(split_path("/api/node"), (sv_list{"api", "node"}));
  EXPECT_EQ(split_path("api/node"), (sv_list{"api", "node"}));
  EXPECT_EQ(split_path("/api//node/"), (sv_list{"api", "node"}));
}

TEST(AdminRouter, PatternsMatchSegmentBySegmentAndCaptureParameters) {
  path_params p;
  EXPECT_TRUE(match_pattern("/api/node", split_path("/api/node"), p));
  EXPECT_EQ(p.size(), 0u);
  EXPECT_FALSE(match_pattern("/api/node", split_path("/api/nodes"), p));
  EXPECT_FALSE(match_pattern("/api/node", split_path("/api"), p));
  EXPECT_FALSE(match_pattern("/api/node", split_path("/api/node/x"), p));
  EXPECT_FALSE(match_pattern("/", split_path("/api"), p));
  EXPECT_TRUE(match_pattern("/", split_path("//"), p));

  p.clear();
  ASSERT_TRUE(
      match_pattern("/api/swarms/{hash}/policy", split_path("/api/swarms/ab%20c/policy"), p));
  ASSERT_EQ(p.size(), 1u);
  ASSERT_NE(p.find("hash"), nullptr);
  EXPECT_EQ(*p.find("hash"), "ab%20c");  // raw: the handler decodes
  EXPECT_EQ(p.find("prefix"), nullptr);

  p.clear();
  ASSERT_TRUE(match_pattern("/{a}/x/{b}", split_path("/1/x/2"), p));
  EXPECT_EQ(*p.find("a"), "1");
  EXPECT_EQ(*p.find("b"), "2");
  // A parameter matches one segment, never none.
  p.clear();
  EXPECT_FALSE(match_pattern("/a/{b}", split_path("/a/"), p));
}

route_table<int> sample_table() {
  return {
      {"GET", "/things", 1},         {"POST", "/things", 2},
      {"GET", "/things/{id}", 3},    {"DELETE", "/things/{id}", 4},
      {"GET", "/things/special", 5},  // shadowed by row 3 for GET
      {"PUT", "/things/special", 6}, {"POST", "/things/{id}/{verb}", 7},
  };
}

TEST(AdminRouter, TheFirstRowWithPathAndMethodWins) {
  const auto t = sample_table();
  auto m = t.match("GET", "/things");
  ASSERT_EQ(m.outcome, route_outcome::found);
  EXPECT_EQ(m.row->handler, 1);
  m = t.match("POST", "/things/");
  ASSERT_EQ(m.outcome, route_outcome::found);
  EXPECT_EQ(m.row->handler, 2);
  m = t.match("GET", "/things/special");
  ASSERT_EQ(m.outcome, route_outcome::found);
  EXPECT_EQ(m.row->handler, 3);
  EXPECT_EQ(*m.params.find("id"), "special");
  m = t.match("PUT", "/things/special");
  ASSERT_EQ(m.outcome, route_outcome::found);
  EXPECT_EQ(m.row->handler, 6);
  EXPECT_EQ(m.params.size(), 0u);
  m = t.match("POST", "/things/7/paint");
  ASSERT_EQ(m.outcome, route_outcome::found);
  EXPECT_EQ(m.row->handler, 7);
  EXPECT_EQ(*m.params.find("id"), "7");
  EXPECT_EQ(*m.params.find("verb"), "paint");
}

TEST(AdminRouter, AKnownPathWithAnotherMethodIs405WithItsMethods) {
  const auto t = sample_table();
  auto m = t.match("PUT", "/things");
  EXPECT_EQ(m.outcome, route_outcome::method_not_allowed);
  EXPECT_EQ(m.row, nullptr);
  EXPECT_EQ(m.allowed, (sv_list{"GET", "POST"}));
  // Every row whose pattern matches contributes, each method once.
  m = t.match("POST", "/things/special");
  EXPECT_EQ(m.outcome, route_outcome::method_not_allowed);
  EXPECT_EQ(m.allowed, (sv_list{"GET", "DELETE", "PUT"}));
  // Methods are case-sensitive.
  m = t.match("get", "/things");
  EXPECT_EQ(m.outcome, route_outcome::method_not_allowed);
}

TEST(AdminRouter, AnUnknownPathIs404WhateverTheMethod) {
  const auto t = sample_table();
  for (const char* method : {"GET", "POST", "BREW"}) {
    for (const char* path : {"/", "", "/thing", "/things/1/2/3", "/other/1"}) {
      const auto m = t.match(method, path);
      EXPECT_EQ(m.outcome, route_outcome::not_found) << method << ' ' << path;
      EXPECT_TRUE(m.allowed.empty());
    }
  }
}

// -- the admin API's table --------------------------------------------------------

const std::string hash40 = "0123456789abcdef0123456789abcdef01234567";

TEST(AdminRoutes, EveryEndpointIsReachedByItsOwnRow) {
  // A concrete path for each row (parameters filled in) finds that row:
  // no earlier row shadows a later one.
  const auto& rows = admin_routes().routes();
  std::set<std::pair<std::string_view, std::string_view>> seen;
  for (const auto& r : rows) {
    EXPECT_TRUE(seen.emplace(r.method, r.pattern).second) << "row listed twice: " << r.pattern;
    EXPECT_NE(r.handler.handle, nullptr) << r.pattern;
    std::string path;
    for (auto seg : split_path(r.pattern))
      path += "/" + (seg.front() == '{' ? hash40 : std::string(seg));
    const auto m = admin_routes().match(r.method, path);
    ASSERT_EQ(m.outcome, route_outcome::found) << r.method << ' ' << path;
    EXPECT_EQ(m.row, &r) << r.method << ' ' << path;
  }
  EXPECT_EQ(rows.size(), 21u);
}

TEST(AdminRoutes, PathsAndMethodsAsTheApiDocumentsThem) {
  struct expectation {
    const char* method;
    std::string path;
    route_outcome outcome;
    const char* allowed;  // 405: the text after "use "
  };
  const auto found = route_outcome::found;
  const auto missing = route_outcome::not_found;
  const auto wrong = route_outcome::method_not_allowed;
  const std::string s = "/api/swarms/" + hash40;
  const std::vector<expectation> cases = {
      {"GET", "/metrics", found, ""},
      {"HEAD", "/metrics", wrong, "GET"},
      {"POST", "/metrics", wrong, "GET"},
      {"GET", "/metrics/x", missing, ""},
      {"GET", "/api", missing, ""},
      {"GET", "/api/", missing, ""},
      {"GET", "/api/nothing", missing, ""},
      {"GET", "/index.html", missing, ""},
      {"GET", "//api//node//", found, ""},
      {"POST", "/api/node", wrong, "GET"},
      {"POST", "/api/cluster", wrong, "GET"},
      {"DELETE", "/api/swarms", wrong, "GET"},
      {"POST", s, wrong, "GET"},
      {"GET", s + "/policy", wrong, "POST"},
      {"GET", s + "/restart", wrong, "POST"},
      {"GET", s + "/move", wrong, "POST"},
      {"GET", s + "/nothing", missing, ""},
      {"GET", s + "/remediation", missing, ""},
      {"GET", s + "/remediation/start", wrong, "POST"},
      {"POST", s + "/remediation/pause", missing, ""},
      {"PUT", "/api/bans", wrong, "GET or POST"},
      {"POST", "/api/bans", found, ""},
      {"GET", "/api/bans/-XX", wrong, "DELETE"},
      {"DELETE", "/api/bans/-XX", found, ""},
      {"DELETE", "/api/bans/a/b", missing, ""},
      {"DELETE", "/api/access", wrong, "GET"},
      {"GET", "/api/access/reload", wrong, "POST"},
      {"POST", "/api/access/nothing", missing, ""},
      {"POST", "/api/access/" + hash40 + "/allow", found, ""},
      {"POST", "/api/access/" + hash40 + "/grant", missing, ""},
      {"GET", "/api/access/" + hash40 + "/deny", wrong, "POST"},
      {"PUT", "/api/log/level", found, ""},
      {"GET", "/api/log/level", found, ""},
      {"POST", "/api/log/level", wrong, "GET or PUT"},
      {"PUT", "/api/log", missing, ""},
  };
  for (const auto& c : cases) {
    const auto m = admin_routes().match(c.method, c.path);
    EXPECT_EQ(m.outcome, c.outcome) << c.method << ' ' << c.path;
    if (c.outcome == wrong) {
      EXPECT_EQ(allowed_methods_text(m.allowed), c.allowed) << c.path;
    }
  }
}

/// Runs dispatch() on requests the router answers itself (no handler runs,
/// so no actor or state is needed) and returns (status, error text).
std::pair<unsigned, std::string> dispatched(const std::string& method, const std::string& target) {
  unsigned status = 0;
  std::string body;
  auto job = std::make_shared<admin_job>();
  job->method = method;
  job->target = target;
  job->reply_fn = [&](unsigned st, std::string, std::string b) {
    status = st;
    body = std::move(b);
  };
  dispatch(nullptr, nullptr, job);
  const auto j = nlohmann::json::parse(body, nullptr, false);
  EXPECT_TRUE(j.is_object() && j.contains("error")) << body;
  return {status, j.is_object() ? j.value("error", std::string()) : std::string()};
}

TEST(AdminRoutes, DispatchAnswers404And405AndBadParametersBeforeAnyHandler) {
  EXPECT_EQ(dispatched("GET", "/api/nothing"),
            std::make_pair(404u, std::string("no such endpoint")));
  EXPECT_EQ(dispatched("GET", "/api/nothing?x=1"),
            std::make_pair(404u, std::string("no such endpoint")));
  EXPECT_EQ(dispatched("POST", "/api/node"),
            std::make_pair(405u, std::string("method POST not allowed here (use GET)")));
  EXPECT_EQ(dispatched("PUT", "/api/bans"),
            std::make_pair(405u, std::string("method PUT not allowed here (use GET or POST)")));
  // {hash} must be 40 hex digits; checked after the method, before the query.
  const auto bad_hash = std::make_pair(400u, std::string("info_hash must be 40 hex digits"));
  EXPECT_EQ(dispatched("GET", "/api/swarms/xyz"), bad_hash);
  EXPECT_EQ(dispatched("GET", "/api/swarms/xyz?a=1"), bad_hash);
  EXPECT_EQ(dispatched("POST", "/api/swarms/" + hash40 + "0/restart"), bad_hash);
  EXPECT_EQ(dispatched("POST", "/api/access/reload/allow"), bad_hash);
  const auto no_query =
      std::make_pair(400u, std::string("this endpoint takes no query parameters"));
  EXPECT_EQ(dispatched("GET", "/api/node?verbose=1"), no_query);
  EXPECT_EQ(dispatched("GET", "/metrics?x"), no_query);
  EXPECT_EQ(dispatched("GET", "/api/swarms/" + hash40 + "?peers=5"), no_query);
  EXPECT_EQ(dispatched("DELETE", "/api/bans/-XX?x=1"), no_query);
}

}  // namespace
}  // namespace sk::admin_api
