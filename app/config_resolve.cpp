// From the effective option values to daemon_settings: one function per
// section, each filling the config struct of the module the section
// configures, then that module's validate() for the rules between options.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <caf/all.hpp>

#include "app/config.hpp"
#include "app/config_cpus.hpp"
#include "app/config_detail.hpp"
#include "cluster/secret.hpp"
#include "net/client_address.hpp"

namespace sk::config::detail {

value_map effective_values(const caf::settings& content) {
  value_map out;
  for (const auto& o : options()) {
    const auto key = o.key();
    if (auto v = caf::get_if(&content, key))
      out[key] = *v;
    else
      out[key] = o.fallback;
  }
  for (const auto& a : aliases()) {
    if (auto v = caf::get_if(&content, a.name)) {
      if (!a.negate) {
        out[a.target] = *v;
      } else if (auto b = caf::get_if<bool>(v); b && *b) {
        out[a.target] = caf::config_value{false};
      }
    }
  }
  return out;
}

namespace {

/// Typed access to the effective values, checked against the schema's type
/// and range. A value that fails is reported and read as the default, so
/// that reading can go on and report every problem at once.
class reader {
 public:
  reader(const value_map& values, problems& p) : values_(values), problems_(p) {}

  std::int64_t integer(const char* key) {
    return *caf::get_if<std::int64_t>(&checked(key, value_type::integer));
  }

  /// An integer option as `T` (its range, from the schema, fits `T`).
  template <class T>
  T count(const char* key) {
    return static_cast<T>(integer(key));
  }

  bool boolean(const char* key) { return *caf::get_if<bool>(&checked(key, value_type::boolean)); }

  std::string string(const char* key) {
    return *caf::get_if<std::string>(&checked(key, value_type::string));
  }

  std::vector<std::string> strings(const char* key) {
    const auto& v = checked(key, value_type::string_list);
    if (auto s = caf::get_if<std::string>(&v)) return {*s};  // a single value is a list of one
    std::vector<std::string> out;
    for (const auto& item : *caf::get_if<caf::config_value::list>(&v))
      out.push_back(*caf::get_if<std::string>(&item));
    return out;
  }

  /// A real option (an integer value is accepted too).
  double number(const char* key) {
    const auto& v = checked(key, value_type::real);
    if (auto d = caf::get_if<double>(&v)) return *d;
    return static_cast<double>(*caf::get_if<std::int64_t>(&v));
  }

  caf::timespan duration(const char* key) {
    return *caf::get_if<caf::timespan>(&checked(key, value_type::duration));
  }

  std::chrono::seconds seconds(const char* key) {
    return std::chrono::duration_cast<std::chrono::seconds>(duration(key));
  }

  std::chrono::milliseconds millis(const char* key) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(duration(key));
  }

  problems& report() noexcept { return problems_; }

 private:
  /// The value of `key` if it passes the schema's checks, else its default.
  const caf::config_value& checked(const char* key, value_type type) {
    const auto* o = find_option(key);
    // Both are mistakes in this file, not in the user's config.
    if (o == nullptr) throw std::logic_error(std::string("resolve reads unknown option ") + key);
    if (o->type != type) throw std::logic_error(std::string("resolve misreads the type of ") + key);
    const auto& v = values_.at(key);
    if (auto problem = check_value(*o, v)) {
      problems_.add(std::move(*problem));
      return o->fallback;
    }
    return v;
  }

  const value_map& values_;
  problems& problems_;
};

/// Reports `key` unless `text` is an IPv4 or IPv6 address.
void check_address(problems& p, const std::string& key, const std::string& text) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(text, ec);
  if (ec) p.add(key + ": '" + text + "' is not an IPv4 or IPv6 address");
}

/// The first line of the file `key` names, without trailing blanks; reports
/// a file that cannot be read. Secrets live in such files: never echoed.
std::optional<std::string> first_line_of(problems& p, const char* key, const std::string& file) {
  std::ifstream f{file};
  std::string line;
  if (!f || !std::getline(f, line)) {
    p.add(std::string(key) + ": cannot read '" + file + "'");
    return std::nullopt;
  }
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

/// A module's validate() message under its section, checked only when the
/// values it checks all passed (so one mistake is not reported twice).
void add_validation(problems& p, const std::string& prefix, const std::string& err) {
  if (!err.empty()) p.add(prefix + err);
}

// -- one function per section ---------------------------------------------------

/// Returns http.bind as written (udp.bind falls back to it).
std::string resolve_http(reader& r, http_server_config& h, std::size_t usable_cpus) {
  h.port = r.count<std::uint16_t>("http.port");
  auto bind = r.string("http.bind");
  h.bind_addresses.clear();
  if (!bind.empty()) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(bind, ec);
    if (ec)
      r.report().add("http.bind: '" + bind + "' is not an IPv4 or IPv6 address");
    else
      h.bind_addresses.push_back(bind);
  }
  auto io = r.count<std::size_t>("http.io-threads");
  // Half the CPUs this process may use (affinity mask and cgroup quota,
  // app/config_cpus.hpp): the other half runs the actors. Measured on 2
  // cores (bench/http, unpinned): one I/O thread served 1.25x the requests
  // of two, because fewer threads batch more per hand-over (see http_lane).
  if (io == 0) io = std::max<std::size_t>(1, usable_cpus / 2);
  h.io_threads = io;
  h.max_url_length = r.count<std::size_t>("http.max-url-length");
  h.max_header_bytes = r.count<std::size_t>("http.max-header-bytes");
  h.max_query_length = r.count<std::size_t>("http.max-query-length");
  h.read_timeout = r.millis("http.read-timeout");
  h.write_timeout = r.millis("http.write-timeout");
  h.defer_accept = r.millis("http.defer-accept");
  h.max_pipeline = r.count<std::size_t>("http.max-pipeline");
  h.max_connections = r.count<std::size_t>("http.max-connections");
  h.max_connections_per_address = r.count<std::size_t>("http.max-connections-per-address");
  std::vector<address_block> blocks;
  for (const auto& text : r.strings("http.trusted-proxies")) {
    if (auto b = address_block::parse(text))
      blocks.push_back(*b);
    else
      r.report().add("http.trusted-proxies: '" + text + "' is not an address or CIDR block");
  }
  h.proxies = trusted_proxies{std::move(blocks)};
  return bind;
}

/// `http_bind`: udp.bind falls back to it (empty there too: 0.0.0.0 and ::).
void resolve_udp(reader& r, const std::string& http_bind, bool& enabled, udp_config& u) {
  enabled = r.boolean("udp.enable");
  u.port = r.count<std::uint16_t>("udp.port");
  u.bind = r.string("udp.bind");
  if (!u.bind.empty())
    check_address(r.report(), "udp.bind", u.bind);
  else
    u.bind = http_bind;
  u.workers = r.count<std::size_t>("udp.workers");
  // A secret: problems name the option and the expected form, never the value.
  u.connection_id_key = r.string("udp.connection-id-key");
  if (!u.connection_id_key.empty()) {
    const bool hex32 =
        u.connection_id_key.size() == 32 &&
        std::all_of(u.connection_id_key.begin(), u.connection_id_key.end(),
                    [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    if (!hex32)
      r.report().add(
          "udp.connection-id-key must be exactly 32 hex digits (or empty for a random key)");
  }
  u.max_url_data = r.count<std::size_t>("udp.max-url-data");
  if (r.report().empty()) add_validation(r.report(), "", u.validate());
}

void resolve_gateway(reader& r, gateway_config& g) {
  g.request_timeout = r.millis("gateway.request-timeout");
  g.max_in_flight = r.count<std::size_t>("gateway.max-in-flight");
  g.retry_in_minutes = r.integer("gateway.retry-in");
  // Whether to believe the address a client claims is the gateway's rule;
  // each transport's section names its own field.
  g.trust_claimed_ip[static_cast<std::size_t>(transport::http)] =
      r.boolean("http.trust-ip-param");
  g.trust_claimed_ip[static_cast<std::size_t>(transport::udp)] = r.boolean("udp.trust-ip-field");
  // The limits of one request, the same for both transports' parsers.
  g.max_numwant = r.count<std::int32_t>("tracker.max-numwant");
  g.max_scrape_hashes = r.count<std::size_t>("tracker.max-scrape-hashes");
  g.new_swarm_burst = r.count<std::uint32_t>("gateway.new-swarm-burst");
  g.new_swarms_per_minute = static_cast<double>(r.integer("gateway.new-swarms-per-minute"));
  g.request_burst = r.count<std::uint32_t>("gateway.request-burst");
  g.requests_per_second = static_cast<double>(r.integer("gateway.requests-per-second"));
  g.rate_limit_addresses = r.count<std::size_t>("gateway.rate-limit-addresses");
  if (r.report().empty()) add_validation(r.report(), "[gateway] ", g.validate());
}

/// [caps]: what the node holds at most (the census's caps).
void resolve_caps(reader& r, node_caps& c) {
  c.max_swarms = r.count<std::uint64_t>("caps.max-swarms");
  c.max_peers = r.count<std::uint64_t>("caps.max-peers");
  if (r.report().empty()) add_validation(r.report(), "[caps] ", c.validate());
}

/// [tracker], [clients], [health], [allocation] and remediation.history-size:
/// the per-swarm settings. The ban list itself is live state (`lists`).
void resolve_swarm(reader& r, swarm_config& s, client_ban_list& bans) {
  s.announce_interval = r.seconds("tracker.interval");
  s.min_interval = r.seconds("tracker.min-interval");
  s.default_numwant = r.count<std::int32_t>("tracker.default-numwant");
  s.max_numwant = r.count<std::int32_t>("tracker.max-numwant");
  s.peer_timeout = r.seconds("tracker.peer-timeout");
  s.sweep_period = r.seconds("tracker.sweep-period");
  s.sweep_batch = r.count<std::size_t>("tracker.sweep-batch");
  s.idle_lifetime = r.seconds("tracker.idle-swarm-time");
  s.hibernate_after = r.seconds("tracker.hibernate-after");
  s.hibernations_per_second = r.count<std::uint32_t>("tracker.hibernations-per-second");
  s.max_peers = r.count<std::size_t>("tracker.max-peers-per-swarm");
  s.max_peers_per_address = r.count<std::size_t>("tracker.max-peers-per-address");
  s.max_backlog = r.count<std::size_t>("tracker.max-swarm-backlog");
  s.rng_seed = r.count<std::uint64_t>("tracker.rng-seed");
  s.intervals.starving_leecher_scale = r.number("tracker.starving-interval-scale");
  s.intervals.large_swarm_peers = r.count<std::size_t>("tracker.large-swarm-peers");
  s.intervals.large_swarm_scale = r.number("tracker.large-swarm-interval-scale");
  s.intervals.jitter = r.number("tracker.interval-jitter");

  // [clients]
  bans = client_ban_list{};
  const auto banned = r.string("clients.banned");
  if (!banned.empty()) {
    std::string error;
    if (auto list = client_ban_list::parse(banned, &error))
      bans = std::move(*list);
    else
      r.report().add("clients.banned: " + error);
  }
  s.banned_retry_in_minutes = r.integer("clients.banned-retry-in");
  auto& b = s.behaviour;
  b.early_announce_slack = r.seconds("clients.early-slack");
  b.early_warn_after = r.count<std::uint32_t>("clients.warn-after-early");
  b.early_refuse_after = r.count<std::uint32_t>("clients.refuse-after-early");
  b.duplicate_window = r.seconds("clients.duplicate-window");
  b.counter_noise = r.count<std::uint64_t>("clients.counter-noise");
  b.stall_announces = r.count<std::uint32_t>("clients.stall-announces");
  b.stall_time = r.seconds("clients.stall-time");
  b.max_rate_bytes_per_second = static_cast<double>(r.integer("clients.max-rate"));
  b.quarantine_strikes = r.count<std::uint32_t>("clients.quarantine-strikes");

  // [health]
  s.health_tick = r.seconds("health.tick");
  auto& hc = s.health;
  hc.window = r.seconds("health.window");
  hc.min_peers = r.count<std::uint64_t>("health.min-peers");
  hc.min_seeder_ratio = r.number("health.min-seeder-ratio");
  hc.stalled_fraction_degraded = r.number("health.stalled-fraction");
  hc.stalled_fraction_critical = r.number("health.stalled-fraction-critical");
  hc.abusive_fraction = r.number("health.abusive-fraction");
  hc.early_leave_seeder_ratio = r.number("health.early-leave-seeder-ratio");
  hc.recovery_evaluations = r.count<std::uint32_t>("health.recovery-evaluations");
  s.warn_seeders_when_degraded = r.boolean("health.warn-seeders");
  s.seeder_warning_text = r.string("health.seeder-warning");
  if (s.warn_seeders_when_degraded && s.seeder_warning_text.empty())
    r.report().add("health.seeder-warning must not be empty while health.warn-seeders is on");

  // [allocation]
  // The schema's choices are policy_names: every name it accepts parses.
  s.default_policy = parse_policy(r.string("allocation.policy")).value_or(policy_kind::adaptive);
  auto& a = s.allocation;
  a.leecher_seeder_share = r.number("allocation.leecher-seeder-share");
  a.max_address_share = r.number("allocation.max-address-share");
  a.stalled_boost_fraction = r.number("allocation.stalled-boost-fraction");
  a.flash_crowd_seeder_ratio = r.number("allocation.flash-crowd-seeder-ratio");
  a.flash_crowd_reveal = r.count<std::uint32_t>("allocation.flash-crowd-reveal");
  a.contribution_floor = r.count<std::size_t>("allocation.contribution-floor");

  s.history_size = r.count<std::size_t>("remediation.history-size");
}

void resolve_supervisor(reader& r, supervisor_config& sv) {
  sv.remediation = r.boolean("remediation.enable");
  sv.remediation_min_peers = r.count<std::uint64_t>("remediation.min-peers");
  auto& rc = sv.remediation_cfg;
  rc.watch_ticks = r.count<std::uint32_t>("remediation.watch-ticks");
  rc.watch_time = r.seconds("remediation.watch-time");
  sv.operator_holdoff = r.seconds("remediation.operator-holdoff");
  rc.healthy_time = r.seconds("remediation.healthy-time");
  rc.leecher_interval_scale = r.number("remediation.leecher-interval-scale");
  sv.max_restarts = r.count<std::uint32_t>("supervisor.max-restarts");
  sv.restart_window = r.seconds("supervisor.restart-window");
  sv.event_log_size = r.count<std::size_t>("supervisor.event-log-size");
}

/// [probe]: the prober's settings, and the per-swarm decisions.
void resolve_probe(reader& r, bool& enabled, prober_config& pc, swarm_config& s) {
  enabled = r.boolean("probe.enable");
  pc.timeout = r.millis("probe.timeout");
  pc.max_concurrent = r.count<std::size_t>("probe.max-concurrent");
  pc.max_queued = r.count<std::size_t>("probe.max-queued");
  pc.cooldown = r.seconds("probe.reprobe-after");
  pc.allow_private = r.boolean("probe.allow-private");
  pc.allow_loopback = r.boolean("probe.allow-loopback");
  s.probe.enabled = enabled;
  s.probe.max_outstanding = r.count<std::size_t>("probe.max-per-swarm");
  s.probe.reprobe_after = pc.cooldown;
  // An answer takes at most two deadlines once dialled; leave room for the
  // prober's queue before a swarm forgets an outstanding probe.
  s.probe.result_timeout = std::max<std::chrono::seconds>(
      std::chrono::seconds{300},
      std::chrono::duration_cast<std::chrono::seconds>(pc.timeout * 4 + std::chrono::seconds{60}));
  if (r.report().empty()) add_validation(r.report(), "", pc.validate());
}

/// [access]: the mode and what the file holds now. A bad file is a config
/// error at start (exit 2); on reload the old list stays (see
/// tracker/access_list.hpp).
void resolve_access(reader& r, initial_lists& lists) {
  // The schema's choices are the modes' names: every one it accepts parses.
  lists.mode = parse_access_mode(r.string("access.mode")).value_or(access_mode::off);
  lists.access_file = r.string("access.file");
  lists.access = access_list{};
  if (!lists.access_file.empty()) {
    std::string error;
    if (auto list = load_access_file(lists.access_file, &error))
      lists.access = std::move(*list);
    else
      r.report().add("access.file: " + error);
  }
}

/// admin.metrics-token(-file): optional; held to the admin token's rules and
/// never equal to it (it would then allow everything).
void resolve_metrics_token(reader& r, admin_config& ad) {
  ad.metrics_token = r.string("admin.metrics-token");
  const auto file = r.string("admin.metrics-token-file");
  if (!file.empty()) {
    if (auto line = first_line_of(r.report(), "admin.metrics-token-file", file))
      ad.metrics_token = *line;
  }
  if (ad.metrics_token.empty()) return;
  if (ad.metrics_token.size() < 16 ||
      std::any_of(ad.metrics_token.begin(), ad.metrics_token.end(),
                  [](char c) { return std::isgraph(static_cast<unsigned char>(c)) == 0; }))
    r.report().add("admin.metrics-token must be at least 16 printable characters without spaces");
  else if (ad.metrics_token == ad.token)
    r.report().add("admin.metrics-token must differ from admin.token");
}

/// [admin]: off unless a port is given; then a token is mandatory.
void resolve_admin(reader& r, bool& enabled, admin_config& ad) {
  ad.port = r.count<std::uint16_t>("admin.port");
  enabled = ad.port != 0;
  ad.bind = r.string("admin.bind");
  check_address(r.report(), "admin.bind", ad.bind);
  ad.max_connections = r.count<std::size_t>("admin.max-connections");
  ad.auth_timeout = r.millis("admin.auth-timeout");
  ad.io_timeout = r.millis("admin.io-timeout");
  ad.token = r.string("admin.token");
  const auto token_file = r.string("admin.token-file");
  if (!token_file.empty()) {
    if (auto line = first_line_of(r.report(), "admin.token-file", token_file)) ad.token = *line;
  }
  if (!enabled) return;
  // Never echo the token: only say what is wrong with it.
  if (ad.token.empty())
    r.report().add(
        "admin.port is set but no admin token is: give --admin-token=T, admin.token or "
        "admin.token-file");
  else if (ad.token.size() < 16 || std::any_of(ad.token.begin(), ad.token.end(), [](char c) {
             return std::isgraph(static_cast<unsigned char>(c)) == 0;
           }))
    r.report().add("admin.token must be at least 16 printable characters without spaces");
  resolve_metrics_token(r, ad);
}

/// [cluster]: off unless a port is given; then a secret is mandatory.
void resolve_cluster(reader& r, cluster::cluster_config& cl) {
  cl.port = r.count<std::uint16_t>("cluster.port");
  cl.bind = r.string("cluster.bind");
  cl.advertise = r.string("cluster.advertise");
  cl.node_name = r.string("cluster.node-name");
  check_address(r.report(), "cluster.bind", cl.bind);
  if (!cl.advertise.empty()) check_address(r.report(), "cluster.advertise", cl.advertise);
  std::string error;
  if (auto seeds = cluster::parse_seeds(r.string("cluster.seeds"), &error))
    cl.seeds = std::move(*seeds);
  else
    r.report().add("cluster.seeds: " + error);
  cl.secret = r.string("cluster.secret");
  const auto secret_file = r.string("cluster.secret-file");
  if (!secret_file.empty()) {
    if (auto line = first_line_of(r.report(), "cluster.secret-file", secret_file))
      cl.secret = *line;
  }
  cl.heartbeat_interval = r.millis("cluster.heartbeat-interval");
  cl.connection_timeout = r.millis("cluster.connection-timeout");
  cl.replication_period = r.millis("cluster.replication-period");
  cl.forward_timeout = r.millis("cluster.forward-timeout");
  cl.rebalance_period = r.millis("cluster.rebalance-period");
  cl.rebalance_factor = r.number("cluster.rebalance-factor");
  cl.rebalance_min_rate = r.number("cluster.rebalance-min-rate");
  cl.rebalance_max_moves = r.count<std::uint32_t>("cluster.rebalance-max-moves");
  if (r.report().empty()) add_validation(r.report(), "", cl.validate());
}

}  // namespace

void resolve(const caf::settings& content, daemon_settings& out, problems& p) {
  const auto values = effective_values(content);
  reader r{values, p};
  out.usable_cpus = read_cpu_budget().usable();
  const auto http_bind = resolve_http(r, out.http, out.usable_cpus);
  resolve_swarm(r, out.swarm, out.lists.bans);
  resolve_supervisor(r, out.supervisor);
  if (p.empty()) add_validation(p, "[supervisor] ", out.supervisor.validate());
  // Cross-field rules (min interval <= interval, timeout > interval, ...)
  // live with the swarm config, the [clients], [health] and [allocation]
  // ones included; reported under the tracker section.
  if (p.empty()) add_validation(p, "[tracker] ", out.swarm.validate());
  resolve_udp(r, http_bind, out.udp_enabled, out.udp);
  resolve_gateway(r, out.gateway);
  resolve_caps(r, out.caps);
  resolve_probe(r, out.probe_enabled, out.probe, out.swarm);
  resolve_access(r, out.lists);
  resolve_admin(r, out.admin_enabled, out.admin);
  resolve_cluster(r, out.cluster);
  // One connection-id key for the whole cluster: a client may send its
  // connect to one node and its announce to another.
  if (out.cluster.enabled() && out.udp.connection_id_key.empty() && out.cluster.secret.size() >= 16)
    out.udp.connection_id_key = cluster::derive_connection_id_key(out.cluster.secret);
  // The schema's choices are names spdlog::level::from_str reads.
  out.log_level = r.string("log.level");
  out.log_format = r.string("log.format");
  out.log_swarm_lines_per_minute = r.number("log.swarm-lines-per-minute");
  out.log_swarm_lines_burst = r.count<std::uint32_t>("log.swarm-lines-burst");
  out.drain_timeout = r.millis("shutdown.drain-timeout");
  out.state.dir = r.string("state.dir");
  out.state.period = r.millis("state.snapshot-period");
  out.state.peer_timeout = out.swarm.peer_timeout;
  // Read by CAF's scheduler from the merged content (see load_config).
  r.integer("scheduler.max-threads");
  out.batch_scheduling = r.boolean("scheduler.batch");
}

}  // namespace sk::config::detail
