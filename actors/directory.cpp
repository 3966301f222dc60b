#include "actors/directory.hpp"

#include <mutex>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "actors/random.hpp"
#include "actors/swarm_actor.hpp"

namespace sk {

/// The stripes. Swarms hold it by weak_ptr (as `swarm_registry`) to erase
/// their own entry when they end.
class swarm_directory::table final : public swarm_registry {
 public:
  explicit table(std::size_t n) : stripes_(new stripe[n]), count_(n) {}

  struct alignas(64) stripe {  // own cache line: stripes never false-share
    mutable std::mutex mtx;
    std::unordered_map<info_hash, caf::actor, id20_hasher> map;
  };

  stripe& stripe_for(const info_hash& h) const noexcept {
    // id20_hasher's low bits choose the map's bucket; take the stripe from
    // the high half (multiply-shift maps it onto [0, count_) evenly).
    const std::uint64_t hv = id20_hasher{}(h);
    const std::uint64_t hi = hv >> 32;
    return stripes_[static_cast<std::size_t>((hi * count_) >> 32)];
  }
  std::size_t count() const noexcept { return count_; }
  stripe& at(std::size_t i) const noexcept { return stripes_[i]; }

  caf::actor prober() const override { return prober_; }
  /// Set once before the first route (see `swarm_directory::set_prober`).
  caf::actor prober_;

  /// Set (under no lock) before stop_all() visits the stripes; read under a
  /// stripe lock by route(), so a route that takes a stripe after stop_all()
  /// emptied it sees the flag and spawns nothing.
  std::atomic<bool> stopped{false};

  bool erase_if_owner(const info_hash& hash, const caf::actor_addr& swarm) override {
    caf::actor victim;  // released after unlocking
    stripe& s = stripe_for(hash);
    std::lock_guard<std::mutex> guard(s.mtx);
    auto it = s.map.find(hash);
    if (it == s.map.end() || it->second.address() != swarm) {
      return false;
    }
    victim = std::move(it->second);
    s.map.erase(it);
    return true;
  }

  bool replace_if_owner(const info_hash& hash, const caf::actor_addr& dead,
                        const caf::actor& replacement) override {
    caf::actor victim;  // released after unlocking
    stripe& s = stripe_for(hash);
    std::lock_guard<std::mutex> guard(s.mtx);
    auto it = s.map.find(hash);
    if (stopped.load(std::memory_order_acquire) || it == s.map.end() ||
        it->second.address() != dead) {
      return false;
    }
    victim = std::exchange(it->second, replacement);
    return true;
  }

 private:
  std::unique_ptr<stripe[]> stripes_;
  std::size_t count_;
};

namespace {

std::uint64_t random_seed_base() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

swarm_directory::swarm_directory(caf::actor_system& sys, const swarm_config& cfg,
                                 std::size_t stripes)
    : sys_(sys), cfg_(cfg), seed_base_(cfg.rng_seed != 0 ? cfg.rng_seed : random_seed_base()) {
  if (auto err = cfg_.validate(); !err.empty()) {
    throw std::invalid_argument("invalid swarm config: " + err);
  }
  if (stripes == 0) {
    throw std::invalid_argument("swarm directory needs at least one stripe");
  }
  table_ = std::make_shared<table>(stripes);
}

swarm_directory::~swarm_directory() { stop_all(); }

caf::actor swarm_directory::start_supervisor(const supervisor_config& cfg) {
  if (auto err = cfg.validate(); !err.empty()) {
    throw std::invalid_argument("invalid supervisor config: " + err);
  }
  if (!supervisor_) {
    supervisor_ = spawn_supervisor(sys_, cfg, table_);
  }
  return supervisor_;
}

void swarm_directory::set_prober(caf::actor prober) { table_->prober_ = std::move(prober); }

caf::actor swarm_directory::route(const info_hash& h) {
  auto& s = table_->stripe_for(h);
  std::lock_guard<std::mutex> guard(s.mtx);
  if (auto it = s.map.find(h); it != s.map.end()) {
    return it->second;
  }
  if (table_->stopped.load(std::memory_order_acquire)) {
    return {};
  }
  // Seed: reproducible from (rng_seed, info_hash) when configured; otherwise
  // the random base and a spawn counter keep respawned swarms apart.
  std::uint64_t state = seed_base_ ^ id20_hasher {}(h);
  if (cfg_.rng_seed == 0) {
    state += spawned_.fetch_add(1, std::memory_order_relaxed) << 1;
  }
  const std::uint64_t seed = splitmix64(state);
  auto core = std::make_shared<swarm_core>(h, cfg_, seed);
  auto swarm = spawn_swarm(sys_, core, table_, supervisor_);
  if (supervisor_) {
    // Enqueued before the swarm can run a tick, so the supervisor knows it
    // before its first health report (and monitors it before it can crash;
    // a swarm dead already yields a down message at once).
    caf::anon_send(supervisor_, watch_atom::value, h, swarm, std::move(core));
  }
  s.map.emplace(h, swarm);
  return swarm;
}

caf::actor swarm_directory::find(const info_hash& h) const {
  auto& s = table_->stripe_for(h);
  std::lock_guard<std::mutex> guard(s.mtx);
  auto it = s.map.find(h);
  return it != s.map.end() ? it->second : caf::actor{};
}

std::size_t swarm_directory::size() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    n += s.map.size();
  }
  return n;
}

std::vector<std::pair<info_hash, caf::actor>> swarm_directory::snapshot(std::size_t limit) const {
  std::vector<std::pair<info_hash, caf::actor>> out;
  for (std::size_t i = 0; i < table_->count() && out.size() < limit; ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    for (const auto& kv : s.map) {
      if (out.size() >= limit) {
        break;
      }
      out.emplace_back(kv.first, kv.second);
    }
  }
  return out;
}

void swarm_directory::stop_all() {
  table_->stopped.store(true, std::memory_order_release);
  std::vector<caf::actor> swarms;
  for (std::size_t i = 0; i < table_->count(); ++i) {
    auto& s = table_->at(i);
    std::lock_guard<std::mutex> guard(s.mtx);
    swarms.reserve(swarms.size() + s.map.size());
    for (auto& kv : s.map) {
      swarms.push_back(std::move(kv.second));
    }
    s.map.clear();
  }
  // Outside the locks: a swarm ending concurrently may need its stripe.
  for (auto& swarm : swarms) {
    caf::anon_send_exit(swarm, caf::exit_reason::user_shutdown);
  }
  // After the swarms: a swarm crashing meanwhile is not put back (the
  // directory refuses replacements once stopped). The remediation actors
  // monitor the supervisor and end with it.
  if (supervisor_) {
    caf::anon_send_exit(supervisor_, caf::exit_reason::user_shutdown);
  }
}

}  // namespace sk
