#include <chrono>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "admin/admin_log.hpp"
#include "admin/admin_state_file.hpp"
#include "net/http/http_server.hpp"
#include "net/udp/udp_server.hpp"

namespace sk::admin_api {

void get_node(admin_call& c) {
  const admin_state& sh = *c.sh;
  json j;
  j["version"] = sh.info.version;
  j["node"] = sh.node_name();
  j["host"] = sh.host_name;
  {
    auto v = sh.dir->view();
    j["cluster_node"] = v ? json(v->self) : json(nullptr);
  }
  j["uptime_seconds"] = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now() - sh.started)
                            .count();
  json config = json::object();
  for (const auto& [k, v] : sh.info.config) config[k] = v;
  j["config"] = std::move(config);
  j["scheduler_threads"] = c.self->system().scheduler().num_workers();
  j["actors"] = {{"swarms", sh.dir->size()}, {"running", c.self->system().registry().running()}};
  j["memory"] = {{"resident_bytes", resident_bytes()}};
  // The level now (PUT /api/log/level changes it); the format is log.format.
  j["log"] = {{"level", current_log_level()}};
  // The state file: what the start loaded or refused, the last snapshot.
  j["state"] = state_file_json(sh.info.state.get(), sh.info.state_dir);
  json requests = json::object();
  if (sh.udp != nullptr)
    requests["udp"] = udp_requests_json(sh.udp->counters(), sh.udp->in_flight());
  if (sh.http != nullptr) requests["http"] = {{"connections", sh.http->connection_count()}};
  requests["admin"] = {{"ok", sh.ok.load()},
                       {"client_errors", sh.client_errors.load()},
                       {"server_errors", sh.server_errors.load()},
                       {"unauthorized", sh.unauthorized.load()}};
  j["requests"] = std::move(requests);
  c.job->reply_json(200, j);
}

}  // namespace sk::admin_api
