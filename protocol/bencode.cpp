#include "protocol/bencode.hpp"

#include <algorithm>

namespace sk {

namespace {

class bdecode_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "sk.bdecode"; }
  std::string message(int ev) const override {
    switch (static_cast<bdecode_errc>(ev)) {
      case bdecode_errc::ok:
        return "success";
      case bdecode_errc::input_too_long:
        return "bencoded input too long";
      case bdecode_errc::unexpected_eof:
        return "bencoded input ends inside an item";
      case bdecode_errc::unexpected_character:
        return "unexpected character in bencoded input";
      case bdecode_errc::expected_digit:
        return "expected a digit in bencoded integer";
      case bdecode_errc::expected_integer_end:
        return "expected 'e' after bencoded integer digits";
      case bdecode_errc::expected_colon:
        return "expected ':' after bencoded string length";
      case bdecode_errc::leading_zero:
        return "leading zero in bencoded number";
      case bdecode_errc::negative_zero:
        return "negative zero in bencoded integer";
      case bdecode_errc::integer_overflow:
        return "bencoded integer does not fit in 64 bits";
      case bdecode_errc::integer_too_long:
        return "bencoded integer has too many digits";
      case bdecode_errc::string_too_long:
        return "bencoded string too long";
      case bdecode_errc::depth_exceeded:
        return "bencoded containers nested too deeply";
      case bdecode_errc::too_many_tokens:
        return "too many items in bencoded input";
      case bdecode_errc::key_not_string:
        return "bencoded dictionary key is not a string";
      case bdecode_errc::unsorted_keys:
        return "bencoded dictionary keys out of order";
      case bdecode_errc::duplicate_key:
        return "duplicate key in bencoded dictionary";
      case bdecode_errc::missing_value:
        return "bencoded dictionary key without a value";
      case bdecode_errc::trailing_data:
        return "trailing data after bencoded item";
    }
    return "unknown bdecode error";
  }
};

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr std::uint32_t no_token = 0xFFFFFFFFu;
/// Tokens store 32-bit offsets; one value is kept free so `end` never wraps.
constexpr std::size_t hard_max_input = 0xFFFFFFFEu;

std::string_view string_payload(std::string_view input, const bdecode_token& t) noexcept {
  return input.substr(t.start + t.aux, t.end - t.start - t.aux);
}

}  // namespace

const std::error_category& bdecode_category() noexcept {
  static const bdecode_category_impl instance;
  return instance;
}

std::error_code make_error_code(bdecode_errc e) noexcept {
  return {static_cast<int>(e), bdecode_category()};
}

// ---------------------------------------------------------------------------
// bdecode
// ---------------------------------------------------------------------------

bdecode_result bdecode(std::string_view input, bdecode_document& doc,
                       const bdecode_limits& limits) {
  auto& tokens = doc.tokens_;
  auto& stack = doc.stack_;
  doc.input_ = input;
  doc.ok_ = false;
  tokens.clear();
  stack.clear();

  auto fail = [&](bdecode_errc e, std::size_t where) {
    tokens.clear();
    stack.clear();
    return bdecode_result{make_error_code(e), where};
  };

  const std::size_t max_input = std::min(limits.max_input_length, hard_max_input);
  if (input.size() > max_input) return fail(bdecode_errc::input_too_long, max_input);

  const char* const data = input.data();
  const auto size = static_cast<std::uint32_t>(input.size());
  const std::uint32_t max_digits = std::min<std::uint32_t>(limits.max_integer_digits, 19);
  std::uint32_t pos = 0;

  // A value (scalar or closed container) finished inside the innermost frame.
  auto count_child = [&tokens](bdecode_document::frame& f) {
    if (f.dict) f.want_value = false;
    ++tokens[f.token].aux;
  };

  for (;;) {
    if (pos >= size) return fail(bdecode_errc::unexpected_eof, size);
    const char c = data[pos];

    if (!stack.empty()) {
      bdecode_document::frame& f = stack.back();
      if (c == 'e') {
        if (f.dict && f.want_value) return fail(bdecode_errc::missing_value, pos);
        bdecode_token& t = tokens[f.token];
        ++pos;
        t.end = pos;
        t.next = static_cast<std::uint32_t>(tokens.size());
        stack.pop_back();
        if (stack.empty()) break;  // the root closed
        count_child(stack.back());
        continue;
      }
      if (f.dict && !f.want_value && !is_digit(c)) return fail(bdecode_errc::key_not_string, pos);
    }

    if (tokens.size() >= limits.max_tokens) return fail(bdecode_errc::too_many_tokens, pos);
    const auto index = static_cast<std::uint32_t>(tokens.size());
    const std::uint32_t start = pos;

    if (c == 'i') {
      ++pos;
      bool negative = false;
      if (pos < size && data[pos] == '-') {
        negative = true;
        ++pos;
      }
      if (pos >= size) return fail(bdecode_errc::unexpected_eof, size);
      if (!is_digit(data[pos])) return fail(bdecode_errc::expected_digit, pos);
      if (data[pos] == '0') {
        if (pos + 1 < size && is_digit(data[pos + 1])) return fail(bdecode_errc::leading_zero, pos);
        if (negative) return fail(bdecode_errc::negative_zero, start + 1);
      }
      const std::uint32_t first_digit = pos;
      // 19 decimal digits never overflow uint64 (max 9999999999999999999 < 2^64).
      std::uint64_t magnitude = 0;
      while (pos < size && is_digit(data[pos])) {
        if (pos - first_digit >= max_digits) return fail(bdecode_errc::integer_too_long, pos);
        magnitude = magnitude * 10 + static_cast<std::uint64_t>(data[pos] - '0');
        ++pos;
      }
      if (pos >= size) return fail(bdecode_errc::unexpected_eof, size);
      if (data[pos] != 'e') return fail(bdecode_errc::expected_integer_end, pos);
      const std::uint64_t limit = negative ? 0x8000000000000000ull : 0x7FFFFFFFFFFFFFFFull;
      if (magnitude > limit) return fail(bdecode_errc::integer_overflow, start);
      ++pos;
      tokens.push_back({start, pos, index + 1, 0, bdecode_type::integer});
    } else if (is_digit(c)) {
      if (c == '0' && pos + 1 < size && is_digit(data[pos + 1]))
        return fail(bdecode_errc::leading_zero, pos);
      std::uint64_t length = 0;
      while (pos < size && is_digit(data[pos])) {
        // Ten digits already exceed any input we accept.
        if (pos - start >= 10) return fail(bdecode_errc::string_too_long, start);
        length = length * 10 + static_cast<std::uint64_t>(data[pos] - '0');
        ++pos;
      }
      if (pos >= size) return fail(bdecode_errc::unexpected_eof, size);
      if (data[pos] != ':') return fail(bdecode_errc::expected_colon, pos);
      ++pos;
      if (length > limits.max_string_length) return fail(bdecode_errc::string_too_long, start);
      if (length > size - pos) return fail(bdecode_errc::unexpected_eof, size);
      const std::uint32_t header = pos - start;
      pos += static_cast<std::uint32_t>(length);
      tokens.push_back({start, pos, index + 1, header, bdecode_type::string});

      if (!stack.empty() && stack.back().dict && !stack.back().want_value) {
        // A key: strictly greater than the previous key of this dict.
        bdecode_document::frame& f = stack.back();
        if (f.last_key != no_token) {
          const std::string_view prev = string_payload(input, tokens[f.last_key]);
          const std::string_view key = string_payload(input, tokens[index]);
          const int cmp = prev.compare(key);  // char_traits<char>: unsigned bytewise
          if (cmp == 0) return fail(bdecode_errc::duplicate_key, start);
          if (cmp > 0) return fail(bdecode_errc::unsorted_keys, start);
        }
        f.last_key = index;
        f.want_value = true;
        continue;
      }
    } else if (c == 'l' || c == 'd') {
      if (stack.size() >= limits.max_depth) return fail(bdecode_errc::depth_exceeded, pos);
      const bool dict = c == 'd';
      tokens.push_back({start, 0, 0, 0, dict ? bdecode_type::dict : bdecode_type::list});
      stack.push_back({index, no_token, dict, false});
      ++pos;
      continue;
    } else {
      return fail(bdecode_errc::unexpected_character, pos);
    }

    // A scalar value completed.
    if (stack.empty()) break;
    count_child(stack.back());
  }

  if (pos != size) return fail(bdecode_errc::trailing_data, pos);
  doc.ok_ = true;
  return {};
}

// ---------------------------------------------------------------------------
// bdecode_node
// ---------------------------------------------------------------------------

const bdecode_token& bdecode_node::token() const noexcept { return doc_->tokens_[index_]; }

bdecode_type bdecode_node::type() const noexcept {
  return doc_ ? token().type : bdecode_type::none;
}

std::string_view bdecode_node::string_value() const noexcept {
  assert(is_string());
  if (!is_string()) return {};
  return string_payload(doc_->input_, token());
}

std::int64_t bdecode_node::int_value() const noexcept {
  assert(is_integer());
  if (!is_integer()) return 0;
  // The decoder validated the digits and the range.
  const bdecode_token& t = token();
  const char* p = doc_->input_.data() + t.start + 1;
  const char* const end = doc_->input_.data() + t.end - 1;
  const bool negative = *p == '-';
  if (negative) ++p;
  std::uint64_t magnitude = 0;
  for (; p != end; ++p) magnitude = magnitude * 10 + static_cast<std::uint64_t>(*p - '0');
  return negative ? static_cast<std::int64_t>(std::uint64_t{0} - magnitude)
                  : static_cast<std::int64_t>(magnitude);
}

std::string_view bdecode_node::raw() const noexcept {
  if (!doc_) return {};
  const bdecode_token& t = token();
  return doc_->input_.substr(t.start, t.end - t.start);
}

std::size_t bdecode_node::size() const noexcept {
  switch (type()) {
    case bdecode_type::list:
    case bdecode_type::dict:
      return token().aux;
    case bdecode_type::string:
      return token().end - token().start - token().aux;
    default:
      return 0;
  }
}

bdecode_node::child_iterator& bdecode_node::child_iterator::operator++() noexcept {
  index_ = doc_->tokens_[index_].next;
  return *this;
}

bdecode_node::child_range bdecode_node::children() const noexcept {
  if (!is_list() && !is_dict()) return {};
  return {child_iterator(doc_, index_ + 1), child_iterator(doc_, token().next)};
}

bdecode_node bdecode_node::list_at(std::size_t i) const noexcept {
  if (!is_list() || i >= token().aux) return {};
  std::uint32_t k = index_ + 1;
  for (; i > 0; --i) k = doc_->tokens_[k].next;
  return {doc_, k};
}

std::pair<std::string_view, bdecode_node> bdecode_node::dict_at(std::size_t i) const noexcept {
  if (!is_dict() || i >= token().aux) return {};
  const auto& tokens = doc_->tokens_;
  std::uint32_t k = index_ + 1;
  for (; i > 0; --i) k = tokens[tokens[k].next].next;  // key -> value -> next key
  return {string_payload(doc_->input_, tokens[k]), bdecode_node(doc_, tokens[k].next)};
}

bdecode_node bdecode_node::dict_find(std::string_view key) const noexcept {
  if (!is_dict()) return {};
  const auto& tokens = doc_->tokens_;
  const std::uint32_t end = token().next;
  for (std::uint32_t k = index_ + 1; k < end;) {
    const std::uint32_t v = tokens[k].next;
    const int cmp = string_payload(doc_->input_, tokens[k]).compare(key);
    if (cmp == 0) return {doc_, v};
    if (cmp > 0) break;  // keys ascend: the rest are larger still
    k = tokens[v].next;
  }
  return {};
}

std::int64_t bdecode_node::dict_find_int(std::string_view key,
                                         std::int64_t fallback) const noexcept {
  const bdecode_node n = dict_find(key);
  return n.is_integer() ? n.int_value() : fallback;
}

std::string_view bdecode_node::dict_find_string(std::string_view key,
                                                std::string_view fallback) const noexcept {
  const bdecode_node n = dict_find(key);
  return n.is_string() ? n.string_value() : fallback;
}

}  // namespace sk
