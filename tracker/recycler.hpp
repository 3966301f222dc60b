#pragma once
/// Blocks of one size that go round between threads: what a request's
/// reply and its swarm ticket are made of, and a swarm's core.
///
/// A network thread makes a reply and a ticket for every request; the swarm
/// that answers it frees them on a scheduler thread. (A swarm's core goes
/// the same way: made by the request that creates or wakes the swarm, freed
/// on a scheduler thread when it falls asleep or ends.) malloc's per-thread
/// caches do not help with that pattern (the allocating thread's cache runs
/// dry, the freeing thread's overflows), so every such block took malloc's
/// arena lock twice, and a thread that holds that lock for long (the
/// daemon's heap trim, which walks an arena's free memory under it) held up
/// the network thread with it.
///
/// `block_recycler<Size>` parks freed blocks on one lock-free list per size
/// (any thread pushes one block; a thread that runs out takes the whole
/// list at once into a list of its own, so no block is popped from the
/// shared list alone and the list has no ABA problem). Blocks are taken
/// from the thread's own list first, malloc's only when both are empty; at
/// most `max_parked` blocks wait, the rest go back to malloc. A thread that
/// ends hands its own list back. The lists live as long as the process.
///
/// Under AddressSanitizer a parked block is poisoned past its link, so a
/// use after free into it is still reported.
///
/// `recycling_allocator<T>` hands single objects out of the recycler of
/// their size (arrays go to `std::allocator`): for `std::allocate_shared`,
/// which puts the control block and the object in one such block.

#include <atomic>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SK_RECYCLER_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define SK_RECYCLER_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SK_RECYCLER_POISON(p, n) ((void)(p), (void)(n))
#define SK_RECYCLER_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace sk {

template <std::size_t Size>
class block_recycler {
  static_assert(Size >= sizeof(void*) && Size % alignof(std::max_align_t) == 0,
                "a block holds its link and keeps operator new's alignment");

 public:
  /// Blocks parked at most (for each size); about `max_parked * Size` bytes
  /// stay with the recycler after a burst instead of going back to malloc.
  static constexpr std::size_t max_parked = 1024;

  /// A block of `Size` bytes (operator new's alignment).
  static void* take() {
    local& l = mine();
    if (l.head == nullptr) l.head = shared().head.exchange(nullptr, std::memory_order_acquire);
    node* n = l.head;
    if (n == nullptr) return ::operator new(Size);
    SK_RECYCLER_UNPOISON(n, Size);
    l.head = n->next;
    shared().parked.fetch_sub(1, std::memory_order_relaxed);
    return n;
  }

  /// Takes back a block `take` returned, from any thread.
  static void give(void* p) noexcept {
    pool& s = shared();
    if (s.parked.load(std::memory_order_relaxed) >= max_parked) {
      ::operator delete(p);
      return;
    }
    s.parked.fetch_add(1, std::memory_order_relaxed);
    node* n = ::new (p) node;
    // Before the block is on the list: from then on another thread may take
    // it.
    SK_RECYCLER_POISON(reinterpret_cast<char*>(n) + sizeof(node), Size - sizeof(node));
    push(s, n, n);
  }

  /// Blocks parked now (approximate while other threads take and give).
  static std::size_t parked() noexcept { return shared().parked.load(std::memory_order_relaxed); }

 private:
  struct node {
    node* next = nullptr;
  };
  struct pool {
    std::atomic<node*> head{nullptr};
    std::atomic<std::size_t> parked{0};
  };
  /// A thread's own list, taken whole from the shared one.
  struct local {
    node* head = nullptr;
    ~local() {
      if (head == nullptr) return;
      // Its blocks are poisoned past their links already.
      node* tail = head;
      while (tail->next != nullptr) tail = tail->next;
      push(shared(), head, tail);
    }
  };

  /// Links [first .. last] in front of the shared list.
  static void push(pool& s, node* first, node* last) noexcept {
    node* old = s.head.load(std::memory_order_relaxed);
    do {
      last->next = old;
    } while (!s.head.compare_exchange_weak(old, first, std::memory_order_release,
                                           std::memory_order_relaxed));
  }

  /// Never destroyed: blocks may come back while the process exits.
  static pool& shared() {
    static pool* const p = new pool;
    return *p;
  }
  static local& mine() {
    thread_local local l;
    return l;
  }
};

/// Rounds a size up to operator new's alignment.
constexpr std::size_t recycled_size(std::size_t n) noexcept {
  return (n + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) *
         alignof(std::max_align_t);
}

template <class T>
struct recycling_allocator {
  using value_type = T;
  static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned types are not recycled");

  recycling_allocator() noexcept = default;
  template <class U>
  recycling_allocator(const recycling_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n == 1) return static_cast<T*>(block_recycler<recycled_size(sizeof(T))>::take());
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n == 1) {
      block_recycler<recycled_size(sizeof(T))>::give(p);
      return;
    }
    std::allocator<T>{}.deallocate(p, n);
  }

  template <class U>
  friend bool operator==(const recycling_allocator&, const recycling_allocator<U>&) noexcept {
    return true;
  }
  template <class U>
  friend bool operator!=(const recycling_allocator&, const recycling_allocator<U>&) noexcept {
    return false;
  }
};

/// `std::make_shared`, with the object and its control block in one
/// recycled block.
template <class T, class... Args>
std::shared_ptr<T> make_recycled(Args&&... args) {
  return std::allocate_shared<T>(recycling_allocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace sk
