#include "app/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>

#include <spdlog/common.h>
#include <boost/asio/ip/address.hpp>
#include <caf/all.hpp>

#include "actors/cluster/secret.hpp"
#include "net/client_address.hpp"

namespace sk {

namespace {

using namespace std::chrono_literals;

// -- formatting ---------------------------------------------------------------

/// A duration in the largest unit that represents it exactly ("30min",
/// "1500ms", "0s"). CAF 0.17 prints zero as "0d" and whole days with "d",
/// which its own config parser then rejects.
std::string format_duration(caf::timespan t) {
  struct unit {
    std::int64_t ns;
    const char* suffix;
  };
  static constexpr unit units[] = {{3600'000'000'000, "h"}, {60'000'000'000, "min"},
                                   {1'000'000'000, "s"},    {1'000'000, "ms"},
                                   {1'000, "us"},           {1, "ns"}};
  const std::int64_t n = t.count();
  if (n == 0) return "0s";
  for (const auto& u : units)
    if (n % u.ns == 0) return std::to_string(n / u.ns) + u.suffix;
  return std::to_string(n) + "ns";
}

/// A value in config-file syntax (loadable again by the CAF 0.17 parser).
std::string format_value(const caf::config_value& v) {
  if (auto t = caf::get_if<caf::timespan>(&v)) return format_duration(*t);
  if (auto d = caf::get_if<double>(&v)) {
    // Shortest text that reads back the same, always with a decimal point:
    // "10" would load back as an integer, which a real option rejects.
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof buf, *d);
    std::string text(buf, res.ptr);
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text;
  }
  if (auto list = caf::get_if<caf::config_value::list>(&v)) {
    std::string out = "[";
    for (const auto& item : *list) {
      if (out.size() > 1) out += ", ";
      out += format_value(item);
    }
    return out + "]";
  }
  return caf::to_string(v);
}

/// Options whose values are secrets: error messages never echo them (the
/// daemon's stderr ends up in journals that more people read).
bool is_secret(caf::string_view key) {
  return key == "udp.connection-id-key" || key == "admin.token" || key == "cluster.secret";
}

/// A value as an error message may show it.
std::string shown_value(caf::string_view key, const caf::config_value& v) {
  return is_secret(key) ? std::string("a value (not shown: the option is a secret)")
                        : format_value(v);
}

/// What a value of an option type looks like, for error messages.
std::string expected_text(caf::string_view type_name) {
  if (type_name == "int64" || type_name == "uint64" || type_name == "int32" ||
      type_name == "uint32" || type_name == "int16" || type_name == "uint16")
    return "an integer";
  if (type_name == "timespan") return "a duration such as 30min, 45s or 500ms";
  if (type_name == "string") return "a quoted string";
  if (type_name == "boolean") return "true or false";
  if (type_name == "real64") return "a number with a decimal point, such as 0.5";
  return "a value of type " + std::string(type_name.data(), type_name.size());
}

// -- the option tree ----------------------------------------------------------

enum class kind { integer, boolean, string, string_list, timespan, real };

/// One of swarmkeeper's own options. The table below is the single source
/// for CAF registration, defaults, validation messages and --dump-config.
struct option_def {
  const char* category;
  const char* name;
  kind type;
  caf::config_value fallback;
  const char* help;

  std::string key() const { return std::string(category) + "." + name; }
};

caf::config_value ts(caf::timespan t) { return caf::config_value{t}; }
caf::config_value num(std::int64_t v) { return caf::config_value{v}; }
caf::config_value str(const char* s) { return caf::config_value{std::string{s}}; }
caf::config_value flag(bool b) { return caf::config_value{b}; }
caf::config_value real(double d) { return caf::config_value{d}; }
caf::config_value strings() { return caf::config_value{caf::config_value::list{}}; }

const std::vector<option_def>& option_table() {
  static const std::vector<option_def> table = {
      // [http]
      {"http", "port", kind::integer, num(6969),
       "TCP port of the HTTP tracker (announce, scrape, health)"},
      {"http", "bind", kind::string, str(""),
       "address to listen on; empty: 0.0.0.0 and :: (IPv4 and IPv6, each on its own socket)"},
      {"http", "io-threads", kind::integer, num(0),
       "I/O threads (each with its own network actor); 0: half the CPU cores, at least 1"},
      {"http", "max-url-length", kind::integer, num(8192),
       "longest request target in bytes (path + query); longer gets 414"},
      {"http", "max-header-bytes", kind::integer, num(8192),
       "largest header block in bytes (besides the request line); larger gets 431"},
      {"http", "max-query-length", kind::integer, num(6144),
       "longest announce/scrape query string accepted by the parser (a bencoded failure beyond)"},
      {"http", "read-timeout", kind::timespan, ts(15s),
       "deadline for reading a request, and idle time before a keep-alive connection is closed"},
      {"http", "write-timeout", kind::timespan, ts(15s), "deadline for writing responses"},
      {"http", "request-timeout", kind::timespan, ts(5s),
       "how long a request waits for its swarm before a failure with 'retry in' is sent"},
      {"http", "max-pipeline", kind::integer, num(16),
       "requests in flight per connection (HTTP pipelining); reading pauses beyond"},
      {"http", "max-connections", kind::integer, num(10000),
       "connections served at once; more are accepted and closed at once"},
      {"http", "trusted-proxies", kind::string_list, strings(),
       "proxies (addresses or CIDR blocks) whose X-Forwarded-For / X-Real-IP are believed"},
      {"http", "trust-ip-param", kind::boolean, flag(false),
       "believe the announce 'ip' parameter (lets clients register any address: off by default)"},
      {"http", "retry-in", kind::integer, num(1),
       "minutes sent as BEP 31 'retry in' with failures that retrying can fix"},
      // [udp]
      {"udp", "enable", kind::boolean, flag(true),
       "serve the UDP tracker (BEP 15; its request timeout is http.request-timeout, its limits "
       "those of [tracker]); --no-udp turns it off on the command line"},
      {"udp", "port", kind::integer, num(6969),
       "UDP port of the UDP tracker (IPv4 and IPv6; may equal http.port)"},
      {"udp", "bind", kind::string, str(""),
       "address to listen on; empty: the same as http.bind (empty there too: 0.0.0.0 and ::)"},
      {"udp", "workers", kind::integer, num(1),
       "socket workers, each with its own thread and SO_REUSEPORT sockets"},
      {"udp", "max-in-flight", kind::integer, num(4096),
       "announces/scrapes one worker may have waiting for swarms; more are dropped and counted"},
      {"udp", "connection-id-key", kind::string, str(""),
       "secret key of connection ids: 32 hex digits shared by a cluster, or empty for a random "
       "key per process (never logged)"},
      {"udp", "trust-ip-field", kind::boolean, flag(false),
       "believe the announce's IPv4 'ip' field (lets clients register any address: off by "
       "default)"},
      // [tracker]
      {"tracker", "interval", kind::timespan, ts(30min), "announce 'interval' sent to clients"},
      {"tracker", "min-interval", kind::timespan, ts(15min),
       "announce 'min interval' sent to clients"},
      {"tracker", "default-numwant", kind::integer, num(50),
       "peers returned when a client does not send numwant"},
      {"tracker", "max-numwant", kind::integer, num(50),
       "most peers returned to one announce (larger numwant is clamped)"},
      {"tracker", "peer-timeout", kind::timespan, ts(65min),
       "a peer that has not announced for this long is dropped (must exceed the interval)"},
      {"tracker", "sweep-period", kind::timespan, ts(1min),
       "time between two expiry sweeps of a swarm"},
      {"tracker", "sweep-batch", kind::integer, num(1024),
       "peers examined per sweep step (bounds the pause between announces)"},
      {"tracker", "idle-swarm-time", kind::timespan, ts(10min),
       "a swarm without peers for this long ends its actor"},
      {"tracker", "max-peers-per-swarm", kind::integer, num(1000000),
       "most peers stored per swarm (memory bound against peer_id flooding)"},
      {"tracker", "max-scrape-hashes", kind::integer, num(74),
       "most info_hash values in one scrape request"},
      {"tracker", "rng-seed", kind::integer, num(0),
       "seed of peer selection; 0: unpredictable (set only for reproducible tests)"},
      {"tracker", "starving-interval-scale", kind::real, real(0.5),
       "interval factor for leechers of starving swarms (no/few seeders, at least "
       "health.min-peers peers), (0, 1]; jittered, never below min-interval"},
      {"tracker", "large-swarm-peers", kind::integer, num(1000),
       "healthy swarms with at least this many peers get longer intervals"},
      {"tracker", "large-swarm-interval-scale", kind::real, real(1.5),
       "interval factor for healthy large swarms, [1, 4]; at most peer-timeout - min-interval"},
      {"tracker", "interval-jitter", kind::real, real(0.1),
       "+- fraction by which adjusted intervals are jittered, [0, 0.5]"},
      // [clients]
      {"clients", "banned", kind::string, str(""),
       "banned peer_id prefixes with the failure reason shown to the user: "
       "\"-XX0001-=reason;-YY=reason\" (%XX escapes in prefixes; longest prefix wins)"},
      {"clients", "banned-retry-in", kind::integer, num(-1),
       "BEP 31 'retry in' minutes sent to banned clients; -1: never"},
      {"clients", "early-slack", kind::timespan, ts(30s),
       "an announce counts as too early only if it comes sooner than min-interval minus "
       "max(this, 5 % of min-interval)"},
      {"clients", "warn-after-early", kind::integer, num(3),
       "early announces in a row (repeats and events not counted) from which one is served "
       "with a warning; 0: never warn"},
      {"clients", "refuse-after-early", kind::integer, num(5),
       "early announces in a row from which one is refused with 'retry in' (until min-interval "
       "has passed since the last accepted one); 0: never refuse"},
      {"clients", "duplicate-window", kind::timespan, ts(2min),
       "an announce repeating the previous one (same event or none, counters within "
       "counter-noise) this soon is answered as a repeat: never early, never a strike"},
      {"clients", "counter-noise", kind::integer, num(16777216),
       "bytes by which left/uploaded/downloaded may move in a repeat; counters reset to at most "
       "this are a client restart, not a strike"},
      {"clients", "stall-announces", kind::integer, num(3),
       "a leecher whose 'left' has not gone down for this many announces ..."},
      {"clients", "stall-time", kind::timespan, ts(30min), "... and for this long is stalled"},
      {"clients", "max-rate", kind::integer, num(1250000000),
       "fastest plausible upload/download rate in bytes/s; faster counters are broken (a strike)"},
      {"clients", "quarantine-strikes", kind::integer, num(3),
       "counter/key strikes that quarantine a peer (never handed to others); 0: never"},
      // [health]
      {"health", "tick", kind::timespan, ts(1min),
       "time between two health evaluations of a swarm (changes go to the supervisor)"},
      {"health", "window", kind::timespan, ts(30min),
       "sliding window of completions, arrivals and departures"},
      {"health", "min-peers", kind::integer, num(5),
       "smaller swarms are judged only on 'no seeders' (fractions of few peers are noise)"},
      {"health", "min-seeder-ratio", kind::real, real(0.1),
       "seeders/leechers below this is 'few seeders' (degraded)"},
      {"health", "stalled-fraction", kind::real, real(0.25),
       "stalled/leechers at or above this is degraded ..."},
      {"health", "stalled-fraction-critical", kind::real, real(0.5), "... and this critical"},
      {"health", "abusive-fraction", kind::real, real(0.2),
       "misbehaving peers / peers at or above this is 'abusive clients'"},
      {"health", "recovery-evaluations", kind::integer, num(3),
       "evaluations in a row a better state must persist before it is reported (hysteresis)"},
      {"health", "warn-seeders", kind::boolean, flag(true),
       "ask seeders of a swarm degraded for lack of seeding to keep seeding (warning message)"},
      {"health", "seeder-warning", kind::string,
       str("This torrent is short of seeders: please keep seeding, it helps others finish"),
       "the warning message sent to those seeders"},
      // [allocation]
      {"allocation", "policy", kind::string, str("adaptive"),
       "peer allocation policy of new swarms: adaptive, random, role-aware, seeder-rotation, "
       "stalled-boost, flash-crowd, reachability-aware or contribution-weighted"},
      {"allocation", "leecher-seeder-share", kind::real, real(0.5),
       "share of a leecher's reply given to seeders first, (0, 1]"},
      {"allocation", "stalled-boost-fraction", kind::real, real(0.5),
       "share of a stalled leecher's reply for seeders and the most complete peers, (0, 1]"},
      {"allocation", "flash-crowd-seeder-ratio", kind::real, real(0.05),
       "adaptive goes flash-crowd (tracker-side super-seeding) below this seeders/leechers "
       "ratio"},
      {"allocation", "flash-crowd-reveal", kind::integer, num(8),
       "flash-crowd: leechers each seeder is revealed to per round"},
      {"allocation", "contribution-floor", kind::integer, num(10),
       "poor contributors still get at least this many peers"},
      // [remediation]
      {"remediation", "enable", kind::boolean, flag(true),
       "spawn a remediation actor for degraded/critical swarms"},
      {"remediation", "min-peers", kind::integer, num(5),
       "smaller swarms get no remediation (a lone leecher of a dead torrent)"},
      {"remediation", "watch-ticks", kind::integer, num(3),
       "health ticks a strategy runs before it is judged (kept or rolled back) ..."},
      {"remediation", "watch-time", kind::timespan, ts(0s),
       "... and at least this long; 0s: one announce interval (clients must come back)"},
      {"remediation", "healthy-time", kind::timespan, ts(10min),
       "healthy this long ends the remediation and restores the defaults"},
      {"remediation", "leecher-interval-scale", kind::real, real(0.5),
       "interval factor the starving strategies set for leechers, (0, 1]"},
      {"remediation", "operator-holdoff", kind::timespan, ts(1h),
       "after an operator stops a swarm's remediation, no automatic one starts for that swarm "
       "for this long"},
      {"remediation", "history-size", kind::integer, num(64),
       "remediation actions remembered per swarm"},
      // [supervisor]
      {"supervisor", "max-restarts", kind::integer, num(3),
       "restarts of one crashed swarm allowed within restart-window; then it is left down "
       "(its next announce starts an empty swarm)"},
      {"supervisor", "restart-window", kind::timespan, ts(1min), "see max-restarts"},
      {"supervisor", "event-log-size", kind::integer, num(256),
       "supervisor events kept (restarts, give-ups, remediations)"},
      // [probe]
      {"probe", "enable", kind::boolean, flag(false),
       "probe peers' reachability with an outbound TCP connection and a BitTorrent handshake "
       "(unreachable peers are never paired, peers answering something else are quarantined)"},
      {"probe", "timeout", kind::timespan, ts(3s),
       "deadline of a probe's connect, and again of the handshake exchange"},
      {"probe", "max-concurrent", kind::integer, num(64), "probes connecting or talking at once"},
      {"probe", "max-queued", kind::integer, num(1024),
       "probes waiting for a free slot; more are dropped and counted"},
      {"probe", "max-per-swarm", kind::integer, num(8),
       "probes one swarm may have outstanding; other peers wait for a later announce"},
      {"probe", "reprobe-after", kind::timespan, ts(1h),
       "a peer is probed again after this long; one address is dialled at most once per this "
       "period however many swarms it is in"},
      {"probe", "allow-private", kind::boolean, flag(false),
       "also dial private, CGNAT, link-local and unique-local addresses (a tracker on a LAN)"},
      {"probe", "allow-loopback", kind::boolean, flag(false),
       "also dial loopback addresses (tests only)"},
      // [access]
      {"access", "mode", kind::string, str("off"),
       "info_hash access list: off (serve every torrent), allow (serve only listed ones) or "
       "deny (refuse listed ones); refused announces get 'torrent not allowed on this "
       "tracker' and never create a swarm"},
      {"access", "file", kind::string, str(""),
       "file of the access list: one info_hash (40 hex digits) per line, '#' comments and "
       "blank lines allowed; re-read on SIGHUP and POST /api/access/reload; admin API "
       "changes are written back to it. Empty: the list lives in memory only"},
      // [admin]
      {"admin", "port", kind::integer, num(0),
       "TCP port of the admin API and /metrics; 0: no admin server (the default)"},
      {"admin", "bind", kind::string, str("127.0.0.1"),
       "address of the admin API; loopback by default (the API can change swarms)"},
      {"admin", "token", kind::string, str(""),
       "bearer token every admin request must send (at least 16 characters; never logged or "
       "shown); required when admin.port is set, unless admin.token-file is"},
      {"admin", "token-file", kind::string, str(""),
       "file holding the admin token (first line; beats admin.token), so it stays out of the "
       "command line and the config file"},
      // [cluster]
      {"cluster", "port", kind::integer, num(0),
       "TCP port of the cluster (CAF middleman over TLS); 0: no cluster (the default)"},
      {"cluster", "bind", kind::string, str("127.0.0.1"),
       "address the cluster port listens on (the cluster interface only)"},
      {"cluster", "advertise", kind::string, str(""),
       "address other nodes dial to reach this one; empty: cluster.bind (required when bind is "
       "0.0.0.0 or ::)"},
      {"cluster", "node-name", kind::string, str(""),
       "this node's name, unique in the cluster (what ownership hashing ranks); empty: "
       "advertise:port"},
      {"cluster", "seeds", kind::string, str(""),
       "nodes to contact at start: \"host:port,host:port\" (IPv6 as [addr]:port; may list this "
       "node)"},
      {"cluster", "secret", kind::string, str(""),
       "shared cluster secret, at least 16 bytes: only processes that know it can join or send "
       "messages (TLS identity derived from it); also the UDP connection-id key unless "
       "udp.connection-id-key is set (never logged or shown)"},
      {"cluster", "secret-file", kind::string, str(""),
       "file holding the cluster secret (first line; beats cluster.secret)"},
      {"cluster", "heartbeat-interval", kind::timespan, ts(500ms),
       "middleman heartbeats between nodes"},
      {"cluster", "connection-timeout", kind::timespan, ts(3s),
       "a node silent this long is dead (its swarms are taken over); at least twice the "
       "heartbeat interval"},
      {"cluster", "replication-period", kind::timespan, ts(2s),
       "how often each owner sends snapshots of its swarms to the next node in rank order (a "
       "crash loses at most this much)"},
      {"cluster", "forward-timeout", kind::timespan, ts(4s),
       "deadline of an announce or scrape forwarded to the owning node"},
      {"cluster", "rebalance-period", kind::timespan, ts(30s),
       "how often each node shares its load and, when hot, moves its hottest swarms to the "
       "least-loaded nodes; 0: no automatic rebalancing"},
      {"cluster", "rebalance-factor", kind::real, real(1.5),
       "a node rebalances while its load (announces/s) is above this times the cluster mean"},
      {"cluster", "rebalance-min-rate", kind::real, real(50.0),
       "... and above this many announces/s (idle clusters never shuffle)"},
      {"cluster", "rebalance-max-moves", kind::integer, num(2),
       "at most this many swarms moved per node per rebalance period"},
      // [log]
      {"log", "level", kind::string, str("info"),
       "log level: trace, debug, info, warn, error, critical or off (nothing per request above "
       "debug)"},
      // [shutdown]
      {"shutdown", "drain-timeout", kind::timespan, ts(10s),
       "on SIGINT/SIGTERM, how long open requests may still finish before the actors stop"},
  };
  return table;
}

/// Command-line shortcuts (flat names) for the options people type most.
struct alias_def {
  const char* name;
  const char* target;  ///< "category.name"
  kind type;
  /// A switch that sets its boolean target to false (CAF 0.17 switches
  /// cannot be given a value on the command line, so "off" needs its own).
  bool negate = false;
};

const std::vector<alias_def>& alias_table() {
  static const std::vector<alias_def> table = {
      {"http-port", "http.port", kind::integer},
      {"bind", "http.bind", kind::string},
      {"io-threads", "http.io-threads", kind::integer},
      {"log-level", "log.level", kind::string},
      {"udp-port", "udp.port", kind::integer},
      {"no-udp", "udp.enable", kind::boolean, true},
      {"admin-port", "admin.port", kind::integer},
      {"admin-token", "admin.token", kind::string},
      {"node-name", "cluster.node-name", kind::string},
      {"cluster-port", "cluster.port", kind::integer},
      {"seeds", "cluster.seeds", kind::string},
      {"cluster-secret", "cluster.secret", kind::string},
  };
  return table;
}

const alias_def* find_alias(caf::string_view name) {
  for (const auto& a : alias_table())
    if (name == a.name) return &a;
  return nullptr;
}

bool is_own_category(caf::string_view c) {
  return c == "http" || c == "udp" || c == "tracker" || c == "log" || c == "shutdown" ||
         c == "clients" || c == "health" || c == "allocation" || c == "remediation" ||
         c == "supervisor" || c == "probe" || c == "admin" || c == "access" || c == "cluster";
}

template <class T>
void add_option(caf::config_option_set& set, const char* category, const char* name,
                const char* help) {
  caf::config_option_adder{set, category}.add<T>(name, help);
}

void register_option(caf::config_option_set& set, const char* category, const char* name, kind type,
                     const char* help) {
  switch (type) {
    case kind::integer:
      add_option<std::int64_t>(set, category, name, help);
      break;
    case kind::boolean:
      add_option<bool>(set, category, name, help);
      break;
    case kind::string:
      add_option<std::string>(set, category, name, help);
      break;
    case kind::string_list:
      add_option<std::vector<std::string>>(set, category, name, help);
      break;
    case kind::timespan:
      add_option<caf::timespan>(set, category, name, help);
      break;
    case kind::real:
      add_option<double>(set, category, name, help);
      break;
  }
}

// -- reading the merged content -------------------------------------------------

/// The effective value of every own option: default, then whatever CAF
/// merged into `content` (file, then command line), then a command-line
/// alias (aliases exist only on the command line, so they win).
std::map<std::string, caf::config_value> effective_values(const caf::settings& content) {
  std::map<std::string, caf::config_value> out;
  for (const auto& o : option_table()) {
    const auto key = o.key();
    if (auto v = caf::get_if(&content, key))
      out[key] = *v;
    else
      out[key] = o.fallback;
  }
  for (const auto& a : alias_table()) {
    if (auto v = caf::get_if(&content, a.name)) {
      if (!a.negate) {
        out[a.target] = *v;
      } else if (auto b = caf::get_if<bool>(v); b && *b) {
        out[a.target] = flag(false);
      }
    }
  }
  return out;
}

/// Collects problems, one line each, naming the option.
class problems {
 public:
  void add(std::string line) { lines_.push_back(std::move(line)); }
  bool empty() const noexcept { return lines_.empty(); }
  void print(std::ostream& err) const {
    for (const auto& l : lines_) err << "swarmkeeper: " << l << '\n';
  }

 private:
  std::vector<std::string> lines_;
};

/// Typed access to the effective values with range checks.
class reader {
 public:
  reader(const std::map<std::string, caf::config_value>& values, problems& p)
      : values_(values), problems_(p) {}

  std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) {
    const auto& v = values_.at(key);
    auto x = caf::get_if<std::int64_t>(&v);
    if (!x) {
      problems_.add(std::string(key) + ": expected an integer, got " + format_value(v));
      return lo;
    }
    if (*x < lo || *x > hi) {
      problems_.add(std::string(key) + " must be between " + std::to_string(lo) + " and " +
                    std::to_string(hi) + " (got " + std::to_string(*x) + ")");
      return lo;
    }
    return *x;
  }

  bool boolean(const char* key) {
    const auto& v = values_.at(key);
    auto x = caf::get_if<bool>(&v);
    if (!x) {
      problems_.add(std::string(key) + ": expected true or false, got " + format_value(v));
      return false;
    }
    return *x;
  }

  std::string string(const char* key) {
    const auto& v = values_.at(key);
    auto x = caf::get_if<std::string>(&v);
    if (!x) {
      problems_.add(std::string(key) + ": expected a quoted string, got " + shown_value(key, v));
      return {};
    }
    return *x;
  }

  std::vector<std::string> strings(const char* key) {
    std::vector<std::string> out;
    const auto& v = values_.at(key);
    if (auto s = caf::get_if<std::string>(&v)) {  // a single value is a list of one
      out.push_back(*s);
      return out;
    }
    auto list = caf::get_if<caf::config_value::list>(&v);
    if (!list) {
      problems_.add(std::string(key) + ": expected a list of strings, got " + format_value(v));
      return out;
    }
    for (const auto& item : *list) {
      if (auto s = caf::get_if<std::string>(&item))
        out.push_back(*s);
      else
        problems_.add(std::string(key) + ": expected a list of strings, got element " +
                      format_value(item));
    }
    return out;
  }

  /// A number within [lo, hi] (an integer value is accepted too).
  double number(const char* key, double lo, double hi) {
    const auto& v = values_.at(key);
    double x = 0;
    if (auto d = caf::get_if<double>(&v)) {
      x = *d;
    } else if (auto i = caf::get_if<std::int64_t>(&v)) {
      x = static_cast<double>(*i);
    } else {
      problems_.add(std::string(key) + ": expected a number such as 0.5, got " + format_value(v));
      return lo;
    }
    if (!(x >= lo && x <= hi)) {
      problems_.add(std::string(key) + " must be between " + format_value(real(lo)) + " and " +
                    format_value(real(hi)) + " (got " + format_value(real(x)) + ")");
      return lo;
    }
    return x;
  }

  /// A duration of at least `lo` and at most `hi`.
  caf::timespan duration(const char* key, caf::timespan lo, caf::timespan hi) {
    const auto& v = values_.at(key);
    auto x = caf::get_if<caf::timespan>(&v);
    if (!x) {
      problems_.add(std::string(key) + ": expected a duration such as 30min, 45s or 500ms, got " +
                    format_value(v));
      return lo;
    }
    if (*x < lo || *x > hi) {
      problems_.add(std::string(key) + " must be between " + format_duration(lo) + " and " +
                    format_duration(hi) + " (got " + format_duration(*x) + ")");
      return lo;
    }
    return *x;
  }

 private:
  const std::map<std::string, caf::config_value>& values_;
  problems& problems_;
};

std::chrono::seconds whole_seconds(caf::timespan t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t);
}
std::chrono::milliseconds millis(caf::timespan t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t);
}

constexpr caf::timespan one_day = std::chrono::hours(24);
constexpr caf::timespan one_week = std::chrono::hours(24 * 7);

void resolve(const caf::settings& content, daemon_settings& out, problems& p) {
  const auto values = effective_values(content);
  reader r{values, p};
  auto& h = out.http;
  h.port = static_cast<std::uint16_t>(r.integer("http.port", 1, 65535));
  const auto bind = r.string("http.bind");
  h.bind_addresses.clear();
  if (!bind.empty()) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(bind, ec);
    if (ec)
      p.add("http.bind: '" + bind + "' is not an IPv4 or IPv6 address");
    else
      h.bind_addresses.push_back(bind);
  }
  auto io = static_cast<std::size_t>(r.integer("http.io-threads", 0, 256));
  // Half the cores: the other half runs the actors. Measured on 2 cores
  // (bench/http, unpinned): one I/O thread served 1.25x the requests of two,
  // because fewer threads batch more per hand-over (see http_lane).
  if (io == 0) io = std::max(1u, std::thread::hardware_concurrency() / 2);
  h.io_threads = io;
  h.max_url_length = static_cast<std::size_t>(r.integer("http.max-url-length", 64, 1 << 20));
  h.max_header_bytes = static_cast<std::size_t>(r.integer("http.max-header-bytes", 256, 1 << 20));
  h.limits.max_query_length =
      static_cast<std::size_t>(r.integer("http.max-query-length", 16, 1 << 20));
  h.read_timeout = millis(r.duration("http.read-timeout", 10ms, one_day));
  h.write_timeout = millis(r.duration("http.write-timeout", 10ms, one_day));
  out.bridge.request_timeout = millis(r.duration("http.request-timeout", 1ms, 1h));
  h.max_pipeline = static_cast<std::size_t>(r.integer("http.max-pipeline", 1, 1024));
  h.max_connections = static_cast<std::size_t>(r.integer("http.max-connections", 1, 10000000));
  std::vector<address_block> blocks;
  for (const auto& text : r.strings("http.trusted-proxies")) {
    if (auto b = address_block::parse(text))
      blocks.push_back(*b);
    else
      p.add("http.trusted-proxies: '" + text + "' is not an address or CIDR block");
  }
  h.proxies = trusted_proxies{std::move(blocks)};
  h.trust_ip_param = r.boolean("http.trust-ip-param");
  h.retry_in_minutes = r.integer("http.retry-in", 1, 1440);
  out.bridge.lanes = h.io_threads;

  auto& s = out.swarm;
  s.announce_interval = whole_seconds(r.duration("tracker.interval", 1s, one_week));
  s.min_interval = whole_seconds(r.duration("tracker.min-interval", 1s, one_week));
  s.default_numwant = static_cast<std::int32_t>(r.integer("tracker.default-numwant", 0, 10000));
  s.max_numwant = static_cast<std::int32_t>(r.integer("tracker.max-numwant", 1, 10000));
  s.peer_timeout = whole_seconds(r.duration("tracker.peer-timeout", 1s, one_week));
  s.sweep_period = whole_seconds(r.duration("tracker.sweep-period", 1s, one_day));
  s.sweep_batch = static_cast<std::size_t>(r.integer("tracker.sweep-batch", 1, 1 << 24));
  s.idle_lifetime = whole_seconds(r.duration("tracker.idle-swarm-time", 0s, one_week));
  s.max_peers = static_cast<std::size_t>(r.integer("tracker.max-peers-per-swarm", 1, 4294967294LL));
  h.limits.max_scrape_hashes =
      static_cast<std::size_t>(r.integer("tracker.max-scrape-hashes", 1, 1000));
  s.rng_seed = static_cast<std::uint64_t>(
      r.integer("tracker.rng-seed", 0, std::numeric_limits<std::int64_t>::max()));
  h.limits.max_numwant = s.max_numwant;
  s.intervals.starving_leecher_scale = r.number("tracker.starving-interval-scale", 0.01, 1.0);
  s.intervals.large_swarm_peers =
      static_cast<std::size_t>(r.integer("tracker.large-swarm-peers", 1, 4294967294LL));
  s.intervals.large_swarm_scale = r.number("tracker.large-swarm-interval-scale", 1.0, 4.0);
  s.intervals.jitter = r.number("tracker.interval-jitter", 0.0, 0.5);

  // [clients]
  // Always a list (empty by default): the admin API adds to it at run time,
  // and every swarm shares this one object.
  s.banned_clients = std::make_shared<live_ban_list>();
  const auto banned = r.string("clients.banned");
  if (!banned.empty()) {
    std::string error;
    if (auto list = client_ban_list::parse(banned, &error)) {
      s.banned_clients = std::make_shared<live_ban_list>(std::move(*list));
    } else {
      p.add("clients.banned: " + error);
    }
  }
  s.banned_retry_in_minutes = r.integer("clients.banned-retry-in", -1, 10080);
  if (s.banned_retry_in_minutes == 0)
    p.add("clients.banned-retry-in must be -1 (never) or 1..10080 minutes (got 0)");
  auto& b = s.behaviour;
  b.early_announce_slack = whole_seconds(r.duration("clients.early-slack", 0s, one_day));
  b.early_warn_after = static_cast<std::uint32_t>(r.integer("clients.warn-after-early", 0, 1000));
  b.early_refuse_after =
      static_cast<std::uint32_t>(r.integer("clients.refuse-after-early", 0, 1000));
  b.duplicate_window = whole_seconds(r.duration("clients.duplicate-window", 0s, one_day));
  b.counter_noise = static_cast<std::uint64_t>(
      r.integer("clients.counter-noise", 0, std::numeric_limits<std::int64_t>::max()));
  b.stall_announces = static_cast<std::uint32_t>(r.integer("clients.stall-announces", 1, 1000));
  b.stall_time = whole_seconds(r.duration("clients.stall-time", 0s, one_week));
  b.max_rate_bytes_per_second = static_cast<double>(
      r.integer("clients.max-rate", 1, std::numeric_limits<std::int64_t>::max()));
  b.quarantine_strikes =
      static_cast<std::uint32_t>(r.integer("clients.quarantine-strikes", 0, 1000));

  // [health]
  s.health_tick = whole_seconds(r.duration("health.tick", 1s, one_day));
  auto& hc = s.health;
  hc.window = whole_seconds(r.duration("health.window", 1min, one_week));
  hc.min_peers = static_cast<std::uint64_t>(r.integer("health.min-peers", 1, 1000000));
  hc.min_seeder_ratio = r.number("health.min-seeder-ratio", 0.0, 1000.0);
  hc.stalled_fraction_degraded = r.number("health.stalled-fraction", 0.0, 1.0);
  hc.stalled_fraction_critical = r.number("health.stalled-fraction-critical", 0.0, 1.0);
  hc.abusive_fraction = r.number("health.abusive-fraction", 0.0, 1.0);
  hc.recovery_evaluations =
      static_cast<std::uint32_t>(r.integer("health.recovery-evaluations", 1, 1000));
  s.warn_seeders_when_degraded = r.boolean("health.warn-seeders");
  s.seeder_warning_text = r.string("health.seeder-warning");
  if (s.warn_seeders_when_degraded && s.seeder_warning_text.empty())
    p.add("health.seeder-warning must not be empty while health.warn-seeders is on");

  // [allocation]
  const auto policy = r.string("allocation.policy");
  if (auto k = parse_policy(policy)) {
    s.default_policy = *k;
  } else {
    std::string names;
    for (auto n : policy_names) names += (names.empty() ? "" : ", ") + std::string(n);
    p.add("allocation.policy: '" + policy + "' is not one of " + names);
  }
  auto& a = s.allocation;
  a.leecher_seeder_share = r.number("allocation.leecher-seeder-share", 0.01, 1.0);
  a.stalled_boost_fraction = r.number("allocation.stalled-boost-fraction", 0.01, 1.0);
  a.flash_crowd_seeder_ratio = r.number("allocation.flash-crowd-seeder-ratio", 0.0, 1.0);
  a.flash_crowd_reveal =
      static_cast<std::uint32_t>(r.integer("allocation.flash-crowd-reveal", 1, 100000));
  a.contribution_floor =
      static_cast<std::size_t>(r.integer("allocation.contribution-floor", 0, 10000));

  // [remediation], [supervisor]
  auto& sv = out.supervisor;
  sv.remediation = r.boolean("remediation.enable");
  sv.remediation_min_peers =
      static_cast<std::uint64_t>(r.integer("remediation.min-peers", 0, 1000000));
  auto& rc = sv.remediation_cfg;
  rc.watch_ticks = static_cast<std::uint32_t>(r.integer("remediation.watch-ticks", 1, 1000));
  rc.watch_time = whole_seconds(r.duration("remediation.watch-time", 0s, one_week));
  sv.operator_holdoff = whole_seconds(r.duration("remediation.operator-holdoff", 0s, one_week));
  rc.healthy_time = whole_seconds(r.duration("remediation.healthy-time", 0s, one_week));
  rc.leecher_interval_scale = r.number("remediation.leecher-interval-scale", 0.01, 1.0);
  s.history_size = static_cast<std::size_t>(r.integer("remediation.history-size", 1, 100000));
  sv.max_restarts = static_cast<std::uint32_t>(r.integer("supervisor.max-restarts", 1, 1000));
  sv.restart_window = whole_seconds(r.duration("supervisor.restart-window", 1s, one_day));
  sv.event_log_size = static_cast<std::size_t>(r.integer("supervisor.event-log-size", 1, 1000000));
  if (p.empty()) {
    if (auto err = sv.validate(); !err.empty()) p.add("[supervisor] " + err);
  }

  if (p.empty()) {
    // Cross-field rules (min interval <= interval, timeout > interval, ...)
    // live with the swarm config; report them under the tracker section.
    // (Includes the [clients], [health] and [allocation] cross-field rules.)
    if (auto err = s.validate(); !err.empty()) p.add("[tracker] " + err);
  }

  // [udp]: request timeout and tracker limits are shared with HTTP, so one
  // swarm answers the same whatever the transport.
  out.udp_enabled = r.boolean("udp.enable");
  auto& u = out.udp;
  u.port = static_cast<std::uint16_t>(r.integer("udp.port", 1, 65535));
  u.bind = r.string("udp.bind");
  if (!u.bind.empty()) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(u.bind, ec);
    if (ec) p.add("udp.bind: '" + u.bind + "' is not an IPv4 or IPv6 address");
  } else {
    u.bind = bind;  // empty too: 0.0.0.0 and ::
  }
  u.workers = static_cast<std::size_t>(r.integer("udp.workers", 1, 256));
  u.max_in_flight = static_cast<std::size_t>(r.integer("udp.max-in-flight", 1, 1 << 24));
  // A secret: problems name the option and the expected form, never the value.
  u.connection_id_key = r.string("udp.connection-id-key");
  if (!u.connection_id_key.empty()) {
    const bool hex32 =
        u.connection_id_key.size() == 32 &&
        std::all_of(u.connection_id_key.begin(), u.connection_id_key.end(),
                    [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; });
    if (!hex32)
      p.add("udp.connection-id-key must be exactly 32 hex digits (or empty for a random key)");
  }
  u.trust_ip_field = r.boolean("udp.trust-ip-field");
  u.request_timeout = out.bridge.request_timeout;
  u.limits = h.limits;
  if (p.empty()) {
    if (auto err = u.validate(); !err.empty()) p.add(err);
  }

  // [probe]: the prober's settings, and the per-swarm decisions.
  out.probe_enabled = r.boolean("probe.enable");
  auto& pc = out.probe;
  pc.timeout = millis(r.duration("probe.timeout", 10ms, 1min));
  pc.max_concurrent = static_cast<std::size_t>(r.integer("probe.max-concurrent", 1, 4096));
  pc.max_queued = static_cast<std::size_t>(r.integer("probe.max-queued", 0, 1 << 20));
  pc.cooldown = whole_seconds(r.duration("probe.reprobe-after", 1s, one_week));
  pc.allow_private = r.boolean("probe.allow-private");
  pc.allow_loopback = r.boolean("probe.allow-loopback");
  s.probe.enabled = out.probe_enabled;
  s.probe.max_outstanding = static_cast<std::size_t>(r.integer("probe.max-per-swarm", 1, 4096));
  s.probe.reprobe_after = pc.cooldown;
  // An answer takes at most two deadlines once dialled; leave room for the
  // prober's queue before a swarm forgets an outstanding probe.
  s.probe.result_timeout = std::max<std::chrono::seconds>(
      std::chrono::seconds{300}, whole_seconds(pc.timeout * 4 + std::chrono::seconds{60}));
  if (p.empty()) {
    if (auto err = pc.validate(); !err.empty()) p.add(err);
  }

  // [access]: one node-wide object shared by both front ends and the admin
  // API. A bad file is a config error at start (exit 2); on reload the old
  // list stays (see actors/access_list.hpp).
  {
    const auto mode_text = r.string("access.mode");
    const auto file = r.string("access.file");
    access_mode mode = access_mode::off;
    if (auto m = parse_access_mode(mode_text))
      mode = *m;
    else
      p.add("access.mode: '" + mode_text + "' is not one of off, allow, deny");
    access_list initial;
    if (!file.empty()) {
      std::string error;
      if (auto list = load_access_file(file, &error))
        initial = std::move(*list);
      else
        p.add("access.file: " + error);
    }
    out.access = std::make_shared<access_control>(mode, file, std::move(initial));
    out.http.access = out.access;
    out.udp.access = out.access;
    out.admin.access = out.access;
  }

  // [admin]: off unless a port is given; then a token is mandatory.
  auto& ad = out.admin;
  ad.port = static_cast<std::uint16_t>(r.integer("admin.port", 0, 65535));
  out.admin_enabled = ad.port != 0;
  ad.bind = r.string("admin.bind");
  {
    boost::system::error_code ec;
    boost::asio::ip::make_address(ad.bind, ec);
    if (ec) p.add("admin.bind: '" + ad.bind + "' is not an IPv4 or IPv6 address");
  }
  ad.token = r.string("admin.token");
  const auto token_file = r.string("admin.token-file");
  if (!token_file.empty()) {
    std::ifstream f{token_file};
    std::string line;
    if (!f || !std::getline(f, line)) {
      p.add("admin.token-file: cannot read '" + token_file + "'");
    } else {
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
      ad.token = line;
    }
  }
  if (out.admin_enabled) {
    // Never echo the token: only say what is wrong with it.
    if (ad.token.empty())
      p.add("admin.port is set but no admin token is: give --admin-token=T, admin.token or "
            "admin.token-file");
    else if (ad.token.size() < 16 ||
             std::any_of(ad.token.begin(), ad.token.end(), [](char c) {
               return std::isgraph(static_cast<unsigned char>(c)) == 0;
             }))
      p.add("admin.token must be at least 16 printable characters without spaces");
  }

  // [cluster]: off unless a port is given; then a secret is mandatory.
  {
    auto& cl = out.cluster;
    cl.port = static_cast<std::uint16_t>(r.integer("cluster.port", 0, 65535));
    cl.bind = r.string("cluster.bind");
    cl.advertise = r.string("cluster.advertise");
    cl.node_name = r.string("cluster.node-name");
    for (const auto* key : {"cluster.bind", "cluster.advertise"}) {
      const auto addr = r.string(key);
      if (addr.empty() && std::string(key) == "cluster.advertise") continue;
      boost::system::error_code ec;
      boost::asio::ip::make_address(addr, ec);
      if (ec) p.add(std::string(key) + ": '" + addr + "' is not an IPv4 or IPv6 address");
    }
    std::string error;
    if (auto seeds = cluster::parse_seeds(r.string("cluster.seeds"), &error))
      cl.seeds = std::move(*seeds);
    else
      p.add("cluster.seeds: " + error);
    cl.secret = r.string("cluster.secret");
    const auto secret_file = r.string("cluster.secret-file");
    if (!secret_file.empty()) {
      std::ifstream f{secret_file};
      std::string line;
      if (!f || !std::getline(f, line)) {
        p.add("cluster.secret-file: cannot read '" + secret_file + "'");
      } else {
        while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
          line.pop_back();
        cl.secret = line;
      }
    }
    cl.heartbeat_interval = millis(r.duration("cluster.heartbeat-interval", 10ms, 1min));
    cl.connection_timeout = millis(r.duration("cluster.connection-timeout", 20ms, 10min));
    cl.replication_period = millis(r.duration("cluster.replication-period", 10ms, one_day));
    cl.forward_timeout = millis(r.duration("cluster.forward-timeout", 10ms, 10min));
    cl.rebalance_period = millis(r.duration("cluster.rebalance-period", 0ms, one_day));
    if (cl.rebalance_period.count() > 0 && cl.rebalance_period < 100ms)
      p.add("cluster.rebalance-period must be 0 (off) or at least 100ms");
    cl.rebalance_factor = r.number("cluster.rebalance-factor", 1.01, 1000.0);
    cl.rebalance_min_rate = r.number("cluster.rebalance-min-rate", 0.0, 1e9);
    cl.rebalance_max_moves =
        static_cast<std::uint32_t>(r.integer("cluster.rebalance-max-moves", 1, 10000));
    if (p.empty()) {
      if (auto err = cl.validate(); !err.empty()) p.add(err);
    }
    // One connection-id key for the whole cluster: a client may send its
    // connect to one node and its announce to another.
    if (cl.enabled() && out.udp.connection_id_key.empty() && cl.secret.size() >= 16)
      out.udp.connection_id_key = cluster::derive_connection_id_key(cl.secret);
  }

  out.log_level = r.string("log.level");
  if (p.empty() && spdlog::level::from_str(out.log_level) == spdlog::level::off &&
      out.log_level != "off")
    p.add("log.level: '" + out.log_level +
          "' is not one of trace, debug, info, warn, error, critical, off");
  out.drain_timeout = millis(r.duration("shutdown.drain-timeout", 0s, 1h));
}

// -- strict checks of the config file -----------------------------------------

/// Renders a CAF parser error ("parser_error(...)") in words; with `opts`,
/// a bad command-line value also says what the option expects.
std::string describe(const caf::error& err, const caf::config_option_set* opts = nullptr) {
  if (err.category() != caf::atom("parser")) return caf::actor_system_config::render(err);
  const auto code = static_cast<caf::pec>(err.code());
  std::string text = caf::to_string(code);
  std::replace(text.begin(), text.end(), '_', ' ');
  const auto& ctx = err.context();
  if (ctx.match_elements<caf::settings>()) {
    const auto& s = ctx.get_as<caf::settings>(0);
    if (auto arg = caf::get_if<std::string>(&s, "argument")) {
      if (code == caf::pec::not_an_option) return "unknown option '" + *arg + "'";
      const auto name = arg->substr(0, arg->find('='));
      if (opts != nullptr && name.size() > 2 && name.compare(0, 2, "--") == 0) {
        if (auto opt = opts->cli_long_name_lookup(caf::string_view{name}.substr(2))) {
          if (opt->is_flag())
            return "'" + name + "' is a switch: give it without a value to turn it on";
          return "invalid value in '" + *arg + "': expected " + expected_text(opt->type_name());
        }
      }
      text += " in '" + *arg + "'";
    }
    auto line = caf::get_if<std::int64_t>(&s, "line");
    auto column = caf::get_if<std::int64_t>(&s, "column");
    if (line && column)
      text += " at line " + std::to_string(*line) + ", column " + std::to_string(*column);
  }
  return text;
}

/// Every key of the file must be a known option with a value of its type.
void check_file_keys(const caf::settings& raw, const caf::config_option_set& opts,
                     const std::string& file, problems& p) {
  for (const auto& [key, value] : raw) {
    if (auto section = caf::get_if<caf::settings>(&value)) {
      for (const auto& [name, v] : *section) {
        const auto* opt = opts.qualified_name_lookup(key, name);
        if (opt == nullptr) {
          p.add(file + ": unknown option '" + name + "' in [" + key + "]");
          continue;
        }
        if (auto err = opt->check(v))
          p.add(file + ": " + key + "." + name + ": expected " + expected_text(opt->type_name()) +
                ", got " + shown_value(key + "." + name, v));
      }
      continue;
    }
    if (find_alias(key)) {
      const auto* a = find_alias(key);
      p.add(file + ": '" + key + "' is a command-line shortcut; in a config file write '" +
            std::string(std::strchr(a->target, '.') + 1) + "' in the [" +
            std::string(a->target, std::strchr(a->target, '.')) + "] section");
      continue;
    }
    if (opts.qualified_name_lookup("global", key) == nullptr)
      p.add(file + ": unknown option '" + key + "' outside any section");
  }
}

void write_value_line(std::ostream& os, const std::string& name, const caf::config_value& v) {
  os << name << '=' << format_value(v) << '\n';
}

}  // namespace

swarmkeeper_config::swarmkeeper_config() {
  for (const auto& o : option_table())
    register_option(custom_options_, o.category, o.name, o.type, o.help);
  for (const auto& a : alias_table()) {
    const std::string help = a.negate ? std::string("turns --") + a.target + " off"
                                      : std::string("shortcut for --") + a.target;
    // config_option copies the description, so a temporary is fine.
    register_option(custom_options_, "global", a.name, a.type, help.c_str());
  }
  // CAF 0.17 lets an actor drain its whole mailbox before yielding its
  // thread; bound it so one busy swarm cannot starve the others.
  set("scheduler.max-throughput", 64);
  // Work sharing (one queue, workers block on a condition variable) instead
  // of CAF's default work stealing, whose idle workers poll and then sleep
  // in steps of 50 us to 10 ms: every announce arrives from an I/O thread,
  // so with stealing it often waits for a sleeping worker. Measured with
  // bench/http (tracker pinned to one CPU): 2x requests/s with
  // Connection: close, 1.4x with keep-alive. See README.
  set("scheduler.policy", caf::atom("sharing"));
}

std::vector<std::pair<std::string, std::string>> redacted_config(const swarmkeeper_config& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto values = effective_values(cfg.content);
  for (const auto& o : option_table()) {
    const auto key = o.key();
    const auto& v = values.at(key);
    if (is_secret(key)) {
      auto s = caf::get_if<std::string>(&v);
      out.emplace_back(key, s != nullptr && s->empty() ? "" : "<redacted>");
    } else if (auto s = caf::get_if<std::string>(&v)) {
      out.emplace_back(key, *s);  // unquoted: JSON quotes it
    } else {
      out.emplace_back(key, format_value(v));
    }
  }
  return out;
}

std::string dump_config(const swarmkeeper_config& cfg) {
  std::ostringstream os;
  os << "; swarmkeeper configuration: the effective values (defaults < config file <\n"
        "; command line). Load it with --config-file=FILE.\n";
  const auto values = effective_values(cfg.content);
  const char* current = "";
  for (const auto& o : option_table()) {
    if (std::strcmp(current, o.category) != 0) {
      os << "\n[" << o.category << "]\n";
      current = o.category;
    }
    os << "; " << o.help << '\n';
    write_value_line(os, o.name, values.at(o.key()));
  }
  // CAF's own settings (scheduler, logger, middleman, ...) with its defaults.
  const auto caf_content = cfg.dump_content();
  for (const auto& [category, value] : caf_content) {
    auto section = caf::get_if<caf::settings>(&value);
    if (!section || is_own_category(category)) continue;
    os << "\n[" << category << "]\n";
    for (const auto& [name, v] : *section) {
      if (caf::get_if<caf::settings>(&v)) continue;  // no nested sections in 0.17
      write_value_line(os, name, v);
    }
  }
  return os.str();
}

load_action load_config(int argc, char** argv, swarmkeeper_config& cfg, daemon_settings& out,
                        std::ostream& out_stream, std::ostream& err_stream) {
  std::vector<std::string> args;
  std::string config_file;
  bool dump = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    constexpr caf::string_view file_opt = "--config-file";
    if (a.compare(0, file_opt.size(), file_opt.data(), file_opt.size()) == 0 &&
        (a.size() == file_opt.size() || a[file_opt.size()] == '=')) {
      if (a.size() <= file_opt.size() + 1) {
        err_stream << "swarmkeeper: --config-file needs a file: --config-file=FILE\n";
        return load_action::exit_error;
      }
      config_file = a.substr(file_opt.size() + 1);
      continue;
    }
    if (a == "--dump-config") {
      dump = true;
      continue;
    }
    args.push_back(std::move(a));
  }

  // The file: CAF would quietly fall back to caf-application.ini in the
  // working directory; we read only a file the user named, and insist on it.
  std::string file_text;
  problems p;
  if (!config_file.empty()) {
    std::ifstream f{config_file};
    if (!f) {
      err_stream << "swarmkeeper: cannot open config file '" << config_file
                 << "': " << std::strerror(errno) << '\n';
      return load_action::exit_error;
    }
    file_text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::istringstream raw_stream{file_text};
    auto raw = caf::actor_system_config::parse_config(raw_stream);
    if (!raw) {
      err_stream << "swarmkeeper: config file '" << config_file << "': " << describe(raw.error())
                 << " (strings must be quoted, e.g. bind=\"::1\")\n";
      return load_action::exit_error;
    }
    check_file_keys(*raw, cfg.options(), config_file, p);
  }
  for (const auto& a : args) {
    if (a == "-h" || a == "-?" || a == "--help" || a == "--long-help") {
      // CAF's help lists the options; say first how they fit together (and
      // correct CAF's line about caf-application.ini, which we never read).
      out_stream << "usage: swarmkeeper [--config-file=FILE] [--dump-config] "
                    "[--SECTION.OPTION=VALUE ...]\n"
                    "  Defaults are built in; a config file (CAF INI syntax, see "
                    "deploy/swarmkeeper.ini) is read only when --config-file names one.\n"
                    "  The command line beats the file. --dump-config prints the effective "
                    "configuration; --long-help lists every option.\n\n";
      break;
    }
  }
  std::istringstream ini{file_text};
  if (auto err = cfg.parse(args, ini)) {
    err_stream << "swarmkeeper: " << describe(err, &cfg.options()) << " (see --help)\n";
    return load_action::exit_error;
  }
  if (cfg.cli_helptext_printed) return load_action::exit_ok;  // --help
  for (const auto& extra : cfg.remainder) p.add("unexpected argument '" + extra + "'");
  resolve(cfg.content, out, p);
  if (!p.empty()) {
    p.print(err_stream);
    return load_action::exit_error;
  }
  if (dump) {
    out_stream << dump_config(cfg);
    out_stream.flush();
    return load_action::exit_ok;
  }
  return load_action::run;
}

}  // namespace sk
