#include "net/udp/udp_server.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "runtime/messages.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/udp.hpp"

namespace sk {

namespace asio = boost::asio;
using udp_socket = asio::ip::udp::socket;
using udp_endpoint = asio::ip::udp::endpoint;

namespace udp_detail {
struct reply_outbox;
}  // namespace udp_detail

/// What every worker and request in flight share. Immutable
/// after construction except for the atomics.
struct udp_server::shared_state {
  shared_state(const udp_config& c, clock_function clk, gateway& g)
      : cfg(c),
        clock(clk ? std::move(clk)
                  : clock_function([] { return std::chrono::steady_clock::now(); })),
        ids(connection_id_issuer::from_config(c.connection_id_key)),
        gw(g),
        limits(g.config().parse_limits(c.max_url_data)),
        first_lane(g.add_lanes(c.workers)) {
    for (std::size_t k = 0; k < c.workers; ++k) {
      outboxes.push_back(std::make_unique<udp_detail::reply_outbox>());
    }
  }

  const udp_config cfg;
  const clock_function clock;
  const connection_id_issuer ids;
  /// The one door to the swarms; worker k is its lane `first_lane + k`.
  gateway& gw;
  /// The packet parser's limits: the gateway's, with this transport's
  /// URL-data length.
  const query_limits limits;
  const std::size_t first_lane;

  /// Sections that may send. stop() closes it once its drain deadline
  /// passed and waits for those inside, so no send hits a closed socket;
  /// the gateway then settles what is still pending.
  closing_gate sending;
  /// Replies on their way back to each worker (see `reply_outbox`).
  std::vector<std::unique_ptr<udp_detail::reply_outbox>> outboxes;

  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> replied{0};
  std::atomic<std::uint64_t> connects{0};
  std::atomic<std::uint64_t> announces{0};
  std::atomic<std::uint64_t> scrapes{0};
  std::atomic<std::uint64_t> error_replies{0};
  std::atomic<std::uint64_t> bad_requests{0};
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> denied{0};
  std::atomic<std::uint64_t> swarm_failures{0};
  std::atomic<std::uint64_t> dropped_malformed{0};
  std::atomic<std::uint64_t> dropped_source_port_zero{0};
  std::atomic<std::uint64_t> dropped_overload{0};
  std::atomic<std::uint64_t> dropped_send_failed{0};
  std::atomic<std::uint64_t> dropped_shutdown{0};

};

namespace {

using shared_state = udp_server::shared_state;

void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
  c.fetch_add(n, std::memory_order_relaxed);
}

/// The datagram's source as the protocol layer sees it (IPv4-mapped IPv6
/// normalised to IPv4 by `make_v6`). False for an address family we do not
/// serve.
bool to_endpoint(const sockaddr_storage& ss, endpoint& out) {
  if (ss.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(ss);
    out.ip = ip_address::make_v4(ntohl(a.sin_addr.s_addr));
    out.port = ntohs(a.sin_port);
    return true;
  }
  if (ss.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(ss);
    std::uint8_t raw[16];
    std::memcpy(raw, a.sin6_addr.s6_addr, sizeof raw);
    out.ip = ip_address::make_v6(raw);
    out.port = ntohs(a.sin6_port);
    return true;
  }
  return false;
}

/// Which counter a delivered reply bumps.
/// `error`: a bad request; `refused`: an announce refused by its swarm;
/// `denied`: an announce refused by the access list; `failure`: the swarm
/// could not answer.
enum class reply_kind : std::uint8_t { announce, scrape, error, failure, connect, refused, denied };

void count_reply(shared_state& sh, reply_kind kind) noexcept {
  switch (kind) {
    case reply_kind::announce:
      bump(sh.announces);
      break;
    case reply_kind::scrape:
      bump(sh.scrapes);
      break;
    case reply_kind::error:
      bump(sh.error_replies);
      bump(sh.bad_requests);
      break;
    case reply_kind::refused:
      bump(sh.error_replies);
      bump(sh.refused);
      break;
    case reply_kind::denied:
      bump(sh.error_replies);
      bump(sh.denied);
      break;
    case reply_kind::failure:
      bump(sh.error_replies);
      bump(sh.swarm_failures);
      break;
    case reply_kind::connect:
      bump(sh.connects);
      break;
  }
}

}  // namespace

namespace udp_detail {

/// Where one announce's or scrape's answer goes: the requester's address
/// and transaction, and the worker that sends it.
struct udp_return {
  std::shared_ptr<shared_state> sh;
  std::size_t worker = 0;  ///< index of the worker that read the request
  sockaddr_storage to{};
  socklen_t to_len = 0;
  transaction_id transaction;
  bool v6_peers = false;  ///< requester is IPv6: 18-byte peers
  /// When the datagram was read, for announces (latency); zero for scrapes.
  std::chrono::steady_clock::time_point received{};
};

using return_ptr = std::shared_ptr<const udp_return>;

/// A reply encoded on a swarm thread, travelling to its worker.
struct udp_reply {
  return_ptr to;
  std::string bytes;
  reply_kind kind = reply_kind::announce;
};

/// Replies waiting for one worker. Swarm threads push; the first push after
/// a drain posts one drain to the worker's io_context, so a burst of replies
/// costs one wake-up and leaves in one sendmmsg. (Sending from the swarm
/// threads directly was measured slower: each sendto woke the client
/// separately; see bench/udp/README.md.)
struct reply_outbox {
  std::mutex mutex;
  std::vector<udp_reply> items;
  bool drain_posted = false;
  /// Set by start(): where drains are posted and what runs them.
  asio::io_context* io = nullptr;
  udp_server::worker* w = nullptr;
};

void post_drain(reply_outbox& box);

/// Hands an answer (already claimed through the gateway) to its worker,
/// which sends it unless the server closed meanwhile. Any thread.
void send_back(return_ptr to, std::string bytes, reply_kind kind) {
  shared_state& sh = *to->sh;
  if (!sh.sending.enter()) {
    bump(sh.dropped_shutdown);
    return;
  }
  reply_outbox& box = *sh.outboxes[to->worker];
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    box.items.push_back(udp_reply{std::move(to), std::move(bytes), kind});
    if (!box.drain_posted) {
      box.drain_posted = true;
      post = true;
    }
  }
  if (post) {
    post_drain(box);
  }
  sh.sending.leave();
}

/// The gateway's refusal as BEP 15 sees it: an error packet whose text is
/// never longer than the request that caused it; nothing at all for an
/// overload (answering would do the flood's work) or a shutdown.
void send_refusal(const return_ptr& to, gateway_refusal why) {
  shared_state& sh = *to->sh;
  switch (why) {
    case gateway_refusal::overloaded:
      bump(sh.dropped_overload);
      return;
    case gateway_refusal::shutting_down:
      bump(sh.dropped_shutdown);
      return;
    default:
      break;
  }
  std::string buf;
  encode_udp_error_response(buf, to->transaction, refusal_text(why));
  send_back(to, std::move(buf),
            why == gateway_refusal::denied ? reply_kind::denied : reply_kind::failure);
}

/// Longest text an announce's error packet may carry: 98-byte request minus
/// the 8-byte header, so a refusal is never larger than what caused it.
constexpr std::size_t max_announce_error_text = 98 - 8;

/// One announce's reply: encoded on the swarm's thread, sent by the worker.
class udp_announce_reply final : public announce_reply {
 public:
  explicit udp_announce_reply(return_ptr to) : to_(std::move(to)) {}

  void on_result(const announce_result& r) override {
    std::string buf;
    if (!r.failure_reason.empty()) {
      // The swarm refuses this peer (banned client, abuse): an error packet,
      // never larger than the 98-byte announce.
      const std::string_view text(r.failure_reason);
      encode_udp_error_response(buf, to_->transaction, text.substr(0, max_announce_error_text));
      send_back(to_, std::move(buf), reply_kind::refused);
      return;
    }
    // Only the requester's family: a v4 client cannot use v6 peers and a BEP
    // 15 reply has one peer size. (`own_family_only` asked the swarm for
    // that family only.)
    const std::string& peers = to_->v6_peers ? r.peers6 : r.peers4;
    const std::size_t size = udp_peer_size(to_->v6_peers);
    const std::size_t cap = udp_max_peers_per_reply(to_->v6_peers) * size;
    const std::size_t len = std::min(cap, peers.size() - peers.size() % size);
    buf.reserve(len + 20);
    encode_udp_announce_response(buf, to_->transaction, r.interval, r.stats,
                                 std::string_view(peers).substr(0, len));
    send_back(to_, std::move(buf), reply_kind::announce);
  }

  void on_refusal(gateway_refusal why, std::int64_t) override { send_refusal(to_, why); }

 private:
  return_ptr to_;
};

/// One scrape's reply: every requested hash in request order (duplicates
/// kept); refused and unknown torrents count zeros (a BEP 15 scrape reply
/// is positional, nothing can be left out).
class udp_scrape_reply final : public scrape_reply {
 public:
  explicit udp_scrape_reply(return_ptr to) : to_(std::move(to)) {}

  void on_result(std::vector<scrape_answer>&& answers) override {
    std::vector<swarm_stats> stats(answers.size());
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (answers[i].served) stats[i] = answers[i].stats;
    }
    std::string buf;
    encode_udp_scrape_response(buf, to_->transaction, stats.data(), stats.size());
    send_back(to_, std::move(buf), reply_kind::scrape);
  }

  void on_refusal(gateway_refusal why, std::int64_t) override { send_refusal(to_, why); }

 private:
  return_ptr to_;
};

}  // namespace udp_detail
}  // namespace sk


namespace sk {

using udp_detail::return_ptr;
using udp_detail::udp_return;

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
    reply_kind kind;
    /// Receipt of an announce (its latency is recorded when sent); zero
    /// for other replies.
    std::chrono::steady_clock::time_point received{};
  };

  worker(std::shared_ptr<shared_state> s, std::size_t idx)
      : shared(std::move(s)), index(idx), guard(asio::make_work_guard(io)), timer(io) {}

  std::shared_ptr<shared_state> shared;
  std::size_t index;
  asio::io_context io;
  /// Keeps run() alive while the receive loop is stopped (drain).
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  asio::steady_timer timer;
  std::vector<std::unique_ptr<socket_slot>> sockets;
  std::thread thread;
  bool receiving = true;  // worker thread only
  udp_request request;    // reused: a warm object parses without allocating
  std::string scratch;
  /// The next sendmmsg: items point into `inline_bytes` (connect and error
  /// replies made here; a deque keeps them in place) or into `draining`
  /// (replies from swarms); the addresses into the receive batch or the
  /// pending records. Cleared by flush().
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
  /// Announce latency of this worker (written on its thread only).
  latency_histogram latency;

  std::size_t in_flight() const noexcept { return shared->gw.in_flight(lane); }

  void arm(std::size_t i) {
    socket_slot& s = *sockets[i];
    s.socket.async_wait(udp_socket::wait_read, [this, i](const boost::system::error_code& ec) {
      if (!receiving || ec == asio::error::operation_aborted) {
        return;
      }
      on_readable(i);
    });
  }

  void on_readable(std::size_t i) {
    socket_slot& s = *sockets[i];
    for (int r = 0; r < rounds_per_wakeup && receiving; ++r) {
      s.prepare();
      const int got = ::recvmmsg(s.fd, s.msgs.data(), round, MSG_DONTWAIT, nullptr);
      if (got <= 0) {
        if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          // ICMP errors of earlier sends surface here; they concern one
          // client, not the socket.
          spdlog::debug("udp: receive error: {}", std::strerror(errno));
          continue;
        }
        arm(i);  // drained: wait for the next datagram
        return;
      }
      bump(shared->received, static_cast<std::uint64_t>(got));
      round_received = std::chrono::steady_clock::now();
      for (int k = 0; k < got; ++k) {
        handle(s.from[static_cast<std::size_t>(k)],
               std::string_view(s.buffers.data() + static_cast<std::size_t>(k) * datagram_max,
                                std::min<std::size_t>(s.msgs[static_cast<std::size_t>(k)].msg_len,
                                                      datagram_max)));
      }
      shared->gw.flush(lane);  // this round's tickets, in one message
      take_replies();  // whatever swarms answered meanwhile leaves with these
      flush();
      prune();
      if (static_cast<std::size_t>(got) < round) {
        arm(i);  // the queue was drained (epoll is edge-triggered in Asio)
        return;
      }
    }
    if (!receiving) {
      return;
    }
    // Still more queued: continue after whatever else is ready (other
    // socket, timer), without waiting for a new edge.
    asio::post(io, [this, i] {
      if (receiving) {
        on_readable(i);
      }
    });
  }

  static socklen_t address_length(const sockaddr_storage& a) noexcept {
    return a.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  }

  /// Queues a reply the worker makes itself (connect, error) to `to`, which
  /// must stay valid until flush().
  void queue(const sockaddr_storage& to, std::string_view bytes, reply_kind kind,
             std::chrono::steady_clock::time_point received = {}) {
    inline_bytes.emplace_back(bytes);
    sends.push_back(send_item{&to, address_length(to), inline_bytes.back(), kind, received});
  }

  /// Takes the replies swarms handed back; each is sent if it is still
  /// unsettled (a timed-out request already got its error).
  void take_replies() {
    udp_detail::reply_outbox& box = *shared->outboxes[index];
    {
      std::lock_guard<std::mutex> lock(box.mutex);
      draining.swap(box.items);
      box.drain_posted = false;
    }
    for (udp_detail::udp_reply& r : draining) {
      sends.push_back(send_item{&r.to->to, r.to->to_len, r.bytes, r.kind, r.to->received});
    }
  }

  /// Sends everything queued with sendmmsg, each datagram on this worker's
  /// socket of its address family.
  void flush() {
    if (sends.empty()) {
      return;
    }
    const std::size_t n = sends.size();
    mm.resize(n);
    iov.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      iov[k].iov_base = const_cast<char*>(sends[k].bytes.data());
      iov[k].iov_len = sends[k].bytes.size();
      mm[k].msg_hdr = msghdr{};
      mm[k].msg_hdr.msg_name = const_cast<sockaddr_storage*>(sends[k].to);
      mm[k].msg_hdr.msg_namelen = sends[k].to_len;
      mm[k].msg_hdr.msg_iov = &iov[k];
      mm[k].msg_hdr.msg_iovlen = 1;
      mm[k].msg_len = 0;
    }
    // Runs of the same family go out on that family's socket.
    std::size_t done = 0;
    std::chrono::steady_clock::time_point now{};
    while (done < n) {
      const bool v6 = sends[done].to->ss_family == AF_INET6;
      std::size_t end = done + 1;
      while (end < n && (sends[end].to->ss_family == AF_INET6) == v6) {
        ++end;
      }
      const int fd = socket_for(v6);
      while (done < end) {
        const int sent = fd < 0 ? -1
                                : ::sendmmsg(fd, mm.data() + done,
                                             static_cast<unsigned>(end - done), MSG_DONTWAIT);
        if (sent <= 0) {
          // The first remaining datagram failed (full buffer, unreachable):
          // drop it, count it, go on with the rest.
          bump(shared->dropped_send_failed);
          spdlog::debug("udp: send failed: {}", std::strerror(errno));
          ++done;
          continue;
        }
        for (std::size_t k = done; k < done + static_cast<std::size_t>(sent); ++k) {
          bump(shared->replied);
          count_reply(*shared, sends[k].kind);
          if (sends[k].received != std::chrono::steady_clock::time_point{}) {
            if (now == std::chrono::steady_clock::time_point{}) {
              now = std::chrono::steady_clock::now();
            }
            latency.record(now - sends[k].received);
          }
        }
        done += static_cast<std::size_t>(sent);
      }
    }
    sends.clear();
    inline_bytes.clear();
    draining.clear();
  }

  /// This worker's socket for a family (-1 if it has none).
  int socket_for(bool v6) const noexcept {
    for (const auto& s : sockets) {
      if (s->v6 == v6) {
        return s->fd;
      }
    }
    return -1;
  }

  /// Posted by the first reply after a drain.
  void drain() {
    take_replies();
    flush();
    prune();
  }

  void handle(const sockaddr_storage& from, std::string_view packet) {
    endpoint client;
    if (!to_endpoint(from, client)) {
      bump(shared->dropped_malformed);
      return;
    }
    if (client.port == 0) {
      // Nothing can be sent to port 0; answering would only probe the stack.
      bump(shared->dropped_source_port_zero);
      return;
    }
    const auto now = shared->clock();
    const udp_parse_result r =
        accept_udp_request(packet, shared->limits, shared->ids, client, now, request);
    switch (r.disposition) {
      case udp_disposition::drop:
        bump(shared->dropped_malformed);
        return;
      case udp_disposition::reply_error:
        scratch.clear();
        encode_udp_error_reply(scratch, request.transaction, r.error, packet.size());
        queue(from, scratch, reply_kind::error);
        return;
      case udp_disposition::process:
        break;
    }
    if (request.action == udp_action::connect) {
      scratch.clear();
      encode_udp_connect_response(scratch, request.transaction, shared->ids.issue(client, now));
      queue(from, scratch, reply_kind::connect);
      return;
    }
    auto to = std::make_shared<udp_return>();
    to->sh = shared;
    to->worker = index;
    to->to = from;
    to->to_len = address_length(from);
    to->transaction = request.transaction;
    to->v6_peers = client.ip.v6;
    if (request.action == udp_action::announce) {
      to->received = round_received;
      shared->gw.announce(lane, transport::udp, std::move(request.announce.request), client.ip,
                          true, std::make_shared<udp_detail::udp_announce_reply>(std::move(to)));
    } else {
      shared->gw.scrape(lane, transport::udp, request.scrape_hashes,
                        std::make_shared<udp_detail::udp_scrape_reply>(std::move(to)));
    }
  }

  /// Forgets answered requests at the front of the lane (most are answered
  /// within microseconds, so it stays short).
  void prune() { shared->gw.sweep(lane, std::chrono::steady_clock::time_point{}); }

  /// Answers every request past its deadline ("try again later").
  void expire() { shared->gw.sweep(lane, std::chrono::steady_clock::now()); }

  void start_timer() {
    timer.expires_after(tick);
    timer.async_wait([this](const boost::system::error_code& ec) {
      if (ec == asio::error::operation_aborted) {
        return;
      }
      expire();
      start_timer();
    });
  }
};

void udp_detail::post_drain(reply_outbox& box) {
  udp_server::worker* w = box.w;
  asio::post(*box.io, [w] { w->drain(); });
}

namespace {

void set_reuse_port(udp_socket& s) {
  const int one = 1;
  if (::setsockopt(s.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) {
    throw std::system_error(errno, std::generic_category(), "udp: SO_REUSEPORT");
  }
}

}  // namespace

std::string udp_config::validate() const {
  if (workers == 0 || workers > 256) {
    return "udp.workers must be between 1 and 256";
  }
  if (!bind.empty()) {
    boost::system::error_code ec;
    asio::ip::make_address(bind, ec);
    if (ec) {
      return "udp.bind is not an IP address: '" + bind + "'";
    }
  }
  if (!connection_id_key.empty()) {
    sk::connection_id_key key;
    if (!parse_connection_id_key(connection_id_key, key)) {
      return "udp.connection-id-key must be exactly 32 hex digits (or empty for a random key)";
    }
  }
  return {};
}

udp_server::udp_server(caf::actor_system& sys, swarm_directory& dir, const udp_config& cfg,
                       const gateway_config& gw_cfg, std::shared_ptr<access_control> access,
                       clock_function clock)
    : sys_(sys) {
  if (auto problem = cfg.validate(); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  if (auto problem = gw_cfg.validate(); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  own_gateway_ = std::make_unique<gateway>(sys, dir, gw_cfg, std::move(access));
  shared_ = std::make_shared<shared_state>(cfg, std::move(clock), *own_gateway_);
}

udp_server::udp_server(caf::actor_system& sys, gateway& gw, const udp_config& cfg,
                       clock_function clock)
    : sys_(sys) {
  if (auto problem = cfg.validate(); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  shared_ = std::make_shared<shared_state>(cfg, std::move(clock), gw);
}

udp_server::~udp_server() { stop(); }

void udp_server::start() {
  if (stopped_) {
    throw std::logic_error("udp_server: start() after stop()");
  }
  if (started_) {
    return;
  }
  started_ = true;
  const udp_config& cfg = shared_->cfg;
  std::vector<asio::ip::address> addresses;
  const bool both = cfg.bind.empty();
  if (both) {
    addresses = {asio::ip::address_v4::any(), asio::ip::address_v6::any()};
  } else {
    addresses = {asio::ip::make_address(cfg.bind)};
  }
  std::uint16_t port = cfg.port;
  bool skip_v6 = false;
  const auto tick = shared_->gw.sweep_period();
  for (std::size_t k = 0; k < cfg.workers; ++k) {
    auto w = std::make_unique<worker>(shared_, k);
    w->lane = shared_->first_lane + k;
    w->tick = tick;
    for (const auto& address : addresses) {
      if (address.is_v6() && skip_v6) {
        continue;
      }
      auto slot = std::make_unique<worker::socket_slot>(w->io);
      udp_socket& s = slot->socket;
      const udp_endpoint ep(address, port);
      boost::system::error_code ec;
      s.open(ep.protocol(), ec);
      if (!ec && address.is_v6()) {
        s.set_option(asio::ip::v6_only(true), ec);
      }
      if (!ec) {
        set_reuse_port(s);
        s.bind(ep, ec);
      }
      if (ec) {
        if (both && address.is_v6() && k == 0) {
          spdlog::warn("udp: no IPv6 socket on port {} ({}); serving IPv4 only", port,
                       ec.message());
          skip_v6 = true;
          continue;
        }
        throw std::system_error(
            ec, "udp: cannot listen on " + address.to_string() + " port " + std::to_string(port));
      }
      s.non_blocking(true);  // every receive and send is MSG_DONTWAIT anyway
      slot->fd = s.native_handle();
      slot->v6 = address.is_v6();
      if (port == 0) {
        port = s.local_endpoint().port();
      }
      if (address.is_v6()) {
        has_ipv6_ = true;
      }
      w->sockets.push_back(std::move(slot));
    }
    workers_.push_back(std::move(w));
  }
  bound_port_.store(port, std::memory_order_release);
  for (auto& w : workers_) {
    udp_detail::reply_outbox& box = *shared_->outboxes[w->index];
    box.io = &w->io;
    box.w = w.get();
    for (std::size_t i = 0; i < w->sockets.size(); ++i) {
      w->arm(i);
    }
    w->start_timer();
    w->thread = std::thread([raw = w.get()] { raw->io.run(); });
  }
  std::string listening;
  for (const auto& address : addresses) {
    if (address.is_v6() && skip_v6) {
      continue;
    }
    listening += (listening.empty() ? "" : ", ") +
                 (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
                 std::to_string(port);
  }
  spdlog::info("udp: listening on {} ({} worker{}, IPv6 {})", listening, workers_.size(),
               workers_.size() == 1 ? "" : "s", has_ipv6_ ? "on" : "off");
}

void udp_server::stop(std::chrono::milliseconds drain) {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  // 1. Stop receiving, on each worker's own thread, and wait until each has
  //    done so: a worker may be in the middle of a round it has already
  //    read, and those requests must be in flight (counted) before the drain
  //    below looks at in_flight(), or they would be dropped undrained.
  std::vector<std::future<void>> stopped;
  for (auto& w : workers_) {
    auto done = std::make_shared<std::promise<void>>();
    stopped.push_back(done->get_future());
    asio::post(w->io, [raw = w.get(), done] {
      raw->receiving = false;
      for (auto& s : raw->sockets) {
        boost::system::error_code ignored;
        s->socket.cancel(ignored);
      }
      done->set_value();
    });
  }
  for (auto& f : stopped) {
    f.wait();
  }
  // 2. Let replies in flight arrive, up to the deadline (the workers keep
  //    answering overdue requests meanwhile).
  const auto deadline = std::chrono::steady_clock::now() + drain;
  while (in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // 3. Close: from here nothing is admitted or sent. Wait for sections
  //    already inside (a swarm thread in the middle of a send).
  for (auto& w : workers_) shared_->gw.close_lane(w->lane);
  shared_->sending.close_and_wait();
  // 4. Stop the workers.
  for (auto& w : workers_) {
    asio::post(w->io, [raw = w.get()] {
      boost::system::error_code ignored;
      raw->timer.cancel(ignored);
    });
    w->guard.reset();
    if (w->thread.joinable()) {
      w->thread.join();
    }
    // 5. Whatever is still unanswered is dropped: the gateway settles it
    //    here, once (counted as dropped_shutdown).
    shared_->gw.abandon(w->lane);
    for (auto& s : w->sockets) {
      boost::system::error_code ignored;
      s->socket.close(ignored);
    }
  }
}

std::size_t udp_server::in_flight() const noexcept {
  std::size_t n = 0;
  for (const auto& w : workers_) {
    n += w->in_flight();
  }
  return n;
}

udp_counters udp_server::counters() const noexcept {
  const auto get = [](const std::atomic<std::uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  const shared_state& s = *shared_;
  udp_counters c;
  c.received = get(s.received);
  c.replied = get(s.replied);
  c.connects = get(s.connects);
  c.announces = get(s.announces);
  c.scrapes = get(s.scrapes);
  c.error_replies = get(s.error_replies);
  c.bad_requests = get(s.bad_requests);
  c.refused = get(s.refused);
  c.denied = get(s.denied);
  c.swarm_failures = get(s.swarm_failures);
  c.rerouted = s.gw.counters(transport::udp).rerouted;
  c.dropped_malformed = get(s.dropped_malformed);
  c.dropped_source_port_zero = get(s.dropped_source_port_zero);
  c.dropped_overload = get(s.dropped_overload);
  c.dropped_send_failed = get(s.dropped_send_failed);
  c.dropped_shutdown = get(s.dropped_shutdown);
  return c;
}

latency_histogram::snapshot udp_server::announce_latency() const noexcept {
  latency_histogram::snapshot out;
  for (const auto& w : workers_) {
    out += w->latency.read();
  }
  return out;
}

}  // namespace sk
