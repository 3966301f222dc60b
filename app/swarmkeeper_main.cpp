/// swarmkeeper: the tracker daemon.
///
/// Start order, and the reverse stop order on SIGINT/SIGTERM:
///
///   start: config ─▶ logging ─▶ actor system ─▶ node lists (access list,
///          banned clients) ─▶ reachability prober (if probe.enable) ─▶
///          swarm directory (handed the prober and the ban list) ─▶
///          supervisor (restarts crashed swarms, spawns remediation) ─▶
///          gateway (handed the access list) ─▶ HTTP server (listeners, I/O
///          threads; starting: /health 503, tracker requests refused with
///          a retry) ─▶ state file (if state.dir: swarms, bans, holds of the
///          last run; then a snapshot every state.snapshot-period) ─▶
///          cluster node (if cluster.port) ─▶ UDP server (sockets, socket
///          workers) ─▶ HTTP ready ─▶ admin API (if admin.port; last, so it
///          reports on running parts)
///   stop:  stop the admin API (first) ─▶ stop accepting HTTP ─▶ stop UDP
///          (stop receiving, drain replies in flight, stop workers) ─▶ drain
///          HTTP connections ─▶ stop I/O threads ─▶ stop the prober (aborts
///          probes in flight) ─▶ leave the cluster (hand swarms over) ─▶
///          write the state file (if state.dir: the swarms still here) ─▶ stop
///          swarms, then the supervisor and its remediation actors ─▶
///          gateway ─▶ actor system
///
/// Both front ends drain before any swarm stops, so every request that was
/// read gets its answer if the swarms can give it in time. One deadline
/// (shutdown.drain-timeout) covers both drains: HTTP gets what UDP left.

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>

#include <spdlog/spdlog.h>
#include <caf/all.hpp>

#include "cluster/node.hpp"
#include "cluster/secret.hpp"
#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "app/config.hpp"
#include "app/logging.hpp"
#include "app/malloc_tuning.hpp"
#include "app/sd_notify.hpp"
#include "runtime/state_keeper.hpp"
#include "admin/admin_server.hpp"
#include "net/http/http_server.hpp"
#include "net/probe/reachability_prober.hpp"
#include "net/gateway.hpp"
#include "net/node_lists.hpp"
#include "net/udp/udp_server.hpp"
#include "tracker/node_census.hpp"

namespace {

/// Exit status for configuration errors (EX_USAGE-like; systemd shows it).
constexpr int exit_config_error = 2;
/// Exit status when the daemon cannot start (e.g. the port is taken).
constexpr int exit_start_error = 1;

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (const auto& x : xs) out += (out.empty() ? "" : ", ") + x;
  return out;
}

/// SIGHUP: re-reads the access list file; on success, live swarms of
/// torrents the new list refuses end (their peers are dropped, any
/// remediation stops), as after a deny. A bad file keeps the old list.
/// Gives the memory of swarms and peers that ended back to the system.
/// glibc keeps freed memory in its arenas (one per thread that allocated);
/// after a flood of new swarms has expired, RSS would stay at the flood's
/// peak. Called every few seconds from main: once the node holds less than
/// half of what it held at its high-water mark (and at least 1000 swarms or
/// 10,000 peers fewer), or runs half as many swarm actors (at least 1000
/// fewer: quiet swarms went to sleep as data), `malloc_trim` releases the
/// free pages of every arena, and keeps doing so at each call for `linger`
/// (what swarms ending meanwhile free). An ended swarm actor is freed when
/// it quits: its wake-ups are in the node's wheel (runtime/swarm_timers.hpp),
/// which holds no reference to it (a CAF delayed message did, up to a sweep
/// period longer, and the linger was that long). Each call holds each
/// arena's lock in turn while it passes every free chunk of a page or more
/// to madvise, released before or not (glibc's `mtrim`): while 100,000
/// swarms fall asleep, 3,000 to 19,000 calls, and a thread allocating in
/// that arena meanwhile waits (README, Restarts: single waits of 6–25 ms
/// during and after such a wave). Calling it less often made each call's
/// wait longer, not shorter, and calling it every second left each call as
/// long (the same README section). It runs under the daemon's policy on
/// purpose: on a thread of its own under SCHED_IDLE it held an arena's lock
/// while starved, and a thread that needed it waited 181 ms.
class memory_trimmer {
 public:
  explicit memory_trimmer(std::chrono::seconds linger) : linger_(linger) {}

  /// `dormant`: the swarms of `census` asleep as data (no actor).
  void check(const sk::node_census& census, std::int64_t dormant,
             std::chrono::steady_clock::time_point now) {
    const std::int64_t swarms = census.swarms();
    const std::int64_t peers = census.peers();
    const std::int64_t actors = swarms - dormant;
    high_swarms_ = std::max(high_swarms_, swarms);
    high_peers_ = std::max(high_peers_, peers);
    high_actors_ = std::max(high_actors_, actors);
    const bool fewer_swarms = high_swarms_ - swarms >= 1000 && swarms < high_swarms_ / 2;
    const bool fewer_peers = high_peers_ - peers >= 10000 && peers < high_peers_ / 2;
    const bool fewer_actors = high_actors_ - actors >= 1000 && actors < high_actors_ / 2;
    if (fewer_swarms || fewer_peers || fewer_actors) {
      spdlog::debug(
          "memory: {} swarms ({} running) and {} peers, down from {} ({}) and {}: trimming the "
          "heap",
          swarms, actors, peers, high_swarms_, high_actors_, high_peers_);
      high_swarms_ = swarms;
      high_peers_ = peers;
      high_actors_ = actors;
      trim_until_ = now + linger_;
    }
    if (now <= trim_until_) ::malloc_trim(0);
  }

 private:
  const std::chrono::seconds linger_;
  std::int64_t high_swarms_ = 0;
  std::int64_t high_peers_ = 0;
  std::int64_t high_actors_ = 0;
  std::chrono::steady_clock::time_point trim_until_{};
};

void reload_access_list(sk::access_control& access, sk::swarm_directory& directory) {
  if (access.file().empty()) {
    spdlog::info("SIGHUP: no access file configured (access.file), nothing to reload");
    return;
  }
  const auto r = access.reload();
  if (!r.ok) {
    spdlog::error("SIGHUP: access list not reloaded, the old list stays: {}", r.error);
    return;
  }
  std::size_t ended = 0;
  for (const auto& e : directory.local_entries())
    if (!access.allowed(e.hash) && directory.end_swarm(e.hash)) ++ended;
  spdlog::info("SIGHUP: access list reloaded ({} hashes, mode {}); {} swarms of refused torrents ended",
               access.snapshot()->size(), sk::to_string(access.mode()), ended);
}

int run(sk::swarmkeeper_config& cfg, const sk::daemon_settings& settings,
        const sigset_t& stop_signals) {
  // The cluster needs the middleman and TLS loaded before the system
  // starts; the identity files live only as long as this process.
  std::optional<sk::cluster::tls_identity> tls;
  if (settings.cluster.enabled()) tls = sk::cluster::configure_actor_system(cfg, settings.cluster);
  struct tls_cleanup {
    std::optional<sk::cluster::tls_identity>& id;
    ~tls_cleanup() {
      if (id) sk::cluster::remove_tls_identity(*id);
    }
  } tls_guard{tls};
  caf::actor_system sys{cfg};
  // The node-wide live lists (access list, banned clients) from what the
  // config read; every part of the daemon that reads or changes them gets
  // them from here.
  sk::node_lists lists{settings.lists};
  // Before the directory: its swarms get the prober's handle at spawn.
  // Constructed only when enabled: a disabled prober starts no thread.
  std::optional<sk::reachability_prober> prober;
  if (settings.probe_enabled) {
    prober.emplace(sys, settings.probe);
    prober->start();
    spdlog::info("reachability probes on (timeout {} ms, {} at once, re-probe after {} s{}{})",
                 settings.probe.timeout.count(), settings.probe.max_concurrent,
                 settings.probe.cooldown.count(),
                 settings.probe.allow_private ? ", private ranges too" : "",
                 settings.probe.allow_loopback ? ", loopback too" : "");
  }
  // The swarms get the live state beside their config: the node's ban list,
  // and the census that counts swarms and peers against the caps.
  sk::node_shared node{lists.bans(), std::make_shared<sk::node_census>(settings.caps)};
  spdlog::info("caps: {} swarms, {} peers, {} peers per swarm, {} new swarms per address at once "
               "and {} per minute",
               settings.caps.max_swarms, settings.caps.max_peers, settings.swarm.max_peers,
               settings.gateway.new_swarm_burst, settings.gateway.new_swarms_per_minute);
  sk::swarm_directory directory{sys, settings.swarm, node};
  if (prober) directory.set_prober(prober->actor());
  // Before anything can route: every swarm is supervised from its spawn.
  directory.start_supervisor(settings.supervisor);
  // The one door both transports hand their requests to.
  sk::gateway gateway{sys, directory, settings.gateway, lists.access()};
  // HTTP listens first, starting: until ready() below, /health answers 503
  // "starting" and announces and scrapes a retryable failure, so a load
  // balancer or an operator sees a daemon loading its state, not a closed
  // port (a million swarms take about a minute), and no client gets a peer
  // list before the swarms are back. Binding first also fails a taken port
  // before that minute.
  sk::http_server server{settings.http, gateway};
  server.start(/*starting=*/true);
  // Before any front end or the cluster can route: the swarms, bans and
  // holds of the last run are back before the first announce.
  std::optional<sk::state_keeper> state;
  if (!settings.state.dir.empty()) {
    sk::sd::notify("STATUS=loading the state file");
    state.emplace(sys, directory, lists.bans(), settings.state, lists.access());
    state->load();
    state->start();
  }
  // Before the front ends: the node joins the cluster in the background and
  // the directory routes by its view from the first request on.
  std::optional<sk::cluster::cluster_node> cluster;
  if (settings.cluster.enabled()) {
    cluster.emplace(sys, directory, settings.cluster);
    cluster->start();
  }
  // UDP starts before HTTP serves, so that once /health answers 200 every
  // transport is up and its start-up line is written (tests and load
  // balancers rely on /health meaning "fully started").
  // Constructed only when enabled: a disabled UDP tracker opens no socket.
  std::optional<sk::udp_server> udp;
  if (settings.udp_enabled) {
    // A cluster shares the connection-id key; ids must then be made on a
    // clock every node agrees on (connection_id.hpp): the system clock.
    sk::udp_server::clock_function clock;
    if (cluster)
      clock = [] {
        return std::chrono::steady_clock::time_point(
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                std::chrono::system_clock::now().time_since_epoch()));
      };
    udp.emplace(sys, gateway, settings.udp, std::move(clock));
    udp->start();  // logs its listen addresses once, at info
  } else {
    spdlog::info("UDP tracker disabled (udp.enable=false)");
  }
  server.ready();
  spdlog::info("swarmkeeper serving HTTP on {} ({} I/O threads, {} scheduler threads)",
               join(server.local_endpoints()), settings.http.io_threads,
               sys.scheduler().num_workers());

  // Last: it reports on everything above. Constructed only when enabled.
  std::optional<sk::admin_server> admin;
  if (settings.admin_enabled) {
    sk::admin_node_info info;
    info.version = SWARMKEEPER_VERSION;
    info.config = sk::redacted_config(cfg);
    if (state) {
      info.state = state->stats();
      info.state_dir = settings.state.dir;
    }
    sk::admin_config admin_cfg = settings.admin;
    admin_cfg.access = lists.access();
    admin.emplace(sys, directory, admin_cfg, std::move(info), udp ? &*udp : nullptr, &server,
                  &gateway, prober ? &*prober : nullptr);
    admin->start();  // logs its address once, at info
  }

  // Every listener is bound: tell the service manager (Type=notify).
  const std::string ready_status = "serving HTTP on " + join(server.local_endpoints());
  sk::sd::notify_ready(ready_status);

  // SIGHUP re-reads the access list (access.file); a bad file keeps the
  // old list in force and is logged. Any other signal of the set stops.
  // Every few seconds without a signal: give memory of ended swarms back.
  int sig = 0;
  memory_trimmer trimmer{std::chrono::seconds{10}};
  const timespec trim_period{5, 0};
  for (;;) {
    sig = sigtimedwait(&stop_signals, nullptr, &trim_period);
    if (sig < 0) {
      if (errno == EAGAIN) trimmer.check(*directory.census(), directory.totals().dormant.load(),
                                          std::chrono::steady_clock::now());
      continue;
    }
    if (sig != SIGHUP) break;
    sk::sd::notify_reloading();
    reload_access_list(*lists.access(), directory);
    sk::sd::notify_ready(ready_status);
  }
  sk::sd::notify_stopping();
  spdlog::info("received {}, draining connections (up to {} ms)",
               sig == SIGINT ? "SIGINT" : "SIGTERM", settings.drain_timeout.count());

  const auto drain_deadline = std::chrono::steady_clock::now() + settings.drain_timeout;
  if (admin) admin->stop();
  server.stop_accepting();
  if (udp) udp->stop(settings.drain_timeout);
  const auto http_drain = std::max(std::chrono::milliseconds{0},
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       drain_deadline - std::chrono::steady_clock::now()));
  if (!server.drain(http_drain))
    spdlog::warn("drain deadline passed with {} connections still open", server.connection_count());
  server.stop();
  if (prober) {
    prober->stop();
    const auto c = prober->counters();
    spdlog::info(
        "reachability probes: {} dialled ({} reachable, {} unreachable, {} bogus), "
        "{} remembered, {} refused, {} dropped",
        c.started, c.reachable, c.unreachable, c.bogus, c.remembered, c.refused, c.dropped);
  }
  if (cluster) {
    // Graceful leave: every local swarm goes to its next owner first; a
    // handoff nobody takes (every other member leaving too) keeps the swarm
    // here, and a leaving node takes none in.
    const auto moved = cluster->leave(std::max(settings.drain_timeout, std::chrono::milliseconds{5000}));
    spdlog::info("cluster: handed {} swarms over before leaving", moved);
  }
  // After the drain and the leave (nothing changes any more): the swarms
  // still here are written, so a swarm another member took over is not in
  // this node's file and comes back once after a whole-cluster restart.
  if (state) {
    // The keeper logs the write (or why it failed). Waited for however long
    // it takes (a million swarms: minutes): a write always ends, since a
    // swarm that keeps it waiting is left out; what bounds the stop is the
    // service manager's (deploy/swarmkeeper.service: TimeoutStopSec).
    state->save_now(std::chrono::hours{1});
    state->stop();
  }
  if (cluster) cluster->stop();
  directory.stop_all();
  spdlog::info("stopped");
  return EXIT_SUCCESS;
}

/// Puts the calling thread (and so every thread it starts afterwards) under
/// SCHED_BATCH, or SCHED_OTHER when `batch` is false (whatever policy the
/// process was started with); the errno when the kernel refuses, 0
/// otherwise. Under SCHED_BATCH, on a core
/// that the network threads share with the actor scheduler, a woken thread
/// does not preempt the one that woke it: a UDP worker that has just handed
/// a round of announces to the scheduler finishes its round (sends the
/// replies ready, reads more) before the scheduler's worker runs the swarms,
/// instead of one switch each way per hand-over.
int set_thread_policy(bool batch) {
  sched_param none{};
  none.sched_priority = 0;
  return ::sched_setscheduler(0, batch ? SCHED_BATCH : SCHED_OTHER, &none) == 0 ? 0 : errno;
}

}  // namespace

int main(int argc, char** argv) {
  // First of all: may start this program again with glibc's thread cache
  // enlarged (app/malloc_tuning.hpp).
  sk::reexec_with_malloc_tuning(argv);
  // No fastbins in glibc's malloc: a small block freed past the thread's
  // cache is merged with its free neighbours at once instead of queued
  // for a later merge. With fastbins, the next large allocation in that
  // arena (a big swarm's snapshot, say) merged every queued block first:
  // after a wave of swarms ended or fell asleep, 6 ms of one CAF worker
  // inside a single `new` while announces waited behind it.
  ::mallopt(M_MXFAST, 0);
  // Block the stop signals before any thread exists, so every thread
  // inherits the mask and only main receives them (through sigwait, at a
  // point of its choosing, with no async-signal-safety concerns).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGHUP);  // reload (see run()), never a stop
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // A client that vanishes mid-write must not kill the process.
  signal(SIGPIPE, SIG_IGN);

  sk::swarmkeeper_config cfg;
  sk::daemon_settings settings;
  switch (sk::load_config(argc, argv, cfg, settings, std::cout, std::cerr)) {
    case sk::load_action::run:
      break;
    case sk::load_action::exit_ok:
      return EXIT_SUCCESS;
    case sk::load_action::exit_error:
      return exit_config_error;
  }
  // Before the first thread starts, so that every thread inherits it.
  const int policy_error = set_thread_policy(settings.batch_scheduling);
  sk::log_format format = sk::log_format::text;
  sk::parse_log_format(settings.log_format, format);  // the schema allows only its names
  sk::setup_logging(settings.log_level, format);
  if (policy_error != 0)
    spdlog::warn("scheduler.batch: the kernel refused {} ({}); threads keep the policy the "
                 "process was started with",
                 settings.batch_scheduling ? "SCHED_BATCH" : "SCHED_OTHER",
                 std::strerror(policy_error));
  sk::setup_swarm_log_budget(settings.log_swarm_lines_per_minute, settings.log_swarm_lines_burst);
  for (const auto& w : settings.warnings) spdlog::warn("config: {}", w);
  sk::register_message_types(cfg);
  try {
    return run(cfg, settings, stop_signals);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start: {}", e.what());
    return exit_start_error;
  }
}
