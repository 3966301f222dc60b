#pragma once
/// Test harness for the integration tests: runs the real daemon binary as a
/// child process on a free port and talks to it over loopback sockets.
///
/// Nothing here sleeps for a fixed time: every wait polls a condition until
/// a deadline.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sk::test {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

/// A port free for TCP and UDP on 0.0.0.0 and :: at this moment, below the
/// kernel's ephemeral range (so no outgoing connection takes it before the
/// daemon binds it), never handed out twice in one process, and claimed
/// against the other test processes of a parallel ctest run (a file per
/// port in $TMPDIR/swarmkeeper-test-ports-UID, shared with ports.py).
std::uint16_t free_port();

/// The same kind of port, for a daemon's UDP tracker.
std::uint16_t free_udp_port();

/// True when this host has a usable ::1.
bool have_ipv6_loopback();

/// One parsed HTTP response.
struct http_response {
  int status = 0;
  std::string reason;
  /// Header names lower-cased; repeated names keep the last value.
  std::map<std::string, std::string> headers;
  std::string body;

  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string{} : it->second;
  }
};

/// A blocking loopback client over a raw POSIX socket, with deadlines.
class http_connection {
 public:
  /// Connects to `host` ("127.0.0.1" or "::1") or throws.
  http_connection(const std::string& host, std::uint16_t port);
  ~http_connection();
  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  /// Writes all of `bytes`; throws when the kernel refuses them.
  void send(std::string_view bytes);
  /// Reads one response (status line, headers, Content-Length body); throws
  /// on timeout or when the connection closes first.
  http_response read_response(std::chrono::milliseconds timeout = 5s);
  /// True when the server closes the connection (EOF or reset) within
  /// `timeout` without sending anything more.
  bool wait_closed(std::chrono::milliseconds timeout = 5s);
  /// `GET target` with HTTP/1.1 keep-alive, then read the response.
  http_response get(const std::string& target, const std::string& extra_headers = {});
  /// Writes all of `bytes`: 0 when the kernel took them, else its errno
  /// (EPIPE or ECONNRESET once the server has reset the connection).
  int try_send(std::string_view bytes);
  /// True when the connection ended (in `fill`, `wait_closed`) with a
  /// reset rather than an orderly EOF.
  bool was_reset() const noexcept { return reset_; }

 private:
  /// Reads more bytes into buffer_; false on EOF/error; throws on timeout.
  bool fill(clock::time_point deadline);
  int fd_ = -1;
  std::string buffer_;
  bool reset_ = false;
};

/// A blocking UDP socket connected to `host:port` (so it hears only that
/// peer), with a receive timeout.
class udp_client {
 public:
  udp_client(const std::string& host, std::uint16_t port,
             std::chrono::milliseconds timeout = 3000ms);
  ~udp_client();
  udp_client(const udp_client&) = delete;
  udp_client& operator=(const udp_client&) = delete;

  /// Sends one datagram; throws on failure.
  void send(std::string_view bytes);
  /// The next datagram, or nullopt after the timeout (or an ICMP error).
  std::optional<std::string> recv();
  /// `send`, then `recv`.
  std::optional<std::string> exchange(std::string_view bytes);

 private:
  int fd_ = -1;
};

/// `GET target` on a fresh connection.
http_response http_get(std::uint16_t port, const std::string& target,
                       const std::string& host = "127.0.0.1",
                       const std::string& extra_headers = {});

/// Percent-encodes every byte (binary-safe, like BitTorrent clients do).
std::string url_encode(std::string_view raw);

/// A 20-byte id built from a label, e.g. id20("torrent-1").
std::string id20(const std::string& label);

/// Announce parameters (raw 20-byte ids; encoded by `announce_target`).
struct announce_params {
  announce_params(std::string hash, std::string peer, std::uint16_t listen_port = 6881,
                  std::uint64_t bytes_left = 1000)
      : info_hash(std::move(hash)), peer_id(std::move(peer)), port(listen_port), left(bytes_left) {}

  std::string info_hash;
  std::string peer_id;
  std::uint16_t port = 6881;
  std::uint64_t left = 1000;
  std::string event;  ///< empty: none
  std::optional<int> compact;
  std::optional<int> no_peer_id;
  std::optional<int> numwant;
  std::string ip;  ///< the `ip` parameter; empty: absent
};

std::string announce_target(const announce_params& p);
std::string scrape_target(const std::vector<std::string>& hashes);

/// The daemon as a child process. Output goes to files in a temp directory.
class daemon_process {
 public:
  daemon_process() = default;
  ~daemon_process();
  daemon_process(const daemon_process&) = delete;
  daemon_process& operator=(const daemon_process&) = delete;

  /// Runs the binary with `args` and waits until it exits; returns the
  /// exit status (-signal if killed). For config errors, --dump-config.
  int run_to_exit(const std::vector<std::string>& args, std::chrono::milliseconds timeout = 20s);

  /// Starts the daemon on free ports (`--http-port` and `--udp-port` are
  /// added, so daemons of parallel tests never meet on 6969) plus `args`,
  /// and waits until /health answers 200. Throws with the daemon's stderr
  /// when it exits or the deadline passes first.
  void start(const std::vector<std::string>& args = {}, std::chrono::milliseconds timeout = 20s);

  /// Sends `sig`.
  void signal(int sig);
  /// Waits for the process to end; returns its exit status (-signal if
  /// killed), or nullopt on timeout.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

  std::uint16_t port() const noexcept { return port_; }
  /// The UDP port given with `--udp-port` by start().
  std::uint16_t udp_port() const noexcept { return udp_port_; }
  pid_t pid() const noexcept { return pid_; }
  bool running() const noexcept { return pid_ > 0; }
  std::string stdout_text() const;
  std::string stderr_text() const;

 private:
  void spawn(const std::vector<std::string>& args);
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::uint16_t udp_port_ = 0;
  std::string dir_;
};

}  // namespace sk::test
