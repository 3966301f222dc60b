#include "admin/admin_routes.hpp"

#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_log.hpp"
#include "protocol/text.hpp"

namespace sk::admin_api {

const route_table<admin_endpoint>& admin_routes() {
  constexpr auto none = query_rule::none;
  constexpr auto allowed = query_rule::allowed;
  // clang-format off
  static const route_table<admin_endpoint> table{
      // method  path pattern                                  query     handler
      {"GET",    "/metrics",                                  {none,    get_metrics}},
      {"GET",    "/api/node",                                 {none,    get_node}},
      {"GET",    "/api/log/level",                            {none,    get_log_level}},
      {"PUT",    "/api/log/level",                            {none,    put_log_level}},
      {"GET",    "/api/cluster",                              {none,    get_cluster}},
      {"GET",    "/api/events",                               {none,    get_events}},
      {"GET",    "/api/remediations",                         {none,    get_remediations}},
      {"GET",    "/api/swarms",                               {allowed, get_swarms}},
      {"GET",    "/api/swarms/{hash}",                        {none,    get_swarm}},
      {"POST",   "/api/swarms/{hash}/policy",                 {none,    post_policy}},
      {"POST",   "/api/swarms/{hash}/restart",                {none,    post_restart}},
      {"POST",   "/api/swarms/{hash}/move",                   {none,    post_move}},
      {"POST",   "/api/swarms/{hash}/remediation/start",      {none,    post_remediation_start}},
      {"POST",   "/api/swarms/{hash}/remediation/stop",       {none,    post_remediation_stop}},
      {"GET",    "/api/bans",                                 {none,    get_bans}},
      {"POST",   "/api/bans",                                 {none,    post_ban}},
      {"DELETE", "/api/bans/{prefix}",                        {none,    delete_ban}},
      {"GET",    "/api/access",                               {none,    get_access}},
      {"POST",   "/api/access/reload",                        {none,    post_access_reload}},
      {"POST",   "/api/access/{hash}/allow",                  {none,    post_access_allow}},
      {"POST",   "/api/access/{hash}/deny",                   {none,    post_access_deny}},
  };
  // clang-format on
  return table;
}

std::string allowed_methods_text(const std::vector<std::string_view>& allowed) {
  std::string out;
  for (auto m : allowed) {
    if (!out.empty()) out += " or ";
    out += m;
  }
  return out;
}

void dispatch(actor_ptr self, const state_ptr& sh, const job_ptr& job) {
  // Views into job->target, which the job keeps unchanged while it lives.
  const std::string_view target = job->target;
  const std::size_t qpos = target.find('?');
  const std::string_view query =
      qpos == std::string_view::npos ? std::string_view{} : target.substr(qpos + 1);
  auto m = admin_routes().match(job->method, target.substr(0, qpos));
  switch (m.outcome) {
    case route_outcome::not_found:
      return job->reply_error(404, "no such endpoint");
    case route_outcome::method_not_allowed:
      return job->reply_error(405, "method " + job->method + " not allowed here (use " +
                                       allowed_methods_text(m.allowed) + ")");
    case route_outcome::found:
      break;
  }
  admin_call call;
  call.self = self;
  call.sh = sh;
  call.job = job;
  if (const std::string_view* text = m.params.find("hash")) {
    auto hash = parse_hex_hash(*text);
    if (!hash) return job->reply_error(400, "info_hash must be 40 hex digits");
    call.hash = *hash;
  }
  const admin_endpoint& endpoint = m.row->handler;
  if (endpoint.query == query_rule::none && !query.empty())
    return job->reply_error(400, "this endpoint takes no query parameters");
  call.query = query;
  call.params = std::move(m.params);
  endpoint.handle(call);
}

admin_actor_type::behavior_type admin_actor(admin_actor_type::pointer self, state_ptr sh) {
  // A failing swarm request must not kill this actor (default: error
  // handler kills it on an unhandled error message).
  self->set_error_handler([](caf::scheduled_actor*, caf::error&) {});
  return {
      [self, sh](job_ptr& job) {
        try {
          dispatch(self, sh, job);
        } catch (const std::exception& e) {
          spdlog::error("admin: {} {}: {}", job->method, job->target, e.what());
          job->reply_error(500, "internal error");
        }
      },
  };
}

}  // namespace sk::admin_api
