#include "protocol/bencode_value.hpp"

#include <charconv>

namespace sk {

namespace {

void append_length(std::string& out, std::size_t n) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, n);
  out.append(buf, r.ptr);
  out.push_back(':');
}

struct value_encoder {
  std::string& out;

  void operator()(const bvalue::integer& i) const {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, i);
    out.push_back('i');
    out.append(buf, r.ptr);
    out.push_back('e');
  }
  void operator()(const bvalue::string& s) const {
    append_length(out, s.size());
    out.append(s);
  }
  void operator()(const bvalue::list& l) const {
    out.push_back('l');
    for (const bvalue& item : l) std::visit(*this, item.v);
    out.push_back('e');
  }
  void operator()(const bvalue::dict& d) const {
    out.push_back('d');
    for (const auto& [key, item] : d) {
      append_length(out, key.size());
      out.append(key);
      std::visit(*this, item.v);
    }
    out.push_back('e');
  }
};

}  // namespace

void encode_value(std::string& out, const bvalue& value) {
  std::visit(value_encoder{out}, value.v);
}

std::string encode_value(const bvalue& value) {
  std::string out;
  encode_value(out, value);
  return out;
}

bvalue to_value(bdecode_node node) {
  switch (node.type()) {
    case bdecode_type::integer:
      return bvalue(node.int_value());
    case bdecode_type::string:
      return bvalue(node.string_value());
    case bdecode_type::list: {
      bvalue::list l;
      l.reserve(node.size());
      for (bdecode_node child : node.children()) l.push_back(to_value(child));
      return bvalue(std::move(l));
    }
    case bdecode_type::dict: {
      bvalue::dict d;
      const std::size_t n = node.size();
      // Walk pairs directly rather than dict_at(i), which is O(i) each.
      auto it = node.children().begin();
      for (std::size_t i = 0; i < n; ++i) {
        const std::string_view key = (*it).string_value();
        ++it;
        d.emplace_hint(d.end(), std::string(key), to_value(*it));
        ++it;
      }
      return bvalue(std::move(d));
    }
    case bdecode_type::none:
      break;
  }
  return {};
}

}  // namespace sk
