#pragma once
/// Uniform sampling without replacement over a virtual array, in memory
/// proportional to the draws (the peer table's and the allocator's picks).

#include <cassert>
#include <cstdint>
#include <vector>

#include "tracker/random.hpp"

namespace sk {

/// Draws distinct positions of a virtual array [0, size) in uniformly random
/// order without materialising it (sparse Fisher–Yates, see peer_sampler.cpp):
/// O(draws) time and memory whatever `size` is. Streaming: `reset`, then up
/// to `max_draws` calls of `next`, stopping whenever the caller likes.
class sparse_sampler {
 public:
  /// Starts a new draw over [0, size) of at most `max_draws` (<= size) positions.
  void reset(std::uint32_t size, std::uint32_t max_draws);
  /// The next position; at most `max_draws` calls after `reset`.
  std::uint32_t next(fast_rng& rng) {
    assert(drawn_ < size_);
    const std::uint32_t i = drawn_++;
    const std::uint32_t j = i + rng.below(size_ - i);
    const std::uint32_t picked = get(j);
    if (j != i) {
      set(j, get(i));
    }
    return picked;
  }
  /// Emits `k` (<= size) distinct positions of [0, size) in random order.
  template <class Emit>
  void draw(fast_rng& rng, std::uint32_t size, std::uint32_t k, Emit&& emit) {
    assert(k <= size);
    if (k == 0) {
      return;
    }
    reset(size, k);
    for (std::uint32_t i = 0; i < k; ++i) {
      emit(next(rng));
    }
  }

 private:
  /// Fibonacci hashing: the high half of the product mixes every key bit.
  std::uint32_t slot_of(std::uint32_t pos) const noexcept {
    return static_cast<std::uint32_t>((pos * 0x9e3779b97f4a7c15ULL) >> 32) & mask_;
  }
  std::uint32_t get(std::uint32_t pos) const {
    for (std::uint32_t h = slot_of(pos);; h = (h + 1) & mask_) {
      if (stamps_[h] != stamp_) {
        return pos;  // never written: identity
      }
      if (keys_[h] == pos) {
        return values_[h];
      }
    }
  }
  void set(std::uint32_t pos, std::uint32_t value) {
    for (std::uint32_t h = slot_of(pos);; h = (h + 1) & mask_) {
      if (stamps_[h] != stamp_) {
        stamps_[h] = stamp_;
        keys_[h] = pos;
        values_[h] = value;
        return;
      }
      if (keys_[h] == pos) {
        values_[h] = value;
        return;
      }
    }
  }
  std::vector<std::uint32_t> keys_, values_, stamps_;
  std::uint32_t stamp_ = 0;
  std::uint32_t mask_ = 0;
  std::uint32_t size_ = 0;
  std::uint32_t drawn_ = 0;
};

}  // namespace sk
