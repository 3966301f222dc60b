#include "admin/admin_server.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <pthread.h>

#include <spdlog/spdlog.h>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "tracker/access_list.hpp"
#include "cluster/cluster_messages.hpp"
#include "tracker/client_id.hpp"
#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "admin/admin_assets.hpp"
#include "net/http/http_server.hpp"
#include "net/udp/udp_server.hpp"

#include "protocol/text.hpp"

namespace sk {

/// One request handed from the I/O thread to the admin actor. `reply` is
/// called once, on a CAF thread; it only posts to the I/O thread. A job
/// destroyed unanswered (the actor is gone) answers 503 itself.
struct admin_job {
  using reply_function =
      std::function<void(unsigned status, std::string content_type, std::string body)>;

  std::string method;
  std::string target;
  std::string body;
  reply_function reply_fn;
  bool replied = false;

  void reply(unsigned status, std::string content_type, std::string body_text) {
    if (replied) return;
    replied = true;
    reply_fn(status, std::move(content_type), std::move(body_text));
  }
  /// Messages may echo request bytes that are not UTF-8 (a percent-decoded
  /// query key): those are replaced (U+FFFD), never a throw (which would
  /// turn a 400 into a 500).
  void reply_json(unsigned status, const nlohmann::json& j) {
    reply(status, "application/json",
          j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  }
  void reply_error(unsigned status, const std::string& message) {
    reply_json(status, nlohmann::json{{"error", message}});
  }
  ~admin_job() {
    if (!replied && reply_fn) {
      replied = true;
      reply_fn(503, "application/json", "{\"error\":\"admin service unavailable\"}\n");
    }
  }
};

using admin_job_ptr = std::shared_ptr<admin_job>;

}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::admin_job_ptr)

namespace sk {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using json = nlohmann::json;

bool constant_time_equal(const std::string& a, const std::string& b) noexcept {
  // Walk the longer length; a length mismatch is folded into the result so
  // that neither the position of the first difference nor an early return
  // on length leaks through timing (the token's length is no secret).
  const std::size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

namespace {

/// Where replies go: the I/O thread, while it runs. Closed (under the lock)
/// by stop() before the io_context goes away, so a late reply from a CAF
/// thread is dropped instead of touching a dead context.
struct reply_gate {
  std::mutex mtx;
  asio::io_context* ioc = nullptr;

  template <class F>
  void post(F&& f) {
    std::lock_guard<std::mutex> guard{mtx};
    if (ioc != nullptr) asio::post(*ioc, std::forward<F>(f));
  }
  void close() {
    std::lock_guard<std::mutex> guard{mtx};
    ioc = nullptr;
  }
};

/// Everything the admin actor reads; immutable after start except the
/// atomics.
struct admin_shared {
  admin_config cfg;
  admin_node_info info;
  swarm_directory* dir = nullptr;
  const udp_server* udp = nullptr;
  const http_server* http = nullptr;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  /// This machine's host name (`node` outside a cluster).
  std::string host_name;
  /// Admin requests answered, by status class (2xx, 4xx, 5xx) — /metrics.
  std::atomic<std::uint64_t> ok{0}, client_errors{0}, server_errors{0};
  /// Requests refused for a missing or wrong token.
  std::atomic<std::uint64_t> unauthorized{0};

  /// This node's name: the cluster name (`cluster.node-name`) when
  /// clustered, else the host name.
  std::string node_name() const {
    auto v = dir->view();
    return v ? v->self : host_name;
  }

  void count(unsigned status) {
    if (status < 400)
      ok.fetch_add(1, std::memory_order_relaxed);
    else if (status < 500)
      client_errors.fetch_add(1, std::memory_order_relaxed);
    else
      server_errors.fetch_add(1, std::memory_order_relaxed);
  }
};

// -- helpers ------------------------------------------------------------------

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

/// Resident set size in bytes from /proc/self/statm (0 when unavailable).
std::uint64_t resident_bytes() {
  std::ifstream f{"/proc/self/statm"};
  std::uint64_t size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

/// Percent-decodes a query component (`plus_is_space`) or a path segment;
/// nullopt on a bad escape.
std::optional<std::string> url_decode(const std::string& in, bool plus_is_space = true) {
  std::string out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%') {
      if (i + 2 >= in.size()) return std::nullopt;
      const int hi = hex_digit(in[i + 1]);
      const int lo = hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (in[i] == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += in[i];
    }
  }
  return out;
}

/// A non-negative integer in [0, max]; nullopt otherwise.
std::optional<std::size_t> parse_count(const std::string& text, std::size_t max) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (pos < path.size()) {
    const std::size_t next = path.find('/', pos);
    const std::size_t end = next == std::string::npos ? path.size() : next;
    if (end > pos) parts.push_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return parts;
}

json reasons_json(std::uint32_t reasons) {
  json out = json::array();
  for (int i = 0; i < health_reason_count; ++i) {
    const auto bit = static_cast<health_reason>(1u << i);
    if ((reasons & bit) != 0) out.push_back(std::string(reason_name(bit)));
  }
  return out;
}

json flags_json(std::uint8_t flags) {
  static const std::pair<peer_flag, const char*> names[] = {
      {flag_stalled, "stalled"},
      {flag_quarantined, "quarantined"},
      {flag_unreachable, "unreachable"},
      {flag_reachable, "reachable"},
      {flag_poor_contributor, "poor-contributor"},
      {flag_warned, "warned"}};
  json out = json::array();
  for (const auto& [bit, name] : names)
    if ((flags & bit) != 0) out.push_back(name);
  return out;
}

/// Seconds from `at` to now on the steady clock (swarm time); null when unset.
json age_seconds(health_time at) {
  if (at == health_time{}) return nullptr;
  return std::chrono::duration<double>(health_clock::now() - at).count();
}

json number_or_null(double x) {
  if (!std::isfinite(x)) return nullptr;
  return x;
}

json progress_json(float p) { return p < 0 ? json(nullptr) : json(static_cast<double>(p)); }

std::string health_name(const swarm_status& s) {
  return s.evaluated ? std::string(to_string(s.health.state)) : std::string("unevaluated");
}

json signals_json(const health_signals& s) {
  return {{"state", std::string(to_string(s.state))},
          {"reasons", reasons_json(s.reasons)},
          {"seeders", s.seeders},
          {"leechers", s.leechers},
          {"stalled", s.stalled},
          {"completion_rate", number_or_null(s.completion_rate)}};
}

json record_json(const remediation_record& r) {
  return {{"age_seconds", age_seconds(r.at)},
          {"action", r.action},
          {"strategy", r.strategy},
          {"reason", r.reason},
          {"detail", r.detail},
          {"before", signals_json(r.before)},
          {"after", signals_json(r.after)}};
}

/// The all-zero hash of events that concern no one swarm (bans).
const info_hash no_swarm{};

json event_json(const supervisor_event& e) {
  return {{"age_seconds", age_seconds(e.at)},
          {"hash", e.hash == no_swarm ? json(nullptr) : json(e.hash.hex())},
          {"kind", e.kind},
          {"detail", e.detail}};
}

/// The list entry of one swarm.
json summary_json(const swarm_status& s, caf::actor_id id) {
  return {{"hash", s.hash.hex()},
          {"actor_id", id},
          {"peers", s.stats.complete + s.stats.incomplete},
          {"seeders", s.stats.complete},
          {"leechers", s.stats.incomplete},
          {"partial_seeds", s.stats.partial},
          {"downloaded", s.stats.downloaded},
          {"health", health_name(s)},
          {"reasons", reasons_json(s.evaluated ? s.health.reasons : 0)},
          {"announce_rate", number_or_null(s.evaluated ? s.health.announce_rate : 0.0)},
          {"policy", std::string(to_string(s.knobs.policy))}};
}

// -- the admin actor ----------------------------------------------------------

using actor_ptr = caf::event_based_actor*;
using shared_ptr = std::shared_ptr<admin_shared>;
using status_list = std::vector<std::pair<caf::actor_id, swarm_status>>;

/// Asks every swarm in `swarms` for its status (plain, no peers) and calls
/// `done(results)` once, when every swarm answered or timed out. Swarms that
/// fail (ended meanwhile, timeout) are left out.
void fan_out_status(actor_ptr self, const shared_ptr& sh,
                    std::vector<std::pair<info_hash, caf::actor>> swarms,
                    std::function<void(status_list&&)> done) {
  struct join_state {
    status_list results;
    std::size_t pending = 0;
    std::function<void(status_list&&)> done;
  };
  auto st = std::make_shared<join_state>();
  st->pending = swarms.size();
  st->done = std::move(done);
  if (swarms.empty()) {
    st->done(std::move(st->results));
    return;
  }
  st->results.reserve(swarms.size());
  for (auto& [hash, swarm] : swarms) {
    const caf::actor_id id = swarm.id();
    self->request(caf::actor_cast<swarm_interface>(swarm), sh->cfg.actor_timeout,
                  status_atom::value)
        .then(
            [st, id](swarm_status& s) {
              st->results.emplace_back(id, std::move(s));
              if (--st->pending == 0) st->done(std::move(st->results));
            },
            [st](caf::error&) {
              if (--st->pending == 0) st->done(std::move(st->results));
            });
  }
}

using query_map = std::map<std::string, std::string>;

/// Parses `a=1&b=2`; only `allowed` keys; nullopt + message on error.
std::optional<query_map> parse_query(const std::string& q,
                                     std::initializer_list<const char*> allowed,
                                     std::string& error) {
  query_map out;
  std::size_t pos = 0;
  while (pos <= q.size() && !q.empty()) {
    const std::size_t amp = q.find('&', pos);
    const std::string part =
        q.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    if (!part.empty()) {
      const std::size_t eq = part.find('=');
      auto key = url_decode(part.substr(0, eq));
      auto value = url_decode(eq == std::string::npos ? std::string{} : part.substr(eq + 1));
      if (!key || !value) {
        error = "malformed query string";
        return std::nullopt;
      }
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return *key == a; })) {
        error = "unknown query parameter '" + *key + "'";
        return std::nullopt;
      }
      out[*key] = *value;
    }
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  return out;
}

void get_node(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  json j;
  j["version"] = sh->info.version;
  j["node"] = sh->node_name();
  j["host"] = sh->host_name;
  {
    auto v = sh->dir->view();
    j["cluster_node"] = v ? json(v->self) : json(nullptr);
  }
  j["uptime_seconds"] = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::steady_clock::now() - sh->started)
                            .count();
  json config = json::object();
  for (const auto& [k, v] : sh->info.config) config[k] = v;
  j["config"] = std::move(config);
  j["scheduler_threads"] = self->system().scheduler().num_workers();
  j["actors"] = {{"swarms", sh->dir->size()}, {"running", self->system().registry().running()}};
  j["memory"] = {{"resident_bytes", resident_bytes()}};
  json requests = json::object();
  if (sh->udp != nullptr) {
    const auto c = sh->udp->counters();
    requests["udp"] = {{"received", c.received},
                       {"replied", c.replied},
                       {"connects", c.connects},
                       {"announces", c.announces},
                       {"scrapes", c.scrapes},
                       {"error_replies", c.error_replies},
                       {"swarm_failures", c.swarm_failures},
                       {"dropped", c.dropped()},
                       {"in_flight", sh->udp->in_flight()}};
  }
  if (sh->http != nullptr) requests["http"] = {{"connections", sh->http->connection_count()}};
  requests["admin"] = {{"ok", sh->ok.load()},
                       {"client_errors", sh->client_errors.load()},
                       {"server_errors", sh->server_errors.load()},
                       {"unauthorized", sh->unauthorized.load()}};
  j["requests"] = std::move(requests);
  job->reply_json(200, j);
}

void get_swarms(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                const std::string& query) {
  std::string error;
  auto q = parse_query(query, {"health", "sort", "limit", "offset"}, error);
  if (!q) return job->reply_error(400, error);
  const std::string health = (*q)["health"];
  if (!health.empty() && health != "healthy" && health != "degraded" && health != "critical" &&
      health != "unhealthy" && health != "unevaluated")
    return job->reply_error(
        400, "health must be one of healthy, degraded, critical, unhealthy, unevaluated");
  std::string sort = q->count("sort") ? (*q)["sort"] : "size";
  if (sort != "size" && sort != "rate" && sort != "hash")
    return job->reply_error(400, "sort must be one of size, rate, hash");
  std::size_t limit = 100, offset = 0;
  if (q->count("limit")) {
    auto v = parse_count((*q)["limit"], sh->cfg.max_fanout);
    if (!v)
      return job->reply_error(
          400, "limit must be an integer from 0 to " + std::to_string(sh->cfg.max_fanout));
    limit = *v;
  }
  if (q->count("offset")) {
    auto v = parse_count((*q)["offset"], 100000000);
    if (!v) return job->reply_error(400, "offset must be a non-negative integer");
    offset = *v;
  }
  auto swarms = sh->dir->snapshot(sh->cfg.max_fanout + 1);
  const bool truncated = swarms.size() > sh->cfg.max_fanout;
  if (truncated) swarms.resize(sh->cfg.max_fanout);
  fan_out_status(
      self, sh, std::move(swarms),
      [job, health, sort, limit, offset, truncated](status_list&& all) {
        status_list kept;
        for (auto& e : all) {
          const std::string h = health_name(e.second);
          const bool match = health.empty() || h == health ||
                             (health == "unhealthy" && (h == "degraded" || h == "critical"));
          if (match) kept.push_back(std::move(e));
        }
        auto size_of = [](const swarm_status& s) { return s.stats.complete + s.stats.incomplete; };
        std::sort(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
          if (sort == "size" && size_of(a.second) != size_of(b.second))
            return size_of(a.second) > size_of(b.second);
          if (sort == "rate" && a.second.health.announce_rate != b.second.health.announce_rate)
            return a.second.health.announce_rate > b.second.health.announce_rate;
          return a.second.hash < b.second.hash;
        });
        json list = json::array();
        for (std::size_t i = offset; i < kept.size() && i < offset + limit; ++i)
          list.push_back(summary_json(kept[i].second, kept[i].first));
        job->reply_json(200, {{"total", kept.size()},
                              {"offset", offset},
                              {"limit", limit},
                              {"truncated", truncated},
                              {"swarms", std::move(list)}});
      });
}

/// The error answer to a failed request to a swarm (or through its
/// forwarder: the owner has no such swarm is a 404 there too).
void reply_swarm_error(const admin_job_ptr& job, const info_hash& hash, const caf::error& err) {
  if (err == caf::sec::request_receiver_down)
    job->reply_error(503, "swarm " + hash.hex() + " is restarting; retry");
  else if (err == caf::sec::cannot_forward_to_invalid_actor)
    job->reply_error(404, "no swarm for " + hash.hex());
  else
    job->reply_error(504, "swarm " + hash.hex() + " did not answer");
}

/// The detail of one swarm; `owner` is the node it runs on (empty: this one).
json detail_json(const shared_ptr& sh, const swarm_status& s, caf::actor_id id,
                 const std::string& owner) {
  // The swarm's own actor id (a forwarder's answer carries the owner's).
  json j = summary_json(s, s.actor_id != 0 ? s.actor_id : id);
  j["owner_node"] = owner.empty() ? sh->node_name() : owner;
  j["peer_count"] = s.peer_count;
  json peers = json::array();
  for (const auto& p : s.peers) {
    peers.push_back({{"address", p.ep.ip.to_string()},
                     {"port", p.ep.port},
                     {"peer_id", p.id.hex()},
                     {"client", identify_client(p.id).to_string()},
                     {"seeder", p.seeder},
                     {"left", p.left},
                     {"progress", progress_json(p.progress)},
                     {"announces", p.announces},
                     {"flags", flags_json(p.flags)}});
  }
  j["peers_listed"] = std::move(peers);
  j["counters"] = {{"announces", s.announces},
                   {"banned", s.banned},
                   {"refused", s.refused},
                   {"warned", s.warned},
                   {"seeder_appeals", s.seeder_appeals},
                   {"repeats", s.repeats},
                   {"early", s.early}};
  j["health_detail"] = {{"evaluated", s.evaluated},
                        {"state", health_name(s)},
                        {"reasons", reasons_json(s.health.reasons)},
                        {"seeders", s.health.seeders},
                        {"leechers", s.health.leechers},
                        {"partial_seeds", s.health.partial_seeds},
                        {"stalled", s.health.stalled},
                        {"quarantined", s.health.quarantined},
                        {"completion_rate", number_or_null(s.health.completion_rate)},
                        {"announce_rate", number_or_null(s.health.announce_rate)},
                        {"progress_p25", progress_json(s.health.progress_p25)},
                        {"progress_median", progress_json(s.health.progress_median)},
                        {"progress_p75", progress_json(s.health.progress_p75)},
                        {"age_seconds", age_seconds(s.health.at)}};
  j["knobs"] = {{"policy", std::string(to_string(s.knobs.policy))},
                {"interval_scale", s.knobs.interval_scale},
                {"leecher_interval_scale", s.knobs.leecher_interval_scale},
                {"seeder_warning", s.knobs.seeder_warning},
                {"quarantine_strict", s.knobs.quarantine_strict}};
  const auto& cfg = sh->dir->config();
  j["interval"] = {
      {"base_seconds", cfg.announce_interval.count()},
      {"min_seconds", cfg.min_interval.count()},
      {"scaled_seconds",
       static_cast<std::int64_t>(std::llround(static_cast<double>(cfg.announce_interval.count()) *
                                              s.knobs.interval_scale))}};
  json history = json::array();
  for (const auto& r : s.history) history.push_back(record_json(r));
  j["remediation_history"] = std::move(history);
  return j;
}

/// Where the supervisor calls about `loc`'s swarm go: this node's
/// supervisor, or the forwarder (which hands them to the owner's). Both
/// implement the interface (runtime/supervisor.hpp); invalid: no supervisor.
swarm_supervision_interface supervisor_for(const shared_ptr& sh, const swarm_location& loc) {
  return caf::actor_cast<swarm_supervision_interface>(loc.remote ? loc.actor
                                                                 : sh->dir->supervisor());
}

/// The swarm of `loc` (local, or its forwarder: both implement the swarm
/// interface, runtime/swarm_actor.hpp).
swarm_interface swarm_of(const swarm_location& loc) {
  return caf::actor_cast<swarm_interface>(loc.actor);
}

void get_swarm(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
               const info_hash& hash) {
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.actor) return job->reply_error(404, "no swarm for " + hash.hex());
  const caf::actor_id id = loc.actor.id();
  self->request(swarm_of(loc), sh->cfg.actor_timeout, status_atom::value, caf::get_atom::value,
                sh->cfg.max_peers_listed)
      .then(
          [self, sh, job, id, hash, loc](swarm_status& s) {
            auto j = std::make_shared<json>(detail_json(sh, s, id, loc.owner));
            const auto sup = supervisor_for(sh, loc);
            if (!sup) {
              (*j)["policy_pinned"] = false;
              return job->reply_json(200, *j);
            }
            // Whether an operator pinned the policy: the supervisor keeps it.
            self->request(sup, sh->cfg.actor_timeout, policy_atom::value, caf::get_atom::value,
                          hash)
                .then(
                    [job, j](bool pinned) {
                      (*j)["policy_pinned"] = pinned;
                      job->reply_json(200, *j);
                    },
                    [job, j](caf::error&) {
                      (*j)["policy_pinned"] = nullptr;
                      job->reply_json(200, *j);
                    });
          },
            [job, hash](caf::error& err) { reply_swarm_error(job, hash, err); });
}

/// Records an operator's change in the supervisor's event log (`/api/events`).
/// Sent before the answer, so a client that reads the events next sees it.
void record_event(const shared_ptr& sh, const info_hash& hash, std::string kind,
                  std::string detail) {
  if (const caf::actor& sup = sh->dir->supervisor())
    caf::anon_send(sup, events_atom::value, caf::put_atom::value,
                   supervisor_event{{}, hash, std::move(kind), std::move(detail)});
}


/// POST /api/swarms/<hash>/policy {"policy": name}: a policy name pins it,
/// "default" unpins (runtime/supervisor.hpp). The supervisor applies it (and
/// logs it) so a running or later remediation keeps the operator's choice.
void post_policy(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                 const info_hash& hash) {
  json body = json::parse(job->body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return job->reply_error(400, "body must be a JSON object such as {\"policy\":\"role-aware\"}");
  auto it = body.find("policy");
  if (it == body.end() || !it->is_string())
    return job->reply_error(400, "body needs a string field \"policy\"");
  const std::string name = it->get<std::string>();
  if (name != "default" && !parse_policy(name)) {
    std::string names = "default";
    for (auto n : policy_names) names += ", " + std::string(n);
    return job->reply_error(400, "unknown policy '" + name + "'; one of " + names);
  }
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.actor) return job->reply_error(404, "no swarm for " + hash.hex());
  // The node the swarm runs on (through a forwarder, its owner's supervisor
  // pins it there).
  const std::string node = loc.owner.empty() ? sh->node_name() : loc.owner;
  // Straight to the swarm (no pinning): without a supervisor, or for a
  // swarm the supervisor does not know.
  auto direct = [self, sh, job, hash, name, node, swarm = swarm_of(loc)]() {
    self->request(swarm, sh->cfg.actor_timeout, policy_atom::value, caf::put_atom::value, name)
        .then(
            [job, hash, name, node](std::string& previous) {
              spdlog::info("admin: swarm {}: policy {} -> {}", hash.hex(), previous, name);
              job->reply_json(200, {{"hash", hash.hex()},
                                    {"policy", name},
                                    {"previous", previous},
                                    {"pinned", false},
                                    {"node", node}});
            },
            [job, hash](caf::error& err) {
              if (err == caf::sec::invalid_argument)
                job->reply_error(400, "policy rejected by the swarm");
              else
                reply_swarm_error(job, hash, err);
            });
  };
  const auto sup = supervisor_for(sh, loc);
  if (!sup) return direct();
  self->request(sup, sh->cfg.actor_timeout * 2, policy_atom::value, caf::put_atom::value, hash,
                name)
      .then(
          [job, hash, node](policy_change& c) {
            job->reply_json(200, {{"hash", hash.hex()},
                                  {"policy", c.policy},
                                  {"previous", c.previous},
                                  {"pinned", c.pinned},
                                  {"was_pinned", c.was_pinned},
                                  {"node", node}});
          },
          [job, hash, direct](caf::error& err) {
            if (err == caf::sec::cannot_forward_to_invalid_actor) return direct();
            if (err == caf::sec::invalid_argument)
              return job->reply_error(400, "policy rejected by the swarm");
            reply_swarm_error(job, hash, err);
          });
}

/// Asks the owner's supervisor, through the forwarder in `loc`, to restart
/// the swarm; `old_id` is the owner's actor (asked first, so the answer
/// names the actor that is replaced, as on the owner).
void restart_remote(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                    const info_hash& hash, const swarm_location& loc) {
  self->request(swarm_of(loc), sh->cfg.actor_timeout, status_atom::value)
      .then(
          [self, sh, job, hash, loc](swarm_status& s) {
            const std::uint64_t old_id = s.actor_id;
            self->request(supervisor_for(sh, loc), sh->cfg.actor_timeout, restart_atom::value, hash)
                .then(
                    [job, hash, loc, old_id](std::string& outcome) {
                      if (outcome == "restarting")
                        return job->reply_json(202, {{"hash", hash.hex()},
                                                     {"old_actor_id", old_id},
                                                     {"status", "restarting"},
                                                     {"node", loc.owner}});
                      job->reply_error(409, "swarm " + hash.hex() + " is not supervised on " +
                                                loc.owner);
                    },
                    [job, hash, loc](caf::error& err) {
                      if (err == caf::sec::cannot_forward_to_invalid_actor)
                        return job->reply_error(409, "swarm " + hash.hex() +
                                                         " is not supervised on " + loc.owner);
                      reply_swarm_error(job, hash, err);
                    });
          },
          [job, hash](caf::error& err) { reply_swarm_error(job, hash, err); });
}

/// POST /api/swarms/<hash>/restart: the supervisor kills the swarm actor
/// and restarts it from its state (logged there with the old and new actor);
/// for a swarm another node owns, that node's supervisor does.
void post_restart(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                  const info_hash& hash) {
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.actor) return job->reply_error(404, "no swarm for " + hash.hex());
  // Never the forwarder itself: killing it would only drop the route.
  if (loc.remote) return restart_remote(self, sh, job, hash, loc);
  const caf::actor& swarm = loc.actor;
  const caf::actor_id old_id = swarm.id();
  auto accepted = [job, hash, old_id, node = sh->node_name()]() {
    job->reply_json(202, {{"hash", hash.hex()},
                          {"old_actor_id", old_id},
                          {"status", "restarting"},
                          {"node", node}});
  };
  const caf::actor& sup = sh->dir->supervisor();
  if (!sup) {
    // Nobody restarts it: the next announce spawns an empty swarm.
    self->send_exit(swarm, caf::exit_reason::kill);
    spdlog::info("admin: swarm {}: actor {} -> killed (no supervisor: restarted empty)",
                 hash.hex(), old_id);
    return accepted();
  }
  self->request(caf::actor_cast<swarm_supervision_interface>(sup), sh->cfg.actor_timeout,
                restart_atom::value, hash)
      .then(
          [job, hash, accepted](std::string& outcome) {
            if (outcome == "restarting") return accepted();
            job->reply_error(409, "swarm " + hash.hex() + " is not supervised on this node");
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}

/// POST /api/swarms/<hash>/move {"node": "name"}: the cluster hands the
/// local swarm, with its whole state, to that member (runtime/directory.hpp:
/// `move`). 202 once the move started; 409 with the reason otherwise.
void post_move(const shared_ptr& sh, const admin_job_ptr& job, const info_hash& hash) {
  json body = json::parse(job->body, nullptr, false);
  auto n = body.is_object() ? body.find("node") : body.end();
  if (body.is_discarded() || !body.is_object() || n == body.end() || !n->is_string())
    return job->reply_error(400, "body must be a JSON object such as {\"node\":\"b\"}");
  const std::string node = n->get<std::string>();
  // Tell the receiver first, so its migration record says "operator".
  if (auto v = sh->dir->view())
    if (auto target = v->node(node))
      caf::anon_send(target, cluster::movenote_atom::value, hash, v->self);
  if (auto why = sh->dir->move(hash, node); !why.empty())
    return job->reply_error(409, "cannot move swarm " + hash.hex() + ": " + why);
  const auto v = sh->dir->view();
  const std::string from = sh->node_name();
  spdlog::info("admin: swarm {}: owner {} -> {} (moving)", hash.hex(), from, node);
  record_event(sh, hash, "operator-move", from + " -> " + node);
  job->reply_json(202, {{"hash", hash.hex()}, {"node", node}, {"status", "moving"}});
}

/// GET /api/cluster: members with their state, address and swarm count,
/// and the migrations every member recorded (each receiving node keeps its
/// last 64). This node's node actor answers for itself and its view of the
/// members; every other live member is asked for its own count (a member
/// that does not answer within actor_timeout shows `"swarms": null`).
void get_cluster(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  auto view = sh->dir->view();
  auto local = self->system().registry().get(cluster::node_registry_key);
  if (!view || !local) {
    json me = {{"name", sh->node_name()},
               {"state", "live"},
               {"address", nullptr},
               {"swarms", sh->dir->size()},
               {"handoffs_pending", 0},
               {"self", true}};
    return job->reply_json(200, {{"enabled", false},
                                 {"node", sh->node_name()},
                                 {"members", json::array({me})},
                                 {"migrations", json::array()}});
  }
  auto node = caf::actor_cast<caf::actor>(local);
  self->request(node, sh->cfg.actor_timeout, cluster::node_status_atom::value)
      .then(
          [self, sh, job, view](cluster::node_status& mine) {
            struct join_state {
              cluster::node_status mine;
              std::map<std::string, cluster::node_status> answers;
              std::size_t pending = 0;
            };
            auto st = std::make_shared<join_state>();
            st->mine = std::move(mine);
            auto finish = [st, job]() {
              json members = json::array();
              std::vector<cluster::migration_record> migs(st->mine.migrations);
              for (const auto& [name, a] : st->answers)
                migs.insert(migs.end(), a.migrations.begin(), a.migrations.end());
              for (const auto& m : st->mine.members) {
                json e = {{"name", m.name},
                          {"state", m.state},
                          {"address", m.host + ":" + std::to_string(m.port)},
                          {"self", m.name == st->mine.name},
                          {"swarms", nullptr},
                          {"handoffs_pending", nullptr}};
                if (m.name == st->mine.name) {
                  e["swarms"] = st->mine.swarms;
                  e["handoffs_pending"] = st->mine.handoffs_pending;
                } else if (auto it = st->answers.find(m.name); it != st->answers.end()) {
                  e["swarms"] = it->second.swarms;
                  e["handoffs_pending"] = it->second.handoffs_pending;
                }
                members.push_back(std::move(e));
              }
              std::stable_sort(migs.begin(), migs.end(), [](const auto& a, const auto& b) {
                return a.finished_ms > b.finished_ms;  // newest first
              });
              json list = json::array();
              for (const auto& r : migs)
                list.push_back({{"from", r.from.empty() ? json(nullptr) : json(r.from)},
                                {"to", r.to},
                                {"hash", r.hash},
                                {"reason", r.reason},
                                {"finished_ms", r.finished_ms},
                                {"peers", r.peers}});
              std::uint64_t moving = st->mine.handoffs_pending;
              for (const auto& [name, a] : st->answers) moving += a.handoffs_pending;
              job->reply_json(200, {{"enabled", true},
                                    {"node", st->mine.name},
                                    {"members", std::move(members)},
                                    {"handoffs_pending", moving},
                                    {"migrations", std::move(list)}});
            };
            std::vector<std::pair<std::string, caf::actor>> others;
            for (const auto& m : st->mine.members)
              if (m.state == "live" && m.name != st->mine.name)
                if (auto h = view->node(m.name)) others.emplace_back(m.name, h);
            if (others.empty()) return finish();
            st->pending = others.size();
            auto fin = std::make_shared<decltype(finish)>(std::move(finish));
            for (auto& [name, h] : others) {
              self->request(h, sh->cfg.actor_timeout, cluster::node_status_atom::value)
                  .then(
                      [st, fin, name = name](cluster::node_status& s) {
                        st->answers[name] = std::move(s);
                        if (--st->pending == 0) (*fin)();
                      },
                      [st, fin](caf::error&) {
                        if (--st->pending == 0) (*fin)();
                      });
            }
          },
          [job](caf::error&) { job->reply_error(503, "the cluster node did not answer"); });
}

void get_events(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  const caf::actor& sup = sh->dir->supervisor();
  if (!sup) return job->reply_json(200, {{"events", json::array()}});
  self->request(sup, sh->cfg.actor_timeout, events_atom::value)
      .then(
          [job](std::vector<supervisor_event>& events) {
            json list = json::array();
            for (const auto& e : events) list.push_back(event_json(e));
            job->reply_json(200, {{"events", std::move(list)}});
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}

void get_remediations(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  const caf::actor& sup = sh->dir->supervisor();
  if (!sup) return job->reply_json(200, {{"active", json::array()}, {"recent", json::array()}});
  self->request(sup, sh->cfg.actor_timeout, remediate_atom::value, caf::get_atom::value)
      .then(
          [self, sh, job, sup](std::vector<info_hash>& active) {
            std::vector<std::pair<info_hash, caf::actor>> swarms;
            for (const auto& h : active)
              if (auto a = sh->dir->find(h)) swarms.emplace_back(h, std::move(a));
            fan_out_status(self, sh, std::move(swarms), [self, sh, job, sup](status_list&& st) {
              json list = json::array();
              for (const auto& [id, s] : st) {
                json entry = summary_json(s, id);
                json history = json::array();
                for (const auto& r : s.history) history.push_back(record_json(r));
                entry["actions"] = std::move(history);
                list.push_back(std::move(entry));
              }
              self->request(sup, sh->cfg.actor_timeout, events_atom::value)
                  .then(
                      [job, list](std::vector<supervisor_event>& events) {
                        json recent = json::array();
                        for (const auto& e : events)
                          if (e.kind.rfind("remediation", 0) == 0) recent.push_back(event_json(e));
                        job->reply_json(200, {{"active", list}, {"recent", std::move(recent)}});
                      },
                      [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
            });
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}


// -- operator actions: remediation, bans, access list ------------------------

void post_remediation(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                      const info_hash& hash, bool start) {
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.actor) return job->reply_error(404, "no swarm for " + hash.hex());
  // A remote swarm's remediation runs under its owner's supervisor.
  const auto sup = supervisor_for(sh, loc);
  if (!sup) return job->reply_error(503, "no supervisor is running");
  auto on_answer = [job, hash, start](std::string& outcome) {
    if (outcome == "started")
      return job->reply_json(202, {{"swarm", hash.hex()}, {"started", true}});
    if (outcome == "stopped")
      return job->reply_json(200, {{"swarm", hash.hex()}, {"stopped", true}});
    if (outcome == "running")
      return job->reply_error(409, "a remediation already runs for " + hash.hex());
    if (outcome == "none")
      return job->reply_error(409, "no remediation runs for " + hash.hex());
    if (outcome == "unknown") return job->reply_error(404, "no swarm for " + hash.hex());
    job->reply_error(500, "unexpected supervisor answer '" + outcome + "'");
    (void) start;
  };
  // Stopping waits until the swarm runs on its defaults again (see
  // runtime/supervisor.hpp): allow it a little more than other requests.
  const auto timeout = start ? sh->cfg.actor_timeout : sh->cfg.actor_timeout * 3;
  auto on_error = [job](caf::error& err) {
    if (err == caf::sec::cannot_forward_to_invalid_actor)
      return job->reply_error(503, "no supervisor is running on the swarm's node");
    job->reply_error(504, "supervisor did not answer");
  };
  if (start)
    self->request(sup, timeout, remediate_atom::value, start_atom::value, hash)
        .then(on_answer, on_error);
  else
    self->request(sup, timeout, remediate_atom::value, stop_atom::value, hash)
        .then(on_answer, on_error);
}

json ban_json(const ban_rule& r) {
  return {{"prefix", escape_ban_prefix(r.prefix)}, {"reason", r.reason}};
}

void get_bans(const shared_ptr& sh, const admin_job_ptr& job) {
  json list = json::array();
  if (const auto& bans = sh->dir->config().banned_clients)
    for (const auto& r : bans->snapshot()->rules()) list.push_back(ban_json(r));
  job->reply_json(200, {{"bans", std::move(list)}});
}

void post_ban(const shared_ptr& sh, const admin_job_ptr& job) {
  const auto& bans = sh->dir->config().banned_clients;
  if (!bans) return job->reply_error(503, "this node has no ban list");
  json body = json::parse(job->body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return job->reply_error(
        400, "body must be a JSON object such as {\"prefix\":\"-XX0001-\",\"reason\":\"...\"}");
  auto p = body.find("prefix");
  auto r = body.find("reason");
  if (p == body.end() || !p->is_string())
    return job->reply_error(400, "body needs a string field \"prefix\"");
  if (r == body.end() || !r->is_string())
    return job->reply_error(400, "body needs a string field \"reason\"");
  std::string error;
  auto prefix = parse_ban_prefix(p->get<std::string>(), &error);
  if (!prefix) return job->reply_error(400, error);
  std::string reason = r->get<std::string>();
  if (reason.empty()) return job->reply_error(400, "reason must not be empty");
  if (reason.size() > client_ban_list::max_reason_length)
    return job->reply_error(400, "reason longer than " +
                                     std::to_string(client_ban_list::max_reason_length) +
                                     " bytes");
  const ban_rule shown{*prefix, reason};
  switch (bans->add(*prefix, std::move(reason))) {
    case live_ban_list::add_result::added: {
      const std::string p = escape_ban_prefix(shown.prefix);
      spdlog::info("admin: peer_id prefix \"{}\": not banned -> banned ({})", p, shown.reason);
      record_event(sh, no_swarm, "operator-ban",
                   "prefix \"" + p + "\": not banned -> banned (" + shown.reason + ")");
      return job->reply_json(201, ban_json(shown));
    }
    case live_ban_list::add_result::exists:
      return job->reply_error(409, "prefix \"" + escape_ban_prefix(shown.prefix) +
                                       "\" is already banned");
    case live_ban_list::add_result::invalid:
      break;
  }
  job->reply_error(400, "reason must not contain control characters");
}

void delete_ban(const shared_ptr& sh, const admin_job_ptr& job, const std::string& segment) {
  const auto& bans = sh->dir->config().banned_clients;
  if (!bans) return job->reply_error(503, "this node has no ban list");
  // The path segment is percent-encoded once for the URL, and its text is
  // the prefix in the ban-spec notation ("exbc%00" arrives as "exbc%2500").
  auto text = url_decode(segment, false);
  if (!text) return job->reply_error(400, "bad percent-encoding in the prefix");
  std::string error;
  auto prefix = parse_ban_prefix(*text, &error);
  if (!prefix) return job->reply_error(400, error);
  if (!bans->remove(*prefix))
    return job->reply_error(404, "prefix \"" + escape_ban_prefix(*prefix) + "\" is not banned");
  spdlog::info("admin: peer_id prefix \"{}\": banned -> not banned", escape_ban_prefix(*prefix));
  record_event(sh, no_swarm, "operator-unban",
               "prefix \"" + escape_ban_prefix(*prefix) + "\": banned -> not banned");
  job->reply_json(200, {{"prefix", escape_ban_prefix(*prefix)}, {"removed", true}});
}

void get_access(const shared_ptr& sh, const admin_job_ptr& job) {
  const access_control* ac = sh->cfg.access.get();
  json hashes = json::array();
  std::size_t count = 0;
  if (ac != nullptr) {
    const auto list = ac->snapshot();
    count = list->size();
    for (const auto& h : list->sorted()) {
      if (hashes.size() >= 1000) break;
      hashes.push_back(h.hex());
    }
  }
  job->reply_json(200, {{"mode", ac != nullptr ? to_string(ac->mode()) : "off"},
                        {"file", ac != nullptr ? ac->file() : std::string()},
                        {"count", count},
                        {"hashes", std::move(hashes)}});
}

/// Ends the local swarms among `swarms` (refused torrents; a forwarder is
/// left alone) and calls `done(ended, peers)`: how many swarms ended and the
/// peers they held (as each swarm counted them just before; one that does
/// not answer in time ends all the same, its peers uncounted).
void end_swarms(actor_ptr self, const shared_ptr& sh,
                std::vector<std::pair<info_hash, caf::actor>> local,
                std::function<void(std::size_t, std::uint64_t)> done) {
  fan_out_status(self, sh, local, [sh, local, done = std::move(done)](status_list&& st) {
    std::map<caf::actor_id, std::uint64_t> peers_of;
    for (const auto& [id, s] : st) peers_of[id] = s.peer_count;
    std::size_t ended = 0;
    std::uint64_t peers = 0;
    for (const auto& [hash, a] : local) {
      if (!sh->dir->end_swarm(hash)) continue;
      ++ended;
      peers += peers_of[a.id()];
    }
    done(ended, peers);
  });
}

void post_access(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job,
                 const info_hash& hash, bool allow) {
  access_control* ac = sh->cfg.access.get();
  if (ac == nullptr || ac->mode() == access_mode::off)
    return job->reply_error(409, "access list is off");
  const char* before = ac->allowed(hash) ? "served" : "refused";
  const auto r = ac->set_allowed(hash, allow);
  if (!r.ok) {
    spdlog::error("admin: access list: {}", r.error);
    return job->reply_error(500, r.error);
  }
  const std::string change = std::string(before) + " -> " + (allow ? "served" : "refused") +
                             " (" + to_string(ac->mode()) + " list)";
  if (allow) {
    spdlog::info("admin: info_hash {}: {}", hash.hex(), change);
    record_event(sh, hash, "operator-access", change);
    return job->reply_json(200, {{"hash", hash.hex()}, {"allowed", true}, {"swarm_ended", false}});
  }
  // Refused from now on (the front ends check the list before routing):
  // a live swarm of it ends, dropping its peers and any remediation.
  std::vector<std::pair<info_hash, caf::actor>> local;
  if (auto a = sh->dir->find(hash)) local.emplace_back(hash, std::move(a));
  end_swarms(
      self, sh, std::move(local), [sh, job, hash, change](std::size_t ended, std::uint64_t peers) {
        const std::string detail =
            change + (ended != 0 ? "; its swarm ended (" + std::to_string(peers) + " peers dropped)"
                                 : std::string());
        spdlog::info("admin: info_hash {}: {}", hash.hex(), detail);
        record_event(sh, hash, "operator-access", detail);
        job->reply_json(200, {{"hash", hash.hex()},
                              {"allowed", false},
                              {"swarm_ended", ended != 0},
                              {"peers_dropped", peers}});
      });
}

void post_access_reload(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  access_control* ac = sh->cfg.access.get();
  if (ac == nullptr || ac->file().empty())
    return job->reply_error(409, "no access file configured (access.file)");
  const auto before = ac->snapshot()->size();
  const auto r = ac->reload();
  if (!r.ok) {
    spdlog::error("admin: access list reload failed, the old list stays: {}", r.error);
    return job->reply_error(422, r.error + " (the old list stays in force)");
  }
  const auto count = ac->snapshot()->size();
  // Swarms of torrents the new list refuses end, as after a deny.
  auto refused = sh->dir->snapshot();
  refused.erase(std::remove_if(refused.begin(), refused.end(),
                               [ac](const auto& e) { return ac->allowed(e.first); }),
                refused.end());
  end_swarms(self, sh, std::move(refused),
             [sh, job, ac, before, count](std::size_t ended, std::uint64_t peers) {
               std::string detail = "reloaded " + ac->file() + ": " + std::to_string(before) +
                                    " -> " + std::to_string(count) + " hashes";
               if (ended != 0)
                 detail += "; " + std::to_string(ended) + " swarms of refused torrents ended (" +
                           std::to_string(peers) + " peers dropped)";
               spdlog::info("admin: access list {}", detail);
               record_event(sh, no_swarm, "operator-access", detail);
               job->reply_json(200, {{"mode", to_string(ac->mode())},
                                     {"count", count},
                                     {"swarms_ended", ended}});
             });
}

// -- /metrics -------------------------------------------------------------------

/// Writes Prometheus text exposition format 0.0.4.
class exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ << "# HELP " << name << ' ' << help << '\n' << "# TYPE " << name << ' ' << type << '\n';
  }
  void sample(const char* name, const std::string& labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << format(value) << '\n';
  }
  std::string text() const { return out_.str(); }

 private:
  static std::string format(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    if (v == std::floor(v) && std::fabs(v) < 1e15)
      return std::to_string(static_cast<std::int64_t>(v));
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
  }
  std::ostringstream out_;
};

/// Prometheus `le` values of the latency buckets (seconds).
constexpr const char* latency_le[latency_histogram::bounds] = {
    "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
    "0.01",    "0.025",  "0.05",    "0.1",    "0.25",  "0.5",    "1"};

/// Tracker-side families: requests by outcome, announce latency, refusals.
void tracker_metrics(exposition& m, const shared_ptr& sh) {
  const char* req = "swarmkeeper_tracker_requests_total";
  m.family(req, "counter",
           "Tracker requests answered, by transport and outcome (announce_refused: the swarm "
           "refused the client, e.g. a ban; announce_denied: the access list refused the "
           "torrent; announce_failure: the swarm did not answer in time).");
  if (sh->http != nullptr) {
    const auto c = sh->http->counters();
    for (std::size_t i = 0; i < http_outcome_count; ++i)
      m.sample(req,
               std::string("transport=\"http\",outcome=\"") +
                   to_string(static_cast<http_outcome>(i)) + "\"",
               double(c.by_outcome[i]));
  }
  if (sh->udp != nullptr) {
    const auto c = sh->udp->counters();
    m.sample(req, "transport=\"udp\",outcome=\"connect\"", double(c.connects));
    m.sample(req, "transport=\"udp\",outcome=\"announce_ok\"", double(c.announces));
    m.sample(req, "transport=\"udp\",outcome=\"announce_refused\"", double(c.refused));
    m.sample(req, "transport=\"udp\",outcome=\"announce_denied\"", double(c.denied));
    m.sample(req, "transport=\"udp\",outcome=\"announce_failure\"", double(c.swarm_failures));
    m.sample(req, "transport=\"udp\",outcome=\"scrape_ok\"", double(c.scrapes));
    m.sample(req, "transport=\"udp\",outcome=\"bad_request\"", double(c.bad_requests));
  }
  const char* lat = "swarmkeeper_announce_latency_seconds";
  m.family(lat, "histogram",
           "Announce latency from the request read to its reply handed to the socket, by "
           "transport.");
  auto histogram = [&](const char* transport, const latency_histogram::snapshot& s) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < latency_histogram::bounds; ++i) {
      cumulative += s.counts[i];
      m.sample("swarmkeeper_announce_latency_seconds_bucket",
               std::string("transport=\"") + transport + "\",le=\"" + latency_le[i] + "\"",
               double(cumulative));
    }
    cumulative += s.counts[latency_histogram::bounds];
    m.sample("swarmkeeper_announce_latency_seconds_bucket",
             std::string("transport=\"") + transport + "\",le=\"+Inf\"", double(cumulative));
    m.sample("swarmkeeper_announce_latency_seconds_sum",
             std::string("transport=\"") + transport + "\"", double(s.sum_ns) / 1e9);
    m.sample("swarmkeeper_announce_latency_seconds_count",
             std::string("transport=\"") + transport + "\"", double(cumulative));
  };
  if (sh->http != nullptr) histogram("http", sh->http->announce_latency());
  if (sh->udp != nullptr) histogram("udp", sh->udp->announce_latency());

  m.family("swarmkeeper_access_refusals_total", "counter",
           "Announces and scraped hashes refused by the info_hash access list.");
  const access_control* ac = sh->cfg.access.get();
  auto load = [](const std::atomic<std::uint64_t>& a) { return double(a.load()); };
  m.sample("swarmkeeper_access_refusals_total", "transport=\"http\",request=\"announce\"",
           ac != nullptr ? load(ac->refused_http_announces) : 0.0);
  m.sample("swarmkeeper_access_refusals_total", "transport=\"http\",request=\"scrape\"",
           ac != nullptr ? load(ac->refused_http_scrapes) : 0.0);
  m.sample("swarmkeeper_access_refusals_total", "transport=\"udp\",request=\"announce\"",
           ac != nullptr ? load(ac->refused_udp_announces) : 0.0);
  m.sample("swarmkeeper_access_refusals_total", "transport=\"udp\",request=\"scrape\"",
           ac != nullptr ? load(ac->refused_udp_scrapes) : 0.0);
  m.family("swarmkeeper_access_list_hashes", "gauge",
           "info_hashes on the access list (0 when access.mode is off).");
  m.sample("swarmkeeper_access_list_hashes", "",
           ac != nullptr && ac->mode() != access_mode::off ? double(ac->snapshot()->size()) : 0.0);
  const auto& bans = sh->dir->config().banned_clients;
  m.family("swarmkeeper_ban_refusals_total", "counter",
           "Announces refused because the client's peer_id prefix is banned.");
  m.sample("swarmkeeper_ban_refusals_total", "", bans ? double(bans->refusals()) : 0.0);
  m.family("swarmkeeper_bans", "gauge", "Banned peer_id prefixes.");
  m.sample("swarmkeeper_bans", "", bans ? double(bans->snapshot()->size()) : 0.0);
}

void get_metrics(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  auto swarms = sh->dir->snapshot(sh->cfg.max_fanout);
  fan_out_status(self, sh, std::move(swarms), [self, sh, job](status_list&& all) {
    auto finish = [sh, job, all = std::move(all)](std::size_t active_remediations,
                                                  const std::vector<supervisor_event>& events,
                                                  const supervisor_counters& sc) {
      exposition m;
      tracker_metrics(m, sh);
      m.family("swarmkeeper_swarm_restarts_total", "counter",
               "Swarm actors restarted by the supervisor after a crash, by the state they "
               "restarted from (kept: their last state; fresh: empty, the state was "
               "inconsistent).");
      m.sample("swarmkeeper_swarm_restarts_total", "state=\"kept\"", double(sc.restarts));
      m.sample("swarmkeeper_swarm_restarts_total", "state=\"fresh\"", double(sc.restarts_fresh));
      m.family("swarmkeeper_swarm_give_ups_total", "counter",
               "Crashed swarms the supervisor did not restart (too many crashes).");
      m.sample("swarmkeeper_swarm_give_ups_total", "", double(sc.give_ups));
      m.family("swarmkeeper_remediations_started_total", "counter",
               "Remediations started, by who started them.");
      m.sample("swarmkeeper_remediations_started_total", "trigger=\"automatic\"",
               double(sc.remediations_started - sc.remediations_operator));
      m.sample("swarmkeeper_remediations_started_total", "trigger=\"operator\"",
               double(sc.remediations_operator));
      m.family("swarmkeeper_remediations_ended_total", "counter",
               "Remediations ended, by how (operator_stop: stopped through the admin API; "
               "other: healthy again, swarm ended, failure).");
      m.sample("swarmkeeper_remediations_ended_total", "how=\"operator_stop\"",
               double(sc.remediations_stopped));
      m.sample("swarmkeeper_remediations_ended_total", "how=\"other\"",
               double(sc.remediations_ended - sc.remediations_stopped));
      if (sh->udp != nullptr) {
        const auto c = sh->udp->counters();
        m.family("swarmkeeper_udp_requests_total", "counter",
                 "UDP tracker requests answered, by outcome.");
        m.sample("swarmkeeper_udp_requests_total", "outcome=\"connect\"", double(c.connects));
        m.sample("swarmkeeper_udp_requests_total", "outcome=\"announce\"", double(c.announces));
        m.sample("swarmkeeper_udp_requests_total", "outcome=\"scrape\"", double(c.scrapes));
        m.sample("swarmkeeper_udp_requests_total", "outcome=\"error\"", double(c.error_replies));
        m.family("swarmkeeper_udp_datagrams_received_total", "counter", "UDP datagrams read.");
        m.sample("swarmkeeper_udp_datagrams_received_total", "", double(c.received));
        m.family("swarmkeeper_udp_swarm_failures_total", "counter",
                 "UDP requests whose swarm timed out or was unavailable.");
        m.sample("swarmkeeper_udp_swarm_failures_total", "", double(c.swarm_failures));
        m.family("swarmkeeper_udp_dropped_total", "counter",
                 "UDP datagrams dropped without a reply, by reason.");
        m.sample("swarmkeeper_udp_dropped_total", "reason=\"malformed\"",
                 double(c.dropped_malformed));
        m.sample("swarmkeeper_udp_dropped_total", "reason=\"source_port_zero\"",
                 double(c.dropped_source_port_zero));
        m.sample("swarmkeeper_udp_dropped_total", "reason=\"overload\"",
                 double(c.dropped_overload));
        m.sample("swarmkeeper_udp_dropped_total", "reason=\"send_failed\"",
                 double(c.dropped_send_failed));
        m.sample("swarmkeeper_udp_dropped_total", "reason=\"shutdown\"",
                 double(c.dropped_shutdown));
      }
      if (sh->http != nullptr) {
        m.family("swarmkeeper_http_connections", "gauge", "HTTP tracker connections open.");
        m.sample("swarmkeeper_http_connections", "", double(sh->http->connection_count()));
      }
      m.family("swarmkeeper_admin_requests_total", "counter",
               "Admin API requests answered, by outcome.");
      m.sample("swarmkeeper_admin_requests_total", "outcome=\"ok\"", double(sh->ok.load()));
      m.sample("swarmkeeper_admin_requests_total", "outcome=\"client_error\"",
               double(sh->client_errors.load()));
      m.sample("swarmkeeper_admin_requests_total", "outcome=\"server_error\"",
               double(sh->server_errors.load()));
      m.sample("swarmkeeper_admin_requests_total", "outcome=\"unauthorized\"",
               double(sh->unauthorized.load()));

      std::map<std::string, double> swarms_by, peers_by;
      for (const char* h : {"healthy", "degraded", "critical", "unevaluated"}) {
        swarms_by[h] = 0;
        peers_by[h] = 0;
      }
      double announces = 0;
      std::array<double, health_reason_count> unhealthy_by{};
      for (const auto& e : all) {
        const std::string h = health_name(e.second);
        swarms_by[h] += 1;
        peers_by[h] += double(e.second.stats.complete + e.second.stats.incomplete);
        announces += double(e.second.announces);
        if (!e.second.evaluated || !is_unhealthy(e.second.health.state)) continue;
        for (int i = 0; i < health_reason_count; ++i)
          if ((e.second.health.reasons & (1u << i)) != 0) unhealthy_by[i] += 1;
      }
      m.family("swarmkeeper_swarms", "gauge",
               "Swarms by health state (unevaluated: fewer peers than health.min-peers, or "
               "not evaluated yet; never counted as degraded or critical).");
      for (const auto& [h, n] : swarms_by)
        m.sample("swarmkeeper_swarms", "health=\"" + h + "\"", n);
      m.family("swarmkeeper_peers", "gauge", "Peers by the health state of their swarm.");
      for (const auto& [h, n] : peers_by) m.sample("swarmkeeper_peers", "health=\"" + h + "\"", n);
      m.family("swarmkeeper_unhealthy_swarms", "gauge",
               "Degraded or critical swarms by health reason (a swarm counts once for each "
               "reason it reports).");
      for (int i = 0; i < health_reason_count; ++i)
        m.sample("swarmkeeper_unhealthy_swarms",
                 "reason=\"" +
                     std::string(reason_name(static_cast<health_reason>(1u << i))) + "\"",
                 unhealthy_by[i]);
      const swarm_totals& totals = sh->dir->totals();
      m.family("swarmkeeper_announce_repeats_total", "counter",
               "Repeats of a peer's previous announce within the duplicate window, served "
               "without being judged (every swarm of this node, since start).");
      m.sample("swarmkeeper_announce_repeats_total", "", double(totals.repeats.load()));
      m.family("swarmkeeper_announces_early_total", "counter",
               "Announces earlier than the interval asked, served without a warning (below "
               "the sustained-early threshold; every swarm of this node, since start).");
      m.sample("swarmkeeper_announces_early_total", "", double(totals.early.load()));
      m.family("swarmkeeper_swarm_announces", "gauge",
               "Announces handled by the swarms that exist now (ended swarms drop out).");
      m.sample("swarmkeeper_swarm_announces", "", announces);
      m.family("swarmkeeper_remediations_active", "gauge", "Remediation actors running.");
      m.sample("swarmkeeper_remediations_active", "", double(active_remediations));
      std::map<std::string, double> by_kind;
      for (const char* k :
           {"restart", "restart-fresh", "give-up", "remediation-started", "remediation-stop",
            "remediation-ended", "health", "operator-policy", "operator-ban", "operator-unban",
            "operator-access", "operator-move"})
        by_kind[k] = 0;
      for (const auto& e : events) by_kind[e.kind] += 1;
      m.family("swarmkeeper_supervisor_events", "gauge",
               "Supervisor events (actor restarts, give-ups, remediations, health changes, "
               "operator changes) in its bounded event log, by kind.");
      for (const auto& [k, n] : by_kind)
        m.sample("swarmkeeper_supervisor_events", "kind=\"" + k + "\"", n);
      m.family("swarmkeeper_uptime_seconds", "gauge", "Seconds since the admin server started.");
      m.sample(
          "swarmkeeper_uptime_seconds", "",
          std::chrono::duration<double>(std::chrono::steady_clock::now() - sh->started).count());
      m.family("swarmkeeper_resident_memory_bytes", "gauge", "Resident set size of the process.");
      m.sample("swarmkeeper_resident_memory_bytes", "", double(resident_bytes()));
      job->reply(200, "text/plain; version=0.0.4; charset=utf-8", m.text());
    };
    const caf::actor& sup = sh->dir->supervisor();
    if (!sup) return finish(0, {}, {});
    auto finish_ptr = std::make_shared<decltype(finish)>(std::move(finish));
    self->request(sup, sh->cfg.actor_timeout, remediate_atom::value, caf::get_atom::value)
        .then(
            [self, sh, sup, finish_ptr, job](std::vector<info_hash>& active) {
              const std::size_t n = active.size();
              self->request(sup, sh->cfg.actor_timeout, counters_atom::value)
                  .then(
                      [self, sh, sup, finish_ptr, n](supervisor_counters& sc) {
                        self->request(sup, sh->cfg.actor_timeout, events_atom::value)
                            .then([finish_ptr, n, sc](std::vector<supervisor_event>& ev) {
                                    (*finish_ptr)(n, ev, sc);
                                  },
                                  [finish_ptr, n, sc](caf::error&) { (*finish_ptr)(n, {}, sc); });
                      },
                      [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
            },
            [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
  });
}

// -- routing --------------------------------------------------------------------

void route(actor_ptr self, const shared_ptr& sh, const admin_job_ptr& job) {
  const std::size_t qpos = job->target.find('?');
  const std::string path = job->target.substr(0, qpos);
  const std::string query =
      qpos == std::string::npos ? std::string{} : job->target.substr(qpos + 1);
  const auto parts = split_path(path);
  const bool get = job->method == "GET";
  const bool post = job->method == "POST";
  auto wrong_method = [&](const char* allowed) {
    job->reply_error(405, "method " + job->method + " not allowed here (use " + allowed + ")");
  };
  auto no_query = [&]() {
    if (query.empty()) return true;
    job->reply_error(400, "this endpoint takes no query parameters");
    return false;
  };
  if (parts.size() == 1 && parts[0] == "metrics") {
    if (!get) return wrong_method("GET");
    if (no_query()) get_metrics(self, sh, job);
    return;
  }
  if (parts.size() < 2 || parts[0] != "api") return job->reply_error(404, "no such endpoint");
  if (parts.size() == 2 && parts[1] == "node") {
    if (!get) return wrong_method("GET");
    if (no_query()) get_node(self, sh, job);
    return;
  }
  if (parts.size() == 2 && parts[1] == "cluster") {
    if (!get) return wrong_method("GET");
    if (no_query()) get_cluster(self, sh, job);
    return;
  }
  if (parts.size() == 2 && parts[1] == "events") {
    if (!get) return wrong_method("GET");
    if (no_query()) get_events(self, sh, job);
    return;
  }
  if (parts.size() == 2 && parts[1] == "remediations") {
    if (!get) return wrong_method("GET");
    if (no_query()) get_remediations(self, sh, job);
    return;
  }
  if (parts.size() == 2 && parts[1] == "swarms") {
    if (!get) return wrong_method("GET");
    return get_swarms(self, sh, job, query);
  }
  if (parts[1] == "swarms" && parts.size() == 5 && parts[3] == "remediation" &&
      (parts[4] == "start" || parts[4] == "stop")) {
    if (!post) return wrong_method("POST");
    auto hash = parse_hex_hash(parts[2]);
    if (!hash) return job->reply_error(400, "info_hash must be 40 hex digits");
    if (!no_query()) return;
    return post_remediation(self, sh, job, *hash, parts[4] == "start");
  }
  if (parts[1] == "bans" && parts.size() <= 3) {
    if (!no_query()) return;
    if (parts.size() == 2) {
      if (get) return get_bans(sh, job);
      if (post) return post_ban(sh, job);
      return wrong_method("GET or POST");
    }
    if (job->method != "DELETE") return wrong_method("DELETE");
    return delete_ban(sh, job, parts[2]);
  }
  if (parts[1] == "access" && parts.size() <= 4) {
    if (!no_query()) return;
    if (parts.size() == 2) {
      if (!get) return wrong_method("GET");
      return get_access(sh, job);
    }
    if (parts.size() == 3) {
      if (parts[2] != "reload") return job->reply_error(404, "no such endpoint");
      if (!post) return wrong_method("POST");
      return post_access_reload(self, sh, job);
    }
    if (parts[3] != "allow" && parts[3] != "deny") return job->reply_error(404, "no such endpoint");
    if (!post) return wrong_method("POST");
    auto hash = parse_hex_hash(parts[2]);
    if (!hash) return job->reply_error(400, "info_hash must be 40 hex digits");
    return post_access(self, sh, job, *hash, parts[3] == "allow");
  }
  if (parts[1] == "swarms" && parts.size() == 4 && parts[3] == "move") {
    if (!post) return wrong_method("POST");
    auto hash = parse_hex_hash(parts[2]);
    if (!hash) return job->reply_error(400, "info_hash must be 40 hex digits");
    if (!no_query()) return;
    return post_move(sh, job, *hash);
  }
  if (parts[1] == "swarms" && (parts.size() == 3 || parts.size() == 4)) {
    if (parts.size() == 4 && parts[3] != "policy" && parts[3] != "restart")
      return job->reply_error(404, "no such endpoint");
    if (parts.size() == 3 && !get) return wrong_method("GET");
    if (parts.size() == 4 && !post) return wrong_method("POST");
    auto hash = parse_hex_hash(parts[2]);
    if (!hash) return job->reply_error(400, "info_hash must be 40 hex digits");
    if (!no_query()) return;
    if (parts.size() == 3) return get_swarm(self, sh, job, *hash);
    if (parts[3] == "policy") return post_policy(self, sh, job, *hash);
    return post_restart(self, sh, job, *hash);
  }
  job->reply_error(404, "no such endpoint");
}

caf::behavior admin_actor(actor_ptr self, shared_ptr sh) {
  // A failing swarm request must not kill this actor (default: error
  // handler kills it on an unhandled error message).
  self->set_error_handler([](caf::scheduled_actor*, caf::error&) {});
  return {
      [self, sh](admin_job_ptr& job) {
        try {
          route(self, sh, job);
        } catch (const std::exception& e) {
          spdlog::error("admin: {} {}: {}", job->method, job->target, e.what());
          job->reply_error(500, "internal error");
        }
      },
  };
}

// -- sessions -------------------------------------------------------------------

class admin_session : public std::enable_shared_from_this<admin_session> {
 public:
  admin_session(tcp::socket socket, shared_ptr sh, std::shared_ptr<reply_gate> gate,
                caf::actor handler)
      : stream_(std::move(socket)),
        sh_(std::move(sh)),
        gate_(std::move(gate)),
        handler_(std::move(handler)) {}

  void start() { do_read(); }

  void close() {
    if (closed_) return;
    closed_ = true;
    hold_.reset();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }

  bool closed() const noexcept { return closed_; }

 private:
  void do_read() {
    if (closed_) return;
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(sh_->cfg.max_header_bytes));
    parser_->body_limit(sh_->cfg.max_body_bytes);
    stream_.expires_after(sh_->cfg.io_timeout);
    http::async_read(stream_, buffer_, *parser_,
                     beast::bind_front_handler(&admin_session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t) {
    if (closed_) return;
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return close();
    }
    if (ec == http::error::body_limit) return respond_error(413, "request body too large", false);
    if (ec == http::error::header_limit)
      return respond_error(431, "request header fields too large", false);
    if (ec) return respond_error(400, "malformed HTTP request", false);
    auto req = parser_->release();
    keep_alive_ = req.keep_alive();
    if (req.target().size() > sh_->cfg.max_url_length)
      return respond_error(414, "request target too long", false);
    // The web console's files (/, /console/...) hold no data: served without
    // the token (admin/admin_assets.hpp); the page sends it on its API calls.
    if (auto page = admin_console_response(req)) {
      sh_->count(page->result_int());
      res_ = std::move(*page);
      res_.keep_alive(keep_alive_);
      stream_.expires_after(sh_->cfg.io_timeout);
      return http::async_write(
          stream_, res_, beast::bind_front_handler(&admin_session::on_write, shared_from_this()));
    }
    const auto auth = req[http::field::authorization];
    const std::string prefix = "Bearer ";
    const std::string given(auth.data(), auth.size());
    const bool ok = given.size() > prefix.size() && given.compare(0, prefix.size(), prefix) == 0 &&
                    constant_time_equal(given.substr(prefix.size()), sh_->cfg.token);
    if (!ok) {
      sh_->unauthorized.fetch_add(1, std::memory_order_relaxed);
      return respond_error(401, auth.empty() ? "missing bearer token" : "wrong bearer token",
                           keep_alive_);
    }
    auto job = std::make_shared<admin_job>();
    job->method = std::string(req.method_string());
    job->target = std::string(req.target());
    job->body = std::move(req.body());
    std::weak_ptr<admin_session> weak = shared_from_this();
    job->reply_fn = [gate = gate_, weak](unsigned status, std::string ct, std::string body) {
      gate->post([weak, status, ct = std::move(ct), body = std::move(body)]() mutable {
        if (auto s = weak.lock())
          s->respond(status, std::move(ct), std::move(body), s->keep_alive_);
      });
    };
    // Held until the reply arrives (nothing else refers to the session
    // while no I/O is pending); released by respond() or close().
    hold_ = shared_from_this();
    caf::anon_send(handler_, std::move(job));
  }

  void respond_error(unsigned status, const std::string& message, bool keep_alive) {
    respond(status, "application/json",
            json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace) + "\n",
            keep_alive);
  }

  void respond(unsigned status, std::string content_type, std::string body, bool keep_alive) {
    if (closed_) return;
    sh_->count(status);
    auto self = shared_from_this();
    hold_.reset();
    res_ = {};
    res_.version(11);
    res_.result(static_cast<http::status>(status));
    res_.set(http::field::server, "swarmkeeper-admin");
    res_.set(http::field::content_type, content_type);
    res_.set(http::field::cache_control, "no-store");
    if (status == 401) res_.set(http::field::www_authenticate, "Bearer");
    res_.keep_alive(keep_alive);
    res_.body() = std::move(body);
    res_.prepare_payload();
    stream_.expires_after(sh_->cfg.io_timeout);
    http::async_write(stream_, res_,
                      beast::bind_front_handler(&admin_session::on_write, std::move(self)));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (closed_) return;
    if (ec || !res_.keep_alive()) return close();
    do_read();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  shared_ptr sh_;
  std::shared_ptr<reply_gate> gate_;
  caf::actor handler_;
  std::shared_ptr<admin_session> hold_;
  bool keep_alive_ = true;
  bool closed_ = false;
};

}  // namespace

struct admin_server::impl {
  caf::actor_system& sys;
  shared_ptr sh;
  std::shared_ptr<reply_gate> gate = std::make_shared<reply_gate>();
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> guard;
  tcp::acceptor acceptor{ioc};
  std::vector<std::weak_ptr<admin_session>> sessions;  // I/O thread only
  caf::actor handler;
  std::thread thread;
  std::atomic<std::uint16_t> port{0};
  bool running = false;

  impl(caf::actor_system& s, shared_ptr shared) : sys(s), sh(std::move(shared)) {}

  void do_accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      if (ec) {
        spdlog::debug("admin accept: {}", ec.message());
      } else {
        sessions.erase(std::remove_if(sessions.begin(), sessions.end(),
                                      [](const auto& w) { return w.expired(); }),
                       sessions.end());
        if (sessions.size() >= sh->cfg.max_connections) {
          beast::error_code ignored;
          socket.close(ignored);
        } else {
          auto s = std::make_shared<admin_session>(std::move(socket), sh, gate, handler);
          sessions.push_back(s);
          s->start();
        }
      }
      do_accept();
    });
  }
};

admin_server::admin_server(caf::actor_system& sys, swarm_directory& dir, const admin_config& cfg,
                           admin_node_info info, const udp_server* udp, const http_server* http) {
  auto sh = std::make_shared<admin_shared>();
  sh->cfg = cfg;
  sh->info = std::move(info);
  sh->dir = &dir;
  sh->udp = udp;
  sh->http = http;
  sh->host_name = hostname();
  impl_ = std::make_unique<impl>(sys, std::move(sh));
}

admin_server::~admin_server() { stop(); }

void admin_server::start() {
  auto& m = *impl_;
  if (m.running) return;
  if (m.sh->cfg.token.empty()) throw std::invalid_argument("admin server needs a token");
  beast::error_code ec;
  const auto addr = asio::ip::make_address(m.sh->cfg.bind, ec);
  if (ec) throw std::runtime_error("invalid admin bind address '" + m.sh->cfg.bind + "'");
  const tcp::endpoint ep{addr, m.sh->cfg.port};
  auto fail = [&](const char* what) {
    throw std::runtime_error(std::string("admin server: cannot ") + what + " " + m.sh->cfg.bind +
                             ":" + std::to_string(m.sh->cfg.port) + ": " + ec.message());
  };
  m.acceptor.open(ep.protocol(), ec);
  if (ec) fail("open");
  m.acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  m.acceptor.bind(ep, ec);
  if (ec) fail("bind");
  m.acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) fail("listen on");
  m.port = m.acceptor.local_endpoint(ec).port();
  m.handler = m.sys.spawn<caf::hidden>(admin_actor, m.sh);
  {
    std::lock_guard<std::mutex> guard{m.gate->mtx};
    m.gate->ioc = &m.ioc;
  }
  m.guard.emplace(asio::make_work_guard(m.ioc));
  m.do_accept();
  m.thread = std::thread([&m] {
    pthread_setname_np(pthread_self(), "sk-admin");
    for (;;) {
      try {
        m.ioc.run();
        return;
      } catch (const std::exception& e) {
        spdlog::error("sk-admin: unhandled exception: {}", e.what());
      }
    }
  });
  m.running = true;
  spdlog::info("admin API on {}:{}", m.sh->cfg.bind, m.port.load());
}

std::uint16_t admin_server::port() const noexcept { return impl_->port.load(); }

void admin_server::stop() {
  auto& m = *impl_;
  if (!m.running) return;
  m.running = false;
  std::promise<void> done;
  asio::post(m.ioc, [&m, &done] {
    beast::error_code ec;
    m.acceptor.close(ec);
    for (auto& w : m.sessions)
      if (auto s = w.lock()) s->close();
    m.sessions.clear();
    done.set_value();
  });
  done.get_future().wait();
  m.gate->close();
  caf::anon_send_exit(m.handler, caf::exit_reason::user_shutdown);
  m.guard.reset();
  m.ioc.stop();
  m.thread.join();
}

}  // namespace sk
