// Proves the TSan stage can see: run.sh builds this with -fsanitize=thread
// against Debian's libcaf_core and runs it twice with tsan_caf_sync
// preloaded and tsan.supp in force, before the tests.
//
//   tsan_selftest clean  a plain thread sends 2000 messages to an actor on
//                        CAF's real scheduler; the actor reads what the
//                        thread wrote before each send, and the actor is
//                        spawned, stopped and freed across threads. Must
//                        report nothing: CAF's mailbox, scheduler and
//                        reference counts are visible to TSan.
//   tsan_selftest racy   the same, plus one counter that the actor writes
//                        while handling the first message and the thread
//                        writes after it saw (through a relaxed atomic, which
//                        orders nothing) that the actor did. No message goes
//                        from the actor to the thread, so nothing orders the
//                        two writes: TSan must report the race on every run.
//                        The preload and the suppressions hide CAF's
//                        internals, not races between our threads.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <caf/all.hpp>

namespace {

struct payload {
  std::vector<int> values;
};

int unguarded = 0;  // the racy mode's shared counter

}  // namespace

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<payload>)

int main(int argc, char** argv) {
  const bool racy = argc > 1 && std::strcmp(argv[1], "racy") == 0;
  constexpr int messages = 2000;
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  std::atomic<int> handled{0};
  std::atomic<long> checksum{0};
  auto reader = sys.spawn([&](caf::event_based_actor*) -> caf::behavior {
    return {[&](const std::shared_ptr<payload>& p) {
      long sum = 0;
      for (int v : p->values) sum += v;
      if (racy && p->values.front() == 0) ++unguarded;
      checksum.fetch_add(sum, std::memory_order_relaxed);
      handled.fetch_add(1, std::memory_order_relaxed);
    }};
  });
  std::thread writer([&] {
    for (int i = 0; i < messages; ++i) {
      auto p = std::make_shared<payload>();
      p->values.assign(64, i);
      caf::anon_send(reader, std::move(p));
      if (racy && i == 0) {
        while (handled.load(std::memory_order_relaxed) == 0) std::this_thread::yield();
        ++unguarded;
      }
    }
  });
  writer.join();
  while (handled.load(std::memory_order_relaxed) < messages)
    std::this_thread::yield();
  caf::anon_send_exit(reader, caf::exit_reason::user_shutdown);
  const long want = 64L * (messages - 1) * messages / 2;
  std::printf("tsan_selftest %s: %d messages, checksum %s\n", racy ? "racy" : "clean", messages,
              checksum.load() == want ? "right" : "WRONG");
  return checksum.load() == want ? 0 : 1;
}
