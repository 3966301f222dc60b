#include "runtime/state_keeper.hpp"

#include <sched.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "runtime/directory.hpp"
#include "runtime/supervisor_interface.hpp"
#include "tracker/client_id.hpp"

namespace sk {

namespace {

using save_atom = caf::atom_constant<caf::atom("save")>;

std::int64_t unix_ms_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// Everything the keeper actor shares with its owner.
struct keeper_context {
  swarm_directory* dir;
  std::shared_ptr<live_ban_list> bans;
  state_config cfg;
  std::shared_ptr<state_stats> stats;
  std::shared_ptr<access_control> access;
};

/// The access list belongs in the state file only while no access file
/// holds it.
bool keeps_access(const std::shared_ptr<access_control>& a) {
  return a && a->mode() != access_mode::off && a->file().empty();
}

using pump_atom = caf::atom_constant<caf::atom("pump")>;
using watch_atom = caf::atom_constant<caf::atom("watch")>;

/// The keeper's thread keeps the node's ordinary scheduling and gives its
/// core away instead: after every `slice` of its own work it yields
/// (sched_yield), so on a core it shares with the swarms and the network
/// threads an announce waits about a slice behind the writing of swarms
/// (longer behind one very large swarm, the listing of the directory at a
/// write's start, or the final fsync and rename). A lower
/// priority does not do that: the keeper sends to swarm actors and frees
/// what they allocated, so it takes the CAF scheduler's queue lock, the
/// clock's and malloc's arena locks, and a thread the scheduler starves
/// (SCHED_IDLE, or nice 19 against a busy worker) holds such a lock while
/// the UDP thread waits for it (29 ms seen under SCHED_IDLE, blocked in
/// the scheduler's enqueue, while the population fell asleep).
class pacer {
 public:
  static constexpr auto slice = std::chrono::microseconds{200};

  /// Called after each unit of work (one swarm written).
  void tick() {
    const auto now = std::chrono::steady_clock::now();
    if (now - since_ < slice) return;
    ::sched_yield();
    since_ = std::chrono::steady_clock::now();
  }

 private:
  std::chrono::steady_clock::time_point since_ = std::chrono::steady_clock::now();
};

struct keeper_state {
  static inline const char* name = "sk.state_keeper";
  std::shared_ptr<keeper_context> ctx;
  // One write at a time.
  bool busy = false;
  std::unique_ptr<state_file::writer> out;
  std::vector<local_swarm_entry> queue;
  std::size_t next = 0;
  std::size_t pending = 0;
  // write_tail has begun (once per write).
  bool tail = false;
  std::uint64_t left_out = 0;
  // Bumped when a write begins, when the swarms it still waits for are
  // given up and when it is abandoned: an answer, a watchdog look or the
  // holds' answer of an older generation is dropped.
  std::uint64_t generation = 0;
  // When the write last moved on: an answer, or a sleeping swarm written.
  std::chrono::steady_clock::time_point progress;
  pacer pace;
  std::chrono::steady_clock::time_point started;
  std::vector<caf::response_promise> waiting;
};

using keeper_ptr = caf::stateful_actor<keeper_state>*;

void begin(keeper_ptr self);

void finish(keeper_ptr self, bool ok, const std::string& error) {
  auto& st = self->state;
  auto& stats = *st.ctx->stats;
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - st.started)
                        .count();
  if (ok) {
    stats.last_write_unix_ms.store(unix_ms_now());
    stats.last_duration_ms.store(took);
    stats.last_bytes.store(st.out->bytes());
    stats.last_swarms.store(st.out->swarms());
    stats.last_peers.store(st.out->peers());
    stats.writes.fetch_add(1);
    spdlog::info("state: wrote {} swarms, {} peers ({} bytes) to {} in {} ms{}", st.out->swarms(),
                 st.out->peers(), st.out->bytes(), state_file::path_in(st.ctx->cfg.dir), took,
                 st.left_out ? " (" + std::to_string(st.left_out) + " swarms did not answer)"
                             : std::string{});
  } else {
    stats.write_failures.fetch_add(1);
    stats.set_last_error(error);
    spdlog::error("state: snapshot not written: {} (the previous state file stays)", error);
  }
  st.out.reset();
  st.queue.clear();
  st.queue.shrink_to_fit();
  st.busy = false;
  for (auto& rp : st.waiting) rp.deliver(ok);
  st.waiting.clear();
}

/// Drops the write under way: its temporary file goes, the state file
/// stays, its answers still to come and its watchdog are ignored (a new
/// generation).
void abandon(keeper_ptr self) {
  auto& st = self->state;
  st.out.reset();
  st.queue.clear();
  st.queue.shrink_to_fit();
  st.pending = 0;
  st.generation++;
  st.busy = false;
}

void write_tail(keeper_ptr self) {
  auto& st = self->state;
  if (st.ctx->bans) st.out->add(st.ctx->bans->snapshot()->rules());
  if (keeps_access(st.ctx->access))
    st.out->add(state_file::access_record{to_string(st.ctx->access->mode()),
                                          st.ctx->access->snapshot()->sorted()});
  const std::uint64_t gen = st.generation;
  auto commit = [self, gen] {
    auto& s = self->state;
    if (gen != s.generation || !s.out) return;  // abandoned meanwhile
    std::string error;
    const bool ok = s.out->commit(&error);
    finish(self, ok, error);
  };
  const auto& sup = st.ctx->dir->supervisor_handle();
  if (!sup) {
    commit();
    return;
  }
  self->request(sup, st.ctx->cfg.swarm_timeout, holds_atom::value, caf::get_atom::value)
      .then(
          [self, commit, gen](supervisor_holds& h) {
            auto& s = self->state;
            if (gen == s.generation && s.out && !h.empty()) s.out->add(h);
            commit();
          },
          [commit](caf::error&) { commit(); });
}

/// Writes a sleeping swarm's record: its snapshot aged to now (the file's
/// ages count from the write).
void add_dormant(keeper_ptr self, const dormant_swarm& d) {
  auto& st = self->state;
  swarm_snapshot snap;
  if (!unpack_snapshot(d.bytes, d.raw_size, snap)) {
    ++st.left_out;
    return;
  }
  const auto slept = std::chrono::duration_cast<std::chrono::milliseconds>(
                         self->clock().now() - d.taken)
                         .count();
  age_snapshot(snap, slept, st.ctx->cfg.peer_timeout);
  st.out->add(snap);
}

/// Sleeping swarms written per message, so a save asked for meanwhile is
/// not held up by a million of them.
constexpr std::size_t dormant_batch = 4096;

void pump(keeper_ptr self) {
  auto& st = self->state;
  std::size_t written = 0;
  while (st.pending < st.ctx->cfg.in_flight && st.next < st.queue.size()) {
    auto& e = st.queue[st.next++];
    if (e.dormant) {
      add_dormant(self, *e.dormant);
      e.dormant.reset();
      st.progress = std::chrono::steady_clock::now();
      st.pace.tick();
      if (++written == dormant_batch && st.next < st.queue.size()) {
        self->send(self, pump_atom::value);
        return;
      }
      continue;
    }
    ++st.pending;
    const std::uint64_t gen = st.generation;
    auto done = [self, gen] {
      auto& s = self->state;
      if (gen != s.generation) return false;  // given up on, or a later write
      --s.pending;
      s.progress = std::chrono::steady_clock::now();
      return true;
    };
    const info_hash hash = e.hash;
    // No timeout of CAF's per request: each would be a round trip through
    // the clock thread (set, then fire long after the answer). The
    // watchdog (watch_atom) gives up on the swarms that keep a write
    // waiting instead. A request still queued when its actor ends is
    // answered with an error at once; one whose handler failed is never
    // answered, and its response handler stays with the keeper.
    self->request(e.actor, caf::infinite, snapshot_atom::value)
        .then(
            [self, done](swarm_snapshot& snap) {
              if (!done()) return;
              auto& s = self->state;
              if (!s.out) return;
              s.out->add(snap);
              s.pace.tick();
              pump(self);
            },
            [self, done, hash](caf::error&) {
              if (!done()) return;
              // The swarm went to sleep meanwhile (its data is in the
              // directory now) or ended (its successor answers the next
              // time).
              auto& s = self->state;
              if (!s.out) return;
              if (auto d = s.ctx->dir->dormant(hash))
                add_dormant(self, *d);
              else
                ++s.left_out;
              s.pace.tick();
              pump(self);
            });
  }
  if (st.out && st.next == st.queue.size() && st.pending == 0 && !st.tail) {
    st.tail = true;
    write_tail(self);
  }
}

/// While a write runs: once it has waited `swarm_timeout` without moving
/// on (no answer, no sleeping swarm written), the swarms it still asked are
/// left out of this file and their answers, should they come, dropped.
void watch(keeper_ptr self, std::uint64_t gen) {
  auto& st = self->state;
  if (gen != st.generation || !st.out) return;
  const auto timeout = st.ctx->cfg.swarm_timeout;
  const auto idle = std::chrono::steady_clock::now() - st.progress;
  if (st.pending > 0 && idle >= timeout) {
    st.left_out += st.pending;
    st.pending = 0;
    gen = ++st.generation;
    st.progress = std::chrono::steady_clock::now();
    pump(self);  // may finish this write
    if (!st.out) return;
  }
  // Nothing asked: look again a whole timeout later.
  const auto left = st.pending == 0
                        ? timeout
                        : timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::steady_clock::now() - st.progress);
  self->delayed_send(self, std::max(left, std::chrono::milliseconds{10}), watch_atom::value, gen);
}

void begin(keeper_ptr self) {
  auto& st = self->state;
  if (st.busy) return;
  std::string error;
  st.started = std::chrono::steady_clock::now();
  st.out = state_file::writer::open(st.ctx->cfg.dir, unix_ms_now(), &error);
  if (!st.out) {
    st.busy = true;
    finish(self, false, error);
    return;
  }
  st.busy = true;
  st.queue = st.ctx->dir->local_entries();
  st.next = 0;
  st.pending = 0;
  st.left_out = 0;
  st.tail = false;
  st.generation++;
  st.progress = std::chrono::steady_clock::now();
  const auto gen = st.generation;
  pump(self);
  if (st.out) self->delayed_send(self, st.ctx->cfg.swarm_timeout, watch_atom::value, gen);
}

caf::behavior keeper_behavior(keeper_ptr self, std::shared_ptr<keeper_context> ctx) {
  self->state.ctx = std::move(ctx);
  return {
      [self](caf::tick_atom) {
        begin(self);
        self->delayed_send(self, self->state.ctx->cfg.period, caf::tick_atom::value);
      },
      [self](pump_atom) {
        if (self->state.out) pump(self);
      },
      [self](watch_atom, std::uint64_t gen) { watch(self, gen); },
      [self](save_atom) {
        // A write under way began before the caller's moment (the drain, a
        // leave): it gives way to one that begins now, at once, instead of
        // being finished first (a million swarms take minutes twice).
        auto rp = self->make_response_promise();
        self->state.waiting.push_back(rp);
        if (self->state.busy) {
          spdlog::info("state: the write under way gives way to a new one");
          abandon(self);
        }
        begin(self);
        return rp;
      },
  };
}

}  // namespace

std::string state_stats::load_problem() const {
  std::lock_guard<std::mutex> g(mutex_);
  return load_problem_;
}
std::string state_stats::moved_to() const {
  std::lock_guard<std::mutex> g(mutex_);
  return moved_to_;
}
std::string state_stats::last_error() const {
  std::lock_guard<std::mutex> g(mutex_);
  return last_error_;
}
void state_stats::set_load_problem(std::string problem, std::string moved) {
  std::lock_guard<std::mutex> g(mutex_);
  load_problem_ = std::move(problem);
  moved_to_ = std::move(moved);
}
void state_stats::set_last_error(std::string e) {
  std::lock_guard<std::mutex> g(mutex_);
  last_error_ = std::move(e);
}

state_keeper::state_keeper(caf::actor_system& sys, swarm_directory& dir,
                           std::shared_ptr<live_ban_list> bans, state_config cfg,
                           std::shared_ptr<access_control> access)
    : sys_(sys),
      dir_(dir),
      bans_(std::move(bans)),
      cfg_(std::move(cfg)),
      access_(std::move(access)),
      stats_(std::make_shared<state_stats>()) {}

state_keeper::~state_keeper() { stop(); }

void state_keeper::load() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::int64_t now_ms = unix_ms_now();
  std::int64_t downtime = 0;
  std::uint64_t swarms = 0, peers = 0, expired = 0, bans = 0, refused_bans = 0, access = 0;
  std::vector<ban_rule> ban_rules;
  supervisor_holds holds;
  std::optional<state_file::access_record> access_list_saved;
  state_file::sink out;
  // The reader checks the file whole (framing, checksum, every record
  // decoding) before `begin`; only then do records arrive here, so a swarm
  // is installed as it is decoded and no copy of all of them is held.
  out.begin = [&](std::int64_t written) { downtime = std::max<std::int64_t>(now_ms - written, 0); };
  out.swarm = [&](swarm_snapshot&& s) {
    expired += age_snapshot(s, downtime, cfg_.peer_timeout);
    peers += s.peers.size();
    ++swarms;
    dir_.install(s);
  };
  out.bans = [&](std::vector<ban_rule>&& b) { ban_rules = std::move(b); };
  out.holds = [&](supervisor_holds&& h) { holds = std::move(h); };
  out.access = [&](state_file::access_record&& a) { access_list_saved = std::move(a); };
  auto r = state_file::read(cfg_.dir, out);
  if (r.status == state_file::read_result::outcome::absent) {
    stats_->load.store(state_stats::absent);
    spdlog::info("state: no state file in {} (a first start)", cfg_.dir);
    return;
  }
  if (r.status == state_file::read_result::outcome::refused) {
    std::string error;
    std::string moved = state_file::move_aside(cfg_.dir, &error);
    stats_->load.store(state_stats::refused);
    stats_->set_load_problem(r.problem, moved);
    spdlog::error("state: {} refused: {}; {}; starting empty", state_file::path_in(cfg_.dir),
                  r.problem, moved.empty() ? error : "moved aside to " + moved);
    return;
  }
  if (bans_) {
    for (auto& rule : ban_rules) {
      if (bans_->add(rule.prefix, rule.reason) == live_ban_list::add_result::invalid)
        ++refused_bans;
      else
        ++bans;
    }
  }
  if (!holds.empty()) {
    if (const auto& sup = dir_.supervisor_handle())
      caf::anon_send(sup, holds_atom::value, caf::put_atom::value, std::move(holds));
  }
  if (access_list_saved && keeps_access(access_)) {
    // A list made for the other mode means the opposite: not put back.
    if (access_list_saved->mode == to_string(access_->mode())) {
      access_list list;
      for (const auto& h : access_list_saved->hashes) list.add(h);
      access = list.size();
      access_->restore(std::move(list));
    } else {
      spdlog::warn("state: the saved access list was made for mode {}, this node runs mode {}: "
                   "not put back",
                   access_list_saved->mode, to_string(access_->mode()));
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - t0)
                        .count();
  stats_->load_duration_ms.store(took);
  stats_->loaded_swarms.store(swarms);
  stats_->loaded_peers.store(peers);
  stats_->expired_peers.store(expired);
  stats_->loaded_bans.store(bans);
  stats_->loaded_access.store(access);
  stats_->load.store(state_stats::loaded);
  spdlog::info("state: loaded {} swarms, {} peers, {} bans{} from {} (written {} s ago) in {} ms; "
               "{} peers expired while down{}",
               swarms, peers, bans,
               access ? ", " + std::to_string(access) + " access-list entries" : std::string(),
               state_file::path_in(cfg_.dir), downtime / 1000, took, expired,
               refused_bans ? ", " + std::to_string(refused_bans) + " bans refused" : "");
}

void state_keeper::start() {
  if (actor_) return;
  auto ctx = std::make_shared<keeper_context>(keeper_context{&dir_, bans_, cfg_, stats_, access_});
  actor_ = sys_.spawn<caf::detached>(keeper_behavior, std::move(ctx));
  if (cfg_.period.count() > 0)
    caf::delayed_anon_send(actor_, cfg_.period, caf::tick_atom::value);
}

bool state_keeper::save_now(std::chrono::milliseconds timeout) {
  start();
  bool ok = false;
  caf::scoped_actor self{sys_};
  self->request(actor_, timeout, save_atom::value)
      .receive([&](bool committed) { ok = committed; },
               [&](caf::error& e) {
                 spdlog::error("state: final snapshot not written: {}", sys_.render(e));
               });
  return ok;
}

void state_keeper::stop() {
  if (actor_) {
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
    actor_ = caf::actor{};
  }
}

}  // namespace sk
