// page_allocator: which arrays get pages of their own, that the mapping
// limit sends the rest to the heap, and that a peer table answers the same
// whichever its large arrays got.

#include "tracker/page_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tracker/peer_table.hpp"
#include "test_util.hpp"

namespace sk {
namespace {

using test::at;
using test::pid;

/// Restores the mapping limit when a test ends.
struct limit_guard {
  explicit limit_guard(std::size_t limit) : previous(set_mapping_limit(limit)) {}
  ~limit_guard() { set_mapping_limit(previous); }
  std::size_t previous;
};

constexpr std::size_t large_count = page_array_threshold / sizeof(std::uint64_t);

TEST(PageAllocator, SmallArraysComeFromTheHeapLargeOnesFromPagesOfTheirOwn) {
  const std::size_t before = mapped_arrays();
  const std::size_t before_bytes = mapped_bytes();
  {
    peer_array<std::uint64_t> small(large_count - 1);
    EXPECT_EQ(mapped_arrays(), before);
    peer_array<std::uint64_t> large(large_count);
    EXPECT_EQ(mapped_arrays(), before + 1);
    // Header and array in whole pages.
    EXPECT_GE(mapped_bytes() - before_bytes, page_array_threshold + 64);
    EXPECT_EQ((mapped_bytes() - before_bytes) % 4096, 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(large.data()) % 64, 0u);
  }
  EXPECT_EQ(mapped_arrays(), before);
  EXPECT_EQ(mapped_bytes(), before_bytes);
}

TEST(PageAllocator, GrowingKeepsEveryElementAndGivesTheOldPagesBack) {
  const std::size_t before = mapped_arrays();
  peer_array<std::uint64_t> v;
  for (std::uint64_t i = 0; i < 4 * large_count; ++i) {
    v.push_back(i * 2654435761u);
    // Only the array alive now is mapped: each growth unmapped its
    // predecessor.
    ASSERT_LE(mapped_arrays(), before + 1);
  }
  for (std::uint64_t i = 0; i < v.size(); ++i) {
    ASSERT_EQ(v[i], i * 2654435761u);
  }
  EXPECT_EQ(mapped_arrays(), before + 1);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(mapped_arrays(), before);
}

TEST(PageAllocator, PastTheMappingLimitLargeArraysComeFromTheHeap) {
  const std::size_t before = mapped_arrays();
  const limit_guard guard(before + 1);
  peer_array<std::uint64_t> first(large_count, 7);
  EXPECT_EQ(mapped_arrays(), before + 1);
  peer_array<std::uint64_t> second(large_count, 9);  // over the limit: heap
  EXPECT_EQ(mapped_arrays(), before + 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(second.data()) % 64, 0u);
  second.resize(2 * large_count, 11);
  EXPECT_EQ(second[0], 9u);
  EXPECT_EQ(second[large_count], 11u);
  EXPECT_EQ(first[large_count - 1], 7u);
  // Freeing a heap block and a mapped one each goes back the way it came.
  second = peer_array<std::uint64_t>();
  first = peer_array<std::uint64_t>();
  EXPECT_EQ(mapped_arrays(), before);
}

TEST(PageAllocator, SizeOverflowIsBadAlloc) {
  page_allocator<std::uint64_t> a;
  EXPECT_THROW((void)a.allocate(static_cast<std::size_t>(-1) / 4), std::bad_alloc);
}

/// One table's answers to a fixed run of announces, selections and sweeps.
std::vector<std::string> run_table() {
  peer_table t(42);
  std::vector<std::string> out;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const endpoint ep = test::v4(10, static_cast<std::uint8_t>(i >> 16),
                                 static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i),
                                 static_cast<std::uint16_t>(6881 + i % 7));
    t.announce(pid(i), ep, i % 3 == 0 ? 0 : 100, announce_event::started, at(i % 100));
    if (i % 97 == 0) {
      std::string p4, p6;
      t.select_compact({pid(i), ep.ip}, 50, p4, p6);
      out.push_back(p4);
    }
  }
  while (!t.sweep(at(150), std::chrono::seconds(100), 400).cycle_done) {
  }
  EXPECT_TRUE(t.check_invariants());
  std::string p4, p6;
  t.select_compact({pid(0), test::v4(1, 1, 1, 1, 1).ip}, 200, p4, p6);
  out.push_back(p4);
  out.push_back(std::to_string(t.size()) + " " + std::to_string(t.seeders()));
  return out;
}

TEST(PageAllocator, PeerTableAnswersTheSameOnPagesAndOnTheHeap) {
  const std::size_t before = mapped_arrays();
  std::vector<std::string> mapped;
  {
    // Watch the run: its big arrays are mapped while it lasts.
    peer_table probe(1);
    for (std::uint32_t i = 0; i < 1000; ++i) {
      probe.announce(pid(i), test::v4(10, 0, static_cast<std::uint8_t>(i >> 8),
                                      static_cast<std::uint8_t>(i), 6881),
                     100, announce_event::started, at(0));
    }
    EXPECT_GT(mapped_arrays(), before);
    mapped = run_table();
  }
  std::vector<std::string> heap;
  {
    const limit_guard guard(0);
    heap = run_table();
    EXPECT_EQ(mapped_arrays(), before);
  }
  EXPECT_EQ(mapped, heap);
  // The sweep kept exactly the peers last seen less than 100 s before it.
  std::size_t kept = 0;
  std::size_t kept_seeders = 0;
  for (std::uint32_t i = 0; i < 3000; ++i) {
    if (150 - static_cast<int>(i % 100) < 100) {
      ++kept;
      kept_seeders += i % 3 == 0;
    }
  }
  EXPECT_EQ(mapped.back(), std::to_string(kept) + " " + std::to_string(kept_seeders));
}

}  // namespace
}  // namespace sk
