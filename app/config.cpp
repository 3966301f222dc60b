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
#include <stdexcept>
#include <thread>

#include <spdlog/common.h>
#include <spdlog/version.h>
#include <boost/asio/ip/address.hpp>
#include <boost/version.hpp>
#include <caf/all.hpp>
#include <caf/defaults.hpp>

#include "cluster/secret.hpp"
#include "net/client_address.hpp"

// The build passes the project version (CMake `project(VERSION)`); a build
// outside the project's CMake (the fuzz targets) has none.
#ifndef SWARMKEEPER_VERSION
#define SWARMKEEPER_VERSION "unversioned"
#endif

namespace sk {
namespace config {

namespace {

using namespace std::chrono_literals;

constexpr caf::timespan one_day = std::chrono::hours(24);
constexpr caf::timespan one_week = std::chrono::hours(24 * 7);
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
/// Counts stored in 32 bits whose all-ones value is reserved.
constexpr std::int64_t u32_count_max = 4294967294LL;

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

// -- building the table ---------------------------------------------------------

option_def integer(const char* section, const char* name, std::int64_t fallback, std::int64_t lo,
                   std::int64_t hi, const char* doc) {
  return {section, name, value_type::integer, caf::config_value{fallback},
          integer_range{lo, hi, std::nullopt}, doc};
}

/// An integer in [lo, hi] or exactly `extra` (a value with its own meaning).
option_def integer_or(const char* section, const char* name, std::int64_t fallback,
                      std::int64_t extra, std::int64_t lo, std::int64_t hi, const char* doc) {
  return {section, name, value_type::integer, caf::config_value{fallback},
          integer_range{lo, hi, extra}, doc};
}

option_def duration(const char* section, const char* name, caf::timespan fallback,
                    caf::timespan lo, caf::timespan hi, const char* doc) {
  return {section, name, value_type::duration, caf::config_value{fallback},
          duration_range{lo, hi, std::nullopt}, doc};
}

/// A duration in [lo, hi] or exactly `extra` (0s: off).
option_def duration_or(const char* section, const char* name, caf::timespan fallback,
                       caf::timespan extra, caf::timespan lo, caf::timespan hi,
                       const char* doc) {
  return {section, name, value_type::duration, caf::config_value{fallback},
          duration_range{lo, hi, extra}, doc};
}

option_def real(const char* section, const char* name, double fallback, double lo, double hi,
                const char* doc) {
  return {section, name, value_type::real, caf::config_value{fallback}, real_range{lo, hi}, doc};
}

option_def flag(const char* section, const char* name, bool fallback, const char* doc) {
  return {section, name, value_type::boolean, caf::config_value{fallback}, no_range{}, doc};
}

option_def text(const char* section, const char* name, const char* fallback, const char* doc) {
  return {section, name, value_type::string, caf::config_value{std::string{fallback}}, no_range{},
          doc};
}

option_def secret(const char* section, const char* name, const char* doc) {
  auto o = text(section, name, "", doc);
  o.secret = true;
  return o;
}

option_def choice(const char* section, const char* name, const char* fallback,
                  std::vector<std::string> names, const char* doc) {
  return {section, name, value_type::string, caf::config_value{std::string{fallback}},
          choice_set{std::move(names)}, doc};
}

option_def text_list(const char* section, const char* name, const char* doc) {
  return {section,   name, value_type::string_list, caf::config_value{caf::config_value::list{}},
          no_range{}, doc};
}

std::vector<std::string> policy_choices() {
  return {policy_names.begin(), policy_names.end()};
}

std::vector<std::string> access_mode_choices() {
  return {to_string(access_mode::off), to_string(access_mode::allow),
          to_string(access_mode::deny)};
}

/// spdlog's level names as `spdlog::level::from_str` reads them ("warn",
/// not spdlog's display name "warning").
std::vector<std::string> log_level_choices() {
  return {"trace", "debug", "info", "warn", "error", "critical", "off"};
}

std::vector<option_def> option_table() {
  return {
      // [http]
      integer("http", "port", 6969, 1, 65535,
              "TCP port of the HTTP tracker (announce, scrape, health)"),
      text("http", "bind", "",
           "address to listen on; empty: 0.0.0.0 and :: (IPv4 and IPv6, each on its own socket)"),
      integer("http", "io-threads", 0, 0, 256,
              "I/O threads (each one lane of the gateway); 0: half the CPU cores, at least 1"),
      integer("http", "max-url-length", 8192, 64, 1 << 20,
              "longest request target in bytes (path + query); longer gets 414"),
      integer("http", "max-header-bytes", 8192, 256, 1 << 20,
              "largest header block in bytes (besides the request line); larger gets 431"),
      integer("http", "max-query-length", 6144, 16, 1 << 20,
              "longest announce/scrape query string accepted by the parser (a bencoded failure "
              "beyond)"),
      duration("http", "read-timeout", 15s, 10ms, one_day,
               "deadline for reading a request, and idle time before a keep-alive connection is "
               "closed"),
      duration("http", "write-timeout", 15s, 10ms, one_day, "deadline for writing responses"),
      duration("http", "request-timeout", 5s, 1ms, 1h,
               "how long a request (HTTP or UDP) waits for its swarm before a failure with 'retry "
               "in' is sent"),
      integer("http", "max-pipeline", 16, 1, 1024,
              "requests in flight per connection (HTTP pipelining); reading pauses beyond"),
      integer("http", "max-connections", 10000, 1, 10000000,
              "connections served at once; more are accepted and closed at once"),
      text_list("http", "trusted-proxies",
                "proxies (addresses or CIDR blocks) whose X-Forwarded-For / X-Real-IP are "
                "believed, e.g. [\"127.0.0.1\", \"10.0.0.0/8\"]"),
      flag("http", "trust-ip-param", false,
           "believe the announce 'ip' parameter (lets clients register any address)"),
      integer("http", "retry-in", 1, 1, 1440,
              "minutes sent as BEP 31 'retry in' with failures that retrying can fix"),
      // [udp]
      flag("udp", "enable", true,
           "serve the UDP tracker (BEP 15; its limits are those of [tracker]); --no-udp turns it "
           "off on the command line"),
      integer("udp", "port", 6969, 1, 65535,
              "UDP port of the UDP tracker (IPv4 and IPv6; may equal http.port)"),
      text("udp", "bind", "",
           "address to listen on; empty: the same as http.bind (empty there too: 0.0.0.0 and ::)"),
      integer("udp", "workers", 1, 1, 256,
              "socket workers, each with its own thread and SO_REUSEPORT sockets"),
      integer("udp", "max-in-flight", 4096, 1, 1 << 24,
              "announces/scrapes one worker may have waiting for swarms; more are dropped and "
              "counted"),
      secret("udp", "connection-id-key",
             "secret key of connection ids: 32 hex digits shared by a cluster, or empty for a "
             "random key per process (derived from cluster.secret in a cluster; never logged)"),
      flag("udp", "trust-ip-field", false,
           "believe the announce's IPv4 'ip' field (lets clients register any address)"),
      // [tracker]
      duration("tracker", "interval", 30min, 1s, one_week,
               "announce 'interval' sent to clients"),
      duration("tracker", "min-interval", 15min, 1s, one_week,
               "announce 'min interval' sent to clients (at most the interval)"),
      integer("tracker", "default-numwant", 50, 0, 10000,
              "peers returned when a client does not send numwant"),
      integer("tracker", "max-numwant", 50, 1, 10000,
              "most peers returned to one announce (larger numwant is clamped)"),
      duration("tracker", "peer-timeout", 65min, 1s, one_week,
               "a peer that has not announced for this long is dropped (must exceed the "
               "interval)"),
      duration("tracker", "sweep-period", 1min, 1s, one_day,
               "time between two expiry sweeps of a swarm"),
      integer("tracker", "sweep-batch", 1024, 1, 1 << 24,
              "peers examined per sweep step (bounds the pause between announces)"),
      duration("tracker", "idle-swarm-time", 10min, 0s, one_week,
               "a swarm without peers for this long ends its actor"),
      integer("tracker", "max-peers-per-swarm", 1000000, 1, u32_count_max,
              "most peers stored per swarm (memory bound against peer_id flooding)"),
      integer("tracker", "max-scrape-hashes", 74, 1, 1000,
              "most info_hash values in one scrape request"),
      integer("tracker", "rng-seed", 0, 0, int64_max,
              "seed of peer selection; 0: unpredictable (set only for reproducible tests)"),
      real("tracker", "starving-interval-scale", 0.5, 0.01, 1.0,
           "interval factor for leechers of starving swarms (no/few seeders, at least "
           "health.min-peers peers); jittered, never below min-interval"),
      integer("tracker", "large-swarm-peers", 1000, 1, u32_count_max,
              "healthy swarms with at least this many peers get longer intervals"),
      real("tracker", "large-swarm-interval-scale", 1.5, 1.0, 4.0,
           "interval factor for healthy large swarms; at most peer-timeout - min-interval"),
      real("tracker", "interval-jitter", 0.1, 0.0, 0.5,
           "+- fraction by which adjusted intervals are jittered (the plain interval stays "
           "exact)"),
      // [clients]
      text("clients", "banned", "",
           "banned peer_id prefixes with the failure reason shown to the user: "
           "\"-XX0001-=reason;-YY=reason\" (%XX escapes in prefixes; longest prefix wins); the "
           "admin API changes the list at run time"),
      integer_or("clients", "banned-retry-in", -1, -1, 1, 10080,
                 "BEP 31 'retry in' minutes sent to banned clients; -1: never"),
      duration("clients", "early-slack", 30s, 0s, one_day,
               "an announce counts as too early only if it comes sooner than min-interval minus "
               "max(this, 5 % of min-interval)"),
      integer("clients", "warn-after-early", 3, 0, 1000,
              "early announces in a row (repeats and events not counted) from which one is "
              "served with a warning; 0: never warn"),
      integer("clients", "refuse-after-early", 5, 0, 1000,
              "early announces in a row from which one is refused with 'retry in' (until "
              "min-interval has passed since the last accepted one); 0: never refuse"),
      duration("clients", "duplicate-window", 2min, 0s, one_day,
               "an announce repeating the previous one (same event or none, counters within "
               "counter-noise) this soon is answered as a repeat: never early, never a strike"),
      integer("clients", "counter-noise", 16777216, 0, int64_max,
              "bytes by which left/uploaded/downloaded may move in a repeat; counters reset to "
              "at most this are a client restart, not a strike"),
      integer("clients", "stall-announces", 3, 1, 1000,
              "a leecher whose 'left' has not gone down for this many announces ..."),
      duration("clients", "stall-time", 30min, 0s, one_week, "... and for this long is stalled"),
      integer("clients", "max-rate", 1250000000, 1, int64_max,
              "fastest plausible upload/download rate in bytes/s; faster counters are broken (a "
              "strike)"),
      integer("clients", "quarantine-strikes", 3, 0, 1000,
              "counter/key strikes that quarantine a peer (never handed to others); 0: never"),
      // [health]
      duration("health", "tick", 1min, 1s, one_day,
               "time between two health evaluations of a swarm (changes go to the supervisor)"),
      duration("health", "window", 30min, 1min, one_week,
               "sliding window of completions, arrivals and departures"),
      integer("health", "min-peers", 5, 1, 1000000,
              "smaller swarms are unevaluated: never degraded or critical (fractions of few "
              "peers are noise)"),
      real("health", "min-seeder-ratio", 0.1, 0.0, 1000.0,
           "seeders/leechers below this is 'few seeders' (degraded)"),
      real("health", "stalled-fraction", 0.25, 0.0, 1.0,
           "stalled/leechers at or above this is degraded ..."),
      real("health", "stalled-fraction-critical", 0.5, 0.0, 1.0, "... and this critical"),
      real("health", "early-leave-seeder-ratio", 1.0, 0.0, 1000.0,
           "'seeders leave early' is judged only while seeders per downloading leecher is "
           "below this (with enough seeders, completers leaving soon harm nobody)"),
      real("health", "abusive-fraction", 0.2, 0.0, 1.0,
           "misbehaving peers / peers at or above this is 'abusive clients'"),
      integer("health", "recovery-evaluations", 3, 1, 1000,
              "evaluations in a row a better state must persist before it is reported "
              "(hysteresis)"),
      flag("health", "warn-seeders", true,
           "ask seeders of a swarm degraded for lack of seeding to keep seeding (warning "
           "message)"),
      text("health", "seeder-warning",
           "This torrent is short of seeders: please keep seeding, it helps others finish",
           "the warning message sent to those seeders (not empty while warn-seeders is on)"),
      // [allocation]
      choice("allocation", "policy", "adaptive", policy_choices(),
             "peer allocation policy of new swarms"),
      real("allocation", "leecher-seeder-share", 0.5, 0.01, 1.0,
           "share of a leecher's reply given to seeders first"),
      real("allocation", "stalled-boost-fraction", 0.5, 0.01, 1.0,
           "share of a stalled leecher's reply for seeders and the most complete peers"),
      real("allocation", "flash-crowd-seeder-ratio", 0.05, 0.0, 1.0,
           "adaptive goes flash-crowd (tracker-side super-seeding) below this seeders/leechers "
           "ratio"),
      integer("allocation", "flash-crowd-reveal", 8, 1, 100000,
              "flash-crowd: leechers each seeder is revealed to per round"),
      integer("allocation", "contribution-floor", 10, 0, 10000,
              "poor contributors still get at least this many peers"),
      // [remediation]
      flag("remediation", "enable", true,
           "spawn a remediation actor for degraded/critical swarms"),
      integer("remediation", "min-peers", 5, 0, 1000000,
              "smaller swarms get no automatic remediation (a lone leecher of a dead torrent)"),
      integer("remediation", "watch-ticks", 3, 1, 1000,
              "health ticks a strategy runs before it is judged (kept or rolled back) ..."),
      duration("remediation", "watch-time", 0s, 0s, one_week,
               "... and at least this long; 0s: one announce interval (clients must come back)"),
      duration("remediation", "healthy-time", 10min, 0s, one_week,
               "healthy this long ends the remediation and restores the defaults"),
      real("remediation", "leecher-interval-scale", 0.5, 0.01, 1.0,
           "interval factor the starving strategies set for leechers"),
      duration("remediation", "operator-holdoff", 1h, 0s, one_week,
               "after an operator stops a swarm's remediation, no automatic one starts for that "
               "swarm for this long (an operator start still works)"),
      integer("remediation", "history-size", 64, 1, 100000,
              "remediation actions remembered per swarm"),
      // [supervisor]
      integer("supervisor", "max-restarts", 3, 1, 1000,
              "restarts of one crashed swarm allowed within restart-window; then it is left "
              "down (its next announce starts an empty swarm)"),
      duration("supervisor", "restart-window", 1min, 1s, one_day, "see max-restarts"),
      integer("supervisor", "event-log-size", 256, 1, 1000000,
              "supervisor events kept (restarts, give-ups, remediations)"),
      // [probe]
      flag("probe", "enable", false,
           "probe peers' reachability with an outbound TCP connection and a BitTorrent "
           "handshake (unreachable peers are never paired, peers answering something else are "
           "quarantined)"),
      duration("probe", "timeout", 3s, 10ms, 1min,
               "deadline of a probe's connect, and again of the handshake exchange"),
      integer("probe", "max-concurrent", 64, 1, 4096, "probes connecting or talking at once"),
      integer("probe", "max-queued", 1024, 0, 1 << 20,
              "probes waiting for a free slot; more are dropped and counted"),
      integer("probe", "max-per-swarm", 8, 1, 4096,
              "probes one swarm may have outstanding; other peers wait for a later announce"),
      duration("probe", "reprobe-after", 1h, 1s, one_week,
               "a peer is probed again after this long; one address is dialled at most once per "
               "this period however many swarms it is in"),
      flag("probe", "allow-private", false,
           "also dial private, CGNAT, link-local and unique-local addresses (a tracker on a "
           "LAN)"),
      flag("probe", "allow-loopback", false, "also dial loopback addresses (tests only)"),
      // [access]
      choice("access", "mode", "off", access_mode_choices(),
             "info_hash access list: off (serve every torrent), allow (serve only listed ones) "
             "or deny (refuse listed ones); refused announces get 'torrent not allowed on this "
             "tracker' and never create a swarm"),
      text("access", "file", "",
           "file of the access list: one info_hash (40 hex digits) per line, '#' comments and "
           "blank lines allowed; re-read on SIGHUP and POST /api/access/reload; admin API "
           "changes are written back to it. Empty: the list lives in memory only"),
      // [admin]
      integer("admin", "port", 0, 0, 65535,
              "TCP port of the admin API and /metrics; 0: no admin server"),
      text("admin", "bind", "127.0.0.1",
           "address of the admin API; loopback by default (the API can change swarms)"),
      secret("admin", "token",
             "bearer token every admin request must send (at least 16 printable characters; "
             "never logged or shown); required when admin.port is set, unless admin.token-file "
             "is"),
      text("admin", "token-file", "",
           "file holding the admin token (first line; beats admin.token), so it stays out of "
           "the command line and the config file"),
      // [cluster]
      integer("cluster", "port", 0, 0, 65535,
              "TCP port of the cluster (CAF middleman over TLS); 0: no cluster"),
      text("cluster", "bind", "127.0.0.1",
           "address the cluster port listens on (the cluster interface only)"),
      text("cluster", "advertise", "",
           "address other nodes dial to reach this one; empty: cluster.bind (required when bind "
           "is 0.0.0.0 or ::)"),
      text("cluster", "node-name", "",
           "this node's name, unique in the cluster (what ownership hashing ranks); empty: "
           "advertise:port"),
      text("cluster", "seeds", "",
           "nodes to contact at start: \"host:port,host:port\" (IPv6 as [addr]:port; may list "
           "this node)"),
      secret("cluster", "secret",
             "shared cluster secret, at least 16 bytes: only processes that know it can join or "
             "send messages (TLS identity derived from it); also the UDP connection-id key "
             "unless udp.connection-id-key is set (never logged or shown)"),
      text("cluster", "secret-file", "",
           "file holding the cluster secret (first line; beats cluster.secret)"),
      duration("cluster", "heartbeat-interval", 500ms, 10ms, 1min,
               "middleman heartbeats between nodes"),
      duration("cluster", "connection-timeout", 3s, 20ms, 10min,
               "a node silent this long is dead (its swarms are taken over); at least twice the "
               "heartbeat interval"),
      duration("cluster", "replication-period", 2s, 10ms, one_day,
               "how often each owner sends snapshots of its swarms to the next node in rank "
               "order (a crash loses at most this much)"),
      duration("cluster", "forward-timeout", 4s, 10ms, 10min,
               "deadline of an announce or scrape forwarded to the owning node"),
      duration_or("cluster", "rebalance-period", 30s, 0s, 100ms, one_day,
                  "how often each node shares its load and, when hot, moves its hottest swarms "
                  "to the least-loaded nodes; 0s: no automatic rebalancing"),
      real("cluster", "rebalance-factor", 1.5, 1.01, 1000.0,
           "a node rebalances while its load (announces/s) is above this times the cluster "
           "mean ..."),
      real("cluster", "rebalance-min-rate", 50.0, 0.0, 1e9,
           "... and above this many announces/s (idle clusters never shuffle)"),
      integer("cluster", "rebalance-max-moves", 2, 1, 10000,
              "at most this many swarms moved per node per rebalance period"),
      // [log]
      choice("log", "level", "info", log_level_choices(),
             "log level (nothing is logged per request above debug)"),
      // [shutdown]
      duration("shutdown", "drain-timeout", 10s, 0s, 1h,
               "on SIGINT/SIGTERM, how long open requests may still finish before the actors "
               "stop"),
      // [scheduler]: CAF's own option, read by CAF's scheduler.
      [] {
        auto o = integer("scheduler", "max-threads", 0, 0, 1024,
                         "actor scheduler threads; 0: CAF's default, the number of CPU cores "
                         "but at least 4");
        o.caf_owned = true;
        return o;
      }(),
  };
}

std::string type_word(value_type t) {
  switch (t) {
    case value_type::integer:
      return "integer";
    case value_type::boolean:
      return "switch (true or false)";
    case value_type::string:
      return "string";
    case value_type::string_list:
      return "list of strings";
    case value_type::duration:
      return "duration";
    case value_type::real:
      return "number";
  }
  return {};
}

/// The placeholder of a value on the command line (empty for switches).
std::string placeholder(const option_def& o) {
  if (auto c = std::get_if<choice_set>(&o.range)) {
    std::string out;
    for (const auto& n : c->names) out += (out.empty() ? "" : "|") + n;
    return out;
  }
  switch (o.type) {
    case value_type::integer:
      return "N";
    case value_type::boolean:
      return "";
    case value_type::string:
      return "TEXT";
    case value_type::string_list:
      return "LIST";
    case value_type::duration:
      return "DURATION";
    case value_type::real:
      return "X";
  }
  return {};
}

/// A value as an error message may show it.
std::string shown_value(const option_def& o, const caf::config_value& v) {
  return o.secret ? std::string("a value (not shown: the option is a secret)") : format_value(v);
}

bool has_type(value_type t, const caf::config_value& v) {
  switch (t) {
    case value_type::integer:
      return (caf::get_if<std::int64_t>(&v) != nullptr);
    case value_type::boolean:
      return (caf::get_if<bool>(&v) != nullptr);
    case value_type::string:
      return (caf::get_if<std::string>(&v) != nullptr);
    case value_type::string_list: {
      if ((caf::get_if<std::string>(&v) != nullptr)) return true;  // a list of one
      auto list = caf::get_if<caf::config_value::list>(&v);
      return list != nullptr &&
             std::all_of(list->begin(), list->end(), [](const caf::config_value& x) {
               return (caf::get_if<std::string>(&x) != nullptr);
             });
    }
    case value_type::duration:
      return (caf::get_if<caf::timespan>(&v) != nullptr);
    case value_type::real:
      return (caf::get_if<double>(&v) != nullptr) || (caf::get_if<std::int64_t>(&v) != nullptr);
  }
  return false;
}

/// Breaks `text` into lines of at most `width` characters (longer words
/// stay whole), each starting with `prefix`.
std::string wrap(const std::string& text, std::size_t width, const std::string& prefix) {
  std::string out;
  std::string line;
  std::istringstream words{text};
  std::string word;
  while (words >> word) {
    if (!line.empty() && prefix.size() + line.size() + 1 + word.size() > width) {
      out += prefix + line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += prefix + line + '\n';
  return out;
}

/// "--http.port" plus its shortcuts: "--http.port, --http-port", each
/// followed by `value` ("=N") when given.
std::string cli_names(const option_def& o, const std::string& value = "") {
  std::string out = "--" + o.key() + value;
  for (const auto& a : aliases()) {
    if (o.key() != a.target) continue;
    out += std::string(", --") + a.name + (a.negate ? "" : value);
  }
  return out;
}

/// "integer, 1 to 65535, default 6969".
std::string type_range_default(const option_def& o) {
  std::string out = type_word(o.type);
  const auto range = describe_range(o);
  if (!range.empty()) out += ", " + range;
  return out + ", default " + format_value(o.fallback);
}

const section_def& section_of(const option_def& o) {
  for (const auto& s : sections())
    if (std::strcmp(s.name, o.section) == 0) return s;
  throw std::logic_error(std::string("option ") + o.key() + " has no section");
}

}  // namespace

std::string option_def::key() const { return std::string(section) + "." + name; }

const std::vector<section_def>& sections() {
  static const std::vector<section_def> table = {
      {"http", "the HTTP tracker: listener, limits, deadlines",
       "net/http/http_server.hpp (http_server_config), net/gateway.hpp (deadline, retry in)"},
      {"udp", "the UDP tracker (BEP 15)", "net/udp/udp_server.hpp (udp_config)"},
      {"tracker", "replies, intervals and limits of every swarm",
       "tracker/swarm_config.hpp (swarm_config), the request limits of both transports"},
      {"clients", "client behaviour: bans, early announces, repeats, stalls, strikes",
       "tracker/swarm_config.hpp (swarm_config::behaviour, banned_clients)"},
      {"health", "how swarms judge their health",
       "tracker/swarm_config.hpp (swarm_config::health, health_tick, seeder warning)"},
      {"allocation", "which peers a reply hands out",
       "tracker/swarm_config.hpp (swarm_config::allocation, default_policy)"},
      {"remediation", "remediation of degraded and critical swarms",
       "runtime/supervisor.hpp (supervisor_config), swarm_config::history_size"},
      {"supervisor", "restarts of crashed swarms", "runtime/supervisor.hpp (supervisor_config)"},
      {"probe", "reachability probes of peers",
       "net/probe/reachability_prober.hpp (prober_config), swarm_config::probe"},
      {"access", "the info_hash access list", "tracker/access_list.hpp (access_control)"},
      {"admin", "the admin API and /metrics", "admin/admin_server.hpp (admin_config)"},
      {"cluster", "a cluster of tracker nodes",
       "cluster/cluster_config.hpp (cluster_config)"},
      {"log", "logging", "app/swarmkeeper_main.cpp (spdlog)"},
      {"shutdown", "stopping on SIGINT/SIGTERM", "app/swarmkeeper_main.cpp (drain)"},
      {"scheduler", "CAF's actor scheduler", "CAF's actor_system_config"},
  };
  return table;
}

const std::vector<option_def>& options() {
  static const std::vector<option_def> table = option_table();
  return table;
}

const std::vector<alias_def>& aliases() {
  static const std::vector<alias_def> table = {
      {"http-port", "http.port"},
      {"bind", "http.bind"},
      {"io-threads", "http.io-threads"},
      {"log-level", "log.level"},
      {"udp-port", "udp.port"},
      {"no-udp", "udp.enable", true},
      {"admin-port", "admin.port"},
      {"admin-token", "admin.token"},
      {"node-name", "cluster.node-name"},
      {"cluster-port", "cluster.port"},
      {"seeds", "cluster.seeds"},
      {"cluster-secret", "cluster.secret"},
  };
  return table;
}

const option_def* find_option(std::string_view key) {
  for (const auto& o : options()) {
    const std::string_view section = o.section;
    if (key.size() == section.size() + 1 + std::strlen(o.name) &&
        key.compare(0, section.size(), section) == 0 && key[section.size()] == '.' &&
        key.substr(section.size() + 1) == o.name)
      return &o;
  }
  return nullptr;
}

const alias_def* find_alias(std::string_view name) {
  for (const auto& a : aliases())
    if (name == a.name) return &a;
  return nullptr;
}

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

std::string describe_range(const option_def& o) {
  struct visitor {
    std::string operator()(const no_range&) const { return {}; }
    std::string operator()(const integer_range& r) const {
      std::string out = std::to_string(r.lo) + " to " + std::to_string(r.hi);
      return r.extra ? std::to_string(*r.extra) + " or " + out : out;
    }
    std::string operator()(const duration_range& r) const {
      std::string out = format_duration(r.lo) + " to " + format_duration(r.hi);
      return r.extra ? format_duration(*r.extra) + " or " + out : out;
    }
    std::string operator()(const real_range& r) const {
      return format_value(caf::config_value{r.lo}) + " to " + format_value(caf::config_value{r.hi});
    }
    std::string operator()(const choice_set& c) const {
      std::string out;
      for (const auto& n : c.names) out += (out.empty() ? "" : ", ") + n;
      return "one of " + out;
    }
  };
  return std::visit(visitor{}, o.range);
}

std::optional<std::string> check_value(const option_def& o, const caf::config_value& v) {
  const auto key = o.key();
  if (!has_type(o.type, v))
    return key + ": expected " + expected_text(o.type) + ", got " + shown_value(o, v);
  const auto out_of_range = [&](const std::string& lo, const std::string& hi,
                                const std::optional<std::string>& extra, const std::string& got) {
    return key + " must be " + (extra ? *extra + " or " : std::string()) + "between " + lo +
           " and " + hi + " (got " + got + ")";
  };
  if (auto r = std::get_if<integer_range>(&o.range)) {
    const auto x = *caf::get_if<std::int64_t>(&v);
    if ((x < r->lo || x > r->hi) && x != r->extra)
      return out_of_range(std::to_string(r->lo), std::to_string(r->hi),
                          r->extra ? std::optional<std::string>{std::to_string(*r->extra)}
                                   : std::nullopt,
                          std::to_string(x));
  } else if (auto r = std::get_if<duration_range>(&o.range)) {
    const auto x = *caf::get_if<caf::timespan>(&v);
    if ((x < r->lo || x > r->hi) && x != r->extra)
      return out_of_range(format_duration(r->lo), format_duration(r->hi),
                          r->extra ? std::optional<std::string>{format_duration(*r->extra)}
                                   : std::nullopt,
                          format_duration(x));
  } else if (auto r = std::get_if<real_range>(&o.range)) {
    const double x = (caf::get_if<double>(&v) != nullptr)
                         ? *caf::get_if<double>(&v)
                         : static_cast<double>(*caf::get_if<std::int64_t>(&v));
    if (!(x >= r->lo && x <= r->hi))
      return out_of_range(format_value(caf::config_value{r->lo}),
                          format_value(caf::config_value{r->hi}), std::nullopt,
                          format_value(caf::config_value{x}));
  } else if (auto c = std::get_if<choice_set>(&o.range)) {
    const auto& x = *caf::get_if<std::string>(&v);
    if (std::find(c->names.begin(), c->names.end(), x) == c->names.end())
      return key + ": '" + (o.secret ? std::string("(not shown)") : x) + "' is not " +
             describe_range(o);
  }
  return std::nullopt;
}

std::string expected_text(value_type t) {
  switch (t) {
    case value_type::integer:
      return "an integer";
    case value_type::boolean:
      return "true or false";
    case value_type::string:
      return "a quoted string";
    case value_type::string_list:
      return "a list of strings such as [\"a\", \"b\"]";
    case value_type::duration:
      return "a duration such as 30min, 45s or 500ms";
    case value_type::real:
      return "a number with a decimal point, such as 0.5";
  }
  return {};
}

const char* version() { return SWARMKEEPER_VERSION; }

std::string version_text() {
  std::ostringstream os;
  os << "swarmkeeper " << version() << " (CAF " << CAF_VERSION / 10000 << '.'
     << CAF_VERSION / 100 % 100 << '.' << CAF_VERSION % 100 << ", Boost "
     << BOOST_VERSION / 100000 << '.' << BOOST_VERSION / 100 % 1000 << '.'
     << BOOST_VERSION % 100 << ", spdlog " << SPDLOG_VER_MAJOR << '.' << SPDLOG_VER_MINOR << '.'
     << SPDLOG_VER_PATCH << ")\n";
  return os.str();
}

std::string help_text(bool long_help) {
  std::ostringstream os;
  os << "usage: swarmkeeper [--config-file=FILE] [--SECTION.OPTION=VALUE ...]\n"
        "       swarmkeeper --dump-config | --print-sample-config | --help | --long-help | "
        "--version\n\n";
  os << wrap("Defaults are built in. A config file (CAF INI syntax; --print-sample-config "
             "writes one) is read only when --config-file names one, and the command line "
             "beats the file. Unknown options and bad values stop the daemon with exit "
             "status 2. Switches take no value on the command line: --probe.enable turns one "
             "on, --no-udp turns the UDP tracker off.",
             78, "");
  if (!long_help) os << "--long-help also shows each option's type, range and default.\n";
  os << "\n";
  struct general {
    const char* names;
    const char* doc;
  };
  static constexpr general generals[] = {
      {"--config-file=FILE", "read this config file"},
      {"--dump-config", "print the effective configuration in config-file syntax and exit"},
      {"--print-sample-config", "print a config file listing every option at its default"},
      {"--help, -h", "print this help and exit"},
      {"--long-help", "print every option with its type, range and default, and exit"},
      {"--version", "print the version and exit"},
  };
  for (const auto& g : generals) {
    os << "  " << g.names << '\n';
    os << wrap(g.doc, 78, "      ");
  }
  const char* current = "";
  for (const auto& o : options()) {
    if (std::strcmp(current, o.section) != 0) {
      current = o.section;
      os << "\n[" << o.section << "] " << section_of(o).title << '\n';
    }
    const auto value = placeholder(o);
    os << "  " << cli_names(o, value.empty() ? "" : "=" + value) << '\n';
    os << wrap(o.doc, 78, "      ");
    if (long_help) os << wrap(type_range_default(o), 78, "      ");
  }
  return os.str();
}

std::string sample_config() {
  std::ostringstream os;
  os << "; swarmkeeper sample configuration (CAF 0.17 INI syntax).\n"
        ";\n"
        ";   swarmkeeper --config-file=/etc/swarmkeeper/swarmkeeper.ini\n"
        ";\n";
  std::string shortcuts;
  for (const auto& a : aliases()) shortcuts += (shortcuts.empty() ? "--" : ", --") + std::string(a.name);
  const std::string header =
      "Generated by `swarmkeeper --print-sample-config` from the option schema "
      "(app/config.cpp); a test compares this file with it, so change the schema, not the "
      "file. Every option is listed at its built-in default and commented out: the file "
      "changes nothing until you remove the ';' in front of an option. Precedence: built-in "
      "defaults < this file < the command line (--section.option=value, e.g. "
      "--tracker.interval=20min; shortcuts: " +
      shortcuts +
      "). Switches (true/false options) take no value on the command line: "
      "--http.trust-ip-param turns one on; --no-udp turns the UDP tracker off.";
  os << wrap(header, 78, "; ") << ";\n";
  os << wrap("Syntax: strings are quoted (\"::1\"), durations carry a unit (500ms, 45s, 30min, "
             "2h), lists are [\"a\", \"b\"], comments start with ';'. Unknown options, values "
             "of the wrong type and values out of range are errors at start-up: the daemon "
             "refuses to run on a config it does not understand. `swarmkeeper --dump-config` "
             "prints the effective configuration in this format.",
             78, "; ");
  const char* current = "";
  for (const auto& o : options()) {
    if (std::strcmp(current, o.section) != 0) {
      current = o.section;
      const auto& s = section_of(o);
      os << "\n[" << s.name << "]\n";
      os << wrap(std::string(s.title) + "; configures " + s.configures + ".", 78, "; ");
    }
    os << ";\n";
    os << wrap(std::string(o.doc) + ".", 78, "; ");
    os << wrap(type_range_default(o) + "; command line: " + cli_names(o) + ".", 78, "; ");
    os << ';' << o.name << '=' << format_value(o.fallback) << '\n';
  }
  return os.str();
}

std::string markdown_table() {
  const auto cell = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::ostringstream os;
  os << "| option | default | range | meaning |\n|---|---|---|---|\n";
  for (const auto& o : options()) {
    std::string names = "`" + o.key() + "`";
    for (const auto& a : aliases())
      if (o.key() == a.target) names += std::string(" (`--") + a.name + "`)";
    const auto range = describe_range(o);
    os << "| " << names << " | `" << cell(format_value(o.fallback)) << "` | "
       << (range.empty() ? type_word(o.type) : cell(range)) << " | " << cell(o.doc) << " |\n";
  }
  return os.str();
}

}  // namespace config

namespace {

using namespace std::chrono_literals;
using config::option_def;
using config::value_type;

// -- registration ----------------------------------------------------------------

template <class T>
void add_option(caf::config_option_set& set, const char* category, const char* name,
                const char* help) {
  caf::config_option_adder{set, category}.add<T>(name, help);
}

void register_option(caf::config_option_set& set, const char* category, const char* name,
                     value_type type, const char* help) {
  switch (type) {
    case value_type::integer:
      add_option<std::int64_t>(set, category, name, help);
      break;
    case value_type::boolean:
      add_option<bool>(set, category, name, help);
      break;
    case value_type::string:
      add_option<std::string>(set, category, name, help);
      break;
    case value_type::string_list:
      add_option<std::vector<std::string>>(set, category, name, help);
      break;
    case value_type::duration:
      add_option<caf::timespan>(set, category, name, help);
      break;
    case value_type::real:
      add_option<double>(set, category, name, help);
      break;
  }
}

const option_def& alias_target(const config::alias_def& a) {
  const auto* o = config::find_option(a.target);
  if (o == nullptr) throw std::logic_error(std::string("alias --") + a.name + " has no target");
  return *o;
}

// -- reading the merged content -------------------------------------------------

using value_map = std::map<std::string, caf::config_value>;

/// The effective value of every option: default, then whatever CAF merged
/// into `content` (file, then command line), then a command-line alias
/// (aliases exist only on the command line, so they win).
value_map effective_values(const caf::settings& content) {
  value_map out;
  for (const auto& o : config::options()) {
    const auto key = o.key();
    if (auto v = caf::get_if(&content, key))
      out[key] = *v;
    else
      out[key] = o.fallback;
  }
  for (const auto& a : config::aliases()) {
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

/// Typed access to the effective values, checked against the schema's type
/// and range. A value that fails is reported and read as the default, so
/// that reading can go on and report every problem at once.
class reader {
 public:
  reader(const value_map& values, problems& p) : values_(values), problems_(p) {}

  std::int64_t integer(const char* key) {
    return *caf::get_if<std::int64_t>(&checked(key, value_type::integer));
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

 private:
  /// The value of `key` if it passes the schema's checks, else its default.
  const caf::config_value& checked(const char* key, value_type type) {
    const auto* o = config::find_option(key);
    // Both are mistakes in this file, not in the user's config.
    if (o == nullptr) throw std::logic_error(std::string("resolve reads unknown option ") + key);
    if (o->type != type) throw std::logic_error(std::string("resolve misreads the type of ") + key);
    const auto& v = values_.at(key);
    if (auto problem = config::check_value(*o, v)) {
      problems_.add(std::move(*problem));
      return o->fallback;
    }
    return v;
  }

  const value_map& values_;
  problems& problems_;
};

std::chrono::seconds whole_seconds(caf::timespan t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t);
}
std::chrono::milliseconds millis(caf::timespan t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t);
}

/// Turns the effective values into `out`. Ranges come from the schema
/// (reader); what is checked here is the form of strings (addresses, keys,
/// lists) and, through each module's validate(), the rules between options.
void resolve(const caf::settings& content, daemon_settings& out, problems& p) {
  const auto values = effective_values(content);
  reader r{values, p};
  auto& h = out.http;
  h.port = static_cast<std::uint16_t>(r.integer("http.port"));
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
  auto io = static_cast<std::size_t>(r.integer("http.io-threads"));
  // Half the cores: the other half runs the actors. Measured on 2 cores
  // (bench/http, unpinned): one I/O thread served 1.25x the requests of two,
  // because fewer threads batch more per hand-over (see http_lane).
  if (io == 0) io = std::max(1u, std::thread::hardware_concurrency() / 2);
  h.io_threads = io;
  h.max_url_length = static_cast<std::size_t>(r.integer("http.max-url-length"));
  h.max_header_bytes = static_cast<std::size_t>(r.integer("http.max-header-bytes"));
  h.limits.max_query_length =
      static_cast<std::size_t>(r.integer("http.max-query-length"));
  h.read_timeout = millis(r.duration("http.read-timeout"));
  h.write_timeout = millis(r.duration("http.write-timeout"));
  out.bridge.request_timeout = millis(r.duration("http.request-timeout"));
  h.max_pipeline = static_cast<std::size_t>(r.integer("http.max-pipeline"));
  h.max_connections = static_cast<std::size_t>(r.integer("http.max-connections"));
  std::vector<address_block> blocks;
  for (const auto& text : r.strings("http.trusted-proxies")) {
    if (auto b = address_block::parse(text))
      blocks.push_back(*b);
    else
      p.add("http.trusted-proxies: '" + text + "' is not an address or CIDR block");
  }
  h.proxies = trusted_proxies{std::move(blocks)};
  h.trust_ip_param = r.boolean("http.trust-ip-param");
  h.retry_in_minutes = r.integer("http.retry-in");
  out.bridge.lanes = h.io_threads;

  auto& s = out.swarm;
  s.announce_interval = whole_seconds(r.duration("tracker.interval"));
  s.min_interval = whole_seconds(r.duration("tracker.min-interval"));
  s.default_numwant = static_cast<std::int32_t>(r.integer("tracker.default-numwant"));
  s.max_numwant = static_cast<std::int32_t>(r.integer("tracker.max-numwant"));
  s.peer_timeout = whole_seconds(r.duration("tracker.peer-timeout"));
  s.sweep_period = whole_seconds(r.duration("tracker.sweep-period"));
  s.sweep_batch = static_cast<std::size_t>(r.integer("tracker.sweep-batch"));
  s.idle_lifetime = whole_seconds(r.duration("tracker.idle-swarm-time"));
  s.max_peers = static_cast<std::size_t>(r.integer("tracker.max-peers-per-swarm"));
  h.limits.max_scrape_hashes =
      static_cast<std::size_t>(r.integer("tracker.max-scrape-hashes"));
  s.rng_seed = static_cast<std::uint64_t>(
      r.integer("tracker.rng-seed"));
  h.limits.max_numwant = s.max_numwant;
  s.intervals.starving_leecher_scale = r.number("tracker.starving-interval-scale");
  s.intervals.large_swarm_peers =
      static_cast<std::size_t>(r.integer("tracker.large-swarm-peers"));
  s.intervals.large_swarm_scale = r.number("tracker.large-swarm-interval-scale");
  s.intervals.jitter = r.number("tracker.interval-jitter");

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
  s.banned_retry_in_minutes = r.integer("clients.banned-retry-in");
  auto& b = s.behaviour;
  b.early_announce_slack = whole_seconds(r.duration("clients.early-slack"));
  b.early_warn_after = static_cast<std::uint32_t>(r.integer("clients.warn-after-early"));
  b.early_refuse_after =
      static_cast<std::uint32_t>(r.integer("clients.refuse-after-early"));
  b.duplicate_window = whole_seconds(r.duration("clients.duplicate-window"));
  b.counter_noise = static_cast<std::uint64_t>(
      r.integer("clients.counter-noise"));
  b.stall_announces = static_cast<std::uint32_t>(r.integer("clients.stall-announces"));
  b.stall_time = whole_seconds(r.duration("clients.stall-time"));
  b.max_rate_bytes_per_second = static_cast<double>(
      r.integer("clients.max-rate"));
  b.quarantine_strikes =
      static_cast<std::uint32_t>(r.integer("clients.quarantine-strikes"));

  // [health]
  s.health_tick = whole_seconds(r.duration("health.tick"));
  auto& hc = s.health;
  hc.window = whole_seconds(r.duration("health.window"));
  hc.min_peers = static_cast<std::uint64_t>(r.integer("health.min-peers"));
  hc.min_seeder_ratio = r.number("health.min-seeder-ratio");
  hc.stalled_fraction_degraded = r.number("health.stalled-fraction");
  hc.stalled_fraction_critical = r.number("health.stalled-fraction-critical");
  hc.abusive_fraction = r.number("health.abusive-fraction");
  hc.early_leave_seeder_ratio = r.number("health.early-leave-seeder-ratio");
  hc.recovery_evaluations =
      static_cast<std::uint32_t>(r.integer("health.recovery-evaluations"));
  s.warn_seeders_when_degraded = r.boolean("health.warn-seeders");
  s.seeder_warning_text = r.string("health.seeder-warning");
  if (s.warn_seeders_when_degraded && s.seeder_warning_text.empty())
    p.add("health.seeder-warning must not be empty while health.warn-seeders is on");

  // [allocation]
  // The schema's choices are policy_names: every name it accepts parses.
  s.default_policy = parse_policy(r.string("allocation.policy")).value_or(policy_kind::adaptive);
  auto& a = s.allocation;
  a.leecher_seeder_share = r.number("allocation.leecher-seeder-share");
  a.stalled_boost_fraction = r.number("allocation.stalled-boost-fraction");
  a.flash_crowd_seeder_ratio = r.number("allocation.flash-crowd-seeder-ratio");
  a.flash_crowd_reveal =
      static_cast<std::uint32_t>(r.integer("allocation.flash-crowd-reveal"));
  a.contribution_floor =
      static_cast<std::size_t>(r.integer("allocation.contribution-floor"));

  // [remediation], [supervisor]
  auto& sv = out.supervisor;
  sv.remediation = r.boolean("remediation.enable");
  sv.remediation_min_peers =
      static_cast<std::uint64_t>(r.integer("remediation.min-peers"));
  auto& rc = sv.remediation_cfg;
  rc.watch_ticks = static_cast<std::uint32_t>(r.integer("remediation.watch-ticks"));
  rc.watch_time = whole_seconds(r.duration("remediation.watch-time"));
  sv.operator_holdoff = whole_seconds(r.duration("remediation.operator-holdoff"));
  rc.healthy_time = whole_seconds(r.duration("remediation.healthy-time"));
  rc.leecher_interval_scale = r.number("remediation.leecher-interval-scale");
  s.history_size = static_cast<std::size_t>(r.integer("remediation.history-size"));
  sv.max_restarts = static_cast<std::uint32_t>(r.integer("supervisor.max-restarts"));
  sv.restart_window = whole_seconds(r.duration("supervisor.restart-window"));
  sv.event_log_size = static_cast<std::size_t>(r.integer("supervisor.event-log-size"));
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
  u.port = static_cast<std::uint16_t>(r.integer("udp.port"));
  u.bind = r.string("udp.bind");
  if (!u.bind.empty()) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(u.bind, ec);
    if (ec) p.add("udp.bind: '" + u.bind + "' is not an IPv4 or IPv6 address");
  } else {
    u.bind = bind;  // empty too: 0.0.0.0 and ::
  }
  u.workers = static_cast<std::size_t>(r.integer("udp.workers"));
  u.max_in_flight = static_cast<std::size_t>(r.integer("udp.max-in-flight"));
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
  pc.timeout = millis(r.duration("probe.timeout"));
  pc.max_concurrent = static_cast<std::size_t>(r.integer("probe.max-concurrent"));
  pc.max_queued = static_cast<std::size_t>(r.integer("probe.max-queued"));
  pc.cooldown = whole_seconds(r.duration("probe.reprobe-after"));
  pc.allow_private = r.boolean("probe.allow-private");
  pc.allow_loopback = r.boolean("probe.allow-loopback");
  s.probe.enabled = out.probe_enabled;
  s.probe.max_outstanding = static_cast<std::size_t>(r.integer("probe.max-per-swarm"));
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
  // list stays (see tracker/access_list.hpp).
  {
    const auto mode_text = r.string("access.mode");
    const auto file = r.string("access.file");
    // The schema's choices are the modes' names: every one it accepts parses.
    const access_mode mode = parse_access_mode(mode_text).value_or(access_mode::off);
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
  ad.port = static_cast<std::uint16_t>(r.integer("admin.port"));
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
    cl.port = static_cast<std::uint16_t>(r.integer("cluster.port"));
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
    cl.heartbeat_interval = millis(r.duration("cluster.heartbeat-interval"));
    cl.connection_timeout = millis(r.duration("cluster.connection-timeout"));
    cl.replication_period = millis(r.duration("cluster.replication-period"));
    cl.forward_timeout = millis(r.duration("cluster.forward-timeout"));
    cl.rebalance_period = millis(r.duration("cluster.rebalance-period"));
    cl.rebalance_factor = r.number("cluster.rebalance-factor");
    cl.rebalance_min_rate = r.number("cluster.rebalance-min-rate");
    cl.rebalance_max_moves =
        static_cast<std::uint32_t>(r.integer("cluster.rebalance-max-moves"));
    if (p.empty()) {
      if (auto err = cl.validate(); !err.empty()) p.add(err);
    }
    // One connection-id key for the whole cluster: a client may send its
    // connect to one node and its announce to another.
    if (cl.enabled() && out.udp.connection_id_key.empty() && cl.secret.size() >= 16)
      out.udp.connection_id_key = cluster::derive_connection_id_key(cl.secret);
  }

  // The schema's choices are names spdlog::level::from_str reads.
  out.log_level = r.string("log.level");
  out.drain_timeout = millis(r.duration("shutdown.drain-timeout"));
  // Read by CAF's scheduler from the merged content (see load_config).
  r.integer("scheduler.max-threads");
}

// -- strict checks of the command line and the file -------------------------------

/// What an argument of the command line is to load_config.
enum class arg_kind {
  config_file,
  dump_config,
  print_sample,
  help,
  long_help,
  version,
  option,  ///< for CAF to parse: an option of the schema or a shortcut
};

/// Renders a CAF parser error ("parser_error(...)") in words; a bad
/// command-line value also says what the option expects.
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
        const auto bare = name.substr(2);
        const option_def* o = config::find_option(bare);
        if (auto a = config::find_alias(bare)) o = &alias_target(*a);
        if (auto opt = opts->cli_long_name_lookup(caf::string_view{bare.data(), bare.size()})) {
          if (opt->is_flag())
            return "'" + name + "' is a switch: give it without a value to turn it on";
          if (o != nullptr) {
            // A secret's value stays out of the message.
            const std::string shown = o->secret ? name + "=..." : *arg;
            const auto range = config::describe_range(*o);
            return "invalid value in '" + shown + "': expected " +
                   config::expected_text(o->type) + (range.empty() ? "" : ", " + range);
          }
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

/// Every key of the file must be an option of the schema with a value of
/// its type (ranges are checked on the effective values).
void check_file_keys(const caf::settings& raw, const caf::config_option_set& opts,
                     const std::string& file, problems& p) {
  for (const auto& [section, value] : raw) {
    if (auto entries = caf::get_if<caf::settings>(&value)) {
      for (const auto& [name, v] : *entries) {
        const auto key = section + "." + name;
        const auto* o = config::find_option(key);
        if (o == nullptr) {
          p.add(file + ": unknown option '" + name + "' in [" + section + "]");
          continue;
        }
        // CAF's own check too: a value it rejects it would silently drop.
        const auto* opt = opts.qualified_name_lookup(section, name);
        const bool caf_rejects = opt == nullptr || static_cast<bool>(opt->check(v));
        auto problem = config::check_value(*o, v);
        const bool wrong_type = problem && problem->compare(0, key.size() + 11, key + ": expected") == 0;
        if (wrong_type || (caf_rejects && problem))
          p.add(file + ": " + *problem);
        else if (caf_rejects)
          p.add(file + ": " + key + ": expected " + config::expected_text(o->type) + ", got " +
                (o->secret ? std::string("a value (not shown: the option is a secret)")
                           : config::format_value(v)));
      }
      continue;
    }
    if (const auto* a = config::find_alias(section)) {
      const auto& o = alias_target(*a);
      p.add(file + ": '" + section + "' is a command-line shortcut; in a config file write '" +
            o.name + "' in the [" + o.section + "] section");
      continue;
    }
    p.add(file + ": unknown option '" + section + "' outside any section");
  }
}

}  // namespace

swarmkeeper_config::swarmkeeper_config() {
  for (const auto& o : config::options())
    if (!o.caf_owned) register_option(custom_options_, o.section, o.name, o.type, o.doc);
  for (const auto& a : config::aliases()) {
    const std::string help = a.negate ? std::string("turns --") + a.target + " off"
                                      : std::string("shortcut for --") + a.target;
    // config_option copies the description, so a temporary is fine.
    register_option(custom_options_, "global", a.name,
                    a.negate ? value_type::boolean : alias_target(a).type, help.c_str());
  }
  // Fixed, not options: measured choices that an operator has no reason to
  // change.
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
  for (const auto& o : config::options()) {
    const auto key = o.key();
    const auto& v = values.at(key);
    if (o.secret) {
      auto s = caf::get_if<std::string>(&v);
      out.emplace_back(key, s != nullptr && s->empty() ? "" : "<redacted>");
    } else if (auto s = caf::get_if<std::string>(&v)) {
      out.emplace_back(key, *s);  // unquoted: JSON quotes it
    } else {
      out.emplace_back(key, config::format_value(v));
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
  for (const auto& o : config::options()) {
    if (std::strcmp(current, o.section) != 0) {
      os << "\n[" << o.section << "]\n";
      current = o.section;
    }
    os << config::wrap(o.doc, 78, "; ");
    os << config::wrap(config::type_range_default(o), 78, "; ");
    os << o.name << '=' << config::format_value(values.at(o.key())) << '\n';
  }
  return os.str();
}

load_action load_config(int argc, char** argv, swarmkeeper_config& cfg, daemon_settings& out,
                        std::ostream& out_stream, std::ostream& err_stream) {
  // Sort the arguments: ours, options for CAF to parse, and mistakes. CAF
  // itself would accept every one of its own ~40 options (most of which do
  // nothing here), print its own help, and read caf-application.ini.
  std::vector<std::string> args;
  std::string config_file;
  bool dump = false, sample = false, help = false, long_help = false, version = false;
  problems p;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (name == "--config-file") {
      if (eq == std::string::npos || eq + 1 == a.size()) {
        err_stream << "swarmkeeper: --config-file needs a file: --config-file=FILE\n";
        return load_action::exit_error;
      }
      config_file = a.substr(eq + 1);
    } else if (a == "--dump-config") {
      dump = true;
    } else if (a == "--print-sample-config") {
      sample = true;
    } else if (a == "--help" || a == "-h" || a == "-?") {
      help = true;
    } else if (a == "--long-help") {
      long_help = true;
    } else if (a == "--version") {
      version = true;
    } else if (name.size() > 2 && name.compare(0, 2, "--") == 0 &&
               (config::find_option(std::string_view{name}.substr(2)) != nullptr ||
                config::find_alias(std::string_view{name}.substr(2)) != nullptr)) {
      args.push_back(std::move(a));
    } else if (!a.empty() && a[0] == '-') {
      p.add("unknown option '" + a + "' (see --help)");
    } else {
      p.add("unexpected argument '" + a + "'");
    }
  }
  // What needs no configuration is served first, whatever else was given.
  if (version) {
    out_stream << config::version_text();
    return load_action::exit_ok;
  }
  if (help || long_help) {
    out_stream << config::help_text(long_help);
    return load_action::exit_ok;
  }
  if (sample) {
    out_stream << config::sample_config();
    return load_action::exit_ok;
  }

  // The file: CAF would quietly fall back to caf-application.ini in the
  // working directory; we read only a file the user named, and insist on it.
  std::string file_text;
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
  std::istringstream ini{file_text};
  if (auto err = cfg.parse(args, ini)) {
    p.add(describe(err, &cfg.options()) + " (see --help)");
    p.print(err_stream);
    return load_action::exit_error;
  }
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
  // scheduler.max-threads=0 stands for CAF's own default; CAF itself would
  // start no worker at all.
  if (caf::get_or(cfg.content, "scheduler.max-threads", std::int64_t{0}) == 0)
    cfg.set("scheduler.max-threads", caf::defaults::scheduler::max_threads);
  return load_action::run;
}

}  // namespace sk
