#include "admin/admin_metrics.hpp"

#include <array>
#include <map>

#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "net/http/http_server.hpp"
#include "net/latency_histogram.hpp"
#include "net/udp/udp_server.hpp"
#include "tracker/access_list.hpp"

namespace sk::admin_api {

namespace {

using mt = metric_type;

double value_of(const std::atomic<std::uint64_t>& a) { return double(a.load()); }

/// Prometheus `le` values of the latency buckets (seconds).
constexpr std::array<const char*, latency_histogram::bounds> latency_le = {
    "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
    "0.01",    "0.025",  "0.05",    "0.1",    "0.25",  "0.5",    "1"};

// -- tracker requests (both transports) ---------------------------------------

void tracker_requests(exposition& m, const admin_state& sh) {
  auto f = m.add("swarmkeeper_tracker_requests_total", mt::counter,
                 "Tracker requests answered, by transport and outcome (announce_refused: the "
                 "swarm refused the client, e.g. a ban; announce_denied: the access list refused "
                 "the torrent; announce_failure: the swarm did not answer in time).");
  if (sh.http != nullptr) {
    const auto c = sh.http->counters();
    for (std::size_t i = 0; i < http_outcome_count; ++i)
      f.sample(label("transport", "http") + "," +
                   label("outcome", to_string(static_cast<http_outcome>(i))),
               double(c.by_outcome[i]));
  }
  if (sh.udp != nullptr) {
    const auto c = sh.udp->counters();
    const std::pair<const char*, std::uint64_t> udp[] = {{"connect", c.connects},
                                                         {"announce_ok", c.announces},
                                                         {"announce_refused", c.refused},
                                                         {"announce_denied", c.denied},
                                                         {"announce_failure", c.swarm_failures},
                                                         {"scrape_ok", c.scrapes},
                                                         {"bad_request", c.bad_requests}};
    for (const auto& [outcome, n] : udp)
      f.sample(label("transport", "udp") + "," + label("outcome", outcome), double(n));
  }
}

void announce_latency(exposition& m, const admin_state& sh) {
  auto f = m.add("swarmkeeper_announce_latency_seconds", mt::histogram,
                 "Announce latency from the request read to its reply handed to the socket, by "
                 "transport.");
  auto histogram = [&f](const char* transport, const latency_histogram::snapshot& s) {
    const std::string t = label("transport", transport);
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < latency_histogram::bounds; ++i) {
      cumulative += s.counts[i];
      f.series("_bucket", t + "," + label("le", latency_le[i]), double(cumulative));
    }
    cumulative += s.counts[latency_histogram::bounds];
    f.series("_bucket", t + "," + label("le", "+Inf"), double(cumulative));
    f.series("_sum", t, double(s.sum_ns) / 1e9);
    f.series("_count", t, double(cumulative));
  };
  if (sh.http != nullptr) histogram("http", sh.http->announce_latency());
  if (sh.udp != nullptr) histogram("udp", sh.udp->announce_latency());
}

// -- transports -----------------------------------------------------------------

/// What only the UDP server counts: datagrams read, and those dropped
/// without a reply (its answered requests are in tracker_requests).
void udp_datagrams(exposition& m, const admin_state& sh) {
  if (sh.udp == nullptr) return;
  const auto c = sh.udp->counters();
  m.add("swarmkeeper_udp_datagrams_received_total", mt::counter, "UDP datagrams read.")
      .sample("", double(c.received));
  auto f = m.add("swarmkeeper_udp_dropped_total", mt::counter,
                 "UDP datagrams dropped without a reply, by reason.");
  const std::pair<const char*, std::uint64_t> dropped[] = {
      {"malformed", c.dropped_malformed},
      {"source_port_zero", c.dropped_source_port_zero},
      {"overload", c.dropped_overload},
      {"send_failed", c.dropped_send_failed},
      {"shutdown", c.dropped_shutdown}};
  for (const auto& [reason, n] : dropped) f.sample(label("reason", reason), double(n));
}

void http_connections(exposition& m, const admin_state& sh) {
  if (sh.http == nullptr) return;
  m.add("swarmkeeper_http_connections", mt::gauge, "HTTP tracker connections open.")
      .sample("", double(sh.http->connection_count()));
}

// -- access list and bans -------------------------------------------------------

void access_list(exposition& m, const admin_state& sh) {
  const access_control* ac = sh.cfg.access.get();
  auto f = m.add("swarmkeeper_access_refusals_total", mt::counter,
                 "Announces and scraped hashes refused by the info_hash access list.");
  auto refusals = [&](const char* transport, const char* request,
                      const std::atomic<std::uint64_t> access_control::*counter) {
    f.sample(label("transport", transport) + "," + label("request", request),
             ac != nullptr ? value_of(ac->*counter) : 0.0);
  };
  refusals("http", "announce", &access_control::refused_http_announces);
  refusals("http", "scrape", &access_control::refused_http_scrapes);
  refusals("udp", "announce", &access_control::refused_udp_announces);
  refusals("udp", "scrape", &access_control::refused_udp_scrapes);
  m.add("swarmkeeper_access_list_hashes", mt::gauge,
        "info_hashes on the access list (0 when access.mode is off).")
      .sample("", ac != nullptr && ac->mode() != access_mode::off ? double(ac->snapshot()->size())
                                                                  : 0.0);
}

void bans(exposition& m, const admin_state& sh) {
  const auto& bans = sh.dir->config().banned_clients;
  m.add("swarmkeeper_ban_refusals_total", mt::counter,
        "Announces refused because the client's peer_id prefix is banned.")
      .sample("", bans ? double(bans->refusals()) : 0.0);
  m.add("swarmkeeper_bans", mt::gauge, "Banned peer_id prefixes.")
      .sample("", bans ? double(bans->snapshot()->size()) : 0.0);
}

// -- the supervisor ---------------------------------------------------------------

void supervisor(exposition& m, const metrics_input& in) {
  const supervisor_counters& sc = in.supervisor;
  auto restarts = m.add("swarmkeeper_swarm_restarts_total", mt::counter,
                        "Swarm actors restarted by the supervisor after a crash, by the state "
                        "they restarted from (kept: their last state; fresh: empty, the state "
                        "was inconsistent).");
  restarts.sample(label("state", "kept"), double(sc.restarts));
  restarts.sample(label("state", "fresh"), double(sc.restarts_fresh));
  m.add("swarmkeeper_swarm_give_ups_total", mt::counter,
        "Crashed swarms the supervisor did not restart (too many crashes).")
      .sample("", double(sc.give_ups));
  auto started = m.add("swarmkeeper_remediations_started_total", mt::counter,
                       "Remediations started, by who started them.");
  started.sample(label("trigger", "automatic"),
                 double(sc.remediations_started - sc.remediations_operator));
  started.sample(label("trigger", "operator"), double(sc.remediations_operator));
  auto ended = m.add("swarmkeeper_remediations_ended_total", mt::counter,
                     "Remediations ended, by how (operator_stop: stopped through the admin API; "
                     "other: healthy again, swarm ended, failure).");
  ended.sample(label("how", "operator_stop"), double(sc.remediations_stopped));
  ended.sample(label("how", "other"), double(sc.remediations_ended - sc.remediations_stopped));
  m.add("swarmkeeper_remediations_active", mt::gauge, "Remediation actors running.")
      .sample("", double(in.active_remediations));

  // Every kind is shown, 0 included, so a dashboard's series never vanish.
  std::map<std::string, double> by_kind;
  for (const char* k : {"restart", "restart-fresh", "give-up", "remediation-started",
                        "remediation-stop", "remediation-ended", "health", "operator-policy",
                        "operator-ban", "operator-unban", "operator-access", "operator-move"})
    by_kind[k] = 0;
  for (const auto& e : in.events) by_kind[e.kind] += 1;
  auto events = m.add("swarmkeeper_supervisor_events", mt::gauge,
                      "Supervisor events (actor restarts, give-ups, remediations, health "
                      "changes, operator changes) in its bounded event log, by kind.");
  for (const auto& [k, n] : by_kind) events.sample(label("kind", k), n);
}

// -- swarms -------------------------------------------------------------------------

void swarms(exposition& m, const admin_state& sh, const metrics_input& in) {
  std::map<std::string, double> swarms_by, peers_by;
  for (const char* h : {"healthy", "degraded", "critical", "unevaluated"}) {
    swarms_by[h] = 0;
    peers_by[h] = 0;
  }
  double announces = 0;
  std::array<double, health_reason_count> unhealthy_by{};
  for (const auto& [id, s] : in.swarms) {
    const std::string h = health_name(s);
    swarms_by[h] += 1;
    peers_by[h] += double(s.stats.complete + s.stats.incomplete);
    announces += double(s.announces);
    if (!s.evaluated || !is_unhealthy(s.health.state)) continue;
    for (int i = 0; i < health_reason_count; ++i)
      if ((s.health.reasons & (1u << i)) != 0) unhealthy_by[i] += 1;
  }
  auto by_health = m.add("swarmkeeper_swarms", mt::gauge,
                         "Swarms by health state (unevaluated: fewer peers than "
                         "health.min-peers, or not evaluated yet; never counted as degraded or "
                         "critical).");
  for (const auto& [h, n] : swarms_by) by_health.sample(label("health", h), n);
  auto peers = m.add("swarmkeeper_peers", mt::gauge, "Peers by the health state of their swarm.");
  for (const auto& [h, n] : peers_by) peers.sample(label("health", h), n);
  auto unhealthy = m.add("swarmkeeper_unhealthy_swarms", mt::gauge,
                         "Degraded or critical swarms by health reason (a swarm counts once for "
                         "each reason it reports).");
  for (int i = 0; i < health_reason_count; ++i)
    unhealthy.sample(label("reason", reason_name(static_cast<health_reason>(1u << i))),
                     unhealthy_by[i]);

  const swarm_totals& totals = sh.dir->totals();
  m.add("swarmkeeper_announce_repeats_total", mt::counter,
        "Repeats of a peer's previous announce within the duplicate window, served without "
        "being judged (every swarm of this node, since start).")
      .sample("", value_of(totals.repeats));
  m.add("swarmkeeper_announces_early_total", mt::counter,
        "Announces earlier than the interval asked, served without a warning (below the "
        "sustained-early threshold; every swarm of this node, since start).")
      .sample("", value_of(totals.early));
  m.add("swarmkeeper_swarm_announces", mt::gauge,
        "Announces handled by the swarms that exist now (ended swarms drop out).")
      .sample("", announces);
}

// -- the admin server and the process -------------------------------------------------

void admin_requests(exposition& m, const admin_state& sh) {
  auto f = m.add("swarmkeeper_admin_requests_total", mt::counter,
                 "Admin API requests answered, by outcome.");
  f.sample(label("outcome", "ok"), value_of(sh.ok));
  f.sample(label("outcome", "client_error"), value_of(sh.client_errors));
  f.sample(label("outcome", "server_error"), value_of(sh.server_errors));
  f.sample(label("outcome", "unauthorized"), value_of(sh.unauthorized));
}

void process(exposition& m, const admin_state& sh) {
  m.add("swarmkeeper_uptime_seconds", mt::gauge, "Seconds since the admin server started.")
      .sample("", sh.uptime_seconds());
  m.add("swarmkeeper_resident_memory_bytes", mt::gauge, "Resident set size of the process.")
      .sample("", double(resident_bytes()));
}

}  // namespace

exposition render_metrics(const admin_state& sh, const metrics_input& in) {
  exposition m;
  tracker_requests(m, sh);
  announce_latency(m, sh);
  udp_datagrams(m, sh);
  http_connections(m, sh);
  access_list(m, sh);
  bans(m, sh);
  supervisor(m, in);
  swarms(m, sh, in);
  admin_requests(m, sh);
  process(m, sh);
  return m;
}

/// Asks every swarm (up to admin.max-fanout) for its status, then the
/// supervisor for its running remediations, counters and events, then
/// writes. Without a supervisor its families are zero; a supervisor that
/// does not answer is a 504 (except for its event log: its gauge is zero).
void get_metrics(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  auto swarms = sh->dir->snapshot(sh->cfg.max_fanout);
  fan_out_status(self, sh, std::move(swarms), [self, sh, job](status_list&& all) {
    auto in = std::make_shared<metrics_input>();
    in->swarms = std::move(all);
    auto finish = [sh, job, in]() {
      // Runs in a response handler, outside the router's catch: a family
      // written twice (std::logic_error) is answered here.
      try {
        job->reply(200, "text/plain; version=0.0.4; charset=utf-8",
                   render_metrics(*sh, *in).text());
      } catch (const std::exception& e) {
        spdlog::error("admin: /metrics: {}", e.what());
        job->reply_error(500, "internal error");
      }
    };
    const caf::actor& sup = sh->dir->supervisor();
    if (!sup) return finish();
    auto unanswered = [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); };
    self->request(sup, sh->cfg.actor_timeout, remediate_atom::value, caf::get_atom::value)
        .then(
            [self, sh, sup, in, finish, unanswered](std::vector<info_hash>& active) {
              in->active_remediations = active.size();
              self->request(sup, sh->cfg.actor_timeout, counters_atom::value)
                  .then(
                      [self, sh, sup, in, finish](supervisor_counters& sc) {
                        in->supervisor = sc;
                        self->request(sup, sh->cfg.actor_timeout, events_atom::value)
                            .then(
                                [in, finish](std::vector<supervisor_event>& ev) {
                                  in->events = std::move(ev);
                                  finish();
                                },
                                [finish](caf::error&) { finish(); });
                      },
                      unanswered);
            },
            unanswered);
  });
}

}  // namespace sk::admin_api
