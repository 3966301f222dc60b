// compact_heap: blocks by 16-byte classes in slabs of their own; a slab
// whose last block is freed is given back (one spare per class kept).

#include "runtime/compact_heap.hpp"

#include "runtime/swarm_actor.hpp"
#include "tracker/page_allocator.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace sk {
namespace {

TEST(CompactHeap, BlocksKeepTheirBytesAndSlabsComeBackWhenEmpty) {
  compact_heap heap;
  struct block {
    char* p;
    std::size_t n;
    unsigned char fill;
  };
  std::vector<block> blocks;
  std::mt19937 rng(7);
  // 3 size classes, enough blocks of each for several slabs.
  for (int i = 0; i < 30000; ++i) {
    const std::size_t n = (i % 3 == 0) ? 40 : (i % 3 == 1) ? 400 : 1000;
    auto* p = static_cast<char*>(heap.allocate(n, 8));
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    const auto fill = static_cast<unsigned char>(rng());
    std::memset(p, fill, n);
    blocks.push_back({p, n, fill});
  }
  EXPECT_EQ(heap.in_use(), 10000u * (48 + 400 + 1008));
  const std::size_t mapped = heap.slabs();
  // 1000-byte class: 10,000 x 1008 B in 1 MiB slabs is at least 10 slabs.
  EXPECT_GE(mapped, 10u + 4u + 1u);
  // Free every other block: nothing overwritten, no slab empties.
  for (std::size_t i = 0; i < blocks.size(); i += 2) heap.deallocate(blocks[i].p, blocks[i].n, 8);
  for (std::size_t i = 1; i < blocks.size(); i += 2)
    for (std::size_t k = 0; k < blocks[i].n; ++k)
      ASSERT_EQ(static_cast<unsigned char>(blocks[i].p[k]), blocks[i].fill) << i;
  // Reuse: as many again fit without a new slab.
  std::vector<block> again;
  for (std::size_t i = 0; i < blocks.size(); i += 2) {
    again.push_back({static_cast<char*>(heap.allocate(blocks[i].n, 8)), blocks[i].n, 0});
  }
  EXPECT_EQ(heap.slabs(), mapped);
  for (auto& b : again) heap.deallocate(b.p, b.n, 8);
  for (std::size_t i = 1; i < blocks.size(); i += 2) heap.deallocate(blocks[i].p, blocks[i].n, 8);
  EXPECT_EQ(heap.in_use(), 0u);
  // Everything freed: one spare slab per class used stays mapped.
  EXPECT_EQ(heap.slabs(), 3u);
}

TEST(CompactHeap, LargeOrOverAlignedRequestsGoToOperatorNew) {
  compact_heap heap;
  void* big = heap.allocate(compact_heap::largest + 1, 8);
  void* aligned = heap.allocate(64, 64);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 64, 0u);
  std::memset(big, 1, compact_heap::largest + 1);
  EXPECT_EQ(heap.slabs(), 0u);
  EXPECT_EQ(heap.in_use(), 0u);
  heap.deallocate(big, compact_heap::largest + 1, 8);
  heap.deallocate(aligned, 64, 64);
}

TEST(CompactHeap, AnAllocatorOnItKeepsTheHeapAliveForSharedObjects) {
  std::shared_ptr<std::vector<int>> kept;
  {
    auto heap = std::make_shared<compact_heap>();
    kept = std::allocate_shared<std::vector<int>>(compact_allocator<std::vector<int>>(heap), 3, 7);
    EXPECT_EQ(heap.use_count(), 2);
    EXPECT_EQ(heap->slabs(), 1u);
  }
  // The control block holds the heap: the object is still readable.
  ASSERT_EQ(kept->size(), 3u);
  EXPECT_EQ((*kept)[2], 7);
  kept.reset();
}

TEST(CompactHeap, ASleepingSwarmCopiedOntoItKeepsItsBytesThere) {
  auto heap = std::make_shared<compact_heap>();
  dormant_swarm made;
  made.bytes.assign(300, 'x');
  made.raw_size = 900;
  made.peers = 3;
  auto kept =
      std::allocate_shared<dormant_swarm>(compact_allocator<dormant_swarm>(heap), made, heap.get());
  // The object with its control block, and its 300 bytes (a 304-byte block).
  EXPECT_GE(heap->in_use(), 304u + sizeof(dormant_swarm));
  EXPECT_EQ(kept->bytes.get_allocator().resource(), heap.get());
  EXPECT_EQ(kept->bytes.size(), 300u);
  EXPECT_EQ(kept->raw_size, 900u);
  EXPECT_EQ(kept->peers, 3u);
  kept.reset();
  EXPECT_EQ(heap->in_use(), 0u);
}

TEST(CompactHeap, LargeBlocksGetPagesOfTheirOwnGivenBackWhenFreed) {
  compact_heap heap;
  const std::size_t before = mapped_arrays();
  // A stripe's table past 64 KiB: pages of its own, not the arena's.
  void* big = heap.allocate(page_array_threshold, 64);
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(big) % 64, 0u);
  std::memset(big, 0x5a, page_array_threshold);
  EXPECT_EQ(mapped_arrays(), before + 1);
  // Below the threshold (and above the slab classes): the ordinary heap.
  void* mid = heap.allocate(page_array_threshold - 64, 16);
  EXPECT_EQ(mapped_arrays(), before + 1);
  EXPECT_EQ(heap.slabs(), 0u);
  heap.deallocate(mid, page_array_threshold - 64, 16);
  heap.deallocate(big, page_array_threshold, 64);
  EXPECT_EQ(mapped_arrays(), before);
}

}  // namespace
}  // namespace sk
