#pragma once
/// Helpers shared by the protocol tests: a printed, replayable seed, an
/// allocation counter, and random data.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

namespace sk::test {

/// The seed of this run: $SK_TEST_SEED when set, else random. Every random
/// test prints it (stdout and the XML report) so a failure can be replayed.
inline std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    if (const char* env = std::getenv("SK_TEST_SEED"); env && *env)
      return static_cast<std::uint64_t>(std::strtoull(env, nullptr, 10));
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

/// A generator seeded with `run_seed()`; prints the seed for replay.
inline std::mt19937_64 seeded_rng() {
  const std::uint64_t seed = run_seed();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::cout << "[   SEED   ] SK_TEST_SEED=" << seed << std::endl;
  return std::mt19937_64(seed);
}

inline std::string random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

/// Number of operator new calls in this process so far (alloc_counter.cpp).
std::uint64_t allocations() noexcept;

}  // namespace sk::test
