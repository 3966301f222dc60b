#pragma once
/// Whether a limit is reached now, so that reaching it is logged once per
/// episode instead of once per refusal:
///
///   hit(now)            ─ first hit of an episode ─▶ true: log "reached"
///   settle(now, quiet)  ─ no hit for `quiet` ──────▶ true: log "cleared"
///
/// Lock-free; any thread. A hit racing a settle may end the episode at
/// once, and the next hit starts (and logs) a new one: at worst one line
/// more, never one per event.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace sk {

class limit_latch {
 public:
  using clock = std::chrono::steady_clock;

  /// Records a refusal at `now`; true for the one that starts an episode.
  bool hit(clock::time_point now) noexcept {
    last_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    if (reached_.load(std::memory_order_relaxed)) return false;
    return !reached_.exchange(true, std::memory_order_relaxed);
  }
  /// Ends the episode once no hit came for `quiet`; true for the call that
  /// ended it.
  bool settle(clock::time_point now, clock::duration quiet) noexcept {
    if (!reached_.load(std::memory_order_relaxed)) return false;
    const clock::time_point last(clock::duration(last_.load(std::memory_order_relaxed)));
    if (now - last < quiet) return false;
    return reached_.exchange(false, std::memory_order_relaxed);
  }
  /// True while an episode lasts.
  bool reached() const noexcept { return reached_.load(std::memory_order_relaxed); }
  /// When the last hit came (zero: never).
  clock::time_point last_hit() const noexcept {
    return clock::time_point(clock::duration(last_.load(std::memory_order_relaxed)));
  }

 private:
  std::atomic<bool> reached_{false};
  std::atomic<clock::rep> last_{0};
};

}  // namespace sk
