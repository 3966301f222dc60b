#pragma once
/// The allocator of a swarm's large per-peer arrays: below `threshold`
/// bytes the ordinary heap; from `threshold` on, pages of their own (mmap),
/// handed back to the system the moment the array is freed.
///
/// Why: a peer table grows its arrays while thousands of other swarms grow
/// theirs. On the heap, every grown array leaves its previous block free;
/// when all swarms grow at once nobody reuses those blocks, and they stay
/// resident. glibc maps large blocks on its own only until the first one is
/// freed, after which it raises its threshold and serves them from the heap
/// again. Pages of their own also make the unused capacity of a grown array
/// cost no resident memory: untouched pages are never faulted in. What it
/// saves is measured in bench/memory/README.md.
///
/// Every mapping is a kernel memory area, and a process has a bounded
/// number of them (`vm.max_map_count`, 65530 by default). So at most
/// `mapping_limit()` arrays are mapped at a time (half the system's limit:
/// the rest of the process, and CAF's and glibc's own mappings, keep room);
/// past it, and whenever the system refuses a mapping, a large array comes
/// from the heap like a small one. A large block carries a 64-byte header
/// that says which it got.
///
///   large block:  [ header: kind, 64 bytes | the array ... ]
///                   ^ mapping or heap block  ^ what allocate returns

#include <cstddef>
#include <new>
#include <vector>

namespace sk {

namespace detail {
/// A block for `bytes` bytes of array, aligned to 64 (see `page_allocator`).
/// Throws std::bad_alloc when neither pages nor the heap can give it.
void* allocate_peer_array(std::size_t bytes);
/// Frees a block `allocate_peer_array(bytes)` returned (same `bytes`).
void deallocate_peer_array(void* p, std::size_t bytes) noexcept;
}  // namespace detail

/// Arrays of at least this many bytes are candidates for pages of their own.
inline constexpr std::size_t page_array_threshold = 64 * 1024;

/// Most arrays mapped at once (see the header comment).
std::size_t mapping_limit() noexcept;
/// Sets `mapping_limit` (tests; 0 maps nothing). Returns the previous limit.
std::size_t set_mapping_limit(std::size_t limit) noexcept;
/// Arrays mapped right now, and their bytes (header included, whole pages).
std::size_t mapped_arrays() noexcept;
std::size_t mapped_bytes() noexcept;

template <class T>
struct page_allocator {
  using value_type = T;
  static_assert(alignof(T) <= 64, "a large block aligns its array to 64 bytes");

  page_allocator() noexcept = default;
  template <class U>
  page_allocator(const page_allocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T) / 2) {
      throw std::bad_alloc();
    }
    const std::size_t bytes = n * sizeof(T);
    if (bytes < page_array_threshold) {
      return static_cast<T*>(::operator new(bytes));
    }
    return static_cast<T*>(detail::allocate_peer_array(bytes));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < page_array_threshold) {
      ::operator delete(p);
    } else {
      detail::deallocate_peer_array(p, bytes);
    }
  }

  template <class U>
  friend bool operator==(const page_allocator&, const page_allocator<U>&) noexcept {
    return true;
  }
  template <class U>
  friend bool operator!=(const page_allocator&, const page_allocator<U>&) noexcept {
    return false;
  }
};

/// A per-peer array of a swarm (see `page_allocator`).
template <class T>
using peer_array = std::vector<T, page_allocator<T>>;

}  // namespace sk
