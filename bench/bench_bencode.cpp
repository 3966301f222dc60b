// Is a generic bencode encoder slow? swarmkeeper's streaming
// reply encoder against a generic value tree and against libtorrent.
//
//   BM_reply_fast/<peers>        encode_announce_reply into a reused buffer,
//                                peers already stored in compact form
//   BM_reply_generic/<peers>     build a bvalue tree per reply, then encode it
//   BM_reply_libtorrent/<peers>  build an lt::entry per reply, lt::bencode it
//   BM_scrape_{fast,generic,libtorrent}/<torrents>
//   BM_decode_{fast,generic,libtorrent}/<peers>   the same replies, decoded
//   BM_reply_generic_encode_only/<peers>  the generic walk over a prebuilt tree
//   BM_peers_copy/<peers>        the copy a swarm makes before encoding:
//                                selected peers -> the reply's peer string
//   BM_integer_format/<0|1|2>    64 integers: digit pairs, to_chars, snprintf
//
// Every benchmark reports `allocs` (heap allocations per reply, from a
// counting operator new below) and `bytes` (reply size). All three encoders
// write into a buffer reused across iterations, so the differences are the
// encoders' own work, not the output string's growth. That they produce
// identical bytes is proved by tests/protocol (bencode_libtorrent_diff_tests).
//
// Run (see bench/README.md):
//   build/bin/bench_bencode --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "protocol/bencode.hpp"
#include "protocol/bencode_value.hpp"
#include "protocol/reply.hpp"
#include "protocol/reply_value.hpp"

#ifdef SK_HAVE_LIBTORRENT
#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>
#endif

// ---------------------------------------------------------------------------
// Allocation counting. A thread_local plain counter: an atomic add per
// allocation would tax the allocating encoders a little more than the
// allocation itself is taxed, and the benchmarks run on one thread.
// ---------------------------------------------------------------------------

namespace {
thread_local std::uint64_t t_allocations = 0;

void* counted_alloc(std::size_t n) {
  ++t_allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

using sk::announce_reply_view;

/// Per-benchmark counters: allocations and reply size per iteration.
struct alloc_probe {
  explicit alloc_probe(benchmark::State& s) : state(s), start(t_allocations) {}
  void finish(std::size_t reply_bytes) {
    state.counters["allocs"] = benchmark::Counter(static_cast<double>(t_allocations - start),
                                                  benchmark::Counter::kAvgIterations);
    state.counters["bytes"] = static_cast<double>(reply_bytes);
  }
  benchmark::State& state;
  std::uint64_t start;
};

/// A swarm's answer: counts plus N peers, already in compact form (that is
/// how swarmkeeper's peer table keeps them).
struct reply_fixture {
  std::string peers4;
  announce_reply_view view;

  explicit reply_fixture(std::size_t n) {
    std::mt19937_64 rng(n + 1);  // fixed: every run encodes the same bytes
    for (std::size_t i = 0; i < n; ++i) {
      sk::endpoint ep{sk::ip_address::make_v4(static_cast<std::uint32_t>(rng())),
                      static_cast<std::uint16_t>(1024 + rng() % 60000)};
      peers4.append(reinterpret_cast<const char*>(ep.ip.bytes.data()), 4);
      peers4.push_back(static_cast<char>(ep.port >> 8));
      peers4.push_back(static_cast<char>(ep.port & 0xff));
    }
    view.interval = 1800;
    view.min_interval = 900;
    view.stats = {1234, 567, 89012};
    view.peers4 = peers4;
  }
};

struct scrape_fixture {
  std::vector<sk::scrape_entry> entries;
  explicit scrape_fixture(std::size_t n) {
    std::mt19937_64 rng(1000 + n);
    for (std::size_t i = 0; i < n; ++i) {
      std::string h(20, '\0');
      for (char& c : h) c = static_cast<char>(rng());
      entries.push_back(
          {sk::info_hash::from_bytes(h),
           {static_cast<std::int64_t>(rng() % 5000), static_cast<std::int64_t>(rng() % 5000),
            static_cast<std::int64_t>(rng() % 100000)}});
    }
    std::sort(entries.begin(), entries.end(),
              [](const auto& a, const auto& b) { return a.hash < b.hash; });
  }
};

std::string encoded_reply(std::size_t peers) {
  reply_fixture f(peers);
  std::string out;
  sk::encode_announce_reply(out, f.view);
  return out;
}

// ---------------------------------------------------------------------------
// Announce replies
// ---------------------------------------------------------------------------

void BM_reply_fast(benchmark::State& state) {
  reply_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  sk::encode_announce_reply(out, f.view);  // warm: the buffer keeps its capacity
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    sk::encode_announce_reply(out, f.view);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

void BM_reply_generic(benchmark::State& state) {
  reply_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  sk::encode_value(out, sk::announce_reply_value(f.view));
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    const sk::bvalue tree = sk::announce_reply_value(f.view);  // copies the peers
    sk::encode_value(out, tree);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

#ifdef SK_HAVE_LIBTORRENT
/// The reply as an lt::entry, built the way libtorrent's own tracker-side
/// code and most C++ users build one.
lt::entry libtorrent_reply(const announce_reply_view& r) {
  lt::entry e(lt::entry::dictionary_t);
  e["interval"] = r.interval;
  e["min interval"] = r.min_interval;
  e["complete"] = r.stats.complete;
  e["incomplete"] = r.stats.incomplete;
  e["downloaded"] = r.stats.downloaded;
  e["peers"] = std::string(r.peers4);
  return e;
}

void BM_reply_libtorrent(benchmark::State& state) {
  reply_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  lt::bencode(std::back_inserter(out), libtorrent_reply(f.view));
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    const lt::entry e = libtorrent_reply(f.view);
    lt::bencode(std::back_inserter(out), e);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}
#endif

/// The copy a swarm makes before any encoder runs: N selected peers out of
/// the swarm's compact store (here 5000 peers, random slots) into the reply's
/// peer string — grown once, then one fixed 6-byte memcpy per peer, the way
/// tracker/peer_table.cpp does it. The same for all three encoders, so it is
/// measured once, here, rather than inside each of them.
void BM_peers_copy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  reply_fixture store(5000);
  std::mt19937_64 rng(7);
  std::vector<std::uint32_t> slots(n);
  for (auto& s : slots) s = static_cast<std::uint32_t>(rng() % 5000);
  std::string out;
  out.reserve(n * 6);
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    out.resize(n * 6);
    char* w = out.data();
    for (std::uint32_t slot : slots) {
      std::memcpy(w, store.peers4.data() + static_cast<std::size_t>(slot) * 6, 6);
      w += 6;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

/// The generic encoder's walk alone, over a tree built once: separates tree
/// building (BM_reply_generic minus this) from encoding.
void BM_reply_generic_encode_only(benchmark::State& state) {
  reply_fixture f(static_cast<std::size_t>(state.range(0)));
  const sk::bvalue tree = sk::announce_reply_value(f.view);
  std::string out;
  sk::encode_value(out, tree);
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    sk::encode_value(out, tree);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

/// Integer formatting alone: 64 reply-like integers (counts, intervals,
/// ports, a few large) per iteration, three ways: 0 = bencode_writer's
/// digit pairs, 1 = std::to_chars, 2 = snprintf. Time is per 64 integers.
void BM_integer_format(benchmark::State& state) {
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> values(64);
  for (auto& v : values) v = static_cast<std::int64_t>(rng() >> (rng() % 2 ? 50 : 20 + rng() % 44));
  std::string out;
  out.reserve(std::size_t{64} * 24);
  const auto method = state.range(0);
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    if (method == 0) {
      sk::bencode_writer w(out);
      w.list_begin();
      for (std::int64_t v : values) w.integer(v);
      w.list_end();
    } else {
      out.push_back('l');
      for (std::int64_t v : values) {
        char buf[32];
        buf[0] = 'i';
        char* end;
        if (method == 1) {
          end = std::to_chars(buf + 1, buf + sizeof buf, v).ptr;
        } else {
          end = buf + 1 + std::snprintf(buf + 1, sizeof buf - 1, "%lld", static_cast<long long>(v));
        }
        *end++ = 'e';
        out.append(buf, static_cast<std::size_t>(end - buf));
      }
      out.push_back('e');
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

// ---------------------------------------------------------------------------
// Scrape replies
// ---------------------------------------------------------------------------

void BM_scrape_fast(benchmark::State& state) {
  scrape_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  sk::encode_scrape_reply(out, f.entries.data(), f.entries.size());
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    sk::encode_scrape_reply(out, f.entries.data(), f.entries.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

void BM_scrape_generic(benchmark::State& state) {
  scrape_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    const sk::bvalue tree = sk::scrape_reply_value(f.entries.data(), f.entries.size());
    sk::encode_value(out, tree);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}

#ifdef SK_HAVE_LIBTORRENT
void BM_scrape_libtorrent(benchmark::State& state) {
  scrape_fixture f(static_cast<std::size_t>(state.range(0)));
  std::string out;
  alloc_probe probe(state);
  for (auto _ : state) {
    out.clear();
    lt::entry e(lt::entry::dictionary_t);
    lt::entry& files = e["files"];
    files = lt::entry(lt::entry::dictionary_t);
    for (const auto& s : f.entries) {
      lt::entry& t = files[std::string(s.hash.view())];
      t["complete"] = s.stats.complete;
      t["downloaded"] = s.stats.downloaded;
      t["incomplete"] = s.stats.incomplete;
    }
    lt::bencode(std::back_inserter(out), e);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  probe.finish(out.size());
}
#endif

// ---------------------------------------------------------------------------
// Decoding the same announce replies (what a client or a load generator
// does). Each reads interval and peers, so no decoder gets away with less.
// ---------------------------------------------------------------------------

void BM_decode_fast(benchmark::State& state) {
  const std::string reply = encoded_reply(static_cast<std::size_t>(state.range(0)));
  sk::bdecode_document doc;
  (void)sk::bdecode(reply, doc);  // warm the token array
  alloc_probe probe(state);
  for (auto _ : state) {
    const sk::bdecode_result r = sk::bdecode(reply, doc);
    if (!r) state.SkipWithError("decode failed");
    const sk::bdecode_node root = doc.root();
    benchmark::DoNotOptimize(root.dict_find_int("interval"));
    benchmark::DoNotOptimize(root.dict_find_string("peers").data());
  }
  probe.finish(reply.size());
}

void BM_decode_generic(benchmark::State& state) {
  const std::string reply = encoded_reply(static_cast<std::size_t>(state.range(0)));
  sk::bdecode_document doc;
  alloc_probe probe(state);
  for (auto _ : state) {
    if (!sk::bdecode(reply, doc)) state.SkipWithError("decode failed");
    const sk::bvalue tree = sk::to_value(doc.root());
    benchmark::DoNotOptimize(tree.as_dict().at("interval").as_integer());
    benchmark::DoNotOptimize(tree.as_dict().at("peers").as_string().data());
  }
  probe.finish(reply.size());
}

#ifdef SK_HAVE_LIBTORRENT
void BM_decode_libtorrent(benchmark::State& state) {
  const std::string reply = encoded_reply(static_cast<std::size_t>(state.range(0)));
  lt::bdecode_node node;
  lt::error_code ec;
  lt::bdecode(reply.data(), reply.data() + reply.size(), node, ec);  // warm
  alloc_probe probe(state);
  for (auto _ : state) {
    lt::bdecode(reply.data(), reply.data() + reply.size(), node, ec);
    if (ec) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(node.dict_find_int_value("interval"));
    benchmark::DoNotOptimize(node.dict_find_string_value("peers").data());
  }
  probe.finish(reply.size());
}
#endif

void peer_counts(benchmark::internal::Benchmark* b) {
  for (int n : {0, 1, 50, 200, 1000}) b->Arg(n);
}
void torrent_counts(benchmark::internal::Benchmark* b) {
  for (int n : {1, 10, 74}) b->Arg(n);
}

}  // namespace

BENCHMARK(BM_reply_fast)->Apply(peer_counts);
BENCHMARK(BM_reply_generic)->Apply(peer_counts);
#ifdef SK_HAVE_LIBTORRENT
BENCHMARK(BM_reply_libtorrent)->Apply(peer_counts);
#endif
BENCHMARK(BM_reply_generic_encode_only)->Apply(peer_counts);
BENCHMARK(BM_peers_copy)->Apply(peer_counts);
BENCHMARK(BM_integer_format)->Arg(0)->Arg(1)->Arg(2);
BENCHMARK(BM_scrape_fast)->Apply(torrent_counts);
BENCHMARK(BM_scrape_generic)->Apply(torrent_counts);
#ifdef SK_HAVE_LIBTORRENT
BENCHMARK(BM_scrape_libtorrent)->Apply(torrent_counts);
#endif
BENCHMARK(BM_decode_fast)->Apply(peer_counts);
BENCHMARK(BM_decode_generic)->Apply(peer_counts);
#ifdef SK_HAVE_LIBTORRENT
BENCHMARK(BM_decode_libtorrent)->Apply(peer_counts);
#endif

BENCHMARK_MAIN();
