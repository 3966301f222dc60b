#include "net/udp_server.hpp"

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

#include "actors/access_list.hpp"
#include "actors/directory.hpp"
#include "actors/messages.hpp"
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
  shared_state(const udp_config& c, clock_function clk, swarm_directory& d)
      : cfg(c),
        clock(clk ? std::move(clk)
                  : clock_function([] { return std::chrono::steady_clock::now(); })),
        ids(connection_id_issuer::from_config(c.connection_id_key)),
        dir(d),
        in_flight(std::make_unique<std::atomic<std::size_t>[]>(c.workers)) {
    for (std::size_t k = 0; k < c.workers; ++k) {
      outboxes.push_back(std::make_unique<udp_detail::reply_outbox>());
    }
  }

  const udp_config cfg;
  const clock_function clock;
  const connection_id_issuer ids;
  /// Used only while `closed` is false (see `enter()`): the server's owner
  /// may destroy the directory once stop() returned.
  swarm_directory& dir;

  /// Set by stop() once its drain deadline passed: from then on nothing
  /// sends, routes or counts; stop() settles what is still pending.
  std::atomic<bool> closed{false};
  /// Threads inside a send/route section (see `enter()`); stop() waits for 0
  /// after setting `closed`, so no send can hit a closed socket.
  std::atomic<int> active{0};
  /// Announces/scrapes waiting for swarms, per worker.
  std::unique_ptr<std::atomic<std::size_t>[]> in_flight;
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
  std::atomic<std::uint64_t> rerouted{0};
  std::atomic<std::uint64_t> dropped_malformed{0};
  std::atomic<std::uint64_t> dropped_source_port_zero{0};
  std::atomic<std::uint64_t> dropped_overload{0};
  std::atomic<std::uint64_t> dropped_send_failed{0};
  std::atomic<std::uint64_t> dropped_shutdown{0};

  /// Enters a section that may send or route; false (not entered) once the
  /// server is closed. seq_cst on both sides: if this load sees `closed`
  /// false, stop()'s wait for `active == 0` sees this section.
  bool enter() noexcept {
    active.fetch_add(1);
    if (closed.load()) {
      active.fetch_sub(1);
      return false;
    }
    return true;
  }
  void leave() noexcept { active.fetch_sub(1); }
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

/// Text of the error packet when a swarm could not answer. Short: the reply
/// must stay below the request's size (98-byte announce, >= 36-byte scrape).
constexpr std::string_view swarm_failure_text = "try again later";

/// Error text for an announce of a hash the access list refuses.
constexpr std::string_view access_refused_text = "torrent not allowed on this tracker";

/// Longest text an announce's error packet may carry: 98-byte request minus
/// the 8-byte header, so a refusal is never larger than what caused it.
constexpr std::size_t max_announce_error_text = 98 - 8;

}  // namespace

namespace udp_detail {

/// One announce or scrape handed to CAF and not yet answered. Its `state`
/// is settled exactly once (see `settle`).
struct udp_pending {
  std::shared_ptr<shared_state> sh;
  std::size_t worker = 0;  ///< index of the worker that admitted it
  sockaddr_storage to{};
  socklen_t to_len = 0;
  transaction_id transaction;
  bool v6_peers = false;  ///< requester is IPv6: 18-byte peers
  std::chrono::steady_clock::time_point deadline;
  /// When the datagram was read, for announces (latency); zero for scrapes.
  std::chrono::steady_clock::time_point received{};
  std::atomic<bool> settled{false};

  /// Claims the right to answer. Exactly one caller ever gets true; it must
  /// then call `release()`.
  bool claim() noexcept {
    bool expected = false;
    return settled.compare_exchange_strong(expected, true);
  }
  void release() noexcept { sh->in_flight[worker].fetch_sub(1, std::memory_order_relaxed); }

};

using pending_ptr = std::shared_ptr<udp_pending>;

/// A reply encoded on a swarm thread, travelling to its worker.
struct udp_reply {
  pending_ptr p;
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

/// Hands the answer of `p` to its worker, which sends it unless `p` was
/// settled meanwhile (timeout) or the server closed (stop() settles it).
/// Any thread.
void settle(const pending_ptr& p, std::string bytes, reply_kind kind) {
  shared_state& sh = *p->sh;
  if (!sh.enter()) {
    return;
  }
  reply_outbox& box = *sh.outboxes[p->worker];
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    box.items.push_back(udp_reply{p, std::move(bytes), kind});
    if (!box.drain_posted) {
      box.drain_posted = true;
      post = true;
    }
  }
  if (post) {
    post_drain(box);
  }
  sh.leave();
}

/// Answers `p` with the "try again later" error packet (swarm timeout,
/// swarm gone, directory stopping); counted as a swarm failure when sent.
void settle_failure(const pending_ptr& p) {
  std::string buf;
  encode_udp_error_response(buf, p->transaction, swarm_failure_text);
  settle(p, std::move(buf), reply_kind::failure);
}

void dispatch_announce(pending_ptr p, swarm_announce&& a, int retries);

/// The announce as the swarm receives it: the swarm calls `complete()` on its
/// thread, which encodes and sends the reply right there.
class udp_ticket final : public announce_ticket {
 public:
  udp_ticket(swarm_announce a, pending_ptr p, int retries)
      : announce_ticket(std::move(a)), p_(std::move(p)), retries_(retries) {}

  ~udp_ticket() override {
    if (handled_) {
      return;
    }
    // Dropped unprocessed: the swarm ended (idle) between route() and
    // delivery, or the system is stopping. Route once more (a fresh swarm
    // is spawned), or answer "try again".
    if (retries_ > 0) {
      bump(p_->sh->rerouted);
      dispatch_announce(std::move(p_), std::move(announce), retries_ - 1);
    } else {
      settle_failure(p_);
    }
  }

  void complete(const announce_result& r) override {
    handled_ = true;
    udp_pending& p = *p_;
    if (p.settled.load(std::memory_order_relaxed)) {
      return;  // timed out meanwhile: don't encode for nothing
    }
    std::string buf;
    if (!r.failure_reason.empty()) {
      // The swarm refuses this peer (banned client, abuse): an error packet,
      // never larger than the 98-byte announce.
      const std::string_view text(r.failure_reason);
      encode_udp_error_response(buf, p.transaction, text.substr(0, max_announce_error_text));
      settle(p_, std::move(buf), reply_kind::refused);
      return;
    }
    // Only the requester's family: a v4 client cannot use v6 peers and a BEP
    // 15 reply has one peer size. (`own_family_only` asked the swarm for
    // that family only.)
    const std::string& peers = p.v6_peers ? r.peers6 : r.peers4;
    const std::size_t size = udp_peer_size(p.v6_peers);
    const std::size_t cap = udp_max_peers_per_reply(p.v6_peers) * size;
    const std::size_t len = std::min(cap, peers.size() - peers.size() % size);
    buf.reserve(len + 20);
    encode_udp_announce_response(buf, p.transaction, r.interval, r.stats,
                                 std::string_view(peers).substr(0, len));
    settle(p_, std::move(buf), reply_kind::announce);
  }

  void fail() override {
    handled_ = true;
    settle_failure(p_);
  }

 private:
  pending_ptr p_;
  int retries_;
  bool handled_ = false;
};

/// Routes `a` to its swarm with a ticket that may route `retries` more
/// times. Any thread.
void dispatch_announce(pending_ptr p, swarm_announce&& a, int retries) {
  shared_state& sh = *p->sh;
  if (p->settled.load()) {
    return;  // timed out already
  }
  if (!sh.enter()) {
    return;  // stop() settles it
  }
  caf::actor swarm = sh.dir.route(a.request.hash);
  if (swarm) {
    auto ticket = std::make_shared<udp_ticket>(std::move(a), p, retries);
    caf::anon_send(swarm, announce_atom::value, announce_ticket_ptr(std::move(ticket)));
  }
  sh.leave();
  if (!swarm) {
    settle_failure(p);  // the directory is stopping
  }
}

/// A scrape in flight: one slot per requested hash, filled by the swarms on
/// their threads through `udp_scrape_ticket`s; whoever finishes last
/// encodes the reply (in request order, duplicates kept) and settles.
struct udp_scrape {
  pending_ptr p;
  std::vector<swarm_stats> stats;  ///< unknown hashes stay zero
  std::atomic<std::size_t> remaining{0};

  /// One slot is done (acq_rel: the last one sees every slot's write).
  void done_one() {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::string buf;
      encode_udp_scrape_response(buf, p->transaction, stats.data(), stats.size());
      settle(p, std::move(buf), reply_kind::scrape);
    }
  }
};

/// One known hash of a scrape, as its swarm receives it.
class udp_scrape_ticket final : public scrape_ticket {
 public:
  udp_scrape_ticket(std::shared_ptr<udp_scrape> s, std::size_t slot)
      : s_(std::move(s)), slot_(slot) {}
  /// Answered or not: a swarm that ended before reading it was empty, so
  /// its slot keeps zeros.
  ~udp_scrape_ticket() override { s_->done_one(); }
  void complete(const swarm_stats& st) override { s_->stats[slot_] = st; }

 private:
  std::shared_ptr<udp_scrape> s_;
  std::size_t slot_;
};

/// Sends one ticket per known hash of `hashes` to its swarm. Worker thread.
void dispatch_scrape(pending_ptr p, const std::vector<info_hash>& hashes) {
  shared_state& sh = *p->sh;
  auto sc = std::make_shared<udp_scrape>();
  sc->p = std::move(p);
  sc->stats.resize(hashes.size());
  // +1: held while sending, so no ticket can finish the scrape early.
  sc->remaining.store(1, std::memory_order_relaxed);
  if (sh.enter()) {
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      // A hash the access list refuses counts zero, like an unknown one.
      if (sh.cfg.access && !sh.cfg.access->allowed(hashes[i])) {
        sh.cfg.access->refused_udp_scrapes.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      // find(), not route(): a scrape of an unknown torrent creates nothing.
      if (caf::actor swarm = sh.dir.find(hashes[i])) {
        sc->remaining.fetch_add(1, std::memory_order_relaxed);
        caf::anon_send(swarm, scrape_atom::value,
                       scrape_ticket_ptr(std::make_shared<udp_scrape_ticket>(sc, i)));
      }
    }
    sh.leave();
  }
  sc->done_one();
}

}  // namespace udp_detail
}  // namespace sk


namespace sk {

using udp_detail::pending_ptr;
using udp_detail::udp_pending;

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
  /// Every request handed to CAF, in admission order (same timeout for all,
  /// so the front expires first). Settled entries are popped from the front.
  std::deque<pending_ptr> pending;
  std::chrono::milliseconds tick{1000};
  /// When the current recvmmsg round was read (one clock read per round).
  std::chrono::steady_clock::time_point round_received{};
  /// Announce latency of this worker (written on its thread only).
  latency_histogram latency;

  std::atomic<std::size_t>& in_flight() const noexcept { return shared->in_flight[index]; }

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
      if (r.p->claim()) {
        r.p->release();
        sends.push_back(send_item{&r.p->to, r.p->to_len, r.bytes, r.kind, r.p->received});
      }
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
        accept_udp_request(packet, shared->cfg.limits, shared->ids, client, now, request);
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
    if (request.action == udp_action::announce && shared->cfg.access &&
        !shared->cfg.access->allowed(request.announce.request.hash)) {
      // Before routing: a refused hash never spawns a swarm.
      shared->cfg.access->refused_udp_announces.fetch_add(1, std::memory_order_relaxed);
      scratch.clear();
      encode_udp_error_response(scratch, request.transaction, access_refused_text);
      queue(from, scratch, reply_kind::denied, round_received);
      return;
    }
    if (in_flight().load(std::memory_order_relaxed) >= shared->cfg.max_in_flight) {
      bump(shared->dropped_overload);
      return;
    }
    auto p = std::make_shared<udp_pending>();
    p->sh = shared;
    p->worker = index;
    p->to = from;
    p->to_len = address_length(from);
    p->transaction = request.transaction;
    p->v6_peers = client.ip.v6;
    if (request.action == udp_action::announce) {
      p->received = round_received;
    }
    p->deadline = std::chrono::steady_clock::now() + shared->cfg.request_timeout;
    in_flight().fetch_add(1, std::memory_order_relaxed);
    pending.push_back(p);
    if (request.action == udp_action::announce) {
      announce_request& a = request.announce.request;
      swarm_announce sa;
      sa.peer.ip = shared->cfg.trust_ip_field && a.claimed_ip ? *a.claimed_ip : client.ip;
      sa.peer.port = a.port;
      sa.own_family_only = true;
      sa.request = std::move(a);
      udp_detail::dispatch_announce(std::move(p), std::move(sa), 1);
    } else {
      udp_detail::dispatch_scrape(std::move(p), request.scrape_hashes);
    }
  }

  /// Forgets settled requests at the front (most settle within microseconds,
  /// so the deque stays short).
  void prune() {
    while (!pending.empty() && pending.front()->settled.load(std::memory_order_relaxed)) {
      pending.pop_front();
    }
  }

  /// Answers every request past its deadline with "try again later".
  void expire() {
    const auto now = std::chrono::steady_clock::now();
    while (!pending.empty()) {
      const udp_pending& p = *pending.front();
      if (!p.settled.load() && p.deadline > now) {
        break;
      }
      if (!p.settled.load()) {
        udp_detail::settle_failure(pending.front());
      }
      pending.pop_front();
    }
  }

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
  if (max_in_flight == 0) {
    return "udp.max-in-flight must be at least 1";
  }
  if (request_timeout.count() <= 0) {
    return "udp.request-timeout must be positive";
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
  if (limits.max_scrape_hashes == 0) {
    return "udp limits: max_scrape_hashes must be at least 1";
  }
  if (limits.max_numwant < 0) {
    return "udp limits: max_numwant must not be negative";
  }
  return {};
}

udp_server::udp_server(caf::actor_system& sys, swarm_directory& dir, const udp_config& cfg,
                       clock_function clock)
    : sys_(sys) {
  if (auto problem = cfg.validate(); !problem.empty()) {
    throw std::invalid_argument(problem);
  }
  shared_ = std::make_shared<shared_state>(cfg, std::move(clock), dir);
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
  const auto tick = std::clamp<std::chrono::milliseconds>(
      cfg.request_timeout / 5, std::chrono::milliseconds(1), std::chrono::milliseconds(1000));
  for (std::size_t k = 0; k < cfg.workers; ++k) {
    auto w = std::make_unique<worker>(shared_, k);
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
  // 3. Close: from here nothing sends or routes. Wait for sections already
  //    inside (a swarm thread in the middle of a send).
  shared_->closed.store(true);
  while (shared_->active.load() != 0) {
    std::this_thread::yield();
  }
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
    // 5. Whatever is still unsettled is dropped: settle it here, once.
    for (const pending_ptr& p : w->pending) {
      if (p->claim()) {
        bump(shared_->dropped_shutdown);
        p->release();
      }
    }
    w->pending.clear();
    for (auto& s : w->sockets) {
      boost::system::error_code ignored;
      s->socket.close(ignored);
    }
  }
}

std::size_t udp_server::in_flight() const noexcept {
  std::size_t n = 0;
  for (std::size_t k = 0; k < workers_.size(); ++k) {
    n += shared_->in_flight[k].load(std::memory_order_relaxed);
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
  c.rerouted = get(s.rerouted);
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
