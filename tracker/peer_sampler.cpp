#include "tracker/peer_sampler.hpp"

#include <algorithm>
#include <cassert>

namespace sk {

// -- sparse_sampler ----------------------------------------------------------
//
// Sparse Fisher–Yates. Think of an array a[0..size) with a[x] = x. Step i
// swaps a[i] with a[j], j uniform in [i, size), and emits the new a[i]. After
// k steps a[0..k) is a uniformly random k-permutation of [0, size): step i
// picks uniformly among the size - i values not yet emitted, so each ordered
// outcome has probability 1 / (size (size-1) ... (size-k+1)). Only positions
// that were swapped differ from identity, and at most one new position (j)
// is written per step, so a tiny hash map of <= k entries represents the
// array: O(k) time and memory whatever the swarm size. Position i is never
// read after step i, so it need not be written back.
//
// Because every prefix of the permutation is itself uniform, a caller may
// stop early or reject some positions (rejection sampling from a uniform
// permutation leaves the accepted ones a uniform sample of the acceptable).
//
// The map is open addressing with linear probing at load <= 1/2; entries are
// valid only when their stamp equals the current draw's stamp, so clearing
// between draws is O(1).

void sparse_sampler::reset(std::uint32_t size, std::uint32_t max_draws) {
  assert(max_draws <= size);
  size_ = size;
  drawn_ = 0;
  // Capacity: a power of two >= 2 * max_draws keeps probes short.
  std::size_t cap = 16;
  while (cap < 2 * static_cast<std::size_t>(max_draws)) {
    cap *= 2;
  }
  if (stamps_.size() < cap) {
    keys_.assign(cap, 0);
    values_.assign(cap, 0);
    stamps_.assign(cap, 0);
    stamp_ = 0;
  }
  mask_ = static_cast<std::uint32_t>(cap - 1);
  if (++stamp_ == 0) {  // wrapped: old stamps could look current again
    std::fill(stamps_.begin(), stamps_.end(), 0);
    stamp_ = 1;
  }
}

}  // namespace sk
