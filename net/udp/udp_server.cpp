#include "net/udp/udp_server.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <future>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/post.hpp>

#include "net/udp/udp_shared.hpp"
#include "net/udp/udp_worker.hpp"
#include "protocol/connection_id.hpp"

namespace sk {

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
    box.fd4 = w->socket_for(false);
    box.fd6 = w->socket_for(true);
    for (std::size_t i = 0; i < w->sockets.size(); ++i) {
      w->arm(i);
    }
    w->start_timer();
    w->thread = std::thread([raw = w.get()] {
      udp_detail::on_worker_thread = true;
      raw->io.run();
    });
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
      raw->ticking = false;
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
  c.rate_limited = get(s.rate_limited);
  c.rerouted = s.gw.counters(transport::udp).rerouted;
  c.dropped_malformed = get(s.dropped_malformed);
  c.dropped_source_port_zero = get(s.dropped_source_port_zero);
  c.dropped_overload = get(s.dropped_overload);
  c.dropped_send_failed = get(s.dropped_send_failed);
  c.dropped_shutdown = get(s.dropped_shutdown);
  c.dropped_rate_limited = get(s.dropped_rate_limited);
  c.direct_replies = get(s.direct_replies);
  return c;
}

latency_histogram::snapshot udp_server::announce_latency() const noexcept {
  latency_histogram::snapshot out;
  for (const auto& w : workers_) {
    out += w->latency.read();
    out += shared_->outboxes[w->index]->latency.read();
  }
  return out;
}

}  // namespace sk
