#pragma once
/// The admin API's routing table and the actor that serves it.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/all.hpp>

#include "admin/admin_call.hpp"
#include "admin/admin_router.hpp"

namespace sk::admin_api {

/// Whether an endpoint reads a query string; the others answer 400 to one.
enum class query_rule { none, allowed };

/// What a row of the table leads to.
struct admin_endpoint {
  query_rule query = query_rule::none;
  handler_fn handle = nullptr;
};

/// Every admin endpoint (the console's static files are answered by the
/// transport, admin/admin_assets.hpp, before any routing).
const route_table<admin_endpoint>& admin_routes();

/// The 405 text for the methods a path takes: "GET", "GET or POST".
std::string allowed_methods_text(const std::vector<std::string_view>& allowed);

/// Routes one job and calls its handler; answers 404, 405 and the 400s the
/// table implies (a `{hash}` that is not 40 hex digits, a query string for
/// an endpoint that takes none) itself.
void dispatch(actor_ptr self, const state_ptr& sh, const job_ptr& job);

/// The admin actor's behaviour: every message is an admin_job to dispatch.
/// Spawned hidden (the actor system does not wait for it); stopped by
/// admin_server::stop().
admin_actor_type::behavior_type admin_actor(admin_actor_type::pointer self, state_ptr sh);

}  // namespace sk::admin_api
