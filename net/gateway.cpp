#include "net/gateway.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "net/address_key.hpp"
#include "net/creation_budget.hpp"
#include "net/limit_latch.hpp"
#include "runtime/directory.hpp"
#include "tracker/access_list.hpp"
#include "tracker/node_census.hpp"
#include "tracker/recycler.hpp"

namespace sk {

namespace {

using steady = std::chrono::steady_clock;

void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
  c.fetch_add(n, std::memory_order_relaxed);
}

struct atomic_counters {
  std::atomic<std::uint64_t> announces{0};
  std::atomic<std::uint64_t> announces_refused{0};
  std::atomic<std::uint64_t> scrapes{0};
  std::atomic<std::uint64_t> denied_announces{0};
  std::atomic<std::uint64_t> denied_scrape_hashes{0};
  std::atomic<std::uint64_t> overloaded{0};
  std::atomic<std::uint64_t> timeouts{0};
  std::atomic<std::uint64_t> unavailable{0};
  std::atomic<std::uint64_t> shutting_down{0};
  std::atomic<std::uint64_t> rerouted{0};
  std::atomic<std::uint64_t> capped{0};
  std::atomic<std::uint64_t> rate_limited_announces{0};
  std::atomic<std::uint64_t> rate_limited_scrapes{0};
  std::atomic<std::uint64_t> rate_limited_connects{0};
};

/// The directory as a locator.
class directory_locator final : public swarm_locator {
 public:
  explicit directory_locator(swarm_directory& dir) : dir_(dir) {}
  route_result route(const info_hash& h) override { return dir_.open_swarm(h); }
  swarm_interface find(const info_hash& h) override { return dir_.find_swarm(h); }
  void prefetch(const info_hash* hashes, std::size_t n) override { dir_.prefetch(hashes, n); }

 private:
  swarm_directory& dir_;
};

}  // namespace

/// Tickets of one event-loop round, on their way to their swarms.
struct ticket_batch {
  std::vector<std::pair<swarm_interface, announce_ticket_ptr>> announces;
  std::vector<std::pair<swarm_interface, scrape_ticket_ptr>> scrapes;
  bool empty() const noexcept { return announces.empty() && scrapes.empty(); }
};

}  // namespace sk

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(sk::ticket_batch)

namespace sk {

namespace {

/// A lane's dispatcher: delivers each batch's tickets from a scheduler
/// thread. Dropped unread (stopping), the batch's tickets route again or
/// refuse, as any dropped ticket does.
caf::behavior dispatcher_impl(caf::event_based_actor* self) {
  return {
      [self](ticket_batch& b) {
        for (auto& [swarm, t] : b.announces) self->send(swarm, announce_atom::value, std::move(t));
        for (auto& [swarm, t] : b.scrapes) self->send(swarm, scrape_atom::value, std::move(t));
      },
  };
}

}  // namespace

/// One lane: the requests one transport thread admitted, in admission order.
/// All requests share one timeout, so the front always expires first.
///
/// Answers from swarm threads enter the lane (`enter`); `abandon` closes it
/// and waits until none is inside, so after it returns nothing answers a
/// request of the lane any more (every one was answered, or is refused by
/// it): a transport may then tear down what its replies point to.
struct gateway_lane {
  std::deque<std::shared_ptr<gateway_request>> pending;  ///< the lane's thread only
  /// Tickets admitted since the last flush (the lane's thread only).
  ticket_batch batch;
  /// Delivers flushed batches to their swarms (a hidden actor).
  caf::actor dispatcher;
  std::atomic<std::size_t> in_flight{0};
  /// Open while the lane admits and answers.
  closing_gate gate;
};

struct gateway::state {
  state(swarm_locator& l, gateway_config c, std::shared_ptr<access_control> a,
        std::shared_ptr<node_census> n)
      : locator(l),
        cfg(std::move(c)),
        access(std::move(a)),
        census(n ? std::move(n) : std::make_shared<node_census>()),
        budget(cfg.new_swarm_burst, cfg.new_swarms_per_minute, cfg.new_swarm_addresses) {
    if (cfg.requests_per_second > 0)
      rate = std::make_unique<address_buckets>(cfg.request_burst, cfg.requests_per_second,
                                               cfg.rate_limit_addresses, rate_limit_stripes);
  }

  swarm_locator& locator;
  const gateway_config cfg;
  /// The node's access list (null: every hash is served).
  const std::shared_ptr<access_control> access;
  /// Where the caps' refusals are counted.
  const std::shared_ptr<node_census> census;
  /// Each address's budget of new swarms.
  creation_budget budget;
  /// When the budget last refused anybody (steady_clock ticks): the sweep
  /// clears the "reached" state after a refill time without a refusal.
  std::atomic<steady::rep> last_budget_refusal{0};
  /// Each address's request rate (null: no limit). Every request takes a
  /// stripe's mutex: 64 stripes keep the transports' threads apart.
  std::unique_ptr<address_buckets> rate;
  /// Reached while an address was refused within the last refill time.
  limit_latch rate_reached;

  /// Takes a token of `source`'s rate; false (and the log line when the
  /// limit is first reached) when none is left.
  bool take_rate(transport via, const ip_address& source, std::atomic<std::uint64_t>& refused) {
    if (!rate) return true;
    const auto now = steady::now();
    if (rate->take(source, now)) return true;
    bump(refused);
    if (rate_reached.hit(now))
      spdlog::warn("request rate limit reached: {} sent more than {} requests at once ({} per "
                   "second after that, gateway.request-burst / gateway.requests-per-second; "
                   "first refused over {}); its requests refused with 'retry in' until its rate "
                   "drops",
                   subscriber_text(source), rate->burst(), rate->per_second(), to_string(via));
    return false;
  }
  /// Stable addresses: lanes are added before traffic, never removed.
  std::deque<gateway_lane> lanes;
  std::array<atomic_counters, transport_count> counters;

  /// Sections that may touch the locator; the gateway's destructor closes
  /// it, and from then on nothing does.
  closing_gate gate;

  atomic_counters& count(transport t) noexcept { return counters[static_cast<std::size_t>(t)]; }
};

/// What the tickets need of the requests' private bookkeeping.
struct gateway_detail {
  using state_ptr = std::shared_ptr<gateway::state>;

  /// Settles `r` with a refusal if nobody answered it yet. On the lane's own
  /// thread (sweep, abandon); swarm threads use `refuse_from_swarm`.
  static void refuse(gateway::state& st, gateway_request& r, gateway_refusal why) {
    if (!r.claim()) return;
    release(st, r);
    auto& c = st.count(r.via_);
    switch (why) {
      case gateway_refusal::denied:
        break;
      case gateway_refusal::overloaded:
        bump(c.overloaded);
        break;
      case gateway_refusal::swarm_unavailable:
        bump(c.unavailable);
        break;
      case gateway_refusal::timeout:
        bump(c.timeouts);
        break;
      case gateway_refusal::shutting_down:
        bump(c.shutting_down);
        break;
      case gateway_refusal::swarm_limit:
      case gateway_refusal::new_swarm_budget:
      case gateway_refusal::peer_limit:
      case gateway_refusal::swarm_full:
        bump(c.capped);
        break;
      case gateway_refusal::rate_limited:
        break;  // counted where it was refused
    }
    r.on_refusal(why, retryable(why) ? st.cfg.retry_in_minutes : 0);
  }

  /// `refuse` from a swarm thread: only while the lane is open (a closed
  /// lane's `abandon` refuses whatever is left).
  static void refuse_from_swarm(gateway::state& st, gateway_request& r, gateway_refusal why) {
    gateway_lane& l = st.lanes[r.lane_];
    if (!l.gate.enter()) return;
    refuse(st, r, why);
    l.gate.leave();
  }

  /// Claims `r` for a swarm's answer and runs `answer` (swarm thread); false
  /// when somebody else answered it or its lane closed.
  template <class Answer>
  static bool answer_from_swarm(gateway::state& st, gateway_request& r, Answer&& answer) {
    gateway_lane& l = st.lanes[r.lane_];
    if (!l.gate.enter()) return false;
    const bool mine = r.claim();
    if (mine) {
      release(st, r);
      answer();
    }
    l.gate.leave();
    return mine;
  }

  static void release(gateway::state& st, gateway_request& r) noexcept {
    st.lanes[r.lane_].in_flight.fetch_sub(1, std::memory_order_relaxed);
  }

  static bool claim(gateway_request& r) noexcept { return r.claim(); }
  static bool settled(const gateway_request& r) noexcept {
    return r.settled_.load(std::memory_order_acquire);
  }

  /// Admits `r` on its lane (deadline, in-flight count); false when the lane
  /// is full or closed (then `r` was refused).
  static bool admit(gateway::state& st, const std::shared_ptr<gateway_request>& r,
                    std::size_t lane, transport via) {
    r->via_ = via;
    r->lane_ = lane;
    gateway_lane& l = st.lanes[lane];
    if (l.gate.closed()) {
      r->settled_.store(true, std::memory_order_relaxed);
      bump(st.count(via).shutting_down);
      r->on_refusal(gateway_refusal::shutting_down, st.cfg.retry_in_minutes);
      return false;
    }
    if (l.in_flight.load(std::memory_order_relaxed) >= st.cfg.max_in_flight) {
      r->settled_.store(true, std::memory_order_relaxed);
      bump(st.count(via).overloaded);
      r->on_refusal(gateway_refusal::overloaded, st.cfg.retry_in_minutes);
      return false;
    }
    r->deadline_ = steady::now() + st.cfg.request_timeout;
    l.in_flight.fetch_add(1, std::memory_order_relaxed);
    l.pending.push_back(r);
    return true;
  }

  /// Routes `a` with a ticket that may route `retries` more times: into the
  /// lane's batch (`batched`: on the lane's thread) or straight to the swarm
  /// (a retry, from a swarm thread). `creator` (the address the transport
  /// saw; null on a retry) pays from its budget when the swarm is new.
  static void dispatch_announce(state_ptr st, std::shared_ptr<announce_reply> r, swarm_announce&& a,
                                int retries, bool batched, const ip_address* creator);
};

namespace {

using state_ptr = gateway_detail::state_ptr;

/// An announce as its swarm receives it: the swarm calls `complete()` on its
/// thread, which hands the result to the request's reply right there.
class gateway_ticket final : public announce_ticket {
 public:
  gateway_ticket(swarm_announce a, state_ptr st, std::shared_ptr<announce_reply> r, int retries)
      : announce_ticket(std::move(a)), st_(std::move(st)), r_(std::move(r)), retries_(retries) {}

  ~gateway_ticket() override {
    if (handled_) return;
    // Dropped unprocessed: the swarm ended (idle) between route() and
    // delivery, or the system is stopping. Route once more (a fresh swarm
    // is spawned), or give up.
    if (retries_ > 0 && !gateway_detail::settled(*r_)) {
      bump(st_->count(r_->via()).rerouted);
      gateway_detail::dispatch_announce(std::move(st_), std::move(r_), std::move(announce),
                                        retries_ - 1, false, nullptr);
    } else {
      gateway_detail::refuse_from_swarm(*st_, *r_, gateway_refusal::swarm_unavailable);
    }
  }

  void complete(const announce_result& res) override {
    handled_ = true;
    if (res.refused_at_cap != 0) {
      // A new peer on a full node or swarm: the gateway's words, with
      // `retry in`.
      gateway_detail::refuse_from_swarm(
          *st_, *r_,
          static_cast<peer_cap_refusal>(res.refused_at_cap) == peer_cap_refusal::swarm_full
              ? gateway_refusal::swarm_full
              : gateway_refusal::peer_limit);
      return;
    }
    // Not claimed: timed out meanwhile, or the lane closed.
    gateway_detail::answer_from_swarm(*st_, *r_, [&] {
      if (!res.failure_reason.empty()) bump(st_->count(r_->via()).announces_refused);
      r_->on_result(res);
    });
  }

  void fail() override {
    handled_ = true;
    gateway_detail::refuse_from_swarm(*st_, *r_, gateway_refusal::swarm_unavailable);
  }

 private:
  state_ptr st_;
  std::shared_ptr<announce_reply> r_;
  int retries_;
  bool handled_ = false;
};

/// A scrape in flight: one slot per requested hash, filled by the swarms on
/// their threads; whoever finishes last answers (acq_rel: the last one sees
/// every slot's write).
struct scrape_fanin {
  state_ptr st;
  std::shared_ptr<scrape_reply> r;
  std::vector<scrape_answer> answers;
  std::atomic<std::size_t> remaining{0};

  void done_one() {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    gateway_detail::answer_from_swarm(*st, *r, [&] { r->on_result(std::move(answers)); });
  }
};

/// One known hash of a scrape, as its swarm receives it. Dropped unread,
/// its swarm's actor ended before reading it: when the directory now names
/// another actor for the hash (the swarm went to sleep as data and this
/// lookup wakes it, or the supervisor put a successor in place) the ticket
/// goes there once more; when it names none, the swarm ended empty and the
/// slot keeps zeros.
class gateway_scrape_ticket final : public scrape_ticket {
 public:
  gateway_scrape_ticket(std::shared_ptr<scrape_fanin> f, std::size_t slot, caf::actor_addr target,
                        int retries)
      : f_(std::move(f)), slot_(slot), target_(std::move(target)), retries_(retries) {}
  ~gateway_scrape_ticket() override {
    if (!handled_ && retries_ > 0 && reroute()) return;
    f_->done_one();
  }
  void complete(const swarm_stats& st) override {
    handled_ = true;
    f_->answers[slot_].stats = st;
  }

 private:
  /// Sends a fresh ticket for the slot to the swarm the directory names now,
  /// if that is another actor; true when it did (the fresh ticket finishes
  /// the slot).
  bool reroute() {
    auto& st = *f_->st;
    if (gateway_detail::settled(*f_->r) || !st.gate.enter()) return false;
    swarm_interface swarm = st.locator.find(f_->answers[slot_].hash);
    const bool again = swarm && swarm.address() != target_;
    if (again) {
      bump(st.count(f_->r->via()).rerouted);
      auto addr = swarm.address();
      caf::anon_send(swarm, scrape_atom::value,
                     scrape_ticket_ptr(make_recycled<gateway_scrape_ticket>(
                         f_, slot_, std::move(addr), retries_ - 1)));
    }
    st.gate.leave();
    return again;
  }

  std::shared_ptr<scrape_fanin> f_;
  std::size_t slot_;
  caf::actor_addr target_;
  int retries_;
  bool handled_ = false;
};

}  // namespace

void gateway_detail::dispatch_announce(state_ptr st, std::shared_ptr<announce_reply> r,
                                       swarm_announce&& a, int retries, bool batched,
                                       const ip_address* creator) {
  if (settled(*r)) return;  // timed out already
  if (!st->gate.enter()) {
    refuse_from_swarm(*st, *r, gateway_refusal::shutting_down);
    return;
  }
  // An existing swarm costs nothing; a new one is paid from the creator's
  // budget first (a retry, whose swarm just ended, is not charged).
  swarm_interface swarm = st->locator.find(a.request.hash);
  gateway_refusal why = gateway_refusal::swarm_unavailable;
  if (!swarm) {
    const auto now = steady::now();
    if (creator != nullptr && !st->budget.take(*creator, now)) {
      why = gateway_refusal::new_swarm_budget;
      st->census->count_refusal(node_cap::new_swarm_budget);
      st->last_budget_refusal.store(now.time_since_epoch().count(), std::memory_order_relaxed);
      if (st->census->reach(node_cap::new_swarm_budget))
        spdlog::warn("new-swarm budget reached: {} created {} swarms at once ({} per minute "
                     "after that, gateway.new-swarm-burst / gateway.new-swarms-per-minute); its "
                     "new torrents refused",
                     creator->to_string(), st->budget.burst(), st->budget.per_minute());
    } else {
      route_result routed = st->locator.route(a.request.hash);
      swarm = std::move(routed.swarm);
      if (routed.status == route_status::swarm_cap) why = gateway_refusal::swarm_limit;
    }
  }
  const bool routed = static_cast<bool>(swarm);
  if (routed) {
    const std::size_t lane = r->lane_;
    announce_ticket_ptr ticket = make_recycled<gateway_ticket>(std::move(a), st, r, retries);
    if (batched)
      st->lanes[lane].batch.announces.emplace_back(std::move(swarm), std::move(ticket));
    else
      caf::anon_send(swarm, announce_atom::value, std::move(ticket));
  }
  st->gate.leave();
  if (!routed) refuse_from_swarm(*st, *r, why);
}

gateway::gateway(caf::actor_system& sys, swarm_directory& dir, gateway_config cfg,
                 std::shared_ptr<access_control> access)
    : own_locator_(std::make_unique<directory_locator>(dir)), sys_(sys) {
  state_ = std::make_shared<state>(*own_locator_, std::move(cfg), std::move(access), dir.census());
}

gateway::gateway(caf::actor_system& sys, swarm_locator& locator, gateway_config cfg,
                 std::shared_ptr<access_control> access, std::shared_ptr<node_census> census)
    : state_(std::make_shared<state>(locator, std::move(cfg), std::move(access),
                                     std::move(census))),
      sys_(sys) {}

gateway::~gateway() {
  for (auto& l : state_->lanes) l.gate.close();
  state_->gate.close_and_wait();
  // The dispatchers end; a batch still in a mailbox is dropped, and its
  // tickets see the closed state (no routing, no answer).
  for (auto& l : state_->lanes) {
    l.batch = ticket_batch{};
    caf::anon_send_exit(l.dispatcher, caf::exit_reason::user_shutdown);
  }
}

std::size_t gateway::add_lanes(std::size_t n) {
  const std::size_t first = state_->lanes.size();
  for (std::size_t i = 0; i < n; ++i) {
    state_->lanes.emplace_back();
    // Hidden: the actor system's destructor must not wait for it; the
    // gateway's destructor ends it.
    state_->lanes.back().dispatcher = sys_.spawn<caf::hidden>(dispatcher_impl);
  }
  return first;
}

void gateway::prefetch(const info_hash* hashes, std::size_t n) {
  state_->locator.prefetch(hashes, n);
}

void gateway::flush(std::size_t lane) {
  gateway_lane& l = state_->lanes[lane];
  if (l.batch.empty()) return;
  // The next round is likely about as large: its vectors start with this
  // one's size instead of growing from empty (a reallocation per doubling).
  const std::size_t announces = l.batch.announces.size();
  const std::size_t scrapes = l.batch.scrapes.size();
  caf::anon_send(l.dispatcher, std::move(l.batch));
  l.batch = ticket_batch{};
  l.batch.announces.reserve(announces);
  l.batch.scrapes.reserve(scrapes);
}

std::size_t gateway::lanes() const noexcept { return state_->lanes.size(); }

const gateway_config& gateway::config() const noexcept { return state_->cfg; }

const std::shared_ptr<access_control>& gateway::access() const noexcept { return state_->access; }

const node_census& gateway::census() const noexcept { return *state_->census; }

void gateway::announce(std::size_t lane, transport via, announce_request&& request,
                       const ip_address& source, bool own_family_only,
                       std::shared_ptr<announce_reply> reply) {
  state& st = *state_;
  auto& c = st.count(via);
  // The address's rate first: a flood costs one bucket lookup per request.
  if (!st.take_rate(via, source, c.rate_limited_announces)) {
    reply->via_ = via;
    reply->settled_.store(true, std::memory_order_relaxed);
    reply->on_refusal(gateway_refusal::rate_limited, st.cfg.retry_in_minutes);
    return;
  }
  // Before routing: a refused hash never reaches the directory, so it never
  // spawns a swarm. Mode off: one relaxed load.
  if (st.access && !st.access->allowed(request.hash)) {
    bump(c.denied_announces);
    (via == transport::udp ? st.access->refused_udp_announces
                           : st.access->refused_http_announces)
        .fetch_add(1, std::memory_order_relaxed);
    reply->via_ = via;
    reply->settled_.store(true, std::memory_order_relaxed);
    reply->on_refusal(gateway_refusal::denied, 0);
    return;
  }
  if (!gateway_detail::admit(st, reply, lane, via)) return;
  bump(c.announces);
  swarm_announce a;
  const bool trusted = st.cfg.trust_claimed_ip[static_cast<std::size_t>(via)];
  a.peer.ip = trusted && request.claimed_ip ? *request.claimed_ip : source;
  a.peer.port = request.port;
  a.own_family_only = own_family_only;
  a.request = std::move(request);
  gateway_detail::dispatch_announce(state_, std::move(reply), std::move(a), 1, true, &source);
}

void gateway::scrape(std::size_t lane, transport via, std::vector<info_hash> hashes,
                     const ip_address& source, std::shared_ptr<scrape_reply> reply) {
  state& st = *state_;
  if (!st.take_rate(via, source, st.count(via).rate_limited_scrapes)) {
    reply->via_ = via;
    reply->settled_.store(true, std::memory_order_relaxed);
    reply->on_refusal(gateway_refusal::rate_limited, st.cfg.retry_in_minutes);
    return;
  }
  if (!gateway_detail::admit(st, reply, lane, via)) return;
  bump(st.count(via).scrapes);
  auto f = std::make_shared<scrape_fanin>();
  f->st = state_;
  f->r = std::move(reply);
  f->answers.resize(hashes.size());
  // +1: held while sending, so no ticket can finish the scrape early.
  f->remaining.store(1, std::memory_order_relaxed);
  for (std::size_t i = 0; i < hashes.size(); ++i) f->answers[i].hash = hashes[i];
  if (st.gate.enter()) {
    for (std::size_t i = 0; i < hashes.size(); ++i) {
      // A hash the access list refuses is answered as not served.
      if (st.access && !st.access->allowed(hashes[i])) {
        f->answers[i].served = false;
        bump(st.count(via).denied_scrape_hashes);
        (via == transport::udp ? st.access->refused_udp_scrapes
                               : st.access->refused_http_scrapes)
            .fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      // find(), not route(): scraping an unknown torrent must not create a
      // swarm (anyone could fill the directory with scrapes of random hashes).
      if (swarm_interface swarm = st.locator.find(hashes[i])) {
        f->remaining.fetch_add(1, std::memory_order_relaxed);
        auto ticket = make_recycled<gateway_scrape_ticket>(f, i, swarm.address(), 1);
        st.lanes[lane].batch.scrapes.emplace_back(std::move(swarm),
                                                  scrape_ticket_ptr(std::move(ticket)));
      }
    }
    st.gate.leave();
  }
  f->done_one();
}

bool gateway::take_connect_token(transport via, const ip_address& source) {
  state& st = *state_;
  return st.take_rate(via, source, st.count(via).rate_limited_connects);
}

const address_buckets* gateway::rate_limit() const noexcept { return state_->rate.get(); }

bool gateway::rate_limit_reached() const noexcept { return state_->rate_reached.reached(); }

void gateway::sweep(std::size_t lane, std::chrono::steady_clock::time_point now) {
  state& st = *state_;
  // The rate limit's "reached" state clears after a refill time without a
  // refusal (a clock-free sweep, `now` zero, never clears it).
  if (st.rate && now != steady::time_point{} &&
      st.rate_reached.settle(now, st.rate->refill_time()))
    spdlog::info("request rate limit cleared: no address refused for {} s",
                 std::chrono::duration_cast<std::chrono::seconds>(st.rate->refill_time()).count());
  // The budget's "reached" state clears after a refill time without a
  // refusal (one relaxed load while it is not reached).
  if (st.census->reached(node_cap::new_swarm_budget) != 0) {
    const steady::time_point last(
        steady::duration(st.last_budget_refusal.load(std::memory_order_relaxed)));
    if (now - last >= st.budget.refill_time() && st.census->clear(node_cap::new_swarm_budget))
      spdlog::info("new-swarm budget cleared: no address refused for {} s",
                   std::chrono::duration_cast<std::chrono::seconds>(now - last).count());
  }
  gateway_lane& l = state_->lanes[lane];
  while (!l.pending.empty()) {
    gateway_request& r = *l.pending.front();
    if (!gateway_detail::settled(r)) {
      if (r.deadline_ > now) break;
      gateway_detail::refuse(*state_, r, gateway_refusal::timeout);
    }
    l.pending.pop_front();
  }
}

std::chrono::milliseconds gateway::sweep_period() const noexcept {
  return std::clamp<std::chrono::milliseconds>(state_->cfg.request_timeout / 5,
                                               std::chrono::milliseconds(1),
                                               std::chrono::milliseconds(1000));
}

std::size_t gateway::in_flight(std::size_t lane) const noexcept {
  return state_->lanes[lane].in_flight.load(std::memory_order_relaxed);
}

void gateway::close_lane(std::size_t lane) noexcept {
  // Waits as well: a swarm thread that claimed an answer before the close
  // (its request no longer counted in flight) is still handing it to the
  // transport, which must stay open for it until it leaves.
  state_->lanes[lane].gate.close_and_wait();
}

void gateway::abandon(std::size_t lane) {
  gateway_lane& l = state_->lanes[lane];
  l.gate.close_and_wait();
  l.batch = ticket_batch{};  // unsent tickets: their requests are refused below
  for (auto& r : l.pending) gateway_detail::refuse(*state_, *r, gateway_refusal::shutting_down);
  l.pending.clear();
}

gateway_counters gateway::counters(transport via) const noexcept {
  const auto& c = state_->counters[static_cast<std::size_t>(via)];
  auto ld = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  gateway_counters out;
  out.announces = ld(c.announces);
  out.announces_refused = ld(c.announces_refused);
  out.scrapes = ld(c.scrapes);
  out.denied_announces = ld(c.denied_announces);
  out.denied_scrape_hashes = ld(c.denied_scrape_hashes);
  out.overloaded = ld(c.overloaded);
  out.timeouts = ld(c.timeouts);
  out.unavailable = ld(c.unavailable);
  out.shutting_down = ld(c.shutting_down);
  out.rerouted = ld(c.rerouted);
  out.capped = ld(c.capped);
  out.rate_limited_announces = ld(c.rate_limited_announces);
  out.rate_limited_scrapes = ld(c.rate_limited_scrapes);
  out.rate_limited_connects = ld(c.rate_limited_connects);
  return out;
}

}  // namespace sk
