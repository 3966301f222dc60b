// A socket worker's loop: read a round of datagrams with recvmmsg, answer
// connects and bad requests itself, hand announces and scrapes to the
// gateway, and send what is queued (its own replies and the swarms') with
// sendmmsg.

#include "net/udp/udp_worker.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

namespace sk {

using udp_detail::bump;
using udp_detail::reply_kind;
using udp_detail::udp_return;

namespace {

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

}  // namespace

void udp_server::worker::arm(std::size_t i) {
  socket_slot& s = *sockets[i];
  s.socket.async_wait(udp_socket::wait_read, [this, i](const boost::system::error_code& ec) {
    if (!receiving || ec == asio::error::operation_aborted) {
      return;
    }
    on_readable(i);
  });
}

void udp_server::worker::on_readable(std::size_t i) {
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
    round_now = shared->clock();
    prefetch_swarms(s, got);
    for (int k = 0; k < got; ++k) {
      handle(s.from[static_cast<std::size_t>(k)],
             std::string_view(
                 s.buffers.data() + static_cast<std::size_t>(k) * datagram_max,
                 std::min<std::size_t>(s.msgs[static_cast<std::size_t>(k)].msg_len, datagram_max)));
    }
    shared->gw.flush(lane);  // this round's tickets, in one message
    take_replies();          // whatever swarms answered meanwhile leaves with these
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

void udp_server::worker::prefetch_swarms(const socket_slot& s, int got) {
  // What looks like an announce (BEP 15: its length, its action; the
  // info_hash right after the header); the checks come later, in handle().
  // A forged one costs a lookup of a hash that is not there.
  std::array<info_hash, round> hashes;
  std::size_t n = 0;
  for (int k = 0; k < got; ++k) {
    const auto len =
        std::min<std::size_t>(s.msgs[static_cast<std::size_t>(k)].msg_len, datagram_max);
    const char* p = s.buffers.data() + static_cast<std::size_t>(k) * datagram_max;
    std::uint32_t action = 0;
    std::memcpy(&action, p + 8, sizeof action);  // after the connection id
    if (len < udp_announce_request_size ||
        ntohl(action) != static_cast<std::uint32_t>(udp_action::announce))
      continue;
    std::memcpy(hashes[n++].bytes.data(), p + udp_header_size, hashes[0].bytes.size());
  }
  if (n > 0) shared->gw.prefetch(hashes.data(), n);
}

void udp_server::worker::queue(const sockaddr_storage& to, std::string_view bytes, reply_kind kind,
                               std::chrono::steady_clock::time_point received) {
  inline_bytes.emplace_back(bytes);
  sends.push_back(send_item{&to, address_length(to), inline_bytes.back(), kind, received});
}

void udp_server::worker::take_replies() {
  udp_detail::reply_outbox& box = *shared->outboxes[index];
  {
    std::lock_guard<std::mutex> lock(box.mutex);
    draining.swap(box.items);
    box.drain_posted = false;
  }
  for (udp_detail::udp_reply& r : draining) {
    sends.push_back(send_item{&r.to->to, r.to->to_len, r.view(), r.kind, r.to->received});
  }
}

void udp_server::worker::flush() {
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
                              : ::sendmmsg(fd, mm.data() + done, static_cast<unsigned>(end - done),
                                           MSG_DONTWAIT);
      if (sent <= 0) {
        // The first remaining datagram failed (full buffer, unreachable):
        // drop it, count it, go on with the rest.
        bump(shared->dropped_send_failed);
        spdlog::debug("udp: send failed: {}", std::strerror(errno));
        ++done;
        continue;
      }
      for (std::size_t k = done; k < done + static_cast<std::size_t>(sent); ++k) {
        udp_detail::count_reply(*shared, sends[k].kind);
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

int udp_server::worker::socket_for(bool v6) const noexcept {
  for (const auto& s : sockets) {
    if (s->v6 == v6) {
      return s->fd;
    }
  }
  return -1;
}

void udp_server::worker::drain() {
  take_replies();
  flush();
  prune();
}

void udp_server::worker::handle(const sockaddr_storage& from, std::string_view packet) {
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
  const auto now = round_now;
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
    // Over its rate, a connect is dropped: its source has proven nothing
    // (no valid connection id), so it gets nothing, not even an error.
    if (!shared->gw.take_connect_token(transport::udp, client.ip)) {
      bump(shared->dropped_rate_limited);
      return;
    }
    scratch.clear();
    encode_udp_connect_response(scratch, request.transaction, shared->ids.issue(client, now));
    queue(from, scratch, reply_kind::connect);
    return;
  }
  // Moved into the reply object (one allocation for both).
  udp_return way_back;
  way_back.sh = shared;
  way_back.worker = index;
  way_back.to = from;
  way_back.to_len = address_length(from);
  way_back.transaction = request.transaction;
  way_back.v6_peers = client.ip.v6;
  if (request.action == udp_action::announce) {
    way_back.received = round_received;
    shared->gw.announce(lane, transport::udp, std::move(request.announce.request), client.ip, true,
                        udp_detail::make_announce_reply(std::move(way_back)));
  } else {
    shared->gw.scrape(lane, transport::udp, request.scrape_hashes, client.ip,
                      udp_detail::make_scrape_reply(std::move(way_back)));
  }
}

void udp_server::worker::start_timer() {
  timer.expires_after(tick);
  timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted || !ticking) {
      return;
    }
    expire();
    start_timer();
  });
}

void udp_detail::post_drain(reply_outbox& box) {
  udp_server::worker* w = box.w;
  asio::post(*box.io, [w] { w->drain(); });
}

}  // namespace sk
