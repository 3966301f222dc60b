#include "runtime/compact_heap.hpp"

#include "tracker/page_allocator.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace sk {

/// The head of a slab: at its start, the slab aligned to `slab_bytes`, so
/// a block's slab is its address rounded down.
struct compact_heap::slab {
  std::size_t cls = 0;
  std::size_t block = 0;   ///< bytes per block
  std::size_t used = 0;    ///< blocks handed out
  char* bump = nullptr;    ///< first block never handed out
  char* end = nullptr;
  void* free = nullptr;    ///< blocks handed back (intrusive list)
  slab* prev = nullptr;    ///< in its class's partial list
  slab* next = nullptr;
  slab* all_next = nullptr;
  bool listed = false;     ///< in the partial list
  /// The class's spare while its pages are being given back (outside the
  /// lock): not handed out until that is over.
  bool cleaning = false;
};

namespace {

constexpr std::size_t header_bytes = 128;  // >= sizeof(slab), keeps blocks 16-aligned

}  // namespace

compact_heap::~compact_heap() {
  for (slab* s = all_; s != nullptr;) {
    slab* next = s->all_next;
    ::munmap(s, slab_bytes);
    s = next;
  }
}

compact_heap::slab* compact_heap::map_slab(std::size_t cls) {
  static_assert(sizeof(slab) <= header_bytes, "slab header grew");
  // Twice the size, then the unaligned ends cut off: an aligned slab.
  void* raw = ::mmap(nullptr, 2 * slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const auto aligned = (base + slab_bytes - 1) & ~(std::uintptr_t{slab_bytes} - 1);
  if (aligned > base) ::munmap(raw, aligned - base);
  const std::uintptr_t tail = base + 2 * slab_bytes - (aligned + slab_bytes);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(aligned + slab_bytes), tail);
  auto* s = new (reinterpret_cast<void*>(aligned)) slab;
  s->cls = cls;
  s->block = (cls + 1) * step;
  s->bump = reinterpret_cast<char*>(aligned) + header_bytes;
  s->end = reinterpret_cast<char*>(aligned) + slab_bytes;
  s->all_next = all_;
  all_ = s;
  slabs_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void compact_heap::forget_slab(slab* s) noexcept {
  for (slab** p = &all_; *p != nullptr; p = &(*p)->all_next) {
    if (*p == s) {
      *p = s->all_next;
      break;
    }
  }
  slabs_.fetch_sub(1, std::memory_order_relaxed);
}

void compact_heap::unlink(slab* s) noexcept {
  if (!s->listed) return;
  if (s->prev != nullptr)
    s->prev->next = s->next;
  else
    partial_[s->cls] = s->next;
  if (s->next != nullptr) s->next->prev = s->prev;
  s->prev = s->next = nullptr;
  s->listed = false;
}

void compact_heap::push_front(slab* s) noexcept {
  s->prev = nullptr;
  s->next = partial_[s->cls];
  if (s->next != nullptr) s->next->prev = s;
  partial_[s->cls] = s;
  s->listed = true;
}

void* compact_heap::do_allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes == 0) bytes = 1;
  if (bytes >= page_array_threshold && alignment <= 64) return detail::allocate_peer_array(bytes);
  if (bytes > largest || alignment > step) return ::operator new(bytes, std::align_val_t{alignment});
  const std::size_t cls = class_of(bytes);
  std::lock_guard<std::mutex> guard(mtx_);
  slab* s = partial_[cls];
  if (s == nullptr) {
    s = spare_[cls];
    if (s != nullptr && s->cleaning)
      s = nullptr;  // its pages are being given back: a new slab instead
    else
      spare_[cls] = nullptr;
    if (s == nullptr) s = map_slab(cls);
    if (s == nullptr) throw std::bad_alloc();
    push_front(s);
  }
  void* p;
  if (s->free != nullptr) {
    p = s->free;
    s->free = *static_cast<void**>(p);
  } else {
    p = s->bump;
    s->bump += s->block;
  }
  ++s->used;
  if (s->free == nullptr && s->bump + s->block > s->end) unlink(s);  // full
  in_use_.fetch_add(s->block, std::memory_order_relaxed);
  return p;
}

void compact_heap::do_deallocate(void* p, std::size_t bytes, std::size_t alignment) {
  if (p == nullptr) return;
  if (bytes == 0) bytes = 1;
  if (bytes >= page_array_threshold && alignment <= 64) {
    detail::deallocate_peer_array(p, bytes);
    return;
  }
  if (bytes > largest || alignment > step) {
    ::operator delete(p, std::align_val_t{alignment});
    return;
  }
  auto* s = reinterpret_cast<slab*>(reinterpret_cast<std::uintptr_t>(p) &
                                    ~(std::uintptr_t{slab_bytes} - 1));
  bool spare = false;
  {
    std::lock_guard<std::mutex> guard(mtx_);
    *static_cast<void**>(p) = s->free;
    s->free = p;
    --s->used;
    in_use_.fetch_sub(s->block, std::memory_order_relaxed);
    if (s->used != 0) {
      if (!s->listed) push_front(s);
      return;
    }
    unlink(s);
    spare = spare_[s->cls] == nullptr;
    if (spare) {
      // Kept as the class's spare, reset so its pages are reused in order;
      // not handed out until its pages are given back below.
      s->free = nullptr;
      s->bump = reinterpret_cast<char*>(s) + header_bytes;
      s->cleaning = true;
      spare_[s->cls] = s;
    } else {
      forget_slab(s);
    }
  }
  // The system calls outside the lock: a thread that sleeps or wakes a
  // swarm never waits for another thread's page release.
  if (!spare) {
    ::munmap(s, slab_bytes);
    return;
  }
  // (From the second page: madvise takes whole pages; the first holds the header.)
  ::madvise(reinterpret_cast<char*>(s) + 4096, slab_bytes - 4096, MADV_DONTNEED);
  std::lock_guard<std::mutex> guard(mtx_);
  s->cleaning = false;
}

}  // namespace sk
