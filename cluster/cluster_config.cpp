#include "cluster/cluster_config.hpp"

#include <cctype>
#include <charconv>

#include "protocol/text.hpp"

namespace sk::cluster {

namespace {

bool wildcard(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

}  // namespace

std::string host_port::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<std::vector<host_port>> parse_seeds(std::string_view text, std::string* error) {
  std::vector<host_port> out;
  auto fail = [&](std::string_view item, const char* why) -> std::optional<std::vector<host_port>> {
    if (error != nullptr) *error = "'" + std::string(item) + "': " + why;
    return std::nullopt;
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string_view item =
        trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    pos = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) {
      if (trim(text).empty()) break;
      return fail(item, "empty item (expected host:port)");
    }
    std::string_view host;
    std::string_view port;
    if (item.front() == '[') {
      const std::size_t close = item.find(']');
      if (close == std::string_view::npos || close + 1 >= item.size() || item[close + 1] != ':')
        return fail(item, "expected [IPv6]:port");
      host = item.substr(1, close - 1);
      port = item.substr(close + 2);
    } else {
      const std::size_t colon = item.rfind(':');
      if (colon == std::string_view::npos) return fail(item, "missing ':port'");
      host = item.substr(0, colon);
      port = item.substr(colon + 1);
      if (host.find(':') != std::string_view::npos)
        return fail(item, "IPv6 addresses need brackets: [addr]:port");
    }
    if (host.empty()) return fail(item, "empty host");
    unsigned value = 0;
    const auto res = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || res.ec != std::errc{} || res.ptr != port.data() + port.size() ||
        value == 0 || value > 65535)
      return fail(item, "port must be 1..65535");
    out.push_back(host_port{std::string(host), static_cast<std::uint16_t>(value)});
  }
  return out;
}

std::string cluster_config::validate() const {
  if (!enabled()) return {};
  if (secret.size() < 16)
    return "cluster.secret (or cluster.secret-file) must hold at least 16 bytes when cluster.port "
           "is set";
  if (wildcard(bind) && advertise.empty())
    return "cluster.advertise must be set when cluster.bind is a wildcard address (other nodes "
           "need an address to dial)";
  if (node_name.size() > 200) return "cluster.node-name must be at most 200 characters";
  for (char c : node_name)
    if (std::isgraph(static_cast<unsigned char>(c)) == 0)
      return "cluster.node-name must be printable characters without spaces";
  if (heartbeat_interval.count() <= 0) return "cluster.heartbeat-interval must be positive";
  if (connection_timeout < 2 * heartbeat_interval)
    return "cluster.connection-timeout must be at least twice cluster.heartbeat-interval";
  if (replication_period.count() <= 0) return "cluster.replication-period must be positive";
  if (forward_timeout.count() <= 0) return "cluster.forward-timeout must be positive";
  if (rebalance_period.count() < 0) return "cluster.rebalance-period must not be negative";
  // Written so that NaN fails too.
  if (!(rebalance_factor > 1.0 && rebalance_factor <= 1000.0))
    return "cluster.rebalance-factor must be above 1 (and at most 1000)";
  if (!(rebalance_min_rate >= 0.0 && rebalance_min_rate <= 1e9))
    return "cluster.rebalance-min-rate must be 0..1e9 announces per second";
  if (rebalance_max_moves < 1 || rebalance_max_moves > 10000)
    return "cluster.rebalance-max-moves must be 1..10000";
  return {};
}

}  // namespace sk::cluster
