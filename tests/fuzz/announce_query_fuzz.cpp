// libFuzzer target: the HTTP announce and scrape query parsers
// (protocol/announce.hpp). The input is the query string after '?'.
//
// Invariants checked besides "no sanitizer report":
// - an accepted announce is in the documented domain (port 1..65535,
//   numwant -1..max_numwant, an event the parser names);
// - re-encoding an accepted announce in the most literal form (every byte of
//   every string percent-escaped) parses back to the same request;
// - a request object reused from the previous input parses exactly like a
//   fresh one (the parser resets every field it does not see);
// - a limit one byte below the input's length is `query_too_long`;
// - an accepted scrape has at most max_scrape_hashes hashes and re-encodes
//   to the same list; every error has a failure text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "protocol/announce.hpp"

namespace {

using sk::announce_event;
using sk::announce_request;
using sk::query_error;

bool same_request(const announce_request& a, const announce_request& b) {
  return a.hash == b.hash && a.id == b.id && a.port == b.port && a.uploaded == b.uploaded &&
         a.downloaded == b.downloaded && a.left == b.left && a.numwant == b.numwant &&
         a.event == b.event && a.compact == b.compact && a.no_peer_id == b.no_peer_id &&
         a.key == b.key && a.tracker_id == b.tracker_id && a.claimed_ip == b.claimed_ip;
}

const char* event_name(announce_event e) {
  switch (e) {
    case announce_event::none:
      return "";
    case announce_event::completed:
      return "completed";
    case announce_event::started:
      return "started";
    case announce_event::stopped:
      return "stopped";
    case announce_event::paused:
      return "paused";
  }
  return nullptr;
}

/// The request as a query string, every string field fully escaped.
std::string encode_query(const announce_request& r) {
  using sk::fuzz::percent_encode_all;
  std::string q;
  q += "info_hash=" + percent_encode_all(r.hash.view());
  q += "&peer_id=" + percent_encode_all(r.id.view());
  q += "&port=" + std::to_string(r.port);
  q += "&uploaded=" + std::to_string(r.uploaded);
  q += "&downloaded=" + std::to_string(r.downloaded);
  q += "&left=" + std::to_string(r.left);
  q += "&numwant=" + std::to_string(r.numwant);
  q += std::string("&event=") + event_name(r.event);
  q += std::string("&compact=") + (r.compact ? "1" : "0");
  q += std::string("&no_peer_id=") + (r.no_peer_id ? "1" : "0");
  if (!r.key.empty()) q += "&key=" + percent_encode_all(r.key);
  if (!r.tracker_id.empty()) q += "&trackerid=" + percent_encode_all(r.tracker_id);
  if (r.claimed_ip) q += "&ip=" + percent_encode_all(r.claimed_ip->to_string());
  return q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view query(reinterpret_cast<const char*>(data), size);
  sk::query_limits limits;
  limits.max_numwant = 50;
  limits.max_scrape_hashes = 74;
  limits.max_query_length = 4096;

  // -- announce ---------------------------------------------------------------
  static announce_request warm;  // keeps whatever the previous input left in it
  announce_request fresh;
  const query_error e = sk::parse_announce_query(query, limits, fresh);
  FUZZ_CHECK(!sk::failure_text(e).empty());
  FUZZ_CHECK(!sk::make_error_code(e).message().empty());
  const query_error e_warm = sk::parse_announce_query(query, limits, warm);
  FUZZ_CHECK(e_warm == e);
  if (e == query_error::ok) FUZZ_CHECK(same_request(warm, fresh));

  if (size > 0) {
    sk::query_limits shorter = limits;
    shorter.max_query_length = size - 1;
    announce_request ignored;
    FUZZ_CHECK(sk::parse_announce_query(query, shorter, ignored) == query_error::query_too_long);
  }

  if (e == query_error::ok) {
    FUZZ_CHECK(fresh.port != 0);
    FUZZ_CHECK(fresh.numwant >= -1 && fresh.numwant <= limits.max_numwant);
    FUZZ_CHECK(event_name(fresh.event) != nullptr);
    const std::string again = encode_query(fresh);
    sk::query_limits roomy = limits;
    roomy.max_query_length = again.size();
    announce_request round;
    FUZZ_CHECK(sk::parse_announce_query(again, roomy, round) == query_error::ok);
    FUZZ_CHECK(same_request(round, fresh));
  }

  // -- scrape -----------------------------------------------------------------
  std::vector<sk::info_hash> hashes;
  const query_error s = sk::parse_scrape_query(query, limits, hashes);
  FUZZ_CHECK(!sk::failure_text(s).empty());
  if (s == query_error::ok) {
    FUZZ_CHECK(hashes.size() <= limits.max_scrape_hashes);
    std::string again;
    for (const auto& h : hashes) {
      if (!again.empty()) again += '&';
      again += "info_hash=" + sk::fuzz::percent_encode_all(h.view());
    }
    sk::query_limits roomy = limits;
    roomy.max_query_length = again.size();
    std::vector<sk::info_hash> round{sk::info_hash{}};  // not empty: the parser must clear it
    FUZZ_CHECK(sk::parse_scrape_query(again, roomy, round) == query_error::ok);
    FUZZ_CHECK(round == hashes);
  }
  return 0;
}
