#pragma once
/// The node-wide budget of per-swarm log lines.
///
/// Swarm events at info level (a remediation's actions, its start and end,
/// a swarm back below its peer cap) are one line per event and swarm: an
/// outsider who creates many unhealthy swarms would otherwise write as many
/// lines as he likes. So they share one token bucket per process
/// (`log.swarm-lines-per-minute`, `log.swarm-lines-burst`); a line beyond
/// it is dropped and counted, and the count is written as one summary line
/// per minute at most:
///
///   ... info remediation of swarm 0a1b...: apply ...      (within the budget)
///   ... warn swarm log: 4183 per-swarm info lines suppressed in the last 60 s
///            (log.swarm-lines-per-minute = 60)
///
/// Warnings and errors (crashes, give-ups, caps reached) and operator
/// actions are not per-swarm noise: they bypass the budget.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "runtime/token_bucket.hpp"

namespace sk {

/// What `log_limiter` allows.
struct log_limits {
  /// Refill rate; 0: no per-swarm info line at all (only summaries).
  double lines_per_minute = 60.0;
  /// Bucket size: lines that may come at once after a quiet time.
  std::uint32_t burst = 100;
  /// Least time between two summaries.
  std::chrono::seconds summary_period{60};
};

/// A token bucket on an injected clock, with a count of what it refused
/// and a summary at most once per `summary_period`. Not thread-safe
/// (`swarm_log` locks around it).
class log_limiter {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  using limits = log_limits;

  explicit log_limiter(limits l = {}) : limits_(l), bucket_(l.lines_per_minute, l.burst) {}

  const limits& config() const noexcept { return limits_; }

  /// Whether one more line may be written at `now`; a refused line is
  /// counted for the next summary.
  bool admit(time_point now);

  /// Lines refused since the last summary, when a summary is due at `now`
  /// (some were refused, and `summary_period` has passed since the first
  /// of them); else 0. A nonzero answer starts a new summary window.
  std::uint64_t take_summary(time_point now);

  /// Lines refused since the last summary.
  std::uint64_t pending() const noexcept { return pending_; }
  /// Lines refused since construction.
  std::uint64_t suppressed_total() const noexcept { return total_; }

 private:
  limits limits_;
  token_bucket<std::ratio<60>> bucket_;
  std::uint64_t pending_ = 0;
  std::uint64_t total_ = 0;
  /// When the first line of the current summary window was refused.
  time_point window_start_{};
};

/// The process's per-swarm log budget (one `log_limiter` behind a mutex:
/// per-swarm events are rare next to announces, and each line costs a
/// write anyway). Callers pass their actor's clock.
class swarm_log {
 public:
  using time_point = log_limiter::time_point;

  /// The process's instance.
  static swarm_log& instance();

  /// Replaces the limits and forgets the bucket's state (start-up, tests).
  void configure(const log_limiter::limits& l);

  /// Writes the line at info level when the logger wants info and the
  /// budget allows it at `now`; else counts it.
  template <class... Args>
  void info(time_point now, spdlog::format_string_t<Args...> fmt, Args&&... args) {
    if (!spdlog::should_log(spdlog::level::info)) return;
    if (!admit(now)) return;
    spdlog::info(fmt, std::forward<Args>(args)...);
  }

  /// Writes the summary line if one is due at `now` (cheap when nothing was
  /// refused: one relaxed load). The swarms call it on their health tick,
  /// so a summary does not wait for the next per-swarm line.
  void flush(time_point now);

  /// Lines refused since start (the `/metrics` counter).
  std::uint64_t suppressed_total() const noexcept {
    return suppressed_.load(std::memory_order_relaxed);
  }

 private:
  bool admit(time_point now);
  static void write_summary(std::uint64_t n, const log_limiter::limits& l);

  std::mutex mutex_;
  log_limiter limiter_;
  std::atomic<std::uint64_t> suppressed_{0};
  /// Refused lines not summarised yet (the fast path of `flush`).
  std::atomic<std::uint64_t> pending_{0};
};

}  // namespace sk
