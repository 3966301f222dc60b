// BEP 15 byte layouts (hand-built packets), field mapping, BEP 41 options,
// limits, errors, the connection-id gate, and random round trips.

#include "protocol/udp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_seed.hpp"

namespace {

using std::chrono::seconds;
using namespace sk;

std::string bytes(std::initializer_list<int> list) {
  std::string s;
  for (int b : list) {
    s.push_back(static_cast<char>(b));
  }
  return s;
}

std::string repeat(int byte, std::size_t n) { return std::string(n, static_cast<char>(byte)); }

/// Test-side big-endian writer, independent of the code under test.
void put_be(std::string& s, std::size_t offset, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) {
    s[offset + static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * (width - 1 - i)));
  }
}

query_limits default_limits() { return query_limits{}; }

// -- the fixed announce used by several tests -------------------------------
//
// connection id 01..08, transaction id cafebabe, info_hash 20 x 0xa1,
// peer_id "-qB4650-" + 12 x 'x', downloaded 0x0102030405060708, left 1000,
// uploaded 0, event 2 (started), IP 192.0.2.55, key 0x0a0b0c0d, num_want 30,
// port 6881 (0x1ae1).
std::string sample_announce() {
  return bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // connection id
                0x00, 0x00, 0x00, 0x01,                          // action: announce
                0xca, 0xfe, 0xba, 0xbe}) +                       // transaction id
         repeat(0xa1, 20) +                                      // info_hash
         std::string("-qB4650-xxxxxxxxxxxx") +                   // peer_id
         bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // downloaded
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xe8,  // left = 1000
                0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // uploaded = 0
                0x00, 0x00, 0x00, 0x02,                          // event: started
                0xc0, 0x00, 0x02, 0x37,                          // IP 192.0.2.55
                0x0a, 0x0b, 0x0c, 0x0d,                          // key
                0x00, 0x00, 0x00, 0x1e,                          // num_want = 30
                0x1a, 0xe1});                                    // port 6881
}

// ---------------------------------------------------------------------------
// Exact layouts
// ---------------------------------------------------------------------------

TEST(UdpLayout, ConnectRequest) {
  const std::string pkt = bytes({0x00, 0x00, 0x04, 0x17, 0x27, 0x10, 0x19, 0x80,  // protocol id
                                 0x00, 0x00, 0x00, 0x00,                          // action: connect
                                 0xde, 0xad, 0xbe, 0xef});                        // transaction id
  ASSERT_EQ(pkt.size(), udp_connect_request_size);
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.disposition, udp_disposition::process);
  EXPECT_EQ(req.action, udp_action::connect);
  EXPECT_EQ(req.transaction.value, 0xdeadbeefU);
  EXPECT_EQ(req.connection.value, udp_protocol_id);

  std::string encoded;
  encode_udp_connect_request(encoded, transaction_id{0xdeadbeef});
  EXPECT_EQ(encoded, pkt);
}

TEST(UdpLayout, ConnectRequestWithWrongProtocolIdIsDropped) {
  std::string pkt = bytes({0x00, 0x00, 0x04, 0x17, 0x27, 0x10, 0x19, 0x81,  // last byte off
                           0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01});
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  EXPECT_EQ(r.error, udp_error::bad_protocol_id);
  EXPECT_EQ(r.disposition, udp_disposition::drop);
  EXPECT_FALSE(r.can_reply());
}

TEST(UdpLayout, ConnectRequestWithTrailingBytesIsAccepted) {
  std::string pkt;
  encode_udp_connect_request(pkt, transaction_id{7});
  pkt += "trailing garbage";
  udp_request req;
  EXPECT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.transaction.value, 7U);
}

TEST(UdpLayout, ConnectResponse) {
  std::string out = "prefix";  // encoders append
  encode_udp_connect_response(out, transaction_id{0x01020304},
                              connection_id{0x1122334455667788ULL});
  EXPECT_EQ(out, "prefix" + bytes({0x00, 0x00, 0x00, 0x00,  // action
                                   0x01, 0x02, 0x03, 0x04,  // transaction
                                   0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));  // id
}

TEST(UdpLayout, AnnounceRequestFields) {
  const std::string pkt = sample_announce();
  ASSERT_EQ(pkt.size(), udp_announce_request_size);
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  ASSERT_TRUE(r.ok()) << make_error_code(r.error).message();
  EXPECT_EQ(req.action, udp_action::announce);
  EXPECT_EQ(req.connection.value, 0x0102030405060708ULL);
  EXPECT_EQ(req.transaction.value, 0xcafebabeU);
  const announce_request& a = req.announce.request;
  EXPECT_EQ(a.hash.view(), repeat(0xa1, 20));
  EXPECT_EQ(a.id.view(), "-qB4650-xxxxxxxxxxxx");
  EXPECT_EQ(a.downloaded, 0x0102030405060708ULL);
  EXPECT_EQ(a.left, 1000U);
  EXPECT_EQ(a.uploaded, 0U);
  EXPECT_EQ(a.event, announce_event::started);
  ASSERT_TRUE(a.claimed_ip.has_value());
  EXPECT_FALSE(a.claimed_ip->v6);
  EXPECT_EQ(a.claimed_ip->bytes[0], 192);
  EXPECT_EQ(a.claimed_ip->bytes[1], 0);
  EXPECT_EQ(a.claimed_ip->bytes[2], 2);
  EXPECT_EQ(a.claimed_ip->bytes[3], 55);
  EXPECT_EQ(a.key, "0A0B0C0D");
  EXPECT_EQ(a.numwant, 30);
  EXPECT_EQ(a.port, 6881);
  EXPECT_TRUE(a.compact);
  EXPECT_TRUE(a.no_peer_id);
  EXPECT_TRUE(a.tracker_id.empty());
  EXPECT_TRUE(req.announce.url_data.empty());
  EXPECT_FALSE(req.announce.options_malformed);

  // The client-side encoder produces the same bytes.
  std::string encoded;
  encode_udp_announce_request(encoded, req.connection, req.transaction, a);
  EXPECT_EQ(encoded, pkt);
}

TEST(UdpLayout, AnnounceKeyIsEightUpperCaseHexDigitsZeroPadded) {
  std::string pkt = sample_announce();
  udp_request req;
  put_be(pkt, 88, 0x0000abcdU, 4);
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.announce.request.key, "0000ABCD");
  put_be(pkt, 88, 0xffffffffU, 4);
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.announce.request.key, "FFFFFFFF");
  put_be(pkt, 88, 0, 4);
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.announce.request.key, "00000000");
}

TEST(UdpLayout, AnnounceEventMapping) {
  // 0..3 are BEP 15's, 4 is BEP 21's paused (as libtorrent sends it).
  const announce_event expected[5] = {announce_event::none, announce_event::completed,
                                      announce_event::started, announce_event::stopped,
                                      announce_event::paused};
  std::string pkt = sample_announce();
  udp_request req;
  for (std::uint32_t e = 0; e < 5; ++e) {
    put_be(pkt, 80, e, 4);
    ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok()) << e;
    EXPECT_EQ(req.announce.request.event, expected[e]) << e;
  }
  for (std::uint32_t e : {5U, 6U, 0x100U, 0xffffffffU}) {
    put_be(pkt, 80, e, 4);
    const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
    EXPECT_EQ(r.error, udp_error::bad_event) << e;
    EXPECT_EQ(r.disposition, udp_disposition::reply_error);
    EXPECT_EQ(req.transaction.value, 0xcafebabeU);
  }
}

TEST(UdpLayout, AnnounceNumWant) {
  query_limits limits;
  limits.max_numwant = 50;
  struct {
    std::int32_t wire;
    std::int32_t parsed;
  } const cases[] = {{-1, -1},
                     {0, 0},
                     {1, 1},
                     {49, 49},
                     {50, 50},
                     {51, 50},
                     {std::numeric_limits<std::int32_t>::max(), 50},
                     {-2, -1},
                     {-50, -1},
                     {std::numeric_limits<std::int32_t>::min(), -1}};
  std::string pkt = sample_announce();
  udp_request req;
  for (const auto& c : cases) {
    put_be(pkt, 92, static_cast<std::uint32_t>(c.wire), 4);
    ASSERT_TRUE(parse_udp_request(pkt, limits, req).ok());
    EXPECT_EQ(req.announce.request.numwant, c.parsed) << "num_want " << c.wire;
  }
}

TEST(UdpLayout, AnnouncePortZeroIsRejected) {
  std::string pkt = sample_announce();
  put_be(pkt, 96, 0, 2);
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  EXPECT_EQ(r.error, udp_error::port_zero);
  EXPECT_EQ(r.disposition, udp_disposition::reply_error);
  put_be(pkt, 96, 0xffff, 2);
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.announce.request.port, 65535);
}

TEST(UdpLayout, AnnounceNegativeAmountsAreRejected) {
  for (std::size_t offset : {56U, 64U, 72U}) {
    std::string pkt = sample_announce();
    put_be(pkt, offset, 0xffffffffffffffffULL, 8);  // -1 as i64
    udp_request req;
    EXPECT_EQ(parse_udp_request(pkt, default_limits(), req).error, udp_error::negative_amount)
        << "offset " << offset;
    put_be(pkt, offset, 0x7fffffffffffffffULL, 8);  // INT64_MAX is fine
    EXPECT_TRUE(parse_udp_request(pkt, default_limits(), req).ok()) << "offset " << offset;
  }
}

TEST(UdpLayout, AnnounceIpZeroMeansNoClaim) {
  std::string pkt = sample_announce();
  put_be(pkt, 84, 0, 4);
  udp_request req;
  // Reuse the request that held a claimed_ip: it must be cleared.
  ASSERT_TRUE(parse_udp_request(sample_announce(), default_limits(), req).ok());
  ASSERT_TRUE(req.announce.request.claimed_ip.has_value());
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_FALSE(req.announce.request.claimed_ip.has_value());
}

TEST(UdpLayout, AnnounceShorterThan98IsAnswerable) {
  const std::string full = sample_announce();
  for (std::size_t len = 16; len < 98; ++len) {
    udp_request req;
    const udp_parse_result r =
        parse_udp_request(std::string_view(full).substr(0, len), default_limits(), req);
    EXPECT_EQ(r.error, udp_error::announce_too_short) << len;
    EXPECT_TRUE(r.can_reply()) << len;
    EXPECT_EQ(req.transaction.value, 0xcafebabeU) << len;
  }
}

TEST(UdpLayout, AnnounceResponseIPv4) {
  swarm_stats stats;
  stats.complete = 5;                                              // seeders
  stats.incomplete = 12;                                           // leechers
  const std::string peers = bytes({192, 0, 2, 1, 0x1a, 0xe1,       // 192.0.2.1:6881
                                   198, 51, 100, 2, 0xc8, 0xd5});  // 198.51.100.2:51413
  std::string out;
  encode_udp_announce_response(out, transaction_id{0xa0b0c0d0}, 1800, stats, peers);
  EXPECT_EQ(out, bytes({0x00, 0x00, 0x00, 0x01,   // action: announce
                        0xa0, 0xb0, 0xc0, 0xd0,   // transaction id
                        0x00, 0x00, 0x07, 0x08,   // interval 1800
                        0x00, 0x00, 0x00, 0x0c,   // leechers 12
                        0x00, 0x00, 0x00, 0x05})  // seeders 5
                     + peers);
  EXPECT_EQ(out.size(), 20 + 2 * udp_peer_size(false));
}

TEST(UdpLayout, AnnounceResponseIPv6) {
  const std::string peer = bytes({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1a,
                                  0xe1});  // [2001:db8::1]:6881
  ASSERT_EQ(peer.size(), udp_peer6_size);
  std::string out;
  encode_udp_announce_response(out, transaction_id{1}, 900, swarm_stats{}, peer);
  EXPECT_EQ(out, bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0x03, 0x84, 0, 0, 0, 0, 0, 0, 0, 0}) + peer);
  EXPECT_EQ(udp_peer_size(true), 18U);
}

TEST(UdpLayout, AnnounceResponseClampsToNonNegativeInt32) {
  swarm_stats stats;
  stats.complete = -3;
  stats.incomplete = std::int64_t{1} << 40;
  std::string out;
  encode_udp_announce_response(out, transaction_id{0}, -1, stats, {});
  EXPECT_EQ(out.substr(8), bytes({0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}));
}

TEST(UdpLayout, ScrapeRequest) {
  const std::string pkt = bytes({0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80,  // connection id
                                 0x00, 0x00, 0x00, 0x02,                          // action: scrape
                                 0x00, 0x00, 0x30, 0x39}) +  // transaction 12345
                          repeat(0x11, 20) +
                          repeat(0x22, 20);
  ASSERT_EQ(pkt.size(), 16U + 2 * 20);
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(req.action, udp_action::scrape);
  EXPECT_EQ(req.connection.value, 0x1020304050607080ULL);
  EXPECT_EQ(req.transaction.value, 12345U);
  ASSERT_EQ(req.scrape_hashes.size(), 2U);
  EXPECT_EQ(req.scrape_hashes[0].view(), repeat(0x11, 20));
  EXPECT_EQ(req.scrape_hashes[1].view(), repeat(0x22, 20));

  std::string encoded;
  encode_udp_scrape_request(encoded, req.connection, req.transaction, req.scrape_hashes.data(),
                            req.scrape_hashes.size());
  EXPECT_EQ(encoded, pkt);
}

TEST(UdpLayout, ScrapePartialTrailingHashIsIgnored) {
  std::string pkt = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}) + repeat(0x33, 20);
  pkt += repeat(0x44, 19);
  udp_request req;
  ASSERT_TRUE(parse_udp_request(pkt, default_limits(), req).ok());
  EXPECT_EQ(req.scrape_hashes.size(), 1U);
}

TEST(UdpLayout, ScrapeWithoutHashIsAnswerable) {
  const std::string header = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3});
  for (std::size_t extra = 0; extra < 20; ++extra) {
    udp_request req;
    const udp_parse_result r =
        parse_udp_request(header + repeat(0x55, extra), default_limits(), req);
    EXPECT_EQ(r.error, udp_error::zero_scrape_hashes) << extra;
    EXPECT_EQ(r.disposition, udp_disposition::reply_error);
  }
}

TEST(UdpLayout, ScrapeHashLimits) {
  auto scrape_of = [](std::size_t n) {
    std::vector<info_hash> hashes(n);
    for (std::size_t i = 0; i < n; ++i) {
      hashes[i].bytes[0] = static_cast<std::uint8_t>(i);
    }
    std::string pkt;
    encode_udp_scrape_request(pkt, connection_id{1}, transaction_id{2}, hashes.data(), n);
    return pkt;
  };
  udp_request req;
  query_limits limits;  // default 74
  EXPECT_TRUE(parse_udp_request(scrape_of(74), limits, req).ok());
  EXPECT_EQ(req.scrape_hashes.size(), 74U);
  EXPECT_EQ(req.scrape_hashes[73].bytes[0], 73);
  EXPECT_EQ(parse_udp_request(scrape_of(75), limits, req).error, udp_error::too_many_scrape_hashes);

  limits.max_scrape_hashes = 10;
  EXPECT_TRUE(parse_udp_request(scrape_of(10), limits, req).ok());
  const udp_parse_result r = parse_udp_request(scrape_of(11), limits, req);
  EXPECT_EQ(r.error, udp_error::too_many_scrape_hashes);
  EXPECT_EQ(r.disposition, udp_disposition::reply_error);

  limits.max_scrape_hashes = 1000;  // configured above BEP 15's cap: 74 still rules
  EXPECT_TRUE(parse_udp_request(scrape_of(74), limits, req).ok());
  EXPECT_EQ(parse_udp_request(scrape_of(75), limits, req).error, udp_error::too_many_scrape_hashes);
}

TEST(UdpLayout, ScrapeResponse) {
  swarm_stats s[2];
  s[0].complete = 1;
  s[0].downloaded = 2;
  s[0].incomplete = 3;
  s[1].complete = 0x01020304;
  s[1].downloaded = 0;
  s[1].incomplete = -7;  // clamped
  std::string out;
  encode_udp_scrape_response(out, transaction_id{0x0badf00d}, s, 2);
  EXPECT_EQ(out,
            bytes({0,    0,    0,    2,                             // action: scrape
                   0x0b, 0xad, 0xf0, 0x0d,                          // transaction id
                   0,    0,    0,    1,    0, 0, 0, 2, 0, 0, 0, 3,  // seeders, completed, leechers
                   0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0, 0, 0, 0, 0}));
  std::string empty;
  encode_udp_scrape_response(empty, transaction_id{1}, nullptr, 0);
  EXPECT_EQ(empty, bytes({0, 0, 0, 2, 0, 0, 0, 1}));
}

TEST(UdpLayout, ErrorResponse) {
  std::string out;
  encode_udp_error_response(out, transaction_id{0x01020304}, "nope");
  EXPECT_EQ(out, bytes({0, 0, 0, 3, 1, 2, 3, 4}) + "nope");
}

TEST(UdpLayout, ErrorPacketsFromClientsAreDropped) {
  std::string pkt = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 9}) + "hello";
  udp_request req;
  const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
  EXPECT_EQ(r.error, udp_error::error_action);
  EXPECT_EQ(r.disposition, udp_disposition::drop);
}

TEST(UdpLayout, UnknownActionIsAnswerable) {
  for (std::uint32_t action : {4U, 5U, 0x100U, 0xffffffffU}) {
    std::string pkt = bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9});
    put_be(pkt, 8, action, 4);
    udp_request req;
    const udp_parse_result r = parse_udp_request(pkt, default_limits(), req);
    EXPECT_EQ(r.error, udp_error::unknown_action) << action;
    EXPECT_EQ(r.disposition, udp_disposition::reply_error);
    EXPECT_EQ(req.transaction.value, 9U);
  }
}

TEST(UdpLayout, UnderSixteenBytesIsDropped) {
  const std::string full = sample_announce();
  for (std::size_t len = 0; len < 16; ++len) {
    udp_request req;
    const udp_parse_result r =
        parse_udp_request(std::string_view(full).substr(0, len), default_limits(), req);
    EXPECT_EQ(r.error, udp_error::packet_too_short) << len;
    EXPECT_FALSE(r.can_reply()) << len;
  }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

const udp_error all_errors[] = {udp_error::packet_too_short,
                                udp_error::bad_protocol_id,
                                udp_error::error_action,
                                udp_error::unknown_action,
                                udp_error::announce_too_short,
                                udp_error::bad_event,
                                udp_error::port_zero,
                                udp_error::negative_amount,
                                udp_error::zero_scrape_hashes,
                                udp_error::too_many_scrape_hashes,
                                udp_error::invalid_connection_id,
                                udp_error::bad_response_length};

TEST(UdpErrors, CategoryMessagesAreDistinctAndSpecific) {
  EXPECT_STREQ(udp_category().name(), "udp");
  std::vector<std::string> messages;
  std::vector<std::string_view> texts;
  for (udp_error e : all_errors) {
    const std::error_code ec = e;  // is_error_code_enum
    EXPECT_EQ(&ec.category(), &udp_category());
    EXPECT_TRUE(ec) << static_cast<int>(e);
    EXPECT_EQ(ec, e);
    EXPECT_FALSE(ec.message().empty());
    EXPECT_NE(ec.message(), "unknown UDP error");
    messages.push_back(ec.message());
    texts.push_back(udp_error_text(e));
  }
  std::sort(messages.begin(), messages.end());
  EXPECT_EQ(std::unique(messages.begin(), messages.end()), messages.end());
  std::sort(texts.begin(), texts.end());
  EXPECT_EQ(std::unique(texts.begin(), texts.end()), texts.end());
  EXPECT_FALSE(make_error_code(udp_error::ok));
}

TEST(UdpErrors, WireTextsArePinned) {
  EXPECT_EQ(udp_error_text(udp_error::invalid_connection_id), "connection id expired");
  EXPECT_EQ(udp_error_text(udp_error::port_zero), "invalid port 0");
  EXPECT_EQ(udp_error_text(udp_error::bad_event), "unknown event");
  EXPECT_EQ(udp_error_text(udp_error::too_many_scrape_hashes), "too many info_hashes");
}

TEST(UdpErrors, ErrorReplyIsNeverLargerThanTheRequest) {
  for (udp_error e : all_errors) {
    for (std::size_t request = 16; request <= 200; ++request) {
      std::string out;
      encode_udp_error_reply(out, transaction_id{0x01020304}, e, request);
      ASSERT_LE(out.size(), request) << static_cast<int>(e) << " / " << request;
      ASSERT_GE(out.size(), udp_error_header_size);
      EXPECT_EQ(out.substr(0, 8), bytes({0, 0, 0, 3, 1, 2, 3, 4}));
      const std::string_view text = udp_error_text(e);
      EXPECT_EQ(out.substr(8), text.substr(0, std::min(text.size(), request - 8)));
    }
  }
  // The invalid-id reply is whole for every real request but a 16-byte one.
  std::string out;
  encode_udp_error_reply(out, transaction_id{1}, udp_error::invalid_connection_id, 36);
  EXPECT_EQ(out.substr(8), "connection id expired");
}

// ---------------------------------------------------------------------------
// BEP 41 options
// ---------------------------------------------------------------------------

udp_request parse_with_options(const std::string& options, query_limits limits = {}) {
  udp_request req;
  const udp_parse_result r = parse_udp_request(sample_announce() + options, limits, req);
  EXPECT_TRUE(r.ok()) << make_error_code(r.error).message();
  // Whatever the options, the announce itself is intact.
  EXPECT_EQ(req.announce.request.port, 6881);
  EXPECT_EQ(req.announce.request.key, "0A0B0C0D");
  return req;
}

TEST(UdpBep41, NoOptions) {
  const udp_request req = parse_with_options("");
  EXPECT_EQ(req.announce.url_data, "");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, EndOfOptionsStopsParsing) {
  const udp_request req = parse_with_options(bytes({0x00, 0x02, 0x03}) + "abc");
  EXPECT_EQ(req.announce.url_data, "");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, NopsAreSkipped) {
  const udp_request req =
      parse_with_options(bytes({0x01, 0x01, 0x01, 0x02, 0x09}) + "/announce" + bytes({0x01}));
  EXPECT_EQ(req.announce.url_data, "/announce");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, UrlDataChunksAreConcatenated) {
  // The BEP's own example: "/announce" then "?passkey=1234" ... in two chunks.
  const udp_request req =
      parse_with_options(bytes({0x02, 0x09}) + "/announce" + bytes({0x02, 0x0d}) + "?passkey=1234" +
                         bytes({0x00}) + "garbage after end");
  EXPECT_EQ(req.announce.url_data, "/announce?passkey=1234");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, EmptyUrlDataChunk) {
  const udp_request req = parse_with_options(bytes({0x02, 0x00, 0x02, 0x01}) + "x");
  EXPECT_EQ(req.announce.url_data, "x");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, MaximalChunks) {
  const std::string big(255, 'p');
  const udp_request req = parse_with_options(bytes({0x02, 0xff}) + big + bytes({0x02, 0xff}) + big);
  EXPECT_EQ(req.announce.url_data, big + big);
}

TEST(UdpBep41, UnknownOptionTypesAreSkippedByTheirLength) {
  const udp_request req =
      parse_with_options(bytes({0x07, 0x03, 0x02, 0x02, 0x00}) + bytes({0x02, 0x02}) + "ok");
  EXPECT_EQ(req.announce.url_data, "ok");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, MissingLengthByteIsMalformedButHarmless) {
  for (int type : {0x02, 0x03, 0xff}) {
    const udp_request req = parse_with_options(bytes({0x02, 0x01}) + "a" + bytes({type}));
    EXPECT_EQ(req.announce.url_data, "a") << type;
    EXPECT_TRUE(req.announce.options_malformed) << type;
  }
}

TEST(UdpBep41, TruncatedDataIsMalformedButHarmless) {
  const udp_request req =
      parse_with_options(bytes({0x02, 0x01}) + "a" + bytes({0x02, 0x10}) + "short");
  EXPECT_EQ(req.announce.url_data, "a");
  EXPECT_TRUE(req.announce.options_malformed);
  const udp_request unknown = parse_with_options(bytes({0x09, 0x05}) + "abc");
  EXPECT_TRUE(unknown.announce.options_malformed);
}

TEST(UdpBep41, UrlDataOverTheLimitIsMalformedButHarmless) {
  query_limits limits;
  limits.max_query_length = 10;
  const udp_request fits = parse_with_options(bytes({0x02, 0x0a}) + "0123456789", limits);
  EXPECT_EQ(fits.announce.url_data, "0123456789");
  EXPECT_FALSE(fits.announce.options_malformed);
  const udp_request over =
      parse_with_options(bytes({0x02, 0x06}) + "012345" + bytes({0x02, 0x05}) + "67890", limits);
  EXPECT_EQ(over.announce.url_data, "012345");
  EXPECT_TRUE(over.announce.options_malformed);
}

TEST(UdpBep41, ReusedRequestForgetsPreviousOptions) {
  udp_request req;
  ASSERT_TRUE(parse_udp_request(sample_announce() + bytes({0x02, 0x01}) + "a" + bytes({0x02}),
                                default_limits(), req)
                  .ok());
  EXPECT_TRUE(req.announce.options_malformed);
  ASSERT_TRUE(parse_udp_request(sample_announce(), default_limits(), req).ok());
  EXPECT_EQ(req.announce.url_data, "");
  EXPECT_FALSE(req.announce.options_malformed);
}

TEST(UdpBep41, RandomTrailingBytesNeverBreakTheAnnounce) {
  SCOPED_TRACE(sk::test::seed_trace());
  std::mt19937_64 rng(sk::test::test_seed());
  udp_request reference;
  ASSERT_TRUE(parse_udp_request(sample_announce(), default_limits(), reference).ok());
  for (int i = 0; i < 20000; ++i) {
    std::string pkt = sample_announce();
    const std::size_t tail = rng() % 1403;  // up to a 1500-byte datagram
    for (std::size_t j = 0; j < tail; ++j) {
      // Bias toward the option type bytes so the walk goes deep.
      const auto r = rng();
      pkt.push_back(static_cast<char>(r % 4 == 0 ? (r >> 8) % 4 : r >> 16));
    }
    udp_request req;
    const udp_parse_result res = parse_udp_request(pkt, default_limits(), req);
    ASSERT_TRUE(res.ok()) << "tail " << tail;
    const announce_request& a = req.announce.request;
    const announce_request& b = reference.announce.request;
    ASSERT_EQ(a.hash, b.hash);
    ASSERT_EQ(a.id, b.id);
    ASSERT_EQ(a.port, b.port);
    ASSERT_EQ(a.left, b.left);
    ASSERT_EQ(a.key, b.key);
    ASSERT_EQ(a.numwant, b.numwant);
    ASSERT_LE(req.announce.url_data.size(), tail);
  }
}

// ---------------------------------------------------------------------------
// The connection-id gate (what net/ calls)
// ---------------------------------------------------------------------------

class UdpAccept : public ::testing::Test {
 protected:
  UdpAccept() : ids_(key()) {}
  static connection_id_key key() {
    connection_id_key k{};
    k[0] = 42;
    return k;
  }
  static endpoint client(std::uint16_t port = 6881) {
    const std::uint8_t b[4] = {192, 0, 2, 99};
    return endpoint{ip_address::make_v4(b), port};
  }
  std::string announce_with(connection_id id) {
    std::string pkt = sample_announce();
    put_be(pkt, 0, id.value, 8);
    return pkt;
  }
  connection_id_issuer ids_;
  query_limits limits_;
  udp_request req_;
};

TEST_F(UdpAccept, TheDecisionIsAnErrorReply) {
  // Pinned so a change of policy is a deliberate, reviewed edit.
  static_assert(invalid_connection_id_disposition == udp_disposition::reply_error, "see udp.hpp");
  SUCCEED();
}

TEST_F(UdpAccept, ConnectNeedsNoId) {
  std::string pkt;
  encode_udp_connect_request(pkt, transaction_id{77});
  const udp_parse_result r = accept_udp_request(pkt, limits_, ids_, client(), seconds(10), req_);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(req_.action, udp_action::connect);
}

TEST_F(UdpAccept, FullExchangeWithAValidId) {
  const seconds t0(100'000);
  // connect -> id -> announce with it, 119 s later.
  std::string reply;
  encode_udp_connect_response(reply, transaction_id{1}, ids_.issue(client(), t0));
  udp_response resp;
  ASSERT_EQ(parse_udp_response(reply, false, resp), udp_error::ok);
  const udp_parse_result r = accept_udp_request(announce_with(resp.connection), limits_, ids_,
                                                client(), t0 + seconds(119), req_);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.disposition, udp_disposition::process);
  EXPECT_EQ(req_.announce.request.port, 6881);
}

TEST_F(UdpAccept, InvalidIdGetsTheBoundedErrorReply) {
  const std::string pkt = announce_with(connection_id{0x1234});
  const udp_parse_result r = accept_udp_request(pkt, limits_, ids_, client(), seconds(5), req_);
  EXPECT_EQ(r.error, udp_error::invalid_connection_id);
  EXPECT_EQ(r.disposition, invalid_connection_id_disposition);
  EXPECT_EQ(req_.transaction.value, 0xcafebabeU);
  std::string out;
  encode_udp_error_reply(out, req_.transaction, r.error, pkt.size());
  EXPECT_EQ(out, bytes({0, 0, 0, 3, 0xca, 0xfe, 0xba, 0xbe}) + "connection id expired");
  EXPECT_LE(out.size(), pkt.size());
}

TEST_F(UdpAccept, ExpiredAndForeignIdsAreRejected) {
  const seconds t0(60'000);  // an epoch start
  const std::string pkt = announce_with(ids_.issue(client(), t0));
  EXPECT_TRUE(accept_udp_request(pkt, limits_, ids_, client(), t0 + seconds(239), req_).ok());
  EXPECT_EQ(accept_udp_request(pkt, limits_, ids_, client(), t0 + seconds(240), req_).error,
            udp_error::invalid_connection_id);
  // Another port of the same address: accepted (ids are bound to the address).
  EXPECT_TRUE(accept_udp_request(pkt, limits_, ids_, client(6882), t0, req_).ok());
  const std::uint8_t other[4] = {192, 0, 2, 100};
  EXPECT_EQ(
      accept_udp_request(pkt, limits_, ids_, endpoint{ip_address::make_v4(other), 6881}, t0, req_)
          .error,
      udp_error::invalid_connection_id);
}

TEST_F(UdpAccept, IdIsCheckedBeforeContent) {
  // A malformed announce from an unauthenticated source learns nothing
  // about its content: the answer is about the id.
  std::string bad = sample_announce();
  put_be(bad, 96, 0, 2);  // port 0
  EXPECT_EQ(accept_udp_request(bad, limits_, ids_, client(), seconds(5), req_).error,
            udp_error::invalid_connection_id);
  put_be(bad, 0, ids_.issue(client(), seconds(5)).value, 8);
  EXPECT_EQ(accept_udp_request(bad, limits_, ids_, client(), seconds(5), req_).error,
            udp_error::port_zero);

  std::string unknown = bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 1});
  EXPECT_EQ(accept_udp_request(unknown, limits_, ids_, client(), seconds(5), req_).error,
            udp_error::invalid_connection_id);
  put_be(unknown, 0, ids_.issue(client(), seconds(5)).value, 8);
  EXPECT_EQ(accept_udp_request(unknown, limits_, ids_, client(), seconds(5), req_).error,
            udp_error::unknown_action);
}

TEST_F(UdpAccept, DroppedPacketsStayDroppedWhateverTheId) {
  std::string err = bytes({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1});
  put_be(err, 0, ids_.issue(client(), seconds(5)).value, 8);
  EXPECT_EQ(accept_udp_request(err, limits_, ids_, client(), seconds(5), req_).disposition,
            udp_disposition::drop);
  EXPECT_EQ(accept_udp_request("short", limits_, ids_, client(), seconds(5), req_).disposition,
            udp_disposition::drop);
}

TEST_F(UdpAccept, SteadyClockOverload) {
  const std::chrono::steady_clock::time_point t0{std::chrono::hours(1000)};
  const std::string pkt = announce_with(ids_.issue(client(), t0));
  EXPECT_TRUE(accept_udp_request(pkt, limits_, ids_, client(), t0 + seconds(120), req_).ok());
  EXPECT_FALSE(accept_udp_request(pkt, limits_, ids_, client(), t0 + seconds(240), req_).ok());
}

// ---------------------------------------------------------------------------
// Round trips (random, seeded)
// ---------------------------------------------------------------------------

template <class Id>
Id random_id(std::mt19937_64& rng) {
  Id x;
  for (auto& b : x.bytes) {
    b = static_cast<std::uint8_t>(rng());
  }
  return x;
}

TEST(UdpRoundTrip, Announce) {
  SCOPED_TRACE(sk::test::seed_trace());
  std::mt19937_64 rng(sk::test::test_seed());
  query_limits limits;
  limits.max_numwant = 200;
  static constexpr char hex[] = "0123456789ABCDEF";
  for (int i = 0; i < 5000; ++i) {
    announce_request in;
    in.hash = random_id<info_hash>(rng);
    in.id = random_id<peer_id>(rng);
    in.port = static_cast<std::uint16_t>(1 + rng() % 65535);
    in.uploaded = rng() >> 1;  // non-negative as i64
    in.downloaded = rng() >> (1 + rng() % 63);
    in.left = rng() % 3 == 0 ? 0 : rng() >> 1;
    in.numwant = static_cast<std::int32_t>(rng() % 202) - 1;  // -1..200
    in.event = static_cast<announce_event>(rng() % 4);
    in.key.clear();
    for (int k = 0; k < 8; ++k) {
      in.key.push_back(hex[rng() % 16]);
    }
    if (rng() % 2 == 0) {
      ip_address ip = ip_address::make_v4(static_cast<std::uint32_t>(rng() | 1));
      in.claimed_ip = ip;
    }
    in.no_peer_id = true;
    std::string url;
    const std::size_t url_len = rng() % 3 == 0 ? 0 : rng() % 700;
    for (std::size_t k = 0; k < url_len; ++k) {
      url.push_back(static_cast<char>(rng()));
    }
    const connection_id cid{rng()};
    const transaction_id tid{static_cast<std::uint32_t>(rng())};

    std::string pkt;
    encode_udp_announce_request(pkt, cid, tid, in, url);
    ASSERT_EQ(pkt.size(), 98 + url_len + 2 * ((url_len + 254) / 255));
    udp_request out;
    ASSERT_TRUE(parse_udp_request(pkt, limits, out).ok());
    EXPECT_EQ(out.connection, cid);
    EXPECT_EQ(out.transaction, tid);
    const announce_request& a = out.announce.request;
    EXPECT_EQ(a.hash, in.hash);
    EXPECT_EQ(a.id, in.id);
    EXPECT_EQ(a.port, in.port);
    EXPECT_EQ(a.uploaded, in.uploaded);
    EXPECT_EQ(a.downloaded, in.downloaded);
    EXPECT_EQ(a.left, in.left);
    EXPECT_EQ(a.numwant, in.numwant);
    EXPECT_EQ(a.event, in.event);
    EXPECT_EQ(a.key, in.key);
    EXPECT_EQ(a.claimed_ip, in.claimed_ip);
    EXPECT_EQ(out.announce.url_data, url);
    EXPECT_FALSE(out.announce.options_malformed);
    if (HasFailure()) {
      break;
    }
  }
}

TEST(UdpRoundTrip, Scrape) {
  SCOPED_TRACE(sk::test::seed_trace());
  std::mt19937_64 rng(sk::test::test_seed());
  udp_request out;
  for (int i = 0; i < 2000; ++i) {
    const std::size_t n = 1 + rng() % 74;
    std::vector<info_hash> hashes;
    for (std::size_t k = 0; k < n; ++k) {
      hashes.push_back(random_id<info_hash>(rng));
    }
    const connection_id cid{rng()};
    const transaction_id tid{static_cast<std::uint32_t>(rng())};
    std::string pkt;
    encode_udp_scrape_request(pkt, cid, tid, hashes.data(), n);
    ASSERT_TRUE(parse_udp_request(pkt, default_limits(), out).ok());
    EXPECT_EQ(out.connection, cid);
    EXPECT_EQ(out.transaction, tid);
    EXPECT_EQ(out.scrape_hashes, hashes);
  }
}

TEST(UdpRoundTrip, Responses) {
  SCOPED_TRACE(sk::test::seed_trace());
  std::mt19937_64 rng(sk::test::test_seed());
  udp_response resp;
  for (int i = 0; i < 2000; ++i) {
    const transaction_id tid{static_cast<std::uint32_t>(rng())};

    std::string connect;
    const connection_id cid{rng()};
    encode_udp_connect_response(connect, tid, cid);
    ASSERT_EQ(parse_udp_response(connect, false, resp), udp_error::ok);
    EXPECT_EQ(resp.action, udp_action::connect);
    EXPECT_EQ(resp.transaction, tid);
    EXPECT_EQ(resp.connection, cid);

    const bool v6 = rng() % 2 == 0;
    const std::size_t peers = rng() % (udp_max_peers_per_reply(v6) + 1);
    std::string peer_bytes;
    for (std::size_t k = 0; k < peers * udp_peer_size(v6); ++k) {
      peer_bytes.push_back(static_cast<char>(rng()));
    }
    swarm_stats stats;
    stats.complete = static_cast<std::int64_t>(rng() % 0x80000000ULL);
    stats.incomplete = static_cast<std::int64_t>(rng() % 0x80000000ULL);
    const auto interval = static_cast<std::int64_t>(rng() % 0x80000000ULL);
    std::string announce;
    encode_udp_announce_response(announce, tid, interval, stats, peer_bytes);
    ASSERT_EQ(parse_udp_response(announce, v6, resp), udp_error::ok);
    EXPECT_EQ(resp.action, udp_action::announce);
    EXPECT_EQ(resp.transaction, tid);
    EXPECT_EQ(resp.interval, interval);
    EXPECT_EQ(resp.stats.complete, stats.complete);
    EXPECT_EQ(resp.stats.incomplete, stats.incomplete);
    EXPECT_EQ(resp.peers, peer_bytes);
    EXPECT_LE(announce.size(), v6 ? 1232U : 1472U);

    std::vector<swarm_stats> entries(rng() % 75);
    for (auto& e : entries) {
      e.complete = static_cast<std::int64_t>(rng() % 0x80000000ULL);
      e.downloaded = static_cast<std::int64_t>(rng() % 0x80000000ULL);
      e.incomplete = static_cast<std::int64_t>(rng() % 0x80000000ULL);
    }
    std::string scrape;
    encode_udp_scrape_response(scrape, tid, entries.data(), entries.size());
    ASSERT_EQ(parse_udp_response(scrape, false, resp), udp_error::ok);
    EXPECT_EQ(resp.action, udp_action::scrape);
    ASSERT_EQ(resp.scrape.size(), entries.size());
    for (std::size_t k = 0; k < entries.size(); ++k) {
      EXPECT_EQ(resp.scrape[k].complete, entries[k].complete);
      EXPECT_EQ(resp.scrape[k].downloaded, entries[k].downloaded);
      EXPECT_EQ(resp.scrape[k].incomplete, entries[k].incomplete);
    }

    std::string error;
    const std::string message(rng() % 100, 'e');
    encode_udp_error_response(error, tid, message);
    ASSERT_EQ(parse_udp_response(error, false, resp), udp_error::ok);
    EXPECT_EQ(resp.action, udp_action::error);
    EXPECT_EQ(resp.message, message);
  }
}

TEST(UdpResponseParser, RejectsShortAndRaggedReplies) {
  udp_response resp;
  EXPECT_EQ(parse_udp_response(bytes({0, 0, 0, 0, 0, 0, 0}), false, resp),
            udp_error::packet_too_short);
  EXPECT_EQ(parse_udp_response(bytes({0, 0, 0, 0, 0, 0, 0, 1, 0, 0}), false, resp),
            udp_error::bad_response_length);
  EXPECT_EQ(parse_udp_response(bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0}), false, resp),
            udp_error::bad_response_length);
  std::string announce;
  encode_udp_announce_response(announce, transaction_id{1}, 1, swarm_stats{}, repeat(1, 6));
  EXPECT_EQ(parse_udp_response(announce, false, resp), udp_error::ok);
  EXPECT_EQ(parse_udp_response(announce, true, resp), udp_error::bad_response_length);
  EXPECT_EQ(parse_udp_response(bytes({0, 0, 0, 2, 0, 0, 0, 1, 0}), false, resp),
            udp_error::bad_response_length);
  EXPECT_EQ(parse_udp_response(bytes({0, 0, 0, 9, 0, 0, 0, 1}), false, resp),
            udp_error::unknown_action);
}

TEST(UdpLimits, MaxPeersFitOneDatagram) {
  EXPECT_LE(20 + udp_max_peers_per_reply(false) * 6, 1472U);
  EXPECT_GT(20 + (udp_max_peers_per_reply(false) + 1) * 6, 1472U);
  EXPECT_LE(20 + udp_max_peers_per_reply(true) * 18, 1232U);
  EXPECT_GT(20 + (udp_max_peers_per_reply(true) + 1) * 18, 1232U);
}

}  // namespace
