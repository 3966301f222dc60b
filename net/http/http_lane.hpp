#pragma once
/// One I/O thread's lane of the gateway and the state every HTTP session
/// shares (internal to net/http: included by http_session.hpp and
/// http_lane.cpp only).

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "net/connection_slots.hpp"
#include "net/gateway.hpp"
#include "net/http/http_server.hpp"
#include "net/latency_histogram.hpp"
#include "net/limit_latch.hpp"

namespace sk {

class http_session;

/// One I/O thread's lane of the gateway, and its way back from the swarms:
///
///   sessions ── gateway.announce / scrape (lane k) ── flush once per loop
///       round ══ one message ══▶ lane k's dispatcher ──▶ swarms (tickets)
///   swarm threads ─post_reply()─▶ reply queue (mutex) ─(a post only when
///       the queue was empty)─▶ deliver_replies(): every session applies its reply
///   timer on thread k ──▶ gateway.sweep(lane k): overdue requests fail
///
/// A burst of replies costs one io_context post (one reactor interrupt),
/// measured as the largest cost of the hand-over besides the system calls
/// themselves. `deliver_replies` and the sweep run on I/O thread k only;
/// `post_reply` on swarm threads.
class http_lane {
 public:
  /// What came back for one request of one session.
  struct reply {
    enum class kind : std::uint8_t { announce, scrape, refusal };
    /// The request's reference to the session; dropped on the I/O thread.
    std::shared_ptr<http_session> session;
    std::uint64_t tag = 0;
    kind what = kind::refusal;
    announce_result announce;
    std::vector<scrape_answer> scrape;
    gateway_refusal refusal = gateway_refusal::swarm_unavailable;
    std::int64_t retry_in_minutes = 0;
  };

  http_lane(boost::asio::io_context& ioc, gateway& gw, std::size_t gateway_lane)
      : ioc_(ioc), gw_(gw), lane_(gateway_lane) {}

  /// Counts one request's outcome. I/O thread k only (single writer: a
  /// relaxed load and store, no locked instruction).
  void count(http_outcome o) noexcept {
    auto& c = outcomes_[static_cast<std::size_t>(o)];
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  /// Any thread.
  std::uint64_t outcome_count(std::size_t i) const noexcept {
    return outcomes_[i].load(std::memory_order_relaxed);
  }
  /// Announce latency of this I/O thread (written on it only).
  latency_histogram latency;

  gateway& gw() noexcept { return gw_; }
  /// This thread's lane index in the gateway.
  std::size_t gateway_lane() const noexcept { return lane_; }

  boost::asio::io_context& ioc() noexcept { return ioc_; }
  /// Starts the periodic sweep of overdue requests (on I/O thread k).
  void start_sweeping();
  /// Also run by the sweep's timer, when set (lane 0: the connection
  /// limits' quiet time). Set before start_sweeping().
  std::function<void(std::chrono::steady_clock::time_point)> on_tick;
  /// Flushes the gateway lane once the handlers already queued on this
  /// thread ran (one message per event-loop round). I/O thread k only.
  void schedule_flush();
  void post_reply(reply&& r);
  /// Answers what is still in flight, drops queued replies and the sweep
  /// timer (server teardown, I/O threads stopped, io_context still alive).
  void discard();

 private:
  void deliver_replies();

  boost::asio::io_context& ioc_;
  gateway& gw_;
  const std::size_t lane_;
  /// Made by start_sweeping(), dropped by discard() (before its io_context).
  std::optional<boost::asio::steady_timer> timer_;
  bool flush_posted_ = false;  ///< I/O thread only
  std::mutex mutex_;
  std::vector<reply> replies_;   ///< guarded by mutex_
  std::vector<reply> draining_;  ///< I/O thread only (capacity reused)
  alignas(64) std::atomic<std::uint64_t> outcomes_[http_outcome_count] = {};
};

/// State shared by the server and all its sessions.
struct http_context {
  http_context(const http_server_config& c, gateway& g)
      : cfg(c),
        gw(g),
        limits(g.config().parse_limits(c.max_query_length)),
        per_address(c.max_connections_per_address) {}

  const http_server_config cfg;
  gateway& gw;
  /// The query parser's limits: the gateway's, with this transport's length.
  const query_limits limits;
  /// One per I/O thread, set up by the server before any session exists.
  std::vector<std::unique_ptr<http_lane>> lanes;
  /// False once the server stops accepting: /health answers 503.
  std::atomic<bool> serving{false};
  /// True from `start(true)` until `ready()`: /health answers 503
  /// "starting", announces and scrapes a retryable failure.
  std::atomic<bool> starting{false};

  // -- session registry (drain and shedding reach every open connection) ----
  /// A session and when it began waiting for its next request (its
  /// `waiting_since`; readable under `mutex`: a session leaves the registry
  /// in its destructor's body, before its members die).
  struct registry_entry {
    std::weak_ptr<http_session> session;
    const std::atomic<std::int64_t>* waiting_since = nullptr;
  };
  using registry = std::list<registry_entry>;
  std::mutex mutex;
  std::condition_variable all_closed;
  registry sessions;      ///< guarded by mutex
  bool draining = false;  ///< guarded by mutex; new sessions start draining
  std::atomic<std::size_t> session_count{0};

  /// Registers `s`; returns its registry position and whether it must drain.
  std::pair<registry::iterator, bool> add(const std::shared_ptr<http_session>& s);
  void remove(registry::iterator pos);

  // -- connection limits (net/connection_slots.hpp) ----------------------------
  /// Connections per address (trusted proxies are not counted).
  connection_slots per_address;
  std::atomic<std::uint64_t> refused_per_address{0};
  std::atomic<std::uint64_t> refused_total{0};
  std::atomic<std::uint64_t> shed_idle{0};
  std::atomic<std::uint64_t> shed_slow{0};
  limit_latch per_address_reached;
  limit_latch total_reached;
  /// How long a limit stays "reached" after its last refusal or shed.
  static constexpr std::chrono::seconds limit_quiet{30};

  /// At the total: asks the session that has waited longest for its next
  /// request (idle or slow; never one that owes a response) to close, and
  /// true; false when every session is busy. Accepting thread only.
  bool shed_one();
  /// Ends the limits' "reached" states after `limit_quiet` (any thread).
  void settle(std::chrono::steady_clock::time_point now);

 private:
  /// The next sessions to shed, the longest waiting last (accepting
  /// thread only); refilled by one walk over the registry when empty.
  std::vector<std::weak_ptr<http_session>> shed_queue_;
  void refill_shed_queue();
};

/// The gateway's answer to one announce of `session` (its slot `tag`),
/// copied into a lane reply and posted to the session's I/O thread.
std::shared_ptr<announce_reply> make_http_announce_reply(std::shared_ptr<http_session> session,
                                                         std::uint64_t tag, http_lane& lane);
/// The same for one scrape.
std::shared_ptr<scrape_reply> make_http_scrape_reply(std::shared_ptr<http_session> session,
                                                     std::uint64_t tag, http_lane& lane);

}  // namespace sk
