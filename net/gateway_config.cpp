// What the gateway says and accepts, apart from its request path: the
// refusal texts both transports send, and the check of its settings.

#include <string>

#include "net/creation_budget.hpp"
#include "net/gateway.hpp"

namespace sk {

std::string_view to_string(transport t) noexcept { return t == transport::udp ? "udp" : "http"; }

std::string_view refusal_text(gateway_refusal r) noexcept {
  switch (r) {
    case gateway_refusal::denied:
      return "torrent not allowed on this tracker";
    case gateway_refusal::overloaded:
      return "tracker busy, retry later";
    case gateway_refusal::swarm_unavailable:
      return "swarm busy, retry later";
    case gateway_refusal::timeout:
      return "timed out, retry later";
    case gateway_refusal::shutting_down:
      return "shutting down, retry later";
    case gateway_refusal::swarm_limit:
      return "tracker full: no new torrents now, retry later";
    case gateway_refusal::new_swarm_budget:
      return "too many new torrents from your address, retry later";
    case gateway_refusal::peer_limit:
      return "tracker full: no new peers now, retry later";
    case gateway_refusal::swarm_full:
      return "swarm full: no new peers now, retry later";
    case gateway_refusal::rate_limited:
      return "rate limited, retry later";
  }
  return "tracker busy, retry later";
}

std::string gateway_config::validate() const {
  if (request_timeout.count() <= 0) return "request timeout must be positive";
  if (max_in_flight == 0) return "max in flight must be at least 1";
  if (retry_in_minutes < 1) return "retry in must be at least 1 minute";
  if (max_numwant < 0) return "max numwant must not be negative";
  if (max_scrape_hashes == 0) return "max scrape hashes must be at least 1";
  if (new_swarm_burst == 0) return "new swarm burst must be at least 1";
  if (!(new_swarms_per_minute > 0)) return "new swarms per minute must be positive";
  if (new_swarm_addresses < creation_budget::stripes)
    return "new swarm addresses must be at least " + std::to_string(creation_budget::stripes);
  if (requests_per_second < 0) return "requests per second must not be negative";
  if (requests_per_second > 0 && request_burst == 0) return "request burst must be at least 1";
  if (requests_per_second > 0 && rate_limit_addresses < rate_limit_stripes)
    return "rate limit addresses must be at least " + std::to_string(rate_limit_stripes);
  return {};
}

}  // namespace sk
