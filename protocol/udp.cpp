#include "protocol/udp.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace sk {
namespace {

// -- big-endian access; `p` always has the bytes (lengths checked first) ----

inline std::uint16_t get_u16(const unsigned char* p) noexcept {
  return static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
inline std::uint32_t get_u32(const unsigned char* p) noexcept {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
inline std::uint64_t get_u64(const unsigned char* p) noexcept {
  return (std::uint64_t{get_u32(p)} << 32) | get_u32(p + 4);
}
inline void put_u16(char* p, std::uint16_t v) noexcept {
  p[0] = static_cast<char>(v >> 8);
  p[1] = static_cast<char>(v);
}
inline void put_u32(char* p, std::uint32_t v) noexcept {
  p[0] = static_cast<char>(v >> 24);
  p[1] = static_cast<char>(v >> 16);
  p[2] = static_cast<char>(v >> 8);
  p[3] = static_cast<char>(v);
}
inline void put_u64(char* p, std::uint64_t v) noexcept {
  put_u32(p, static_cast<std::uint32_t>(v >> 32));
  put_u32(p + 4, static_cast<std::uint32_t>(v));
}

/// Clamps a count or interval into the wire's non-negative i32.
inline std::uint32_t clamp_i32(std::int64_t v) noexcept {
  if (v < 0) {
    return 0;
  }
  constexpr std::int64_t max = std::numeric_limits<std::int32_t>::max();
  return static_cast<std::uint32_t>(v > max ? max : v);
}

constexpr udp_parse_result dropped(udp_error e) noexcept { return {e, udp_disposition::drop}; }
constexpr udp_parse_result answerable(udp_error e) noexcept {
  return {e, udp_disposition::reply_error};
}
constexpr udp_parse_result accepted{udp_error::ok, udp_disposition::process};

// -- announce --------------------------------------------------------------

// Offsets inside a 98-byte announce.
constexpr std::size_t off_info_hash = 16;
constexpr std::size_t off_peer_id = 36;
constexpr std::size_t off_downloaded = 56;
constexpr std::size_t off_left = 64;
constexpr std::size_t off_uploaded = 72;
constexpr std::size_t off_event = 80;
constexpr std::size_t off_ip = 84;
constexpr std::size_t off_key = 88;
constexpr std::size_t off_num_want = 92;
constexpr std::size_t off_port = 96;

constexpr unsigned char option_end = 0x0;
constexpr unsigned char option_nop = 0x1;
constexpr unsigned char option_url_data = 0x2;

/// Reads BEP 41 options from `p[0..n)`. Never fails: a fault just ends the
/// walk (and is flagged), keeping whatever complete URLData came before.
void parse_options(const unsigned char* p, std::size_t n, std::size_t max_url, udp_announce& out) {
  std::size_t i = 0;
  while (i < n) {
    const unsigned char type = p[i++];
    if (type == option_end) {
      return;  // bytes after EndOfOptions are not options
    }
    if (type == option_nop) {
      continue;
    }
    // Every other type, known or not, has a length byte: unknown ones are
    // skipped by it (forward compatible).
    if (i >= n) {
      out.options_malformed = true;  // length byte missing
      return;
    }
    const std::size_t len = p[i++];
    if (len > n - i) {
      out.options_malformed = true;  // data runs past the packet
      return;
    }
    if (type == option_url_data) {
      if (len > max_url - std::min(max_url, out.url_data.size())) {
        out.options_malformed = true;  // over the limit
        return;
      }
      out.url_data.append(reinterpret_cast<const char*>(p + i), len);
    }
    i += len;
  }
}

udp_parse_result parse_announce(const unsigned char* p, std::size_t n, const query_limits& limits,
                                udp_announce& out) {
  if (n < udp_announce_request_size) {
    return answerable(udp_error::announce_too_short);
  }
  const std::uint32_t event = get_u32(p + off_event);
  // 0..3 are BEP 15's; 4 is BEP 21's `paused`, as libtorrent sends it.
  if (event > 4) {
    return answerable(udp_error::bad_event);
  }
  const std::uint64_t downloaded = get_u64(p + off_downloaded);
  const std::uint64_t left = get_u64(p + off_left);
  const std::uint64_t uploaded = get_u64(p + off_uploaded);
  // The fields are i64 on the wire; the HTTP parser rejects negative values
  // too, so both transports hand the swarm the same domain.
  if (((downloaded | left | uploaded) >> 63U) != 0) {
    return answerable(udp_error::negative_amount);
  }
  const std::uint16_t port = get_u16(p + off_port);
  if (port == 0) {
    return answerable(udp_error::port_zero);
  }

  announce_request& r = out.request;
  r.hash = info_hash::from_bytes({reinterpret_cast<const char*>(p + off_info_hash), 20});
  r.id = peer_id::from_bytes({reinterpret_cast<const char*>(p + off_peer_id), 20});
  r.port = port;
  r.downloaded = downloaded;
  r.left = left;
  r.uploaded = uploaded;
  static constexpr announce_event events[5] = {announce_event::none, announce_event::completed,
                                               announce_event::started, announce_event::stopped,
                                               announce_event::paused};
  r.event = events[event];

  const auto num_want = static_cast<std::int32_t>(get_u32(p + off_num_want));
  const std::int32_t cap = std::max<std::int32_t>(0, limits.max_numwant);
  r.numwant = num_want < 0 ? -1 : std::min(num_want, cap);

  static constexpr char hex[] = "0123456789ABCDEF";
  const std::uint32_t key = get_u32(p + off_key);
  char key_text[8];
  for (unsigned i = 0; i < 8; ++i) {
    key_text[i] = hex[(key >> (28U - 4U * i)) & 0xfU];
  }
  r.key.assign(key_text, 8);

  const std::uint32_t ip = get_u32(p + off_ip);
  if (ip != 0) {
    r.claimed_ip = ip_address::make_v4(ip);
  } else {
    r.claimed_ip.reset();
  }
  r.compact = true;
  r.no_peer_id = true;
  r.tracker_id.clear();

  out.url_data.clear();
  out.options_malformed = false;
  parse_options(p + udp_announce_request_size, n - udp_announce_request_size,
                limits.max_query_length, out);
  return accepted;
}

// -- scrape ----------------------------------------------------------------

udp_parse_result parse_scrape(const unsigned char* p, std::size_t n, const query_limits& limits,
                              std::vector<info_hash>& out) {
  // A partial trailing hash (< 20 bytes) is ignored like any trailing bytes.
  const std::size_t count = (n - udp_header_size) / info_hash::size;
  if (count == 0) {
    return answerable(udp_error::zero_scrape_hashes);
  }
  if (count > std::min(limits.max_scrape_hashes, udp_max_scrape_hashes)) {
    return answerable(udp_error::too_many_scrape_hashes);
  }
  out.clear();
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(info_hash::from_bytes(
        {reinterpret_cast<const char*>(p + udp_header_size + i * info_hash::size),
         info_hash::size}));
  }
  return accepted;
}

// -- error category ----------------------------------------------------------

class udp_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "udp"; }
  std::string message(int ev) const override {
    switch (static_cast<udp_error>(ev)) {
      case udp_error::ok:
        return "no error";
      case udp_error::packet_too_short:
        return "UDP packet shorter than the 16-byte request header (dropped)";
      case udp_error::bad_protocol_id:
        return "UDP connect request without the BEP 15 protocol id 0x41727101980 (dropped)";
      case udp_error::error_action:
        return "UDP packet with action 3 (error) sent to the tracker (dropped)";
      case udp_error::unknown_action:
        return "UDP request with an action other than connect, announce or scrape";
      case udp_error::announce_too_short:
        return "UDP announce shorter than 98 bytes";
      case udp_error::bad_event:
        return "UDP announce with an event other than 0..4";
      case udp_error::port_zero:
        return "UDP announce with port 0";
      case udp_error::negative_amount:
        return "UDP announce with a negative downloaded, left or uploaded";
      case udp_error::zero_scrape_hashes:
        return "UDP scrape without a complete 20-byte info_hash";
      case udp_error::too_many_scrape_hashes:
        return "UDP scrape with more info_hashes than the configured limit (at most 74)";
      case udp_error::invalid_connection_id:
        return "UDP request with a connection id that is forged, expired or was issued to "
               "another address or port";
      case udp_error::bad_response_length:
        return "UDP reply too short for its action, or with a ragged peer list";
    }
    return "unknown UDP error";
  }
};

}  // namespace

const std::error_category& udp_category() noexcept {
  static const udp_category_impl instance;
  return instance;
}

std::error_code make_error_code(udp_error e) noexcept {
  return {static_cast<int>(e), udp_category()};
}

std::string_view udp_error_text(udp_error e) noexcept {
  switch (e) {
    case udp_error::ok:
      return "ok";
    case udp_error::packet_too_short:
      return "packet too short";
    case udp_error::bad_protocol_id:
      return "bad protocol id";
    case udp_error::error_action:
      return "unexpected error packet";
    case udp_error::unknown_action:
      return "unknown action";
    case udp_error::announce_too_short:
      return "announce too short";
    case udp_error::bad_event:
      return "unknown event";
    case udp_error::port_zero:
      return "invalid port 0";
    case udp_error::negative_amount:
      return "negative uploaded/downloaded/left";
    case udp_error::zero_scrape_hashes:
      return "scrape without info_hash";
    case udp_error::too_many_scrape_hashes:
      return "too many info_hashes";
    case udp_error::invalid_connection_id:
      return "connection id expired";
    case udp_error::bad_response_length:
      return "bad response length";
  }
  return "error";
}

udp_parse_result parse_udp_request(std::string_view packet, const query_limits& limits,
                                   udp_request& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(packet.data());
  const std::size_t n = packet.size();
  if (n < udp_header_size) {
    return dropped(udp_error::packet_too_short);
  }
  out.connection = connection_id{get_u64(p)};
  const std::uint32_t action = get_u32(p + 8);
  out.action = static_cast<udp_action>(action);
  out.transaction = transaction_id{get_u32(p + 12)};

  switch (action) {
    case static_cast<std::uint32_t>(udp_action::connect):
      // Anything that is not a BEP 15 client (scanners, other protocols,
      // replies reflected at us) is not worth a packet.
      return out.connection.value == udp_protocol_id ? accepted
                                                     : dropped(udp_error::bad_protocol_id);
    case static_cast<std::uint32_t>(udp_action::announce):
      return parse_announce(p, n, limits, out.announce);
    case static_cast<std::uint32_t>(udp_action::scrape):
      return parse_scrape(p, n, limits, out.scrape_hashes);
    case static_cast<std::uint32_t>(udp_action::error):
      // Answering an error with an error could loop between two trackers
      // (one spoofed packet, endless ping-pong).
      return dropped(udp_error::error_action);
    default:
      return answerable(udp_error::unknown_action);
  }
}

udp_parse_result accept_udp_request(std::string_view packet, const query_limits& limits,
                                    const connection_id_issuer& ids, const endpoint& client,
                                    std::chrono::seconds now, udp_request& out) {
  const udp_parse_result parsed = parse_udp_request(packet, limits, out);
  if (!parsed.can_reply() || out.action == udp_action::connect) {
    return parsed;
  }
  // Every other request starts with a connection id; check it before
  // reporting anything about the content.
  if (!ids.valid(out.connection, client, now)) {
    return {udp_error::invalid_connection_id, invalid_connection_id_disposition};
  }
  return parsed;
}

// -- encoders ----------------------------------------------------------------

void encode_udp_connect_response(std::string& out, transaction_id transaction,
                                 connection_id connection) {
  char b[udp_connect_response_size];
  put_u32(b, static_cast<std::uint32_t>(udp_action::connect));
  put_u32(b + 4, transaction.value);
  put_u64(b + 8, connection.value);
  out.append(b, sizeof b);
}

void encode_udp_announce_header(char* b, transaction_id transaction, std::int64_t interval,
                                const swarm_stats& stats) noexcept {
  put_u32(b, static_cast<std::uint32_t>(udp_action::announce));
  put_u32(b + 4, transaction.value);
  put_u32(b + 8, clamp_i32(interval));
  put_u32(b + 12, clamp_i32(stats.incomplete));
  put_u32(b + 16, clamp_i32(stats.complete));
}

void encode_udp_announce_response(std::string& out, transaction_id transaction,
                                  std::int64_t interval, const swarm_stats& stats,
                                  std::string_view compact_peers) {
  char b[udp_announce_response_header_size];
  encode_udp_announce_header(b, transaction, interval, stats);
  out.reserve(out.size() + sizeof b + compact_peers.size());
  out.append(b, sizeof b);
  out.append(compact_peers.data(), compact_peers.size());
}

void encode_udp_scrape_response(std::string& out, transaction_id transaction,
                                const swarm_stats* stats, std::size_t count) {
  const std::size_t start = out.size();
  out.resize(start + udp_scrape_response_header_size + count * udp_scrape_response_entry_size);
  char* b = &out[start];
  put_u32(b, static_cast<std::uint32_t>(udp_action::scrape));
  put_u32(b + 4, transaction.value);
  b += udp_scrape_response_header_size;
  for (std::size_t i = 0; i < count; ++i, b += udp_scrape_response_entry_size) {
    put_u32(b, clamp_i32(stats[i].complete));
    put_u32(b + 4, clamp_i32(stats[i].downloaded));
    put_u32(b + 8, clamp_i32(stats[i].incomplete));
  }
}

void encode_udp_error_response(std::string& out, transaction_id transaction,
                               std::string_view message) {
  char b[udp_error_header_size];
  put_u32(b, static_cast<std::uint32_t>(udp_action::error));
  put_u32(b + 4, transaction.value);
  out.reserve(out.size() + sizeof b + message.size());
  out.append(b, sizeof b);
  out.append(message.data(), message.size());
}

void encode_udp_error_reply(std::string& out, transaction_id transaction, udp_error error,
                            std::size_t request_size) {
  std::string_view text = udp_error_text(error);
  const std::size_t room =
      request_size > udp_error_header_size ? request_size - udp_error_header_size : 0;
  encode_udp_error_response(out, transaction, text.substr(0, std::min(room, text.size())));
}

void encode_udp_connect_request(std::string& out, transaction_id transaction) {
  char b[udp_connect_request_size];
  put_u64(b, udp_protocol_id);
  put_u32(b + 8, static_cast<std::uint32_t>(udp_action::connect));
  put_u32(b + 12, transaction.value);
  out.append(b, sizeof b);
}

void encode_udp_announce_request(std::string& out, connection_id connection,
                                 transaction_id transaction, const announce_request& request,
                                 std::string_view url_data) {
  char b[udp_announce_request_size];
  put_u64(b, connection.value);
  put_u32(b + 8, static_cast<std::uint32_t>(udp_action::announce));
  put_u32(b + 12, transaction.value);
  std::memcpy(b + off_info_hash, request.hash.bytes.data(), 20);
  std::memcpy(b + off_peer_id, request.id.bytes.data(), 20);
  put_u64(b + off_downloaded, request.downloaded);
  put_u64(b + off_left, request.left);
  put_u64(b + off_uploaded, request.uploaded);
  std::uint32_t event = 0;
  switch (request.event) {
    case announce_event::none:
      event = 0;
      break;
    case announce_event::completed:
      event = 1;
      break;
    case announce_event::started:
      event = 2;
      break;
    case announce_event::stopped:
      event = 3;
      break;
    case announce_event::paused:
      event = 4;
      break;
  }
  put_u32(b + off_event, event);
  std::uint32_t ip = 0;
  if (request.claimed_ip && !request.claimed_ip->v6) {
    ip = get_u32(request.claimed_ip->bytes.data());
  }
  put_u32(b + off_ip, ip);
  std::uint32_t key = 0;
  if (request.key.size() == 8) {
    for (char c : request.key) {
      int v = -1;
      if (c >= '0' && c <= '9') {
        v = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        v = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        v = c - 'A' + 10;
      }
      if (v < 0) {
        key = 0;
        break;
      }
      key = (key << 4U) | static_cast<std::uint32_t>(v);
    }
  }
  put_u32(b + off_key, key);
  put_u32(b + off_num_want, static_cast<std::uint32_t>(request.numwant));
  put_u16(b + off_port, request.port);
  out.append(b, sizeof b);
  while (!url_data.empty()) {
    const std::size_t chunk = std::min<std::size_t>(url_data.size(), 255);
    out.push_back(static_cast<char>(option_url_data));
    out.push_back(static_cast<char>(chunk));
    out.append(url_data.data(), chunk);
    url_data.remove_prefix(chunk);
  }
}

void encode_udp_scrape_request(std::string& out, connection_id connection,
                               transaction_id transaction, const info_hash* hashes,
                               std::size_t count) {
  char b[udp_header_size];
  put_u64(b, connection.value);
  put_u32(b + 8, static_cast<std::uint32_t>(udp_action::scrape));
  put_u32(b + 12, transaction.value);
  out.reserve(out.size() + sizeof b + count * info_hash::size);
  out.append(b, sizeof b);
  for (std::size_t i = 0; i < count; ++i) {
    out.append(hashes[i].view().data(), info_hash::size);
  }
}

udp_error parse_udp_response(std::string_view packet, bool ipv6_peers, udp_response& out) {
  const auto* p = reinterpret_cast<const unsigned char*>(packet.data());
  const std::size_t n = packet.size();
  if (n < 8) {
    return udp_error::packet_too_short;
  }
  const std::uint32_t action = get_u32(p);
  out.action = static_cast<udp_action>(action);
  out.transaction = transaction_id{get_u32(p + 4)};
  switch (action) {
    case static_cast<std::uint32_t>(udp_action::connect):
      if (n < udp_connect_response_size) {
        return udp_error::bad_response_length;
      }
      out.connection = connection_id{get_u64(p + 8)};
      return udp_error::ok;
    case static_cast<std::uint32_t>(udp_action::announce): {
      if (n < udp_announce_response_header_size) {
        return udp_error::bad_response_length;
      }
      out.interval = static_cast<std::int32_t>(get_u32(p + 8));
      out.stats = swarm_stats{};
      out.stats.incomplete = static_cast<std::int32_t>(get_u32(p + 12));
      out.stats.complete = static_cast<std::int32_t>(get_u32(p + 16));
      out.peers = packet.substr(udp_announce_response_header_size);
      if (out.peers.size() % udp_peer_size(ipv6_peers) != 0) {
        return udp_error::bad_response_length;
      }
      return udp_error::ok;
    }
    case static_cast<std::uint32_t>(udp_action::scrape): {
      const std::size_t body = n - udp_scrape_response_header_size;
      if (body % udp_scrape_response_entry_size != 0) {
        return udp_error::bad_response_length;
      }
      out.scrape.clear();
      for (std::size_t off = udp_scrape_response_header_size; off < n;
           off += udp_scrape_response_entry_size) {
        swarm_stats s;
        s.complete = static_cast<std::int32_t>(get_u32(p + off));
        s.downloaded = static_cast<std::int32_t>(get_u32(p + off + 4));
        s.incomplete = static_cast<std::int32_t>(get_u32(p + off + 8));
        out.scrape.push_back(s);
      }
      return udp_error::ok;
    }
    case static_cast<std::uint32_t>(udp_action::error):
      out.message = packet.substr(udp_error_header_size);
      return udp_error::ok;
    default:
      return udp_error::unknown_action;
  }
}

}  // namespace sk
