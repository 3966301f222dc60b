#pragma once
/// Tracker replies: announce (BEP 3/23/7/24), scrape (BEP 48), failure (BEP 31).
/// Encoders append to a caller-owned buffer and allocate nothing themselves
/// beyond that buffer's growth.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/types.hpp"

namespace sk {

/// One peer with its id, for the non-compact (list of dicts) reply model.
struct peer_entry {
  peer_id id;
  endpoint ep;
};

/// Counts a swarm reports in announce and scrape replies.
struct swarm_stats {
  std::int64_t complete = 0;    ///< seeders
  std::int64_t incomplete = 0;  ///< leechers
  std::int64_t downloaded = 0;  ///< completed events seen
  /// Partial seeds (BEP 21), counted in `incomplete`; BEP 21's scrape field
  /// `downloaders` is `incomplete - partial`.
  std::int64_t partial = 0;
};

/// Everything an announce reply may carry. Views: the caller owns the bytes.
struct announce_reply_view {
  std::int64_t interval = 1800;
  std::int64_t min_interval = 900;
  swarm_stats stats;
  /// Compact peers: n*6 bytes (IPv4 addr + port, BEP 23) and n*18 bytes
  /// (IPv6 addr + port, BEP 7). Used when the request was compact.
  std::string_view peers4;
  std::string_view peers6;
  /// Peers for the non-compact model (compact=0): a list of dicts with
  /// `ip`, `port` and, unless `no_peer_id`, `peer id`.
  const peer_entry* peers = nullptr;
  std::size_t peer_count = 0;
  bool compact = true;
  bool no_peer_id = false;
  std::string_view tracker_id;       ///< omitted when empty
  std::string_view warning_message;  ///< omitted when empty
  /// BEP 24 `external ip`: the requester's address as the tracker saw it.
  std::optional<ip_address> external_ip;
};

/// Appends the bencoded announce reply to `out`. Always writes `complete`,
/// `downloaded`, `incomplete`, `interval`, `min interval` and `peers` (an
/// empty string or list when there are none); `peers6` only in compact
/// replies that have IPv6 peers (non-compact replies list IPv6 peers in
/// `peers`). Byte layout: reply.cpp.
void encode_announce_reply(std::string& out, const announce_reply_view& reply);

/// Appends `d14:failure reason...e`, with BEP 31 `retry in` (minutes) when
/// `retry_in_minutes` is set; a negative value encodes "never".
void encode_failure(std::string& out, std::string_view reason,
                    std::optional<std::int64_t> retry_in_minutes = std::nullopt);

/// One scraped torrent.
struct scrape_entry {
  info_hash hash;
  swarm_stats stats;
};

/// Appends `d5:filesd<hash>d8:completei..e10:downloadedi..e10:incompletei..eee...e`.
/// Entries must be sorted by hash (bencode dictionary order); duplicates are
/// the caller's to remove.
void encode_scrape_reply(std::string& out, const scrape_entry* entries, std::size_t count);

}  // namespace sk
