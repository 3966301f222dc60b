// swarmctl's HTTP client over real loopback sockets: a port nobody listens
// on (refused), a listener that never answers (timeout), and a one-shot
// server thread that records the request and sends a canned answer.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "app/swarmctl/client.hpp"

namespace sk::swarmctl {
namespace {

using namespace std::chrono_literals;

/// A listening socket on 127.0.0.1 with a kernel-chosen port.
struct listener {
  int fd = -1;
  std::uint16_t port = 0;
  listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 8) != 0)
      throw std::runtime_error("bind/listen");
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~listener() {
    if (fd >= 0) ::close(fd);
  }
};

admin_url url_of(std::uint16_t port) {
  std::string err;
  auto u = parse_admin_url("http://127.0.0.1:" + std::to_string(port), err);
  if (!u) throw std::runtime_error(err);
  return *u;
}

TEST(Client, ClosedPortIsRefusedWithTheHint) {
  std::uint16_t port;
  {
    listener l;  // a port that was free a moment ago, closed again
    port = l.port;
  }
  try {
    perform(url_of(port), {"GET", "/api/node", {}}, "t", 5s);
    FAIL() << "no error";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.kind(), transport_failure::refused);
    EXPECT_EQ(std::string(e.what()), "cannot reach swarmkeeper admin at http://127.0.0.1:" +
                                         std::to_string(port) +
                                         ": connection refused; is the daemon running with "
                                         "admin.port set?");
  }
}

TEST(Client, SilentServerTimesOut) {
  listener l;  // the kernel completes the handshake; nobody ever answers
  try {
    perform(url_of(l.port), {"GET", "/api/node", {}}, "t", 200ms);
    FAIL() << "no error";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.kind(), transport_failure::timed_out);
    EXPECT_NE(std::string(e.what()).find("did not answer within 0.2 s"), std::string::npos)
        << e.what();
  }
}

TEST(Client, RaisedCancelFlagInterrupts) {
  listener l;  // never answers: only the flag can end the request early
  std::atomic<bool> cancel{true};
  transfer_options opts;
  opts.cancel = &cancel;
  try {
    perform(url_of(l.port), {"GET", "/api/node", {}}, "t", 60s, opts);
    FAIL() << "no error";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.kind(), transport_failure::interrupted) << e.what();
  }
}

TEST(Client, HttpsToAPlainHttpPortIsATlsError) {
  listener l;
  std::thread server([&] {
    const int c = ::accept(l.fd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    (void)::recv(c, buf, sizeof buf, 0);  // the ClientHello
    const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
    ::close(c);
  });
  std::string err;
  auto u = parse_admin_url("https://127.0.0.1:" + std::to_string(l.port), err);
  ASSERT_TRUE(u) << err;
  try {
    perform(*u, {"GET", "/api/node", {}}, "t", 10s);
    server.join();
    FAIL() << "no error";
  } catch (const transport_error& e) {
    server.join();
    EXPECT_EQ(e.kind(), transport_failure::tls) << e.what();
    EXPECT_NE(std::string(e.what()).find("is it an https port?"), std::string::npos) << e.what();
  }
}

TEST(Client, UnknownHostDoesNotResolve) {
  std::string err;
  auto u = parse_admin_url("http://no-such-host.invalid:1", err);
  ASSERT_TRUE(u);
  try {
    // .invalid never resolves (RFC 6761); a generous deadline covers a slow resolver.
    perform(*u, {"GET", "/api/node", {}}, "t", 30s);
    FAIL() << "no error";
  } catch (const transport_error& e) {
    EXPECT_EQ(e.kind(), transport_failure::unresolved) << e.what();
  }
}

TEST(Client, SendsTokenAndBodyAndReadsTheAnswer) {
  listener l;
  std::string request;
  std::thread server([&] {
    const int c = ::accept(l.fd, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    // Read until the body (Content-Length 17) has arrived.
    for (;;) {
      const ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      request.append(buf, static_cast<std::size_t>(n));
      const auto end = request.find("\r\n\r\n");
      if (end != std::string::npos && request.size() >= end + 4 + 17) break;
    }
    const std::string answer =
        "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: 18\r\n"
        "Connection: close\r\n\r\n{\"error\":\"exists\"}";
    ::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
    ::close(c);
  });
  std::string err;
  auto u = parse_admin_url("http://127.0.0.1:" + std::to_string(l.port) + "/base/", err);
  ASSERT_TRUE(u) << err;
  // A proxy from the environment is not used: the token goes only to the
  // URL's host (were it used, the request would meet a closed port).
  ::setenv("http_proxy", "http://127.0.0.1:1", 1);
  ::setenv("HTTP_PROXY", "http://127.0.0.1:1", 1);
  ::setenv("all_proxy", "http://127.0.0.1:1", 1);
  http_reply r;
  try {
    r = perform(*u, {"POST", "/api/bans", R"({"prefix":"-XX"})" "\n"}, "secret-token", 10s);
  } catch (...) {
    for (const char* v : {"http_proxy", "HTTP_PROXY", "all_proxy"}) ::unsetenv(v);
    server.join();
    throw;
  }
  for (const char* v : {"http_proxy", "HTTP_PROXY", "all_proxy"}) ::unsetenv(v);
  server.join();
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, "{\"error\":\"exists\"}");
  EXPECT_EQ(request.rfind("POST /base/api/bans HTTP/1.1\r\n", 0), 0u) << request;
  EXPECT_NE(request.find("Authorization: Bearer secret-token\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("Content-Type: application/json\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("Content-Length: 17\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("\r\n\r\n{\"prefix\":\"-XX\"}\n"), std::string::npos) << request;
}

}  // namespace
}  // namespace sk::swarmctl
