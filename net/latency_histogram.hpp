#pragma once
/// A fixed-bucket latency histogram for the hot path: one writer thread per
/// instance (an HTTP I/O thread, a UDP socket worker), any number of
/// readers (/metrics). Recording is a bucket search over 14 bounds and two
/// relaxed load+store pairs: no read-modify-write, no lock, no shared cache
/// line with other writers. Readers sum the instances of a transport.
///
/// Buckets (upper bounds, seconds; Prometheus `le`): 50us 100us 250us 500us
/// 1ms 2.5ms 5ms 10ms 25ms 50ms 100ms 250ms 500ms 1s, then +Inf.

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace sk {

class latency_histogram {
 public:
  static constexpr std::size_t bounds = 14;
  /// Upper bounds in nanoseconds.
  static constexpr std::array<std::uint64_t, bounds> bound_ns = {
      50'000,     100'000,    250'000,     500'000,     1'000'000,   2'500'000,   5'000'000,
      10'000'000, 25'000'000, 50'000'000, 100'000'000, 250'000'000, 500'000'000, 1'000'000'000};

  /// Records one latency. Only the owning thread calls this.
  void record(std::chrono::steady_clock::duration d) noexcept {
    const auto ns = static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()));
    std::size_t i = 0;
    while (i < bounds && ns > bound_ns[i]) ++i;
    bump(counts_[i], 1);
    bump(sum_ns_, ns);
  }

  /// A reader's copy: per-bucket counts (not cumulative; the last is +Inf)
  /// and the sum.
  struct snapshot {
    std::array<std::uint64_t, bounds + 1> counts{};
    std::uint64_t sum_ns = 0;
    snapshot& operator+=(const snapshot& o) noexcept {
      for (std::size_t i = 0; i <= bounds; ++i) counts[i] += o.counts[i];
      sum_ns += o.sum_ns;
      return *this;
    }
    std::uint64_t count() const noexcept {
      std::uint64_t n = 0;
      for (auto c : counts) n += c;
      return n;
    }
  };

  /// Any thread. Buckets and sum are read one by one, so a snapshot taken
  /// while the writer records may be off by the one latency in progress.
  snapshot read() const noexcept {
    snapshot s;
    for (std::size_t i = 0; i <= bounds; ++i) s.counts[i] = counts_[i].load(std::memory_order_relaxed);
    s.sum_ns = sum_ns_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  static void bump(std::atomic<std::uint64_t>& a, std::uint64_t n) noexcept {
    // Single writer: a plain load and store (no locked instruction).
    a.store(a.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  alignas(64) std::array<std::atomic<std::uint64_t>, bounds + 1> counts_{};
  std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace sk
