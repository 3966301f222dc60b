#include "protocol/reply.hpp"

#include <algorithm>

#include "protocol/bencode.hpp"

// Key order is bytewise (BEP 3). The announce reply, with the optional keys
// in brackets:
//
//   d 8:complete i..e  10:downloaded i..e  [11:external ip <4|16 bytes>]
//     10:incomplete i..e  8:interval i..e  12:min interval i..e
//     5:peers (<6n bytes> | l d 2:ip <text> [7:peer id <20>] 4:port i..e e ... e)
//     [6:peers6 <18n bytes>]  [10:tracker id ..]  [15:warning message ..]
//   e
//
// `peers` is always present (possibly "0:" or "le") so a client never has to
// guess; `peers6` only in compact replies with IPv6 peers (non-compact
// replies list IPv6 peers in `peers` with their text address, BEP 7).
// `interval` and `min interval` are always written.
//
// The bencode_writer asserts this order in debug builds, so a typo here
// fails every test rather than producing a reply clients reject.

namespace sk {

namespace {

/// Grows `out` geometrically so that `extra` more bytes fit. A plain
/// reserve(size + extra) would reallocate on every reply when a caller keeps
/// appending to one buffer (libstdc++ reserves exactly what is asked).
void make_room(std::string& out, std::size_t extra) {
  const std::size_t need = out.size() + extra;
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
}

}  // namespace

void encode_announce_reply(std::string& out, const announce_reply_view& r) {
  assert(r.peers4.size() % 6 == 0 && "compact IPv4 peers are 6 bytes each");
  assert(r.peers6.size() % 18 == 0 && "compact IPv6 peers are 18 bytes each");

  // Fixed part: keys and up to seven 20-digit integers stay under 256 bytes.
  std::size_t estimate = 256 + r.tracker_id.size() + r.warning_message.size();
  if (r.compact) {
    estimate += r.peers4.size() + r.peers6.size();
  } else {
    // d 2:ip 45:<text> 7:peer id 20:<id> 4:port i65535e e
    estimate += 2 + r.peer_count * 96;
  }
  make_room(out, estimate);

  bencode_writer w(out);
  w.dict_begin();
  w.int_entry("complete", r.stats.complete);
  w.int_entry("downloaded", r.stats.downloaded);
  if (r.external_ip) w.string_entry("external ip", r.external_ip->raw());
  w.int_entry("incomplete", r.stats.incomplete);
  w.int_entry("interval", r.interval);
  w.int_entry("min interval", r.min_interval);
  if (r.compact) {
    w.string_entry("peers", r.peers4);
    if (!r.peers6.empty()) w.string_entry("peers6", r.peers6);
  } else {
    w.key("peers");
    w.list_begin();
    char text[ip_address::max_text_length];
    for (std::size_t i = 0; i < r.peer_count; ++i) {
      const peer_entry& p = r.peers[i];
      w.dict_begin();
      w.string_entry("ip", std::string_view(text, p.ep.ip.to_chars(text)));
      if (!r.no_peer_id) w.string_entry("peer id", p.id.view());
      w.int_entry("port", p.ep.port);
      w.dict_end();
    }
    w.list_end();
  }
  if (!r.tracker_id.empty()) w.string_entry("tracker id", r.tracker_id);
  if (!r.warning_message.empty()) w.string_entry("warning message", r.warning_message);
  w.dict_end();
}

void encode_failure(std::string& out, std::string_view reason,
                    std::optional<std::int64_t> retry_in_minutes) {
  make_room(out, 64 + reason.size());
  bencode_writer w(out);
  w.dict_begin();
  w.string_entry("failure reason", reason);
  if (retry_in_minutes) {
    // BEP 31: minutes as an integer, or the string "never".
    if (*retry_in_minutes < 0) {
      w.string_entry("retry in", "never");
    } else {
      w.int_entry("retry in", *retry_in_minutes);
    }
  }
  w.dict_end();
}

void encode_scrape_reply(std::string& out, const scrape_entry* entries, std::size_t count) {
  // Per entry: 20:<hash> d 8:complete i..e 10:downloaded i..e 11:downloaders i..e
  //                        10:incomplete i..e e
  // `downloaders` is BEP 21's: incomplete peers that are not partial seeds.
  make_room(out, 16 + count * 144);
  bencode_writer w(out);
  w.dict_begin();
  w.key("files");
  w.dict_begin();
  for (std::size_t i = 0; i < count; ++i) {
    const scrape_entry& e = entries[i];
    w.key(e.hash.view());  // the writer asserts ascending, distinct hashes in debug builds
    w.dict_begin();
    w.int_entry("complete", e.stats.complete);
    w.int_entry("downloaded", e.stats.downloaded);
    w.int_entry("downloaders", std::max<std::int64_t>(0, e.stats.incomplete - e.stats.partial));
    w.int_entry("incomplete", e.stats.incomplete);
    w.dict_end();
  }
  w.dict_end();
  w.dict_end();
}

}  // namespace sk
