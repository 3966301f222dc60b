#include "harness.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace sk::test {

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

/// Builds a sockaddr for a numeric host.
socklen_t make_addr(const std::string& host, std::uint16_t port, sockaddr_storage& out) {
  std::memset(&out, 0, sizeof out);
  if (host.find(':') != std::string::npos) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&out);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(port);
    if (inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1)
      throw std::runtime_error("bad address " + host);
    return sizeof(sockaddr_in6);
  }
  auto* a = reinterpret_cast<sockaddr_in*>(&out);
  a->sin_family = AF_INET;
  a->sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1)
    throw std::runtime_error("bad address " + host);
  return sizeof(sockaddr_in);
}

/// Binds a listening-capable (or, with `type` SOCK_DGRAM, a UDP) socket to
/// `host:port`; -1 on failure.
int bind_socket(const std::string& host, std::uint16_t port, int type = SOCK_STREAM) {
  sockaddr_storage ss;
  const socklen_t len = make_addr(host, port, ss);
  const int fd = ::socket(ss.ss_family, type | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (ss.ss_family == AF_INET6) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string read_file(const std::string& path) {
  std::ifstream f{path};
  std::ostringstream os;
  os << f.rdbuf();
  return os.str();
}

}  // namespace

namespace {

/// The lowest port of the kernel's ephemeral range (source ports it picks).
std::uint16_t ephemeral_low() {
  std::ifstream in("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 0;
  if (in >> low && low > 1024 && low <= 65535) return static_cast<std::uint16_t>(low);
  return 32768;
}

/// True when `port` binds for `type` on 0.0.0.0 and, where IPv6 loopback
/// exists, on :: too (the daemon binds both).
bool bindable(std::uint16_t port, int type, bool v6) {
  const int fd = bind_socket("0.0.0.0", port, type);
  if (fd < 0) return false;
  bool ok = true;
  if (v6) {
    const int fd6 = bind_socket("::", port, type);
    if (fd6 < 0)
      ok = false;
    else
      ::close(fd6);
  }
  ::close(fd);
  return ok;
}

/// How long a claim on a port keeps other test processes off it: longer
/// than any test holds a daemon's port.
constexpr int claim_seconds = 900;

/// The directory where test processes claim ports (tests/support/ports.py
/// uses the same one): ctest -j runs several at once, and a port one of
/// them picked is free until its daemon binds it, so another could pick it
/// too. $TMPDIR (or /tmp)/swarmkeeper-test-ports-UID.
std::string claim_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  dir += "/swarmkeeper-test-ports-" + std::to_string(::getuid());
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error(errno_text(("mkdir " + dir).c_str()));
  return dir;
}

/// Claims `port` for this process: true when no other test process holds
/// a claim younger than claim_seconds. A stale claim (its process gone
/// long ago) is taken over.
bool claim(const std::string& dir, std::uint16_t port) {
  const std::string path = dir + "/" + std::to_string(port);
  for (int round = 0; round < 2; ++round) {
    const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      [[maybe_unused]] const auto n = ::write(fd, pid.data(), pid.size());
      ::close(fd);
      return true;
    }
    if (errno != EEXIST) return false;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) continue;  // released meanwhile
    if (::time(nullptr) - st.st_mtime < claim_seconds) return false;
    ::unlink(path.c_str());
  }
  return false;
}

/// This process's claims, released when it exits.
struct claims {
  std::string dir;
  std::vector<std::string> paths;
  ~claims() {
    for (const auto& p : paths) ::unlink(p.c_str());
  }
};

/// A port free for both TCP and UDP, below the ephemeral range: a port the
/// kernel hands out by itself could be taken by any outgoing connection
/// between this pick and the daemon's bind. One process never gets a port
/// twice, and a port claimed by another test process (claim()) is passed
/// over.
std::uint16_t free_port_of(const char* what) {
  static std::mutex mutex;
  static std::set<std::uint16_t> handed_out;
  static std::mt19937 rng{std::random_device{}() ^ static_cast<unsigned>(::getpid())};
  const bool v6 = have_ipv6_loopback();
  const std::uint16_t high = ephemeral_low();
  const std::uint16_t low = high > 12000 ? 10000 : 1025;
  std::uniform_int_distribution<unsigned> pick(low, high - 1u);
  static claims held{claim_dir(), {}};
  std::lock_guard<std::mutex> lock(mutex);
  for (int attempt = 0; attempt < 2000; ++attempt) {
    const auto port = static_cast<std::uint16_t>(pick(rng));
    if (handed_out.count(port) != 0) continue;
    if (!claim(held.dir, port)) continue;
    held.paths.push_back(held.dir + "/" + std::to_string(port));
    handed_out.insert(port);
    if (bindable(port, SOCK_STREAM, v6) && bindable(port, SOCK_DGRAM, v6)) return port;
  }
  throw std::runtime_error(std::string("no free port found (") + what + ")");
}

}  // namespace

std::uint16_t free_port() { return free_port_of("bind"); }

std::uint16_t free_udp_port() { return free_port_of("bind udp"); }

bool have_ipv6_loopback() {
  const int fd = bind_socket("::1", 0);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

// -- http_connection ------------------------------------------------------------

http_connection::http_connection(const std::string& host, std::uint16_t port) {
  sockaddr_storage ss;
  const socklen_t len = make_addr(host, port, ss);
  fd_ = ::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(errno_text("socket"));
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const std::string msg = errno_text(("connect " + host + ":" + std::to_string(port)).c_str());
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(msg);
  }
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

http_connection::~http_connection() {
  if (fd_ >= 0) ::close(fd_);
}

void http_connection::send(std::string_view bytes) {
  if (const int error = try_send(bytes); error != 0) {
    errno = error;
    throw std::runtime_error(errno_text("send"));
  }
}

bool http_connection::fill(clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now());
    if (left.count() <= 0) throw std::runtime_error("timed out waiting for the server");
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;  // the deadline check above throws
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ECONNRESET) reset_ = true;
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
    return true;
  }
}

http_response http_connection::read_response(std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  std::size_t header_end;
  while ((header_end = buffer_.find("\r\n\r\n")) == std::string::npos)
    if (!fill(deadline)) throw std::runtime_error("connection closed before a response");
  http_response r;
  std::istringstream head(buffer_.substr(0, header_end));
  std::string line;
  std::getline(head, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // "HTTP/1.1 200 OK"
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string::npos) throw std::runtime_error("bad status line: " + line);
  r.status = std::stoi(line.substr(sp1 + 1, sp2 - sp1 - 1));
  r.reason = sp2 == std::string::npos ? "" : line.substr(sp2 + 1);
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    r.headers[name] = value;
  }
  const std::size_t length = std::stoul(
      r.header("content-length").empty() ? std::string("0") : r.header("content-length"));
  const std::size_t body_start = header_end + 4;
  while (buffer_.size() < body_start + length)
    if (!fill(deadline)) throw std::runtime_error("connection closed inside a body");
  r.body = buffer_.substr(body_start, length);
  buffer_.erase(0, body_start + length);
  return r;
}

int http_connection::try_send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return 0;
}

bool http_connection::wait_closed(std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  try {
    while (fill(deadline)) {
    }
    return buffer_.empty();
  } catch (const std::runtime_error&) {
    return false;  // timed out: still open
  }
}

http_response http_connection::get(const std::string& target, const std::string& extra_headers) {
  send("GET " + target + " HTTP/1.1\r\nHost: test\r\n" + extra_headers + "\r\n");
  return read_response();
}

// -- udp_client -------------------------------------------------------------------

udp_client::udp_client(const std::string& host, std::uint16_t port,
                       std::chrono::milliseconds timeout) {
  sockaddr_storage ss;
  const socklen_t len = make_addr(host, port, ss);
  fd_ = ::socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(errno_text("udp socket"));
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
    const std::string msg = errno_text(("udp connect " + host).c_str());
    ::close(fd_);
    throw std::runtime_error(msg);
  }
}

udp_client::~udp_client() {
  if (fd_ >= 0) ::close(fd_);
}

void udp_client::send(std::string_view bytes) {
  if (::send(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    throw std::runtime_error(errno_text("udp send"));
}

std::optional<std::string> udp_client::recv() {
  char buf[65536];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

std::optional<std::string> udp_client::exchange(std::string_view bytes) {
  send(bytes);
  return recv();
}

http_response http_get(std::uint16_t port, const std::string& target, const std::string& host,
                       const std::string& extra_headers) {
  http_connection c{host, port};
  return c.get(target, extra_headers);
}

// -- requests -----------------------------------------------------------------

std::string url_encode(std::string_view raw) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back('%');
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
  }
  return out;
}

std::string id20(const std::string& label) {
  // Spread the label over 20 bytes (splitmix64 of an FNV-1a hash): distinct
  // labels give distinct ids, and the bytes cover the whole 0..255 range,
  // which exercises binary-safe percent-decoding.
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : label) h = (h ^ c) * 1099511628211ULL;
  std::string out;
  while (out.size() < 20) {
    std::uint64_t z = (h += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    for (int i = 0; i < 8 && out.size() < 20; ++i) out.push_back(static_cast<char>(z >> (8 * i)));
  }
  return out;
}

std::string announce_target(const announce_params& p) {
  std::string t = "/announce?info_hash=" + url_encode(p.info_hash) +
                  "&peer_id=" + url_encode(p.peer_id) + "&port=" + std::to_string(p.port) +
                  "&uploaded=0&downloaded=0&left=" + std::to_string(p.left);
  if (!p.event.empty()) t += "&event=" + p.event;
  if (p.compact) t += "&compact=" + std::to_string(*p.compact);
  if (p.no_peer_id) t += "&no_peer_id=" + std::to_string(*p.no_peer_id);
  if (p.numwant) t += "&numwant=" + std::to_string(*p.numwant);
  if (!p.ip.empty()) t += "&ip=" + p.ip;
  return t;
}

std::string scrape_target(const std::vector<std::string>& hashes) {
  std::string t = "/scrape";
  char sep = '?';
  for (const auto& h : hashes) {
    t += sep;
    t += "info_hash=" + url_encode(h);
    sep = '&';
  }
  return t;
}

// -- daemon_process -------------------------------------------------------------

daemon_process::~daemon_process() {
  if (pid_ > 0) {
    // Every daemon a test leaves running must still stop cleanly.
    ::kill(pid_, SIGTERM);
    const auto status = wait_exit(15s);
    if (!status) {
      ::kill(pid_, SIGKILL);
      int ignored = 0;
      ::waitpid(pid_, &ignored, 0);
      ADD_FAILURE() << "daemon did not stop within 15 s of SIGTERM:\n" << stderr_text();
    } else if (*status != 0) {
      ADD_FAILURE() << "daemon exited with status " << *status << " after SIGTERM:\n"
                    << stderr_text();
    }
  }
  if (!dir_.empty()) {
    // A sanitizer build reports problems on stderr; any report fails the test.
    const auto err = stderr_text();
    for (const char* marker : {"runtime error:", "AddressSanitizer", "LeakSanitizer"})
      if (err.find(marker) != std::string::npos)
        ADD_FAILURE() << "sanitizer report from the daemon:\n" << err;
  }
  if (!dir_.empty()) {
    std::remove((dir_ + "/stdout").c_str());
    std::remove((dir_ + "/stderr").c_str());
    ::rmdir(dir_.c_str());
  }
}

void daemon_process::spawn(const std::vector<std::string>& args) {
  if (dir_.empty()) {
    char tmpl[] = "/tmp/sk-net-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error(errno_text("mkdtemp"));
    dir_ = tmpl;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir_ + "/stdout").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir_ + "/stderr").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> all{SWARMKEEPER_BIN};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The daemon must not inherit a blocked/ignored signal state from the
  // test runner: reset the mask and defaults for the signals it uses.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, all[0].c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw std::runtime_error(std::string("posix_spawn: ") + std::strerror(rc));
  pid_ = pid;
}

int daemon_process::run_to_exit(const std::vector<std::string>& args,
                                std::chrono::milliseconds timeout) {
  spawn(args);
  auto status = wait_exit(timeout);
  if (!status) throw std::runtime_error("daemon did not exit in time");
  return *status;
}

void daemon_process::start(const std::vector<std::string>& args,
                           std::chrono::milliseconds timeout) {
  port_ = free_port();
  udp_port_ = free_udp_port();
  std::vector<std::string> all{"--http-port=" + std::to_string(port_),
                               "--udp-port=" + std::to_string(udp_port_)};
  all.insert(all.end(), args.begin(), args.end());
  spawn(all);
  const auto deadline = clock::now() + timeout;
  while (clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("daemon exited during start-up: " + stderr_text());
    }
    try {
      if (http_get(port_, "/health").status == 200) return;
    } catch (const std::exception&) {
      // not listening yet
    }
    std::this_thread::sleep_for(10ms);  // poll interval, not a fixed wait
  }
  throw std::runtime_error("daemon did not become healthy in time: " + stderr_text());
}

void daemon_process::signal(int sig) {
  if (pid_ > 0) ::kill(pid_, sig);
}

std::optional<int> daemon_process::wait_exit(std::chrono::milliseconds timeout) {
  const auto deadline = clock::now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return -WTERMSIG(status);
      return -1000;
    }
    if (clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
  return std::nullopt;
}

std::string daemon_process::stdout_text() const { return read_file(dir_ + "/stdout"); }
std::string daemon_process::stderr_text() const { return read_file(dir_ + "/stderr"); }

}  // namespace sk::test
