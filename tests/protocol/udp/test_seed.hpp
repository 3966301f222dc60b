#pragma once
/// The seed every randomised test in this directory starts from.
///
/// Random unless SK_TEST_SEED is set; always printed, so a failure can be
/// replayed with `SK_TEST_SEED=<n> ./udp_protocol_tests --gtest_filter=...`.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace sk::test {

inline std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    std::uint64_t s = 0;
    if (const char* env = std::getenv("SK_TEST_SEED"); env != nullptr && *env != '\0') {
      s = std::strtoull(env, nullptr, 0);
    } else {
      std::random_device rd;
      s = (std::uint64_t{rd()} << 32) ^ rd();
    }
    std::fprintf(stderr, "[udp_protocol_tests] SK_TEST_SEED=%llu\n",
                 static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

/// "SK_TEST_SEED=<n>", for SCOPED_TRACE so every failure names its seed.
inline std::string seed_trace() { return "SK_TEST_SEED=" + std::to_string(test_seed()); }

}  // namespace sk::test
