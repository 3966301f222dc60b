// Hostile input: every length from 0 to 1500 bytes for every action with
// random content, and purely random datagrams. Each packet sits in a heap
// block of exactly its size, so an over-read is caught by AddressSanitizer
// (run this under build-udp-asan) rather than read from slack.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "protocol/udp.hpp"
#include "test_seed.hpp"

namespace {

using namespace sk;
using std::chrono::seconds;

constexpr std::size_t max_datagram = 1500;

std::uint32_t be32(std::string_view s, std::size_t off) {
  return (std::uint32_t{static_cast<unsigned char>(s[off])} << 24) |
         (std::uint32_t{static_cast<unsigned char>(s[off + 1])} << 16) |
         (std::uint32_t{static_cast<unsigned char>(s[off + 2])} << 8) |
         std::uint32_t{static_cast<unsigned char>(s[off + 3])};
}

/// The properties every parse must have, whatever the bytes.
void check_invariants(std::string_view pkt, const udp_parse_result& r, const udp_request& req,
                      const query_limits& limits) {
  if (pkt.size() < udp_header_size) {
    ASSERT_EQ(r.error, udp_error::packet_too_short);
    ASSERT_EQ(r.disposition, udp_disposition::drop);
    return;
  }
  ASSERT_NE(r.error, udp_error::packet_too_short);
  ASSERT_NE(r.error, udp_error::bad_response_length);
  ASSERT_EQ(r.ok(), r.disposition == udp_disposition::process);
  ASSERT_EQ(req.transaction.value, be32(pkt, 12));
  ASSERT_EQ(static_cast<std::uint32_t>(req.action), be32(pkt, 8));

  if (r.can_reply()) {
    std::string reply;
    encode_udp_error_reply(reply, req.transaction,
                           r.error == udp_error::ok ? udp_error::unknown_action : r.error,
                           pkt.size());
    ASSERT_LE(reply.size(), pkt.size()) << "an error reply must never amplify";
    udp_response resp;
    ASSERT_EQ(parse_udp_response(reply, false, resp), udp_error::ok);
    ASSERT_EQ(resp.action, udp_action::error);
    ASSERT_EQ(resp.transaction, req.transaction);
  }
  if (!r.ok()) {
    return;
  }
  switch (req.action) {
    case udp_action::connect:
      ASSERT_EQ(req.connection.value, udp_protocol_id);
      break;
    case udp_action::announce: {
      ASSERT_GE(pkt.size(), udp_announce_request_size);
      const announce_request& a = req.announce.request;
      ASSERT_NE(a.port, 0);
      ASSERT_GE(a.numwant, -1);
      ASSERT_LE(a.numwant, limits.max_numwant);
      ASSERT_EQ(a.key.size(), 8U);
      ASSERT_LE(a.uploaded >> 63, 0U);
      ASSERT_LE(a.downloaded >> 63, 0U);
      ASSERT_LE(a.left >> 63, 0U);
      ASSERT_EQ(a.hash.view(), pkt.substr(16, 20));
      ASSERT_EQ(a.id.view(), pkt.substr(36, 20));
      ASSERT_LE(req.announce.url_data.size(), limits.max_query_length);
      ASSERT_LE(req.announce.url_data.size(), pkt.size() - udp_announce_request_size);
      break;
    }
    case udp_action::scrape: {
      ASSERT_GE(req.scrape_hashes.size(), 1U);
      ASSERT_LE(req.scrape_hashes.size(),
                std::min(limits.max_scrape_hashes, udp_max_scrape_hashes));
      ASSERT_EQ(req.scrape_hashes.size(), (pkt.size() - 16) / 20);
      for (std::size_t i = 0; i < req.scrape_hashes.size(); ++i) {
        ASSERT_EQ(req.scrape_hashes[i].view(), pkt.substr(16 + 20 * i, 20));
      }
      break;
    }
    default:
      FAIL() << "ok() for action " << static_cast<std::uint32_t>(req.action);
  }
}

/// One exact-size heap copy of a packet, for ASan.
struct exact_buffer {
  explicit exact_buffer(const std::string& s)
      : data(new char[std::max<std::size_t>(s.size(), 1)]), size(s.size()) {
    std::copy(s.begin(), s.end(), data.get());
  }
  std::string_view view() const { return {data.get(), size}; }
  std::unique_ptr<char[]> data;
  std::size_t size;
};

class UdpHostile : public ::testing::Test {
 protected:
  UdpHostile() : rng_(sk::test::test_seed()), ids_(connection_id_key{}) {
    limits_.max_numwant = 80;
    limits_.max_scrape_hashes = 74;
  }

  void run(const std::string& pkt) {
    const exact_buffer buf(pkt);
    udp_request req;
    const udp_parse_result r = parse_udp_request(buf.view(), limits_, req);
    check_invariants(buf.view(), r, req, limits_);
    if (HasFatalFailure()) {
      ADD_FAILURE() << "packet of " << pkt.size() << " bytes, action "
                    << (pkt.size() >= 12 ? be32(pkt, 8) : 0);
      return;
    }
    // The gate on top: never processes what parsing rejected, never
    // answers what parsing dropped, and connects skip the id check.
    udp_request gated;
    const udp_parse_result g = accept_udp_request(buf.view(), limits_, ids_, client_, now_, gated);
    if (!r.can_reply()) {
      ASSERT_EQ(g.disposition, udp_disposition::drop);
      ASSERT_EQ(g.error, r.error);
    } else if (req.action == udp_action::connect) {
      ASSERT_EQ(g.error, r.error);
    } else if (req.connection == ids_.issue(client_, now_)) {
      ASSERT_EQ(g.error, r.error);
    } else {
      ASSERT_EQ(g.error, udp_error::invalid_connection_id);
      ASSERT_EQ(g.disposition, invalid_connection_id_disposition);
    }
    ++parsed_;
    if (r.ok()) {
      ++accepted_;
    }
  }

  std::string random_bytes(std::size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) {
      c = static_cast<char>(rng_());
    }
    return s;
  }

  /// Random bytes shaped like a request of `action`: the fields that gate
  /// parsing are made plausible half the time, so the deep paths run.
  std::string shaped(std::uint32_t action, std::size_t len) {
    std::string s = random_bytes(len);
    auto put = [&](std::size_t off, std::uint64_t v, int width) {
      for (int i = 0; i < width && off + static_cast<std::size_t>(i) < len; ++i) {
        s[off + static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * (width - 1 - i)));
      }
    };
    put(8, action, 4);
    const bool plausible = rng_() % 2 == 0;
    if (plausible) {
      if (action == 0) {
        put(0, udp_protocol_id, 8);
      } else {
        put(0, rng_() % 2 == 0 ? ids_.issue(client_, now_).value : rng_(), 8);
      }
      if (action == 1) {
        put(56, rng_() >> 1, 8);
        put(64, rng_() >> 1, 8);
        put(72, rng_() >> 1, 8);
        put(80, rng_() % 4, 4);
        put(92, rng_() % 3 == 0 ? 0xffffffffU : rng_(), 4);
        put(96, 1 + rng_() % 65535, 2);
        // Option-ish tail: type bytes 0..3 are common.
        for (std::size_t i = 98; i < len; ++i) {
          if (rng_() % 3 == 0) {
            s[i] = static_cast<char>(rng_() % 4);
          }
        }
      }
    }
    return s;
  }

  std::mt19937_64 rng_;
  connection_id_issuer ids_;
  query_limits limits_;
  endpoint client_{ip_address::make_v4(0x7f000001U), 40000};
  seconds now_{3600};
  std::size_t parsed_ = 0;
  std::size_t accepted_ = 0;
};

TEST_F(UdpHostile, EveryLengthForEveryAction) {
  SCOPED_TRACE(sk::test::seed_trace());
  const std::uint32_t actions[] = {0, 1, 2, 3, 4, 0x7fffffffU, 0xffffffffU};
  std::size_t accepted_by_action[3] = {0, 0, 0};
  for (std::uint32_t action : actions) {
    for (std::size_t len = 0; len <= max_datagram; ++len) {
      for (int k = 0; k < 4; ++k) {
        const std::string pkt = shaped(action, len);
        const std::size_t before = accepted_;
        run(pkt);
        ASSERT_FALSE(HasFatalFailure());
        if (accepted_ != before && action < 3) {
          ++accepted_by_action[action];
        }
      }
    }
  }
  EXPECT_EQ(parsed_, 7U * (max_datagram + 1) * 4);
  // The sweep really reached the success paths, not just the error exits.
  EXPECT_GT(accepted_by_action[0], 1000U) << "connect";
  EXPECT_GT(accepted_by_action[1], 1000U) << "announce";
  EXPECT_GT(accepted_by_action[2], 1000U) << "scrape";
}

TEST_F(UdpHostile, RandomDatagrams) {
  SCOPED_TRACE(sk::test::seed_trace());
  for (int i = 0; i < 200000; ++i) {
    const std::size_t len = rng_() % 4 == 0 ? rng_() % 120 : rng_() % (max_datagram + 1);
    run(random_bytes(len));
    ASSERT_FALSE(HasFatalFailure());
  }
  // Random bytes almost never form a valid request; the point is no crash.
  EXPECT_EQ(parsed_, 200000U);
}

TEST_F(UdpHostile, TruncationsOfValidRequests) {
  // Every prefix of a valid announce-with-options, scrape and connect.
  announce_request a;
  a.port = 1;
  a.key = "DEADBEEF";
  std::string announce;
  encode_udp_announce_request(announce, ids_.issue(client_, now_), transaction_id{5}, a,
                              std::string(600, 'u'));
  std::vector<info_hash> hashes(74);
  std::string scrape;
  encode_udp_scrape_request(scrape, ids_.issue(client_, now_), transaction_id{6}, hashes.data(),
                            hashes.size());
  std::string connect;
  encode_udp_connect_request(connect, transaction_id{7});
  for (const std::string* full : {&announce, &scrape, &connect}) {
    for (std::size_t len = 0; len <= full->size(); ++len) {
      run(full->substr(0, len));
      ASSERT_FALSE(HasFatalFailure()) << len;
    }
  }
}

TEST_F(UdpHostile, JumboDatagramsAreBounded) {
  // Up to the largest UDP payload: the scrape limit holds, options are
  // bounded by max_query_length.
  std::string scrape = shaped(2, 65507);
  const exact_buffer buf(scrape);
  udp_request req;
  EXPECT_EQ(parse_udp_request(buf.view(), limits_, req).error, udp_error::too_many_scrape_hashes);

  announce_request a;
  a.port = 1;
  std::string announce;
  encode_udp_announce_request(announce, connection_id{1}, transaction_id{1}, a,
                              std::string(60000, 'z'));
  const exact_buffer abuf(announce);
  const udp_parse_result r = parse_udp_request(abuf.view(), limits_, req);
  ASSERT_TRUE(r.ok());
  EXPECT_LE(req.announce.url_data.size(), limits_.max_query_length);
  EXPECT_TRUE(req.announce.options_malformed);
}

}  // namespace
