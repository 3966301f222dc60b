#pragma once
/// What the UDP server's pieces share (internal to net/udp: included by
/// udp_server.cpp, udp_worker.cpp and udp_replies.cpp only): the state every
/// worker and request in flight hold, the counters, and the way of one reply
/// from a swarm thread back to the worker that read its request.
///
///   udp_worker.cpp   a socket worker: recvmmsg, parse, the gateway, sendmmsg
///   udp_replies.cpp  an answer encoded on the swarm's thread, queued in its
///                    worker's outbox (`send_back`)
///   udp_server.cpp   config, sockets, start and stop, counters

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "net/gateway.hpp"
#include "net/latency_histogram.hpp"
#include "net/udp/udp_server.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/udp.hpp"

namespace sk {

namespace asio = boost::asio;
using udp_socket = asio::ip::udp::socket;
using udp_endpoint = asio::ip::udp::endpoint;

namespace udp_detail {

inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
  c.fetch_add(n, std::memory_order_relaxed);
}

/// Which counter a delivered reply bumps.
/// `error`: a bad request; `refused`: an announce refused by its swarm;
/// `denied`: an announce refused by the access list; `failure`: the swarm
/// could not answer.
/// `rate_limited`: an announce or scrape over its address's request rate.
enum class reply_kind : std::uint8_t {
  announce,
  scrape,
  error,
  failure,
  connect,
  refused,
  denied,
  rate_limited
};

/// Where one announce's or scrape's answer goes: the requester's address
/// and transaction, and the worker that sends it.
struct udp_return {
  std::shared_ptr<udp_server::shared_state> sh;
  std::size_t worker = 0;  ///< index of the worker that read the request
  sockaddr_storage to{};
  socklen_t to_len = 0;
  transaction_id transaction;
  bool v6_peers = false;  ///< requester is IPv6: 18-byte peers
  /// When the datagram was read, for announces (latency); zero for scrapes.
  std::chrono::steady_clock::time_point received{};
};

using return_ptr = std::shared_ptr<const udp_return>;

/// A reply encoded on a swarm thread, travelling to its worker: its bytes
/// in `bytes`, or (when `bytes` is empty) in `held`, which points into the
/// object `to` keeps alive (an announce reply's own buffer).
struct udp_reply {
  return_ptr to;
  std::string bytes;
  std::string_view held;
  reply_kind kind = reply_kind::announce;
  /// Its request was the last of its worker's to settle (`reply_mark`).
  bool alone = false;

  std::string_view view() const noexcept { return bytes.empty() ? held : std::string_view(bytes); }
};

/// Replies waiting for one worker. Swarm threads push; the first push after
/// a drain posts one drain to the worker's io_context, so a burst of replies
/// costs one wake-up and leaves in one sendmmsg. (Sending every reply from
/// the swarm threads was measured slower under load: each sendto woke the
/// client separately; see bench/udp/README.md.)
///
/// A lone reply leaves at once instead: when its request was the worker's
/// last unsettled one and nothing waits in the box, the swarm's thread
/// sends it itself (`push_reply`). Under clients' pace almost every request is
/// alone, and the drain would cost the worker a second wake-up per request
/// (the post, the epoll round, the sendmmsg of one); under load there is
/// always another request unsettled, and replies keep leaving in batches.
struct reply_outbox {
  std::mutex mutex;
  std::vector<udp_reply> items;
  bool drain_posted = false;
  /// Set by start(): where drains are posted and what runs them, and the
  /// worker's sockets (-1: none of that family) for replies sent at once.
  asio::io_context* io = nullptr;
  udp_server::worker* w = nullptr;
  int fd4 = -1;
  int fd6 = -1;
  /// Announces and scrapes of this worker whose reply object exists and has
  /// not settled yet (`reply_mark`).
  std::atomic<std::size_t> unsettled{0};
  /// Latency of the announces sent at once, written under `mutex` (one
  /// writer at a time); the worker's own histogram has the others.
  latency_histogram latency;
};

/// A request's place in its worker's `reply_outbox::unsettled`: counted
/// from the reply object's construction until it settles (`settle`, once;
/// the destructor settles one that never did).
class reply_mark {
 public:
  explicit reply_mark(reply_outbox& box) noexcept : box_(&box) {
    box_->unsettled.fetch_add(1, std::memory_order_relaxed);
  }
  reply_mark(const reply_mark&) = delete;
  reply_mark& operator=(const reply_mark&) = delete;
  ~reply_mark() { settle(); }
  /// True when this settled the worker's last unsettled request (false
  /// after the first call).
  bool settle() noexcept {
    if (box_ == nullptr) return false;
    const bool last = box_->unsettled.fetch_sub(1, std::memory_order_acq_rel) == 1;
    box_ = nullptr;
    return last;
  }

 private:
  reply_outbox* box_;
};

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
  std::atomic<std::uint64_t> rate_limited{0};
  std::atomic<std::uint64_t> dropped_rate_limited{0};
  std::atomic<std::uint64_t> dropped_malformed{0};
  std::atomic<std::uint64_t> dropped_source_port_zero{0};
  std::atomic<std::uint64_t> dropped_overload{0};
  std::atomic<std::uint64_t> dropped_send_failed{0};
  std::atomic<std::uint64_t> dropped_shutdown{0};
  std::atomic<std::uint64_t> direct_replies{0};
};

namespace udp_detail {

/// Bumps the counters of one delivered reply: `replied` and its kind's.
void count_reply(udp_server::shared_state& sh, reply_kind kind) noexcept;

/// Posts one drain of `box` to its worker (the first reply after a drain).
void post_drain(reply_outbox& box);

/// True on a socket worker's thread (set as it starts). A reply settled
/// there (a refusal the gateway made at once) joins the round's sendmmsg
/// instead of leaving alone.
extern thread_local bool on_worker_thread;

/// Hands an answer (already claimed through the gateway) to its worker,
/// which sends it unless the server closed meanwhile; `alone` (its request
/// settled its worker's last one) sends it from this thread at once when
/// nothing waits in the outbox. Any thread.
void send_back(return_ptr to, std::string bytes, reply_kind kind, bool alone = false);
/// The same for bytes that live as long as `to`'s object.
void send_back(return_ptr to, std::string_view held, reply_kind kind, bool alone = false);

/// The gateway's answer to one announce: a BEP 15 reply to `to`, encoded on
/// the swarm's thread. One allocation holds the reply, its way back and
/// (for the usual sizes) its bytes.
std::shared_ptr<announce_reply> make_announce_reply(udp_return to);
/// The same for one scrape.
std::shared_ptr<scrape_reply> make_scrape_reply(udp_return to);

}  // namespace udp_detail
}  // namespace sk
