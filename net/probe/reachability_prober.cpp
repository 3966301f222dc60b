#include "net/probe/reachability_prober.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "runtime/probe_interface.hpp"

namespace sk {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t handshake_size = 68;
constexpr char pstr[] = "BitTorrent protocol";
constexpr std::size_t pstr_len = 19;
constexpr std::size_t hash_offset = 1 + pstr_len + 8;  // 28

/// What one dial found, independent of who asked (the cooldown cache keeps
/// it for asks about other info_hashes).
enum class verdict : std::uint8_t {
  reachable,       ///< a handshake for the probed info_hash
  unreachable,     ///< refused, timed out, silent, or an incomplete handshake
  not_bittorrent,  ///< bytes that are no BitTorrent handshake
  wrong_hash,      ///< a handshake for another info_hash
};

/// The outcome for an ask about `asked`, from a dial that probed `probed`.
probe_outcome outcome_for(verdict v, const info_hash& probed, const info_hash& asked) {
  switch (v) {
    case verdict::reachable:
      // A BitTorrent peer listens there: reachable whatever torrent we asked about.
      return probe_outcome::reachable;
    case verdict::unreachable:
      return probe_outcome::unreachable;
    case verdict::not_bittorrent:
      return probe_outcome::bogus;
    case verdict::wrong_hash:
      // Says nothing about another torrent the peer may well have.
      return probed == asked ? probe_outcome::bogus : probe_outcome::skipped;
  }
  return probe_outcome::skipped;
}

/// Judges the first `n` bytes the peer sent (n <= 68; fewer when it closed
/// or the deadline passed).
verdict judge(const std::array<std::uint8_t, handshake_size>& in, std::size_t n,
              const info_hash& hash) {
  if (n == 0) {
    return verdict::unreachable;
  }
  // Compare what arrived of the fixed parts: pstrlen, pstr, info_hash.
  if (in[0] != pstr_len) {
    return verdict::not_bittorrent;
  }
  const std::size_t pstr_got = std::min(n, 1 + pstr_len) - 1;
  if (std::memcmp(in.data() + 1, pstr, pstr_got) != 0) {
    return verdict::not_bittorrent;
  }
  if (n > hash_offset) {
    const std::size_t hash_got = std::min(n, hash_offset + 20) - hash_offset;
    if (std::memcmp(in.data() + hash_offset, hash.bytes.data(), hash_got) != 0) {
      return verdict::wrong_hash;
    }
  }
  // A correct but incomplete handshake: a slow peer, not an impostor.
  return n == handshake_size ? verdict::reachable : verdict::unreachable;
}

struct endpoint_hasher {
  std::size_t operator()(const endpoint& e) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ e.port ^ (e.ip.v6 ? 0x100000000ULL : 0);
    for (std::size_t i = 0; i < e.ip.length(); ++i) {
      h = (h ^ e.ip.bytes[i]) * 0x100000001b3ULL;
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

tcp::endpoint to_asio(const endpoint& e) {
  if (e.ip.v6) {
    asio::ip::address_v6::bytes_type b;
    std::memcpy(b.data(), e.ip.bytes.data(), 16);
    return {asio::ip::address_v6(b), e.port};
  }
  asio::ip::address_v4::bytes_type b;
  std::memcpy(b.data(), e.ip.bytes.data(), 4);
  return {asio::ip::address_v4(b), e.port};
}

peer_id make_own_id() {
  static constexpr char alphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::random_device rd;
  std::string id = "-SK0001-";
  while (id.size() < peer_id::size) {
    id.push_back(alphabet[rd() % (sizeof alphabet - 1)]);
  }
  return peer_id::from_bytes(id);
}

}  // namespace

bool probe_address_allowed(const ip_address& a, bool allow_loopback, bool allow_private) noexcept {
  const auto& b = a.bytes;
  if (!a.v6) {
    if (b[0] == 0) return false;             // 0.0.0.0/8: "this network"
    if (b[0] >= 224) return false;           // multicast, reserved, broadcast
    if (b[0] == 127) return allow_loopback;  // loopback
    const bool is_private = b[0] == 10 ||    // RFC 1918
                            (b[0] == 172 && (b[1] & 0xf0) == 16) || (b[0] == 192 && b[1] == 168) ||
                            (b[0] == 100 && (b[1] & 0xc0) == 64) ||  // CGNAT (RFC 6598)
                            (b[0] == 169 && b[1] == 254);            // link-local
    return !is_private || allow_private;
  }
  static constexpr std::uint8_t zeros[16] = {};
  if (b[0] == 0xff) return false;  // multicast
  if (std::memcmp(b.data(), zeros, 15) == 0) {
    if (b[15] == 1) return allow_loopback;  // ::1
    return false;                           // :: (unspecified)
  }
  // ::/96 (deprecated IPv4-compatible) and other low addresses: nothing to dial.
  if (std::memcmp(b.data(), zeros, 12) == 0) return false;
  const bool is_private = (b[0] & 0xfe) == 0xfc ||                  // fc00::/7 unique local
                          (b[0] == 0xfe && (b[1] & 0xc0) == 0x80);  // fe80::/10 link-local
  return !is_private || allow_private;
}

std::string prober_config::validate() const {
  if (timeout <= std::chrono::milliseconds{0}) {
    return "probe.timeout must be positive (got " + std::to_string(timeout.count()) + " ms)";
  }
  if (max_concurrent == 0) {
    return "probe.max-concurrent must be at least 1";
  }
  if (cooldown <= std::chrono::seconds{0}) {
    return "probe.reprobe-after (the per-address cooldown) must be positive (got " +
           std::to_string(cooldown.count()) + " s)";
  }
  if (max_remembered == 0) {
    return "the prober must remember at least 1 address";
  }
  return {};
}

// -- state ------------------------------------------------------------------------

struct reachability_prober::state {
  explicit state(const prober_config& c) : cfg(c), own(make_own_id()) {}

  /// One ask: what a swarm wants to know, and where the answer goes.
  struct ask {
    probe_request req;
    probe_reply_interface reply_to;
  };
  struct memory {
    std::chrono::steady_clock::time_point at;
    verdict v;
    info_hash probed;
  };
  class probe;

  const prober_config cfg;
  const peer_id own;
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;

  std::atomic<std::uint64_t> started{0}, reachable{0}, unreachable{0}, bogus{0}, remembered_n{0},
      refused{0}, dropped{0};
  std::atomic<std::size_t> active_n{0}, peak{0}, waiting_n{0};

  // -- io thread only --
  bool stopping = false;
  std::deque<ask> queue;
  /// Asks waiting: queued plus attached to a probe of the same endpoint.
  std::size_t waiting = 0;
  std::unordered_map<endpoint, std::shared_ptr<probe>, endpoint_hasher> in_flight;
  std::unordered_map<endpoint, memory, endpoint_hasher> remembered;

  void enqueue(ask a);
  void admit(ask a);
  void launch(ask a);
  void finish(probe& p, verdict v);
  void pump();
  void abort_all();
  void set_waiting() { waiting_n.store(waiting, std::memory_order_relaxed); }

  static void reply(const ask& a, probe_outcome o) {
    caf::anon_send(a.reply_to, probe_atom::value,
                   probe_result{a.req.hash, a.req.id, a.req.target, o});
  }
};

/// One dial. Owned by the handlers of its pending operations (and, while
/// running, by `state::in_flight`); touched on the io thread only.
class reachability_prober::state::probe : public std::enable_shared_from_this<probe> {
 public:
  probe(state& st, ask a) : st_(st), sock_(st.ioc), timer_(st.ioc), first_(std::move(a)) {
    out_[0] = static_cast<std::uint8_t>(pstr_len);
    std::memcpy(out_.data() + 1, pstr, pstr_len);
    // Reserved bytes stay zero: we announce no extension (we never talk on).
    std::memcpy(out_.data() + hash_offset, first_.req.hash.bytes.data(), 20);
    std::memcpy(out_.data() + hash_offset + 20, st.own.bytes.data(), 20);
  }

  void run() {
    arm();
    sock_.async_connect(
        to_asio(first_.req.target),
        [self = shared_from_this()](boost::system::error_code ec) { self->on_connect(ec); });
  }
  /// Closes everything: pending handlers complete at once (stop()).
  void abort() {
    boost::system::error_code ignored;
    sock_.close(ignored);
    timer_.cancel();
  }

 private:
  /// (Re)starts the deadline of the current step.
  void arm() {
    timer_.expires_after(st_.cfg.timeout);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      // Aborted, finished, or re-armed meanwhile: not our deadline.
      if (ec == asio::error::operation_aborted || self->done_ ||
          self->timer_.expiry() > std::chrono::steady_clock::now()) {
        return;
      }
      boost::system::error_code ignored;
      self->sock_.close(ignored);  // the pending connect/read ends with an error
    });
  }

  void on_connect(boost::system::error_code ec) {
    if (done_) return;
    if (ec) {
      st_.finish(*this, verdict::unreachable);
      return;
    }
    arm();
    // Write and read at once: a non-BitTorrent service may talk first and
    // close, and its bytes are what tells us what it is.
    asio::async_write(sock_, asio::buffer(out_),
                      [self = shared_from_this()](boost::system::error_code, std::size_t) {});
    asio::async_read(sock_, asio::buffer(in_), asio::transfer_exactly(handshake_size),
                     [self = shared_from_this()](boost::system::error_code, std::size_t n) {
                       if (self->done_) return;
                       self->st_.finish(*self, judge(self->in_, n, self->first_.req.hash));
                     });
  }

  state& st_;
  tcp::socket sock_;
  asio::steady_timer timer_;
  /// The ask that started this dial, and asks about the same endpoint that
  /// came while it ran (answered with the same verdict).
  ask first_;
  std::vector<ask> waiters_;
  bool done_ = false;
  std::array<std::uint8_t, handshake_size> out_{};
  std::array<std::uint8_t, handshake_size> in_{};

  friend struct reachability_prober::state;
};

void reachability_prober::state::enqueue(ask a) {
  if (stopping) return;
  const endpoint& ep = a.req.target;
  if (ep.port == 0 || !probe_address_allowed(ep.ip, cfg.allow_loopback, cfg.allow_private)) {
    refused.fetch_add(1, std::memory_order_relaxed);
    reply(a, probe_outcome::skipped);
    return;
  }
  admit(std::move(a));
}

void reachability_prober::state::admit(ask a) {
  const endpoint ep = a.req.target;
  const auto now = std::chrono::steady_clock::now();
  if (auto m = remembered.find(ep); m != remembered.end()) {
    if (now - m->second.at < cfg.cooldown) {
      // Dialled recently (maybe for another swarm): answer from memory, so
      // one address is never dialled more than once per cooldown.
      remembered_n.fetch_add(1, std::memory_order_relaxed);
      reply(a, outcome_for(m->second.v, m->second.probed, a.req.hash));
      return;
    }
    remembered.erase(m);
  }
  if (auto f = in_flight.find(ep); f != in_flight.end()) {
    if (waiting >= cfg.max_queued) {
      dropped.fetch_add(1, std::memory_order_relaxed);
      reply(a, probe_outcome::skipped);
      return;
    }
    f->second->waiters_.push_back(std::move(a));
    ++waiting;
    set_waiting();
    return;
  }
  if (in_flight.size() < cfg.max_concurrent) {
    if (remembered.size() + in_flight.size() >= cfg.max_remembered) {
      for (auto it = remembered.begin(); it != remembered.end();) {
        it = now - it->second.at >= cfg.cooldown ? remembered.erase(it) : std::next(it);
      }
      if (remembered.size() + in_flight.size() >= cfg.max_remembered) {
        // Forgetting a recent verdict would let that address be dialled
        // again within its cooldown: refuse new work instead.
        dropped.fetch_add(1, std::memory_order_relaxed);
        reply(a, probe_outcome::skipped);
        return;
      }
    }
    launch(std::move(a));
    return;
  }
  if (waiting < cfg.max_queued) {
    queue.push_back(std::move(a));
    ++waiting;
    set_waiting();
    return;
  }
  dropped.fetch_add(1, std::memory_order_relaxed);
  reply(a, probe_outcome::skipped);
}

void reachability_prober::state::launch(ask a) {
  const endpoint ep = a.req.target;
  auto p = std::make_shared<probe>(*this, std::move(a));
  in_flight.emplace(ep, p);
  started.fetch_add(1, std::memory_order_relaxed);
  const auto n = active_n.fetch_add(1, std::memory_order_relaxed) + 1;
  if (n > peak.load(std::memory_order_relaxed)) peak.store(n, std::memory_order_relaxed);
  p->run();
}

void reachability_prober::state::finish(probe& p, verdict v) {
  p.done_ = true;
  p.abort();
  const endpoint ep = p.first_.req.target;
  auto keep = in_flight[ep];  // keeps `p` alive until we are done with it
  in_flight.erase(ep);
  active_n.fetch_sub(1, std::memory_order_relaxed);
  waiting -= p.waiters_.size();
  set_waiting();
  if (stopping) {
    return;  // no answers: the swarms forget unanswered probes
  }
  const info_hash& probed = p.first_.req.hash;
  remembered[ep] = memory{std::chrono::steady_clock::now(), v, probed};
  const probe_outcome o = outcome_for(v, probed, probed);
  switch (o) {
    case probe_outcome::reachable:
      reachable.fetch_add(1, std::memory_order_relaxed);
      break;
    case probe_outcome::unreachable:
      unreachable.fetch_add(1, std::memory_order_relaxed);
      break;
    default:
      bogus.fetch_add(1, std::memory_order_relaxed);
      break;
  }
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("probe {}:{} for {}: {}", ep.ip.to_string(), ep.port, probed.hex(), to_string(o));
  }
  reply(p.first_, o);
  for (const auto& w : p.waiters_) {
    reply(w, outcome_for(v, probed, w.req.hash));
  }
  pump();
}

void reachability_prober::state::pump() {
  while (!stopping && in_flight.size() < cfg.max_concurrent && !queue.empty()) {
    ask a = std::move(queue.front());
    queue.pop_front();
    --waiting;
    set_waiting();
    admit(std::move(a));
  }
}

void reachability_prober::state::abort_all() {
  stopping = true;
  waiting -= queue.size();
  queue.clear();
  set_waiting();
  for (auto& kv : in_flight) {
    kv.second->abort();  // handlers run later and end in finish() (no answers)
  }
}

// -- the actor ----------------------------------------------------------------------

namespace {

prober_interface::behavior_type prober_actor(prober_interface::pointer self,
                                             std::shared_ptr<reachability_prober::state> st) {
  return {
      [self, st](probe_atom, const probe_request& r) {
        // The answer goes to whoever asked, as a swarm takes it.
        auto reply_to = caf::actor_cast<probe_reply_interface>(self->current_sender());
        if (!reply_to) {
          st->dropped.fetch_add(1, std::memory_order_relaxed);
          return;  // nobody to tell
        }
        // Never blocks: the io thread does everything else.
        asio::post(st->ioc,
                   [st, a = reachability_prober::state::ask{r, std::move(reply_to)}]() mutable {
                     st->enqueue(std::move(a));
                   });
      },
  };
}

}  // namespace

// -- the component ------------------------------------------------------------------

reachability_prober::reachability_prober(caf::actor_system& sys, const prober_config& cfg)
    : sys_(sys) {
  if (auto err = cfg.validate(); !err.empty()) {
    throw std::invalid_argument("invalid prober config: " + err);
  }
  st_ = std::make_shared<state>(cfg);
}

reachability_prober::~reachability_prober() { stop(); }

void reachability_prober::start() {
  if (stopped_) {
    throw std::logic_error("reachability_prober: start() after stop()");
  }
  if (started_) {
    return;
  }
  started_ = true;
  st_->work.emplace(st_->ioc.get_executor());
  st_->thread = std::thread([st = st_] { st->ioc.run(); });
  actor_ = sys_.spawn<caf::hidden>(prober_actor, st_);
}

void reachability_prober::stop() {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  if (!started_) {
    return;
  }
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  actor_ = nullptr;
  asio::post(st_->ioc, [st = st_] { st->abort_all(); });
  st_->work.reset();
  // Every pending operation was aborted: run() returns as soon as their
  // handlers have run (asks the actor still posts are dropped).
  st_->thread.join();
}

prober_counters reachability_prober::counters() const noexcept {
  prober_counters c;
  c.started = st_->started.load(std::memory_order_relaxed);
  c.reachable = st_->reachable.load(std::memory_order_relaxed);
  c.unreachable = st_->unreachable.load(std::memory_order_relaxed);
  c.bogus = st_->bogus.load(std::memory_order_relaxed);
  c.remembered = st_->remembered_n.load(std::memory_order_relaxed);
  c.refused = st_->refused.load(std::memory_order_relaxed);
  c.dropped = st_->dropped.load(std::memory_order_relaxed);
  return c;
}

std::size_t reachability_prober::active() const noexcept {
  return st_->active_n.load(std::memory_order_relaxed);
}
std::size_t reachability_prober::peak_active() const noexcept {
  return st_->peak.load(std::memory_order_relaxed);
}
std::size_t reachability_prober::queued() const noexcept {
  return st_->waiting_n.load(std::memory_order_relaxed);
}
const peer_id& reachability_prober::own_id() const noexcept { return st_->own; }

}  // namespace sk
