// The daemon's UDP tracker through the real binary, on free ports over
// loopback (tests/support/harness.hpp): switched off, its secret key, its
// options and their errors. What both transports share is in
// tests/net/http/integration_test.cpp.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "protocol/udp.hpp"
#include "udp_tracker_client.hpp"

namespace sk::test {
namespace {

/// Arguments the daemon must refuse, and what its error says.
struct bad_config_case {
  std::vector<std::string> args;
  std::string message;
};

TEST(TrackerUdp, DisabledOpensNoUdpSocket) {
  daemon_process d;
  d.start({"--no-udp"});
  // Nothing answers, and the port is still free for anyone on both families.
  udp_client c{"127.0.0.1", d.udp_port(), 300ms};
  std::string packet;
  encode_udp_connect_request(packet, transaction_id{1});
  EXPECT_FALSE(c.exchange(packet).has_value());
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(d.udp_port());
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << "UDP port is taken";
  ::close(fd);
  EXPECT_EQ(d.stderr_text().find("udp: listening"), std::string::npos) << d.stderr_text();
  EXPECT_NE(d.stderr_text().find("UDP tracker disabled"), std::string::npos) << d.stderr_text();
  // The HTTP side is unaffected.
  EXPECT_EQ(http_get(d.port(), "/health").status, 200);
}

TEST(TrackerUdp, DisabledInTheConfigFile) {
  char path[] = "/tmp/sk-net-udp-off-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string ini = "[udp]\nenable=false\n";
  ASSERT_EQ(::write(fd, ini.data(), ini.size()), static_cast<ssize_t>(ini.size()));
  ::close(fd);
  daemon_process d;
  d.start({std::string("--config-file=") + path});
  udp_client c{"127.0.0.1", d.udp_port(), 300ms};
  std::string packet;
  encode_udp_connect_request(packet, transaction_id{1});
  EXPECT_FALSE(c.exchange(packet).has_value());
  EXPECT_NE(d.stderr_text().find("UDP tracker disabled"), std::string::npos) << d.stderr_text();
  ::unlink(path);
}

TEST(TrackerUdp, ConnectionIdKeyIsNotLogged) {
  const std::string key = "00112233445566778899aabbccddeeff";
  daemon_process d;
  d.start({"--udp.connection-id-key=" + key, "--log-level=trace"});
  udp_tracker_client c{d.udp_port()};
  c.connect();
  d.signal(SIGTERM);
  ASSERT_EQ(d.wait_exit(15s), 0) << d.stderr_text();
  EXPECT_EQ(d.stderr_text().find(key), std::string::npos) << d.stderr_text();
  EXPECT_EQ(d.stdout_text().find(key), std::string::npos) << d.stdout_text();
}

TEST(TrackerUdp, InvalidUdpValuesExitTwoNamingTheOption) {
  const std::string secret = "0123456789abcdef0123456789abcdeZ";
  const std::vector<bad_config_case> cases = {
      {{"--udp-port=0"}, "udp.port must be between 1 and 65535 (got 0)"},
      {{"--udp.port=70000"}, "udp.port must be between 1 and 65535 (got 70000)"},
      {{"--udp.bind=300.1.1.1"}, "udp.bind: '300.1.1.1' is not an IPv4 or IPv6 address"},
      {{"--udp.workers=0"}, "udp.workers must be between 1 and 256 (got 0)"},
      {{"--udp.max-in-flight=0"}, "udp.max-in-flight must be between 1 and"},
      {{"--udp.connection-id-key=" + secret},
       "udp.connection-id-key must be exactly 32 hex digits"},
      {{"--udp.connection-id-key=abcd"}, "udp.connection-id-key must be exactly 32 hex digits"},
      {{"--udp.trust-ip-field=1"}, "'--udp.trust-ip-field' is a switch"},
      {{"--udp.port=x"}, "expected an integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0]);
    daemon_process d;
    EXPECT_EQ(d.run_to_exit(c.args), 2);
    EXPECT_NE(d.stderr_text().find(c.message), std::string::npos) << d.stderr_text();
    EXPECT_EQ(d.stderr_text().find(secret), std::string::npos) << "the key is a secret";
  }
}

TEST(TrackerUdp, AKeyOfTheWrongTypeInTheFileIsNotEchoed) {
  char path[] = "/tmp/sk-net-udp-key-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string ini = "[udp]\nconnection-id-key=987654321\n";  // unquoted: an integer
  ASSERT_EQ(::write(fd, ini.data(), ini.size()), static_cast<ssize_t>(ini.size()));
  ::close(fd);
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({std::string("--config-file=") + path}), 2);
  EXPECT_NE(d.stderr_text().find("udp.connection-id-key: expected a quoted string"),
            std::string::npos)
      << d.stderr_text();
  EXPECT_EQ(d.stderr_text().find("987654321"), std::string::npos) << d.stderr_text();
  ::unlink(path);
}

TEST(TrackerUdp, UdpPortInUseFailsToStart) {
  // A plain socket (no SO_REUSEPORT) on the port: the daemon cannot share it.
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const auto port = std::to_string(ntohs(a.sin_port));
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({"--http-port=" + std::to_string(free_port()), "--udp-port=" + port}), 1);
  EXPECT_NE(d.stderr_text().find("udp: cannot listen on 0.0.0.0 port " + port), std::string::npos)
      << d.stderr_text();
  ::close(fd);
}

TEST(TrackerUdp, DumpConfigShowsTheUdpSection) {
  daemon_process d;
  ASSERT_EQ(d.run_to_exit({"--dump-config", "--udp-port=7070", "--no-udp"}), 0) << d.stderr_text();
  const auto dump = d.stdout_text();
  EXPECT_NE(dump.find("[udp]\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nenable=false\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nport=7070\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nworkers=1\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\ntrust-ip-field=false\n"), std::string::npos) << dump;
  daemon_process defaults;
  ASSERT_EQ(defaults.run_to_exit({"--dump-config"}), 0);
  EXPECT_NE(defaults.stdout_text().find("\nenable=true\n"), std::string::npos);
}

}  // namespace
}  // namespace sk::test
