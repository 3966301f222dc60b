// sparse_sampler: the positions it draws are those of a Fisher–Yates
// shuffle of [0, size) on the same random numbers, for small arrays drawn
// whole and for large ones drawn from sparsely.

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "tracker/peer_sampler.hpp"
#include "tracker/random.hpp"

namespace sk {
namespace {

/// The first `k` positions of a Fisher–Yates shuffle of [0, size) that
/// draws j uniformly from [i, size) at step i.
std::vector<std::uint32_t> shuffled_prefix(fast_rng& rng, std::uint32_t size, std::uint32_t k) {
  std::vector<std::uint32_t> a(size);
  std::iota(a.begin(), a.end(), 0U);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t j = i + rng.below(size - i);
    std::swap(a[i], a[j]);
  }
  a.resize(k);
  return a;
}

std::vector<std::uint32_t> sampled(sparse_sampler& s, fast_rng& rng, std::uint32_t size,
                                   std::uint32_t draws, std::uint32_t k) {
  s.reset(size, draws);
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < k; ++i) out.push_back(s.next(rng));
  return out;
}

TEST(SparseSampler, DrawsTheFisherYatesPrefix) {
  // (size, max draws): a swarm of 200 and a reply's draws, every position
  // of small arrays, large arrays with few draws.
  const std::uint32_t cases[][2] = {{200, 66},  {200, 200}, {1, 1},      {3000, 375},
                                    {3001, 375}, {4097, 4097}, {100000, 66}, {1000000, 500}};
  sparse_sampler s;  // one sampler across all cases, as the allocator keeps one per thread
  for (const auto& c : cases) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      fast_rng a(seed), b(seed);
      const auto want = shuffled_prefix(a, c[0], c[1]);
      const auto got = sampled(s, b, c[0], c[1], c[1]);
      EXPECT_EQ(got, want) << "size " << c[0] << " draws " << c[1] << " seed " << seed;
      EXPECT_EQ(std::set<std::uint32_t>(got.begin(), got.end()).size(), got.size());
    }
  }
}

TEST(SparseSampler, ADrawStoppedEarlyLeavesNothingForTheNext) {
  // A scan stops as soon as it has its peers; the next draw must start
  // from the identity again, whatever the last one left in the map.
  sparse_sampler s;
  fast_rng r(7);
  sampled(s, r, 200, 100, 10);   // stopped after 10 of 100
  sampled(s, r, 100000, 50, 3);  // stopped after 3
  fast_rng a(11), b(11);
  EXPECT_EQ(sampled(s, b, 150, 150, 150), shuffled_prefix(a, 150, 150));
  fast_rng c(12), d(12);
  sampled(s, r, 180, 60, 5);
  EXPECT_EQ(sampled(s, d, 50000, 40, 40), shuffled_prefix(c, 50000, 40));
}

}  // namespace
}  // namespace sk
