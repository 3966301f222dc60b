#pragma once
/// Bencode (BEP 3): a streaming encoder and a strict zero-copy decoder.
///
/// Encoder: `bencode_writer` appends to a `std::string` the caller owns and
/// reuses, so a warm buffer means no allocation at all. Integers are
/// formatted by hand, two digits at a time.
///
/// Decoder: `bdecode` turns the input into a flat array of tokens (one per
/// item, in document order) that point into the input; nothing is copied.
/// `bdecode_node` walks that array. The input must outlive the document.
///
///     input:  d 3:cow 3:moo 4:spam l 1:a 1:b e e
///     tokens: [0] dict  next=6 count=2
///             [1] "cow" next=2
///             [2] "moo" next=3
///             [3] "spam" next=4
///             [4] list  next=6 count=2
///             [5] "a"   next=6 ... (a scalar's next is always index+1)
///
/// `next` is the index just after an item's whole subtree, so siblings are
/// reached without walking children.
///
/// The decoder is strict — it accepts exactly the canonical encoding, the one
/// `bencode_writer` produces — because a tracker never needs to be lenient
/// with bencode and every leniency is an ambiguity (two encodings of one
/// value hash differently). Rejected: leading zeros in integers and string
/// lengths, `-0`, dictionary keys out of strictly ascending bytewise order
/// (including duplicates), non-string keys, trailing bytes after the root.

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace sk {

// ---------------------------------------------------------------------------
// Integer formatting (shared by the writer and the reply encoders)
// ---------------------------------------------------------------------------

namespace detail {
/// "00" "01" ... "99": two digits per table lookup halves the divisions.
inline constexpr char digit_pairs[201] =
    "0001020304050607080910111213141516171819"
    "2021222324252627282930313233343536373839"
    "4041424344454647484950515253545556575859"
    "6061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/// Writes the decimal digits of `v` so that they end just before `end`;
/// returns the first digit. Needs 20 bytes of room before `end`.
inline char* write_decimal_backwards(char* end, std::uint64_t v) noexcept {
  while (v >= 100) {
    const auto r = static_cast<std::size_t>(v % 100);
    v /= 100;
    end -= 2;
    std::memcpy(end, digit_pairs + 2 * r, 2);
  }
  if (v >= 10) {
    end -= 2;
    std::memcpy(end, digit_pairs + 2 * v, 2);
  } else {
    *--end = static_cast<char>('0' + v);
  }
  return end;
}

/// Number of decimal digits of `v` (1 for 0).
inline std::size_t decimal_length(std::uint64_t v) noexcept {
  std::size_t n = 1;
  for (;;) {
    if (v < 10) return n;
    if (v < 100) return n + 1;
    if (v < 1000) return n + 2;
    if (v < 10000) return n + 3;
    v /= 10000;
    n += 4;
  }
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Encoder
// ---------------------------------------------------------------------------

/// Streams bencode into a caller-owned buffer.
///
/// The caller opens and closes containers in order and writes dictionary keys
/// in strictly ascending bytewise order (what BEP 3 requires). In debug builds
/// (no NDEBUG) every call is checked — key order, a key before each dict
/// value, balanced begin/end, one root item — and a violation asserts: it is
/// a bug in the caller, not an input error. Release builds check nothing.
///
/// Small items (integers, keys, short strings, brackets) are staged in a
/// scratch buffer on the stack and reach `out` in large pieces: a
/// std::string append is an out-of-line call, and one per item was most of
/// the cost of a reply. Large string payloads are appended straight from the
/// caller's memory. Staged bytes reach `out` when the root item is complete,
/// on `flush()`, and in the destructor — so `out` holds the whole encoding as
/// soon as the root item's last byte was written.
///
///     bencode_writer w(out);       out: "HTTP/1.1 200 ..."   (untouched prefix)
///     w.dict_begin();              scratch: "d"
///     w.int_entry("a", 1);         scratch: "d1:ai1e"
///     w.string_entry("p", blob);   scratch flushed, then blob appended
///     w.dict_end();                root complete: everything is in out
///
/// The debug key-order check keeps no copies: it flushes before each key and
/// remembers where the previous key of each open dictionary lies in `out`, so
/// the caller must not modify `out` while a writer is writing to it.
class bencode_writer {
 public:
  /// Nesting the debug checker can follow; deeper nesting asserts.
  static constexpr std::size_t max_checked_depth = 32;

  explicit bencode_writer(std::string& out) noexcept : out_(out) {}
  ~bencode_writer() { flush(); }
  bencode_writer(const bencode_writer&) = delete;
  bencode_writer& operator=(const bencode_writer&) = delete;

  /// `i<v>e`.
  void integer(std::int64_t v) {
    on_value();
    reserve_scratch(max_integer_bytes);
    char* const start = scratch_ + used_;
    const std::uint64_t mag =
        v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    const std::size_t digits = detail::decimal_length(mag);
    char* p = start;
    *p++ = 'i';
    if (v < 0) *p++ = '-';
    p += digits;
    detail::write_decimal_backwards(p, mag);
    *p++ = 'e';
    used_ = static_cast<std::size_t>(p - scratch_);
    after_scalar();
  }

  /// `<len>:<bytes>`; binary-safe.
  void string(std::string_view s) {
    on_value();
    put_string(s);
    after_scalar();
  }

  void list_begin() { open('l', false); }
  void list_end() { close(false); }
  void dict_begin() { open('d', true); }
  void dict_end() { close(true); }

  /// A dictionary key; must be greater than the previous key of this dict.
  void key(std::string_view k) {
    check_key(k);
    put_string(k);
  }

  /// Shorthands for `key(k); integer(v)` and `key(k); string(v)`.
  void int_entry(std::string_view k, std::int64_t v) {
    key(k);
    integer(v);
  }
  void string_entry(std::string_view k, std::string_view v) {
    key(k);
    string(v);
  }

  /// Appends bytes that already are exactly one bencoded item (e.g. a cached
  /// fragment). Not validated beyond counting as one value.
  void raw(std::string_view encoded_item) {
    on_value();
    put_bytes(encoded_item);
    after_scalar();
  }

  /// Moves staged bytes to `out` (done automatically when the root item
  /// completes and in the destructor).
  void flush() {
    if (used_) {
      out_.append(scratch_, used_);
      used_ = 0;
    }
  }

  /// True when exactly one complete root item has been written (debug
  /// builds; release builds always return true).
  bool complete() const noexcept {
#ifndef NDEBUG
    return depth_ == 0 && root_written_;
#else
    return true;
#endif
  }

 private:
  static constexpr std::size_t scratch_size = 256;
  /// 'i' '-' 19 digits 'e'
  static constexpr std::size_t max_integer_bytes = 22;
  /// 20 length digits ':'
  static constexpr std::size_t max_prefix_bytes = 21;

  void reserve_scratch(std::size_t n) {
    if (scratch_size - used_ < n) flush();
  }

  /// Bytes into scratch when they fit, else straight to `out`.
  void put_bytes(std::string_view s) {
    if (s.empty()) return;  // data() may be null; memcpy(_, nullptr, 0) is UB
    if (s.size() <= scratch_size - used_) {
      std::memcpy(scratch_ + used_, s.data(), s.size());
      used_ += s.size();
    } else {
      flush();
      out_.append(s.data(), s.size());
    }
  }

  void put_string(std::string_view s) {
    reserve_scratch(max_prefix_bytes);
    const std::size_t digits = detail::decimal_length(s.size());
    char* p = scratch_ + used_ + digits;
    detail::write_decimal_backwards(p, s.size());
    *p++ = ':';
    used_ = static_cast<std::size_t>(p - scratch_);
    put_bytes(s);
  }

  void open(char c, bool dict) {
    on_value();
    reserve_scratch(1);
    scratch_[used_++] = c;
    ++open_;
#ifndef NDEBUG
    assert(depth_ < max_checked_depth && "bencode_writer: nesting deeper than the checker follows");
    frames_[depth_] = frame{dict, false, false, 0, 0};
    ++depth_;
#else
    (void)dict;
#endif
  }

  void close([[maybe_unused]] bool dict) {
#ifndef NDEBUG
    assert(depth_ > 0 && "bencode_writer: end without begin");
    assert(frames_[depth_ - 1].dict == dict && "bencode_writer: list/dict end mismatch");
    assert(!frames_[depth_ - 1].want_value && "bencode_writer: dict key without value");
    --depth_;
#endif
    reserve_scratch(1);
    scratch_[used_++] = 'e';
    if (open_ > 0) --open_;
    if (open_ == 0) flush();  // the root item is complete
  }

  void after_scalar() {
    if (open_ == 0) flush();  // a scalar root item is complete
  }

  /// Debug bookkeeping before any value (scalar or container).
  void on_value() noexcept {
#ifndef NDEBUG
    if (depth_ == 0) {
      assert(!root_written_ && "bencode_writer: more than one root item");
      root_written_ = true;
      return;
    }
    frame& f = frames_[depth_ - 1];
    if (f.dict) {
      assert(f.want_value && "bencode_writer: dict value without key");
      f.want_value = false;
    }
#endif
  }

  void check_key([[maybe_unused]] std::string_view k) {
#ifndef NDEBUG
    assert(depth_ > 0 && frames_[depth_ - 1].dict && "bencode_writer: key outside a dict");
    frame& f = frames_[depth_ - 1];
    assert(!f.want_value && "bencode_writer: two keys in a row");
    flush();  // debug only: the previous key must be in out_ to compare
    if (f.has_key) {
      const std::string_view prev(out_.data() + f.key_offset, f.key_length);
      // Bytewise: string_view compares through char_traits<char>, which
      // orders as unsigned char.
      assert(prev < k && "bencode_writer: dict keys not in strictly ascending order");
    }
    // The key's bytes will land after "<digits>:" at the current end of out_.
    f.key_offset = out_.size() + detail::decimal_length(k.size()) + 1;
    f.key_length = k.size();
    f.has_key = true;
    f.want_value = true;
#endif
  }

  std::string& out_;
  std::size_t used_ = 0;  ///< staged bytes in scratch_
  std::size_t open_ = 0;  ///< open containers (release builds track it too)
  char scratch_[scratch_size];
#ifndef NDEBUG
  struct frame {
    bool dict;
    bool want_value;
    bool has_key;
    std::size_t key_offset;
    std::size_t key_length;
  };
  frame frames_[max_checked_depth];
  std::size_t depth_ = 0;
  bool root_written_ = false;
#endif
};

// ---------------------------------------------------------------------------
// Decoder
// ---------------------------------------------------------------------------

/// Why `bdecode` rejected its input. Each comes with a byte position.
enum class bdecode_errc {
  ok = 0,
  input_too_long,        ///< input longer than `max_input_length`
  unexpected_eof,        ///< input ended inside an item (position = input size)
  unexpected_character,  ///< a byte that cannot start an item
  expected_digit,        ///< `i` or `i-` not followed by a digit
  expected_integer_end,  ///< integer digits not followed by `e`
  expected_colon,        ///< string length not followed by `:`
  leading_zero,          ///< `i03e` or `03:abc`
  negative_zero,         ///< `i-0e`
  integer_overflow,      ///< does not fit in int64
  integer_too_long,      ///< more digits than `max_integer_digits`
  string_too_long,       ///< longer than `max_string_length`
  depth_exceeded,        ///< containers nested deeper than `max_depth`
  too_many_tokens,       ///< more items than `max_tokens`
  key_not_string,        ///< a dictionary key that is not a string
  unsorted_keys,         ///< a key smaller than the key before it
  duplicate_key,         ///< a key equal to the key before it
  missing_value,         ///< a dictionary ends after a key
  trailing_data,         ///< bytes after the root item
};

const std::error_category& bdecode_category() noexcept;
std::error_code make_error_code(bdecode_errc e) noexcept;

/// Limits `bdecode` enforces; each has its own error.
struct bdecode_limits {
  /// Hard ceiling 0xFFFFFFFE: tokens hold 32-bit offsets.
  std::size_t max_input_length = 1u << 20;
  /// Root container is depth 1.
  std::uint32_t max_depth = 64;
  /// One token per item (integer, string, list or dict).
  std::uint32_t max_tokens = 1u << 20;
  std::size_t max_string_length = 1u << 20;
  /// At most 19 (every int64 fits in 19 digits), a smaller value tightens it.
  std::uint32_t max_integer_digits = 19;
};

enum class bdecode_type : std::uint8_t { none = 0, dict, list, string, integer };

/// One item of the flat token array (see the picture at the top).
struct bdecode_token {
  std::uint32_t start;  ///< offset of the item's first byte ('i', 'l', 'd' or a length digit)
  std::uint32_t end;    ///< offset one past the item's last byte
  std::uint32_t next;   ///< index of the token after this item's subtree
  /// Strings: bytes before the payload (length digits + ':').
  /// Lists: number of elements. Dicts: number of key/value pairs.
  std::uint32_t aux;
  bdecode_type type;
};

class bdecode_document;

/// A view of one decoded item; cheap to copy. A default-constructed node is
/// "none" (what lookups return when nothing matches). Accessors that need a
/// particular type assert it in debug builds and return an empty value in
/// release builds.
class bdecode_node {
 public:
  bdecode_node() = default;

  bdecode_type type() const noexcept;
  explicit operator bool() const noexcept { return doc_ != nullptr; }
  bool is_dict() const noexcept { return type() == bdecode_type::dict; }
  bool is_list() const noexcept { return type() == bdecode_type::list; }
  bool is_string() const noexcept { return type() == bdecode_type::string; }
  bool is_integer() const noexcept { return type() == bdecode_type::integer; }

  /// The payload of a string (points into the input).
  std::string_view string_value() const noexcept;
  /// The value of an integer.
  std::int64_t int_value() const noexcept;
  /// The whole encoded item, e.g. to hash an info dictionary.
  std::string_view raw() const noexcept;

  /// Elements of a list, key/value pairs of a dict, bytes of a string.
  std::size_t size() const noexcept;

  /// The i-th list element (O(i)); none when out of range.
  bdecode_node list_at(std::size_t i) const noexcept;
  /// The i-th key/value pair of a dict (O(i)); {"", none} when out of range.
  std::pair<std::string_view, bdecode_node> dict_at(std::size_t i) const noexcept;
  /// The value for `key`; none when absent or not a dict. Linear, stops
  /// early thanks to the key order the decoder guarantees.
  bdecode_node dict_find(std::string_view key) const noexcept;
  /// Typed lookups: none/nullopt-like defaults when absent or of another type.
  std::int64_t dict_find_int(std::string_view key, std::int64_t fallback = 0) const noexcept;
  std::string_view dict_find_string(std::string_view key,
                                    std::string_view fallback = {}) const noexcept;

  /// Forward iteration over the children of a list (elements) or a dict
  /// (keys and values alternately; use `dict_at`/`dict_items` for pairs).
  class child_iterator {
   public:
    using value_type = bdecode_node;
    using difference_type = std::ptrdiff_t;
    using reference = bdecode_node;
    using pointer = void;
    using iterator_category = std::forward_iterator_tag;

    child_iterator() = default;
    bdecode_node operator*() const noexcept { return bdecode_node(doc_, index_); }
    child_iterator& operator++() noexcept;
    child_iterator operator++(int) noexcept {
      auto copy = *this;
      ++*this;
      return copy;
    }
    friend bool operator==(const child_iterator& a, const child_iterator& b) noexcept {
      return a.index_ == b.index_;
    }
    friend bool operator!=(const child_iterator& a, const child_iterator& b) noexcept {
      return a.index_ != b.index_;
    }

   private:
    friend class bdecode_node;
    child_iterator(const bdecode_document* d, std::uint32_t i) : doc_(d), index_(i) {}
    const bdecode_document* doc_ = nullptr;
    std::uint32_t index_ = 0;
  };
  struct child_range {
    child_iterator first, last;
    child_iterator begin() const noexcept { return first; }
    child_iterator end() const noexcept { return last; }
  };
  /// Children of a list or dict; empty for anything else.
  child_range children() const noexcept;

  /// Index of this node's token (tests, diagnostics).
  std::uint32_t token_index() const noexcept { return index_; }

 private:
  friend class bdecode_document;
  bdecode_node(const bdecode_document* d, std::uint32_t i) : doc_(d), index_(i) {}
  const bdecode_token& token() const noexcept;

  const bdecode_document* doc_ = nullptr;
  std::uint32_t index_ = 0;
};

/// The outcome of `bdecode`: an error code and, on failure, the byte offset
/// where the problem was found.
struct bdecode_result {
  std::error_code ec;
  std::size_t position = 0;
  explicit operator bool() const noexcept { return !ec; }
};

/// Decoded tokens plus a view of their input. Reuse one document across
/// decodes: its token array keeps its capacity, so steady-state decoding
/// allocates nothing.
class bdecode_document {
 public:
  /// The root item; none when the last decode failed or none happened.
  bdecode_node root() const noexcept {
    return ok_ && !tokens_.empty() ? bdecode_node(this, 0) : bdecode_node();
  }
  std::string_view input() const noexcept { return input_; }
  const std::vector<bdecode_token>& tokens() const noexcept { return tokens_; }

 private:
  friend class bdecode_node;
  friend bdecode_result bdecode(std::string_view, bdecode_document&, const bdecode_limits&);

  struct frame {
    std::uint32_t token;     ///< the open container's token
    std::uint32_t last_key;  ///< token of the previous key (dicts), or npos
    bool dict;
    bool want_value;  ///< dicts: a key was read, its value comes next
  };

  std::string_view input_;
  std::vector<bdecode_token> tokens_;
  std::vector<frame> stack_;
  bool ok_ = false;
};

/// Decodes `input` into `doc`. On success `doc.root()` is the root item.
bdecode_result bdecode(std::string_view input, bdecode_document& doc,
                       const bdecode_limits& limits = {});

}  // namespace sk

namespace std {
template <>
struct is_error_code_enum<sk::bdecode_errc> : true_type {};
}  // namespace std
