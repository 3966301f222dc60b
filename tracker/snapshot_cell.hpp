#pragma once
/// A node-wide value that hot paths read without a lock and operators
/// replace at run time (the ban list, the info_hash access list).
///
///   writer (admin actor, SIGHUP)          readers (swarms, I/O threads)
///   ────────────────────────────          ─────────────────────────────
///   build a new immutable T               reader.get(cell):
///   cell.store(ptr) ─ atomic_store ─┐       version == cached ? cached T   (one acquire load)
///                   version = next ─┴─▶     : atomic_load the new T, cache it
///
/// Readers keep a `snapshot_reader` (one per actor or per thread): on the
/// hot path it costs one acquire load of a 64-bit version and a compare;
/// only after a change does it take the new `shared_ptr` with
/// `std::atomic_load` (which libstdc++ implements with a small pool of
/// spinlocks: fine once per change, not per request). A snapshot a reader
/// holds stays alive (shared_ptr) until the reader moves on, so a change
/// never frees a list under a reader.
///
/// Versions come from one process-wide counter, so (cell, version) never
/// repeats even when a cell is destroyed and another is built at the same
/// address (tests run several daemons' worth of cells in one process).

#include <atomic>
#include <cstdint>
#include <memory>

namespace sk {

namespace detail {
inline std::uint64_t next_snapshot_version() noexcept {
  static std::atomic<std::uint64_t> counter{1};
  return counter.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace detail

/// Holds the current `shared_ptr<const T>`. Thread-safe; writers that
/// read-modify-write must serialise among themselves.
template <class T>
class snapshot_cell {
 public:
  explicit snapshot_cell(std::shared_ptr<const T> initial = std::make_shared<const T>())
      : current_(std::move(initial)), version_(detail::next_snapshot_version()) {}
  snapshot_cell(const snapshot_cell&) = delete;
  snapshot_cell& operator=(const snapshot_cell&) = delete;

  /// The current value (never null unless null was stored).
  std::shared_ptr<const T> load() const { return std::atomic_load(&current_); }
  /// Publishes `next`; readers see it at their next `get`.
  void store(std::shared_ptr<const T> next) {
    std::atomic_store(&current_, std::move(next));
    // After the store: a reader that sees the new version loads at least
    // the value stored before it.
    version_.store(detail::next_snapshot_version(), std::memory_order_release);
  }
  std::uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }

 private:
  std::shared_ptr<const T> current_;
  std::atomic<std::uint64_t> version_;
};

/// A reader's cached snapshot of one cell. Not thread-safe: one per actor or
/// thread. Copyable (a copy shares the snapshot).
template <class T>
class snapshot_reader {
 public:
  /// The cell's current value; valid until the next `get` on this reader.
  const T* get(const snapshot_cell<T>& cell) {
    const std::uint64_t v = cell.version();
    if (v != seen_ || &cell != cell_) {
      snap_ = cell.load();
      seen_ = v;
      cell_ = &cell;
    }
    return snap_.get();
  }

 private:
  const snapshot_cell<T>* cell_ = nullptr;
  std::uint64_t seen_ = 0;
  std::shared_ptr<const T> snap_;
};

}  // namespace sk
