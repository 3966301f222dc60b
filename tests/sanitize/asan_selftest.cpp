// Proves the ASan + UBSan stage can see: run.sh builds this with the stage's
// flags against Debian's libcaf_core and runs every mode with the stage's
// options and suppression files, before the tests.
//
//   asan_selftest clean        spawns function actors on CAF's real scheduler
//                              (the spawn path UBSan reports inside CAF),
//                              exchanges messages, shuts down. Must report
//                              nothing: the suppressions cover CAF's report
//                              and CAF leaks nothing at exit.
//   asan_selftest overflow     one byte past a heap array: ASan.
//   asan_selftest use-after-free
//                              a read through a freed pointer: ASan.
//   asan_selftest leak         an allocation nobody frees: LSan at exit.
//   asan_selftest overflow-int a signed overflow: UBSan.
//   asan_selftest null-ref     a null std::shared_ptr<int> dereferenced into
//                              a reference: UBSan, in the same libstdc++
//                              operator the CAF suppression names for
//                              std::tuple<> only, so it shows the suppression
//                              stays that narrow.
//
// Each planted bug is in this file, so a suppression or option that hid
// reports from our own code would make its mode pass, and run.sh fails then.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include <caf/all.hpp>

namespace {

// Values the optimiser cannot see through.
volatile int sink = 0;
volatile int array_length = 16;
volatile int big = 0x7fffffff;

int clean() {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  // A function actor without arguments: CAF keeps a null shared_ptr to its
  // empty argument tuple and binds *args_ anyway (see ubsan.supp).
  auto doubler = sys.spawn([]() -> caf::behavior { return {[](int x) { return 2 * x; }}; });
  auto adder = sys.spawn([](caf::event_based_actor* self) -> caf::behavior {
    return {[self](int x) {
      self->send(caf::actor_cast<caf::actor>(self->current_sender()), x + 1);
    }};
  });
  caf::scoped_actor self{sys};
  int answers = 0;
  for (int i = 0; i < 100; ++i) {
    self->send(adder, i);
    self->receive([&](int sum) {
      self->request(doubler, std::chrono::seconds(10), sum)
          .receive([&](int r) { answers += r == 2 * (i + 1) ? 1 : 0; },
                   [](const caf::error&) {});
    });
  }
  self->send_exit(doubler, caf::exit_reason::user_shutdown);
  self->send_exit(adder, caf::exit_reason::user_shutdown);
  std::printf("asan_selftest clean: %d of 100 answers right\n", answers);
  return answers == 100 ? 0 : 1;
}

int overflow() {
  // The length is opaque, so the report comes from ASan's shadow memory and
  // not from UBSan's object-size check.
  const int n = array_length;
  auto* a = new int[n];
  a[n] = 1;
  sink = a[0];
  delete[] a;
  return 0;
}

int use_after_free() {
  auto* p = new std::string("swarmkeeper");
  const char* text = p->c_str();
  delete p;
  sink = text[0];
  return 0;
}

int leak() {
  auto* p = static_cast<int*>(std::malloc(4096));
  p[0] = 1;
  sink = p[0];
  p = nullptr;
  return 0;
}

int overflow_int() {
  int x = big;
  x += 1;
  sink = x;
  return 0;
}

int null_ref() {
  std::shared_ptr<int> p;
  int& r = *p;
  std::printf("%p\n", static_cast<void*>(&r));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "clean") return clean();
  if (mode == "overflow") return overflow();
  if (mode == "use-after-free") return use_after_free();
  if (mode == "leak") return leak();
  if (mode == "overflow-int") return overflow_int();
  if (mode == "null-ref") return null_ref();
  std::fprintf(stderr, "usage: asan_selftest {clean|overflow|use-after-free|leak|overflow-int|null-ref}\n");
  return 2;
}
