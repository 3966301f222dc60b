#pragma once
/// One UDP socket worker (internal to net/udp: included by udp_server.cpp
/// and udp_worker.cpp only). udp_server.hpp draws the whole path.

#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "net/latency_histogram.hpp"
#include "net/udp/udp_shared.hpp"

namespace sk {

/// One socket worker: a thread running an io_context that owns one socket
/// per listening address. Everything but the atomics is touched only on
/// that thread (after start()).
struct udp_server::worker {
  /// Datagrams read per recvmmsg (one round); their announces are routed
  /// and their scrapes sent to the swarms as tickets.
  static constexpr std::size_t round = 32;
  /// Longer datagrams are cut (a full 74-hash scrape is 1496 bytes), which
  /// at worst truncates BEP 41 options.
  static constexpr std::size_t datagram_max = 2048;
  /// recvmmsg calls per readiness event before yielding to other handlers.
  static constexpr int rounds_per_wakeup = 8;

  struct socket_slot {
    explicit socket_slot(asio::io_context& io) : socket(io) {}
    udp_socket socket;
    int fd = -1;
    bool v6 = false;
    std::array<mmsghdr, round> msgs{};
    std::array<iovec, round> iov{};
    std::array<sockaddr_storage, round> from{};
    std::vector<char> buffers = std::vector<char>(round * datagram_max);

    void prepare() noexcept {
      for (std::size_t k = 0; k < round; ++k) {
        iov[k].iov_base = buffers.data() + k * datagram_max;
        iov[k].iov_len = datagram_max;
        msgs[k].msg_hdr = msghdr{};
        msgs[k].msg_hdr.msg_name = &from[k];
        msgs[k].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
        msgs[k].msg_hdr.msg_iov = &iov[k];
        msgs[k].msg_hdr.msg_iovlen = 1;
        msgs[k].msg_len = 0;
      }
    }
  };

  /// One datagram to send in the next sendmmsg.
  struct send_item {
    const sockaddr_storage* to;
    socklen_t to_len;
    std::string_view bytes;
    udp_detail::reply_kind kind;
    /// Receipt of an announce (its latency is recorded when sent); zero
    /// for other replies.
    std::chrono::steady_clock::time_point received{};
  };

  worker(std::shared_ptr<udp_server::shared_state> s, std::size_t idx)
      : shared(std::move(s)), index(idx), guard(asio::make_work_guard(io)), timer(io) {}

  std::shared_ptr<udp_server::shared_state> shared;
  std::size_t index;
  asio::io_context io;
  /// Keeps run() alive while the receive loop is stopped (drain).
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  asio::steady_timer timer;
  std::vector<std::unique_ptr<socket_slot>> sockets;
  std::thread thread;
  bool receiving = true;  // worker thread only
  /// False once stop() has cancelled the timer (worker thread only): a tick
  /// that had already expired, its handler queued, must not arm it again,
  /// or run() never runs out of work and stop()'s join waits forever.
  bool ticking = true;
  udp_request request;    // reused: a warm object parses without allocating
  std::string scratch;
  /// The next sendmmsg: items point into `inline_bytes` (connect and error
  /// replies made here; a deque keeps them in place) or into `draining`
  /// (replies from swarms: their strings, or the buffers of the reply
  /// objects the items keep alive); the addresses into the receive batch
  /// or the reply objects. Cleared by flush().
  std::vector<send_item> sends;
  std::deque<std::string> inline_bytes;
  std::vector<udp_detail::udp_reply> draining;
  std::vector<mmsghdr> mm;
  std::vector<iovec> iov;
  /// This worker's lane of the gateway.
  std::size_t lane = 0;
  std::chrono::milliseconds tick{1000};
  /// When the current recvmmsg round was read (one clock read per round).
  std::chrono::steady_clock::time_point round_received{};
  /// The server's clock (`shared_state::clock`: connection ids) as of the
  /// current round, read once per round.
  std::chrono::steady_clock::time_point round_now{};
  /// Announce latency of this worker (written on its thread only).
  latency_histogram latency;

  std::size_t in_flight() const noexcept { return shared->gw.in_flight(lane); }

  /// Waits for socket `i` to become readable, then runs `on_readable`.
  void arm(std::size_t i);

  /// Reads rounds of datagrams from socket `i` (up to `rounds_per_wakeup`),
  /// handles them and sends what they and the swarms produced.
  void on_readable(std::size_t i);
  /// Asks for the swarms of this round's announces ahead of handling them
  /// (`gateway::prefetch`).
  void prefetch_swarms(const socket_slot& s, int got);

  static socklen_t address_length(const sockaddr_storage& a) noexcept {
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  }

  /// Queues a reply the worker makes itself (connect, error) to `to`, which
  /// must stay valid until flush().
  void queue(const sockaddr_storage& to, std::string_view bytes, udp_detail::reply_kind kind,
             std::chrono::steady_clock::time_point received = {});

  /// Takes the replies swarms handed back; each is sent if it is still
  /// unsettled (a timed-out request already got its error).
  void take_replies();

  /// Sends everything queued with sendmmsg, each datagram on this worker's
  /// socket of its address family.
  void flush();

  /// This worker's socket for a family (-1 if it has none).
  int socket_for(bool v6) const noexcept;

  /// Posted by the first reply after a drain.
  void drain();

  /// One datagram from `from`: dropped, answered here (connect, error), or
  /// handed to the gateway (announce, scrape).
  void handle(const sockaddr_storage& from, std::string_view packet);

  /// Forgets answered requests at the front of the lane (most are answered
  /// within microseconds, so it stays short).
  void prune() { shared->gw.sweep(lane, std::chrono::steady_clock::time_point{}); }

  /// Answers every request past its deadline ("try again later").
  void expire() { shared->gw.sweep(lane, std::chrono::steady_clock::now()); }

  /// Runs `expire` every `tick`, until the timer is cancelled.
  void start_timer();
};

}  // namespace sk
