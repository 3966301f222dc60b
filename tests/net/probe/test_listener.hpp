#pragma once
/// A tiny real TCP peer for the probe tests: a listener on 0.0.0.0 (so
/// 127.0.0.x all reach it) that treats every connection one way, on its own
/// thread: answer the BitTorrent handshake, answer with another info_hash,
/// send garbage, stay silent, or close at once.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "protocol/types.hpp"

namespace sk::test {

inline info_hash hash_of(std::uint8_t b) {
  info_hash h;
  h.bytes.fill(b);
  return h;
}

inline std::string handshake(const info_hash& h) {
  std::string out;
  out.push_back(19);
  out += "BitTorrent protocol";
  out.append(8, '\0');
  out.append(h.view());
  out += "-XX0001-123456789012";
  return out;
}

/// A TCP port nobody listens on a moment ago.
inline std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// The listener (see the file comment).
class listener {
 public:
  enum class mode { answer, wrong_hash, garbage, silent, close_at_once };

  listener(mode m, const info_hash& h) : mode_(m), hash_(h) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 128) != 0) {
      throw std::runtime_error("listener: bind/listen failed");
    }
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    if (m != mode::silent) {  // silent: never even accept (the kernel completes connects)
      thread_ = std::thread([this] { serve(); });
    }
  }
  ~listener() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
    for (int c : held_) ::close(c);
  }
  std::uint16_t port() const { return port_; }
  int accepted() const { return accepted_.load(); }
  /// The first handshake the prober sent (answer / wrong_hash modes).
  std::string received() const {
    std::lock_guard<std::mutex> g(mtx_);
    return received_;
  }
  /// Bytes the prober sent after its handshake (must stay 0: not a peer).
  std::size_t extra_bytes() const { return extra_.load(); }
  /// Connections the prober closed (answer / wrong_hash modes): after that,
  /// `extra_bytes` is final for them.
  int finished() const { return finished_.load(); }

 private:
  void serve() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++accepted_;
      timeval tv{5, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      switch (mode_) {
        case mode::answer:
        case mode::wrong_hash: {
          std::string in = read_n(c, 68);
          {
            std::lock_guard<std::mutex> g(mtx_);
            if (received_.empty()) received_ = in;
          }
          const auto out = handshake(mode_ == mode::answer ? hash_ : hash_of(0xee));
          (void)::send(c, out.data(), out.size(), MSG_NOSIGNAL);
          // Until the prober closes: anything more it sends is counted.
          char buf[256];
          ssize_t n;
          while ((n = ::recv(c, buf, sizeof buf, 0)) > 0) extra_ += static_cast<std::size_t>(n);
          ::close(c);
          ++finished_;
          break;
        }
        case mode::garbage: {
          const std::string out = "HTTP/1.1 400 Bad Request\r\n\r\n";
          (void)::send(c, out.data(), out.size(), MSG_NOSIGNAL);
          ::close(c);
          break;
        }
        case mode::close_at_once:
          ::close(c);
          break;
        case mode::silent:
          held_.push_back(c);
          break;
      }
    }
  }
  static std::string read_n(int c, std::size_t n) {
    std::string out;
    char buf[68];
    while (out.size() < n) {
      const ssize_t r = ::recv(c, buf, n - out.size(), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<std::size_t>(r));
    }
    return out;
  }

  mode mode_;
  info_hash hash_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::vector<int> held_;
  std::atomic<int> accepted_{0};
  std::atomic<std::size_t> extra_{0};
  std::atomic<int> finished_{0};
  mutable std::mutex mtx_;
  std::string received_;
};

}  // namespace sk::test
