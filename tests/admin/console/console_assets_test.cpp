// The web console's files: embedded verbatim, served by the real daemon's
// admin port without the token and with the security headers, while the
// API next to them still needs the token.
//
// Every wait polls a condition with a deadline (no fixed sleeps).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "harness.hpp"
#include "admin/admin_assets.hpp"

namespace sk::test {
namespace {

const std::string& token = admin_test_token;

std::string read_source_file(const std::string& relative) {
  std::ifstream f{std::string(SWARMKEEPER_SOURCE_DIR) + "/" + relative, std::ios::binary};
  EXPECT_TRUE(f) << relative;
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

/// Sends `request` on a fresh connection and reads until the server closes
/// it (the request says `Connection: close`); everything received, raw. For
/// HEAD, whose Content-Length announces a body that never comes.
std::string raw_exchange(std::uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    throw std::runtime_error("connect");
  }
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("send");
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string out;
  const auto deadline = clock::now() + 10s;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (clock::now() > deadline || ::poll(&p, 1, 100) < 0) {
      ::close(fd);
      throw std::runtime_error("no close within the deadline; got: " + out);
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

http_response request(std::uint16_t port, const std::string& method, const std::string& target,
                      const std::string& extra_headers = {}) {
  http_connection c{"127.0.0.1", port};
  std::string req = method + " " + target +
                    " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n" + extra_headers;
  if (method == "POST") req += "Content-Length: 0\r\n";
  c.send(req + "\r\n");
  return c.read_response();
}

/// Expects the headers every console file carries.
void expect_console_headers(const http_response& r, const admin_asset& a, const std::string& what) {
  EXPECT_EQ(r.header("content-type"), std::string(a.content_type)) << what;
  EXPECT_EQ(r.header("cache-control"), "no-cache") << what;
  EXPECT_EQ(r.header("x-content-type-options"), "nosniff") << what;
  EXPECT_EQ(r.header("content-security-policy"), std::string(admin_console_csp)) << what;
  EXPECT_EQ(r.header("x-frame-options"), "DENY") << what;
  EXPECT_EQ(r.header("etag"), std::string(a.etag)) << what;
}

TEST(ConsoleAssets, EmbeddedFilesAreTheSourceFilesVerbatim) {
  const char* files[] = {"index.html", "console.js",  "charts.js",
                         "panels.js",  "console.css", "favicon.svg"};
  ASSERT_EQ(admin_asset_count(), std::size(files)) << "a console file is not embedded (or extra)";
  std::set<std::string> etags;
  for (const char* name : files) {
    const admin_asset* a = find_admin_asset(std::string("/console/") + name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ(std::string(a->body), read_source_file(std::string("admin/console/") + name))
        << name;
    EXPECT_TRUE(std::regex_match(std::string(a->etag), std::regex("\"[0-9a-f]{32}\""))) << a->etag;
    etags.insert(std::string(a->etag));
  }
  EXPECT_EQ(etags.size(), std::size(files)) << "different files share an ETag";
  EXPECT_EQ(find_admin_asset("/console/"), find_admin_asset("/console/index.html"));
  EXPECT_EQ(std::string(find_admin_asset("/console/console.js")->content_type),
            "text/javascript; charset=utf-8");
  EXPECT_EQ(std::string(find_admin_asset("/console/index.html")->content_type),
            "text/html; charset=utf-8");
  EXPECT_EQ(find_admin_asset("/console/nothing.js"), nullptr);
  EXPECT_EQ(find_admin_asset("/console/../console/console.js"), nullptr);
  EXPECT_EQ(find_admin_asset("/index.html"), nullptr);
}

// The page must work under its own CSP (no inline script or style) and must
// never turn API text into markup: guard the rules the code review relies on.
TEST(ConsoleAssets, PageFollowsItsOwnSecurityRules) {
  const std::string html(find_admin_asset("/console/")->body);
  const std::regex script_tag("<script\\b([^>]*)>([^<]*)</script>", std::regex::icase);
  int scripts = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag);
       it != std::sregex_iterator(); ++it, ++scripts) {
    EXPECT_NE((*it)[1].str().find("src="), std::string::npos) << "inline script: " << it->str();
    EXPECT_EQ((*it)[2].str(), "") << "inline script body";
  }
  EXPECT_EQ(scripts, 3);
  EXPECT_FALSE(std::regex_search(html, std::regex("<style|\\sstyle=|\\son[a-z]+=",
                                                  std::regex::icase)))
      << "inline style or event handler attribute (blocked by the CSP)";
  EXPECT_FALSE(std::regex_search(html, std::regex("(src|href)=\"(https?:)?//", std::regex::icase)))
      << "the page fetches something from outside";
  for (const char* file : {"/console/console.js", "/console/charts.js", "/console/panels.js"}) {
    const std::string js(find_admin_asset(file)->body);
    for (const char* sink : {"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write",
                             "eval(", "new Function", "setAttribute('style'", ".style."}) {
      EXPECT_EQ(js.find(sink), std::string::npos) << file << " uses " << sink;
    }
  }
}

class ConsoleServing : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_port_ = start_daemon_with_admin(daemon_);
  }

  daemon_process daemon_;
  std::uint16_t admin_port_ = 0;
};

TEST_F(ConsoleServing, FilesAreServedWithoutTokenAndWithSecurityHeaders) {
  for (std::size_t i = 0; i < admin_asset_count(); ++i) {
    const admin_asset& a = admin_asset_at(i);
    const auto r = request(admin_port_, "GET", std::string(a.path));
    EXPECT_EQ(r.status, 200) << a.path;
    expect_console_headers(r, a, std::string(a.path));
    EXPECT_EQ(r.body, std::string(a.body)) << a.path;
    EXPECT_EQ(r.header("content-length"), std::to_string(a.body.size())) << a.path;
  }
  const admin_asset& index = *find_admin_asset("/console/");
  const auto r = request(admin_port_, "GET", "/console/?from=bookmark");
  EXPECT_EQ(r.status, 200);
  expect_console_headers(r, index, "/console/ with a query");
  EXPECT_EQ(r.body, std::string(index.body));
}

TEST_F(ConsoleServing, RootAndBareConsoleRedirect) {
  for (const char* target : {"/", "/console", "/?x=1"}) {
    const auto r = request(admin_port_, "GET", target);
    EXPECT_EQ(r.status, 302) << target;
    EXPECT_EQ(r.header("location"), "/console/") << target;
    EXPECT_EQ(r.body, "") << target;
  }
}

TEST_F(ConsoleServing, ConditionalGetAndHead) {
  const admin_asset& js = *find_admin_asset("/console/console.js");
  const std::string etag(js.etag);
  auto same = request(admin_port_, "GET", "/console/console.js", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(same.status, 304);
  EXPECT_EQ(same.body, "");
  EXPECT_EQ(same.header("etag"), etag);
  auto listed = request(admin_port_, "GET", "/console/console.js",
                        "If-None-Match: \"0000\", W/" + etag + "\r\n");
  EXPECT_EQ(listed.status, 304) << "a weak or listed tag matches too";
  auto other = request(admin_port_, "GET", "/console/console.js",
                       "If-None-Match: \"00000000000000000000000000000000\"\r\n");
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, std::string(js.body));

  const std::string head =
      raw_exchange(admin_port_, "HEAD /console/ HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
  const std::size_t end = head.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << head;
  EXPECT_EQ(head.size(), end + 4) << "HEAD answered with a body";
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  const std::string size = std::to_string(find_admin_asset("/console/")->body.size());
  EXPECT_TRUE(std::regex_search(head, std::regex("\r\nContent-Length: " + size + "\r\n",
                                                 std::regex::icase)))
      << head;
  EXPECT_TRUE(std::regex_search(head, std::regex("\r\nX-Content-Type-Options: nosniff\r\n",
                                                 std::regex::icase)))
      << head;
}

TEST_F(ConsoleServing, OtherMethodsAndUnknownFilesGetJsonErrors) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
    for (const char* target : {"/console/", "/console/console.js", "/"}) {
      const auto r = request(admin_port_, method, target);
      expect_json_error(r, 405, std::string(method) + " " + target);
      EXPECT_EQ(r.header("allow"), "GET, HEAD") << method << " " << target;
    }
  }
  const auto missing = request(admin_port_, "GET", "/console/secret.txt");
  expect_json_error(missing, 404, "unknown console file");
  EXPECT_EQ(missing.header("x-content-type-options"), "nosniff");
  // A console-looking path never reaches the API (and so never its data).
  expect_json_error(request(admin_port_, "GET", "/console/../api/node"), 404, "dot-dot");
}

TEST_F(ConsoleServing, ApiStillNeedsTheToken) {
  expect_json_error(request(admin_port_, "GET", "/api/node"), 401, "api without token");
  expect_json_error(request(admin_port_, "GET", "/api/swarms"), 401, "swarms without token");
  expect_json_error(request(admin_port_, "GET", "/metrics"), 401, "metrics without token");
  expect_json_error(request(admin_port_, "GET", "/index.html"), 401, "not a console path");
  expect_json_error(request(admin_port_, "GET", "/consoles/"), 401, "prefix look-alike");
  expect_json_error(
      request(admin_port_, "GET", "/api/node", "Authorization: Bearer wrong-token-123456789\r\n"),
      401, "api with a wrong token");
  EXPECT_EQ(
      request(admin_port_, "GET", "/api/node", "Authorization: Bearer " + token + "\r\n").status,
      200);
}

// A browser loads the page, then calls the API on the same keep-alive
// connection: the static answer must leave the session reading.
TEST_F(ConsoleServing, KeepAliveConnectionServesPageThenApi) {
  http_connection c{"127.0.0.1", admin_port_};
  const auto page = c.get("/console/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.body, std::string(find_admin_asset("/console/")->body));
  const auto js = c.get("/console/console.js");
  EXPECT_EQ(js.status, 200);
  const auto api = c.get("/api/node", "Authorization: Bearer " + token + "\r\n");
  EXPECT_EQ(api.status, 200) << api.body;
  auto j = nlohmann::json::parse(api.body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << api.body;
  EXPECT_TRUE(j.contains("version"));
  const auto denied = c.get("/api/node");
  EXPECT_EQ(denied.status, 401);
}

}  // namespace
}  // namespace sk::test
