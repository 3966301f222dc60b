#include "runtime/directory.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory_resource>
#include <mutex>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <caf/scheduled_actor.hpp>

#include "runtime/compact_heap.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_map.hpp"
#include "runtime/token_bucket.hpp"
#include "tracker/random.hpp"

namespace sk {

namespace {

std::uint64_t random_seed_base() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

/// The stripes, and everything needed to spawn swarms and remote handles
/// from any thread. Swarms and remote handles hold it by weak_ptr (as
/// `swarm_registry` / `placement_host`) to erase their own entry when they
/// end, and remote handles to put a swarm back after a failed handoff.
class swarm_directory::table final : public placement_host,
                                     public std::enable_shared_from_this<table> {
 public:
  table(caf::actor_system& sys, const swarm_config& cfg, node_shared node, std::size_t n)
      : sys_(sys),
        cfg_(cfg),
        census_(node.census),
        settings_(std::make_shared<const swarm_settings>(cfg, std::move(node))),
        seed_base_(cfg.rng_seed != 0 ? cfg.rng_seed : random_seed_base()),
        count_(n) {
    for (std::size_t i = 0; i < n; ++i) stripes_.emplace_back(heap_.get());
  }

  /// Where a remote handle leads: the owner's name and the node actor it
  /// reaches (out of line, so that a local entry, every entry of a node
  /// alone, carries one pointer for it, not a string and a handle).
  struct remote_target {
    std::string owner;
    caf::actor node;
  };

  /// One entry: a local swarm, a local swarm asleep as data, or a remote
  /// handle to another node (exactly one of the three is set). 40 bytes, so
  /// an item of the stripe's table is 64 (runtime/swarm_map.hpp).
  struct entry {
    local_swarm_actor local;
    remote_swarm_interface remote;
    /// Set with `remote`.
    std::unique_ptr<remote_target> target;
    /// A quiet local swarm kept as data (`local` invalid meanwhile): the
    /// next request wakes it (`table::wake`).
    dormant_ptr dormant;

    static entry local_swarm(local_swarm_actor a) {
      entry e;
      e.local = std::move(a);
      return e;
    }
    static entry remote_handle(remote_swarm_interface r, std::string owner, caf::actor node) {
      entry e;
      e.remote = std::move(r);
      e.target = std::make_unique<remote_target>(remote_target{std::move(owner), std::move(node)});
      return e;
    }

    bool is_remote() const noexcept { return static_cast<bool>(remote); }
    bool is_dormant() const noexcept { return static_cast<bool>(dormant); }
    bool valid() const noexcept { return local || remote || dormant; }
    /// The handle of a running swarm or remote entry (invalid for a dormant
    /// one: `table::serve` wakes it first).
    swarm_interface handle() const {
      return is_remote() ? swarm_interface{remote} : swarm_interface{local};
    }
    caf::actor_addr address() const { return is_remote() ? remote.address() : local.address(); }
    const std::string& owner() const noexcept { return target->owner; }
    const caf::actor& node() const noexcept { return target->node; }
  };

#if defined(__x86_64__)
  static_assert(sizeof(swarm_map<entry>::value_type) == 64, "64 bytes per swarm: see swarm_map");
#endif

  struct alignas(64) stripe {  // own cache line: stripes never false-share
    explicit stripe(std::pmr::memory_resource* r) : map(r) {}
    mutable std::mutex mtx;
    /// Its arrays on the compact heap (see `heap_`).
    swarm_map<entry> map;
  };

  /// The keyed hash of `h`: its high half picks the stripe, its low half
  /// the slot in the stripe's table.
  std::uint64_t hash(const info_hash& h) const noexcept { return hasher_(h); }
  stripe& stripe_for(const info_hash& h) const noexcept { return stripe_for(hash(h)); }
  /// The stripe of a hash `hash(h)` (multiply-shift maps its high half
  /// onto [0, count_) evenly).
  stripe& stripe_for(std::uint64_t hv) const noexcept {
    const std::uint64_t hi = hv >> 32;
    return stripes_[static_cast<std::size_t>((hi * count_) >> 32)];
  }
  std::size_t count() const noexcept { return count_; }
  stripe& at(std::size_t i) const noexcept { return stripes_[i]; }

  prober_interface prober() const override { return prober_; }
  std::shared_ptr<swarm_totals> totals() const override { return totals_; }
  std::shared_ptr<swarm_timers> timers() override {
    start_ticker();
    return timers_;
  }
  /// The swarms' wake-ups (sweeps, health ticks); shared with every swarm
  /// (they may outlive the directory).
  const std::shared_ptr<swarm_timers> timers_ = std::make_shared<swarm_timers>();
  /// Shared with every swarm (they may outlive the directory).
  const std::shared_ptr<swarm_totals> totals_ = std::make_shared<swarm_totals>();
  /// Set once before the first route (see `swarm_directory::set_prober`).
  prober_interface prober_;
  /// Set once by start_supervisor, before the first route.
  supervisor_actor supervisor_;
  /// Set once before the first view (see `swarm_directory::set_placement`).
  placement_ptr placement_;

  /// Set (under no lock) before stop_all() visits the stripes; read under a
  /// stripe lock by route(), so a route that takes a stripe after stop_all()
  /// emptied it sees the flag and spawns nothing.
  std::atomic<bool> stopped{false};

  /// The cluster picture (null: alone). Read on misses only.
  placement_view_ptr view() const { return std::atomic_load(&view_); }
  placement_view_ptr current_view() const override { return view(); }
  swarm_supervision_interface local_supervisor() const override { return supervisor_; }
  void store_view(placement_view_ptr v) { std::atomic_store(&view_, std::move(v)); }

  /// A remote handle for `h` on `owner`, moving `handoff_from` first when
  /// valid. Call under `h`'s stripe lock, with a placement.
  remote_swarm_interface spawn_remote(const info_hash& h, const std::string& owner,
                                      const caf::actor& node,
                                      const local_swarm_actor& handoff_from = {}) {
    return placement_->spawn_remote(h, owner, node, weak_from_this(), handoff_from);
  }

  /// Spawns a local swarm on `core` (null: a new empty one) and hands it to
  /// the supervisor. Call under `h`'s stripe lock.
  local_swarm_actor spawn_local(const info_hash& h, swarm_core_ptr core) {
    if (!core) {
      // Seed: reproducible from (rng_seed, info_hash) when configured;
      // otherwise the random base and a spawn counter keep respawned swarms
      // apart.
      std::uint64_t state = seed_base_ ^ id20_hasher {}(h);
      if (cfg_.rng_seed == 0) state += spawned_.fetch_add(1, std::memory_order_relaxed) << 1;
      core = make_swarm_core(h, settings_, splitmix64(state));
      core->set_lineage(new_lineage());
    }
    // Read while nothing else holds the core: a restored swarm may carry a
    // remediation under way, which its supervisor resumes.
    auto resume = core->remediation(sys_.clock().now());
    auto swarm = spawn_swarm(sys_, core, weak_from_this(), supervisor_);
    if (supervisor_) {
      // Enqueued before the swarm can run a tick, so the supervisor knows it
      // before its first health report (and monitors it before it can
      // crash; a swarm dead already yields a down message at once).
      caf::anon_send(supervisor_, watch_atom::value, h, swarm, std::move(core));
      if (resume)
        caf::anon_send(supervisor_, remediate_atom::value, caf::put_atom::value, h, swarm,
                       std::move(*resume));
    }
    return swarm;
  }

  /// Counts a local entry made (+1) or gone (-1); logs once when the node
  /// is back below its swarm cap.
  void count_local(std::int64_t delta) {
    census_->add_swarms(delta);
    if (delta < 0 && census_->reached(node_cap::swarms) != 0 && !census_->swarms_full() &&
        census_->clear(node_cap::swarms)) {
      spdlog::info("swarm cap cleared: {} swarms (caps.max-swarms = {}); new torrents accepted",
                   census_->swarms(), census_->caps().max_swarms);
    }
  }

  /// Whether one more local swarm may be created; counts it when so, and
  /// counts (and logs once) the refusal when not. Exact within a stripe;
  /// across stripes, misses racing each other may pass the cap by at most
  /// one swarm each.
  bool admit_local() {
    if (!census_->swarms_full()) {
      count_local(1);
      return true;
    }
    census_->count_refusal(node_cap::swarms);
    if (census_->reach(node_cap::swarms)) {
      spdlog::warn("swarm cap reached: {} swarms (caps.max-swarms = {}); new torrents refused",
                   census_->swarms(), census_->caps().max_swarms);
    }
    return false;
  }

  /// The entry for a miss of `h`: a local swarm when this node owns it (or
  /// no cluster), else a remote handle; invalid when the node is at its
  /// swarm cap. Call under the stripe lock.
  entry make_entry(const info_hash& h) {
    auto v = view();
    if (v && placement_) {
      const std::string& owner = v->owner(h);
      if (owner != v->self) {
        if (auto node = v->node(owner))
          return entry::remote_handle(spawn_remote(h, owner, node), owner, node);
      }
    }
    if (!admit_local()) return {};
    return entry::local_swarm(spawn_local(h, nullptr));
  }

  /// Gives back what dormant swarm `d` counted in the node's gauges and
  /// census (it is woken, and its actor counts anew, or dropped).
  void release(const dormant_swarm& d) {
    move_share(*totals_, d.share, swarm_share{});
    if (d.census_peers != 0) census_->add_peers(-static_cast<std::int64_t>(d.census_peers));
    if (d.at_peer_cap) census_->swarm_at_peer_cap(-1);
    totals_->dormant.fetch_sub(1, std::memory_order_relaxed);
  }

  /// Wakes the dormant swarm of entry `e` (of hash `h`): a new actor on a
  /// core filled from its snapshot, aged by the time it slept (peers whose
  /// timeout passed meanwhile are left out). Call under `h`'s stripe lock.
  /// Bytes that do not decode (never written so) give an empty swarm and
  /// one error line.
  void wake(const info_hash& h, entry& e) {
    dormant_ptr d = std::move(e.dormant);
    const auto now = sys_.clock().now();
    swarm_core_ptr core;
    // One snapshot per thread, reused (every field is written by the
    // unpacking): most announces at clients' pace wake a swarm, and a fresh
    // one cost an array of peers from malloc's slow path each time.
    thread_local swarm_snapshot snap;
    if (unpack_snapshot(d->bytes, d->raw_size, snap) && snap.hash == h) {
      const auto slept =
          std::chrono::duration_cast<std::chrono::milliseconds>(now - d->taken).count();
      age_snapshot(snap, slept, std::chrono::milliseconds(cfg_.peer_timeout));
      // A new seed for each wake: the same one would repeat the same
      // random draws (the same peers chosen) after every sleep.
      std::uint64_t state = snap.seed ^ (spawned_.fetch_add(1, std::memory_order_relaxed) + 1);
      core = make_swarm_core(h, settings_, splitmix64(state));
      fill_snapshot(*core, snap, now);
    } else {
      spdlog::error("swarm {}: its dormant state does not decode ({} bytes); it starts empty",
                    h.hex(), d->bytes.size());
    }
    trim_snapshot(snap);
    release(*d);
    totals_->woken.fetch_add(1, std::memory_order_relaxed);
    e.local = spawn_local(h, std::move(core));
  }

  /// The handle of entry `e`, waking it first when it sleeps. Call under
  /// `h`'s stripe lock.
  swarm_interface serve(const info_hash& h, entry& e) {
    if (e.is_dormant()) wake(h, e);
    return e.handle();
  }

  bool hibernate(const info_hash& hash, const caf::actor_addr& actor,
                 const dormant_swarm& d) override {
    local_swarm_actor victim;  // released after unlocking
    {
      stripe& s = stripe_for(hash);
      std::lock_guard<std::mutex> guard(s.mtx);
      if (!keeps_sleeping_swarms()) return false;  // stopped since it was asked
      auto it = s.map.find(hash);
      if (it == s.map.end() || it->second.is_remote() || it->second.is_dormant() ||
          it->second.local.address() != actor)
        return false;
      victim = std::move(it->second.local);
      auto kept = std::allocate_shared<dormant_swarm>(compact_allocator<dormant_swarm>(heap_), d,
                                                      heap_.get());
      it->second.dormant = std::move(kept);
      totals_->dormant.fetch_add(1, std::memory_order_relaxed);
      totals_->hibernated.fetch_add(1, std::memory_order_relaxed);
    }
    start_sweeper();
    return true;
  }

  /// Sleeping swarms are one node's: in a cluster, replication and
  /// rebalancing talk to running swarms; a stopping directory takes none.
  bool keeps_sleeping_swarms() const override {
    return !placement_ && !stopped.load(std::memory_order_acquire);
  }

  /// The node's hibernations per second (swarm_config): a token bucket
  /// holding at most a hundredth of a second's worth (so the swarms granted
  /// one in a row hold the scheduler about a millisecond: ten at the
  /// default rate, each packing its snapshot), refilled on the swarms'
  /// clock. Beyond it, every wake earns one sleep: under clients' steady
  /// announces the node wakes swarms at the pace of its announces (about
  /// 4,000 a second for 1,000,000 ten-peer swarms at one announce per peer
  /// per 30 minutes), and a bound below that pace would let the awake
  /// population grow until it is all of them. Those sleeps come as the
  /// wakes came, a `hibernate-after` after each swarm's last request (the
  /// swarm sweeps when its quiet time is up), so they add no burst the
  /// wakes did not have.
  bool take_hibernation(health_time now) override {
    if (cfg_.hibernations_per_second == 0) return true;
    {
      std::lock_guard<std::mutex> guard(hibernation_mtx_);
      const std::uint64_t woken = totals_->woken.load(std::memory_order_relaxed);
      // Wakes not yet paid back by a sleep; never more than the node has
      // swarms (a woken swarm that ended instead leaves its credit behind).
      wake_credits_ = std::min<std::uint64_t>(
          wake_credits_ + (woken - woken_seen_),
          static_cast<std::uint64_t>(std::max<std::int64_t>(census_->swarms(), 0)));
      woken_seen_ = woken;
      if (wake_credits_ > 0) {
        --wake_credits_;
        return true;
      }
      if (hibernation_.take(now)) return true;
    }
    totals_->hibernations_deferred.fetch_add(1, std::memory_order_relaxed);
    return false;
  }

  /// Removes the sleeping swarm at `it` from stripe `s` (held locked),
  /// giving back its counts; its data goes to `gone`, to be freed after
  /// unlocking. Returns the next entry.
  template <class Map>
  typename Map::iterator drop_dormant(Map& map, typename Map::iterator it,
                                      std::vector<dormant_ptr>& gone) {
    release(*it->second.dormant);
    // The supervisor keeps an operator's pin for a sleeping swarm: it goes
    // with the swarm.
    if (supervisor_) caf::anon_send(supervisor_, forget_atom::value, it->first);
    gone.push_back(std::move(it->second.dormant));
    count_local(-1);
    return map.erase(it);
  }

  /// Drops the dormant swarms of stripe `i` whose time is up (`drop_at`):
  /// every peer timed out and the swarm would have ended idle.
  void sweep_dormant(std::size_t i, health_time now) {
    std::vector<dormant_ptr> gone;  // freed after unlocking
    auto& s = at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    for (auto it = s.map.begin(); it != s.map.end();) {
      if (it->second.is_dormant() && it->second.dormant->drop_at <= now)
        it = drop_dormant(s.map, it, gone);
      else
        ++it;
    }
  }

  /// The actor that drops dormant swarms whose time is up: one stripe per
  /// message, a pass every sweep period. Spawned with the first swarm that
  /// goes to sleep; ends with the directory.
  void start_sweeper() {
    std::lock_guard<std::mutex> guard(sweeper_mtx_);
    if (sweeper_ || stopped.load(std::memory_order_acquire)) return;
    // Arguments, not captures (see start_ticker).
    sweeper_ = sys_.spawn(
        [](caf::event_based_actor* self, std::weak_ptr<table> weak,
           std::chrono::seconds period) -> caf::behavior {
          self->delayed_send(self, period, sweep_atom::value);
          return {
              [self](sweep_atom) { self->send(self, sweep_atom::value, std::size_t{0}); },
              [self, weak, period](sweep_atom, std::size_t i) {
                auto t = weak.lock();
                if (!t || t->stopped.load(std::memory_order_acquire)) {
                  self->quit();
                  return;
                }
                t->sweep_dormant(i, self->clock().now());
                if (i + 1 < t->count())
                  self->send(self, sweep_atom::value, i + 1);
                else
                  self->delayed_send(self, period, sweep_atom::value);
              },
          };
        },
        weak_from_this(), cfg_.sweep_period);
  }

  /// The actor that sends the swarms what falls due in `timers_`, at every
  /// whole step of the clock (10 ms; at 100,000 awake swarms and the
  /// default periods of 60 s, about 17 swarms a step on average, each sent
  /// its sweep and its tick). Spawned for the first swarm that starts; ends
  /// with the directory.
  void start_ticker() {
    if (ticker_started_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> guard(sweeper_mtx_);
    if (ticker_ || stopped.load(std::memory_order_acquire)) return;
    // What the actor needs comes as spawn arguments, not captures: CAF
    // 0.17 dereferences a null argument tuple for a function that takes
    // none (undefined behavior, reported by UBSan).
    ticker_ = sys_.spawn(
        [](caf::event_based_actor* self, std::weak_ptr<table> weak,
           std::shared_ptr<swarm_timers> timers) -> caf::behavior {
          // What fell due and is not sent yet: `sent` of `due` are. Sent a
          // batch at a time, each batch behind whatever the scheduler holds
          // then (the rest as a message to itself): swarms created together
          // fall due together (100,000 filled in 8 s: about 120 a step), and
          // sent at once their sweeps and ticks would queue ahead of the
          // announces that arrive meanwhile.
          struct pending {
            std::vector<swarm_timers::due> due;
            std::size_t sent = 0;
          };
          auto p = std::make_shared<pending>();
          // Every step while some swarm has a wake-up armed (every awake swarm
          // does), once a second while none has.
          const auto next = [self, timers]() -> caf::timespan {
            if (timers->armed() == 0) return std::chrono::seconds(1);
            return swarm_timers::until_next_step(self->clock().now());
          };
          const auto send_batch = [self, p] {
            constexpr std::size_t batch = 32;
            const std::size_t end = std::min(p->due.size(), p->sent + batch);
            for (; p->sent < end; ++p->sent) {
              auto& d = p->due[p->sent];
              auto swarm = caf::actor_cast<local_swarm_actor>(std::move(d.swarm));
              if ((d.what & wake_sweep) != 0) caf::anon_send(swarm, sweep_atom::value);
              if ((d.what & wake_tick) != 0) caf::anon_send(swarm, caf::tick_atom::value);
            }
            if (p->sent < p->due.size()) {
              self->send(self, sweep_atom::value);
            } else {
              p->due.clear();
              p->sent = 0;
            }
          };
          self->delayed_send(self, next(), caf::tick_atom::value);
          return {
              [self, weak, timers, p, next, send_batch](caf::tick_atom) {
                if (auto t = weak.lock(); !t || t->stopped.load(std::memory_order_acquire)) {
                  self->quit();
                  return;
                }
                // A batch still being sent carries on with what comes now.
                const bool sending = !p->due.empty();
                timers->collect(self->clock().now(), p->due);
                if (!sending && !p->due.empty()) send_batch();
                self->delayed_send(self, next(), caf::tick_atom::value);
              },
              [send_batch](sweep_atom) { send_batch(); },
          };
        },
        weak_from_this(), timers_);
    ticker_started_.store(true, std::memory_order_release);
  }

  /// Stops the sweeper and the ticker (stop_all).
  void stop_sweeper() {
    caf::actor a;
    caf::actor b;
    {
      std::lock_guard<std::mutex> guard(sweeper_mtx_);
      a = std::move(sweeper_);
      b = std::move(ticker_);
    }
    if (a) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    if (b) caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
  }

  /// route(): the entry's handle, created on a miss.
  route_result route(const info_hash& h) { return route(h, hash(h)); }
  /// `route(h)`, `hv` being `hash(h)`.
  route_result route(const info_hash& h, std::uint64_t hv) {
    auto& s = stripe_for(hv);
    std::lock_guard<std::mutex> guard(s.mtx);
    if (auto it = s.map.find(h, hv); it != s.map.end())
      return {serve(h, it->second), route_status::served};
    if (stopped.load(std::memory_order_acquire)) return {{}, route_status::stopping};
    s.map.reserve_one();  // before spawning: the emplace below cannot fail then
    auto e = make_entry(h);
    if (!e.valid()) return {{}, route_status::swarm_cap};
    auto a = e.handle();
    s.map.emplace(h, std::move(e));
    return {std::move(a), route_status::served};
  }

  local_swarm_actor install_local(const swarm_snapshot& snap) override {
    remote_swarm_interface leaving;  // a remote handle replaced; told to leave after unlocking
    local_swarm_actor swarm;
    {
      auto& s = stripe_for(snap.hash);
      std::lock_guard<std::mutex> guard(s.mtx);
      if (stopped.load(std::memory_order_acquire)) return {};
      auto it = s.map.find(snap.hash);
      if (it != s.map.end()) serve(snap.hash, it->second);  // wakes a sleeping one
      if (it != s.map.end() && !it->second.is_remote()) {
        // A local swarm exists already (requests reached this node before
        // the snapshot): merge into it, on its own thread.
        swarm = it->second.local;
        caf::anon_send(swarm, caf::migrate_atom::value, caf::put_atom::value, snap);
        return swarm;
      }
      const bool known = it != s.map.end();  // a remote entry for the hash
      if (!known) s.map.reserve_one();  // before spawning (see route); `it` stays unused
      // On the node's settings (its bans and census), not a copy of the
      // config. Not capped: the state moves here from elsewhere.
      auto core = make_swarm_core(snap.hash, settings_, snap.seed);
      fill_snapshot(*core, snap, sys_.clock().now());
      swarm = spawn_local(snap.hash, std::move(core));
      count_local(1);
      if (known) {
        leaving = std::exchange(it->second.remote, remote_swarm_interface{});
        it->second = entry::local_swarm(swarm);
      } else {
        s.map.emplace(snap.hash, entry::local_swarm(swarm));
      }
    }
    if (leaving) caf::anon_send(leaving, caf::leave_atom::value);
    return swarm;
  }

  bool erase_if_owner(const info_hash& hash, const caf::actor_addr& actor) override {
    entry victim;  // released after unlocking
    stripe& s = stripe_for(hash);
    std::lock_guard<std::mutex> guard(s.mtx);
    auto it = s.map.find(hash);
    if (it == s.map.end() || it->second.address() != actor) return false;
    victim = std::move(it->second);
    s.map.erase(it);
    if (!victim.is_remote()) count_local(-1);
    return true;
  }

  bool replace_if_owner(const info_hash& hash, const caf::actor_addr& dead,
                        const local_swarm_actor& replacement) override {
    local_swarm_actor victim;  // released after unlocking
    stripe& s = stripe_for(hash);
    std::lock_guard<std::mutex> guard(s.mtx);
    auto it = s.map.find(hash);
    if (stopped.load(std::memory_order_acquire) || it == s.map.end() || it->second.is_remote() ||
        it->second.is_dormant() || it->second.local.address() != dead) {
      return false;
    }
    victim = std::exchange(it->second.local, replacement);
    return true;
  }

  caf::actor_system& sys_;
  const swarm_config cfg_;
  /// The node's census (never null), also held by `settings_`.
  const std::shared_ptr<node_census> census_;
  /// What every swarm of this directory runs on.
  const swarm_settings_ptr settings_;

 private:
  /// Base of per-swarm seeds when cfg.rng_seed == 0 (drawn at construction).
  std::uint64_t seed_base_;
  std::atomic<std::uint64_t> spawned_{0};
  /// Where the entries and the sleeping swarms live (runtime/compact_heap.hpp):
  /// apart from the actors', so a swarm's sleep gives its actor's pages back.
  /// Declared before the stripes: destroyed after them.
  std::shared_ptr<compact_heap> heap_ = std::make_shared<compact_heap>();
  mutable std::deque<stripe> stripes_;
  std::size_t count_;
  placement_view_ptr view_;
  std::mutex sweeper_mtx_;
  caf::actor sweeper_;
  caf::actor ticker_;
  std::atomic<bool> ticker_started_{false};
  /// take_hibernation()'s bucket: a hundredth of a second's worth at most.
  std::mutex hibernation_mtx_;
  id20_hasher hasher_;
  token_bucket<> hibernation_{static_cast<double>(cfg_.hibernations_per_second),
                              std::max(1.0, cfg_.hibernations_per_second / 100.0)};
  /// Sleeps the node's wakes have earned (see take_hibernation), and the
  /// wake count they were last brought up to. Under hibernation_mtx_.
  std::uint64_t wake_credits_ = 0;
  std::uint64_t woken_seen_ = 0;
};

swarm_directory::swarm_directory(caf::actor_system& sys, const swarm_config& cfg,
                                 std::size_t stripes)
    : swarm_directory(sys, cfg, node_shared{}, stripes) {}

swarm_directory::swarm_directory(caf::actor_system& sys, const swarm_config& cfg, node_shared node,
                                 std::size_t stripes)
    : sys_(sys), cfg_(cfg), node_(std::move(node)) {
  if (!node_.census) node_.census = std::make_shared<node_census>();
  if (auto err = cfg_.validate(); !err.empty()) {
    throw std::invalid_argument("invalid swarm config: " + err);
  }
  if (stripes == 0) {
    throw std::invalid_argument("swarm directory needs at least one stripe");
  }
  table_ = std::make_shared<table>(sys, cfg_, node_, stripes);
}

swarm_directory::~swarm_directory() { stop_all(); }

supervisor_actor swarm_directory::start_supervisor(const supervisor_config& cfg) {
  if (auto err = cfg.validate(); !err.empty()) {
    throw std::invalid_argument("invalid supervisor config: " + err);
  }
  if (!supervisor_) {
    supervisor_ = spawn_supervisor(sys_, cfg, std::weak_ptr<swarm_registry>(table_));
    supervisor_untyped_ = caf::actor_cast<caf::actor>(supervisor_);
    table_->supervisor_ = supervisor_;
  }
  return supervisor_;
}

void swarm_directory::set_prober(prober_interface prober) { table_->prober_ = std::move(prober); }

void swarm_directory::set_prober(caf::actor prober) {
  set_prober(caf::actor_cast<prober_interface>(std::move(prober)));
}

swarm_interface swarm_directory::route_swarm(const info_hash& h) { return table_->route(h).swarm; }

route_result swarm_directory::open_swarm(const info_hash& h) { return table_->route(h); }

swarm_interface swarm_directory::find_swarm(const info_hash& h) const {
  const std::uint64_t hv = table_->hash(h);
  auto& s = table_->stripe_for(hv);
  {
    std::lock_guard<std::mutex> guard(s.mtx);
    if (auto it = s.map.find(h, hv); it != s.map.end()) return table_->serve(h, it->second);
  }
  // A hash another node owns: its remote handle (a scrape asks the owner,
  // which creates nothing for an unknown torrent).
  if (auto v = table_->view(); v && table_->placement_ && v->owner(h) != v->self)
    return table_->route(h).swarm;
  return {};
}

void swarm_directory::prefetch(const info_hash* hashes, std::size_t n) const noexcept {
  constexpr std::size_t batch = 32;
  std::uint64_t hv[batch];
  for (std::size_t first = 0; first < n; first += batch) {
    const std::size_t m = std::min(batch, n - first);
    const info_hash* h = hashes + first;
    for (std::size_t i = 0; i < m; ++i) {
      hv[i] = table_->hash(h[i]);
      auto& s = table_->stripe_for(hv[i]);
      std::lock_guard<std::mutex> guard(s.mtx);
      s.map.prefetch_slot(hv[i]);
    }
    for (std::size_t i = 0; i < m; ++i) {
      auto& s = table_->stripe_for(hv[i]);
      std::lock_guard<std::mutex> guard(s.mtx);
      s.map.prefetch_item(hv[i]);
    }
    // A running swarm's handle: the reference count the lookup's copy
    // increments, the actor's first line and its mailbox, which the
    // message to it writes.
    for (std::size_t i = 0; i < m; ++i) {
      auto& s = table_->stripe_for(hv[i]);
      std::lock_guard<std::mutex> guard(s.mtx);
      auto it = s.map.find(h[i], hv[i]);
      if (it == s.map.end() || !it->second.local) continue;
      caf::actor_control_block* ctrl = caf::actor_cast<caf::actor_control_block*>(it->second.local);
      __builtin_prefetch(ctrl);
      caf::abstract_actor* actor = ctrl->get();
      __builtin_prefetch(actor);
      __builtin_prefetch(&static_cast<caf::scheduled_actor*>(actor)->mailbox());
    }
  }
}

caf::actor swarm_directory::route(const info_hash& h) {
  return caf::actor_cast<caf::actor>(route_swarm(h));
}

caf::actor swarm_directory::find(const info_hash& h) const {
  return caf::actor_cast<caf::actor>(find_swarm(h));
}

swarm_location swarm_directory::locate(const info_hash& h) const {
  swarm_location out;
  auto v = table_->view();
  auto fill = [&](table::entry& e) {
    out.swarm = table_->serve(h, e);
    out.actor = caf::actor_cast<caf::actor>(out.swarm);
    out.remote = e.is_remote();
    out.owner = out.remote ? e.owner() : v ? v->self : std::string();
    out.supervision = out.remote ? swarm_supervision_interface{e.remote}
                                 : swarm_supervision_interface{supervisor_};
  };
  {
    auto& s = table_->stripe_for(h);
    std::lock_guard<std::mutex> guard(s.mtx);
    if (auto it = s.map.find(h); it != s.map.end()) {
      fill(it->second);
      return out;
    }
  }
  if (v && table_->placement_ && v->owner(h) != v->self) {
    // Routed like find(): a remote handle, whose entry names its owner.
    const auto routed = table_->route(h).swarm;
    auto& s = table_->stripe_for(h);
    std::lock_guard<std::mutex> guard(s.mtx);
    if (auto it = s.map.find(h); it != s.map.end() && it->second.handle() == routed)
      fill(it->second);
  }
  return out;
}

std::size_t swarm_directory::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    for (const auto& kv : s.map) n += kv.second.is_remote() ? 0 : 1;
  }
  return n;
}

namespace {

/// Up to `limit` local swarms of `t` for which `keep(hash)` holds, one
/// stripe lock at a time, each made into an element of the result by
/// `take(hash, entry)` under its stripe's lock.
template <class Out, class Table, class Keep, class Take>
std::vector<Out> local_where(Table& t, std::size_t limit, Keep keep, Take take) {
  std::vector<Out> out;
  for (std::size_t i = 0; i < t.count() && out.size() < limit; ++i) {
    auto& s = t.at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    for (auto& kv : s.map) {
      if (out.size() >= limit) break;
      if (kv.second.is_remote() || !keep(kv.first)) continue;
      out.push_back(take(kv.first, kv.second));
    }
  }
  return out;
}

/// `local_where` of (hash, actor) pairs, a sleeping swarm woken first.
template <class Table, class Keep>
std::vector<std::pair<info_hash, local_swarm_actor>> local_awake_where(Table& t,
                                                                       std::size_t limit,
                                                                       Keep keep) {
  return local_where<std::pair<info_hash, local_swarm_actor>>(
      t, limit, keep, [&t](const info_hash& h, auto& e) {
        t.serve(h, e);
        return std::make_pair(h, e.local);
      });
}

}  // namespace

std::vector<std::pair<info_hash, local_swarm_actor>> swarm_directory::local_swarms(
    std::size_t limit) const {
  return local_awake_where(*table_, limit, [](const info_hash&) { return true; });
}

std::vector<std::pair<info_hash, local_swarm_actor>> swarm_directory::local_swarms_if(
    const std::function<bool(const info_hash&)>& keep) const {
  return local_awake_where(*table_, static_cast<std::size_t>(-1), keep);
}

std::vector<local_swarm_entry> swarm_directory::local_entries() const {
  std::vector<local_swarm_entry> out;
  // Room for every entry up front (swarms added between the count and the
  // copy grow the vector as usual), so no stripe is held while the entries
  // of the stripes before it are moved.
  std::size_t total = 0;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    total += s.map.size();
  }
  out.reserve(total + total / 16);
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    for (const auto& kv : s.map)
      if (!kv.second.is_remote()) out.push_back({kv.first, kv.second.local, kv.second.dormant});
  }
  return out;
}

std::vector<local_swarm_entry> swarm_directory::local_entries_where(
    std::size_t limit, const std::function<bool(const info_hash&)>& keep) const {
  return local_where<local_swarm_entry>(*table_, limit, keep, [](const info_hash& h, auto& e) {
    return local_swarm_entry{h, e.local, e.dormant};
  });
}

dormant_ptr swarm_directory::dormant(const info_hash& h) const {
  auto& s = table_->stripe_for(h);
  std::lock_guard<std::mutex> guard(s.mtx);
  auto it = s.map.find(h);
  return it == s.map.end() ? nullptr : it->second.dormant;
}

std::vector<std::pair<info_hash, caf::actor>> swarm_directory::snapshot(std::size_t limit) const {
  std::vector<std::pair<info_hash, caf::actor>> out;
  for (auto& [hash, swarm] : local_swarms(limit))
    out.emplace_back(hash, caf::actor_cast<caf::actor>(std::move(swarm)));
  return out;
}

bool swarm_directory::end_swarm(const info_hash& h) {
  local_swarm_actor swarm;
  std::vector<dormant_ptr> asleep;  // freed after unlocking
  {
    auto& s = table_->stripe_for(h);
    std::lock_guard<std::mutex> guard(s.mtx);
    auto it = s.map.find(h);
    if (it == s.map.end() || it->second.is_remote()) return false;
    if (it->second.is_dormant()) {
      table_->drop_dormant(s.map, it, asleep);
      return true;
    }
    swarm = std::move(it->second.local);
    s.map.erase(it);
    table_->count_local(-1);
  }
  // Outside the lock, like stop_all(). Requests already queued at the swarm
  // bounce with request_receiver_down.
  caf::anon_send_exit(swarm, caf::exit_reason::user_shutdown);
  return true;
}

const swarm_totals& swarm_directory::totals() const noexcept { return *table_->totals_; }

std::size_t swarm_directory::handoffs_pending() const { return table_->handoffs_pending.load(); }

swarm_directory::forward_counters swarm_directory::forwarding() const {
  return {table_->forwarded.load(std::memory_order_relaxed),
          table_->forward_failures.load(std::memory_order_relaxed),
          table_->handoffs_done.load(std::memory_order_relaxed),
          table_->handoffs_kept.load(std::memory_order_relaxed)};
}

void swarm_directory::set_placement(placement_ptr p) { table_->placement_ = std::move(p); }

placement_view_ptr swarm_directory::view() const { return table_->view(); }

std::size_t swarm_directory::set_view(placement_view_ptr v) {
  table_->store_view(v);
  std::size_t moving = 0;
  std::vector<remote_swarm_interface> leaving;
  const bool clustered = v && table_->placement_;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    if (table_->stopped.load(std::memory_order_acquire)) return moving;
    for (auto it = s.map.begin(); it != s.map.end();) {
      const info_hash& h = it->first;
      auto& e = it->second;
      const std::string owner = clustered ? v->owner(h) : std::string();
      const bool mine = !clustered || owner == v->self;
      if (e.is_remote()) {
        if (mine || owner != e.owner() || v->node(owner) != e.node()) {
          // The owner changed (or reconnected: a new handle): this remote
          // handle answers what it has in flight and ends; the next route
          // makes the right entry.
          leaving.push_back(std::move(e.remote));
          it = s.map.erase(it);
          continue;
        }
      } else if (!mine) {
        if (auto node = v->node(owner)) {
          table_->serve(h, e);  // a sleeping swarm moves awake
          // Hand the swarm over: from now on requests queue in the remote
          // handle, which moves the state first (runtime/placement.hpp).
          auto remote = table_->spawn_remote(h, owner, node, e.local);
          e = table::entry::remote_handle(std::move(remote), owner, node);
          table_->count_local(-1);
          ++moving;
        }
      }
      ++it;
    }
  }
  for (auto& a : leaving) caf::anon_send(a, caf::leave_atom::value);
  return moving;
}

swarm_directory::served_swarm swarm_directory::serve_forwarded(const info_hash& h, bool create) {
  auto& s = table_->stripe_for(h);
  std::lock_guard<std::mutex> guard(s.mtx);
  if (auto it = s.map.find(h); it != s.map.end()) {
    table_->serve(h, it->second);  // wakes a sleeping one
    return {it->second.local, it->second.remote};
  }
  if (!create || table_->stopped.load(std::memory_order_acquire)) return {};
  s.map.reserve_one();  // before counting and spawning (see route)
  if (!table_->admit_local()) return {};
  auto swarm = table_->spawn_local(h, nullptr);
  s.map.emplace(h, table::entry::local_swarm(swarm));
  return {swarm, {}};
}

std::string swarm_directory::move(const info_hash& h, const std::string& node_name) {
  auto v = table_->view();
  if (!v || !table_->placement_) return "no cluster";
  if (node_name == v->self) return "the swarm is on " + node_name + " already";
  auto node = v->node(node_name);
  if (!node) return "unknown member '" + node_name + "'";
  auto& s = table_->stripe_for(h);
  std::lock_guard<std::mutex> guard(s.mtx);
  if (table_->stopped.load(std::memory_order_acquire)) return "shutting down";
  auto it = s.map.find(h);
  if (it == s.map.end() || it->second.is_remote()) return "no local swarm for this info_hash";
  table_->serve(h, it->second);  // a sleeping swarm moves awake
  auto remote = table_->spawn_remote(h, node_name, node, it->second.local);
  it->second = table::entry::remote_handle(std::move(remote), node_name, node);
  table_->count_local(-1);
  return {};
}

local_swarm_actor swarm_directory::install(const swarm_snapshot& snap) {
  return table_->install_local(snap);
}

void swarm_directory::stop_all() {
  table_->stopped.store(true, std::memory_order_release);
  std::vector<caf::actor> actors;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    actors.reserve(actors.size() + s.map.size());
    for (auto& kv : s.map) {
      if (kv.second.is_dormant())
        table_->release(*kv.second.dormant);
      else
        actors.push_back(caf::actor_cast<caf::actor>(kv.second.handle()));
      if (!kv.second.is_remote()) table_->census_->add_swarms(-1);
    }
    s.map.clear();
  }
  table_->stop_sweeper();
  // Outside the locks: a swarm ending concurrently may need its stripe.
  for (auto& a : actors) {
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  }
  // After the swarms: a swarm crashing meanwhile is not put back (the
  // directory refuses replacements once stopped). The remediation actors
  // monitor the supervisor and end with it.
  if (supervisor_) {
    caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  }
}

}  // namespace sk
