#include "admin/admin_metrics.hpp"

#include <array>
#include <map>

#include <spdlog/spdlog.h>

#include "admin/admin_caps.hpp"
#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "admin/admin_limits.hpp"
#include "admin/admin_process_metrics.hpp"
#include "admin/admin_state_file.hpp"
#include "cluster/cluster_messages.hpp"
#include "net/gateway.hpp"
#include "net/http/http_server.hpp"
#include "net/latency_histogram.hpp"
#include "net/probe/reachability_prober.hpp"
#include "net/udp/udp_server.hpp"
#include "runtime/swarm_actor_log.hpp"
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
    for (std::size_t i = 0; i < http_outcome_count; ++i) {
      // /health is a load balancer's probe, not a tracker request.
      if (static_cast<http_outcome>(i) == http_outcome::health) continue;
      f.sample(label("transport", "http") + "," +
                   label("outcome", to_string(static_cast<http_outcome>(i))),
               double(c.by_outcome[i]));
    }
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

void health_checks(exposition& m, const admin_state& sh) {
  if (sh.http == nullptr) return;
  m.add("swarmkeeper_health_checks_total", mt::counter,
        "GET /health answered (load balancer and service manager probes; not tracker "
        "requests).")
      .sample("", double(sh.http->counters().by_outcome[std::size_t(http_outcome::health)]));
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

// -- refusals, the access list and bans ----------------------------------------------

/// The gateway's counters of both transports added up (zero without one).
gateway_counters gateway_sum(const admin_state& sh) {
  gateway_counters sum;
  if (sh.gw == nullptr) return sum;
  for (const transport t : {transport::http, transport::udp}) {
    const gateway_counters c = sh.gw->counters(t);
    sum.denied_announces += c.denied_announces;
    sum.denied_scrape_hashes += c.denied_scrape_hashes;
    sum.overloaded += c.overloaded;
    sum.timeouts += c.timeouts;
    sum.unavailable += c.unavailable;
    sum.shutting_down += c.shutting_down;
  }
  return sum;
}

/// Where each refusal reason is counted: the swarms' node-wide totals (the
/// announces a swarm refused) or the gateway (requests it answered itself).
/// A new reason is one row.
struct refusal_reason {
  const char* reason;
  std::uint64_t (*count)(const admin_state& sh, const gateway_counters& gateway);
};
constexpr refusal_reason refusal_reasons[] = {
    {"min_interval", [](const admin_state& sh,
                        const gateway_counters&) { return sh.dir->totals().refused.load(); }},
    {"ban",
     [](const admin_state& sh, const gateway_counters&) { return sh.dir->totals().banned.load(); }},
    {"access", [](const admin_state&, const gateway_counters& g) { return g.denied_announces; }},
    {"overloaded", [](const admin_state&, const gateway_counters& g) { return g.overloaded; }},
    {"timeout", [](const admin_state&, const gateway_counters& g) { return g.timeouts; }},
    {"swarm_unavailable",
     [](const admin_state&, const gateway_counters& g) { return g.unavailable; }},
    {"shutting_down",
     [](const admin_state&, const gateway_counters& g) { return g.shutting_down; }},
    {"address_cap", [](const admin_state& sh,
                       const gateway_counters&) { return sh.dir->totals().address_refused.load(); }},
    {"swarm_busy", [](const admin_state& sh,
                      const gateway_counters&) { return sh.dir->totals().backlog_shed.load(); }},
};

void refusals(exposition& m, const admin_state& sh) {
  const gateway_counters g = gateway_sum(sh);
  auto f = m.add("swarmkeeper_refusals_total", mt::counter,
                 "Tracker requests refused, by reason (min_interval: announcing again too soon "
                 "after a warning; ban: a banned peer_id prefix; access: an announce of a torrent "
                 "the access list refuses; overloaded, timeout, swarm_unavailable, "
                 "shutting_down: answered by the gateway without a swarm; address_cap: a new "
                 "peer beyond tracker.max-peers-per-address in its swarm; swarm_busy: an "
                 "announce shed beyond tracker.max-swarm-backlog, unapplied).");
  for (const auto& r : refusal_reasons) f.sample(label("reason", r.reason), double(r.count(sh, g)));
  m.add("swarmkeeper_log_lines_suppressed_total", mt::counter,
        "Per-swarm info lines held back by the node's log budget (log.swarm-lines-per-minute; "
        "summarised in one warning per minute).")
      .sample("", double(swarm_log::instance().suppressed_total()));
  m.add("swarmkeeper_scrape_hashes_denied_total", mt::counter,
        "info_hashes left out of scrape answers because the access list refuses them.")
      .sample("", double(g.denied_scrape_hashes));
}

void access_list(exposition& m, const admin_state& sh) {
  const access_control* ac = sh.cfg.access.get();
  m.add("swarmkeeper_access_list_hashes", mt::gauge,
        "info_hashes on the access list (0 when access.mode is off).")
      .sample("", ac != nullptr && ac->mode() != access_mode::off ? double(ac->snapshot()->size())
                                                                  : 0.0);
}

void bans(exposition& m, const admin_state& sh) {
  const auto& bans = sh.dir->bans();
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

// -- swarms and peers (node-wide totals: every swarm, however many) --------------------

double gauge_of(const std::atomic<std::int64_t>& g) { return double(g.load()); }

void swarms(exposition& m, const admin_state& sh) {
  const swarm_totals& t = sh.dir->totals();
  // Indexed by swarm_health (healthy, degraded, critical, unevaluated).
  constexpr const char* health_names[swarm_totals::health_states] = {"healthy", "degraded",
                                                                     "critical", "unevaluated"};
  auto by_health = m.add("swarmkeeper_swarms", mt::gauge,
                         "Swarms by health state (unevaluated: fewer peers than "
                         "health.min-peers, or not evaluated yet; never counted as degraded or "
                         "critical).");
  for (std::size_t i = 0; i < swarm_totals::health_states; ++i)
    by_health.sample(label("health", health_names[i]), gauge_of(t.swarms_by_health[i]));
  auto peers = m.add("swarmkeeper_peers", mt::gauge, "Peers by the health state of their swarm.");
  for (std::size_t i = 0; i < swarm_totals::health_states; ++i)
    peers.sample(label("health", health_names[i]), gauge_of(t.peers_by_health[i]));
  auto unhealthy = m.add("swarmkeeper_unhealthy_swarms", mt::gauge,
                         "Degraded or critical swarms by health reason (a swarm counts once for "
                         "each reason it reports).");
  for (int i = 0; i < health_reason_count; ++i)
    unhealthy.sample(label("reason", reason_name(static_cast<health_reason>(1u << i))),
                     gauge_of(t.unhealthy_by_reason[i]));
  auto roles = m.add("swarmkeeper_peers_by_role", mt::gauge,
                     "Peers by role: seeder, leecher (downloading), partial_seed (BEP 21, "
                     "paused with data missing); the roles add up to swarmkeeper_peers.");
  roles.sample(label("role", "seeder"), gauge_of(t.seeders));
  roles.sample(label("role", "leecher"), double(t.leechers.load() - t.partial_seeds.load()));
  roles.sample(label("role", "partial_seed"), gauge_of(t.partial_seeds));
  auto family = m.add("swarmkeeper_peers_by_family", mt::gauge, "Peers by IP address family.");
  family.sample(label("family", "ipv4"), gauge_of(t.peers_ipv4));
  family.sample(label("family", "ipv6"), gauge_of(t.peers_ipv6));
  m.add("swarmkeeper_swarms_dormant", mt::gauge,
        "Quiet swarms kept as compact data instead of an actor until their next request "
        "(tracker.hibernate-after); counted in swarmkeeper_swarms with their last health.")
      .sample("", gauge_of(t.dormant));
  m.add("swarmkeeper_swarm_hibernations_total", mt::counter,
        "Swarms put to sleep as data after tracker.hibernate-after without a request.")
      .sample("", value_of(t.hibernated));
  m.add("swarmkeeper_swarm_hibernations_deferred_total", mt::counter,
        "Quiet swarms kept awake one more sweep because tracker.hibernations-per-second was "
        "used up.")
      .sample("", value_of(t.hibernations_deferred));
  m.add("swarmkeeper_swarm_wakes_total", mt::counter,
        "Sleeping swarms woken into an actor by a request.")
      .sample("", value_of(t.woken));
  m.add("swarmkeeper_completed_total", mt::counter,
        "Completed downloads announced (event=completed; every swarm of this node, since "
        "start).")
      .sample("", value_of(t.completed));
  m.add("swarmkeeper_announce_repeats_total", mt::counter,
        "Repeats of a peer's previous announce within the duplicate window, served without "
        "being judged (every swarm of this node, since start).")
      .sample("", value_of(t.repeats));
  m.add("swarmkeeper_announces_early_total", mt::counter,
        "Announces earlier than the interval asked, served without a warning (below the "
        "sustained-early threshold; every swarm of this node, since start).")
      .sample("", value_of(t.early));
  if (sh.gw != nullptr) {
    auto admitted = m.add("swarmkeeper_announces_total", mt::counter,
                          "Announces the gateway handed to a swarm, by transport (answered by "
                          "the swarm or, late, refused as timeout).");
    for (const transport tr : {transport::http, transport::udp})
      admitted.sample(label("transport", to_string(tr)), double(sh.gw->counters(tr).announces));
  }
}

// -- the reachability prober and the cluster ------------------------------------------

void probes(exposition& m, const admin_state& sh) {
  if (sh.prober == nullptr) return;
  const prober_counters c = sh.prober->counters();
  auto dialled =
      m.add("swarmkeeper_probes_total", mt::counter, "Reachability probes dialled, by outcome.");
  dialled.sample(label("outcome", "reachable"), double(c.reachable));
  dialled.sample(label("outcome", "unreachable"), double(c.unreachable));
  dialled.sample(label("outcome", "bogus"), double(c.bogus));
  m.add("swarmkeeper_probes_started_total", mt::counter, "Reachability probe connections started.")
      .sample("", double(c.started));
  auto undialled = m.add("swarmkeeper_probe_asks_undialled_total", mt::counter,
                         "Probe asks answered without dialling (remembered: within "
                         "probe.reprobe-after; refused: an address the rules never dial; "
                         "dropped: the prober's queue was full).");
  undialled.sample(label("answer", "remembered"), double(c.remembered));
  undialled.sample(label("answer", "refused"), double(c.refused));
  undialled.sample(label("answer", "dropped"), double(c.dropped));
}

void cluster(exposition& m, const metrics_input& in) {
  if (!in.cluster) return;
  std::map<std::string, double> by_state{{"live", 0}, {"suspect", 0}, {"left", 0}, {"gone", 0}};
  for (const auto& member : in.cluster->members) by_state[member.state] += 1;
  auto members = m.add("swarmkeeper_cluster_members", mt::gauge,
                       "Cluster members this node knows, itself included, by state (live: "
                       "connected; suspect: connection lost, still an owner until "
                       "cluster.connection-timeout; left: said it leaves, not dialled until it starts "
                       "again; gone: heard of, not connected).");
  for (const auto& [state, n] : by_state) members.sample(label("state", state), n);
  m.add("swarmkeeper_cluster_handoffs_pending", mt::gauge,
        "Local swarms being handed to another node now.")
      .sample("", double(in.cluster->handoffs_pending));
  const auto& c = *in.cluster;
  auto handoffs = m.add("swarmkeeper_cluster_handoffs_total", mt::counter,
                        "Local swarms handed to another member (done: the owner took it; kept: "
                        "nobody took it, the swarm stayed here).");
  handoffs.sample(label("outcome", "done"), double(c.handoffs_done));
  handoffs.sample(label("outcome", "kept"), double(c.handoffs_kept));
  auto arrivals = m.add("swarmkeeper_cluster_arrivals_total", mt::counter,
                        "Swarms that arrived here with their state, by reason (membership: a "
                        "join or leave; operator: an admin move; crash-replica: from a dead "
                        "member's replica).");
  std::map<std::string, double> by_reason{{"membership", 0}, {"operator", 0}, {"crash-replica", 0}};
  for (const auto& [reason, n] : c.arrivals) by_reason[reason] = double(n);
  for (const auto& [reason, n] : by_reason) arrivals.sample(label("reason", reason), n);
  m.add("swarmkeeper_cluster_forwarded_total", mt::counter,
        "Announces and scrapes this node sent on to the member owning their swarm.")
      .sample("", double(c.forwarded));
  m.add("swarmkeeper_cluster_forward_failures_total", mt::counter,
        "Forwarded announces and scrapes the owner did not answer in time (the client got a "
        "failure with 'retry in', a scrape zeros).")
      .sample("", double(c.forward_failures));
  auto replicas = m.add("swarmkeeper_cluster_replicas", mt::gauge,
                        "Replicas of other members' swarms held here, by origin member.");
  for (const auto& r : c.replicas) replicas.sample(label("origin", r.origin), double(r.replicas));
  auto lag = m.add("swarmkeeper_cluster_replication_lag_seconds", mt::gauge,
                   "Age of the newest replica from each origin member (grows past "
                   "cluster.replication-period when replication stalls).");
  for (const auto& r : c.replicas)
    lag.sample(label("origin", r.origin), double(r.newest_age_ms) / 1000.0);
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
  m.add("swarmkeeper_build_info", mt::gauge,
        "Always 1; the labels name the running build (version).")
      .sample(label("version", sh.info.version), 1);
  m.add("swarmkeeper_uptime_seconds", mt::gauge, "Seconds since the admin server started.")
      .sample("", sh.uptime_seconds());
  write_process_metrics(m, read_process_sample());
}

}  // namespace

exposition render_metrics(const admin_state& sh, const metrics_input& in) {
  exposition m;
  tracker_requests(m, sh);
  health_checks(m, sh);
  announce_latency(m, sh);
  udp_datagrams(m, sh);
  http_connections(m, sh);
  // The network limits (admin/admin_limits.cpp).
  write_limits(m, sh);
  refusals(m, sh);
  access_list(m, sh);
  bans(m, sh);
  // The node's caps (admin/admin_caps.cpp).
  write_caps(m, *sh.dir->census(), sh.dir->config().max_peers);
  supervisor(m, in);
  swarms(m, sh);
  probes(m, sh);
  cluster(m, in);
  admin_requests(m, sh);
  // The state file (admin/admin_state_file.cpp).
  write_state_file(m, sh.info.state.get());
  process(m, sh);
  return m;
}

/// Asks the cluster's node actor (when clustered) for its members, then the
/// supervisor for its running remediations, counters and events, then
/// writes; the swarms' families come from the node-wide totals, so no swarm
/// is asked. Without a supervisor its families are zero; a supervisor that
/// does not answer is a 504 (except for its event log: its gauge is zero);
/// a node actor that does not answer leaves the cluster families out.
void get_metrics(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  auto in = std::make_shared<metrics_input>();
  auto finish = [sh, job, in]() {
    // Runs in a response handler, outside the router's catch: a family
    // written twice (std::logic_error) is answered here.
    try {
      job->reply(200, "text/plain; version=0.0.4; charset=utf-8", render_metrics(*sh, *in).text());
    } catch (const std::exception& e) {
      spdlog::error("admin: /metrics: {}", e.what());
      job->reply_error(500, "internal error");
    }
  };
  auto ask_supervisor = [self, sh, job, in, finish]() {
    const supervisor_actor& sup = sh->dir->supervisor_handle();
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
  };
  auto node = self->system().registry().get(cluster::node_registry_key);
  if (!sh->dir->view() || !node) return ask_supervisor();
  self->request(caf::actor_cast<cluster::node_operator_interface>(node), sh->cfg.actor_timeout,
                cluster::node_status_atom::value)
      .then(
          [in, ask_supervisor](cluster::node_status& s) {
            in->cluster = std::move(s);
            ask_supervisor();
          },
          [ask_supervisor](caf::error&) { ask_supervisor(); });
}

}  // namespace sk::admin_api
