#include "admin/admin_server.hpp"

#include <pthread.h>

#include <atomic>
#include <future>
#include <optional>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "admin/admin_routes.hpp"
#include "admin/admin_state.hpp"
#include "admin/admin_transport.hpp"

namespace sk {

namespace asio = boost::asio;

/// The I/O thread with its listener, and the admin actor.
struct admin_server::impl {
  caf::actor_system& sys;
  std::shared_ptr<admin_api::admin_state> sh;
  std::shared_ptr<admin_api::reply_gate> gate = std::make_shared<admin_api::reply_gate>();
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  admin_api::admin_listener listener{ioc, sh, gate};
  admin_api::admin_actor_type handler;
  std::thread thread;
  std::atomic<std::uint16_t> port{0};
  bool running = false;

  impl(caf::actor_system& s, std::shared_ptr<admin_api::admin_state> state)
      : sys(s), sh(std::move(state)) {}
};

admin_server::admin_server(caf::actor_system& sys, swarm_directory& dir, const admin_config& cfg,
                           admin_node_info info, const udp_server* udp, const http_server* http,
                           const gateway* gw, const reachability_prober* prober) {
  auto sh = std::make_shared<admin_api::admin_state>();
  sh->cfg = cfg;
  sh->info = std::move(info);
  sh->dir = &dir;
  sh->udp = udp;
  sh->http = http;
  sh->gw = gw;
  sh->prober = prober;
  sh->host_name = admin_api::local_host_name();
  impl_ = std::make_unique<impl>(sys, std::move(sh));
}

admin_server::~admin_server() { stop(); }

void admin_server::start() {
  auto& m = *impl_;
  if (m.running) return;
  if (m.sh->cfg.token.empty()) throw std::invalid_argument("admin server needs a token");
  m.port = m.listener.open();
  m.handler = m.sys.spawn<caf::hidden>(admin_api::admin_actor, m.sh);
  m.gate->open(m.ioc);
  m.guard.emplace(asio::make_work_guard(m.ioc));
  m.listener.start(m.handler);
  m.thread = std::thread([&m] {
    pthread_setname_np(pthread_self(), "sk-admin");
    for (;;) {
      try {
        m.ioc.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("sk-admin: unhandled exception: {}", e.what());
      }
    }
  });
  m.running = true;
  spdlog::info("admin API on {}:{}", m.sh->cfg.bind, m.port.load());
}

std::uint16_t admin_server::port() const noexcept { return impl_->port.load(); }

void admin_server::stop() {
  auto& m = *impl_;
  if (!m.running) return;
  m.running = false;
  // Close the listener and every connection on their thread, then drop
  // replies still on their way from CAF threads (the gate), then stop the
  // actor and the thread.
  std::promise<void> done;
  asio::post(m.ioc, [&m, &done] {
    m.listener.close();
    done.set_value();
  });
  done.get_future().wait();
  m.gate->close();
  caf::anon_send_exit(m.handler, caf::exit_reason::user_shutdown);
  m.guard.reset();
  m.ioc.stop();
  m.thread.join();
}

}  // namespace sk
