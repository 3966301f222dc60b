// The real swarmctl binary against the real daemon: the daemon runs on free
// ports with an admin port and token (tests/net/harness.hpp), swarmctl runs
// as a subprocess with a controlled environment, its stdout, stderr and
// exit code are checked, and what it shows is compared with the API.
//
// Every wait polls a condition with a deadline (no fixed sleeps).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "admin_client.hpp"
#include "harness.hpp"

extern char** environ;

namespace sk::test {
namespace {

using json = nlohmann::json;

const std::string& token = admin_test_token;

std::string slurp(const std::string& path) {
  std::ifstream f{path};
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

/// What one swarmctl run produced.
struct run_result {
  int code = -1000;  ///< exit status; -signal when killed
  std::string out;
  std::string err;
};

std::ostream& operator<<(std::ostream& os, const run_result& r) {
  return os << "exit " << r.code << "\n--- stdout:\n" << r.out << "--- stderr:\n" << r.err;
}

/// A scratch directory for one test (removed with its files).
class scratch_dir {
 public:
  scratch_dir() {
    char tmpl[] = "/tmp/swarmctl-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    path_ = tmpl;
  }
  ~scratch_dir() {
    for (const auto& f : files_) std::remove(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string file(const std::string& name) {
    files_.insert(path_ + "/" + name);
    return path_ + "/" + name;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::set<std::string> files_;
};

/// Runs build/bin/swarmctl with `args`, stdin from `input`, and an
/// environment without any SWARMCTL_* variable of the test runner, plus
/// `env` ("NAME=value"). HOME points into a scratch directory so the
/// shell's history never touches the real one. Killed after 60 s.
run_result swarmctl(const std::vector<std::string>& args, const std::vector<std::string>& env = {},
                    const std::string& input = {}) {
  scratch_dir dir;
  const std::string in_path = dir.file("stdin"), out_path = dir.file("stdout"),
                    err_path = dir.file("stderr");
  dir.file(".swarmctl_history");
  { std::ofstream(in_path) << input; }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  std::vector<std::string> all{SWARMCTL_BIN};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string v = *e;
    if (v.rfind("SWARMCTL_", 0) == 0 || v.rfind("HOME=", 0) == 0) continue;
    envs.push_back(v);
  }
  envs.push_back("HOME=" + dir.path());
  envs.insert(envs.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, all[0].c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  run_result r;
  const auto deadline = clock::now() + 60s;
  int status = 0;
  for (;;) {
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
    if (clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ADD_FAILURE() << "swarmctl did not finish within 60 s";
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.code = -WTERMSIG(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

json api_json(std::uint16_t port, const std::string& target) {
  auto r = admin_request(port, "GET", target);
  EXPECT_EQ(r.status, 200) << target << ": " << r.body;
  return json::parse(r.body);
}

/// The whitespace-separated cells of the first line of `text` starting with `prefix`.
std::vector<std::string> row_starting_with(const std::string& text, const std::string& prefix) {
  std::istringstream is(text);
  for (std::string line; std::getline(is, line);) {
    if (line.rfind(prefix, 0) == 0) {
      std::istringstream ls(line);
      return {std::istream_iterator<std::string>(ls), {}};
    }
  }
  return {};
}

/// Display columns of UTF-8 text (the ellipsis is one).
std::size_t columns_of(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

class Swarmctl : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_port_ = start_daemon_with_admin(daemon_);
    url_ = "http://127.0.0.1:" + std::to_string(admin_port_);
  }

  /// swarmctl with --url and the right --token in front of `args`.
  run_result ctl(std::vector<std::string> args, const std::string& input = {}) {
    args.insert(args.begin(), {"--url=" + url_, "--token=" + token});
    return swarmctl(args, {}, input);
  }

  /// Announces peer `peer` (a label) to the swarm labelled `swarm`; returns the peer_id hex.
  std::string announce(const std::string& swarm, const std::string& peer, std::uint16_t port,
                       std::uint64_t left) {
    announce_params p{id20(swarm), id20(peer), port, left};
    auto r = http_get(daemon_.port(), announce_target(p));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body.find("failure"), std::string::npos) << r.body;
    return hex_of(id20(peer));
  }

  /// Whether the daemon lacks the endpoint (the tests below fail, never
  /// skip, when it does: a missing endpoint is a regression).
  bool endpoint_missing(const std::string& method, const std::string& target,
                        const std::string& body = {}) {
    auto r = admin_request(admin_port_, method, target, body);
    return r.status == 404 && r.body.find("no such endpoint") != std::string::npos;
  }

  daemon_process daemon_;
  std::uint16_t admin_port_ = 0;
  std::string url_;
};

TEST_F(Swarmctl, SwarmsTableListsAnAnnouncedSwarm) {
  const std::string hash = hex_of(id20("movie"));
  announce("movie", "seed", 7001, 0);
  announce("movie", "leech", 7002, 500);
  auto r = ctl({"swarms"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_TRUE(r.err.empty()) << r;
  auto header = row_starting_with(r.out, "HASH");
  EXPECT_EQ(header, (std::vector<std::string>{"HASH", "PEERS", "SEEDERS", "LEECHERS", "RATE",
                                              "HEALTH", "REASONS", "POLICY"}))
      << r;
  auto row = row_starting_with(r.out, hash);
  ASSERT_EQ(row.size(), 8u) << r;
  EXPECT_EQ(row[1], "2");
  EXPECT_EQ(row[2], "1");
  EXPECT_EQ(row[3], "1");
  // Health and policy as the API reports them.
  const json api = api_json(admin_port_, "/api/swarms/" + hash);
  EXPECT_EQ(row[5], api["health"].get<std::string>());
  EXPECT_EQ(row[7], api["policy"].get<std::string>());
  EXPECT_NE(r.out.find("1 swarm\n"), std::string::npos) << r;
}

TEST_F(Swarmctl, SwarmsFiltersAndPagingReachTheApi) {
  announce("one", "p1", 7001, 10);
  announce("two", "p1", 7001, 10);
  announce("two", "p2", 7002, 10);
  auto r = ctl({"swarms", "--limit=1", "--sort=size"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(row_starting_with(r.out, hex_of(id20("two"))).empty()) << r;
  EXPECT_TRUE(row_starting_with(r.out, hex_of(id20("one"))).empty()) << r;
  EXPECT_NE(r.out.find("showing 1-1 of 2"), std::string::npos) << r;
  r = ctl({"swarms", "--limit=1", "--offset=1"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(row_starting_with(r.out, hex_of(id20("one"))).empty()) << r;
  // New swarms are unevaluated or healthy: none is degraded/critical yet
  // unless the daemon says so; swarmctl must agree with the API.
  r = ctl({"--json", "swarms", "--unhealthy"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(json::parse(r.out)["total"], api_json(admin_port_, "/api/swarms?health=unhealthy")["total"]);
}

TEST_F(Swarmctl, SwarmDetailShowsItsPeers) {
  const std::string hash = hex_of(id20("album"));
  const std::string seed_id = announce("album", "seed", 7001, 0);
  const std::string leech_id = announce("album", "leech", 7002, 500);
  auto r = ctl({"swarm", hash});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("hash:"), std::string::npos) << r;
  EXPECT_NE(r.out.find(hash), std::string::npos) << r;
  EXPECT_NE(r.out.find("2 (1 seeders, 1 leechers)"), std::string::npos) << r;
  auto header = row_starting_with(r.out, "ADDRESS");
  ASSERT_FALSE(header.empty()) << r;
  // One row per peer: address, port, role and the full peer_id.
  std::set<std::string> ports;
  std::istringstream is(r.out);
  for (std::string line; std::getline(is, line);) {
    if (line.rfind("127.0.0.1", 0) != 0) continue;
    std::istringstream ls(line);
    std::vector<std::string> cells{std::istream_iterator<std::string>(ls), {}};
    ASSERT_GE(cells.size(), 4u) << line;
    ports.insert(cells[1]);
    if (cells[1] == "7001") {
      EXPECT_NE(line.find("seeder"), std::string::npos) << line;
      EXPECT_EQ(cells.back(), seed_id) << line;
    } else {
      EXPECT_NE(line.find("leecher"), std::string::npos) << line;
      EXPECT_EQ(cells.back(), leech_id) << line;
    }
  }
  EXPECT_EQ(ports, (std::set<std::string>{"7001", "7002"})) << r;
  // Upper-case hashes are accepted (the client normalises them).
  std::string upper = hash;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(ctl({"swarm", upper}).code, 0);
}

TEST_F(Swarmctl, JsonOutputParsesAndMatchesTheApi) {
  const std::string hash = hex_of(id20("dataset"));
  announce("dataset", "a", 7001, 0);
  announce("dataset", "b", 7002, 100);
  auto r = ctl({"--json", "swarms"});
  ASSERT_EQ(r.code, 0) << r;
  json mine = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(mine.is_discarded()) << r;
  json api = api_json(admin_port_, "/api/swarms");
  EXPECT_EQ(mine["total"], api["total"]);
  ASSERT_EQ(mine["swarms"].size(), api["swarms"].size());
  for (std::size_t i = 0; i < api["swarms"].size(); ++i)
    for (const char* key : {"hash", "actor_id", "peers", "seeders", "leechers", "policy"})
      EXPECT_EQ(mine["swarms"][i][key], api["swarms"][i][key]) << key;
  // Pretty: indented, one field per line.
  EXPECT_NE(r.out.find("\n  \"swarms\": ["), std::string::npos) << r;

  r = ctl({"swarm", hash, "--json"});  // --json after the command works too
  ASSERT_EQ(r.code, 0) << r;
  mine = json::parse(r.out);
  api = api_json(admin_port_, "/api/swarms/" + hash);
  std::set<std::string> mine_ids, api_ids;
  for (const auto& p : mine["peers_listed"]) mine_ids.insert(p["peer_id"].get<std::string>());
  for (const auto& p : api["peers_listed"]) api_ids.insert(p["peer_id"].get<std::string>());
  EXPECT_EQ(mine_ids, api_ids);
  EXPECT_EQ(mine_ids.size(), 2u);
  EXPECT_EQ(mine["hash"], api["hash"]);
  EXPECT_EQ(mine["knobs"], api["knobs"]);

  r = ctl({"--json", "node"});
  ASSERT_EQ(r.code, 0) << r;
  mine = json::parse(r.out);
  EXPECT_EQ(mine["version"], api_json(admin_port_, "/api/node")["version"]);
  EXPECT_EQ(mine["config"]["admin.token"], "<redacted>");
}

TEST_F(Swarmctl, PolicyChangesThePolicy) {
  const std::string hash = hex_of(id20("show"));
  announce("show", "a", 7001, 100);
  const std::string before = api_json(admin_port_, "/api/swarms/" + hash)["policy"];
  const std::string target = before == "role-aware" ? "seeder-rotation" : "role-aware";
  auto r = ctl({"policy", hash, target});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "swarm " + hash + ": policy " + target + ", pinned (was " + before + ")\n");
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + hash)["policy"], target);
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + hash)["policy_pinned"], true);
  r = ctl({"swarm", hash});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(row_starting_with(r.out, "policy:"), (std::vector<std::string>{"policy:", target})) << r;
  // An unknown policy: the API's message, exit 1, policy unchanged.
  r = ctl({"policy", hash, "no-such-policy"});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("unknown policy 'no-such-policy'"), std::string::npos) << r;
  EXPECT_NE(r.err.find("(HTTP 400)"), std::string::npos) << r;
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + hash)["policy"], target);
  // "default", as the help says: unpinned, back to the configured policy.
  r = ctl({"policy", hash, "default"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "swarm " + hash + ": policy adaptive, config default (was " + target +
                       ", pinned)\n");
  const json s = api_json(admin_port_, "/api/swarms/" + hash);
  EXPECT_EQ(s["policy"], "adaptive");
  EXPECT_EQ(s["policy_pinned"], false);
}

TEST_F(Swarmctl, RestartGivesTheSwarmANewActorWithTheSamePeers) {
  const std::string hash = hex_of(id20("restartme"));
  announce("restartme", "a", 7001, 0);
  announce("restartme", "b", 7002, 100);
  const auto old_id = api_json(admin_port_, "/api/swarms/" + hash)["actor_id"];
  auto r = ctl({"restart", hash});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "swarm " + hash + ": restarting (old actor " + old_id.dump() + ")\n");
  // The supervisor restarts it: a new actor id, the same two peers.
  const auto deadline = clock::now() + 20s;
  json now;
  for (;;) {
    auto resp = admin_request(admin_port_, "GET", "/api/swarms/" + hash);
    if (resp.status == 200) {
      now = json::parse(resp.body);
      if (now["actor_id"] != old_id) break;
    }
    ASSERT_LT(clock::now(), deadline) << "swarm not restarted: " << resp.body;
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(now["peers"], 2);
  // swarmctl shows the restart among the supervisor events.
  r = ctl({"events"});
  ASSERT_EQ(r.code, 0) << r;
  bool seen = false;
  std::istringstream is(r.out);
  for (std::string line; std::getline(is, line);)
    if (line.find(hash) != std::string::npos && line.find("restart") != std::string::npos)
      seen = true;
  EXPECT_TRUE(seen) << r;
  // Unknown swarm: the API's 404 message, exit 1.
  r = ctl({"restart", std::string(40, 'f')});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("no swarm for " + std::string(40, 'f')), std::string::npos) << r;
}

TEST_F(Swarmctl, WrongTokenExitsFour) {
  auto r = swarmctl({"--url=" + url_, "--token=wrong-token-but-long-enough", "node"});
  EXPECT_EQ(r.code, 4) << r;
  EXPECT_NE(r.err.find("the admin token was refused"), std::string::npos) << r;
  EXPECT_TRUE(r.out.empty()) << r;
  // The same through the environment and a token file.
  scratch_dir dir;
  const std::string file = dir.file("token");
  { std::ofstream(file) << "also-wrong-token-xxxxxxxx\n"; }
  r = swarmctl({"swarms"}, {"SWARMCTL_URL=" + url_, "SWARMCTL_TOKEN_FILE=" + file});
  EXPECT_EQ(r.code, 4) << r;
  EXPECT_NE(r.err.find("the admin token was refused"), std::string::npos) << r;
}

TEST_F(Swarmctl, EnvironmentAndOptionsPrecedence) {
  scratch_dir dir;
  const std::string file = dir.file("token");
  { std::ofstream(file) << token << "\n"; }
  // Environment alone.
  auto r = swarmctl({"node"}, {"SWARMCTL_URL=" + url_, "SWARMCTL_TOKEN=" + token});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("uptime:"), std::string::npos) << r;
  // A wrong token in the environment loses to --token-file.
  r = swarmctl({"--token-file=" + file, "node"},
               {"SWARMCTL_URL=" + url_, "SWARMCTL_TOKEN=wrong-token-xxxxxxxxxxxx"});
  EXPECT_EQ(r.code, 0) << r;
  // A dead URL in the environment loses to --url.
  r = swarmctl({"--url=" + url_, "node"},
               {"SWARMCTL_URL=http://127.0.0.1:1", "SWARMCTL_TOKEN=" + token});
  EXPECT_EQ(r.code, 0) << r;
  // No URL at all: usage, exit 2.
  r = swarmctl({"--token=" + token, "node"});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("no admin URL"), std::string::npos) << r;
}

TEST(SwarmctlAlone, DaemonDownExitsThree) {
  const std::uint16_t port = free_port();  // nothing listens there
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto r = swarmctl({"--url=" + url, "--token=" + token, "swarms"});
  EXPECT_EQ(r.code, 3) << r;
  EXPECT_EQ(r.err, "swarmctl: cannot reach swarmkeeper admin at " + url +
                       ": connection refused; is the daemon running with admin.port set?\n")
      << r;
  EXPECT_TRUE(r.out.empty());
}

TEST(SwarmctlAlone, BadArgumentsExitTwoBeforeConnecting) {
  // The URL points nowhere: reaching it would exit 3, so 2 proves that
  // nothing was sent.
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port());
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"swarm", "not-a-hash"},
                                             {"swarm", "abc"},  // too short for a prefix
                                             {"swarm", std::string(41, 'a')},
                                             {"restart", std::string(40, 'g')},
                                             {"policy", "abc", "random"},
                                             {"swarm"},
                                             {"swarms", "--limit=x"},
                                             {"nosuchcommand"},
                                             {"node", "--timeout=-1"}}) {
    std::vector<std::string> all{"--url=" + url, "--token=" + token};
    all.insert(all.end(), args.begin(), args.end());
    auto r = swarmctl(all);
    EXPECT_EQ(r.code, 2) << args[0] << "\n" << r;
    EXPECT_FALSE(r.err.empty()) << r;
  }
  auto r = swarmctl({"--url=" + url, "--token=" + token, "swarm", "xyz"});
  EXPECT_NE(r.err.find("'xyz' is not an info_hash: expected 40 hex digits"), std::string::npos) << r;
  // No command and stdin not a terminal: usage, not a hanging shell.
  r = swarmctl({"--url=" + url, "--token=" + token});
  EXPECT_EQ(r.code, 2) << r;
  // help needs no daemon.
  r = swarmctl({"help"});
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("exit codes"), std::string::npos);
}

TEST_F(Swarmctl, ShellOnAPipeRunsTheCommands) {
  const std::string hash = hex_of(id20("piped"));
  announce("piped", "a", 7001, 0);
  const std::string script =
      "# swarmctl script\n"
      "swarms\n"
      "\n"
      "swarm " + hash + "\n"
      "swarm nothex\n"
      "policy " + hash + " stalled-boost\n"
      "swarms --json\n"
      "exit\n"
      "node\n";
  auto r = ctl({"shell"}, script);
  // The bad hash failed (exit 2 is the last failure), the rest ran.
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_FALSE(row_starting_with(r.out, hash).empty()) << r;          // swarms table
  EXPECT_FALSE(row_starting_with(r.out, "ADDRESS").empty()) << r;     // swarm detail
  EXPECT_NE(r.out.find("policy stalled-boost"), std::string::npos) << r;
  EXPECT_NE(r.out.find("\"swarms\": ["), std::string::npos) << r;      // --json on a line
  EXPECT_EQ(r.out.find("uptime:"), std::string::npos) << "ran past exit\n" << r;
  EXPECT_NE(r.err.find("'nothex' is not an info_hash"), std::string::npos) << r;
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + hash)["policy"], "stalled-boost");
  // A clean script exits 0.
  r = ctl({"shell"}, "node\nevents\n");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("uptime:"), std::string::npos) << r;
}

TEST_F(Swarmctl, NodeRemediationsEventsAndMetrics) {
  announce("m", "a", 7001, 0);
  auto r = ctl({"node"});
  ASSERT_EQ(r.code, 0) << r;
  const json node = api_json(admin_port_, "/api/node");
  EXPECT_EQ(row_starting_with(r.out, "version:"),
            (std::vector<std::string>{"version:", node["version"].get<std::string>()}))
      << r;
  EXPECT_EQ(row_starting_with(r.out, "swarms:"), (std::vector<std::string>{"swarms:", "1"})) << r;
  r = ctl({"node", "--config"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(row_starting_with(r.out, "admin.token"),
            (std::vector<std::string>{"admin.token", "<redacted>"}))
      << r;
  r = ctl({"remediations"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("remediation"), std::string::npos) << r;
  r = ctl({"metrics"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("# TYPE swarmkeeper_swarms gauge"), std::string::npos) << r;
}

/// swarmctl on a pseudo-terminal: what a person at a terminal gets.
class pty_session {
 public:
  pty_session(const std::vector<std::string>& args, const std::string& history) {
    std::vector<std::string> all{SWARMCTL_BIN};
    all.insert(all.end(), args.begin(), args.end());
    pid_ = ::forkpty(&fd_, nullptr, nullptr, nullptr);
    if (pid_ < 0) throw std::runtime_error("forkpty");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : all) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::setenv("TERM", "xterm", 1);
      ::unsetenv("COLUMNS");  // the width comes from the terminal
      ::setenv("SWARMCTL_HISTORY", history.c_str(), 1);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
  }
  ~pty_session() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
  }
  void type(const std::string& keys) {
    if (::write(fd_, keys.data(), keys.size()) != static_cast<ssize_t>(keys.size()))
      throw std::runtime_error("write to pty");
  }
  /// Reads until everything seen so far contains `text`; false after 20 s.
  bool wait_for(const std::string& text) {
    const auto deadline = clock::now() + 20s;
    while (seen_.find(text, consumed_) == std::string::npos) {
      if (clock::now() > deadline) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) return false;  // the child ended (EIO on a pty)
      seen_.append(buf, static_cast<std::size_t>(n));
    }
    consumed_ = seen_.find(text, consumed_) + text.size();
    return true;
  }
  /// Waits for `prompt` and then for the editor to own the terminal (raw
  /// mode: no canonical line editing): keys typed before that would meet
  /// the kernel's line discipline (its ^C, its ^D), not libedit.
  bool wait_prompt(const std::string& prompt) {
    if (!wait_for(prompt)) return false;
    const auto deadline = clock::now() + 20s;
    for (;;) {
      termios t{};
      if (::tcgetattr(fd_, &t) == 0 && (t.c_lflag & ICANON) == 0) return true;
      if (clock::now() > deadline) return false;
      std::this_thread::sleep_for(2ms);
    }
  }
  /// Resizes the terminal to `columns` x 40.
  void resize(unsigned short columns) {
    winsize ws{};
    ws.ws_col = columns;
    ws.ws_row = 40;
    if (::ioctl(fd_, TIOCSWINSZ, &ws) != 0) throw std::runtime_error("TIOCSWINSZ");
  }
  /// Waits for the exit status (nullopt after 20 s).
  std::optional<int> wait_exit() {
    const auto deadline = clock::now() + 20s;
    char buf[4096];
    while (clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) > 0 && ::read(fd_, buf, sizeof buf) > 0) continue;
    }
    return std::nullopt;
  }
  const std::string& seen() const { return seen_; }

 private:
  int fd_ = -1;
  pid_t pid_ = -1;
  std::string seen_;
  std::size_t consumed_ = 0;
};

TEST_F(Swarmctl, InteractiveShellCompletesHashesAndKeepsHistory) {
  const std::string hash = hex_of(id20("interactive"));
  announce("interactive", "a", 7001, 0);
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::string prompt =
      "swarmctl@" + api_json(admin_port_, "/api/node")["node"].get<std::string>() + "> ";
  {
    pty_session pty({"--url=" + url_, "--token=" + token}, history);
    ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
    // Command names complete ("swa" is ambiguous: swarm, swarms; "swarms" is not).
    pty.type("swarms\n");
    ASSERT_TRUE(pty.wait_for(hash)) << pty.seen();
    ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
    // The hash the answer showed completes from its first characters.
    pty.type("swarm " + hash.substr(0, 6) + "\t");
    ASSERT_TRUE(pty.wait_for(hash.substr(6))) << pty.seen();
    pty.type("\n");
    ASSERT_TRUE(pty.wait_for("ADDRESS")) << pty.seen();
    ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
    pty.type("rest\t");
    ASSERT_TRUE(pty.wait_for("art ")) << pty.seen();
    pty.type("\x15");  // Ctrl-U: drop the line
    pty.type("\x04");  // Ctrl-D on an empty line: leave
    EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
  }
  const std::string saved = slurp(history);
  EXPECT_NE(saved.find("swarms"), std::string::npos) << saved;
  // libedit's history file escapes blanks as \040.
  EXPECT_NE(saved.find("swarm\\040" + hash), std::string::npos) << saved;
  struct stat st {};
  ASSERT_EQ(::stat(history.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(Swarmctl, InteractiveCtrlCClearsTheLineAndQuitLeaves) {
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::string prompt =
      "swarmctl@" + api_json(admin_port_, "/api/node")["node"].get<std::string>() + "> ";
  pty_session pty({"--url=" + url_, "--token=" + token}, history);
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  // Half a line, then Ctrl-C: still running, a fresh prompt, the half line gone.
  pty.type("swa");
  ASSERT_TRUE(pty.wait_for("swa")) << pty.seen();
  pty.type("\x03");
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  pty.type("\x03");  // twice in a row, on an empty line
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  pty.type("node\n");
  // "swanode" would be an unknown command: the cleared text must not come back.
  ASSERT_TRUE(pty.wait_for("uptime:")) << pty.seen();
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  EXPECT_EQ(pty.seen().find("unknown command"), std::string::npos) << pty.seen();
  // UTF-8 typed at the prompt arrives as it was typed.
  pty.type("ban -UU0001- caf\xC3\xA9 \xE2\x82\xAC\n");
  ASSERT_TRUE(pty.wait_for("banned prefix")) << pty.seen();
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  const json bans = api_json(admin_port_, "/api/bans")["bans"];
  ASSERT_EQ(bans.size(), 1u) << bans;
  EXPECT_EQ(bans[0]["reason"], "caf\xC3\xA9 \xE2\x82\xAC") << bans;
  pty.type("quit\n");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
}

TEST_F(Swarmctl, InteractiveOutputFitsTheTerminalsWidth) {
  const std::string hash = hex_of(id20("narrow"));
  announce("narrow", "a", 7001, 0);
  ASSERT_EQ(ctl({"policy", hash, "contribution-weighted"}).code, 0);
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::string prompt =
      "swarmctl@" + api_json(admin_port_, "/api/node")["node"].get<std::string>() + "> ";
  pty_session pty({"--url=" + url_, "--token=" + token}, history);
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  pty.resize(60);  // no COLUMNS: the terminal's own width, read per command
  pty.type("swarms\n");
  ASSERT_TRUE(pty.wait_for("1 swarm\r\n")) << pty.seen();
  const std::string& seen = pty.seen();
  const auto head = seen.find("HASH");
  ASSERT_NE(head, std::string::npos) << seen;
  const auto end = seen.find("1 swarm\r\n", head);
  std::istringstream table(seen.substr(head, end - head));
  int rows = 0;
  for (std::string line; std::getline(table, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    ++rows;
    EXPECT_LE(columns_of(line), 60u) << line;
  }
  EXPECT_EQ(rows, 2) << seen;
  EXPECT_NE(seen.find(hash.substr(0, 12) + "\xE2\x80\xA6", head), std::string::npos) << seen;
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  pty.type("\x04");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
}

TEST_F(Swarmctl, InteractiveCompletionAsksTheDaemon) {
  const std::string hash = hex_of(id20("never-listed"));
  announce("never-listed", "a", 7001, 0);
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::string prompt =
      "swarmctl@" + api_json(admin_port_, "/api/node")["node"].get<std::string>() + "> ";
  pty_session pty({"--url=" + url_, "--token=" + token}, history);
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  // No `swarms` ran in this session: the hash comes from the daemon.
  pty.type("swarm " + hash.substr(0, 5) + "\t");
  ASSERT_TRUE(pty.wait_for(hash.substr(5))) << pty.seen();
  pty.type("\n");
  ASSERT_TRUE(pty.wait_for("ADDRESS")) << pty.seen();
  ASSERT_TRUE(pty.wait_prompt(prompt)) << pty.seen();
  pty.type("\x04");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
}

TEST_F(Swarmctl, PromptFallsBackToHostPortWhenTheNodeIsUnreachable) {
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::uint16_t dead = free_port();
  pty_session pty({"--url=http://127.0.0.1:" + std::to_string(dead), "--token=" + token}, history);
  ASSERT_TRUE(pty.wait_prompt("swarmctl@127.0.0.1:" + std::to_string(dead) + "> ")) << pty.seen();
  pty.type("\x04");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
}

/// A listener that accepts connections and never answers (a hung daemon).
class silent_server {
 public:
  silent_server() : port_(free_port()) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port_);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 8) != 0)
      throw std::runtime_error("silent_server: bind/listen");
    thread_ = std::thread([this] {
      for (;;) {
        const int c = ::accept(fd_, nullptr, nullptr);
        if (c < 0) return;  // the listener was shut down
        std::lock_guard<std::mutex> lock(mutex_);
        clients_.push_back(c);
      }
    });
  }
  ~silent_server() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
    for (int c : clients_) ::close(c);
  }
  std::uint16_t port() const { return port_; }
  /// Waits until `n` connections were accepted; false after 20 s.
  bool wait_accepted(std::size_t n) {
    const auto deadline = clock::now() + 20s;
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (clients_.size() >= n) return true;
      }
      if (clock::now() > deadline) return false;
      std::this_thread::sleep_for(5ms);
    }
  }

 private:
  std::uint16_t port_;
  int fd_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<int> clients_;
};

TEST(SwarmctlAlone, InteractiveCtrlCStopsTheRequestUnderWay) {
  silent_server hung;
  scratch_dir dir;
  const std::string history = dir.file("history");
  const std::string where = "127.0.0.1:" + std::to_string(hung.port());
  // A minute of timeout: only Ctrl-C ends these requests within the test's deadlines.
  pty_session pty({"--url=http://" + where, "--token=" + token, "--timeout=60"}, history);
  // The prompt's GET /api/node hangs; Ctrl-C gives up on it (host:port instead).
  ASSERT_TRUE(hung.wait_accepted(1)) << pty.seen();
  pty.type("\x03");
  ASSERT_TRUE(pty.wait_prompt("swarmctl@" + where + "> ")) << pty.seen();
  // A command's request hangs; Ctrl-C stops it, and the shell goes on.
  pty.type("swarms\n");
  ASSERT_TRUE(hung.wait_accepted(2)) << pty.seen();
  pty.type("\x03");
  ASSERT_TRUE(pty.wait_for("swarmctl: interrupted")) << pty.seen();
  ASSERT_TRUE(pty.wait_prompt("swarmctl@" + where + "> ")) << pty.seen();
  pty.type("\x04");
  EXPECT_EQ(pty.wait_exit(), 0) << pty.seen();
}

// -- the endpoints of the admin API's second slice ------------------------------------
// Tested against the contract in the API notes; skipped (with the reason)
// only while the daemon answers "no such endpoint" for them.

TEST_F(Swarmctl, BansBanAndUnban) {
  ASSERT_FALSE(endpoint_missing("GET", "/api/bans")) << "GET /api/bans is missing";
  auto r = ctl({"bans"});
  ASSERT_EQ(r.code, 0) << r;
  r = ctl({"ban", "-ZZ0001-", "sends", "fake", "completions"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "banned prefix -ZZ0001-: sends fake completions\n");
  r = ctl({"bans"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(r.out.find("-ZZ0001-  sends fake completions"), std::string::npos) << r;
  r = ctl({"--json", "bans"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(json::parse(r.out), api_json(admin_port_, "/api/bans"));
  // Banning it again: 409 with the API's message.
  r = ctl({"ban", "-ZZ0001-", "again"});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 409)"), std::string::npos) << r;
  r = ctl({"unban", "-ZZ0001-"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "unbanned prefix -ZZ0001-\n");
  r = ctl({"unban", "-ZZ0001-"});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 404)"), std::string::npos) << r;
}

TEST_F(Swarmctl, AccessListOffRefusesAllowAndDeny) {
  ASSERT_FALSE(endpoint_missing("GET", "/api/access")) << "GET /api/access is missing";
  auto r = ctl({"access"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(row_starting_with(r.out, "mode:"), (std::vector<std::string>{"mode:", "off"})) << r;
  r = ctl({"allow", std::string(40, 'a')});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("access list is off"), std::string::npos) << r;
  r = ctl({"deny", std::string(40, 'a')});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 409)"), std::string::npos) << r;
  r = ctl({"reload"});
  EXPECT_EQ(r.code, 1) << r;  // no file: 409
  EXPECT_NE(r.err.find("(HTTP 409)"), std::string::npos) << r;
}

TEST_F(Swarmctl, RemediateStartAndStop) {
  const std::string hash = hex_of(id20("heal"));
  announce("heal", "a", 7001, 100);
  ASSERT_FALSE(endpoint_missing("POST", "/api/swarms/" + std::string(40, '0') + "/remediation/stop"))
      << "POST /api/swarms/<hash>/remediation/* is missing";
  auto r = ctl({"remediate", hash, "start"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "swarm " + hash + ": remediation started\n");
  r = ctl({"remediations"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(row_starting_with(r.out, hash).empty()) << r;
  r = ctl({"remediate", hash, "stop"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(r.out, "swarm " + hash + ": remediation stopped\n");
  r = ctl({"remediate", hash, "stop"});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("(HTTP 409)"), std::string::npos) << r;
}

// -- hash prefixes, https, human units, terminal width ----------------------------------

/// Raw bytes of a hex string (hashes the test chooses digit by digit).
std::string raw_of(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

TEST_F(Swarmctl, HashPrefixesResolveThroughTheDaemon) {
  const std::string a = "abcd01" + std::string(34, '0');
  const std::string b = "abcd02" + std::string(34, '0');
  for (const auto& h : {a, b}) {
    announce_params p{raw_of(h), id20("peer-" + h.substr(0, 6)), 7001, 100};
    ASSERT_EQ(http_get(daemon_.port(), announce_target(p)).status, 200);
  }
  // Unique: the prefix stands for the hash, upper case too.
  auto r = ctl({"swarm", "abcd01"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(row_starting_with(r.out, "hash:"), (std::vector<std::string>{"hash:", a})) << r;
  r = ctl({"--json", "swarm", "ABCD02"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(json::parse(r.out)["hash"], b);
  r = ctl({"policy", "abcd02", "random"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + b)["policy"], "random");
  EXPECT_NE(api_json(admin_port_, "/api/swarms/" + a)["policy"], "random");
  // Ambiguous: exit 2, how many match, nothing restarted.
  const auto actor_a = api_json(admin_port_, "/api/swarms/" + a)["actor_id"];
  const auto actor_b = api_json(admin_port_, "/api/swarms/" + b)["actor_id"];
  r = ctl({"restart", "abcd"});
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_NE(r.err.find("'abcd' is ambiguous: 2 swarms' info_hashes start with it"),
            std::string::npos)
      << r;
  EXPECT_NE(r.err.find(a), std::string::npos) << r;
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + a)["actor_id"], actor_a);
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + b)["actor_id"], actor_b);
  // None: exit 1.
  r = ctl({"swarm", "ffff"});
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_NE(r.err.find("no swarm's info_hash starts with 'ffff'"), std::string::npos) << r;
  // In the shell as on the command line.
  r = ctl({"shell"}, "swarm abcd01\nswarm abcd\n");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_FALSE(row_starting_with(r.out, "ADDRESS").empty()) << r;
  EXPECT_NE(r.err.find("ambiguous"), std::string::npos) << r;
}

/// A child process (the TLS proxy), killed when the test ends.
class child_process {
 public:
  explicit child_process(std::vector<std::string> args) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, argv[0], nullptr, nullptr, argv.data(), environ);
    if (rc != 0) throw std::runtime_error(std::string("posix_spawnp: ") + std::strerror(rc));
  }
  ~child_process() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

 private:
  pid_t pid_ = -1;
};

/// Waits until something accepts TCP connections on 127.0.0.1:port.
bool wait_listening(std::uint16_t port) {
  const auto deadline = clock::now() + 20s;
  while (clock::now() < deadline) {
    try {
      http_connection c{"127.0.0.1", port};
      return true;
    } catch (const std::exception&) {
      std::this_thread::sleep_for(20ms);
    }
  }
  return false;
}

TEST_F(Swarmctl, HttpsThroughATlsProxy) {
  scratch_dir dir;
  const std::string cert = dir.file("cert.pem"), key = dir.file("key.pem"),
                    log = dir.file("requests.log");
  const std::string openssl =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost"
      " -addext subjectAltName=IP:127.0.0.1,DNS:localhost -keyout " +
      key + " -out " + cert + " 2>/dev/null";
  ASSERT_EQ(std::system(openssl.c_str()), 0) << openssl;
  const std::uint16_t port = free_port();
  child_process proxy({"python3", SWARMKEEPER_SOURCE_DIR "/tests/swarmctl/tls_proxy.py",
                       "--port=" + std::to_string(port), "--target=" + std::to_string(admin_port_),
                       "--cert=" + cert, "--key=" + key, "--log=" + log});
  ASSERT_TRUE(wait_listening(port));
  const std::string https = "https://127.0.0.1:" + std::to_string(port);
  announce("tls", "a", 7001, 0);
  const std::string hash = hex_of(id20("tls"));

  // Trusting the throwaway certificate: the same answers as over http.
  auto r = swarmctl({"--url=" + https, "--token=" + token, "--ca-file=" + cert, "swarms"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_FALSE(row_starting_with(r.out, hash).empty()) << r;
  r = swarmctl({"--url=" + https, "--token=" + token, "--ca-file=" + cert, "--json", "node"});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(json::parse(r.out)["version"], api_json(admin_port_, "/api/node")["version"]);
  // POST through the proxy, a prefix resolved over https; the CA from the environment.
  r = swarmctl({"--url=" + https, "--token=" + token, "policy", hash.substr(0, 8), "random"},
               {"SWARMCTL_CA_FILE=" + cert});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_EQ(api_json(admin_port_, "/api/swarms/" + hash)["policy"], "random");

  // Not trusted (the system's CAs do not know it): exit 3 naming both ways out.
  r = swarmctl({"--url=" + https, "--token=" + token, "node"});
  EXPECT_EQ(r.code, 3) << r;
  EXPECT_NE(r.err.find("is not trusted"), std::string::npos) << r;
  EXPECT_NE(r.err.find("--ca-file"), std::string::npos) << r;
  EXPECT_NE(r.err.find("--insecure"), std::string::npos) << r;
  // --insecure accepts it.
  r = swarmctl({"--url=" + https, "--token=" + token, "--insecure", "node"});
  EXPECT_EQ(r.code, 0) << r;
  // A wrong token through the proxy is still the daemon's 401.
  r = swarmctl({"--url=" + https, "--token=wrong-token-but-long-enough", "--insecure", "node"});
  EXPECT_EQ(r.code, 4) << r;

  // What travelled inside TLS: the token in the header, never in a request line.
  const std::string seen = slurp(log);
  EXPECT_NE(seen.find("Authorization: Bearer " + token + "\r\n"), std::string::npos) << seen;
  std::istringstream heads(seen);
  int request_lines = 0;
  for (std::string line; std::getline(heads, line);) {
    if (line.rfind("GET ", 0) == 0 || line.rfind("POST ", 0) == 0) {
      ++request_lines;
      EXPECT_EQ(line.find(token), std::string::npos) << line;
    }
  }
  EXPECT_GE(request_lines, 5) << seen;
  // Nor does swarmctl print it.
  EXPECT_EQ(r.out.find(token), std::string::npos);
  EXPECT_EQ(r.err.find(token), std::string::npos);
  // --insecure with an http URL means nothing: refused.
  r = swarmctl({"--url=" + url_, "--token=" + token, "--insecure", "node"});
  EXPECT_EQ(r.code, 2) << r;
}

TEST_F(Swarmctl, HumanUnitsAndRawValues) {
  const std::string hash = hex_of(id20("units"));
  announce("units", "seed", 7001, 0);
  const std::string leech_id = announce("units", "leech", 7002, 5u * 1024 * 1024);
  auto leech_row = [&](const std::string& out) {
    std::istringstream is(out);
    for (std::string line; std::getline(is, line);)
      if (line.rfind("127.0.0.1", 0) == 0 && line.find(leech_id) != std::string::npos) return line;
    return std::string();
  };
  auto r = ctl({"swarm", hash});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(leech_row(r.out).find(" 5.0 MiB "), std::string::npos) << r;
  EXPECT_NE(r.out.find("/s\n"), std::string::npos) << r;  // the announce rate
  r = ctl({"--raw", "swarm", hash});
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_NE(leech_row(r.out).find(" 5242880 "), std::string::npos) << r;
  // Uptime: "Ns" (or "Nm Ns") for humans, the API's seconds with --raw.
  r = ctl({"node"});
  ASSERT_EQ(r.code, 0) << r;
  const auto up = row_starting_with(r.out, "uptime:");
  ASSERT_GE(up.size(), 2u) << r;
  EXPECT_EQ(up.back().back(), 's') << r;
  r = ctl({"node", "--raw"});
  ASSERT_EQ(r.code, 0) << r;
  const auto raw_up = row_starting_with(r.out, "uptime:");
  ASSERT_EQ(raw_up.size(), 2u) << r;
  EXPECT_NO_THROW((void)std::stod(raw_up[1])) << r;
  EXPECT_NE(raw_up[1].back(), 's') << r;
}

TEST_F(Swarmctl, OutputFitsEightyColumns) {
  // Wide content: many swarms with long policy names, a long ban reason,
  // restart events, a peer table with 40-digit peer_ids.
  for (int i = 0; i < 5; ++i) {
    const std::string label = "wide-" + std::to_string(i);
    announce(label, "s", 7001, 0);
    announce(label, "l", 7002, 123456789);
    ASSERT_EQ(ctl({"policy", hex_of(id20(label)), "contribution-weighted"}).code, 0);
  }
  ASSERT_EQ(ctl({"restart", hex_of(id20("wide-0"))}).code, 0);
  ASSERT_EQ(ctl({"ban", "-WW0001-", std::string(150, 'r')}).code, 0);
  const std::vector<std::vector<std::string>> commands{
      {"swarms"}, {"swarm", hex_of(id20("wide-1"))}, {"node"}, {"node", "--config"},
      {"events"}, {"remediations"}, {"bans"}, {"members"}, {"access"}, {"help"},
      {"help", "swarms"}};
  bool elided = false;
  for (const auto& cmd : commands) {
    std::vector<std::string> args{"--url=" + url_, "--token=" + token};
    args.insert(args.end(), cmd.begin(), cmd.end());
    auto r = swarmctl(args, {"COLUMNS=80"});
    ASSERT_EQ(r.code, 0) << cmd[0] << "\n" << r;
    std::istringstream is(r.out);
    for (std::string line; std::getline(is, line);)
      EXPECT_LE(columns_of(line), 80u) << cmd[0] << ": " << line;
    elided = elided || r.out.find("\xE2\x80\xA6") != std::string::npos;
    // Without COLUMNS (not a terminal): nothing is cut.
    auto wide = swarmctl(args);
    ASSERT_EQ(wide.code, 0) << wide;
    EXPECT_EQ(wide.out.find("\xE2\x80\xA6"), std::string::npos) << cmd[0] << "\n" << wide.out;
  }
  EXPECT_TRUE(elided);
  // The swarms table keeps a hash prefix that the commands accept.
  auto r = swarmctl({"--url=" + url_, "--token=" + token, "swarms"}, {"COLUMNS=80"});
  const std::string first = row_starting_with(r.out, hex_of(id20("wide-0")).substr(0, 12)).at(0);
  const std::string prefix = first.substr(0, first.find("\xE2\x80\xA6"));
  ASSERT_GE(prefix.size(), 12u) << r;
  EXPECT_EQ(ctl({"swarm", prefix}).code, 0);
  // --raw and --json are never cut.
  r = swarmctl({"--url=" + url_, "--token=" + token, "--raw", "bans"}, {"COLUMNS=80"});
  EXPECT_NE(r.out.find(std::string(150, 'r')), std::string::npos) << r;
  r = swarmctl({"--url=" + url_, "--token=" + token, "--json", "bans"}, {"COLUMNS=80"});
  EXPECT_NE(r.out.find(std::string(150, 'r')), std::string::npos) << r;
}

}  // namespace
}  // namespace sk::test
