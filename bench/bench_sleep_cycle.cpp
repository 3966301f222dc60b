/// What a quiet swarm's sleep and wake cost in the directory's codec
/// (runtime/swarm_snapshot): the steps that turn a running swarm's core into
/// the bytes it sleeps as and back, for swarms of a few peers (most of a
/// public tracker's). The actor's own end and spawn and the supervisor's
/// messages come on top; bench/memory/README.md ("Live load") has the
/// daemon's whole figure.
///
///   BM_take_snapshot/<peers>   take_snapshot: the core copied out
///   BM_encode/<peers>          encode_snapshot: CAF's binary serializer
///   BM_pack/<peers>            pack_snapshot: the sleeping form, zstd-compressed
///   BM_unpack/<peers>          unpack_snapshot: decompress, then decode
///   BM_fill/<peers>            a fresh core filled from the snapshot
///
/// Counters (memory, not time): `record_B`, the snapshot as a state file
/// record (`encode_snapshot`); `raw_B` and `packed_B`, the sleeping form
/// before and after compression.
/// Peers as udp_loadgen makes them: a shared client prefix and 12 random
/// bytes of id, an 8-hex-digit key, a quarter seeders, IPv4.

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "runtime/swarm_snapshot.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"

namespace {

using namespace sk;

/// A core of `peers` peers that each announced once.
std::unique_ptr<swarm_core> make_core(int peers, health_time now) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(peers) + 1);
  info_hash h;
  for (auto& b : h.bytes) b = static_cast<std::uint8_t>(rng());
  auto core = std::make_unique<swarm_core>(h, swarm_config{}, 7);
  for (int i = 0; i < peers; ++i) {
    swarm_announce a;
    a.request.hash = h;
    std::memcpy(a.request.id.bytes.data(), "-SK0001-", 8);
    for (std::size_t k = 8; k < 20; ++k) a.request.id.bytes[k] = static_cast<std::uint8_t>(rng());
    a.request.port = static_cast<std::uint16_t>(10000 + i);
    a.request.left = i % 4 == 0 ? 0 : 1000000;
    a.request.numwant = 50;
    a.request.event = announce_event::started;
    char key[9];
    std::snprintf(key, sizeof key, "%08X", static_cast<unsigned>(rng()));
    a.request.key = key;
    a.peer.ip = ip_address::make_v4(0x0a000000u + static_cast<std::uint32_t>(rng() & 0xffffff));
    a.peer.port = a.request.port;
    announce_result r;
    core->announce(a, now, r);
  }
  return core;
}

void sizes(benchmark::State& state, const swarm_snapshot& s) {
  std::uint32_t raw = 0;
  const std::vector<char> packed = pack_snapshot(s, raw);
  state.counters["record_B"] = static_cast<double>(encode_snapshot(s).size());
  state.counters["raw_B"] = raw;
  state.counters["packed_B"] = static_cast<double>(packed.size());
}

void BM_take_snapshot(benchmark::State& state) {
  const auto now = health_clock::now();
  const auto core = make_core(static_cast<int>(state.range(0)), now);
  for (auto _ : state) benchmark::DoNotOptimize(take_snapshot(*core, now));
}

void BM_encode(benchmark::State& state) {
  const auto now = health_clock::now();
  const swarm_snapshot s = take_snapshot(*make_core(static_cast<int>(state.range(0)), now), now);
  for (auto _ : state) benchmark::DoNotOptimize(encode_snapshot(s));
  sizes(state, s);
}

void BM_pack(benchmark::State& state) {
  const auto now = health_clock::now();
  const swarm_snapshot s = take_snapshot(*make_core(static_cast<int>(state.range(0)), now), now);
  std::uint32_t raw = 0;
  for (auto _ : state) benchmark::DoNotOptimize(pack_snapshot(s, raw));
  sizes(state, s);
}

void BM_unpack(benchmark::State& state) {
  const auto now = health_clock::now();
  const swarm_snapshot s = take_snapshot(*make_core(static_cast<int>(state.range(0)), now), now);
  std::uint32_t raw = 0;
  const std::vector<char> packed = pack_snapshot(s, raw);
  swarm_snapshot out;
  for (auto _ : state) {
    if (!unpack_snapshot(packed, raw, out)) {
      state.SkipWithError("the packed snapshot does not unpack");
      return;
    }
    benchmark::DoNotOptimize(out.peers.data());
  }
  sizes(state, s);
}

void BM_fill(benchmark::State& state) {
  const auto now = health_clock::now();
  const auto core = make_core(static_cast<int>(state.range(0)), now);
  const swarm_snapshot s = take_snapshot(*core, now);
  for (auto _ : state) {
    swarm_core fresh(core->hash(), swarm_config{}, 11);
    fill_snapshot(fresh, s, now);
    benchmark::DoNotOptimize(fresh.table().size());
  }
}

}  // namespace

BENCHMARK(BM_take_snapshot)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(BM_encode)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(BM_pack)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(BM_unpack)->Arg(1)->Arg(10)->Arg(100);
BENCHMARK(BM_fill)->Arg(1)->Arg(10)->Arg(100);

BENCHMARK_MAIN();
