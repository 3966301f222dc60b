// Three encoders, one answer: swarmkeeper's streaming encoder, the generic
// value tree, and libtorrent's lt::entry + lt::bencode must give identical
// bytes for random replies. And the decoders: whatever our strict
// decoder accepts, lt::bdecode accepts with the same content.
//
// A separate executable so that protocol_tests does not depend on
// libtorrent-rasterbar.

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include <libtorrent/bdecode.hpp>
#include <libtorrent/bencode.hpp>
#include <libtorrent/entry.hpp>

#include "protocol/bencode.hpp"
#include "protocol/bencode_value.hpp"
#include "protocol/reply.hpp"
#include "protocol/reply_value.hpp"
#include "random_reply.hpp"
#include "random_value.hpp"
#include "test_support.hpp"

namespace sk {
namespace {

std::string lt_encode(const lt::entry& e) {
  std::string out;
  lt::bencode(std::back_inserter(out), e);
  return out;
}

/// The announce reply as libtorrent users would build it.
lt::entry lt_announce(const announce_reply_view& r) {
  lt::entry e(lt::entry::dictionary_t);
  e["interval"] = r.interval;
  e["min interval"] = r.min_interval;
  e["complete"] = r.stats.complete;
  e["incomplete"] = r.stats.incomplete;
  e["downloaded"] = r.stats.downloaded;
  if (r.compact) {
    e["peers"] = std::string(r.peers4);
    if (!r.peers6.empty()) e["peers6"] = std::string(r.peers6);
  } else {
    lt::entry::list_type peers;
    for (std::size_t i = 0; i < r.peer_count; ++i) {
      lt::entry p(lt::entry::dictionary_t);
      p["ip"] = r.peers[i].ep.ip.to_string();
      if (!r.no_peer_id) p["peer id"] = std::string(r.peers[i].id.view());
      p["port"] = static_cast<lt::entry::integer_type>(r.peers[i].ep.port);
      peers.push_back(std::move(p));
    }
    e["peers"] = std::move(peers);
  }
  if (r.external_ip) e["external ip"] = std::string(r.external_ip->raw());
  if (!r.tracker_id.empty()) e["tracker id"] = std::string(r.tracker_id);
  if (!r.warning_message.empty()) e["warning message"] = std::string(r.warning_message);
  return e;
}

lt::entry lt_from_value(const bvalue& v) {
  if (v.is_integer()) return lt::entry(v.as_integer());
  if (v.is_string()) return lt::entry(v.as_string());
  if (v.is_list()) {
    lt::entry::list_type l;
    for (const bvalue& x : v.as_list()) l.push_back(lt_from_value(x));
    return lt::entry(std::move(l));
  }
  lt::entry d(lt::entry::dictionary_t);
  for (const auto& [k, x] : v.as_dict()) d[k] = lt_from_value(x);
  return d;
}

TEST(LibtorrentDifferential, AnnounceRepliesIdenticalThreeWays) {
  auto rng = test::seeded_rng();
  test::random_reply rr;
  for (int i = 0; i < 3000; ++i) {
    test::fill_random(rng, rr);
    std::string fast;
    encode_announce_reply(fast, rr.view);
    ASSERT_EQ(fast, encode_value(announce_reply_value(rr.view))) << "iteration " << i;
    ASSERT_EQ(fast, lt_encode(lt_announce(rr.view))) << "iteration " << i;
  }
}

TEST(LibtorrentDifferential, ScrapeAndFailureIdenticalThreeWays) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 1000; ++i) {
    std::vector<scrape_entry> entries(rng() % 80);
    for (auto& e : entries) {
      e.hash = info_hash::from_bytes(test::random_bytes(rng, 20));
      e.stats = {static_cast<std::int64_t>(rng() >> (rng() % 64)),
                 static_cast<std::int64_t>(rng() % 1000), static_cast<std::int64_t>(rng() % 9)};
      e.stats.partial = e.stats.incomplete / 3;
    }
    std::sort(entries.begin(), entries.end(),
              [](const scrape_entry& a, const scrape_entry& b) { return a.hash < b.hash; });
    entries.erase(
        std::unique(entries.begin(), entries.end(),
                    [](const scrape_entry& a, const scrape_entry& b) { return a.hash == b.hash; }),
        entries.end());
    std::string fast;
    encode_scrape_reply(fast, entries.data(), entries.size());
    lt::entry e(lt::entry::dictionary_t);
    lt::entry& files = e["files"];
    files = lt::entry(lt::entry::dictionary_t);
    for (const auto& s : entries) {
      lt::entry& t = files[std::string(s.hash.view())];
      t["complete"] = s.stats.complete;
      t["downloaded"] = s.stats.downloaded;
      t["downloaders"] = s.stats.incomplete - s.stats.partial;
      t["incomplete"] = s.stats.incomplete;
    }
    ASSERT_EQ(fast, encode_value(scrape_reply_value(entries.data(), entries.size())));
    ASSERT_EQ(fast, lt_encode(e));

    const std::string reason = test::random_bytes(rng, rng() % 60);
    const std::int64_t retry = static_cast<std::int64_t>(rng() % 100) - 20;
    fast.clear();
    encode_failure(fast, reason, retry);
    lt::entry f(lt::entry::dictionary_t);
    f["failure reason"] = reason;
    if (retry < 0) {
      f["retry in"] = std::string("never");
    } else {
      f["retry in"] = retry;
    }
    ASSERT_EQ(fast, lt_encode(f));
  }
}

TEST(LibtorrentDifferential, RandomValueTreesEncodeIdentically) {
  auto rng = test::seeded_rng();
  for (int i = 0; i < 5000; ++i) {
    const bvalue v = test::random_value(rng, 5);
    ASSERT_EQ(encode_value(v), lt_encode(lt_from_value(v)));
  }
}

TEST(LibtorrentDifferential, WhatWeAcceptLibtorrentAcceptsIdentically) {
  // Our decoder is strict, libtorrent's more lenient: ours must accept a
  // subset of what lt::bdecode accepts, with the same content. Inputs: valid
  // random encodings and garbled ones.
  auto rng = test::seeded_rng();
  bdecode_document doc;
  lt::bdecode_node node;
  std::size_t both = 0, only_lt = 0;
  for (int i = 0; i < 30000; ++i) {
    std::string s = encode_value(test::random_value(rng, 4));
    if (i % 2) {
      const int mutations = 1 + static_cast<int>(rng() % 2);
      for (int m = 0; m < mutations && !s.empty(); ++m) {
        const std::size_t at = rng() % s.size();
        if (rng() % 2) {
          s[at] = "ield:-0123e"[rng() % 11];
        } else {
          s.erase(at, 1);
        }
      }
    }
    lt::error_code ec;
    lt::bdecode(s.data(), s.data() + s.size(), node, ec);
    const bool ours = static_cast<bool>(bdecode(s, doc));
    if (!ours) {
      if (!ec) ++only_lt;
      continue;
    }
    ASSERT_FALSE(ec) << "libtorrent rejects what we accept: " << ec.message();
    ++both;
    lt::entry e;
    e = node;
    ASSERT_EQ(lt_encode(e), s) << "same content";
    ASSERT_EQ(encode_value(to_value(doc.root())), s);
  }
  std::cout << both << " accepted by both, " << only_lt
            << " accepted only by libtorrent (non-canonical)\n";
  EXPECT_GT(both, 15000u);
}

}  // namespace
}  // namespace sk
