#pragma once
/// The admin API's HTTP/1.1 transport: a Beast listener and one session per
/// connection, all on the admin server's one I/O thread.
///
///   accept ─▶ at admin.max-connections? ─▶ shed one: never authenticated
///      │                                    (oldest first), else idle
///      │                                    authenticated; none ─▶ close
///      │                                    the new one at once
///   session: read one request (deadline auth_timeout until an authenticated
///   request came, then io_timeout; fresh parser with the header and body
///   limits)
///      ├─ end of stream, timeout, reset ─────────────────▶ close
///      ├─ body 413 · headers 431 · malformed 400 · target 414 ─▶ answer, close
///      ├─ console file (admin/admin_assets.hpp) ─────────▶ answer, no token
///      ├─ token missing or wrong (admin/admin_auth.hpp) ─▶ 401, keep-alive
///      └─ admin_job ── anon_send ──▶ admin actor ── reply posted back ──▶ write
///   write (deadline io_timeout) ─▶ keep-alive? read the next request : close
///
/// One request per connection at a time (no pipelining: admin traffic is
/// tiny); while its job is with the actor the session reads nothing.
///
/// Why the operator always gets in: idle and unauthenticated connections
/// hold a slot for auth_timeout at most, and a new connection takes the
/// slot of the oldest of them, so a flood of such connections only churns
/// among itself; a connection is refused only while every slot serves an
/// authenticated request.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <caf/actor.hpp>

#include "admin/admin_job.hpp"

namespace sk::admin_api {

struct admin_state;
class admin_session;

/// Where replies go: the I/O thread, while it runs. Closed (under the lock)
/// by stop() before the io_context goes away, so a late reply from a CAF
/// thread is dropped instead of touching a dead context.
class reply_gate {
 public:
  void open(boost::asio::io_context& ioc) {
    std::lock_guard<std::mutex> guard{mtx_};
    ioc_ = &ioc;
  }
  void close() {
    std::lock_guard<std::mutex> guard{mtx_};
    ioc_ = nullptr;
  }
  template <class F>
  void post(F&& f) {
    std::lock_guard<std::mutex> guard{mtx_};
    if (ioc_ != nullptr) boost::asio::post(*ioc_, std::forward<F>(f));
  }

 private:
  std::mutex mtx_;
  boost::asio::io_context* ioc_ = nullptr;
};

/// The listening socket and the sessions it accepted. Everything but
/// open() runs on the I/O thread (open() and start() before it runs).
class admin_listener {
 public:
  admin_listener(boost::asio::io_context& ioc, std::shared_ptr<admin_state> state,
                 std::shared_ptr<reply_gate> gate);
  ~admin_listener();
  admin_listener(const admin_listener&) = delete;
  admin_listener& operator=(const admin_listener&) = delete;

  /// Binds and listens on `cfg.bind`:`cfg.port`. Returns the bound port.
  /// Throws std::runtime_error for an invalid address or a failed bind.
  std::uint16_t open();
  /// Starts accepting; every authenticated request goes to `handler`.
  void start(admin_actor_type handler);
  /// Closes the listener and every open connection.
  void close();

 private:
  void do_accept();
  /// Makes room for a new connection; false when every slot is busy.
  bool shed_one();
  /// Ends the limit's "reached" state after a quiet time (every second).
  void tick();

  std::shared_ptr<admin_state> state_;
  boost::asio::steady_timer tick_;
  std::chrono::steady_clock::time_point last_full_{};
  std::shared_ptr<reply_gate> gate_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::vector<std::weak_ptr<admin_session>> sessions_;
  admin_actor_type handler_;
};

}  // namespace sk::admin_api
