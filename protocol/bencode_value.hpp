#pragma once
/// A generic bencode value tree and a straightforward encoder for it.
///
/// This is the "generic" approach: build a tree (a variant of integer,
/// string, list and dictionary) per message, then walk it. It exists as the
/// reference the fast streaming encoder is tested against (a differential
/// test: both must give identical bytes) and as the baseline of the
/// issue-3 benchmark. Not used on the serving path.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/bencode.hpp"

namespace sk {

/// One bencode value. Dictionaries are a std::map, whose std::string keys
/// order bytewise (char_traits<char> compares as unsigned char), which is the
/// order BEP 3 requires, so encoding a map needs no sorting.
struct bvalue {
  using integer = std::int64_t;
  using string = std::string;
  using list = std::vector<bvalue>;
  using dict = std::map<std::string, bvalue, std::less<>>;

  std::variant<integer, string, list, dict> v;

  bvalue() = default;
  bvalue(integer i) : v(i) {}  // NOLINT(google-explicit-constructor): tree literals read better
  bvalue(int i) : v(integer{i}) {}                   // NOLINT
  bvalue(std::string s) : v(std::move(s)) {}         // NOLINT
  bvalue(std::string_view s) : v(std::string(s)) {}  // NOLINT
  bvalue(const char* s) : v(std::string(s)) {}       // NOLINT
  bvalue(list l) : v(std::move(l)) {}                // NOLINT
  bvalue(dict d) : v(std::move(d)) {}                // NOLINT

  bool is_integer() const noexcept { return std::holds_alternative<integer>(v); }
  bool is_string() const noexcept { return std::holds_alternative<string>(v); }
  bool is_list() const noexcept { return std::holds_alternative<list>(v); }
  bool is_dict() const noexcept { return std::holds_alternative<dict>(v); }
  integer& as_integer() { return std::get<integer>(v); }
  string& as_string() { return std::get<string>(v); }
  list& as_list() { return std::get<list>(v); }
  dict& as_dict() { return std::get<dict>(v); }
  const integer& as_integer() const { return std::get<integer>(v); }
  const string& as_string() const { return std::get<string>(v); }
  const list& as_list() const { return std::get<list>(v); }
  const dict& as_dict() const { return std::get<dict>(v); }

  friend bool operator==(const bvalue& a, const bvalue& b) { return a.v == b.v; }
  friend bool operator!=(const bvalue& a, const bvalue& b) { return !(a == b); }
};

/// Appends the encoding of `value` to `out` (recursive; integers through
/// std::to_chars — a fair generic encoder, not a deliberately slow one).
void encode_value(std::string& out, const bvalue& value);
/// Convenience: the encoding as a new string.
std::string encode_value(const bvalue& value);

/// Copies a decoded item into a value tree (the decoder already bounded
/// its depth, so the recursion is bounded too).
bvalue to_value(bdecode_node node);

}  // namespace sk
