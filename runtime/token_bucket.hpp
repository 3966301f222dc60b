#pragma once
/// A token bucket on an injected steady clock: `burst` tokens at most,
/// refilled at `rate` tokens per `Period`, one taken per admitted event.
/// The first take fills the bucket. Time that runs backwards refills
/// nothing. Not thread-safe: callers that share one lock around it.
///
/// Used where a node-wide rate bounds rare work (the per-swarm log lines,
/// swarms put to sleep per second); the per-address limits of the gateway
/// keep one time per address instead (net/address_buckets.hpp).

#include <algorithm>
#include <chrono>
#include <ratio>

namespace sk {

template <class Period = std::ratio<1>>
class token_bucket {
 public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;

  token_bucket() = default;
  token_bucket(double rate, double burst) : rate_(rate), burst_(burst) {}

  double rate() const noexcept { return rate_; }
  double burst() const noexcept { return burst_; }

  /// Takes one token at `now`; false (nothing taken) when none is left.
  bool take(time_point now) {
    refill(now);
    // A token refilled over exactly its interval may sum to a hair under
    // one in floating point (10 s at six a minute); it counts as whole.
    if (tokens_ < 1.0 - 1e-9) return false;
    tokens_ -= 1.0;
    return true;
  }

  /// Tokens left at `now` (refilled first).
  double available(time_point now) {
    refill(now);
    return tokens_;
  }

 private:
  void refill(time_point now) {
    if (!started_) {
      started_ = true;
      tokens_ = burst_;
      at_ = now;
    } else if (now > at_) {
      const double periods = std::chrono::duration<double, Period>(now - at_).count();
      tokens_ = std::min(burst_, tokens_ + periods * rate_);
      at_ = now;
    }
  }

  double rate_ = 0;
  double burst_ = 0;
  double tokens_ = 0;
  time_point at_{};
  bool started_ = false;
};

}  // namespace sk
