#include "tracker/page_allocator.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

namespace sk {

namespace {

constexpr std::size_t header_bytes = 64;
constexpr std::align_val_t block_align{64};

enum class block_kind : std::uint32_t { mapped = 0x6d617070, heap = 0x68656170 };

std::size_t page_rounded(std::size_t bytes) noexcept {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

/// Half of `vm.max_map_count` (65530 unless the administrator changed it).
std::size_t default_limit() noexcept {
  std::size_t system_limit = 65530;
  if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
    unsigned long v = 0;
    if (std::fscanf(f, "%lu", &v) == 1 && v > 0) {
      system_limit = v;
    }
    std::fclose(f);
  }
  return system_limit / 2;
}

std::atomic<std::size_t>& limit_cell() noexcept {
  static std::atomic<std::size_t> limit{default_limit()};
  return limit;
}
std::atomic<std::size_t> live_arrays{0};
std::atomic<std::size_t> live_bytes{0};

/// A mapping of `total` bytes, or nullptr past the limit or when the
/// system refuses.
void* try_map(std::size_t total) noexcept {
  const std::size_t limit = limit_cell().load(std::memory_order_relaxed);
  if (live_arrays.fetch_add(1, std::memory_order_relaxed) >= limit) {
    live_arrays.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  void* p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    live_arrays.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  live_bytes.fetch_add(total, std::memory_order_relaxed);
  return p;
}

}  // namespace

std::size_t mapping_limit() noexcept { return limit_cell().load(std::memory_order_relaxed); }
std::size_t set_mapping_limit(std::size_t limit) noexcept {
  return limit_cell().exchange(limit, std::memory_order_relaxed);
}
std::size_t mapped_arrays() noexcept { return live_arrays.load(std::memory_order_relaxed); }
std::size_t mapped_bytes() noexcept { return live_bytes.load(std::memory_order_relaxed); }

namespace detail {

void* allocate_peer_array(std::size_t bytes) {
  const std::size_t total = page_rounded(bytes + header_bytes);
  block_kind kind = block_kind::mapped;
  void* base = try_map(total);
  if (base == nullptr) {
    kind = block_kind::heap;
    base = ::operator new(bytes + header_bytes, block_align);
  }
  *static_cast<block_kind*>(base) = kind;
  return static_cast<char*>(base) + header_bytes;
}

void deallocate_peer_array(void* p, std::size_t bytes) noexcept {
  void* base = static_cast<char*>(p) - header_bytes;
  if (*static_cast<const block_kind*>(base) == block_kind::mapped) {
    const std::size_t total = page_rounded(bytes + header_bytes);
    munmap(base, total);
    live_arrays.fetch_sub(1, std::memory_order_relaxed);
    live_bytes.fetch_sub(total, std::memory_order_relaxed);
  } else {
    ::operator delete(base, block_align);
  }
}

}  // namespace detail

}  // namespace sk
