/// Peer table and allocation micro-benchmarks: the per-announce work of a
/// swarm (tracker/peer_table, tracker/allocation) without CAF or sockets.
///
///   BM_announce_existing/<peers>   what swarm_core does for a re-announce of
///                                  a stored peer: `traits`, `is_seeder`,
///                                  `announce_ex` (three key lookups)
///   BM_select_random/<peers>       allocator::select_compact, 50 peers,
///                                  policy `random`
///   BM_select_adaptive/<peers>     the same under `adaptive` (no health
///                                  report: leechers get seeder-rotation,
///                                  seeders role-aware)
///   BM_table_select/<peers>        peer_table::select_compact, 50 peers (the
///                                  table's own uniform sample)
///   BM_many_swarms                 1000 tables x 200 peers; each iteration
///                                  announces a random peer of a random table
///                                  and selects 50 under `adaptive`: every
///                                  table is cold in cache, as on a tracker
///                                  with many torrents
///
/// `heap_B_per_peer` (BM_announce_existing, BM_many_swarms): what the
/// tables' arrays hold per stored peer (`peer_table::heap_bytes`, capacity
/// included, malloc's own overhead not), a memory figure, not a timing; see
/// bench/memory/README.md for the whole swarm.
///
/// Swarms: 20% seeders, IPv4, peer ids with a shared client prefix (as real
/// ones: "-qB4650-" + 12 random bytes). Requesters are drawn at random from
/// the stored peers, so every iteration touches other records.

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tracker/allocation.hpp"
#include "tracker/health_types.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/random.hpp"
#include "protocol/types.hpp"

namespace {

using namespace sk;

constexpr std::size_t numwant = 50;

struct bench_peer {
  peer_key key;
  endpoint ep;
  std::uint64_t left = 0;
};

peer_id make_id(fast_rng& rng) {
  peer_id id;
  static constexpr char prefix[] = "-qB4650-";
  std::memcpy(id.bytes.data(), prefix, 8);
  for (std::size_t i = 8; i < 20; ++i) {
    id.bytes[i] = static_cast<std::uint8_t>(rng.next());
  }
  return id;
}

/// One swarm: a table filled with `n` peers, its allocator, and the peers.
struct swarm {
  std::unique_ptr<peer_table> table;
  std::unique_ptr<allocator> alloc;
  std::vector<bench_peer> peers;

  swarm(std::uint32_t n, std::uint64_t seed, std::uint32_t addr_base) {
    fast_rng rng(seed);
    table = std::make_unique<peer_table>(seed);
    alloc = std::make_unique<allocator>(allocation_config{}, seed ^ 0xa11c);
    const auto now = peer_table::clock::time_point{} + std::chrono::hours(1);
    peers.reserve(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      bench_peer p;
      p.key.id = make_id(rng);
      p.ep.ip = ip_address::make_v4(addr_base + i);
      p.ep.port = static_cast<std::uint16_t>(1024 + rng.below(60000));
      p.key.ip = p.ep.ip;
      p.left = rng.below(100) < 20 ? 0 : 1000 + rng.below(1000000);
      table->announce(p.key.id, p.ep, p.left, announce_event::started, now);
      peers.push_back(p);
    }
  }
};

/// Random peer numbers, precomputed so the PRNG is not what is measured.
std::vector<std::uint32_t> random_picks(std::uint32_t bound, std::uint64_t seed) {
  fast_rng rng(seed);
  std::vector<std::uint32_t> out(1u << 16);
  for (auto& x : out) {
    x = rng.below(bound);
  }
  return out;
}

void BM_announce_existing(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  swarm s(n, 1, 0x0a000000u);
  const auto picks = random_picks(n, 2);
  auto now = peer_table::clock::time_point{} + std::chrono::hours(2);
  std::size_t k = 0;
  for (auto _ : state) {
    const bench_peer& p = s.peers[picks[k++ & (picks.size() - 1)]];
    peer_traits* known = s.table->traits(p.key);
    const bool seeder = s.table->is_seeder(p.key);
    auto res = s.table->announce_ex(p.key.id, p.ep, p.left, announce_event::none, now);
    benchmark::DoNotOptimize(known);
    benchmark::DoNotOptimize(seeder);
    benchmark::DoNotOptimize(res);
  }
  state.counters["heap_B_per_peer"] =
      static_cast<double>(s.table->heap_bytes()) / static_cast<double>(n);
}

void run_select(benchmark::State& state, policy_kind policy) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  swarm s(n, 3, 0x0a000000u);
  const auto picks = random_picks(n, 4);
  std::string peers4;
  std::string peers6;
  std::size_t k = 0;
  std::size_t returned = 0;
  for (auto _ : state) {
    const bench_peer& p = s.peers[picks[k++ & (picks.size() - 1)]];
    allocation_request req;
    req.requester = p.key;
    req.requester_seeder = p.left == 0;
    req.requester_traits = s.table->traits(p.key);
    req.numwant = numwant;
    peers4.clear();
    peers6.clear();
    returned += s.alloc->select_compact(*s.table, policy, req, nullptr, peers4, peers6);
    benchmark::DoNotOptimize(peers4.data());
  }
  state.counters["peers"] =
      benchmark::Counter(static_cast<double>(returned), benchmark::Counter::kAvgIterations);
}

void BM_select_random(benchmark::State& state) { run_select(state, policy_kind::random); }
void BM_select_adaptive(benchmark::State& state) { run_select(state, policy_kind::adaptive); }

void BM_table_select(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  swarm s(n, 5, 0x0a000000u);
  const auto picks = random_picks(n, 6);
  std::string peers4;
  std::string peers6;
  std::size_t k = 0;
  for (auto _ : state) {
    const bench_peer& p = s.peers[picks[k++ & (picks.size() - 1)]];
    peers4.clear();
    peers6.clear();
    s.table->select_compact(p.key, numwant, peers4, peers6);
    benchmark::DoNotOptimize(peers4.data());
  }
}

void BM_many_swarms(benchmark::State& state) {
  constexpr std::uint32_t tables = 1000;
  constexpr std::uint32_t per_table = 200;
  std::vector<swarm> swarms;
  swarms.reserve(tables);
  for (std::uint32_t t = 0; t < tables; ++t) {
    swarms.emplace_back(per_table, 100 + t, 0x0a000000u + t * per_table);
  }
  const auto table_picks = random_picks(tables, 7);
  const auto peer_picks = random_picks(per_table, 8);
  auto now = peer_table::clock::time_point{} + std::chrono::hours(2);
  std::string peers4;
  std::string peers6;
  std::size_t k = 0;
  for (auto _ : state) {
    const std::size_t j = k++ & (table_picks.size() - 1);
    swarm& s = swarms[table_picks[j]];
    const bench_peer& p = s.peers[peer_picks[j]];
    peer_traits* known = s.table->traits(p.key);
    benchmark::DoNotOptimize(known);
    const bool seeder = s.table->is_seeder(p.key);
    benchmark::DoNotOptimize(seeder);
    auto res = s.table->announce_ex(p.key.id, p.ep, p.left, announce_event::none, now);
    allocation_request req;
    req.requester = p.key;
    req.requester_seeder = p.left == 0;
    req.requester_traits = res.second;
    req.numwant = numwant;
    peers4.clear();
    peers6.clear();
    s.alloc->select_compact(*s.table, policy_kind::adaptive, req, nullptr, peers4, peers6);
    benchmark::DoNotOptimize(peers4.data());
  }
  std::size_t bytes = 0;
  for (const swarm& s : swarms) bytes += s.table->heap_bytes();
  state.counters["heap_B_per_peer"] =
      static_cast<double>(bytes) / static_cast<double>(tables * per_table);
}

}  // namespace

BENCHMARK(BM_announce_existing)->Arg(200)->Arg(10000)->Arg(200000);
BENCHMARK(BM_select_random)->Arg(200)->Arg(10000)->Arg(200000);
BENCHMARK(BM_select_adaptive)->Arg(200)->Arg(10000)->Arg(200000);
BENCHMARK(BM_table_select)->Arg(200)->Arg(10000)->Arg(200000);
BENCHMARK(BM_many_swarms);

BENCHMARK_MAIN();
