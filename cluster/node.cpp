#include "cluster/node.hpp"

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <utility>

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <spdlog/spdlog.h>

#include "cluster/node_state.hpp"
#include "cluster/placement.hpp"
#include "cluster/remote_calls.hpp"
#include "cluster/secret.hpp"
#include "runtime/directory.hpp"
#include "runtime/typed_behaviors.hpp"

namespace sk::cluster {

namespace {

node_status_part::behavior_type status_behavior(node_ptr self) {
  return {
      [self](node_status_atom) {
        auto& st = self->state;
        node_status out;
        out.name = st.me.name;
        out.swarms = st.dir->size();
        out.handoffs_pending = st.dir->handoffs_pending();
        for (const auto& m : st.known) {
          const char* state = m.name == st.me.name || st.live.count(m.name) != 0 ? "live"
                              : st.suspects.count(m.name) != 0                    ? "suspect"
                              : st.departed.count(m.name) != 0                    ? "left"
                                                                                  : "gone";
          out.members.push_back(member_state{m.name, m.host, m.port, state});
        }
        out.migrations.assign(st.migrations.begin(), st.migrations.end());
        out.arrivals.assign(st.arrivals.begin(), st.arrivals.end());
        const auto fw = st.dir->forwarding();
        out.forwarded = fw.forwarded;
        out.forward_failures = fw.forward_failures;
        out.handoffs_done = fw.handoffs_done;
        out.handoffs_kept = fw.handoffs_kept;
        const auto now = self->clock().now();
        for (const auto& [origin, held] : st.replicas) {
          if (held.empty()) continue;
          node_status::replica_origin o;
          o.origin = origin;
          o.replicas = held.size();
          auto at = st.replica_received.find(origin);
          if (at != st.replica_received.end())
            o.newest_age_ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(now - at->second).count();
          out.replicas.push_back(std::move(o));
        }
        return out;
      },
  };
}

/// The node actor: its rooms (node_state.hpp), composed into one checked
/// behavior of `node_actor`.
node_actor::behavior_type node_behavior(node_ptr self, swarm_directory* dir, cluster_config cfg,
                                        member_info me, wall_clock wall) {
  auto& st = self->state;
  st.dir = dir;
  st.cfg = std::move(cfg);
  st.me = std::move(me);
  st.wall = std::move(wall);
  self->set_error_handler([](caf::error&) {});
  start_membership(self);
  start_replicas(self);
  start_rebalance(self);
  return compose_behavior<node_actor>(relay_behavior(self, *dir), membership_behavior(self),
                                      replica_behavior(self), rebalance_behavior(self),
                                      migration_behavior(self), status_behavior(self));
}

}  // namespace

tls_identity configure_actor_system(caf::actor_system_config& sys_cfg, const cluster_config& cfg) {
  if (!openssl_error_queue_fix()) throw std::logic_error("unreachable");
  // Under $TMPDIR when set (tests put it in their own directory).
  const char* tmp = std::getenv("TMPDIR");
  auto id = write_tls_identity(cfg.secret, tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
  sys_cfg.load<caf::io::middleman>();
  sys_cfg.load<caf::openssl::manager>();
  sys_cfg.openssl_certificate = id.cert_file;
  sys_cfg.openssl_key = id.key_file;
  sys_cfg.openssl_cafile = id.cert_file;
  sys_cfg.set("middleman.heartbeat-interval", caf::timespan{cfg.heartbeat_interval});
  sys_cfg.set("middleman.connection-timeout", caf::timespan{cfg.connection_timeout});
  register_types(sys_cfg);
  return id;
}

node_actor spawn_node_actor(caf::actor_system& sys, swarm_directory& dir, const cluster_config& cfg,
                            member_info me, wall_clock wall) {
  return sys.spawn<caf::hidden>(node_behavior, &dir, cfg, std::move(me), std::move(wall));
}

cluster_node::cluster_node(caf::actor_system& sys, swarm_directory& dir, const cluster_config& cfg,
                           wall_clock wall)
    : sys_(sys), dir_(dir), cfg_(cfg), wall_(std::move(wall)) {
  if (auto err = cfg_.validate(); !err.empty()) throw std::invalid_argument(err);
  self_.host = cfg_.advertised_host();
  self_.port = cfg_.port;
  self_.name = cfg_.node_name.empty() ? self_.host + ":" + std::to_string(cfg_.port)
                                      : cfg_.node_name;
  self_.incarnation = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(wall_().time_since_epoch()).count());
}

cluster_node::~cluster_node() { stop(); }

void cluster_node::start() {
  if (actor_) return;
  forwarder_options fo;
  fo.timeout = cfg_.forward_timeout;
  // Before the node actor's first view: from then on the directory makes
  // forwarders for the hashes other members own.
  dir_.set_placement(make_placement(sys_, fo));
  // Published before the actor dials anybody, so a peer dialling back finds
  // it. The port speaks TLS only (certificates required both ways).
  actor_ = spawn_node_actor(sys_, dir_, cfg_, self_, wall_);
  sys_.registry().put(node_registry_key, caf::actor_cast<caf::strong_actor_ptr>(actor_));
  auto port = caf::openssl::publish(actor_, cfg_.port, cfg_.bind.c_str(), true);
  if (!port) {
    sys_.registry().erase(node_registry_key);
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    actor_ = node_actor{};
    throw std::runtime_error("cannot listen on cluster port " + cfg_.bind + ":" +
                             std::to_string(cfg_.port) + ": " + sys_.render(port.error()));
  }
  port_ = *port;
  spdlog::info("cluster: node {} listening on {}:{} (TLS, shared-secret identity)", self_.name,
               cfg_.bind, port_);
}

std::vector<std::string> cluster_node::members() {
  if (!actor_) return {};
  caf::scoped_actor self{sys_};
  std::vector<std::string> out;
  self->request(actor_, std::chrono::seconds(5), members_atom::value, caf::get_atom::value)
      .receive([&](std::vector<std::string>& names) { out = std::move(names); },
               [](caf::error&) {});
  return out;
}

std::size_t cluster_node::leave(std::chrono::milliseconds deadline) {
  if (!actor_) return 0;
  caf::scoped_actor self{sys_};
  std::size_t moved = 0;
  self->request(actor_, deadline, caf::leave_atom::value)
      .receive([&](std::uint64_t n) { moved = static_cast<std::size_t>(n); },
               [&](caf::error& err) {
                 spdlog::warn("cluster: leave did not finish: {}", sys_.render(err));
               });
  return moved;
}

void cluster_node::stop() {
  if (!actor_) return;
  sys_.registry().erase(node_registry_key);
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  actor_ = node_actor{};
}

}  // namespace sk::cluster
