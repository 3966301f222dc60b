#pragma once
/// The one door: every announce and scrape, from either transport, goes
/// through `gateway`, which does everything that does not depend on the
/// transport exactly once.
///
///   transport, I/O thread k                gateway (same thread)            swarm actor
///   ─────────────────────────             ───────────────────────          ─────────────────
///   read, parse in protocol/ ──▶ announce(lane k, transport, request, source address, reply)
///                                  the address's request rate ─over─▶ rate_limited
///                                  access list ─refused─▶ reply.on_refusal(denied)
///                                  trusted address (the `ip` the client claims, per transport)
///                                  admission (lane k's requests in flight) ─full─▶ overloaded
///                                  find the swarm; none: the address's new-swarm
///                                    budget ─spent─▶ new_swarm_budget
///                                  route through the directory ─at cap─▶ swarm_limit
///                                                  └ ticket ──────────▶ swarm_core::announce
///                                                                reply.on_result(r) ◀──┘ (swarm thread)
///                                  (a new peer on a full node / swarm ◀──┘ peer_limit / swarm_full)
///   timer on thread k ──▶ sweep(lane k): overdue ─▶ reply.on_refusal(timeout, retry in)
///   a ticket dropped unread (its swarm ended between routing and delivery)
///   is routed once more; then swarm_unavailable.
///
/// Exactly once: each request is a `gateway_request` (the transport's reply
/// object derives from it) whose answer is claimed by whoever gets there
/// first — the swarm, the deadline sweep, or the lane's close — and only
/// that one calls `on_result` / `on_refusal`. The transport then encodes and
/// writes; it never waits for an actor, and the gateway never blocks.
///
/// Why tickets (the swarm answers by calling the request's reply on its own
/// thread) rather than a request/response through a network actor: measured
/// on the UDP path (bench/udp), the response message and the helper actor's
/// bookkeeping were most of the hand-over's cost.
///
/// Why batches: a transport thread handing each ticket to its swarm itself
/// makes one cross-thread mailbox operation per request, and often a
/// scheduler wake-up with it; measured with bench/http (keep-alive, one
/// core), that cost a quarter of the throughput. So a lane collects the
/// tickets of one event-loop round and `flush` hands them over in one
/// message to the lane's dispatcher actor, which delivers them to their
/// swarms from a scheduler thread. (A ticket routed again, from a swarm
/// thread, goes straight to its swarm.)
///
/// Threads: `announce`, `scrape`, `sweep`, `close_lane` and `abandon` of lane
/// k are called from one thread at a time (the transport's thread for that
/// lane); `on_result` / `on_refusal` run on swarm threads or on that thread.
/// Counters may be read from anywhere.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "runtime/swarm_interface.hpp"
#include "protocol/announce.hpp"
#include "protocol/reply.hpp"

namespace sk {

class access_control;
class address_buckets;
class node_census;

/// A section threads enter while something stays usable, and that can be
/// closed for good: `close_and_wait` returns once no thread is inside and
/// none can enter any more. seq_cst on both sides: if `enter` sees the gate
/// open, `close_and_wait` sees that thread inside.
class closing_gate {
 public:
  /// False (not entered) once closed; a true answer must be paired with
  /// `leave`.
  bool enter() noexcept {
    active_.fetch_add(1);
    if (closed_.load()) {
      active_.fetch_sub(1);
      return false;
    }
    return true;
  }
  void leave() noexcept { active_.fetch_sub(1); }
  /// Refuses later `enter`s without waiting for those inside.
  void close() noexcept { closed_.store(true); }
  /// Closes, then waits until every thread inside has left.
  void close_and_wait() noexcept {
    close();
    while (active_.load() != 0) std::this_thread::yield();
  }
  bool closed() const noexcept { return closed_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> closed_{false};
  std::atomic<int> active_{0};
};

/// The transport a request came in on (counters, the trusted-address rule).
enum class transport : std::uint8_t { http = 0, udp = 1 };
constexpr std::size_t transport_count = 2;
std::string_view to_string(transport t) noexcept;

/// Why the gateway answers a request itself instead of a swarm.
enum class gateway_refusal : std::uint8_t {
  denied,             ///< the access list refuses the torrent
  overloaded,         ///< the lane has `max_in_flight` requests waiting for swarms
  swarm_unavailable,  ///< its swarm ended twice in a row, or none could be had
  timeout,            ///< no answer within `request_timeout`
  shutting_down,      ///< the lane or the tracker is stopping
  // The caps (tracker/node_census.hpp): a new torrent or a new peer is
  // refused, existing swarms and known peers are served.
  swarm_limit,       ///< the node holds `caps.max-swarms` swarms: no new torrent
  new_swarm_budget,  ///< the address created its budget of new swarms
  peer_limit,        ///< the node holds `caps.max-peers` peers: no new peer
  swarm_full,        ///< the swarm holds `tracker.max-peers-per-swarm` peers
  rate_limited,      ///< the address sent more requests than its rate allows
};

/// The refusal texts, written once for both transports. Each fits in a UDP
/// error packet no larger than the smallest request that can get it: a
/// one-hash scrape (36 bytes: at most 28 characters) for those a scrape can
/// get; `denied` and the caps answer announces only (98 bytes: at most 90).
std::string_view refusal_text(gateway_refusal r) noexcept;

/// Whether a client should retry (everything but `denied`): sent with
/// `gateway_config::retry_in_minutes` as BEP 31 `retry in`.
constexpr bool retryable(gateway_refusal r) noexcept { return r != gateway_refusal::denied; }

/// Where the gateway finds swarms: `swarm_directory` in the daemon (the one
/// place that decides who owns a swarm), fakes in tests.
class swarm_locator {
 public:
  virtual ~swarm_locator() = default;
  /// The owner of `h`, created on a miss; no handle when none can be had
  /// (and why: the swarm cap, or stopping).
  virtual route_result route(const info_hash& h) = 0;
  /// The owner of `h` if it exists (scrapes must not create swarms).
  virtual swarm_interface find(const info_hash& h) = 0;
  /// A hint that `route` or `find` follows for each of `n` hashes (soon,
  /// on this thread): the locator may ask for their memory ahead. Changes
  /// nothing; by default does nothing.
  virtual void prefetch(const info_hash* hashes, std::size_t n) {
    (void)hashes;
    (void)n;
  }
};

/// Stripes of the request rate limit's table (each a mutex).
constexpr std::size_t rate_limit_stripes = 64;

/// Settings of the gateway: everything about a request that does not
/// depend on the transport it came in on (section `[gateway]` of the config,
/// the numwant and scrape limits of `[tracker]`, and each transport's
/// trusted-address switch). The access list is live state, not a setting:
/// it is handed to the gateway's constructor.
struct gateway_config {
  /// How long a request may wait for its swarm before it is answered with
  /// `timeout`. Checked by `sweep`, so a request fails between this and
  /// this plus one sweep period.
  std::chrono::milliseconds request_timeout{5000};
  /// BEP 31 `retry in` minutes sent with a retryable refusal.
  std::int64_t retry_in_minutes = 1;
  /// Requests one lane (an HTTP I/O thread, a UDP socket worker) may have
  /// waiting for swarms; more are `overloaded`.
  std::size_t max_in_flight = 4096;
  /// Per transport: believe the address a client claims for itself (HTTP's
  /// `ip` parameter, the UDP announce's IPv4 field). Off by default: a
  /// client naming any address could point a swarm at a victim.
  std::array<bool, transport_count> trust_claimed_ip{};
  /// Largest numwant a parser passes on; larger values are clamped to it.
  std::int32_t max_numwant = 50;
  /// Most info_hash values in one scrape; more is a parse error.
  std::size_t max_scrape_hashes = 74;
  /// New swarms one address (an IPv6 /64) may create at once, and how many
  /// more per minute (net/creation_budget.hpp): a client adding a few
  /// hundred torrents at once, or many clients behind one NAT, never notice;
  /// one address flooding random info_hashes creates one a second.
  std::uint32_t new_swarm_burst = 200;
  double new_swarms_per_minute = 60;
  /// Addresses whose budget is remembered (bounds its memory; an address
  /// forgotten starts again with a full budget).
  std::size_t new_swarm_addresses = 65536;
  /// Requests (announces, scrapes, UDP connects) one address (an IPv6 /64)
  /// may send at once, and how many more per second
  /// (net/address_buckets.hpp); `requests_per_second` 0: no limit. Sized so
  /// that no address of real clients ever meets it: 500 a second are
  /// 900,000 requests per 30-minute interval, more than the
  /// announces of a thousand subscribers behind one CGNAT address with a
  /// hundred torrents each, connects included; 5,000 at once is a client
  /// starting with 5,000 torrents.
  std::uint32_t request_burst = 5000;
  double requests_per_second = 500;
  /// Addresses whose request rate is remembered (bounds its memory: ~64
  /// bytes each; an address forgotten starts again with a full bucket, as a
  /// new one would).
  std::size_t rate_limit_addresses = 131072;

  /// The parser limits of a transport whose own length limit (HTTP query,
  /// UDP URL data) is `max_length`: the numwant and scrape limits above, so
  /// both transports refuse the same requests, each with its parser's own
  /// error.
  query_limits parse_limits(std::size_t max_length) const noexcept {
    query_limits l;
    l.max_numwant = max_numwant;
    l.max_scrape_hashes = max_scrape_hashes;
    l.max_query_length = max_length;
    return l;
  }

  /// Empty when usable, else one sentence naming the first bad field.
  std::string validate() const;
};

/// Per-transport counters, exact each on its own (relaxed atomics).
struct gateway_counters {
  std::uint64_t announces = 0;          ///< announces admitted (handed to a swarm)
  std::uint64_t announces_refused = 0;  ///< ... answered with a swarm's failure reason
  std::uint64_t scrapes = 0;            ///< scrapes admitted
  std::uint64_t denied_announces = 0;   ///< refused by the access list
  std::uint64_t denied_scrape_hashes = 0;
  std::uint64_t overloaded = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t unavailable = 0;  ///< swarm_unavailable
  std::uint64_t shutting_down = 0;
  /// Announces routed again (their swarm ended before reading them) and
  /// scrape hashes sent again (their swarm's actor ended unread and the
  /// directory names another).
  std::uint64_t rerouted = 0;
  /// Announces refused at a cap (any of the four; the node's census counts
  /// them by cap).
  std::uint64_t capped = 0;
  /// Requests over their address's rate: announces and scrapes (refused
  /// with `rate_limited`) and UDP connects (dropped by the transport).
  std::uint64_t rate_limited_announces = 0;
  std::uint64_t rate_limited_scrapes = 0;
  std::uint64_t rate_limited_connects = 0;
};

/// One request in flight. Transports derive their reply objects from it;
/// the gateway keeps the bookkeeping here (one allocation per request).
class gateway_request {
 public:
  virtual ~gateway_request() = default;
  /// The gateway's own answer; `retry_in_minutes` is 0 when not retryable.
  /// Any thread; called at most once, and never after `on_result`.
  virtual void on_refusal(gateway_refusal why, std::int64_t retry_in_minutes) = 0;

  transport via() const noexcept { return via_; }

 private:
  friend class gateway;
  friend struct gateway_detail;
  /// Claims the right to answer: exactly one caller ever gets true.
  bool claim() noexcept {
    bool expected = false;
    return settled_.compare_exchange_strong(expected, true, std::memory_order_acq_rel);
  }
  std::atomic<bool> settled_{false};
  transport via_ = transport::http;
  std::size_t lane_ = 0;
  std::chrono::steady_clock::time_point deadline_{};
};

/// The reply channel of one announce.
class announce_reply : public gateway_request {
 public:
  /// The swarm's answer, on the swarm's thread (`r` is valid during the
  /// call only; a refusal by the swarm is `r.failure_reason`).
  virtual void on_result(const announce_result& r) = 0;
};

/// One hash of a scrape as the gateway answers it.
struct scrape_answer {
  info_hash hash;
  swarm_stats stats;  ///< zeros for an unknown torrent
  /// False: the access list refuses the torrent (HTTP leaves it out, UDP's
  /// positional reply counts zeros).
  bool served = true;
};

/// The reply channel of one scrape.
class scrape_reply : public gateway_request {
 public:
  /// One answer per requested hash, in request order (any thread).
  virtual void on_result(std::vector<scrape_answer>&& answers) = 0;
};

/// The gateway. Construct before the transports and destroy after them.
class gateway {
 public:
  /// `dir` (or `locator`) and `sys` must outlive the gateway. `access` is
  /// the node's info_hash access list (null: every hash is served), checked
  /// before routing, so a refused hash never spawns a swarm. The gateway
  /// counts its new-swarm budget's refusals in the directory's census (or
  /// `census`; null: one of its own).
  gateway(caf::actor_system& sys, swarm_directory& dir, gateway_config cfg,
          std::shared_ptr<access_control> access = nullptr);
  gateway(caf::actor_system& sys, swarm_locator& locator, gateway_config cfg,
          std::shared_ptr<access_control> access = nullptr,
          std::shared_ptr<node_census> census = nullptr);
  /// Closes every lane; tickets still in swarm mailboxes never touch the
  /// locator afterwards.
  ~gateway();
  gateway(const gateway&) = delete;
  gateway& operator=(const gateway&) = delete;

  /// Adds `n` lanes (each with its dispatcher actor) and returns the index
  /// of the first; call before any traffic (transports do it when they are
  /// constructed).
  std::size_t add_lanes(std::size_t n);
  std::size_t lanes() const noexcept;

  /// Takes one announce from lane `lane`. `source` is the address the
  /// transport saw (the socket peer, or the client a trusted proxy names);
  /// `own_family_only`: only peers of the requester's family are useful to it.
  void announce(std::size_t lane, transport via, announce_request&& request,
                const ip_address& source, bool own_family_only,
                std::shared_ptr<announce_reply> reply);
  /// Takes one scrape from `source`: one answer per hash, in the given
  /// order (duplicates kept). Never creates a swarm.
  void scrape(std::size_t lane, transport via, std::vector<info_hash> hashes,
              const ip_address& source, std::shared_ptr<scrape_reply> reply);

  /// A hint that announces for these `n` hashes follow on this thread (a
  /// transport's round of requests): their swarms' lookups are prefetched
  /// together (`swarm_locator::prefetch`). Changes nothing.
  void prefetch(const info_hash* hashes, std::size_t n);

  /// Takes one token of `source`'s request rate for a request the gateway
  /// never sees (a UDP connect); false (counted, and the limit's log line
  /// once per episode) when it has none. Always true without a limit.
  /// Any thread.
  bool take_connect_token(transport via, const ip_address& source);
  /// The request rate limit (null: none).
  const address_buckets* rate_limit() const noexcept;
  /// True while an address was refused for its rate within the last refill
  /// time (the limit's "reached" state).
  bool rate_limit_reached() const noexcept;

  /// Hands the tickets lane `lane` collected since the last flush to their
  /// swarms (one message to the lane's dispatcher). Call at the end of each
  /// event-loop round that admitted requests; nothing reaches a swarm
  /// before it.
  void flush(std::size_t lane);

  /// Answers lane `lane`'s requests past their deadline with `timeout` and
  /// forgets answered ones. Call every `sweep_period()` from the lane's thread.
  void sweep(std::size_t lane, std::chrono::steady_clock::time_point now);
  std::chrono::milliseconds sweep_period() const noexcept;

  /// Requests of lane `lane` waiting for swarms (any thread).
  std::size_t in_flight(std::size_t lane) const noexcept;
  /// Refuses every new request of the lane with `shutting_down`, and
  /// returns once no thread is inside the lane: an answer a swarm claimed
  /// before the close has reached the transport by then. Not from a thread
  /// that is inside the lane (a transport's own callback).
  void close_lane(std::size_t lane) noexcept;
  /// Answers every request of the lane still waiting with `shutting_down`
  /// (after the lane's thread stopped, or on it).
  void abandon(std::size_t lane);

  gateway_counters counters(transport via) const noexcept;
  const gateway_config& config() const noexcept;
  /// The access list the gateway checks (null: none).
  const std::shared_ptr<access_control>& access() const noexcept;
  /// Where the caps' refusals are counted (never null).
  const node_census& census() const noexcept;

  /// Implementation (gateway.cpp); public so its helpers can name it.
  struct state;

 private:
  std::shared_ptr<state> state_;
  std::unique_ptr<swarm_locator> own_locator_;
  caf::actor_system& sys_;
};

}  // namespace sk
