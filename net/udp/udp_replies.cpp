// The way back of a UDP answer: encoded on the swarm's thread (or the
// gateway's, for a refusal), queued in the outbox of the worker that read
// the request, which sends it with its next sendmmsg; or, when it was that
// worker's only unsettled request, sent at once (see `reply_outbox`).

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "net/udp/udp_shared.hpp"
#include "tracker/recycler.hpp"

namespace sk::udp_detail {

using shared_state = udp_server::shared_state;

thread_local bool on_worker_thread = false;

void count_reply(udp_server::shared_state& sh, reply_kind kind) noexcept {
  bump(sh.replied);
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
    case reply_kind::rate_limited:
      bump(sh.error_replies);
      bump(sh.rate_limited);
      break;
    case reply_kind::connect:
      bump(sh.connects);
      break;
  }
}

namespace {

/// Sends `item` from this thread (see `reply_outbox`). Under the box's
/// lock, so one writer at a time records into `box.latency`.
void send_now(shared_state& sh, reply_outbox& box, const udp_reply& item) {
  const udp_return& to = *item.to;
  const int fd = to.to.ss_family == AF_INET6 ? box.fd6 : box.fd4;
  const std::string_view bytes = item.view();
  const ssize_t sent = fd < 0 ? -1
                              : ::sendto(fd, bytes.data(), bytes.size(), MSG_DONTWAIT,
                                         reinterpret_cast<const sockaddr*>(&to.to), to.to_len);
  if (sent < 0) {
    bump(sh.dropped_send_failed);
    spdlog::debug("udp: send failed: {}", std::strerror(errno));
    return;
  }
  bump(sh.direct_replies);
  count_reply(sh, item.kind);
  if (to.received != std::chrono::steady_clock::time_point{})
    box.latency.record(std::chrono::steady_clock::now() - to.received);
}

void push_reply(udp_reply&& item) {
  shared_state& sh = *item.to->sh;
  if (!sh.sending.enter()) {
    bump(sh.dropped_shutdown);
    return;
  }
  reply_outbox& box = *sh.outboxes[item.to->worker];
  bool post = false;
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    if (item.alone && !on_worker_thread && box.items.empty() && !box.drain_posted) {
      // The worker's only request: nothing to batch it with.
      send_now(sh, box, item);
    } else {
      box.items.push_back(std::move(item));
      if (!box.drain_posted) {
        box.drain_posted = true;
        post = true;
      }
    }
  }
  if (post) {
    post_drain(box);
  }
  sh.sending.leave();
}

}  // namespace

void send_back(return_ptr to, std::string bytes, reply_kind kind, bool alone) {
  push_reply(udp_reply{std::move(to), std::move(bytes), {}, kind, alone});
}

void send_back(return_ptr to, std::string_view held, reply_kind kind, bool alone) {
  push_reply(udp_reply{std::move(to), {}, held, kind, alone});
}

namespace {

/// The gateway's refusal as BEP 15 sees it: an error packet whose text is
/// never longer than the request that caused it; nothing at all for an
/// overload (answering would do the flood's work) or a shutdown. A request
/// over its address's rate gets its error packet: it carried a valid
/// connection id, so its source is real (a connect over the rate is dropped
/// before it reaches the gateway).
void send_refusal(const return_ptr& to, gateway_refusal why, bool alone) {
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
            why == gateway_refusal::denied         ? reply_kind::denied
            : why == gateway_refusal::rate_limited ? reply_kind::rate_limited
                                                   : reply_kind::failure,
            alone);
}

/// Longest text an announce's error packet may carry: 98-byte request minus
/// the 8-byte header, so a refusal is never larger than what caused it.
constexpr std::size_t max_announce_error_text = 98 - 8;

/// Room for an announce reply's bytes inside the reply object: the header
/// and 50 IPv4 peers (the default numwant) or 16 IPv6 ones. Larger replies
/// take a string of their own.
constexpr std::size_t inline_reply_bytes = udp_announce_response_header_size + 50 * udp_peer4_size;

/// One announce's reply: encoded on the swarm's thread, sent by the worker.
/// The way back lives inside it (the outbox's item holds it through an
/// aliasing pointer), and so do the bytes when they fit.
class udp_announce_reply final : public announce_reply,
                                 public std::enable_shared_from_this<udp_announce_reply> {
 public:
  explicit udp_announce_reply(udp_return to)
      : to_(std::move(to)), mark_(*to_.sh->outboxes[to_.worker]) {}

  void on_result(const announce_result& r) override {
    const bool alone = mark_.settle();
    if (!r.failure_reason.empty()) {
      // The swarm refuses this peer (banned client, abuse): an error packet,
      // never larger than the 98-byte announce.
      std::string buf;
      const std::string_view text(r.failure_reason);
      encode_udp_error_response(buf, to_.transaction, text.substr(0, max_announce_error_text));
      send_back(way_back(), std::move(buf), reply_kind::refused, alone);
      return;
    }
    // Only the requester's family: a v4 client cannot use v6 peers and a BEP
    // 15 reply has one peer size. (`own_family_only` asked the swarm for
    // that family only.)
    const std::string& peers = to_.v6_peers ? r.peers6 : r.peers4;
    const std::size_t size = udp_peer_size(to_.v6_peers);
    const std::size_t cap = udp_max_peers_per_reply(to_.v6_peers) * size;
    const std::size_t len = std::min(cap, peers.size() - peers.size() % size);
    if (udp_announce_response_header_size + len <= sizeof bytes_) {
      // on_result runs at most once, so the buffer is written once, before
      // the outbox's lock hands it to the worker.
      encode_udp_announce_header(bytes_, to_.transaction, r.interval, r.stats);
      std::memcpy(bytes_ + udp_announce_response_header_size, peers.data(), len);
      send_back(way_back(), std::string_view(bytes_, udp_announce_response_header_size + len),
                reply_kind::announce, alone);
      return;
    }
    std::string buf;
    buf.reserve(len + udp_announce_response_header_size);
    encode_udp_announce_response(buf, to_.transaction, r.interval, r.stats,
                                 std::string_view(peers).substr(0, len));
    send_back(way_back(), std::move(buf), reply_kind::announce, alone);
  }

  void on_refusal(gateway_refusal why, std::int64_t) override {
    const bool alone = mark_.settle();
    send_refusal(way_back(), why, alone);
  }

 private:
  /// The way back, keeping this object (and its bytes) alive.
  return_ptr way_back() { return return_ptr(shared_from_this(), &to_); }

  udp_return to_;
  reply_mark mark_;
  char bytes_[inline_reply_bytes];
};

/// One scrape's reply: every requested hash in request order (duplicates
/// kept); refused and unknown torrents count zeros (a BEP 15 scrape reply
/// is positional, nothing can be left out).
class udp_scrape_reply final : public scrape_reply,
                               public std::enable_shared_from_this<udp_scrape_reply> {
 public:
  explicit udp_scrape_reply(udp_return to)
      : to_(std::move(to)), mark_(*to_.sh->outboxes[to_.worker]) {}

  void on_result(std::vector<scrape_answer>&& answers) override {
    const bool alone = mark_.settle();
    std::vector<swarm_stats> stats(answers.size());
    for (std::size_t i = 0; i < answers.size(); ++i) {
      if (answers[i].served) stats[i] = answers[i].stats;
    }
    std::string buf;
    encode_udp_scrape_response(buf, to_.transaction, stats.data(), stats.size());
    send_back(way_back(), std::move(buf), reply_kind::scrape, alone);
  }

  void on_refusal(gateway_refusal why, std::int64_t) override {
    const bool alone = mark_.settle();
    send_refusal(way_back(), why, alone);
  }

 private:
  return_ptr way_back() { return return_ptr(shared_from_this(), &to_); }

  udp_return to_;
  reply_mark mark_;
};

}  // namespace

std::shared_ptr<announce_reply> make_announce_reply(udp_return to) {
  return make_recycled<udp_announce_reply>(std::move(to));
}

std::shared_ptr<scrape_reply> make_scrape_reply(udp_return to) {
  return make_recycled<udp_scrape_reply>(std::move(to));
}

}  // namespace sk::udp_detail
