/// Where the bytes of a swarm go, measured in one process: the CAF actor
/// floor (stateless, stateful, lazily initialised, the real swarm actor) and
/// the swarm core and its parts (peer table, health tracker, health sample,
/// allocator, config copy, remediation history), per swarm and per peer,
/// and the peer tables' large arrays on pages of their own or on the heap.
///
///   swarm_memory [--swarms=N] [--section=all|actors|domain]
///
/// Each row builds N objects (kept alive together, as a tracker keeps its
/// swarms), then reports the heap in use per object (glibc `mallinfo2()`:
/// `uordblks + hblkhd`, every arena, malloc's chunk headers and rounding
/// included, plus the peer arrays `page_allocator` mapped) and the
/// resident set per object (/proc/self/statm), both as deltas from just
/// before the row. The objects are destroyed before the
/// next row. No timings: memory only. See bench/memory/README.md.

#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "runtime/compact_heap.hpp"
#include "runtime/messages.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/allocation.hpp"
#include "tracker/page_allocator.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/swarm_config.hpp"
#include "tracker/swarm_core.hpp"
#include "tracker/swarm_health.hpp"

namespace {

using namespace sk;
using clock_type = std::chrono::steady_clock;

/// malloc's bytes in use and the peer arrays mapped by page_allocator
/// (malloc does not see those).
std::size_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd + mapped_bytes();
}

std::size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  f >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

/// Heap and RSS now, after handing freed memory back to the OS (so that a
/// row's RSS delta is not hidden by what the previous row freed).
struct mark {
  mark() {
    malloc_trim(0);
    heap = heap_bytes();
    rss = rss_bytes();
  }
  std::size_t heap = 0;
  std::size_t rss = 0;
};

/// The end of a row: no trim (the row's objects are alive).
struct reading {
  std::size_t heap = heap_bytes();
  std::size_t rss = rss_bytes();
};

void row(const char* what, const mark& before, std::size_t n, std::size_t sizeof_bytes = 0) {
  const reading now;
  const double heap = (static_cast<double>(now.heap) - static_cast<double>(before.heap)) /
                      static_cast<double>(n);
  const double rss = (static_cast<double>(now.rss) - static_cast<double>(before.rss)) /
                     static_cast<double>(n);
  if (sizeof_bytes != 0) {
    std::printf("  %-58s %8.0f %8.0f %8zu\n", what, heap, rss, sizeof_bytes);
  } else {
    std::printf("  %-58s %8.0f %8.0f %8s\n", what, heap, rss, "");
  }
  std::fflush(stdout);
}

void header(const char* title, std::size_t n) {
  std::printf("\n%s (%zu objects per row)\n", title, n);
  std::printf("  %-58s %8s %8s %8s\n", "", "heap B", "RSS B", "sizeof");
}

info_hash hash_of(std::uint64_t i) {
  info_hash h{};
  std::uint64_t s = i * 0x9e3779b97f4a7c15ULL + 1;
  for (std::size_t b = 0; b < h.bytes.size(); b += 8) {
    const std::uint64_t w = splitmix64(s);
    for (std::size_t k = 0; k < 8 && b + k < h.bytes.size(); ++k) {
      h.bytes[b + k] = static_cast<std::uint8_t>(w >> (8 * k));
    }
  }
  return h;
}

peer_id peer_of(std::uint64_t i) {
  peer_id p{};
  const char prefix[] = "-SK0001-";
  for (std::size_t k = 0; k < 8; ++k) p.bytes[k] = static_cast<std::uint8_t>(prefix[k]);
  std::uint64_t s = i + 77;
  const std::uint64_t a = splitmix64(s);
  const std::uint64_t b = splitmix64(s);
  for (std::size_t k = 0; k < 8; ++k) p.bytes[8 + k] = static_cast<std::uint8_t>(a >> (8 * k));
  for (std::size_t k = 0; k < 4; ++k) p.bytes[16 + k] = static_cast<std::uint8_t>(b >> (8 * k));
  return p;
}

/// What udp_loadgen's warm-up sends: event=started, a quarter seeders, an
/// 8-hex-digit key, numwant 50.
swarm_announce announce_of(const info_hash& h, std::uint64_t peer, std::uint64_t slot) {
  swarm_announce a;
  a.request.hash = h;
  a.request.id = peer_of(peer);
  a.request.port = static_cast<std::uint16_t>(10000 + slot);
  a.request.left = slot % 4 == 0 ? 0 : 1'000'000;
  a.request.event = announce_event::started;
  a.request.numwant = 50;
  char key[9];
  std::snprintf(key, sizeof key, "%08X", static_cast<unsigned>(peer * 2654435761u));
  a.request.key = key;
  a.peer.ip = ip_address::make_v4(static_cast<std::uint32_t>(0x7f000001));
  a.peer.port = a.request.port;
  return a;
}

const auto t0 = health_time{} + std::chrono::hours(1000);

/// Fills `core` with `peers` peers, then runs one health tick and one whole
/// sweep cycle, as a swarm that has been up for a minute has.
void fill(swarm_core& core, std::uint64_t first_peer, std::size_t peers) {
  announce_result out;
  for (std::size_t p = 0; p < peers; ++p) {
    out = announce_result{};
    core.announce(announce_of(core.hash(), first_peer + p, p), t0, out);
  }
  core.tick(t0 + std::chrono::seconds(60));
  while (!core.sweep(t0 + std::chrono::seconds(60)).cycle_done) {
  }
}

// -- the domain -------------------------------------------------------------------

void domain_rows(std::size_t n) {
  const swarm_config cfg;
  header("swarm_core and its parts, default swarm_config", n);
  {
    std::vector<swarm_config> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(cfg);
    row("swarm_config copy (inline, in a vector)", m, n, sizeof(swarm_config));
  }
  {
    std::vector<std::unique_ptr<swarm_core>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::make_unique<swarm_core>(hash_of(i), cfg, i));
    row("swarm_core, constructed (no announce yet)", m, n, sizeof(swarm_core));
  }
  for (const std::size_t peers : {std::size_t{1}, std::size_t{10}}) {
    std::vector<std::unique_ptr<swarm_core>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) {
      v.push_back(std::make_unique<swarm_core>(hash_of(i), cfg, i));
      fill(*v.back(), i * peers, peers);
    }
    const std::string what = "swarm_core with " + std::to_string(peers) +
                             (peers == 1 ? " peer" : " peers") + ", after a tick and a sweep";
    row(what.c_str(), m, n);
  }
  for (const std::size_t peers : {std::size_t{1}, std::size_t{10}}) {
    // What a sleeping swarm is (swarm_config::hibernate_after): its encoded
    // snapshot in a dormant_swarm, held by shared_ptr as the directory does.
    // On a compact heap of its own, as the directory keeps them (the heap
    // column misses those slabs: read the RSS column).
    std::vector<dormant_ptr> v;
    v.reserve(n);
    const auto core = std::make_unique<swarm_core>(hash_of(0), cfg, 0);
    fill(*core, 0, peers);
    const swarm_snapshot snap = take_snapshot(*core, t0 + std::chrono::seconds(60));
    std::uint32_t raw = 0;
    const std::vector<char> bytes = pack_snapshot(snap, raw);
    const std::size_t packed = bytes.size();
    dormant_swarm made;
    made.bytes.assign(bytes.begin(), bytes.end());
    made.raw_size = raw;
    auto heap = std::make_shared<compact_heap>();
    const mark m;
    for (std::size_t i = 0; i < n; ++i)
      v.push_back(std::allocate_shared<dormant_swarm>(compact_allocator<dormant_swarm>(heap), made,
                                                      heap.get()));
    const std::string what = "dormant swarm with " + std::to_string(peers) +
                             (peers == 1 ? " peer" : " peers") + " (" + std::to_string(raw) +
                             " B before compression, " + std::to_string(packed) + " packed)";
    row(what.c_str(), m, n, sizeof(dormant_swarm));
  }
  {
    const std::size_t swarms = std::max<std::size_t>(1, n / 1000);
    std::vector<std::unique_ptr<swarm_core>> v;
    v.reserve(swarms);
    for (std::size_t i = 0; i < swarms; ++i) {
      v.push_back(std::make_unique<swarm_core>(hash_of(i), cfg, i));
    }
    const mark m;
    for (std::size_t i = 0; i < swarms; ++i) fill(*v[i], i * 1000, 1000);
    const std::string what = "  per peer of " + std::to_string(swarms) +
                             " swarm_cores x 1000 peers (above empty cores)";
    row(what.c_str(), m, swarms * 1000);
  }

  std::printf("\n  parts, each built alone:\n");
  {
    std::vector<std::unique_ptr<peer_table>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::make_unique<peer_table>(i, cfg.max_peers));
    row("peer_table, empty", m, n, sizeof(peer_table));
  }
  for (const std::size_t peers : {std::size_t{1}, std::size_t{10}}) {
    std::vector<std::unique_ptr<peer_table>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) {
      v.push_back(std::make_unique<peer_table>(i, cfg.max_peers));
      for (std::size_t p = 0; p < peers; ++p) {
        const swarm_announce a = announce_of(hash_of(i), i * peers + p, p);
        v.back()->announce(a.request.id, a.peer, a.request.left, a.request.event, t0);
      }
    }
    const std::string what = "peer_table with " + std::to_string(peers) + (peers == 1 ? " peer" : " peers");
    row(what.c_str(), m, n);
  }
  {
    const std::size_t tables = std::max<std::size_t>(1, n / 1000);
    std::vector<std::unique_ptr<peer_table>> v;
    for (std::size_t i = 0; i < tables; ++i) v.push_back(std::make_unique<peer_table>(i, cfg.max_peers));
    const mark m;
    for (std::size_t i = 0; i < tables; ++i) {
      for (std::size_t p = 0; p < 1000; ++p) {
        const swarm_announce a = announce_of(hash_of(i), i * 1000 + p, p);
        v[i]->announce(a.request.id, a.peer, a.request.left, a.request.event, t0);
      }
    }
    row("  per peer of peer_tables x 1000 peers", m, tables * 1000);
  }
  // A tracker's swarms grow together: round robin over the tables, one
  // peer each per round, as a warm-up fills them. On one thread, and on two
  // threads taking turns round by round (as a swarm actor runs on
  // whichever scheduler thread is free, so its arrays grow in several
  // malloc arenas); each with the large arrays on pages of their own (the
  // default) and all on the heap.
  for (const int threads : {1, 2}) {
    for (const bool mapped : {true, false}) {
      const std::size_t tables = std::max<std::size_t>(1, n / 100);
      const std::size_t limit = set_mapping_limit(mapped ? mapping_limit() : 0);
      {
        std::vector<std::unique_ptr<peer_table>> v;
        for (std::size_t i = 0; i < tables; ++i) {
          v.push_back(std::make_unique<peer_table>(i, cfg.max_peers));
        }
        auto round = [&](std::size_t p) {
          for (std::size_t i = 0; i < tables; ++i) {
            const swarm_announce a = announce_of(hash_of(i), i * 1000 + p, p);
            v[i]->announce(a.request.id, a.peer, a.request.left, a.request.event, t0);
          }
        };
        const mark m;
        if (threads == 1) {
          for (std::size_t p = 0; p < 1000; ++p) round(p);
        } else {
          std::atomic<std::size_t> turn{0};
          auto worker = [&](std::size_t first) {
            for (std::size_t p = first; p < 1000; p += 2) {
              while (turn.load(std::memory_order_acquire) != p) std::this_thread::yield();
              round(p);
              turn.store(p + 1, std::memory_order_release);
            }
          };
          std::thread a(worker, 0);
          std::thread b(worker, 1);
          a.join();
          b.join();
        }
        const std::string what = "  per peer of " + std::to_string(tables) + " x 1000 grown together, " +
                                 (threads == 1 ? "1 thread, " : "2 threads, ") +
                                 (mapped ? "large arrays mapped" : "all on the heap");
        row(what.c_str(), m, tables * 1000);
      }
      set_mapping_limit(limit);
    }
  }
  {
    std::vector<std::unique_ptr<swarm_health_tracker>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::make_unique<swarm_health_tracker>(cfg.health));
    row("swarm_health_tracker, constructed (health window)", m, n, sizeof(swarm_health_tracker));
  }
  {
    std::vector<std::unique_ptr<swarm_health_tracker>> v;
    v.reserve(n);
    peer_traits t;
    const mark m;
    for (std::size_t i = 0; i < n; ++i) {
      v.push_back(std::make_unique<swarm_health_tracker>(cfg.health));
      v.back()->on_announce(t, true, false, t0);
      health_sample s = v.back()->make_sample();
      s.add(t, false);
      v.back()->evaluate(s, t0 + std::chrono::seconds(60));
    }
    row("swarm_health_tracker after 1 announce and 1 evaluate", m, n);
  }
  {
    std::vector<std::unique_ptr<health_sample>> v;
    v.reserve(n);
    peer_traits t;
    t.progress = 0.5f;
    const mark m;
    for (std::size_t i = 0; i < n; ++i) {
      v.push_back(std::make_unique<health_sample>(cfg.health.progress_sample_size, i));
      v.back()->add(t, false);
    }
    row("health_sample holding 1 leecher's progress", m, n, sizeof(health_sample));
  }
  {
    const std::size_t samples = std::max<std::size_t>(1, n / 1000);
    std::vector<std::unique_ptr<health_sample>> v;
    peer_traits t;
    t.progress = 0.5f;
    const mark m;
    for (std::size_t i = 0; i < samples; ++i) {
      v.push_back(std::make_unique<health_sample>(cfg.health.progress_sample_size, i));
      for (int p = 0; p < 750; ++p) v.back()->add(t, false);
    }
    row("  health_sample of 750 leechers, per sample / 1000", m, samples * 1000);
  }
  {
    std::vector<std::unique_ptr<allocator>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::make_unique<allocator>(cfg.allocation, i));
    row("allocator", m, n, sizeof(allocator));
  }
  {
    std::vector<std::unique_ptr<std::deque<remediation_record>>> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) v.push_back(std::make_unique<std::deque<remediation_record>>());
    row("std::deque<remediation_record>, empty (history)", m, n, sizeof(std::deque<remediation_record>));
  }
  std::printf("  %-58s %8s %8s %8zu\n", "behaviour_config (per-swarm detector copy)", "", "",
              sizeof(behaviour_config));
  std::printf("  %-58s %8s %8s %8zu\n", "swarm_core_counters", "", "", sizeof(swarm_core_counters));
  std::printf("  %-58s %8s %8s %8zu\n", "health_report (last report)", "", "", sizeof(health_report));
  std::printf("  %-58s %8s %8s %8zu\n", "peer_traits (per peer, handed out)", "", "",
              sizeof(peer_traits));
}

// -- the actors ---------------------------------------------------------------------

struct empty_state {
  static inline const char* name = "bench.empty";
};

struct small_state {
  static inline const char* name = "bench.small";
  std::uint64_t counter = 0;
  std::shared_ptr<int> core;
};

caf::behavior stateless_actor(caf::event_based_actor*) {
  return {[](caf::get_atom) { return 1; }, [](caf::put_atom, int x) { return x; }};
}

caf::behavior empty_stateful(caf::stateful_actor<empty_state>*) {
  return {[](caf::get_atom) { return 1; }, [](caf::put_atom, int x) { return x; }};
}

caf::behavior small_stateful(caf::stateful_actor<small_state>* self) {
  return {[self](caf::get_atom) { return ++self->state.counter; },
          [](caf::put_atom, int x) { return x; }};
}

/// The swarm actor's state type with a two-handler behavior (no timers).
caf::behavior swarm_state_actor(caf::stateful_actor<swarm_state>*) {
  return {[](caf::get_atom) { return 1; }, [](caf::put_atom, int x) { return x; }};
}

// 24 handlers, about as many as the swarm actor has (its interface plus its
// own handlers); distinct atoms, so no two cases are alike.
#define SK_BENCH_ATOMS(X) X(h01) X(h02) X(h03) X(h04) X(h05) X(h06) X(h07) X(h08) \
  X(h09) X(h10) X(h11) X(h12) X(h13) X(h14) X(h15) X(h16) X(h17) X(h18) X(h19) X(h20) X(h21) X(h22)
#define SK_BENCH_ATOM_TYPE(a) using a##_atom = caf::atom_constant<caf::atom(#a)>;
SK_BENCH_ATOMS(SK_BENCH_ATOM_TYPE)
#define SK_BENCH_HANDLER(a) [self](a##_atom, int x) { self->state.counter += static_cast<unsigned>(x); },

caf::behavior many_handlers(caf::stateful_actor<small_state>* self) {
  return {SK_BENCH_ATOMS(SK_BENCH_HANDLER)[self](caf::get_atom) { return ++self->state.counter; },
          [](caf::put_atom, int x) { return x; }};
}

/// Two handlers and two delayed messages to itself pending (the swarm
/// actor keeps a sweep and a health tick pending at all times).
caf::behavior with_timers(caf::stateful_actor<small_state>* self) {
  self->delayed_send(self, std::chrono::hours(1), caf::get_atom::value);
  self->delayed_send(self, std::chrono::hours(1), caf::tick_atom::value);
  return {[self](caf::get_atom) { return ++self->state.counter; },
          [](caf::tick_atom) {}};
}

/// One behavior object shared by every actor (its one handler captures
/// nothing), and every other message to one default handler, a plain
/// function that gets the actor as an argument and would dispatch by hand.
caf::result<caf::message> shared_handler(caf::scheduled_actor* self, caf::message_view& m) {
  auto* typed = static_cast<caf::stateful_actor<small_state>*>(self);
  ++typed->state.counter;
  (void)m;
  return caf::message{};
}

caf::behavior no_behavior(caf::stateful_actor<small_state>* self) {
  static const caf::behavior shared{[](caf::ok_atom) {}};
  self->set_default_handler(shared_handler);
  return shared;
}

void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(1500)); }

void stop_all(caf::actor_system& sys, std::vector<caf::actor>& v) {
  for (auto& a : v) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
  v.clear();
  sys.await_all_actors_done();
  malloc_trim(0);
}

template <class Spawn>
void actor_row(caf::actor_system& sys, const char* what, std::size_t n, Spawn&& spawn,
               bool poke = false) {
  std::vector<caf::actor> v;
  v.reserve(n);
  const mark m;
  for (std::size_t i = 0; i < n; ++i) v.push_back(spawn(i));
  if (poke) {
    for (auto& a : v) caf::anon_send(a, caf::put_atom::value, 1);
  }
  settle();
  row(what, m, n);
  stop_all(sys, v);
}

void actor_rows(std::size_t n) {
  caf::actor_system_config cfg;
  register_message_types(cfg);
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  header("CAF 0.17.6 actors (idle, after start-up)", n);
  actor_row(sys, "event-based, no state, 2 handlers", n,
            [&](std::size_t) { return sys.spawn(stateless_actor); });
  actor_row(sys, "  same, spawn<lazy_init> (never started)", n,
            [&](std::size_t) { return sys.spawn<caf::lazy_init>(stateless_actor); });
  actor_row(sys, "  same, spawn<lazy_init>, after one message", n,
            [&](std::size_t) { return sys.spawn<caf::lazy_init>(stateless_actor); }, true);
  actor_row(sys, "  same, spawn<hidden>", n,
            [&](std::size_t) { return sys.spawn<caf::hidden>(stateless_actor); });
  actor_row(sys, "stateful_actor<empty state>, 2 handlers", n,
            [&](std::size_t) { return sys.spawn(empty_stateful); });
  actor_row(sys, "stateful_actor<16-byte state>, 2 handlers", n,
            [&](std::size_t) { return sys.spawn(small_stateful); });
  actor_row(sys, "  same, spawn<lazy_init> (never started)", n,
            [&](std::size_t) { return sys.spawn<caf::lazy_init>(small_stateful); });
  actor_row(sys, "  same, 24 handlers", n, [&](std::size_t) { return sys.spawn(many_handlers); });
  actor_row(sys, "  same, 2 handlers + 2 delayed_send pending", n,
            [&](std::size_t) { return sys.spawn(with_timers); });
  actor_row(sys, "  same, one shared behavior + a default handler", n,
            [&](std::size_t) { return sys.spawn(no_behavior); });
  actor_row(sys, "stateful_actor<swarm_state>, 2 handlers", n,
            [&](std::size_t) { return sys.spawn(swarm_state_actor); });

  const swarm_config scfg;
  {
    std::vector<swarm_core_ptr> cores;
    cores.reserve(n);
    for (std::size_t i = 0; i < n; ++i) cores.push_back(std::make_shared<swarm_core>(hash_of(i), scfg, i));
    actor_row(sys, "swarm actor on an existing empty core (behavior, 2 timers)", n,
              [&](std::size_t i) { return caf::actor_cast<caf::actor>(spawn_swarm(sys, cores[i])); });
  }
  {
    std::vector<caf::actor> v;
    v.reserve(n);
    const mark m;
    for (std::size_t i = 0; i < n; ++i) {
      auto core = std::make_shared<swarm_core>(hash_of(i), scfg, i);
      fill(*core, i, 1);
      v.push_back(caf::actor_cast<caf::actor>(spawn_swarm(sys, std::move(core))));
    }
    settle();
    row("swarm actor + its core with 1 peer (what one swarm costs)", m, n);
    stop_all(sys, v);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 100000;
  std::string section = "all";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--swarms=", 0) == 0) {
      n = std::strtoull(a.c_str() + 9, nullptr, 10);
    } else if (a.rfind("--section=", 0) == 0) {
      section = a.substr(10);
    } else {
      std::fprintf(stderr, "usage: swarm_memory [--swarms=N] [--section=all|actors|domain]\n");
      return 2;
    }
  }
  if (n == 0 || (section != "all" && section != "actors" && section != "domain")) {
    std::fprintf(stderr, "usage: swarm_memory [--swarms=N] [--section=all|actors|domain]\n");
    return 2;
  }
  std::printf("swarm_memory: %zu objects per row; heap = mallinfo2 uordblks + hblkhd + mapped peer arrays, delta per object\n", n);
  if (section != "actors") domain_rows(n);
  if (section != "domain") actor_rows(n);
  return 0;
}
