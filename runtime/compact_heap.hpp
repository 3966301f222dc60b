#pragma once
/// A memory resource for the many small objects that outlive the swarm
/// actors around them: the directory's entries and the data of sleeping
/// swarms. Kept apart from malloc's arenas on purpose: a swarm actor, its
/// core and its peers are allocated next to its directory entry, so once
/// the actor ends (its swarm went to sleep) malloc's pages each still hold
/// an entry or a sleeping swarm and none can be given back; here they sit
/// densely in slabs of their own, and the actors' pages come free whole.
///
/// Blocks of 16-byte size classes up to `largest` bytes, carved from
/// 1 MiB slabs mapped on their own (each slab serves one class; its header
/// counts the blocks in use); a slab whose last block is freed is unmapped
/// (one empty slab per class is kept against churn, its pages given back).
/// Requests of `page_array_threshold` (64 KiB) or more get pages of their
/// own (tracker/page_allocator.hpp: given back the moment they are freed,
/// as the directory's tables are when a stripe grows, and the data of a
/// sleeping swarm that large when it wakes; within that allocator's bound
/// on mappings, past which they come from the heap); other requests
/// larger than `largest`, or aligned above 16, go to `operator new`.
/// Thread-safe (one mutex: the callers allocate on misses, sleeps and
/// wakes, not per announce); pages are given back outside it.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <utility>

namespace sk {

class compact_heap final : public std::pmr::memory_resource {
 public:
  static constexpr std::size_t step = 16;
  static constexpr std::size_t largest = 4096;
  static constexpr std::size_t slab_bytes = std::size_t{1} << 20;

  compact_heap() = default;
  /// Unmaps every slab (whatever still points into them must be gone).
  ~compact_heap() override;
  compact_heap(const compact_heap&) = delete;
  compact_heap& operator=(const compact_heap&) = delete;

  /// Bytes in blocks handed out now (size classes, not requests).
  std::size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  /// Slabs mapped now.
  std::size_t slabs() const noexcept { return slabs_.load(std::memory_order_relaxed); }

 private:
  struct slab;
  static constexpr std::size_t classes = largest / step;

  void* do_allocate(std::size_t bytes, std::size_t alignment) override;
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override;
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }

  static std::size_t class_of(std::size_t bytes) noexcept { return (bytes + step - 1) / step - 1; }
  slab* map_slab(std::size_t cls);
  /// Takes `s` off the list of every slab (the caller unmaps it).
  void forget_slab(slab* s) noexcept;
  void unlink(slab* s) noexcept;
  void push_front(slab* s) noexcept;

  std::mutex mtx_;
  /// Per class: slabs with a free block (doubly linked through headers).
  std::array<slab*, classes> partial_{};
  /// Per class: one empty slab kept mapped.
  std::array<slab*, classes> spare_{};
  /// Every slab mapped, linked (for the destructor).
  slab* all_ = nullptr;
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> slabs_{0};
};

/// A standard allocator on a shared `compact_heap` that keeps the heap
/// alive: given to `std::allocate_shared`, the object's control block holds
/// the heap for as long as any reference to the object lives.
template <class T>
struct compact_allocator {
  using value_type = T;
  std::shared_ptr<compact_heap> heap;

  explicit compact_allocator(std::shared_ptr<compact_heap> h) noexcept : heap(std::move(h)) {}
  template <class U>
  compact_allocator(const compact_allocator<U>& other) noexcept : heap(other.heap) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(heap->allocate(n * sizeof(T), alignof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { heap->deallocate(p, n * sizeof(T), alignof(T)); }
  template <class U>
  bool operator==(const compact_allocator<U>& o) const noexcept {
    return heap == o.heap;
  }
  template <class U>
  bool operator!=(const compact_allocator<U>& o) const noexcept {
    return heap != o.heap;
  }
};

}  // namespace sk
