// libFuzzer target: BEP 15 request datagrams as the tracker receives them
// (protocol/udp.hpp: parse_udp_request, accept_udp_request, the error reply).
//
// Invariants checked besides "no sanitizer report":
// - the disposition matches the error (ok <=> process), and a packet that
//   may be answered had the 16-byte header whose ids the request carries;
// - a request object reused from the previous datagram parses exactly like a
//   fresh one wherever the result is defined;
// - connect re-encodes to the same 16 bytes; an accepted announce re-encodes
//   (encode_udp_announce_request) to the same fixed fields — byte for byte
//   except num_want, which the parser maps into -1..max_numwant — and parses
//   back to the same request and URL data; a scrape re-encodes to the same
//   hashes;
// - accept_udp_request answers nothing about content to a forged connection
//   id, and with a genuine id agrees with parse_udp_request;
// - the error reply for an answerable packet is never larger than it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/udp.hpp"

namespace {

using sk::udp_action;
using sk::udp_disposition;
using sk::udp_error;

std::uint32_t be32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
std::uint64_t be64(const std::uint8_t* p) { return (std::uint64_t{be32(p)} << 32) | be32(p + 4); }

bool same_request(const sk::announce_request& a, const sk::announce_request& b) {
  return a.hash == b.hash && a.id == b.id && a.port == b.port && a.uploaded == b.uploaded &&
         a.downloaded == b.downloaded && a.left == b.left && a.numwant == b.numwant &&
         a.event == b.event && a.compact == b.compact && a.no_peer_id == b.no_peer_id &&
         a.key == b.key && a.tracker_id == b.tracker_id && a.claimed_ip == b.claimed_ip;
}

bool same_parse(const sk::udp_request& a, const sk::udp_request& b) {
  if (a.action != b.action || a.connection != b.connection || a.transaction != b.transaction)
    return false;
  if (a.action == udp_action::announce)
    return same_request(a.announce.request, b.announce.request) &&
           a.announce.url_data == b.announce.url_data &&
           a.announce.options_malformed == b.announce.options_malformed;
  if (a.action == udp_action::scrape) return a.scrape_hashes == b.scrape_hashes;
  return true;
}

const sk::connection_id_issuer& issuer() {
  static const sk::connection_id_issuer ids(sk::connection_id_key{
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view packet(reinterpret_cast<const char*>(data), size);
  sk::query_limits limits;
  limits.max_numwant = 50;
  limits.max_scrape_hashes = 74;
  limits.max_query_length = 600;

  sk::udp_request req;
  const sk::udp_parse_result r = sk::parse_udp_request(packet, limits, req);
  FUZZ_CHECK(r.ok() == (r.disposition == udp_disposition::process));
  FUZZ_CHECK(!sk::make_error_code(r.error).message().empty());
  FUZZ_CHECK(!sk::udp_error_text(r.error).empty());
  if (size < sk::udp_header_size) {
    FUZZ_CHECK(r.error == udp_error::packet_too_short && !r.can_reply());
    return 0;
  }
  FUZZ_CHECK(req.connection.value == be64(data));
  FUZZ_CHECK(static_cast<std::uint32_t>(req.action) == be32(data + 8));
  FUZZ_CHECK(req.transaction.value == be32(data + 12));

  static sk::udp_request warm;  // what the previous datagram left behind
  const sk::udp_parse_result rw = sk::parse_udp_request(packet, limits, warm);
  FUZZ_CHECK(rw.error == r.error && rw.disposition == r.disposition);
  if (r.ok()) FUZZ_CHECK(same_parse(warm, req));

  if (r.can_reply() && !r.ok()) {
    std::string reply;
    sk::encode_udp_error_reply(reply, req.transaction, r.error, size);
    FUZZ_CHECK(reply.size() >= sk::udp_error_header_size && reply.size() <= size);
    sk::udp_response parsed;
    FUZZ_CHECK(sk::parse_udp_response(reply, false, parsed) == udp_error::ok);
    FUZZ_CHECK(parsed.action == udp_action::error && parsed.transaction == req.transaction);
  }

  if (r.ok()) {
    std::string again;
    switch (req.action) {
      case udp_action::connect:
        sk::encode_udp_connect_request(again, req.transaction);
        FUZZ_CHECK(again == packet.substr(0, sk::udp_connect_request_size));
        break;
      case udp_action::announce: {
        const sk::udp_announce& a = req.announce;
        FUZZ_CHECK(a.request.port != 0 && a.request.compact && a.request.no_peer_id);
        FUZZ_CHECK(a.request.numwant >= -1 && a.request.numwant <= limits.max_numwant);
        FUZZ_CHECK(a.request.key.size() == 8 && a.request.tracker_id.empty());
        FUZZ_CHECK(a.url_data.size() <= limits.max_query_length);
        sk::encode_udp_announce_request(again, req.connection, req.transaction, a.request,
                                        a.url_data);
        FUZZ_CHECK(again.size() >= sk::udp_announce_request_size);
        FUZZ_CHECK(std::memcmp(again.data(), data, 92) == 0);    // up to num_want
        FUZZ_CHECK(std::memcmp(again.data() + 96, data + 96, 2) == 0);  // port
        const auto sent_numwant = static_cast<std::int32_t>(be32(data + 92));
        if (sent_numwant >= -1 && sent_numwant <= limits.max_numwant)
          FUZZ_CHECK(std::memcmp(again.data() + 92, data + 92, 4) == 0);
        sk::udp_request round;
        FUZZ_CHECK(sk::parse_udp_request(again, limits, round).ok());
        FUZZ_CHECK(same_request(round.announce.request, a.request));
        FUZZ_CHECK(round.announce.url_data == a.url_data);
        FUZZ_CHECK(!round.announce.options_malformed);
        break;
      }
      case udp_action::scrape: {
        const std::size_t count = (size - sk::udp_header_size) / sk::info_hash::size;
        FUZZ_CHECK(req.scrape_hashes.size() == count && count >= 1);
        FUZZ_CHECK(count <= sk::udp_max_scrape_hashes && count <= limits.max_scrape_hashes);
        sk::encode_udp_scrape_request(again, req.connection, req.transaction,
                                      req.scrape_hashes.data(), req.scrape_hashes.size());
        FUZZ_CHECK(again == packet.substr(0, again.size()));
        break;
      }
      case udp_action::error:
        FUZZ_CHECK(!"an error packet was accepted as a request");
    }
  }

  // The authenticated entry point: a forged id learns nothing about content.
  const sk::endpoint client{sk::ip_address::make_v4(0x0a000001u), 6881};
  const std::chrono::seconds now{1000000};
  sk::udp_request checked;
  const sk::udp_parse_result a = sk::accept_udp_request(packet, limits, issuer(), client, now,
                                                        checked);
  if (!r.can_reply() || req.action == udp_action::connect) {
    FUZZ_CHECK(a.error == r.error && a.disposition == r.disposition);
  } else if (!issuer().valid(req.connection, client, now)) {
    FUZZ_CHECK(a.error == udp_error::invalid_connection_id);
    FUZZ_CHECK(a.disposition == sk::invalid_connection_id_disposition);
  }
  // The same datagram with a genuine id is judged on its content alone.
  if (req.action != udp_action::connect) {
    std::string genuine(packet);
    const std::uint64_t id = issuer().issue(client, now).value;
    for (int i = 0; i < 8; ++i) genuine[i] = static_cast<char>(id >> (56 - 8 * i));
    sk::udp_request plain;
    const sk::udp_parse_result p = sk::parse_udp_request(genuine, limits, plain);
    const sk::udp_parse_result g =
        sk::accept_udp_request(genuine, limits, issuer(), client, now, checked);
    FUZZ_CHECK(g.error == p.error && g.disposition == p.disposition);
  }
  return 0;
}
