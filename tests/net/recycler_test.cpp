// block_recycler and make_recycled (tracker/recycler.hpp): freed blocks come
// back to the next allocation of their size, from whichever thread freed
// them; the parked count is bounded; objects are built and destroyed as by
// make_shared.

#include "tracker/recycler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace sk {
namespace {

// Sizes no other code of the daemon uses, one per test: each test starts
// with an empty recycler of its own.
using rec_a = block_recycler<16 * 61>;
using rec_b = block_recycler<16 * 62>;
using rec_c = block_recycler<16 * 63>;
using rec_d = block_recycler<16 * 64>;

TEST(Recycler, AFreedBlockIsTheNextOneTaken) {
  void* p = rec_a::take();
  std::memset(p, 0xab, 16 * 61);  // the whole block is usable
  rec_a::give(p);
  EXPECT_EQ(rec_a::parked(), 1u);
  EXPECT_EQ(rec_a::take(), p);
  EXPECT_EQ(rec_a::parked(), 0u);
  void* q = rec_a::take();  // nothing parked: a fresh block
  EXPECT_NE(q, p);
  rec_a::give(p);
  rec_a::give(q);
  EXPECT_EQ(rec_a::parked(), 2u);
}

TEST(Recycler, BlocksFreedOnAnotherThreadComeBack) {
  std::vector<void*> mine;
  for (int i = 0; i < 100; ++i) mine.push_back(rec_b::take());
  std::thread freer([&] {
    for (void* p : mine) rec_b::give(p);
  });
  freer.join();
  EXPECT_EQ(rec_b::parked(), 100u);
  std::set<void*> again;
  for (int i = 0; i < 100; ++i) again.insert(rec_b::take());
  EXPECT_EQ(again, std::set<void*>(mine.begin(), mine.end()));
  EXPECT_EQ(rec_b::parked(), 0u);
  for (void* p : again) rec_b::give(p);
}

TEST(Recycler, AThreadThatEndsHandsItsBlocksBack) {
  std::vector<void*> blocks;
  for (int i = 0; i < 10; ++i) blocks.push_back(rec_c::take());
  for (void* p : blocks) rec_c::give(p);
  // Another thread takes the whole shared list into its own, uses one
  // block and ends with nine on its list: they return to the shared one.
  std::thread taker([] { rec_c::give(rec_c::take()); });
  taker.join();
  EXPECT_EQ(rec_c::parked(), 10u);
  std::set<void*> again;
  for (int i = 0; i < 10; ++i) again.insert(rec_c::take());
  EXPECT_EQ(again, std::set<void*>(blocks.begin(), blocks.end()));
  for (void* p : again) rec_c::give(p);
}

TEST(Recycler, ParksAtMostItsBoundAndFreesTheRest) {
  const std::size_t n = rec_d::max_parked + 100;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < n; ++i) blocks.push_back(rec_d::take());
  for (void* p : blocks) rec_d::give(p);
  EXPECT_EQ(rec_d::parked(), rec_d::max_parked);
}

TEST(Recycler, ManyThreadsTakeAndGiveConcurrently) {
  // Two producers free what a consumer allocated, while the consumer keeps
  // allocating: every block is handed out to one owner at a time (each
  // owner writes its mark and checks it is still there before freeing).
  using rec = block_recycler<16 * 65>;
  constexpr int rounds = 20000;
  std::atomic<void*> slots[2] = {nullptr, nullptr};
  std::atomic<bool> done{false};
  std::atomic<int> corrupt{0};
  std::vector<std::thread> freers;
  for (int k = 0; k < 2; ++k) {
    freers.emplace_back([&, k] {
      for (;;) {
        void* p = slots[k].exchange(nullptr, std::memory_order_acq_rel);
        if (p == nullptr) {
          if (done.load()) break;
          std::this_thread::yield();
          continue;
        }
        if (*static_cast<int*>(p) != k + 1) ++corrupt;
        rec::give(p);
      }
    });
  }
  for (int i = 0; i < rounds; ++i) {
    const int k = i % 2;
    void* p = rec::take();
    *static_cast<int*>(p) = k + 1;
    void* expected = nullptr;
    while (!slots[k].compare_exchange_weak(expected, p, std::memory_order_acq_rel)) {
      expected = nullptr;
      std::this_thread::yield();
    }
  }
  done = true;
  for (auto& t : freers) t.join();
  EXPECT_EQ(corrupt.load(), 0);
}

struct counted {
  static int alive;
  explicit counted(int v) : value(v) { ++alive; }
  ~counted() { --alive; }
  int value;
  char pad[200] = {};
};
int counted::alive = 0;

TEST(Recycler, MakeRecycledBuildsDestroysAndReusesTheBlock) {
  const void* first = nullptr;
  {
    auto p = make_recycled<counted>(7);
    EXPECT_EQ(p->value, 7);
    EXPECT_EQ(counted::alive, 1);
    first = p.get();
    std::weak_ptr<counted> w = p;
    p.reset();
    EXPECT_EQ(counted::alive, 0);
    EXPECT_TRUE(w.expired());
  }  // the weak reference let go: the block is parked
  auto again = make_recycled<counted>(8);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(again->value, 8);
}

}  // namespace
}  // namespace sk
