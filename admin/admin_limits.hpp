#pragma once
/// The network-side limits on /metrics: HTTP connections in total and per
/// address, the request rate per address (both transports), and the admin
/// API's own connections.

#include "admin/admin_exposition.hpp"

namespace sk::admin_api {

struct admin_state;

/// Writes the families
///   swarmkeeper_limit{limit}                      the configured limits
///   swarmkeeper_limit_reached{limit}              1 while a limit is met (30 s quiet
///                                                 for connections; a refill time for the rate)
///   swarmkeeper_http_connections_refused_total{reason}  new connections closed at once
///   swarmkeeper_http_connections_shed_total{state}      waiting connections closed for new ones
///   swarmkeeper_http_connection_addresses         addresses holding connections
///   swarmkeeper_http_connections_busiest_address  the most one address holds
///   swarmkeeper_rate_limited_total{transport,request}   requests over their address's rate
///   swarmkeeper_rate_limit_addresses              addresses whose rate is remembered
///   swarmkeeper_admin_connections                 admin connections open
///   swarmkeeper_admin_connections_shed_total      ... closed for a new one
///   swarmkeeper_admin_connections_refused_total   ... new ones closed at once
/// for what of `sh` runs (a transport not running leaves its families out).
void write_limits(exposition& m, const admin_state& sh);

}  // namespace sk::admin_api
