// The generic value tree: its encoder on BEP 3 examples, conversion from
// decoded tokens, and agreement with the streaming writer on random trees
// (the writer driven by a walk of the same tree).

#include <gtest/gtest.h>

#include "protocol/bencode.hpp"
#include "protocol/bencode_value.hpp"
#include "random_value.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

TEST(BencodeValue, Bep3Examples) {
  EXPECT_EQ(encode_value(bvalue("spam")), "4:spam");
  EXPECT_EQ(encode_value(bvalue(3)), "i3e");
  EXPECT_EQ(encode_value(bvalue(-3)), "i-3e");
  EXPECT_EQ(encode_value(bvalue(bvalue::list{bvalue("spam"), bvalue("eggs")})), "l4:spam4:eggse");
  bvalue::dict d;
  d["spam"] = bvalue("eggs");
  d["cow"] = bvalue("moo");  // inserted out of order: the map sorts
  EXPECT_EQ(encode_value(bvalue(d)), "d3:cow3:moo4:spam4:eggse");
  bvalue::dict d2;
  d2["spam"] = bvalue(bvalue::list{bvalue("a"), bvalue("b")});
  EXPECT_EQ(encode_value(bvalue(d2)), "d4:spaml1:a1:bee");
}

TEST(BencodeValue, MapOrderIsBytewiseUnsigned) {
  bvalue::dict d;
  d["\x80"] = bvalue(1);
  d["\x7f"] = bvalue(2);
  d["b"] = bvalue(3);
  d[std::string("a\0", 2)] = bvalue(4);
  d["a"] = bvalue(5);
  EXPECT_EQ(encode_value(bvalue(d)), std::string("d1:ai5e2:a\0i4e1:bi3e1:\x7fi2e1:\x80i1ee", 33));
}

TEST(BencodeValue, ToValueFromDecoded) {
  bdecode_document doc;
  ASSERT_TRUE(bdecode("d1:ali1e0:e1:bd1:xi-2eee", doc));
  const bvalue v = to_value(doc.root());
  ASSERT_TRUE(v.is_dict());
  EXPECT_EQ(v.as_dict().at("a").as_list().at(0).as_integer(), 1);
  EXPECT_EQ(v.as_dict().at("a").as_list().at(1).as_string(), "");
  EXPECT_EQ(v.as_dict().at("b").as_dict().at("x").as_integer(), -2);
}

void write_with_writer(bencode_writer& w, const bvalue& v) {
  if (v.is_integer()) {
    w.integer(v.as_integer());
  } else if (v.is_string()) {
    w.string(v.as_string());
  } else if (v.is_list()) {
    w.list_begin();
    for (const bvalue& x : v.as_list()) write_with_writer(w, x);
    w.list_end();
  } else {
    w.dict_begin();
    for (const auto& [k, x] : v.as_dict()) {
      w.key(k);
      write_with_writer(w, x);
    }
    w.dict_end();
  }
}

TEST(BencodeValue, WriterAndValueEncoderAgreeOnRandomTrees) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 5000; ++i) {
    const bvalue v = test::random_value(rng, 5);
    std::string a;
    bencode_writer w(a);
    write_with_writer(w, v);
    EXPECT_TRUE(w.complete());
    ASSERT_EQ(a, encode_value(v));
  }
}

}  // namespace
}  // namespace sk
