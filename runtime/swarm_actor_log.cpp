#include "runtime/swarm_actor_log.hpp"

namespace sk {

bool log_limiter::admit(time_point now) {
  if (bucket_.take(now)) return true;
  if (pending_ == 0) {
    window_start_ = now;
  }
  ++pending_;
  ++total_;
  return false;
}

std::uint64_t log_limiter::take_summary(time_point now) {
  if (pending_ == 0 || now - window_start_ < limits_.summary_period) {
    return 0;
  }
  return std::exchange(pending_, 0);
}

swarm_log& swarm_log::instance() {
  static swarm_log log;
  return log;
}

void swarm_log::configure(const log_limiter::limits& l) {
  std::lock_guard<std::mutex> lock(mutex_);
  limiter_ = log_limiter(l);
  pending_.store(0, std::memory_order_relaxed);
}

bool swarm_log::admit(time_point now) {
  std::uint64_t summary = 0;
  bool ok = false;
  log_limiter::limits limits;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ok = limiter_.admit(now);
    if (!ok) suppressed_.fetch_add(1, std::memory_order_relaxed);
    summary = limiter_.take_summary(now);
    pending_.store(limiter_.pending(), std::memory_order_relaxed);
    limits = limiter_.config();
  }
  if (summary != 0) write_summary(summary, limits);
  return ok;
}

void swarm_log::flush(time_point now) {
  if (pending_.load(std::memory_order_relaxed) == 0) return;
  std::uint64_t summary = 0;
  log_limiter::limits limits;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    summary = limiter_.take_summary(now);
    pending_.store(limiter_.pending(), std::memory_order_relaxed);
    limits = limiter_.config();
  }
  if (summary != 0) write_summary(summary, limits);
}

void swarm_log::write_summary(std::uint64_t n, const log_limiter::limits& l) {
  // A warning: it says lines were lost, and it must not itself be lost to
  // a log level that keeps only warnings.
  spdlog::warn(
      "swarm log: {} per-swarm info lines suppressed in the last {} s or more "
      "(log.swarm-lines-per-minute = {}, log.swarm-lines-burst = {})",
      n, l.summary_period.count(), l.lines_per_minute, l.burst);
}

}  // namespace sk
