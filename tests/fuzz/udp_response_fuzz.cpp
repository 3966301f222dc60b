// libFuzzer target: BEP 15 reply datagrams as the load generator and the
// integration tests read them (protocol/udp.hpp: parse_udp_response), and
// the tracker's reply encoders as their inverse.
//
// Invariants checked besides "no sanitizer report":
// - only packets under 8 bytes are `packet_too_short`;
// - views (peers, message) point into the packet;
// - an accepted reply re-encodes with the tracker's encoder to the same
//   bytes whenever its counts are in the encoder's domain (0..INT32_MAX);
// - the peer list is a whole number of 6- or 18-byte entries.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "protocol/udp.hpp"

namespace {

using sk::udp_action;
using sk::udp_error;

bool inside(std::string_view view, std::string_view packet) {
  return view.empty() ||
         (view.data() >= packet.data() && view.data() + view.size() <= packet.data() + packet.size());
}

void check(std::string_view packet, bool ipv6) {
  sk::udp_response res;
  const udp_error e = sk::parse_udp_response(packet, ipv6, res);
  FUZZ_CHECK((e == udp_error::packet_too_short) == (packet.size() < 8));
  if (e != udp_error::ok) return;
  std::string again;
  switch (res.action) {
    case udp_action::connect:
      sk::encode_udp_connect_response(again, res.transaction, res.connection);
      FUZZ_CHECK(again == packet.substr(0, sk::udp_connect_response_size));
      return;
    case udp_action::announce:
      FUZZ_CHECK(inside(res.peers, packet));
      FUZZ_CHECK(res.peers.size() % sk::udp_peer_size(ipv6) == 0);
      FUZZ_CHECK(res.peers.size() + sk::udp_announce_response_header_size == packet.size());
      if (res.interval >= 0 && res.stats.complete >= 0 && res.stats.incomplete >= 0) {
        sk::encode_udp_announce_response(again, res.transaction, res.interval, res.stats,
                                         res.peers);
        FUZZ_CHECK(again == packet);
      }
      return;
    case udp_action::scrape: {
      FUZZ_CHECK(res.scrape.size() * sk::udp_scrape_response_entry_size +
                     sk::udp_scrape_response_header_size ==
                 packet.size());
      bool in_domain = true;
      for (const auto& s : res.scrape)
        in_domain = in_domain && s.complete >= 0 && s.downloaded >= 0 && s.incomplete >= 0;
      if (in_domain) {
        sk::encode_udp_scrape_response(again, res.transaction, res.scrape.data(),
                                       res.scrape.size());
        FUZZ_CHECK(again == packet);
      }
      return;
    }
    case udp_action::error:
      FUZZ_CHECK(inside(res.message, packet));
      sk::encode_udp_error_response(again, res.transaction, res.message);
      FUZZ_CHECK(again == packet);
      return;
  }
  FUZZ_CHECK(!"an unknown action was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view packet(reinterpret_cast<const char*>(data), size);
  check(packet, false);
  check(packet, true);
  return 0;
}
