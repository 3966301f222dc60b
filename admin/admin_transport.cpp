#include "admin/admin_transport.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include "admin/admin_assets.hpp"
#include "admin/admin_auth.hpp"
#include "admin/admin_job.hpp"
#include "admin/admin_state.hpp"

namespace sk::admin_api {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

/// One connection: reads a request, answers it, reads the next while the
/// client keeps the connection alive.
class admin_session : public std::enable_shared_from_this<admin_session> {
 public:
  admin_session(tcp::socket socket, std::shared_ptr<admin_state> state,
                std::shared_ptr<reply_gate> gate, admin_actor_type handler)
      : stream_(std::move(socket)),
        state_(std::move(state)),
        gate_(std::move(gate)),
        handler_(std::move(handler)) {}

  void start() {
    state_->connections_open.fetch_add(1, std::memory_order_relaxed);
    do_read();
  }
  ~admin_session() { state_->connections_open.fetch_sub(1, std::memory_order_relaxed); }

  /// How readily this session gives up its slot: 0 never authenticated, 1
  /// authenticated and waiting for its next request, 2 busy (a request with
  /// the actor, or a response being written on an authenticated
  /// connection); `since`: when it began waiting.
  int shed_rank() const noexcept {
    if (closed_) return 3;
    if (!authenticated_) return 0;
    return reading_ ? 1 : 2;
  }
  std::chrono::steady_clock::time_point waiting_since() const noexcept { return since_; }

  void close() {
    if (closed_) return;
    closed_ = true;
    hold_.reset();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

 private:
  void do_read() {
    if (closed_) return;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(state_->cfg.max_header_bytes));
    parser_->body_limit(state_->cfg.max_body_bytes);
    // Until an authenticated request came, the short deadline: an idle or
    // unauthenticated connection ends fast.
    stream_.expires_after(authenticated_ ? state_->cfg.io_timeout : state_->cfg.auth_timeout);
    reading_ = true;
    since_ = std::chrono::steady_clock::now();
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&admin_session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    reading_ = false;
    if (closed_) return;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return close();
    }
    if (ec == http::error::body_limit) return respond_error(413, "request body too large", false);
    if (ec == http::error::header_limit)
      return respond_error(431, "request header fields too large", false);
    if (ec) return respond_error(400, "malformed HTTP request", false);
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    if (req.target().size() > state_->cfg.max_url_length)
      return respond_error(414, "request target too long", false);
    // The web console's files (/, /console/...) hold no data: served without
    // the token (admin/admin_assets.hpp); the page sends it on its API calls.
    if (auto page = admin_console_response(req)) {
      state_->count(page->result_int());
      res_ = std::move(*page);
      res_.keep_alive(keep_alive_);
      stream_.expires_after(state_->cfg.io_timeout);
      return http::async_write(
          stream_, res_, beast::bind_front_handler(&admin_session::on_write, shared_from_this()));
    }
    const auto auth = req[http::field::authorization];
    const auto method = req.method_string();
    const auto target = req.target();
    const auto who = authorize({method.data(), method.size()}, {target.data(), target.size()},
                               {auth.data(), auth.size()}, state_->cfg.token,
                               state_->cfg.metrics_token);
    if (who.status != 0) {
      state_->unauthorized.fetch_add(1, std::memory_order_relaxed);
      return respond_error(who.status, who.message, keep_alive_);
    }
    authenticated_ = true;
    auto job = std::make_shared<admin_job>();
    job->method = std::string(req.method_string());
    job->target = std::string(req.target());
    job->body = std::move(req.body());
    std::weak_ptr<admin_session> weak = shared_from_this();
    job->reply_fn = [gate = gate_, weak](unsigned status, std::string ct, std::string body) {
      gate->post([weak, status, ct = std::move(ct), body = std::move(body)]() mutable {
        if (auto s = weak.lock())
          s->respond(status, std::move(ct), std::move(body), s->keep_alive_);
      });
    };
    // Held until the reply arrives (nothing else refers to the session
    // while no I/O is pending); released by respond() or close().
    hold_ = shared_from_this();
    caf::anon_send(handler_, std::move(job));
  }

  void respond_error(unsigned status, const std::string& message, bool keep_alive) {
    respond(status, "application/json",
            nlohmann::json{{"error", message}}.dump(-1, ' ', false,
                                                    nlohmann::json::error_handler_t::replace) +
                "\n",
            keep_alive);
  }

  void respond(unsigned status, std::string content_type, std::string body, bool keep_alive) {
    if (closed_) return;
    state_->count(status);
    auto self = shared_from_this();
    hold_.reset();
    res_ = {};
    res_.version(11);
    res_.result(static_cast<http::status>(status));
    res_.set(http::field::server, "swarmkeeper-admin");
    res_.set(http::field::content_type, content_type);
    res_.set(http::field::cache_control, "no-store");
    if (status == 401) res_.set(http::field::www_authenticate, "Bearer");
    res_.keep_alive(keep_alive);
    res_.body() = std::move(body);
    res_.prepare_payload();
    stream_.expires_after(state_->cfg.io_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&admin_session::on_write, std::move(self)));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (closed_) return;
    if (ec || !res_.keep_alive()) return close();
    do_read();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  std::shared_ptr<admin_state> state_;
  std::shared_ptr<reply_gate> gate_;
  admin_actor_type handler_;
  std::shared_ptr<admin_session> hold_;
  std::chrono::steady_clock::time_point since_{};
  bool keep_alive_ = true;
  bool closed_ = false;
  bool reading_ = false;
  /// A request with a valid token came on this connection.
  bool authenticated_ = false;
};

admin_listener::admin_listener(asio::io_context& ioc, std::shared_ptr<admin_state> state,
                               std::shared_ptr<reply_gate> gate)
    : state_(std::move(state)), tick_(ioc), gate_(std::move(gate)), acceptor_(ioc) {}

admin_listener::~admin_listener() = default;

std::uint16_t admin_listener::open() {
  const admin_config& cfg = state_->cfg;
  beast::error_code ec;
  const auto addr = asio::ip::make_address(cfg.bind, ec);
  if (ec) throw std::runtime_error("invalid admin bind address '" + cfg.bind + "'");
  const tcp::endpoint ep{addr, cfg.port};
  auto fail = [&](const char* what) {
    throw std::runtime_error(std::string("admin server: cannot ") + what + " " + cfg.bind + ":" +
                             std::to_string(cfg.port) + ": " + ec.message());
  };
  acceptor_.open(ep.protocol(), ec);
  if (ec) fail("open");
  acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  acceptor_.bind(ep, ec);
  if (ec) fail("bind");
  acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail("listen on");
  return acceptor_.local_endpoint(ec).port();
}

void admin_listener::start(admin_actor_type handler) {
  handler_ = std::move(handler);
  do_accept();
  tick();
}

void admin_listener::tick() {
  constexpr auto quiet = std::chrono::seconds(30);
  if (state_->connections_reached.load(std::memory_order_relaxed) &&
      std::chrono::steady_clock::now() - last_full_ >= quiet &&
      state_->connections_reached.exchange(false, std::memory_order_relaxed))
    spdlog::info("admin: connections back under admin.max-connections ({}) for {} s",
                 state_->cfg.max_connections, quiet.count());
  tick_.expires_after(std::chrono::seconds(1));
  tick_.async_wait([this](beast::error_code ec) {
    if (!ec && acceptor_.is_open()) tick();
  });
}

bool admin_listener::shed_one() {
  std::shared_ptr<admin_session> victim;
  int best_rank = 2;
  std::chrono::steady_clock::time_point best_since{};
  for (auto& w : sessions_) {
    auto s = w.lock();
    if (!s) continue;
    const int rank = s->shed_rank();
    if (rank >= 2) continue;
    if (!victim || rank < best_rank || (rank == best_rank && s->waiting_since() < best_since)) {
      victim = std::move(s);
      best_rank = rank;
      best_since = victim->waiting_since();
    }
  }
  if (!victim) return false;
  victim->close();
  return true;
}

void admin_listener::close() {
  beast::error_code ec;
  acceptor_.close(ec);
  tick_.cancel();
  for (auto& w : sessions_)
    if (auto s = w.lock()) s->close();
  sessions_.clear();
}

void admin_listener::do_accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      spdlog::debug("admin accept: {}", ec.message());
    } else {
      sessions_.erase(std::remove_if(sessions_.begin(), sessions_.end(),
                                     [](const auto& w) { return w.expired(); }),
                      sessions_.end());
      bool admit = true;
      // Closed sessions linger until their aborted operations complete:
      // only open ones take a slot.
      const auto open = static_cast<std::size_t>(
          std::count_if(sessions_.begin(), sessions_.end(), [](const auto& w) {
            auto s = w.lock();
            return s && s->shed_rank() < 3;
          }));
      if (open >= state_->cfg.max_connections) {
        last_full_ = std::chrono::steady_clock::now();
        if (!state_->connections_reached.exchange(true, std::memory_order_relaxed))
          spdlog::warn("admin: admin.max-connections ({}) reached: connections that sent no "
                       "authenticated request (the oldest first), then idle ones, make room "
                       "for new ones",
                       state_->cfg.max_connections);
        admit = shed_one();
        if (admit) {
          state_->connections_shed.fetch_add(1, std::memory_order_relaxed);
        } else {
          state_->connections_refused.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (!admit) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        auto s = std::make_shared<admin_session>(std::move(socket), state_, gate_, handler_);
        sessions_.push_back(s);
        s->start();
      }
    }
    do_accept();
  });
}

}  // namespace sk::admin_api
