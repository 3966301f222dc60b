#pragma once
/// What a swarm is asked and what it answers, as plain data: the announce
/// and scrape a swarm receives (with the tickets that carry their way back),
/// what an operator sees of a swarm, the reachability probe's request and
/// result, and the supervisor's counters. No CAF here: runtime/messages.hpp
/// makes these types messages (inspect overloads and registration).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/announce.hpp"
#include "protocol/reply.hpp"
#include "protocol/types.hpp"
#include "tracker/healing_types.hpp"
#include "tracker/health_types.hpp"

namespace sk {

class swarm_core;
/// The state of one swarm, shared by its actor and the supervisor (which
/// restarts the actor from it). Local only: never crosses nodes.
using swarm_core_ptr = std::shared_ptr<swarm_core>;

/// An announce as a swarm actor receives it: the parsed request plus the
/// address the network layer decided the peer is reachable at.
struct swarm_announce {
  announce_request request;
  /// Source address (socket, or trusted proxy header, or trusted `ip`) and
  /// the announced port.
  endpoint peer;
  /// Only peers of `peer.ip`'s family are useful to the requester (a BEP 15
  /// reply has one peer size): select up to numwant of that family instead
  /// of splitting numwant between IPv4 and IPv6.
  bool own_family_only = false;
};

/// What a swarm answers to an announce: counts, and the selected peers in the
/// form the requester asked for. Encoding into bencode/UDP happens in net/.
struct announce_result {
  swarm_stats stats;
  std::int64_t interval = 0;
  std::int64_t min_interval = 0;
  /// Compact peers (compact requests): 6 bytes per IPv4 peer, 18 per IPv6.
  std::string peers4;
  std::string peers6;
  /// Non-compact requests: selected peers with ids (IPv4 and IPv6 alike).
  std::vector<peer_entry> peers;
  /// Set by the swarm (self-healing warnings); empty = none.
  std::string warning_message;
  /// Set by the swarm to refuse the announce (banned client, abuse): the
  /// reply is a `failure reason` (HTTP) or an error packet (UDP) with this
  /// text and nothing else. Empty = a normal reply.
  std::string failure_reason;
  /// BEP 31 `retry in` minutes sent with `failure_reason`: negative means
  /// "never", 0 omits the key.
  std::int64_t retry_in_minutes = 0;
  /// A new peer refused because a cap is reached (`peer_cap_refusal`):
  /// nothing is stored, `stats` is set, and the gateway words the refusal
  /// (net/gateway.hpp), with `retry in`. 0: not refused at a cap.
  std::uint8_t refused_at_cap = 0;
};

/// Values of `announce_result::refused_at_cap`.
enum class peer_cap_refusal : std::uint8_t {
  none = 0,
  node_full = 1,   ///< the node holds its most peers (`node_caps::max_peers`)
  swarm_full = 2,  ///< the swarm holds its most peers (`swarm_config::max_peers`)
};

/// An announce that carries its own way back: the swarm calls `complete()`
/// on its own thread instead of answering with a response message. Saves
/// the response message and the hop through a network actor (the UDP path
/// measured it; see net/udp/udp_server.hpp). Local only: never crosses nodes.
///
/// Lifetime: the message holds the only reference, so when the swarm is gone
/// (the message is dropped unprocessed) the ticket is destroyed without
/// either call; implementations treat that in their destructor as "not
/// delivered" and route again.
class announce_ticket {
 public:
  explicit announce_ticket(swarm_announce a) : announce(std::move(a)) {}
  virtual ~announce_ticket() = default;
  announce_ticket(const announce_ticket&) = delete;
  announce_ticket& operator=(const announce_ticket&) = delete;

  swarm_announce announce;

  /// The swarm's answer; `r` is valid only during the call.
  virtual void complete(const announce_result& r) = 0;
  /// The swarm refused the announce (not its info_hash).
  virtual void fail() = 0;
};

using announce_ticket_ptr = std::shared_ptr<announce_ticket>;

/// One hash of a scrape that carries its own way back, like
/// `announce_ticket`: the swarm calls `complete()` with its counts on its own
/// thread. A ticket destroyed without the call means the swarm was gone (an
/// ended swarm is empty: implementations count zeros). Local only.
class scrape_ticket {
 public:
  scrape_ticket() = default;
  virtual ~scrape_ticket() = default;
  scrape_ticket(const scrape_ticket&) = delete;
  scrape_ticket& operator=(const scrape_ticket&) = delete;

  virtual void complete(const swarm_stats& s) = 0;
};

using scrape_ticket_ptr = std::shared_ptr<scrape_ticket>;

/// One peer as the admin API shows it (`(status_atom, get_atom, n)`).
struct peer_view {
  peer_id id;
  endpoint ep;
  bool seeder = false;
  /// Bytes left at the last announce.
  std::uint64_t left = 0;
  /// 0..1; negative when unknown (torrent size not yet estimated).
  float progress = -1.0f;
  /// `peer_flag` bits.
  std::uint8_t flags = 0;
  std::uint32_t announces = 0;
};

/// Everything an operator (admin API) sees of one swarm.
struct swarm_status {
  info_hash hash;
  swarm_stats stats;
  swarm_knobs knobs;
  /// False before the first health tick (`health` is then a default).
  bool evaluated = false;
  health_report health;
  /// Remediation actions, oldest first (bounded, see swarm_config).
  std::vector<remediation_record> history;
  std::uint64_t announces = 0;
  std::uint64_t banned = 0;
  std::uint64_t refused = 0;
  std::uint64_t warned = 0;
  std::uint64_t seeder_appeals = 0;
  /// Repeats of a peer's previous announce (coalesced, see swarm_core_counters).
  std::uint64_t repeats = 0;
  /// Early announces served without a warning.
  std::uint64_t early = 0;
  /// Peers stored (quarantined included).
  std::uint64_t peer_count = 0;
  /// The first peers in storage order, bounded by the asker (empty for a
  /// plain `(status_atom)`).
  std::vector<peer_view> peers;
  /// Id of the swarm actor that answered, on the node it runs on (a
  /// restart changes it; through a forwarder, the owner's actor).
  std::uint64_t actor_id = 0;
};

/// How one reachability probe ended.
///
///   connect ─fail/deadline─▶ unreachable
///      │
///   send our 68-byte handshake, read theirs (deadline)
///      ├─ nothing at all (closed, silent) ───────────────▶ unreachable
///      ├─ "\x13BitTorrent protocol", 8 reserved, our hash ─▶ reachable
///      └─ anything else (garbage, another hash) ─────────▶ bogus
///
/// `skipped`: not probed at all (address not allowed, prober overloaded or
/// stopping); the swarm changes no flag.
enum class probe_outcome : std::uint8_t {
  reachable = 0,
  unreachable = 1,
  bogus = 2,
  skipped = 3,
};

/// Names for logs: "reachable", "unreachable", "bogus", "skipped".
inline const char* to_string(probe_outcome o) noexcept {
  switch (o) {
    case probe_outcome::reachable:
      return "reachable";
    case probe_outcome::unreachable:
      return "unreachable";
    case probe_outcome::bogus:
      return "bogus";
    case probe_outcome::skipped:
      return "skipped";
  }
  return "unknown";
}

/// A swarm asks the prober to check one peer: `(probe_atom, probe_request)`.
/// The peer is `(id, target.ip)` in the swarm's table (`peer_key`).
struct probe_request {
  info_hash hash;
  peer_id id;
  /// Address and port as the swarm stores them (the announce's source
  /// address, so the tracker never probes an address a client merely named
  /// unless the operator trusts `ip`).
  endpoint target;
};

/// The prober's answer, `(probe_atom, probe_result)`, sent to the asking
/// swarm: the request's fields and the outcome.
struct probe_result {
  info_hash hash;
  peer_id id;
  endpoint target;
  probe_outcome outcome = probe_outcome::skipped;
};

/// The supervisor's monotonic counters since it started (`/metrics`), unlike
/// its event log, which is a bounded ring.
struct supervisor_counters {
  std::uint64_t restarts = 0;          ///< swarm actors restarted from their state
  std::uint64_t restarts_fresh = 0;    ///< ... restarted empty (state was inconsistent)
  std::uint64_t give_ups = 0;          ///< crashed too often: not restarted
  std::uint64_t remediations_started = 0;  ///< automatic and operator-started
  std::uint64_t remediations_operator = 0; ///< of those, started by an operator
  std::uint64_t remediations_ended = 0;    ///< ended for any reason
  std::uint64_t remediations_stopped = 0;  ///< of those, stopped by an operator
};

/// What an operator's policy change did (`(policy_atom, put_atom, info_hash,
/// name)` to the supervisor, see runtime/supervisor.hpp).
struct policy_change {
  /// The policy the swarm ran before, and the one it runs now.
  std::string previous;
  std::string policy;
  /// Whether the swarm was pinned before, and is now (`default` unpins).
  bool was_pinned = false;
  bool pinned = false;
};

}  // namespace sk
