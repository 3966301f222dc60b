#include "net/udp_server.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include "actors/directory.hpp"
#include "actors/messages.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/udp.hpp"

namespace sk {

namespace asio = boost::asio;
using udp_socket = asio::ip::udp::socket;
using udp_endpoint = asio::ip::udp::endpoint;

/// What every worker and helper actor of one server share. Immutable after
/// construction except for the counters.
struct udp_server::shared_state {
  shared_state(const udp_config& c, clock_function clk, swarm_directory& d)
      : cfg(c),
        clock(clk ? std::move(clk)
                  : clock_function([] { return std::chrono::steady_clock::now(); })),
        ids(connection_id_issuer::from_config(c.connection_id_key)),
        dir(d) {}

  const udp_config cfg;
  const clock_function clock;
  const connection_id_issuer ids;
  swarm_directory& dir;

  std::atomic<std::uint64_t> received{0};
  std::atomic<std::uint64_t> replied{0};
  std::atomic<std::uint64_t> connects{0};
  std::atomic<std::uint64_t> announces{0};
  std::atomic<std::uint64_t> scrapes{0};
  std::atomic<std::uint64_t> error_replies{0};
  std::atomic<std::uint64_t> swarm_failures{0};
  std::atomic<std::uint64_t> dropped_malformed{0};
  std::atomic<std::uint64_t> dropped_source_port_zero{0};
  std::atomic<std::uint64_t> dropped_overload{0};
  std::atomic<std::uint64_t> dropped_send_failed{0};
  std::atomic<std::uint64_t> dropped_shutdown{0};
};

namespace {

void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
  c.fetch_add(n, std::memory_order_relaxed);
}

/// The datagram's source as the protocol layer sees it (IPv4-mapped IPv6
/// normalised to IPv4 by `make_v6`).
endpoint to_endpoint(const udp_endpoint& ep) {
  endpoint out;
  out.port = ep.port();
  const auto a = ep.address();
  if (a.is_v4()) {
    out.ip = ip_address::make_v4(a.to_v4().to_uint());
  } else {
    const auto b = a.to_v6().to_bytes();
    std::uint8_t raw[16];
    std::memcpy(raw, b.data(), sizeof raw);
    out.ip = ip_address::make_v6(raw);
  }
  return out;
}

/// Which counter a delivered reply bumps.
enum class reply_kind : std::uint8_t { announce, scrape, error };

/// Text of the error packet when a swarm could not answer. Short: the reply
/// must stay below the request's size (98-byte announce, >= 36-byte scrape).
constexpr std::string_view swarm_failure_text = "try again later";

}  // namespace

namespace udp_detail {

/// One announce or scrape travelling from a worker to its helper actor and
/// back. Local only (a raw worker pointer): never crosses nodes.
struct udp_job {
  udp_server::worker* w = nullptr;
  std::size_t socket = 0;  ///< index into the worker's sockets
  udp_endpoint to;         ///< where the reply goes
  transaction_id transaction;
  bool v6_peers = false;  ///< requester is IPv6: 18-byte peers
  swarm_announce announce;
  std::vector<info_hash> hashes;  ///< non-empty: a scrape
};

/// The announces and scrapes of one receive round, in one message.
struct udp_job_batch {
  std::vector<udp_job> jobs;
};

/// Replies encoded by a helper, handed to its worker in one post.
struct udp_reply {
  std::size_t socket = 0;
  udp_endpoint to;
  std::string bytes;
  std::uint8_t kind = 0;
};

}  // namespace udp_detail
}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::udp_detail::udp_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::udp_detail::udp_job_batch)

namespace sk {

using udp_detail::udp_job;
using udp_detail::udp_job_batch;
using udp_detail::udp_reply;

/// One socket worker: a thread running an io_context that owns one socket
/// per listening address. Everything but the atomics is touched only on
/// that thread (after start()).
struct udp_server::worker {
  struct socket_slot {
    explicit socket_slot(asio::io_context& io) : socket(io) {}
    udp_socket socket;
    udp_endpoint from;
    /// Larger than any request we serve (a full 74-hash scrape is 1496
    /// bytes); longer datagrams are cut, which at worst truncates options.
    std::array<char, 4096> buffer{};
  };

  explicit worker(shared_state& s) : shared(s), guard(asio::make_work_guard(io)) {}

  shared_state& shared;
  asio::io_context io;
  /// Keeps run() alive while the receive loop is stopped but replies may
  /// still be posted (drain); reset once the helper actor is gone.
  asio::executor_work_guard<asio::io_context::executor_type> guard;
  std::vector<std::unique_ptr<socket_slot>> sockets;
  std::thread thread;
  caf::actor helper;
  std::atomic<std::size_t> in_flight{0};
  bool receiving = true;  // worker thread only
  udp_request request;    // reused: a warm object parses without allocating
  std::string out;        // reused for inline replies
  std::vector<udp_job> batch;  // jobs of the current receive round

  /// Datagrams read per receive round before the round's jobs go to the
  /// helper in one message.
  static constexpr std::size_t max_round = 32;

  void arm(std::size_t i) {
    socket_slot& s = *sockets[i];
    s.socket.async_receive_from(
        asio::buffer(s.buffer), s.from,
        [this, i](const boost::system::error_code& ec, std::size_t n) { on_receive(i, ec, n); });
  }

  void on_receive(std::size_t i, const boost::system::error_code& ec, std::size_t n) {
    if (!receiving || ec == asio::error::operation_aborted) {
      return;
    }
    if (ec) {
      // ICMP errors of earlier sends surface here on some systems; they
      // concern one client, not the socket.
      spdlog::debug("udp: receive error: {}", ec.message());
    } else {
      bump(shared.received);
      handle(i, std::string_view(sockets[i]->buffer.data(), n));
      // Drain what else is queued on the socket (non-blocking), so that one
      // message to the helper carries the whole round.
      socket_slot& s = *sockets[i];
      for (std::size_t k = 1; k < max_round; ++k) {
        boost::system::error_code rec;
        const std::size_t m = s.socket.receive_from(asio::buffer(s.buffer), s.from, 0, rec);
        if (rec) {
          break;  // would_block, or an error the next async receive sees
        }
        bump(shared.received);
        handle(i, std::string_view(s.buffer.data(), m));
      }
      submit();
    }
    arm(i);
  }

  /// Hands the round's jobs to the helper: one message.
  void submit() {
    if (batch.empty()) {
      return;
    }
    if (batch.size() == 1) {
      caf::anon_send(helper, std::move(batch.front()));
      batch.clear();
      return;
    }
    udp_job_batch b;
    b.jobs = std::move(batch);
    batch = {};
    batch.reserve(max_round);
    caf::anon_send(helper, std::move(b));
  }

  /// Sends without blocking; a full socket buffer drops the reply.
  bool send(std::size_t i, const udp_endpoint& to, std::string_view bytes) {
    boost::system::error_code ec;
    sockets[i]->socket.send_to(asio::buffer(bytes.data(), bytes.size()), to, 0, ec);
    if (ec) {
      bump(shared.dropped_send_failed);
      spdlog::debug("udp: send failed: {}", ec.message());
      return false;
    }
    bump(shared.replied);
    return true;
  }

  void handle(std::size_t i, std::string_view packet) {
    const udp_endpoint from = sockets[i]->from;
    if (from.port() == 0) {
      // Nothing can be sent to port 0; answering would only probe the stack.
      bump(shared.dropped_source_port_zero);
      return;
    }
    const endpoint client = to_endpoint(from);
    const auto now = shared.clock();
    const udp_parse_result r =
        accept_udp_request(packet, shared.cfg.limits, shared.ids, client, now, request);
    switch (r.disposition) {
      case udp_disposition::drop:
        bump(shared.dropped_malformed);
        return;
      case udp_disposition::reply_error:
        out.clear();
        encode_udp_error_reply(out, request.transaction, r.error, packet.size());
        if (send(i, from, out)) {
          bump(shared.error_replies);
        }
        return;
      case udp_disposition::process:
        break;
    }
    if (request.action == udp_action::connect) {
      out.clear();
      encode_udp_connect_response(out, request.transaction, shared.ids.issue(client, now));
      if (send(i, from, out)) {
        bump(shared.connects);
      }
      return;
    }
    if (in_flight.load(std::memory_order_relaxed) >= shared.cfg.max_in_flight) {
      bump(shared.dropped_overload);
      return;
    }
    udp_job job;
    job.w = this;
    job.socket = i;
    job.to = from;
    job.transaction = request.transaction;
    job.v6_peers = client.ip.v6;
    if (request.action == udp_action::announce) {
      announce_request& a = request.announce.request;
      job.announce.peer.ip = shared.cfg.trust_ip_field && a.claimed_ip ? *a.claimed_ip : client.ip;
      job.announce.peer.port = a.port;
      job.announce.request = std::move(a);
    } else {
      job.hashes = request.scrape_hashes;
    }
    in_flight.fetch_add(1, std::memory_order_relaxed);
    batch.push_back(std::move(job));
  }

  /// Runs on this worker's thread: sends a reply a helper encoded.
  void complete(std::size_t i, const udp_endpoint& to, const std::string& bytes, reply_kind kind) {
    if (send(i, to, bytes)) {
      switch (kind) {
        case reply_kind::announce:
          bump(shared.announces);
          break;
        case reply_kind::scrape:
          bump(shared.scrapes);
          break;
        case reply_kind::error:
          bump(shared.error_replies);
          break;
      }
    }
    in_flight.fetch_sub(1, std::memory_order_relaxed);
  }
};

namespace {

using shared_state = udp_server::shared_state;

using flush_atom = caf::atom_constant<caf::atom("udpflush")>;

/// Replies waiting to go to the worker thread. Flushed by a message the
/// helper sends itself when the first reply is queued: it lands behind the
/// swarm responses already in the mailbox, so one post carries them all.
struct reply_queue {
  udp_server::worker* w = nullptr;
  std::vector<udp_reply> replies;
  bool flush_scheduled = false;
  caf::event_based_actor* self = nullptr;

  void push(const udp_job& job, std::string bytes, reply_kind kind) {
    w = job.w;
    replies.push_back(udp_reply{job.socket, job.to, std::move(bytes),
                                static_cast<std::uint8_t>(kind)});
    if (!flush_scheduled) {
      flush_scheduled = true;
      self->send(self, flush_atom::value);
    }
  }

  void flush() {
    flush_scheduled = false;
    if (replies.empty()) {
      return;
    }
    udp_server::worker* target = w;
    asio::post(target->io, [target, batch = std::move(replies)] {
      for (const udp_reply& r : batch) {
        target->complete(r.socket, r.to, r.bytes, static_cast<reply_kind>(r.kind));
      }
    });
    replies = {};
  }
};

/// Scrape: one request per known hash, merged in request order; unknown
/// hashes (and swarms that ended meanwhile, i.e. are empty) count zeros.
struct scrape_state {
  std::vector<swarm_stats> stats;
  std::size_t pending = 0;
  bool failed = false;
};

/// One announce or scrape waiting for its swarm(s).
struct pending_job {
  udp_job job;
  std::shared_ptr<scrape_state> scrape;  ///< set for a scrape
};

/// State of one helper actor. Requests to swarms carry no CAF timeout (a
/// CAF request timeout arms one event per request on the actor clock's
/// thread: a cross-thread wake-up each and a stale timeout message later).
/// Instead every job gets a deadline here and a periodic tick answers the
/// overdue ones with the "try again later" error, as net/tracker_bridge does.
struct helper_state {
  using steady = std::chrono::steady_clock;
  shared_state* sh = nullptr;
  reply_queue out;
  std::uint64_t next_id = 0;
  std::unordered_map<std::uint64_t, pending_job> jobs;
  /// (deadline, id) in insertion order; all jobs share one timeout, so the
  /// front always expires first.
  std::deque<std::pair<steady::time_point, std::uint64_t>> deadlines;

  std::uint64_t track(udp_job&& job, std::shared_ptr<scrape_state> scrape) {
    const std::uint64_t id = next_id++;
    jobs.emplace(id, pending_job{std::move(job), std::move(scrape)});
    deadlines.emplace_back(steady::now() + sh->cfg.request_timeout, id);
    return id;
  }

  void fail(std::uint64_t id) {
    auto it = jobs.find(id);
    if (it == jobs.end()) {
      return;
    }
    bump(sh->swarm_failures);
    std::string bytes;
    encode_udp_error_response(bytes, it->second.job.transaction, swarm_failure_text);
    out.push(it->second.job, std::move(bytes), reply_kind::error);
    jobs.erase(it);
  }

  /// Fails every job whose deadline passed.
  void expire() {
    const auto now = steady::now();
    while (!deadlines.empty() && deadlines.front().first <= now) {
      const auto id = deadlines.front().second;
      deadlines.pop_front();
      fail(id);
    }
  }
};

using helper_ptr = std::shared_ptr<helper_state>;

void send_announce(caf::event_based_actor* self, const helper_ptr& hs, std::uint64_t id,
                   bool may_retry) {
  auto it = hs->jobs.find(id);
  if (it == hs->jobs.end()) {
    return;
  }
  const udp_job& job = it->second.job;
  caf::actor swarm = hs->sh->dir.route(job.announce.request.hash);
  if (!swarm) {  // the directory is shutting down
    hs->fail(id);
    return;
  }
  self->request(swarm, caf::infinite, announce_atom::value, job.announce)
      .then(
          [hs, id](const announce_result& r) {
            auto found = hs->jobs.find(id);
            if (found == hs->jobs.end()) {
              return;  // timed out meanwhile
            }
            const udp_job& j = found->second.job;
            // Only the requester's family: a v4 client cannot use v6 peers
            // and a BEP 15 reply has one peer size.
            const std::string& peers = j.v6_peers ? r.peers6 : r.peers4;
            const std::size_t size = udp_peer_size(j.v6_peers);
            const std::size_t cap = udp_max_peers_per_reply(j.v6_peers) * size;
            const std::size_t len = std::min(cap, peers.size() - peers.size() % size);
            std::string out;
            encode_udp_announce_response(out, j.transaction, r.interval, r.stats,
                                         std::string_view(peers).substr(0, len));
            hs->out.push(j, std::move(out), reply_kind::announce);
            hs->jobs.erase(found);
          },
          [self, hs, id, may_retry](const caf::error& e) {
            if (hs->jobs.find(id) == hs->jobs.end()) {
              return;
            }
            // The swarm ended between route() and our request (idle
            // expiry): route once more, which spawns a fresh one.
            if (may_retry && e == caf::sec::request_receiver_down) {
              send_announce(self, hs, id, false);
              return;
            }
            hs->fail(id);
          });
}

void finish_scrape(const helper_ptr& hs, std::uint64_t id) {
  auto it = hs->jobs.find(id);
  if (it == hs->jobs.end()) {
    return;  // timed out meanwhile
  }
  const scrape_state& st = *it->second.scrape;
  if (st.failed) {
    hs->fail(id);
    return;
  }
  std::string out;
  encode_udp_scrape_response(out, it->second.job.transaction, st.stats.data(), st.stats.size());
  hs->out.push(it->second.job, std::move(out), reply_kind::scrape);
  hs->jobs.erase(it);
}

void run_scrape(caf::event_based_actor* self, const helper_ptr& hs, udp_job&& job) {
  auto st = std::make_shared<scrape_state>();
  st->stats.resize(job.hashes.size());
  std::vector<std::pair<std::size_t, caf::actor>> known;
  for (std::size_t i = 0; i < job.hashes.size(); ++i) {
    if (caf::actor swarm = hs->sh->dir.find(job.hashes[i])) {
      known.emplace_back(i, std::move(swarm));
    }
  }
  st->pending = known.size();
  const std::uint64_t id = hs->track(std::move(job), st);
  if (known.empty()) {
    finish_scrape(hs, id);
    return;
  }
  // All callbacks run in this actor, one at a time: no locking.
  for (auto& [i, swarm] : known) {
    self->request(swarm, caf::infinite, scrape_atom::value)
        .then(
            [hs, st, id, i = i](const swarm_stats& s) {
              st->stats[i] = s;
              if (--st->pending == 0) {
                finish_scrape(hs, id);
              }
            },
            [hs, st, id](const caf::error& e) {
              if (e != caf::sec::request_receiver_down) {
                st->failed = true;  // don't report zeros as truth
              }
              if (--st->pending == 0) {
                finish_scrape(hs, id);
              }
            });
  }
}

/// The actor between one worker and the swarms.
caf::behavior udp_helper(caf::event_based_actor* self, shared_state* sh) {
  auto hs = std::make_shared<helper_state>();
  hs->sh = sh;
  hs->out.self = self;
  const auto tick = std::clamp<std::chrono::milliseconds>(
      sh->cfg.request_timeout / 5, std::chrono::milliseconds(1), std::chrono::milliseconds(1000));
  self->delayed_send(self, tick, caf::tick_atom::value);
  return {
      [self, hs](udp_job& job) {
        if (job.hashes.empty()) {
          const std::uint64_t id = hs->track(std::move(job), nullptr);
          send_announce(self, hs, id, true);
        } else {
          run_scrape(self, hs, std::move(job));
        }
      },
      [self, hs](udp_job_batch& batch) {
        for (udp_job& job : batch.jobs) {
          if (job.hashes.empty()) {
            const std::uint64_t id = hs->track(std::move(job), nullptr);
            send_announce(self, hs, id, true);
          } else {
            run_scrape(self, hs, std::move(job));
          }
        }
      },
      [hs](flush_atom) { hs->out.flush(); },
      [self, hs, tick](caf::tick_atom) {
        hs->expire();
        self->delayed_send(self, tick, caf::tick_atom::value);
      },
  };
}

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
  shared_ = std::make_unique<shared_state>(cfg, std::move(clock), dir);
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
  for (std::size_t k = 0; k < cfg.workers; ++k) {
    auto w = std::make_unique<worker>(*shared_);
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
      s.non_blocking(true);  // sends never block; receives are async anyway
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
    w->helper = sys_.spawn<caf::hidden>(udp_helper, shared_.get());
    for (std::size_t i = 0; i < w->sockets.size(); ++i) {
      w->arm(i);
    }
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
  // 1. Stop receiving, on each worker's own thread.
  for (auto& w : workers_) {
    asio::post(w->io, [raw = w.get()] {
      raw->receiving = false;
      for (auto& s : raw->sockets) {
        boost::system::error_code ignored;
        s->socket.cancel(ignored);
      }
    });
  }
  // 2. Let replies in flight arrive, up to the deadline.
  const auto deadline = std::chrono::steady_clock::now() + drain;
  while (in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  // 3. Stop the helpers; once they are gone nothing posts to the workers.
  std::vector<caf::actor> helpers;
  for (auto& w : workers_) {
    if (w->helper) {
      caf::anon_send_exit(w->helper, caf::exit_reason::user_shutdown);
      helpers.push_back(w->helper);
    }
  }
  if (!helpers.empty()) {
    caf::scoped_actor waiter{sys_, true};
    waiter->wait_for(helpers);
  }
  // 4. Let each worker run what was posted, then end.
  for (auto& w : workers_) {
    w->guard.reset();
    if (w->thread.joinable()) {
      w->thread.join();
    }
    w->helper = nullptr;
    bump(shared_->dropped_shutdown, w->in_flight.exchange(0));
    for (auto& s : w->sockets) {
      boost::system::error_code ignored;
      s->socket.close(ignored);
    }
  }
}

std::size_t udp_server::in_flight() const noexcept {
  std::size_t n = 0;
  for (const auto& w : workers_) {
    n += w->in_flight.load(std::memory_order_relaxed);
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
  c.swarm_failures = get(s.swarm_failures);
  c.dropped_malformed = get(s.dropped_malformed);
  c.dropped_source_port_zero = get(s.dropped_source_port_zero);
  c.dropped_overload = get(s.dropped_overload);
  c.dropped_send_failed = get(s.dropped_send_failed);
  c.dropped_shutdown = get(s.dropped_shutdown);
  return c;
}

}  // namespace sk
