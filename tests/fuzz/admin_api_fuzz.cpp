// libFuzzer target: the admin API end to end (admin/admin_server.hpp). One
// admin server runs in-process on a loopback port in front of a real swarm
// directory with a supervisor, a ban list and an access list, and every
// input becomes one authenticated HTTP request on a kept-alive connection:
//
//     input:  METHOD ' ' TARGET '\n' BODY
//
// (no space: the line is the target and the method GET; bytes of the target
// outside printable ASCII are %-escaped so the request line stays valid; the
// body goes out with a Content-Length.) This reaches the admin actor's
// routing (paths, query strings, info_hash segments, percent-decoding), the
// JSON bodies of the actions (policy, move, bans), the access-list and ban
// endpoints, and the limits of the session (URL, headers, body).
//
// Invariants checked besides "no sanitizer report":
// - every request gets one well-formed HTTP response with a status from the
//   API's documented set, never 500 (an exception escaped a handler);
// - every JSON response parses, and an error response is {"error": text}.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "tracker/access_list.hpp"
#include "tracker/client_id.hpp"
#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "runtime/supervisor.hpp"
#include "fuzz_check.hpp"
#include "admin/admin_server.hpp"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr const char* token = "fuzz-token";

/// The node under test; built once, torn down at exit in reverse order.
struct node {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<sk::swarm_directory> dir;
  std::unique_ptr<sk::admin_server> admin;
  std::string access_file;
  asio::io_context ioc;
  std::unique_ptr<tcp::socket> socket;
  beast::flat_buffer buffer;

  node() {
    spdlog::set_level(spdlog::level::off);
    sk::register_message_types(cfg);
    cfg.set("scheduler.max-threads", 2);
    sys = std::make_unique<caf::actor_system>(cfg);
    sk::swarm_config swarms;
    dir = std::make_unique<sk::swarm_directory>(
        *sys, swarms, sk::node_shared{std::make_shared<sk::live_ban_list>(), nullptr}, 4);
    dir->start_supervisor(sk::supervisor_config{});
    // One swarm the per-swarm endpoints can find (the hash is in the seeds
    // and the dictionary).
    sk::info_hash h;
    for (std::size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = static_cast<std::uint8_t>(i);
    dir->route(h);

    access_file = std::string(access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                  "/sk-admin-fuzz-" + std::to_string(getpid()) + ".access";
    sk::admin_config a;
    a.port = 0;
    a.token = token;
    a.max_url_length = 512;
    a.max_header_bytes = 2048;
    a.max_body_bytes = 1024;
    a.actor_timeout = std::chrono::milliseconds(2000);
    a.access = std::make_shared<sk::access_control>(sk::access_mode::allow, access_file);
    sk::admin_node_info info{"fuzz", {{"http.port", "6969"}}};
    admin = std::make_unique<sk::admin_server>(*sys, *dir, a, info);
    admin->start();
  }

  /// Stops the server and the swarms. The actor system itself is never
  /// destroyed: this runs from exit(), after the static objects created
  /// while fuzzing (CAF's lazily built ones among them) are already gone,
  /// and ~actor_system would touch them.
  void stop() {
    socket.reset();
    admin->stop();
    dir->stop_all();
    unlink(access_file.c_str());
  }
  tcp::socket& connection() {
    if (!socket || !socket->is_open()) {
      socket = std::make_unique<tcp::socket>(ioc);
      socket->connect({asio::ip::make_address("127.0.0.1"), admin->port()});
      buffer.clear();
    }
    return *socket;
  }
};

node& the_node() {
  static node* n = [] {
    auto* created = new node();
    // libFuzzer ends a clean run with exit(0) (a finding ends it with
    // _Exit, past this handler). Leaving with _exit(0) here keeps the
    // idle CAF workers from racing static destruction; leaks are still
    // checked per input while fuzzing (-detect_leaks).
    std::atexit([] {
      the_node().stop();
      std::fflush(nullptr);
      _exit(0);
    });
    return created;
  }();
  return *n;
}

bool token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

std::string escape_target(std::string_view t) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  if (t.empty() || t.front() != '/') out.push_back('/');
  for (const char c : t) {
    const auto b = static_cast<unsigned char>(c);
    if (b > 0x20 && b < 0x7f) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(hex[b >> 4]);
      out.push_back(hex[b & 0xf]);
    }
  }
  return out;
}

const std::set<unsigned>& documented_statuses() {
  static const std::set<unsigned> s{200, 201, 202, 302, 304, 400, 401, 404, 405,
                                    409, 413, 414, 422, 431, 503, 504};
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view line, body;
  sk::fuzz::split_once(input, '\n', line, body);
  std::string_view method = "GET", target = line;
  if (const auto sp = line.find(' '); sp != std::string_view::npos) {
    method = line.substr(0, sp);
    target = line.substr(sp + 1);
    bool ok = !method.empty() && method.size() <= 16;
    for (const char c : method) ok = ok && token_char(c);
    if (!ok) method = "GET";
  }

  node& n = the_node();
  http::request<http::string_body> req;
  req.method_string({method.data(), method.size()});
  const std::string t = escape_target(target);
  req.target(t);
  req.version(11);
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::authorization, std::string("Bearer ") + token);
  if (!body.empty()) req.set(http::field::content_type, "application/json");
  req.body().assign(body.data(), body.size());
  req.prepare_payload();

  http::response<http::string_body> res;
  beast::error_code ec;
  for (int attempt = 0; attempt < 2; ++attempt) {
    tcp::socket& s = n.connection();
    http::write(s, req, ec);
    if (!ec) http::read(s, n.buffer, res, ec);
    if (!ec) break;
    n.socket.reset();  // the server closed a kept-alive connection: reconnect once
  }
  if (ec) std::fprintf(stderr, "admin request %s %s: %s\n", std::string(method).c_str(),
                       t.c_str(), ec.message().c_str());
  FUZZ_CHECK(!ec);
  const unsigned status = res.result_int();
  if (status == 500 || documented_statuses().count(status) == 0)
    std::fprintf(stderr, "admin %s %s -> %u %s\n", std::string(method).c_str(), t.c_str(), status,
                 res.body().c_str());
  FUZZ_CHECK(status != 500);
  FUZZ_CHECK(documented_statuses().count(status) == 1);
  if (res[http::field::content_type] == "application/json") {
    const auto j = nlohmann::json::parse(res.body(), nullptr, false);
    FUZZ_CHECK(!j.is_discarded());
    if (status >= 400) FUZZ_CHECK(j.is_object() && j.contains("error") && j["error"].is_string());
  }
  if (!res.keep_alive()) n.socket.reset();
  return 0;
}
