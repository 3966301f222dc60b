#pragma once
/// Random bencode value trees for round-trip and garbling tests.

#include <random>
#include <string>

#include "protocol/bencode_value.hpp"
#include "test_support.hpp"

namespace sk::test {

/// A random tree of at most `depth` levels. Strings are short and often
/// share prefixes (so key-order edge cases — "a" < "a\0" < "ab" — occur);
/// integers cover all magnitudes and signs.
inline bvalue random_value(std::mt19937_64& rng, int depth) {
  const unsigned kind = static_cast<unsigned>(rng() % (depth > 0 ? 4 : 2));
  switch (kind) {
    case 0: {
      const auto v = static_cast<std::int64_t>(rng()) >> (rng() % 64);
      return bvalue(v);
    }
    case 1: {
      static constexpr char alphabet[] = {'a', 'b', '\0', '\x7f', '\x80', '\xff', ':', 'e'};
      std::string s(rng() % 6, '\0');
      for (char& c : s) c = alphabet[rng() % sizeof alphabet];
      if (rng() % 8 == 0) s += random_bytes(rng, rng() % 40);
      return bvalue(std::move(s));
    }
    case 2: {
      bvalue::list l;
      const std::size_t n = rng() % 5;
      for (std::size_t i = 0; i < n; ++i) l.push_back(random_value(rng, depth - 1));
      return bvalue(std::move(l));
    }
    default: {
      bvalue::dict d;
      const std::size_t n = rng() % 5;
      for (std::size_t i = 0; i < n; ++i) {
        std::string key = random_value(rng, 0).is_string() ? std::string("k") : std::string();
        key += random_bytes(rng, rng() % 3);
        d[key] = random_value(rng, depth - 1);
      }
      return bvalue(std::move(d));
    }
  }
}

}  // namespace sk::test
