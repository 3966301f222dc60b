#include "net/http/http_server.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <stdexcept>
#include <thread>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include "net/address_key.hpp"
#include "net/http/http_session.hpp"

namespace sk {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

namespace {

std::string endpoint_text(const tcp::endpoint& ep) {
  const auto a = ep.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(ep.port());
}

}  // namespace

/// Accepts connections on one endpoint and hands each to the next I/O
/// context (round robin), which also picks the connection's lane.
class http_listener : public std::enable_shared_from_this<http_listener> {
 public:
  using context_picker = std::function<std::pair<asio::io_context*, std::size_t>()>;
  using acceptor_type = asio::basic_socket_acceptor<tcp, asio::io_context::executor_type>;

  http_listener(asio::io_context& ioc, http_context& ctx, context_picker pick)
      : ctx_(ctx), pick_(std::move(pick)), acceptor_(ioc.get_executor()), retry_(ioc) {}

  /// Opens, binds and listens; returns the error instead of throwing so the
  /// caller can word it (and tolerate a missing IPv6 stack).
  beast::error_code open(const tcp::endpoint& ep, bool v6_only) {
    beast::error_code ec;
    acceptor_.open(ep.protocol(), ec);
    if (ec) return ec;
    acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (ec) return ec;
    // Responses are single writes and Nagle would only delay pipelined ones.
    // Linux copies TCP_NODELAY to accepted sockets: one setsockopt here
    // instead of one per connection (see http_session::start).
    acceptor_.set_option(tcp::no_delay(true), ec);
    if (ec) return ec;
    if (ep.address().is_v6()) {
      acceptor_.set_option(asio::ip::v6_only{v6_only}, ec);
      if (ec) return ec;
    }
    defer_accept();
    acceptor_.bind(ep, ec);
    if (ec) return ec;
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    return ec;
  }

  /// Sets TCP_DEFER_ACCEPT from `http.defer-accept`. Only a speed-up: a
  /// system that refuses it gets a warning and connections accepted at once.
  void defer_accept() {
#ifdef TCP_DEFER_ACCEPT
    const auto ms = ctx_.cfg.defer_accept.count();
    if (ms <= 0) return;
    const int seconds = static_cast<int>(std::min<std::int64_t>((ms + 999) / 1000, 86400));
    if (::setsockopt(acceptor_.native_handle(), IPPROTO_TCP, TCP_DEFER_ACCEPT, &seconds,
                     sizeof seconds) != 0)
      spdlog::warn("http: TCP_DEFER_ACCEPT refused ({}); connections are accepted at once",
                   std::strerror(errno));
#endif
  }

  tcp::endpoint local_endpoint() const {
    beast::error_code ec;
    return acceptor_.local_endpoint(ec);
  }

  void run() {
    asio::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->do_accept(); });
  }

  /// Closes the acceptor on its I/O thread and waits until that happened.
  void stop() {
    std::promise<void> done;
    asio::dispatch(acceptor_.get_executor(), [this, &done] {
      stopped_ = true;
      beast::error_code ec;
      acceptor_.close(ec);
      retry_.cancel();
      done.set_value();
    });
    done.get_future().wait();
  }

 private:
  void do_accept() {
    if (stopped_) return;
    auto [ioc, lane] = pick_();
    lane_ = lane;
    // The new socket lives on the chosen context: that I/O thread serves the
    // whole connection. The peer's address comes with the accept (no
    // getpeername call).
    acceptor_.async_accept(
        *ioc, peer_, beast::bind_front_handler(&http_listener::on_accept, shared_from_this()));
  }

  void on_accept(beast::error_code ec, http_session::socket_type socket) {
    if (stopped_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      // EMFILE/ENFILE/ENOBUFS: retrying at once would spin. Back off briefly.
      spdlog::warn("http accept: {}", ec.message());
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([self = shared_from_this()](beast::error_code wait_ec) {
        if (!wait_ec) self->do_accept();
      });
      return;
    }
    admit(std::move(socket));
    do_accept();
  }

  /// The connection limits: the address's cap (trusted proxies exempt),
  /// then the total, where a waiting connection is shed for the new one.
  void admit(http_session::socket_type&& socket) {
    const ip_address peer = to_ip_address(peer_.address());
    const auto now = std::chrono::steady_clock::now();
    connection_slots::ticket slot;
    if (!ctx_.cfg.proxies.contains(peer)) {
      slot = ctx_.per_address.open(peer);
      if (!slot.held) {
        ctx_.refused_per_address.fetch_add(1, std::memory_order_relaxed);
        if (ctx_.per_address_reached.hit(now))
          spdlog::warn("http: {} holds http.max-connections-per-address ({}) connections; its "
                       "further connections are closed at once",
                       subscriber_text(peer), ctx_.cfg.max_connections_per_address);
        refuse(socket);
        return;
      }
    }
    if (ctx_.session_count.load(std::memory_order_relaxed) >= ctx_.cfg.max_connections) {
      const bool shed = ctx_.shed_one();
      if (ctx_.total_reached.hit(now))
        spdlog::warn("http: http.max-connections ({}) reached: the connections waiting longest "
                     "for a request (idle, slow) make room for new ones; new connections are "
                     "closed only while every one is busy",
                     ctx_.cfg.max_connections);
      if (!shed) {
        ctx_.refused_total.fetch_add(1, std::memory_order_relaxed);
        ctx_.per_address.close(slot);
        refuse(socket);
        return;
      }
    }
    auto session = std::make_shared<http_session>(std::move(socket), peer_, ctx_, lane_, slot);
    auto [pos, drain_now] = ctx_.add(session);
    session->start(pos, drain_now);
  }

  static void refuse(http_session::socket_type& socket) {
    beast::error_code ignored;
    socket.close(ignored);
  }

  http_context& ctx_;
  context_picker pick_;
  acceptor_type acceptor_;
  http_session::timer_type retry_;
  tcp::endpoint peer_;  ///< filled by the accept in flight
  std::size_t lane_ = 0;
  bool stopped_ = false;
};

struct http_server::impl {
  impl(const http_server_config& cfg, gateway& gw) : ctx(cfg, gw) {}

  /// Sessions still referenced by queued jobs, replies or handlers need ctx
  /// (their registry entry) and their io_context (their socket) when they
  /// die: release them while both still exist, lanes first.
  ~impl() {
    for (auto& l : ctx.lanes) l->discard();
    listeners.clear();
    guards.clear();  // they point into the contexts
    contexts.clear();
  }

  // Declaration order is destruction order in reverse: listeners and any
  // leftover sessions die with the contexts, before ctx.
  http_context ctx;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<http_listener>> listeners;
  std::atomic<std::size_t> next_context{0};
  bool accepting = false;
  bool running = false;

  /// Each lane's sweep of its gateway lane (timeouts, the connection
  /// limits' quiet time), from now on.
  void start_sweeping() {
    for (auto& lane : ctx.lanes)
      asio::post(lane->ioc(), [raw = lane.get()] { raw->start_sweeping(); });
  }

  std::pair<asio::io_context*, std::size_t> pick_context() {
    const std::size_t i = next_context.fetch_add(1, std::memory_order_relaxed) % contexts.size();
    return {contexts[i].get(), i};
  }

  /// `tolerate_missing_family`: a host without that address family (no
  /// IPv6 stack) only gets a warning. Anything else, e.g. the port being in
  /// use, is fatal: serving one family silently would hide the problem.
  void listen(const tcp::endpoint& ep, bool v6_only, bool tolerate_missing_family) {
    auto l = std::make_shared<http_listener>(*contexts[0], ctx, [this] { return pick_context(); });
    if (auto ec = l->open(ep, v6_only)) {
      const bool missing_family = ec == asio::error::address_family_not_supported ||
                                  ec == boost::system::errc::address_not_available ||
                                  ec == asio::error::no_protocol_option;
      if (tolerate_missing_family && missing_family) {
        spdlog::warn("not listening on {}: {}", endpoint_text(ep), ec.message());
        return;
      }
      throw std::runtime_error("cannot listen on " + endpoint_text(ep) + ": " + ec.message());
    }
    listeners.push_back(std::move(l));
  }
};

http_server::http_server(const http_server_config& cfg, gateway& gw)
    : impl_(std::make_unique<impl>(cfg, gw)) {}

http_server::~http_server() { stop(); }

void http_server::start(bool starting) {
  auto& m = *impl_;
  const auto& cfg = m.ctx.cfg;
  const std::size_t n = cfg.io_threads == 0 ? 1 : cfg.io_threads;
  const std::size_t first_lane = m.ctx.gw.add_lanes(n);
  for (std::size_t i = 0; i < n; ++i) {
    // Concurrency hint 1: exactly one thread runs each context (posts from
    // other threads, e.g. swarm replies, still lock as usual).
    m.contexts.push_back(std::make_unique<asio::io_context>(1));
    m.guards.push_back(asio::make_work_guard(*m.contexts.back()));
    m.ctx.lanes.push_back(
        std::make_unique<http_lane>(*m.contexts.back(), m.ctx.gw, first_lane + i));
  }
  if (cfg.bind_addresses.empty()) {
    // Both families on their own sockets; either may be missing on a host
    // (no IPv6 stack), but not both.
    m.listen(tcp::endpoint{asio::ip::address_v4::any(), cfg.port}, false, true);
    m.listen(tcp::endpoint{asio::ip::address_v6::any(), cfg.port}, true, true);
    if (m.listeners.empty())
      throw std::runtime_error("cannot listen on port " + std::to_string(cfg.port) +
                               " (neither IPv4 nor IPv6)");
  } else {
    for (const auto& text : cfg.bind_addresses) {
      beast::error_code ec;
      const auto addr = asio::ip::make_address(text, ec);
      if (ec) throw std::runtime_error("invalid bind address '" + text + "'");
      m.listen(tcp::endpoint{addr, cfg.port}, addr.is_v6(), false);
    }
  }
  m.ctx.serving = true;
  m.ctx.starting.store(starting, std::memory_order_release);
  m.accepting = true;
  for (auto& l : m.listeners) l->run();
  m.ctx.lanes.front()->on_tick = [ctx = &m.ctx](std::chrono::steady_clock::time_point now) {
    ctx->settle(now);
  };
  // A starting server's lanes sweep from ready() on: until then nothing of
  // theirs is in the gateway, and other front ends may be adding lanes.
  if (!starting) m.start_sweeping();
  for (std::size_t i = 0; i < n; ++i) {
    m.threads.emplace_back([ioc = m.contexts[i].get(), i] {
      const std::string name = "sk-io-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      for (;;) {
        try {
          ioc->run();
          return;
        } catch (const std::exception& e) {
          // A handler threw (bad_alloc, a bug): log and keep serving.
          spdlog::error("{}: unhandled exception: {}", name, e.what());
        }
      }
    });
  }
  m.running = true;
}

void http_server::ready() {
  auto& m = *impl_;
  if (!m.ctx.starting.load()) return;
  m.start_sweeping();
  // Release: a session that sees the flag down also sees the gateway's
  // lanes as the other front ends left them.
  m.ctx.starting.store(false, std::memory_order_release);
}

std::vector<std::string> http_server::local_endpoints() const {
  std::vector<std::string> out;
  for (const auto& l : impl_->listeners) out.push_back(endpoint_text(l->local_endpoint()));
  return out;
}

void http_server::stop_accepting() {
  auto& m = *impl_;
  m.ctx.serving = false;
  if (!m.accepting) return;
  m.accepting = false;
  for (auto& l : m.listeners) l->stop();
}

bool http_server::drain(std::chrono::steady_clock::duration timeout) {
  auto& m = *impl_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::weak_ptr<http_session>> snapshot;
  {
    std::lock_guard<std::mutex> lock{m.ctx.mutex};
    m.ctx.draining = true;
    for (const auto& e : m.ctx.sessions) snapshot.push_back(e.session);
  }
  for (auto& w : snapshot)
    if (auto s = w.lock()) s->drain();
  snapshot.clear();
  std::unique_lock<std::mutex> lock{m.ctx.mutex};
  return m.ctx.all_closed.wait_until(lock, deadline, [&] { return m.ctx.sessions.empty(); });
}

void http_server::stop() {
  auto& m = *impl_;
  if (!m.running) return;
  stop_accepting();
  m.guards.clear();
  for (auto& c : m.contexts) c->stop();
  for (auto& t : m.threads) t.join();
  m.threads.clear();
  m.running = false;
}

std::size_t http_server::connection_count() const noexcept {
  return impl_->ctx.session_count.load(std::memory_order_relaxed);
}

http_connection_limits http_server::connection_limits() const {
  const http_context& c = impl_->ctx;
  http_connection_limits l;
  l.refused_per_address = c.refused_per_address.load(std::memory_order_relaxed);
  l.refused_total = c.refused_total.load(std::memory_order_relaxed);
  l.shed_idle = c.shed_idle.load(std::memory_order_relaxed);
  l.shed_slow = c.shed_slow.load(std::memory_order_relaxed);
  l.addresses = c.per_address.addresses();
  l.busiest = c.per_address.busiest();
  l.per_address_reached = c.per_address_reached.reached();
  l.total_reached = c.total_reached.reached();
  return l;
}

const http_server_config& http_server::config() const noexcept { return impl_->ctx.cfg; }

const char* to_string(http_outcome o) noexcept {
  switch (o) {
    case http_outcome::announce_ok:
      return "announce_ok";
    case http_outcome::announce_refused:
      return "announce_refused";
    case http_outcome::announce_denied:
      return "announce_denied";
    case http_outcome::announce_failure:
      return "announce_failure";
    case http_outcome::scrape_ok:
      return "scrape_ok";
    case http_outcome::scrape_failure:
      return "scrape_failure";
    case http_outcome::bad_request:
      return "bad_request";
    case http_outcome::not_found:
      return "not_found";
    case http_outcome::method_not_allowed:
      return "method_not_allowed";
    case http_outcome::health:
      return "health";
    case http_outcome::rate_limited:
      return "rate_limited";
  }
  return "unknown";
}

// The lanes are created by start() before the admin server (the only other
// reader) starts, and never removed while the server object lives.
http_counters http_server::counters() const noexcept {
  http_counters c;
  for (const auto& lane : impl_->ctx.lanes)
    for (std::size_t i = 0; i < http_outcome_count; ++i) c.by_outcome[i] += lane->outcome_count(i);
  return c;
}

latency_histogram::snapshot http_server::announce_latency() const noexcept {
  latency_histogram::snapshot s;
  for (const auto& lane : impl_->ctx.lanes) s += lane->latency.read();
  return s;
}

}  // namespace sk
