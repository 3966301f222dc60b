// The option schema: the sections, the option table (one row per option:
// section, name, type, default, range, doc), the command-line shortcuts and
// the former names of options that moved. Everything else — registration,
// range checks, help, dump, sample file, README table — is generated from
// these tables.

#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/config.hpp"
#include "app/config_detail.hpp"
#include "admin/admin_log.hpp"

namespace sk {
namespace config {

namespace {

using namespace std::chrono_literals;

constexpr caf::timespan one_day = std::chrono::hours(24);
constexpr caf::timespan one_week = std::chrono::hours(24 * 7);
constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
/// Counts stored in 32 bits whose all-ones value is reserved.
constexpr std::int64_t u32_count_max = 4294967294LL;

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
std::vector<std::string> log_level_choices() { return admin_api::log_level_names(); }

std::vector<option_def> option_table() {
  return {
      // [http]
      integer("http", "port", 6969, 1, 65535,
              "TCP port of the HTTP tracker (announce, scrape, health)"),
      text("http", "bind", "",
           "address to listen on; empty: 0.0.0.0 and :: (IPv4 and IPv6, each on its own socket)"),
      integer("http", "io-threads", 0, 0, 256,
              "I/O threads (each one lane of the gateway); 0: half the CPUs this process may use "
              "(affinity mask and cgroup quota), at least 1"),
      integer("http", "max-url-length", 8192, 64, 1 << 20,
              "longest request target in bytes (path + query); longer gets 414"),
      integer("http", "max-header-bytes", 8192, 256, 1 << 20,
              "largest header block in bytes (besides the request line); larger gets 431"),
      integer("http", "max-query-length", 6144, 16, 1 << 20,
              "longest announce/scrape query string accepted by the parser (a bencoded failure "
              "beyond)"),
      duration("http", "read-timeout", 15s, 10ms, one_day,
               "deadline for reading a request, counted from when the server starts waiting for "
               "it (a keep-alive connection's idle time included): one deadline per request, so "
               "a client trickling its request a byte at a time holds a slot no longer"),
      duration("http", "write-timeout", 15s, 10ms, one_day, "deadline for writing responses"),
      duration_or("http", "defer-accept", 1s, 0s, 1s, 1h,
                  "a new connection is handed to the server only once its first request bytes "
                  "have arrived, or after this long without any (Linux TCP_DEFER_ACCEPT, whole "
                  "seconds rounded up; then http.read-timeout applies): one wake-up fewer per "
                  "connection for the server and the client, and connections that never send "
                  "anything are never accepted; 0s: accept at once"),
      integer("http", "max-pipeline", 16, 1, 1024,
              "requests in flight per connection (HTTP pipelining); reading pauses beyond"),
      integer("http", "max-connections", 10000, 1, 10000000,
              "connections served at once; at the limit a new connection takes the slot of the "
              "one waiting longest for its next request (idle keep-alive, or slow to send it), "
              "and is closed at once only while every connection is busy"),
      integer_or("http", "max-connections-per-address", 500, 0, 1, 10000000,
                 "connections one address (an IPv6 /64) may hold; more are closed at once; 0: no "
                 "cap. Trusted proxies are exempt (their idle connections are shed at the total "
                 "like any other). 5% of the default total: a CGNAT address shared by a few "
                 "hundred subscribers, each client with a keep-alive connection, stays under it"),
      text_list("http", "trusted-proxies",
                "proxies (addresses or CIDR blocks) whose X-Forwarded-For / X-Real-IP are "
                "believed, e.g. [\"127.0.0.1\", \"10.0.0.0/8\"]"),
      flag("http", "trust-ip-param", false,
           "believe the announce 'ip' parameter (lets clients register any address)"),
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
      secret("udp", "connection-id-key",
             "secret key of connection ids: 32 hex digits shared by a cluster, or empty for a "
             "random key per process (derived from cluster.secret in a cluster; never logged)"),
      flag("udp", "trust-ip-field", false,
           "believe the announce's IPv4 'ip' field (lets clients register any address)"),
      integer("udp", "max-url-data", 6144, 16, 65535,
              "longest BEP 41 URL data (the tracker URL's path and query in an announce's "
              "options) the parser keeps"),
      // [gateway]
      duration("gateway", "request-timeout", 5s, 1ms, 1h,
               "how long a request (HTTP or UDP) waits for its swarm before a failure with 'retry "
               "in' is sent"),
      integer("gateway", "max-in-flight", 4096, 1, 1 << 24,
              "requests one lane (an HTTP I/O thread or a UDP worker) may have waiting for "
              "swarms; more are refused as busy (UDP drops and counts them)"),
      integer("gateway", "retry-in", 1, 1, 1440,
              "minutes sent as BEP 31 'retry in' with failures that retrying can fix"),
      // [gateway] the new-swarm budget of each address, and [caps]
      integer("gateway", "new-swarm-burst", 200, 1, 1000000,
              "new torrents one address (an IPv6 /64) may create at once; beyond, its new "
              "torrents get a failure with 'retry in' (sized so clients adding torrents never "
              "notice)"),
      integer("gateway", "new-swarms-per-minute", 60, 1, 1000000,
              "new torrents one address may create per minute once its burst is spent"),
      // [gateway] the request rate of each address
      integer("gateway", "request-burst", 5000, 1, 100000000,
              "requests (announces, scrapes, UDP connects) one address (an IPv6 /64) may send at "
              "once: a client starting with 5,000 torrents"),
      integer_or("gateway", "requests-per-second", 500, 0, 1, 100000000,
                 "requests one address may send per second once its burst is spent; beyond, "
                 "HTTP gets a failure with 'retry in', a UDP announce or scrape an error packet, "
                 "a UDP connect nothing; 0: no limit (load generators on one address). 500 a "
                 "second are 900,000 per 30-minute interval: no address of real clients, a "
                 "thousand behind one CGNAT address included, comes near it"),
      integer("gateway", "rate-limit-addresses", 131072, 64, 1 << 26,
              "addresses whose request rate is remembered (about 64 bytes each); an address "
              "forgotten starts again with a full burst, as a new one would"),
      integer("caps", "max-swarms", 1000000, 1, 1000000000,
              "most swarms this node holds; a new torrent beyond gets a failure with 'retry in', "
              "existing swarms are served"),
      integer("caps", "max-peers", 10000000, 1, u32_count_max,
              "most peers in all swarms of this node; a new peer beyond gets a failure with "
              "'retry in', known peers are served"),
      // [tracker]
      duration("tracker", "interval", 30min, 1s, one_week, "announce 'interval' sent to clients"),
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
      duration("tracker", "hibernate-after", 20s, 0s, one_day,
               "a healthy swarm that served no request for this long is kept as compact data "
               "instead of an actor until its next request (memory of quiet swarms; 0: never; "
               "not in a cluster)"),
      integer("tracker", "hibernations-per-second", 1000, 0, 1000000,
              "most quiet swarms put to sleep per second, node-wide, beyond those that requests "
              "woke (each woken swarm may always sleep again; each sleep costs about a tenth of "
              "a millisecond of the thread that serves announces; a swarm refused stays awake "
              "until its next sweep); 0: unbounded"),
      integer("tracker", "max-peers-per-swarm", 200000, 1, u32_count_max,
              "most peers stored per swarm, a new one beyond is refused with 'retry in' (above "
              "the largest public swarms, ~150k peers; ~30 MB; bounds peer_id flooding)"),
      integer("tracker", "max-peers-per-address", 256, 0, 65535,
              "most peers one address (an IPv4 address, an IPv6 /64) may hold in one swarm, a new "
              "one beyond is refused with 'retry in', its known peers are served; 0: unbounded. "
              "Generous because NAT and carrier-grade NAT put many real peers behind one IPv4 "
              "address (one CGNAT address serves hundreds of subscribers, rarely more than a few "
              "dozen of them in one torrent); still stops one host from filling a swarm with "
              "fake seeders"),
      integer("tracker", "max-swarm-backlog", 32768, 0, 1 << 24,
              "most messages one swarm lets wait in its mailbox; an announce beyond is answered "
              "'swarm busy' with 'retry in' without being applied (a swarm that cannot keep up "
              "sheds load instead of queueing without bound); 0: unbounded"),
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
      real("allocation", "max-address-share", 0.125, 0.001, 1.0,
           "most of one reply the peers of one address (IPv4, IPv6 /64) may take while peers of "
           "other addresses remain: max(1, numwant x this); the reply is filled from the "
           "crowded addresses only when no other peer is left; 1: no share"),
      // [remediation]
      flag("remediation", "enable", true, "spawn a remediation actor for degraded/critical swarms"),
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
      // [admin] read-only scraping
      secret("admin", "metrics-token",
             "a second bearer token that may only GET /metrics (403 elsewhere), for Prometheus; "
             "at least 16 printable characters, not the admin token; empty: none (never logged "
             "or shown)"),
      text("admin", "metrics-token-file", "",
           "file holding the metrics token (first line; beats admin.metrics-token)"),
      // [admin] connections
      integer("admin", "max-connections", 64, 1, 100000,
              "admin connections served at once; at the limit a new one takes the slot of a "
              "connection that has not sent an authenticated request (the oldest first), then "
              "of an idle authenticated one, so the operator with a token always gets in"),
      duration("admin", "auth-timeout", 3s, 10ms, 1h,
               "deadline for a connection's request while it has sent no authenticated one (a "
               "new connection, one answered 401 or only console files): idle and "
               "unauthenticated connections end fast; admin.io-timeout applies after"),
      duration("admin", "io-timeout", 10s, 10ms, one_day,
               "deadline for reading a request on an authenticated connection (its idle "
               "keep-alive time included) and for writing a response"),
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
      real("log", "swarm-lines-per-minute", 60.0, 0.0, 1e6,
           "per-swarm info lines (remediation actions, starts and ends, a swarm below its cap "
           "again) the whole node writes per minute at most, after a burst of "
           "swarm-lines-burst; the rest are counted and summarised in one warning per minute "
           "(so a flood of swarms cannot fill the disk); warnings, errors and operator actions "
           "are never held back"),
      integer("log", "swarm-lines-burst", 100, 1, 1000000,
              "per-swarm info lines that may come at once after a quiet time"),
      // [log] format
      choice("log", "format", "text", {"text", "json"},
             "log line format: text (2026-12-01T16:50:00.123Z info ...) or json (one object "
             "per line: time, level, msg); times in UTC; the level changes at run time with PUT "
             "/api/log/level"),
      // [state]
      text("state", "dir", "",
           "directory of the state file (swarms, peers, counters, bans, operator holds), "
           "loaded at start before the ports open and written on SIGTERM and every "
           "snapshot-period; empty: nothing survives a restart"),
      duration_or("state", "snapshot-period", 300s, 0s, 10s, 24h,
                  "how often the state file is written while running (a SIGKILL loses at most "
                  "this much); 0s: only on SIGTERM"),
      // [shutdown]
      duration("shutdown", "drain-timeout", 10s, 0s, 1h,
               "on SIGINT/SIGTERM, how long open requests may still finish before the actors "
               "stop"),
      // [scheduler]: CAF's own option, read by CAF's scheduler.
      [] {
        auto o = integer("scheduler", "max-threads", 0, 0, 1024,
                         "actor scheduler threads; 0: one per CPU this process may use (its "
                         "affinity mask and cgroup quota)");
        o.caf_owned = true;
        return o;
      }(),
      flag("scheduler", "batch", true,
           "every thread of the daemon under Linux's SCHED_BATCH policy: a thread that hands "
           "work to another (a network thread waking the actor scheduler) is not preempted by "
           "it and goes on until it blocks, so requests move between threads in larger rounds "
           "(bench/udp/README.md); --no-batch or false: the normal policy (SCHED_OTHER)"),
  };
}

}  // namespace

std::string option_def::key() const { return std::string(section) + "." + name; }

const std::vector<section_def>& sections() {
  static const std::vector<section_def> table = {
      {"http", "the HTTP tracker: listener, HTTP limits, deadlines, proxies",
       "net/http/http_server.hpp (http_server_config); trust-ip-param: net/gateway.hpp "
       "(gateway_config::trust_claimed_ip)"},
      {"udp", "the UDP tracker (BEP 15): sockets, workers, connection ids",
       "net/udp/udp_server.hpp (udp_config); trust-ip-field: net/gateway.hpp "
       "(gateway_config::trust_claimed_ip)"},
      {"gateway", "the one door of both transports: deadline, admission, refusals",
       "net/gateway.hpp (gateway_config)"},
      {"caps", "what one node holds at most: swarms and peers",
       "tracker/node_census.hpp (node_caps)"},
      {"tracker", "replies, intervals and limits of every swarm",
       "tracker/swarm_config.hpp (swarm_config); max-numwant and max-scrape-hashes also "
       "net/gateway.hpp (gateway_config: the parsers' limits of both transports)"},
      {"clients", "client behaviour: bans, early announces, repeats, stalls, strikes",
       "tracker/swarm_config.hpp (swarm_config::behaviour); banned: net/node_lists.hpp (the "
       "node's live ban list)"},
      {"health", "how swarms judge their health",
       "tracker/swarm_config.hpp (swarm_config::health, health_tick, seeder warning)"},
      {"allocation", "which peers a reply hands out",
       "tracker/swarm_config.hpp (swarm_config::allocation, default_policy)"},
      {"remediation", "remediation of degraded and critical swarms",
       "runtime/supervisor.hpp (supervisor_config), swarm_config::history_size"},
      {"supervisor", "restarts of crashed swarms", "runtime/supervisor.hpp (supervisor_config)"},
      {"probe", "reachability probes of peers",
       "net/probe/reachability_prober.hpp (prober_config), swarm_config::probe"},
      {"access", "the info_hash access list",
       "net/node_lists.hpp (the node's live access list, tracker/access_list.hpp)"},
      {"admin", "the admin API and /metrics", "admin/admin_server.hpp (admin_config)"},
      {"cluster", "a cluster of tracker nodes",
       "cluster/cluster_config.hpp (cluster_config)"},
      {"log", "logging", "app/logging.hpp (spdlog)"},
      {"state", "what survives a restart: the state file",
       "runtime/state_keeper.hpp (state_config)"},
      {"shutdown", "stopping on SIGINT/SIGTERM", "app/swarmkeeper_main.cpp (drain)"},
      {"scheduler", "threads: CAF's actor scheduler and the kernel's policy for every thread",
       "CAF's actor_system_config; batch: app/swarmkeeper_main.cpp"},
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
      {"state-dir", "state.dir"},
      {"log-level", "log.level"},
      {"udp-port", "udp.port"},
      {"no-udp", "udp.enable", true},
      {"no-batch", "scheduler.batch", true},
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
const std::vector<renamed_def>& renamed() {
  // Options that configure the gateway used to sit in a transport's section.
  static const std::vector<renamed_def> table = {
      {"http.request-timeout", "gateway.request-timeout"},
      {"http.retry-in", "gateway.retry-in"},
      {"udp.max-in-flight", "gateway.max-in-flight"},
  };
  return table;
}

const renamed_def* find_renamed(std::string_view old_key) {
  for (const auto& r : renamed())
    if (old_key == r.old_key) return &r;
  return nullptr;
}

const renamed_def* renamed_to(std::string_view new_key) {
  for (const auto& r : renamed())
    if (new_key == r.new_key) return &r;
  return nullptr;
}

const section_def& detail::section_of(const option_def& o) {
  for (const auto& s : sections())
    if (std::strcmp(s.name, o.section) == 0) return s;
  throw std::logic_error(std::string("option ") + o.key() + " has no section");
}

}  // namespace config
}  // namespace sk
