#pragma once
/// Invariant checks for the libFuzzer targets in tests/fuzz.
///
/// `FUZZ_CHECK(cond)` aborts with the condition and its location when `cond`
/// is false. libFuzzer treats the abort as a crash and saves the input as
/// `crash-<sha1>`, so a broken invariant is reported exactly like a sanitizer
/// finding. The check is active in every build (unlike `assert`).

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace sk::fuzz {

[[noreturn]] inline void check_failed(const char* what, const char* file, int line) {
  std::fprintf(stderr, "\n==fuzz== invariant failed: %s\n==fuzz==   at %s:%d\n", what, file, line);
  std::fflush(stderr);
  std::abort();
}

/// Splits `data` at the first `sep`: `head` before it, the rest after it
/// (the whole input and an empty rest when `sep` does not occur).
inline void split_once(std::string_view data, char sep, std::string_view& head,
                       std::string_view& rest) {
  const auto at = data.find(sep);
  head = data.substr(0, at);
  rest = at == std::string_view::npos ? std::string_view{} : data.substr(at + 1);
}

/// Upper-case %XX escapes for every byte: the most literal form-encoding,
/// which any conforming query decoder must map back to the same bytes.
inline std::string percent_encode_all(std::string_view bytes) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out.push_back('%');
    out.push_back(hex[b >> 4]);
    out.push_back(hex[b & 0xf]);
  }
  return out;
}

}  // namespace sk::fuzz

#define FUZZ_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::sk::fuzz::check_failed(#cond, __FILE__, __LINE__))
