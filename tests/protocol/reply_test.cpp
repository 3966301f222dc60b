// Reply encoders: exact bytes for the BEP examples (3, 23, 7, 24, 31, 48),
// decodability by our strict decoder, a differential test against the
// generic value-tree encoder on random replies, every truncation, and no
// allocation into a warm buffer.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "protocol/bencode.hpp"
#include "protocol/reply.hpp"
#include "protocol/reply_value.hpp"
#include "random_reply.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

using namespace std::string_literals;

std::string announce(const announce_reply_view& r) {
  std::string out;
  encode_announce_reply(out, r);
  return out;
}

announce_reply_view base_reply() {
  announce_reply_view r;
  r.interval = 1800;
  r.min_interval = 900;
  r.stats = {5, 3, 10};
  return r;
}

peer_id make_peer_id(char fill) { return peer_id::from_bytes(std::string(20, fill)); }

TEST(AnnounceReply, CompactIpv4Bep23) {
  announce_reply_view r = base_reply();
  const std::string peers = "\x7f\x00\x00\x01\x1a\xe1"s + "\xc0\xa8\x01\x02\xc8\xd5"s;
  r.peers4 = peers;
  EXPECT_EQ(announce(r),
            "d8:completei5e10:downloadedi10e10:incompletei3e8:intervali1800e"
            "12:min intervali900e5:peers12:"s +
                peers + "e");
}

TEST(AnnounceReply, EmptySwarmStillHasPeers) {
  announce_reply_view r = base_reply();
  r.stats = {0, 0, 0};
  EXPECT_EQ(announce(r),
            "d8:completei0e10:downloadedi0e10:incompletei0e8:intervali1800e"
            "12:min intervali900e5:peers0:e");
  r.compact = false;
  EXPECT_EQ(announce(r),
            "d8:completei0e10:downloadedi0e10:incompletei0e8:intervali1800e"
            "12:min intervali900e5:peerslee");
}

TEST(AnnounceReply, CompactIpv6Bep7) {
  announce_reply_view r = base_reply();
  // [2001:db8::1]:6881
  const std::string peer6 = "\x20\x01\x0d\xb8"s + std::string(11, '\0') + "\x01\x1a\xe1"s;
  r.peers6 = peer6;
  EXPECT_EQ(announce(r),
            "d8:completei5e10:downloadedi10e10:incompletei3e8:intervali1800e"
            "12:min intervali900e5:peers0:6:peers618:"s +
                peer6 + "e");
}

TEST(AnnounceReply, ExternalIpBep24) {
  announce_reply_view r = base_reply();
  r.external_ip = ip_address::make_v4(0xcb007107u);  // 203.0.113.7
  EXPECT_EQ(announce(r),
            "d8:completei5e10:downloadedi10e11:external ip4:\xcb\x00\x71\x07"
            "10:incompletei3e8:intervali1800e12:min intervali900e5:peers0:e"s);
  ip_address v6;
  ASSERT_TRUE(ip_address::parse("2001:db8::7", v6));
  r.external_ip = v6;
  const std::string enc = announce(r);
  EXPECT_NE(enc.find("11:external ip16:\x20\x01\x0d\xb8"s + std::string(10, '\0') + "\x00\x07"s),
            std::string::npos);
}

TEST(AnnounceReply, TrackerIdAndWarningComeLast) {
  announce_reply_view r = base_reply();
  r.tracker_id = "tid";
  r.warning_message = "slow down";
  EXPECT_EQ(announce(r),
            "d8:completei5e10:downloadedi10e10:incompletei3e8:intervali1800e"
            "12:min intervali900e5:peers0:10:tracker id3:tid15:warning message9:slow downe");
}

TEST(AnnounceReply, NonCompactListOfDictsBep3) {
  announce_reply_view r = base_reply();
  peer_entry peers[2];
  peers[0].id = make_peer_id('A');
  peers[0].ep = {ip_address::make_v4(0x0a000001u), 6881};
  ASSERT_TRUE(ip_address::parse("2001:db8::1", peers[1].ep.ip));
  peers[1].id = make_peer_id('B');
  peers[1].ep.port = 51413;
  r.compact = false;
  r.peers = peers;
  r.peer_count = 2;
  const std::string head =
      "d8:completei5e10:downloadedi10e10:incompletei3e8:intervali1800e12:min intervali900e";
  EXPECT_EQ(announce(r), head + "5:peersl" + "d2:ip8:10.0.0.17:peer id20:" + std::string(20, 'A') +
                             "4:porti6881ee" + "d2:ip11:2001:db8::17:peer id20:" +
                             std::string(20, 'B') + "4:porti51413ee" + "ee");
  r.no_peer_id = true;
  EXPECT_EQ(announce(r), head + "5:peersl" + "d2:ip8:10.0.0.14:porti6881ee" +
                             "d2:ip11:2001:db8::14:porti51413ee" + "ee");
}

TEST(AnnounceReply, AppendsToExistingBuffer) {
  std::string out = "prefix";
  announce_reply_view r = base_reply();
  encode_announce_reply(out, r);
  encode_announce_reply(out, r);
  const std::string one = announce(r);
  EXPECT_EQ(out, "prefix" + one + one);
}

TEST(FailureReply, Bep31) {
  std::string out;
  encode_failure(out, "tracker is overloaded");
  EXPECT_EQ(out, "d14:failure reason21:tracker is overloadede");
  out.clear();
  encode_failure(out, "tracker is overloaded", 60);
  EXPECT_EQ(out, "d14:failure reason21:tracker is overloaded8:retry ini60ee");
  out.clear();
  encode_failure(out, "banned", -1);
  EXPECT_EQ(out, "d14:failure reason6:banned8:retry in5:nevere");
  out.clear();
  encode_failure(out, "", 0);
  EXPECT_EQ(out, "d14:failure reason0:8:retry ini0ee");
}

TEST(ScrapeReply, Bep48ExamplePlusBep21Downloaders) {
  // BEP 48's example with BEP 21's `downloaders` (incomplete minus partial
  // seeds) in its bytewise place, after `downloaded`.
  const scrape_entry e{info_hash::from_bytes("...................."), {5, 10, 50, 3}};
  std::string out;
  encode_scrape_reply(out, &e, 1);
  EXPECT_EQ(out,
            "d5:filesd20:....................d8:completei5e10:downloadedi50e11:downloadersi7e"
            "10:incompletei10eeee");
  out.clear();
  encode_scrape_reply(out, nullptr, 0);
  EXPECT_EQ(out, "d5:filesdee");
}

TEST(Replies, DecodeWithStrictDecoder) {
  announce_reply_view r = base_reply();
  const std::string peers = "\x01\x02\x03\x04\x05\x06"s;
  r.peers4 = peers;
  r.external_ip = ip_address::make_v4(0x01020304u);
  r.tracker_id = "t";
  r.warning_message = "w";
  const std::string enc = announce(r);
  bdecode_document doc;
  ASSERT_TRUE(bdecode(enc, doc));
  const bdecode_node root = doc.root();
  EXPECT_EQ(root.dict_find_int("interval"), 1800);
  EXPECT_EQ(root.dict_find_int("min interval"), 900);
  EXPECT_EQ(root.dict_find_int("complete"), 5);
  EXPECT_EQ(root.dict_find_int("incomplete"), 3);
  EXPECT_EQ(root.dict_find_int("downloaded"), 10);
  EXPECT_EQ(root.dict_find_string("peers"), peers);
  EXPECT_EQ(root.dict_find_string("external ip"), "\x01\x02\x03\x04");
  EXPECT_EQ(root.dict_find_string("tracker id"), "t");
  EXPECT_EQ(root.dict_find_string("warning message"), "w");
}

// ---------------------------------------------------------------------------
// Differential: streaming encoder vs value tree, random replies
// ---------------------------------------------------------------------------

TEST(ReplyDifferential, AnnounceMatchesValueTree) {
  auto rng = test::seeded_rng();
  test::random_reply rr;
  bdecode_document doc;
  for (int i = 0; i < 5000; ++i) {
    test::fill_random(rng, rr);
    const std::string fast = announce(rr.view);
    ASSERT_EQ(fast, encode_value(announce_reply_value(rr.view))) << "iteration " << i;
    ASSERT_TRUE(bdecode(fast, doc)) << "our decoder accepts our encoder";
  }
}

TEST(ReplyDifferential, ScrapeAndFailureMatchValueTree) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 2000; ++i) {
    std::vector<scrape_entry> entries(rng() % 80);
    for (auto& e : entries) {
      e.hash = info_hash::from_bytes(test::random_bytes(rng, 20));
      e.stats = {static_cast<std::int64_t>(rng() >> (rng() % 64)),
                 static_cast<std::int64_t>(rng() >> (rng() % 64)),
                 -static_cast<std::int64_t>(rng() % 5)};
    }
    std::sort(entries.begin(), entries.end(),
              [](const scrape_entry& a, const scrape_entry& b) { return a.hash < b.hash; });
    entries.erase(
        std::unique(entries.begin(), entries.end(),
                    [](const scrape_entry& a, const scrape_entry& b) { return a.hash == b.hash; }),
        entries.end());
    std::string out;
    encode_scrape_reply(out, entries.data(), entries.size());
    ASSERT_EQ(out, encode_value(scrape_reply_value(entries.data(), entries.size())));

    const std::string reason = test::random_bytes(rng, rng() % 100);
    std::optional<std::int64_t> retry;
    if (rng() % 3) retry = static_cast<std::int64_t>(rng() % 200) - 50;
    out.clear();
    encode_failure(out, reason, retry);
    ASSERT_EQ(out, encode_value(failure_value(reason, retry)));
  }
}

TEST(Replies, EveryTruncationIsRejected) {
  auto rng = test::seeded_rng();
  test::random_reply rr;
  bdecode_document doc;
  for (int i = 0; i < 100; ++i) {
    test::fill_random(rng, rr);
    const std::string enc = announce(rr.view);
    for (std::size_t n = 0; n < enc.size(); ++n) {
      const bdecode_result res = bdecode(std::string_view(enc).substr(0, n), doc);
      ASSERT_EQ(res.ec, bdecode_errc::unexpected_eof);
      ASSERT_EQ(res.position, n);
    }
  }
}

TEST(Replies, WarmBufferEncodesWithoutAllocating) {
  auto rng = test::seeded_rng();
  test::random_reply rr;
  test::fill_random(rng, rr);
  std::vector<scrape_entry> entries(74);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string h(20, '\0');
    h[0] = static_cast<char>(i);
    entries[i].hash = info_hash::from_bytes(h);
  }
  std::string out;
  out.reserve(1 << 16);
  const std::uint64_t before = test::allocations();
  for (int i = 0; i < 100; ++i) {
    for (bool compact : {true, false}) {
      rr.view.compact = compact;
      out.clear();
      encode_announce_reply(out, rr.view);
    }
    out.clear();
    encode_scrape_reply(out, entries.data(), entries.size());
    out.clear();
    encode_failure(out, "this is a failure reason longer than the small-string buffer", 5);
  }
  EXPECT_EQ(test::allocations() - before, 0u);
}

}  // namespace
}  // namespace sk
