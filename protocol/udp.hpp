#pragma once
/// BEP 15 UDP tracker packets: request parsing and reply encoding for the
/// tracker, plus the reverse (request encoding, reply parsing) for load
/// generators and tests. Pure C++17: bytes in, bytes appended to a buffer the
/// caller owns. No sockets here; net/ does the I/O.
///
/// Every integer on the wire is big-endian. Offsets are in bytes.
///
/// Requests (client -> tracker)
///
///     connect (16)                     announce (98, then BEP 41 options)
///      0 +------------------------+     0 +------------------------+
///        | protocol id            |       | connection id          |
///        | 0x41727101980 (u64)    |     8 +------------------------+
///      8 +------------------------+       | action = 1 (u32)       |
///        | action = 0 (u32)       |    12 +------------------------+
///     12 +------------------------+       | transaction id (u32)   |
///        | transaction id (u32)   |    16 +------------------------+
///     16 +------------------------+       | info_hash (20)         |
///                                      36 +------------------------+
///     scrape (16 + 20 n)                  | peer_id (20)           |
///      0 +------------------------+    56 +------------------------+
///        | connection id (u64)    |       | downloaded (i64)       |
///      8 +------------------------+    64 +------------------------+
///        | action = 2 (u32)       |       | left (i64)             |
///     12 +------------------------+    72 +------------------------+
///        | transaction id (u32)   |       | uploaded (i64)         |
///     16 +------------------------+    80 +------------------------+
///        | info_hash 1 (20)       |       | event (u32) 0 none,    |
///        | ...                    |       | 1 completed, 2 started,|
///        | info_hash n (20)       |       | 3 stopped              |
///        +------------------------+    84 +------------------------+
///       1 <= n <= min(limit, 74)          | IP (u32, 0 = sender's) |
///                                      88 +------------------------+
///                                         | key (u32)              |
///                                      92 +------------------------+
///                                         | num_want (i32, -1 dflt)|
///                                      96 +------------------------+
///                                         | port (u16)             |
///                                      98 +------------------------+
///                                         | BEP 41 options ...     |
///
/// Replies (tracker -> client)
///
///     connect (16)        announce (20 + 6 n, or 20 + 18 n over IPv6)
///      0 +-----------+     0 +-------------------+
///        | action 0  |       | action 1          |
///      4 +-----------+     4 +-------------------+
///        | trans. id |       | transaction id    |
///      8 +-----------+     8 +-------------------+
///        | conn. id  |       | interval (i32)    |
///        | (u64)     |    12 +-------------------+
///     16 +-----------+       | leechers (i32)    |
///                         16 +-------------------+
///     error (8 + text)       | seeders (i32)     |
///      0 +-----------+    20 +-------------------+
///        | action 3  |       | peers: IPv4 (4) + port (2) each, or
///      4 +-----------+       |        IPv6 (16) + port (2) each
///        | trans. id |       +-------------------+
///      8 +-----------+
///        | message   |    scrape (8 + 12 n), per hash in request order:
///        | (no NUL)  |       +--------+-----------+----------+
///        +-----------+       | seeders| completed | leechers |  (i32 each)
///                            +--------+-----------+----------+
///
/// BEP 41 options follow byte 98 of an announce: a type byte, then for every
/// type but EndOfOptions (0x0) and NOP (0x1) a length byte and that many
/// bytes. URLData (0x2) chunks are concatenated into `udp_announce::url_data`.
///
/// Hostile input: every length is checked before it is read; trailing bytes
/// after any request are ignored (BEP 15: "clients and trackers should not
/// assume packets to be of a certain size"), and malformed options never
/// fail the announce that carries them.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "protocol/announce.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/reply.hpp"
#include "protocol/types.hpp"

namespace sk {

/// The client-chosen 32-bit id a reply must echo. Opaque: read and written
/// in the same byte order, so the client gets back exactly its bytes.
struct transaction_id {
  std::uint32_t value = 0;
  friend bool operator==(transaction_id a, transaction_id b) noexcept { return a.value == b.value; }
  friend bool operator!=(transaction_id a, transaction_id b) noexcept { return a.value != b.value; }
};

/// The action field. Any other value on the wire is an unknown action (the
/// enum may hold it; compare, don't switch exhaustively).
enum class udp_action : std::uint32_t { connect = 0, announce = 1, scrape = 2, error = 3 };

/// The magic a connect request carries in place of a connection id.
inline constexpr std::uint64_t udp_protocol_id = 0x41727101980ULL;

inline constexpr std::size_t udp_header_size = 16;  ///< connection id + action + transaction id
inline constexpr std::size_t udp_connect_request_size = 16;
inline constexpr std::size_t udp_connect_response_size = 16;
inline constexpr std::size_t udp_announce_request_size = 98;  ///< without BEP 41 options
inline constexpr std::size_t udp_announce_response_header_size = 20;
inline constexpr std::size_t udp_scrape_response_header_size = 8;
inline constexpr std::size_t udp_scrape_response_entry_size = 12;
inline constexpr std::size_t udp_error_header_size = 8;
/// BEP 15's hard cap on info_hashes per scrape ((1500 - 16) / 20 rounded down
/// to what fits an Ethernet frame).
inline constexpr std::size_t udp_max_scrape_hashes = 74;
inline constexpr std::size_t udp_peer4_size = 6;   ///< IPv4 address + port
inline constexpr std::size_t udp_peer6_size = 18;  ///< IPv6 address + port

/// Bytes per compact peer in an announce reply to a client of this family.
/// `ipv6` is the family of the requester's *normalised* address
/// (`ip_address::v6`): a v4 client on a dual-stack socket gets 6-byte peers.
constexpr std::size_t udp_peer_size(bool ipv6) noexcept {
  return ipv6 ? udp_peer6_size : udp_peer4_size;
}

/// Most peers an announce reply should carry to stay in one unfragmented
/// datagram: IPv4 1500-byte Ethernet MTU - 28 header bytes (242 peers);
/// IPv6 minimum MTU 1280 - 48 (67 peers), which every IPv6 path carries.
constexpr std::size_t udp_max_peers_per_reply(bool ipv6) noexcept {
  return ipv6 ? (1280 - 48 - udp_announce_response_header_size) / udp_peer6_size
              : (1500 - 28 - udp_announce_response_header_size) / udp_peer4_size;
}

/// Why a packet was rejected. Each has a short wire text (`udp_error_text`)
/// and a longer description (`make_error_code(e).message()`) for logs.
enum class udp_error {
  ok = 0,
  // -- dropped: no reply ---------------------------------------------------
  packet_too_short,  ///< under 16 bytes: no transaction id to answer to
  bad_protocol_id,   ///< connect without 0x41727101980: not a BEP 15 client
  error_action,      ///< action 3 sent to us: never answer an error (no ping-pong)
  // -- answerable with an error packet (once the connection id checks out) --
  unknown_action,          ///< action not 0..3
  announce_too_short,      ///< announce under 98 bytes
  bad_event,               ///< event not 0..3
  port_zero,               ///< announce with port 0
  negative_amount,         ///< downloaded, left or uploaded with the sign bit set
  zero_scrape_hashes,      ///< scrape with no complete info_hash
  too_many_scrape_hashes,  ///< more than min(query_limits::max_scrape_hashes, 74)
  invalid_connection_id,   ///< forged, expired, or issued to another address/port
  // -- client side (parse_udp_response) -------------------------------------
  bad_response_length,  ///< a reply shorter than its action needs, or a ragged peer list
};

const std::error_category& udp_category() noexcept;
std::error_code make_error_code(udp_error e) noexcept;
/// The message an error packet carries for `e` (stable text; tests pin it).
/// Short on purpose: see `encode_udp_error_reply`.
std::string_view udp_error_text(udp_error e) noexcept;

/// What the network layer does with a datagram.
enum class udp_disposition : std::uint8_t {
  process,      ///< well-formed (and, via accept_udp_request, authenticated): serve it
  reply_error,  ///< send `encode_udp_error_reply(.., error, packet size)` and stop
  drop,         ///< send nothing (count it)
};

/// What a request with an invalid or expired connection id gets: an error
/// packet ("connection id expired"), never larger than the request.
///
/// Why not a silent drop: the usual reason to drop is that a reply to a
/// spoofed source turns the tracker into a reflector. Here the reply is
/// bounded by the request's own size (at most 8 + 21 bytes, and truncated to
/// the request's length), one packet per packet, so the bandwidth
/// amplification factor is at most 1; and BEP 15's mandatory connect
/// handshake already reflects 16 bytes for 16 bytes to any spoofed source,
/// so answering adds no capability an attacker lacks. In exchange an honest
/// client whose id went stale (tracker restart with a fresh random key, a
/// cluster key rotation, a long-suspended laptop) is told why at once and can
/// reconnect, instead of waiting out BEP 15's 15 * 2^n s retransmit timer
/// with the same dead id; and the reason shows in its tracker list, which
/// makes this failure visible to users and operators. If abuse ever shows
/// otherwise, this one constant switches net/ to dropping.
inline constexpr udp_disposition invalid_connection_id_disposition = udp_disposition::reply_error;

/// A UDP announce: the transport-independent request the swarm actors serve
/// for HTTP too, plus what only UDP carries.
///
/// Mapping to `announce_request`:
/// - `numwant`: -1 stays -1 (tracker default); 0 stays 0 (no peers); values
///   above `query_limits::max_numwant` are capped to it; any other negative
///   value is treated as -1 (the default), since BEP 15 only defines -1 and
///   rejecting would punish clients that send e.g. INT32_MIN for "any".
/// - `key`: the u32 as 8 upper-case hex digits, zero padded ("%08X"), which is
///   exactly what libtorrent sends as `&key=` over HTTP, so one client keeps
///   one key across transports.
/// - `claimed_ip`: set only when the IP field is non-zero (an IPv4 address);
///   whether to honour it is net/'s decision (configured trust).
/// - `compact` = true and `no_peer_id` = true: UDP replies are always compact.
/// - `tracker_id` is always empty (UDP has none).
struct udp_announce {
  announce_request request;
  /// BEP 41 URLData chunks concatenated (path and query of the tracker URL,
  /// e.g. "/announce?passkey=..."); empty when absent. At most
  /// `query_limits::max_query_length` bytes are kept.
  std::string url_data;
  /// True when the options were cut short (a missing length byte, a length
  /// past the end of the packet, or URL data over the limit). The announce
  /// itself is still valid; `url_data` holds the complete chunks before the
  /// fault.
  bool options_malformed = false;
};

/// A parsed request. Reuse one per socket worker: the string and vector
/// keep their capacity, so a warm object parses without allocating.
struct udp_request {
  /// As on the wire; may hold an unknown value when the error says so.
  udp_action action = udp_action::connect;
  /// Bytes 0..7: the connection id (for connect, the protocol id).
  connection_id connection;
  transaction_id transaction;
  /// Filled when `action == udp_action::announce` and parsing succeeded.
  udp_announce announce;
  /// Filled when `action == udp_action::scrape` and parsing succeeded: the
  /// info_hashes in request order (duplicates kept: the reply has one entry
  /// per requested hash, in order).
  std::vector<info_hash> scrape_hashes;
};

/// The outcome of parsing one datagram.
struct udp_parse_result {
  udp_error error = udp_error::ok;
  udp_disposition disposition = udp_disposition::drop;

  bool ok() const noexcept { return error == udp_error::ok; }
  /// True when a transaction id was read and an error packet may be sent.
  bool can_reply() const noexcept { return disposition != udp_disposition::drop; }
};

/// Parses one request datagram into `out` without checking the connection
/// id. `ok()` implies `disposition == process`; `can_reply()` implies the
/// packet had at least 16 bytes, so `out.transaction` is set.
udp_parse_result parse_udp_request(std::string_view packet, const query_limits& limits,
                                   udp_request& out);

/// The entry point for net/: parses, then checks the connection id of every
/// request but connect against `client` (the datagram's source, normalised)
/// at `now`, and applies `invalid_connection_id_disposition`. The id is
/// checked before any content error is reported, so nothing about a
/// packet's content is ever answered to an unauthenticated source.
///
///     auto r = accept_udp_request(packet, limits, ids, from, now, req);
///     switch (r.disposition) {
///       case udp_disposition::process:      serve req (connect: issue an id)
///       case udp_disposition::reply_error:
///         encode_udp_error_reply(out, req.transaction, r.error, packet.size());
///       case udp_disposition::drop:         count r.error
///     }
udp_parse_result accept_udp_request(std::string_view packet, const query_limits& limits,
                                    const connection_id_issuer& ids, const endpoint& client,
                                    std::chrono::seconds now, udp_request& out);
inline udp_parse_result accept_udp_request(std::string_view packet, const query_limits& limits,
                                           const connection_id_issuer& ids, const endpoint& client,
                                           std::chrono::steady_clock::time_point now,
                                           udp_request& out) {
  return accept_udp_request(
      packet, limits, ids, client,
      std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()), out);
}

// ---------------------------------------------------------------------------
// Tracker side: reply encoders. Each appends one whole datagram to `out`.
// ---------------------------------------------------------------------------

/// Appends the 16-byte connect reply.
void encode_udp_connect_response(std::string& out, transaction_id transaction,
                                 connection_id connection);

/// Appends an announce reply. `compact_peers` is n * 6 bytes (IPv4 + port,
/// BEP 23 layout) or n * 18 bytes (IPv6 + port, BEP 7 layout) per
/// `udp_peer_size(requester is v6)`; it is copied as-is. `interval`, seeders
/// (`stats.complete`) and leechers (`stats.incomplete`) are clamped to
/// 0..INT32_MAX.
void encode_udp_announce_response(std::string& out, transaction_id transaction,
                                  std::int64_t interval, const swarm_stats& stats,
                                  std::string_view compact_peers);

/// Writes the 20-byte header of that reply to `out` (the peers follow it).
void encode_udp_announce_header(char* out, transaction_id transaction, std::int64_t interval,
                                const swarm_stats& stats) noexcept;

/// Appends a scrape reply: one (seeders, completed, leechers) triple per
/// entry of `stats`, in the order of the request's hashes. Clamped like the
/// announce reply.
void encode_udp_scrape_response(std::string& out, transaction_id transaction,
                                const swarm_stats* stats, std::size_t count);

/// Appends an error packet carrying `message` (no terminator).
void encode_udp_error_response(std::string& out, transaction_id transaction,
                               std::string_view message);

/// Appends the error packet for `error` in reply to a request of
/// `request_size` bytes. The message is truncated so the reply is never
/// larger than the request (no amplification, whatever the error); requests
/// that can be answered are at least 16 bytes, which leaves 8 for text.
void encode_udp_error_reply(std::string& out, transaction_id transaction, udp_error error,
                            std::size_t request_size);

// ---------------------------------------------------------------------------
// Client side: for the bench load generator and integration tests.
// ---------------------------------------------------------------------------

/// Appends a 16-byte connect request.
void encode_udp_connect_request(std::string& out, transaction_id transaction);

/// Appends a 98-byte announce for `request`, then `url_data` as BEP 41
/// URLData options in chunks of at most 255 bytes. The inverse of the
/// parser's mapping: `key` must be 8 hex digits (else 0 is sent), `numwant`
/// is sent as-is, `claimed_ip` is sent when it is IPv4 (else 0).
void encode_udp_announce_request(std::string& out, connection_id connection,
                                 transaction_id transaction, const announce_request& request,
                                 std::string_view url_data = {});

/// Appends a scrape request for `count` hashes (not limited here: tests
/// build oversized ones on purpose).
void encode_udp_scrape_request(std::string& out, connection_id connection,
                               transaction_id transaction, const info_hash* hashes,
                               std::size_t count);

/// A parsed reply. Views point into the packet, which must outlive them.
struct udp_response {
  udp_action action = udp_action::error;
  transaction_id transaction;
  connection_id connection;   ///< connect
  std::int32_t interval = 0;  ///< announce
  /// announce: complete = seeders, incomplete = leechers (downloaded = 0).
  swarm_stats stats;
  std::string_view peers;           ///< announce: the compact peer bytes
  std::vector<swarm_stats> scrape;  ///< scrape: one per requested hash
  std::string_view message;         ///< error
};

/// Parses a reply. `ipv6_peers` tells the peer size (the family the request
/// was sent over). Errors: packet_too_short (< 8 bytes), unknown_action,
/// bad_response_length.
udp_error parse_udp_response(std::string_view packet, bool ipv6_peers, udp_response& out);

}  // namespace sk

namespace std {
template <>
struct is_error_code_enum<sk::udp_error> : true_type {};
}  // namespace std
