#pragma once
/// Announce and scrape requests: the parsed, validated form every transport
/// (HTTP query string today, UDP packets later) produces for the swarm actors.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "protocol/types.hpp"

namespace sk {

/// One announce, transport-independent. Filled by `parse_announce_query`
/// (HTTP) and later by the UDP parser; consumed by the swarm actor.
struct announce_request {
  info_hash hash;
  peer_id id;
  /// Port the peer listens on (never 0 after parsing).
  std::uint16_t port = 0;
  std::uint64_t uploaded = 0;
  std::uint64_t downloaded = 0;
  std::uint64_t left = 0;
  /// Peers wanted; -1 when the client did not say (the tracker default applies).
  std::int32_t numwant = -1;
  announce_event event = announce_event::none;
  /// BEP 23: compact peers unless the client sent compact=0.
  bool compact = true;
  bool no_peer_id = false;
  /// The client's `key` (opaque, kept with the peer); empty when absent.
  std::string key;
  /// `trackerid` as sent back by the client; empty when absent.
  std::string tracker_id;
  /// The `ip` parameter, when given and parseable. Only honoured if the
  /// operator trusts it; the network layer decides.
  std::optional<ip_address> claimed_ip;
};

/// Limits a parser enforces; every one has a specific error.
struct query_limits {
  /// Largest numwant accepted as-is; larger values are clamped to it.
  std::int32_t max_numwant = 50;
  /// Most info_hash values in one scrape (BEP 48); more is an error.
  std::size_t max_scrape_hashes = 74;
  /// Longest query string accepted.
  std::size_t max_query_length = 4096;
};

/// Why a query was rejected. Each has its own `failure reason` text.
enum class query_error {
  ok = 0,
  query_too_long,
  bad_escape,            ///< '%' not followed by two hex digits
  missing_info_hash,
  bad_info_hash_length,  ///< info_hash not exactly 20 bytes
  missing_peer_id,
  bad_peer_id_length,
  missing_port,
  bad_port,              ///< not a number, or outside 1..65535
  port_zero,
  bad_uploaded,          ///< non-numeric, negative or out of range
  bad_downloaded,
  bad_left,
  bad_numwant,
  bad_compact,
  bad_no_peer_id,
  unknown_event,
  bad_ip,
  duplicate_parameter,   ///< a single-valued parameter given twice with different values
  too_many_scrape_hashes,
};

const std::error_category& query_category() noexcept;
std::error_code make_error_code(query_error e) noexcept;
/// The human-readable `failure reason` for an error (stable text; tests pin it).
std::string_view failure_text(query_error e) noexcept;

/// Parses the query part of `GET /announce?...` (without the '?').
/// Unknown parameters are ignored. Percent-decoding is binary-safe; '+' is a
/// space (form encoding). Every decision beyond the BEPs (numwant=-1,
/// repeated parameters, event=paused, ...) is listed at the top of
/// announce.cpp. Reuses `out`'s string capacity: a warm request parses
/// without allocating.
query_error parse_announce_query(std::string_view query, const query_limits& limits,
                                 announce_request& out);

/// Parses `GET /scrape?info_hash=..&info_hash=..`. An empty list means
/// "no hashes given" (the caller decides whether full scrapes are allowed).
query_error parse_scrape_query(std::string_view query, const query_limits& limits,
                               std::vector<info_hash>& out);

}  // namespace sk

namespace std {
template <>
struct is_error_code_enum<sk::query_error> : true_type {};
}  // namespace std
