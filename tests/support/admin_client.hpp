#pragma once
// What every test of the admin port needs: the test token, one raw request
// on a fresh connection, JSON checks, starting the daemon with the admin
// API and waiting until it answers, and a fixture that does all of it. Shared by net_admin, swarmctl and
// console tests (header-only: each test binary links harness.cpp already).

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <stdlib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness.hpp"

namespace sk::test {

/// The token every admin test daemon runs with (>= 16 printable characters).
inline const std::string admin_test_token = "test-token-0123456789abcdef";

/// Lower-case hex of raw bytes (info_hash labels in URLs).
inline std::string hex_of(const std::string& raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

/// One request on a fresh connection to the admin port. `auth` is the whole
/// Authorization value (empty: no header); bodies are sent as JSON.
inline http_response admin_request(std::uint16_t port, const std::string& method,
                                   const std::string& target, const std::string& body = {},
                                   const std::string& auth = "Bearer " + admin_test_token) {
  http_connection c{"127.0.0.1", port};
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n";
  if (!auth.empty()) req += "Authorization: " + auth + "\r\n";
  if (!body.empty() || method == "POST" || method == "DELETE") {
    req +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  }
  req += "\r\n" + body;
  c.send(req);
  return c.read_response();
}

/// The body as JSON; a non-JSON body fails the test (and yields a discarded value).
inline nlohmann::json body_json(const http_response& r) {
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.body;
  return j;
}

/// Expects status `status` and a JSON body {"error": "<non-empty text>"}.
inline void expect_json_error(const http_response& r, int status, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << ": " << r.body;
  EXPECT_EQ(r.header("content-type"), "application/json") << what;
  nlohmann::json j = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << what << ": " << r.body;
  ASSERT_TRUE(j.contains("error") && j["error"].is_string()) << what << ": " << r.body;
  EXPECT_FALSE(j["error"].get<std::string>().empty()) << what;
}

/// Starts `daemon` with a free admin port, the test token and `extra`
/// options, and waits (polling, up to 20 s on a loaded machine) until the
/// admin API answers. Returns the admin port; throws if it never answers.
inline std::uint16_t start_daemon_with_admin(daemon_process& daemon,
                                             const std::vector<std::string>& extra = {}) {
  using namespace std::chrono_literals;
  const std::uint16_t port = free_port();
  std::vector<std::string> args{"--admin-port=" + std::to_string(port),
                                "--admin-token=" + admin_test_token, "--log-level=warn"};
  args.insert(args.end(), extra.begin(), extra.end());
  daemon.start(args);
  // The admin server starts after HTTP and UDP.
  const auto deadline = clock::now() + 20s;
  for (;;) {
    try {
      if (admin_request(port, "GET", "/api/node").status == 200) return port;
    } catch (const std::exception&) {
    }
    if (clock::now() > deadline) {
      throw std::runtime_error("admin API did not come up: " + daemon.stderr_text());
    }
    std::this_thread::sleep_for(20ms);
  }
}

/// A test that runs its own daemon with the admin API: requests, JSON,
/// HTTP announces, files in a temporary directory, /metrics samples, and
/// polling with a deadline. The daemon is stopped (SIGTERM) at the end.
class admin_daemon_test : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/sk-admin-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    if (daemon_.running()) {
      daemon_.signal(SIGTERM);
      daemon_.wait_exit(std::chrono::seconds(10));
    }
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  void start(const std::vector<std::string>& extra = {}) {
    admin_port_ = start_daemon_with_admin(daemon_, extra);
  }

  http_response request(const std::string& method, const std::string& target,
                        const std::string& body = {}) {
    return admin_request(admin_port_, method, target, body);
  }
  nlohmann::json get_json(const std::string& target) {
    auto r = request("GET", target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return body_json(r);
  }

  /// The raw HTTP announce reply body.
  std::string http_announce(const std::string& hash, const std::string& peer_id,
                            std::uint16_t port = 6881, std::uint64_t left = 1000,
                            const std::string& event = {}) {
    announce_params p{hash, peer_id, port, left};
    p.event = event;
    auto r = http_get(daemon_.port(), announce_target(p));
    EXPECT_EQ(r.status, 200);
    return r.body;
  }

  std::string write_file(const std::string& name, const std::string& content) {
    const std::string path = dir_ + "/" + name;
    std::ofstream f{path, std::ios::trunc};
    f << content;
    return path;
  }
  std::string read_file(const std::string& path) {
    std::ifstream f{path};
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }

  /// Polls `pred` until true or 10 s pass.
  template <class Pred>
  bool eventually(Pred pred) {
    using namespace std::chrono_literals;
    const auto deadline = clock::now() + 10s;
    while (!pred()) {
      if (clock::now() > deadline) return false;
      std::this_thread::sleep_for(20ms);
    }
    return true;
  }

  /// The value of one sample in /metrics (-1 when absent).
  double metric(const std::string& name_and_labels) {
    auto r = request("GET", "/metrics");
    EXPECT_EQ(r.status, 200);
    const std::string key = name_and_labels + " ";
    std::istringstream in{r.body};
    std::string line;
    while (std::getline(in, line))
      if (line.compare(0, key.size(), key) == 0) return std::stod(line.substr(key.size()));
    return -1;
  }

  daemon_process daemon_;
  std::uint16_t admin_port_ = 0;
  std::string dir_;
};

}  // namespace sk::test
