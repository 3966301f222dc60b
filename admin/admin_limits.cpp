#include "admin/admin_limits.hpp"

#include <cstdint>

#include "admin/admin_state.hpp"
#include "net/address_buckets.hpp"
#include "net/gateway.hpp"
#include "net/http/http_server.hpp"

namespace sk::admin_api {

void write_limits(exposition& m, const admin_state& sh) {
  using mt = metric_type;
  const http_connection_limits hl =
      sh.http != nullptr ? sh.http->connection_limits() : http_connection_limits{};
  const address_buckets* rate = sh.gw != nullptr ? sh.gw->rate_limit() : nullptr;

  auto limit = m.add("swarmkeeper_limit", mt::gauge,
                     "Configured network limits (0: none): HTTP connections in total "
                     "(http.max-connections) and per address (http.max-connections-per-address), "
                     "requests per address at once and per second (gateway.request-burst, "
                     "gateway.requests-per-second), admin connections (admin.max-connections).");
  if (sh.http != nullptr) {
    limit.sample(label("limit", "http_connections"), double(sh.http->config().max_connections));
    limit.sample(label("limit", "http_connections_per_address"),
                 double(sh.http->config().max_connections_per_address));
  }
  if (sh.gw != nullptr) {
    limit.sample(label("limit", "request_burst"), rate != nullptr ? double(rate->burst()) : 0.0);
    limit.sample(label("limit", "requests_per_second"),
                 rate != nullptr ? rate->per_second() : 0.0);
  }
  limit.sample(label("limit", "admin_connections"), double(sh.cfg.max_connections));

  auto reached = m.add("swarmkeeper_limit_reached", mt::gauge,
                       "1 while a network limit is met: a connection refused or shed at it "
                       "within the last 30 s, an address refused for its request rate within "
                       "the last refill time.");
  if (sh.http != nullptr) {
    reached.sample(label("limit", "http_connections"), hl.total_reached ? 1 : 0);
    reached.sample(label("limit", "http_connections_per_address"),
                   hl.per_address_reached ? 1 : 0);
  }
  if (sh.gw != nullptr)
    reached.sample(label("limit", "request_rate"), sh.gw->rate_limit_reached() ? 1 : 0);
  reached.sample(label("limit", "admin_connections"),
                 sh.connections_reached.load(std::memory_order_relaxed) ? 1 : 0);

  if (sh.http != nullptr) {
    auto refused = m.add("swarmkeeper_http_connections_refused_total", mt::counter,
                         "New HTTP connections closed at once, by reason (per_address: the "
                         "address held http.max-connections-per-address; total: at "
                         "http.max-connections with every connection busy).");
    refused.sample(label("reason", "per_address"), double(hl.refused_per_address));
    refused.sample(label("reason", "total"), double(hl.refused_total));
    auto shed = m.add("swarmkeeper_http_connections_shed_total", mt::counter,
                      "HTTP connections closed at http.max-connections to make room for a new "
                      "one, by state (idle: waiting for its next request; slow: part of a "
                      "request received, the rest still missing).");
    shed.sample(label("state", "idle"), double(hl.shed_idle));
    shed.sample(label("state", "slow"), double(hl.shed_slow));
    m.add("swarmkeeper_http_connection_addresses", mt::gauge,
          "Addresses (IPv6: /64s) holding HTTP connections now (trusted proxies not counted).")
        .sample("", double(hl.addresses));
    m.add("swarmkeeper_http_connections_busiest_address", mt::gauge,
          "The most HTTP connections one address holds now.")
        .sample("", double(hl.busiest));
  }

  if (sh.gw != nullptr) {
    auto limited = m.add("swarmkeeper_rate_limited_total", mt::counter,
                         "Requests over their address's request rate, by transport and request "
                         "(announces and scrapes get a failure with 'retry in' or a UDP error "
                         "packet; UDP connects are dropped).");
    for (const transport t : {transport::http, transport::udp}) {
      const gateway_counters c = sh.gw->counters(t);
      const std::string tl = label("transport", to_string(t));
      limited.sample(tl + "," + label("request", "announce"), double(c.rate_limited_announces));
      limited.sample(tl + "," + label("request", "scrape"), double(c.rate_limited_scrapes));
      if (t == transport::udp)
        limited.sample(tl + "," + label("request", "connect"), double(c.rate_limited_connects));
    }
    m.add("swarmkeeper_rate_limit_addresses", mt::gauge,
          "Addresses whose request rate is remembered now (at most gateway.rate-limit-addresses).")
        .sample("", rate != nullptr ? double(rate->tracked()) : 0.0);
  }

  m.add("swarmkeeper_admin_connections", mt::gauge, "Admin API connections open.")
      .sample("", double(sh.connections_open.load(std::memory_order_relaxed)));
  m.add("swarmkeeper_admin_connections_shed_total", mt::counter,
        "Admin connections closed at admin.max-connections to make room for a new one (one "
        "that sent no authenticated request first, else an idle one).")
      .sample("", double(sh.connections_shed.load(std::memory_order_relaxed)));
  m.add("swarmkeeper_admin_connections_refused_total", mt::counter,
        "New admin connections closed at once: every slot was serving an authenticated request.")
      .sample("", double(sh.connections_refused.load(std::memory_order_relaxed)));
}

}  // namespace sk::admin_api
