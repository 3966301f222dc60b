// libFuzzer target: the bencode decoder (protocol/bencode.hpp) and, on every
// input it accepts, the two encoders.
//
// Invariants checked besides "no sanitizer report":
// - a failure names a position inside the input (0..size) and leaves no root;
// - every token lies inside the input, and `next` skips exactly its subtree;
// - the decoder is strict, so an accepted input is the canonical encoding of
//   its value: the value tree's encoder and the streaming `bencode_writer`
//   (its debug key-order checks are on in this build) both reproduce the
//   input byte for byte (the writer only up to the nesting its debug checker
//   follows, `bencode_writer::max_checked_depth`; the decoder allows more);
// - node accessors agree with each other (children, list_at, dict_at,
//   dict_find, typed lookups, raw());
// - tighter limits never accept what the defaults reject, and when they
//   reject for a reason other than a limit, the defaults reject the same way
//   at the same position.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "protocol/bencode.hpp"
#include "protocol/bencode_value.hpp"

namespace {

using sk::bdecode_errc;
using sk::bdecode_node;
using sk::bdecode_type;

bool is_limit_error(const std::error_code& ec) {
  return ec == bdecode_errc::input_too_long || ec == bdecode_errc::integer_too_long ||
         ec == bdecode_errc::string_too_long || ec == bdecode_errc::depth_exceeded ||
         ec == bdecode_errc::too_many_tokens;
}

/// Re-encodes `node` through the streaming writer, checking accessors on the way.
void rewrite(const bdecode_node& node, sk::bencode_writer& w, std::string_view input) {
  const std::string_view raw = node.raw();
  FUZZ_CHECK(raw.data() >= input.data() && raw.data() + raw.size() <= input.data() + input.size());
  switch (node.type()) {
    case bdecode_type::integer:
      w.integer(node.int_value());
      return;
    case bdecode_type::string: {
      const std::string_view s = node.string_value();
      FUZZ_CHECK(s.size() == node.size());
      FUZZ_CHECK(s.data() + s.size() == raw.data() + raw.size());
      w.string(s);
      return;
    }
    case bdecode_type::list: {
      w.list_begin();
      std::size_t i = 0;
      for (const bdecode_node child : node.children()) {
        FUZZ_CHECK(node.list_at(i).token_index() == child.token_index());
        rewrite(child, w, input);
        ++i;
      }
      FUZZ_CHECK(i == node.size());
      FUZZ_CHECK(!node.list_at(i));
      w.list_end();
      return;
    }
    case bdecode_type::dict: {
      w.dict_begin();
      std::size_t pairs = 0;
      auto it = node.children().begin();
      const auto end = node.children().end();
      while (it != end) {
        const bdecode_node key = *it;
        FUZZ_CHECK(key.is_string());
        ++it;
        FUZZ_CHECK(it != end);
        const bdecode_node value = *it;
        ++it;
        const std::string_view k = key.string_value();
        // Only the first few pairs: dict_at and dict_find are linear.
        if (pairs < 16) {
          const auto at = node.dict_at(pairs);
          FUZZ_CHECK(at.first == k && at.second.token_index() == value.token_index());
          FUZZ_CHECK(node.dict_find(k).token_index() == value.token_index());
          if (value.is_integer()) FUZZ_CHECK(node.dict_find_int(k, -7) == value.int_value());
          if (value.is_string()) FUZZ_CHECK(node.dict_find_string(k) == value.string_value());
        }
        w.key(k);
        rewrite(value, w, input);
        ++pairs;
      }
      FUZZ_CHECK(pairs == node.size());
      w.dict_end();
      return;
    }
    case bdecode_type::none:
      break;
  }
  FUZZ_CHECK(!"a decoded node has no type");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // One document reused across inputs, as the tracker reuses one per worker.
  static sk::bdecode_document doc;
  const sk::bdecode_result r = sk::bdecode(input, doc);

  sk::bdecode_limits tight;
  tight.max_input_length = 512;
  tight.max_depth = 3;
  tight.max_tokens = 24;
  tight.max_string_length = 16;
  tight.max_integer_digits = 4;
  sk::bdecode_document tight_doc;
  const sk::bdecode_result t = sk::bdecode(input, tight_doc, tight);

  if (!r) {
    FUZZ_CHECK(r.position <= size);
    FUZZ_CHECK(!doc.root());
    FUZZ_CHECK(!r.ec.message().empty());
    FUZZ_CHECK(!t);  // tighter limits never accept more
    if (!is_limit_error(t.ec)) FUZZ_CHECK(t.ec == r.ec && t.position == r.position);
    return 0;
  }

  // Token array shape.
  const auto& tokens = doc.tokens();
  FUZZ_CHECK(!tokens.empty());
  FUZZ_CHECK(tokens[0].start == 0 && tokens[0].end == size);
  FUZZ_CHECK(tokens[0].next == tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const auto& tok = tokens[i];
    FUZZ_CHECK(tok.start < tok.end && tok.end <= size);
    FUZZ_CHECK(tok.next > i && tok.next <= tokens.size());
    if (tok.type == bdecode_type::string || tok.type == bdecode_type::integer)
      FUZZ_CHECK(tok.next == i + 1);
    if (tok.next < tokens.size()) FUZZ_CHECK(tokens[tok.next].start >= tok.end);
  }

  std::size_t deepest = 0;
  {
    // Containers still open at each token: a stack of their `next` indexes.
    std::vector<std::uint32_t> open;
    for (std::uint32_t i = 0; i < tokens.size(); ++i) {
      while (!open.empty() && open.back() <= i) open.pop_back();
      if (tokens[i].type == bdecode_type::list || tokens[i].type == bdecode_type::dict) {
        open.push_back(tokens[i].next);
        deepest = open.size() > deepest ? open.size() : deepest;
      }
    }
  }
  FUZZ_CHECK(deepest <= sk::bdecode_limits{}.max_depth);

  const bdecode_node root = doc.root();
  FUZZ_CHECK(root && root.raw() == input);

  // Canonical: both encoders give back the input.
  const sk::bvalue value = sk::to_value(root);
  FUZZ_CHECK(sk::encode_value(value) == input);
  if (deepest <= sk::bencode_writer::max_checked_depth) {
    std::string streamed;
    {
      sk::bencode_writer w(streamed);
      rewrite(root, w, input);
      FUZZ_CHECK(w.complete());
    }
    FUZZ_CHECK(streamed == input);
  }

  // Tight limits: accept the same tokens, or reject for a limit only.
  if (t) {
    FUZZ_CHECK(tight_doc.tokens().size() == tokens.size());
    FUZZ_CHECK(sk::to_value(tight_doc.root()) == value);
  } else {
    FUZZ_CHECK(is_limit_error(t.ec));
  }
  return 0;
}
