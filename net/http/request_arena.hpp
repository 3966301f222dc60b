#pragma once
/// Memory for one request's header fields, inside the connection that reads
/// it.
///
/// Beast's parser stores the request target and every header field in
/// blocks of their own, from the allocator of its `basic_fields`: with the
/// default one, a handful of mallocs and frees per request, on the I/O
/// thread that also accepts, reads and writes. Here the blocks are carved
/// one after the other from a buffer the session holds, and the whole
/// buffer is taken back at once when the next request's parser starts
/// (`reset`). A request whose fields do not fit (long headers) gets the
/// rest from the heap, freed as usual.
///
/// Not thread-safe: a session's parser lives on its I/O thread.

#include <cstddef>
#include <cstdint>
#include <new>

namespace sk {

class request_arena {
 public:
  static constexpr std::size_t capacity = 1024;
  static constexpr std::size_t alignment = alignof(std::max_align_t);

  request_arena() = default;
  request_arena(const request_arena&) = delete;
  request_arena& operator=(const request_arena&) = delete;

  void* allocate(std::size_t bytes) {
    const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
    if (rounded <= capacity - used_ && rounded >= bytes) {
      void* p = buffer_ + used_;
      used_ += rounded;
      return p;
    }
    return ::operator new(bytes);
  }

  void deallocate(void* p, std::size_t bytes) noexcept {
    if (owns(p)) {
      // The latest block can be taken back at once (a string that grows
      // frees its previous block right after taking the new one).
      const std::size_t rounded = (bytes + alignment - 1) / alignment * alignment;
      if (static_cast<unsigned char*>(p) + rounded == buffer_ + used_) used_ -= rounded;
      return;
    }
    ::operator delete(p);
  }

  /// Takes every block back. Only once nothing allocated here is in use.
  void reset() noexcept { used_ = 0; }

  std::size_t used() const noexcept { return used_; }

  bool owns(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const auto b = reinterpret_cast<std::uintptr_t>(buffer_);
    return a >= b && a < b + capacity;
  }

 private:
  alignas(alignment) unsigned char buffer_[capacity];
  std::size_t used_ = 0;
};

/// A standard allocator on a `request_arena` (given to Beast's fields).
template <class T>
struct request_arena_allocator {
  using value_type = T;

  explicit request_arena_allocator(request_arena& arena) noexcept : arena_(&arena) {}
  template <class U>
  request_arena_allocator(const request_arena_allocator<U>& other) noexcept  // NOLINT: rebind
      : arena_(other.arena_) {}

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= request_arena::alignment, "over-aligned type");
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(arena_->allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { arena_->deallocate(p, n * sizeof(T)); }

  template <class U>
  bool operator==(const request_arena_allocator<U>& other) const noexcept {
    return arena_ == other.arena_;
  }
  template <class U>
  bool operator!=(const request_arena_allocator<U>& other) const noexcept {
    return arena_ != other.arena_;
  }

  request_arena* arena_;
};

}  // namespace sk
