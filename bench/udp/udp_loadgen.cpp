// BEP 15 UDP tracker load generator (bench/udp/README.md).
//
//   udp_loadgen --port=P [--host=127.0.0.1] [--torrents=1000] [--peers=20]
//               [--seed=1] [--scrape-pct=0] [--scrape-hashes=10] [--window=64]
//               [--duration=15] [--threads=1] [--warmup] [--timeout-ms=1000]
//               [--order=cycle|random] [--rate=0]
//   udp_loadgen --write-hashes[=FILE] [--torrents=N] [--seed=S]
//
// Each thread owns one connected UDP socket. It connects (BEP 15 action 0),
// then keeps `window` requests outstanding, matched by transaction id; a
// request unanswered after `timeout-ms` is counted as a timeout and replaced.
// An error reply (action 3) is counted and triggers a reconnect (the usual
// cause is an expired connection id). With --warmup every (torrent, peer)
// slot announces exactly once with event=started (timeouts are resent), then
// the program exits; otherwise it runs `duration` seconds of steady-state
// re-announces (no event) and scrapes of random torrents, and prints one
// line starting with "BENCH " (key=value fields). Loopback only: the host
// must be a 127.x.y.z address.
//
// Order of announces (`--order`): `cycle` (default) walks each thread's slots
// in one fixed shuffled order, warm-up and steady state alike, so every peer
// re-announces once per cycle, as real clients announce once per interval
// (a tracker that enforces `min interval` sees no early announces when a
// cycle is longer than its early threshold); `random` picks a uniformly
// random slot per request (the order used before 2026-11-29), under which a
// peer may re-announce within milliseconds.
//
// `--rate=R` paces the steady state: at most R requests a second in all
// (each thread R / threads, spread evenly over the run), the window still
// bounding what is in flight. With R = torrents * peers / interval and the
// cycle order, every peer re-announces once per `interval` seconds: the
// pattern a tracker sees from real clients, under which its swarms are
// announced to only now and then. 0 (the default): as fast as the window
// allows.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "protocol/udp.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

struct options {
  std::string host = "127.0.0.1";
  int port = 0;
  std::uint32_t torrents = 1000;
  std::uint32_t peers = 20;
  std::uint32_t seed = 1;
  unsigned scrape_pct = 0;
  unsigned scrape_hashes = 10;
  unsigned window = 64;
  double duration = 15;
  unsigned threads = 1;
  bool warmup = false;
  unsigned timeout_ms = 1000;
  int numwant = 50;
  bool random_order = false;
  std::uint64_t rate = 0;  // requests per second in all; 0: unpaced
  bool write_hashes = false;
  std::string hashes_file;
};

// Park-Miller minimal standard generator: the population is a pure function
// of the seed (same scheme as bench/http/announce.lua).
struct park_miller {
  std::uint64_t state;
  explicit park_miller(std::uint64_t s) : state(s % 2147483647u ? s % 2147483647u : 1) {}
  std::uint32_t next() {
    state = state * 16807u % 2147483647u;
    return static_cast<std::uint32_t>(state);
  }
};

struct slot {
  sk::peer_id id;
  std::uint16_t port;
  std::uint64_t left;
  std::string key;
};

struct population {
  std::vector<sk::info_hash> hashes;
  std::vector<slot> slots;  // torrent-major: torrents * peers
};

population make_population(const options& o) {
  population p;
  park_miller rng(o.seed);
  p.hashes.resize(o.torrents);
  for (auto& h : p.hashes)
    for (auto& b : h.bytes) b = static_cast<std::uint8_t>(rng.next() >> 7);
  p.slots.resize(static_cast<std::size_t>(o.torrents) * o.peers);
  static constexpr char hex[] = "0123456789ABCDEF";
  for (std::uint32_t t = 0; t < o.torrents; ++t) {
    for (std::uint32_t i = 0; i < o.peers; ++i) {
      slot& s = p.slots[static_cast<std::size_t>(t) * o.peers + i];
      std::memcpy(s.id.bytes.data(), "-SK0001-", 8);
      for (std::size_t k = 8; k < 20; ++k) s.id.bytes[k] = static_cast<std::uint8_t>(rng.next() >> 7);
      s.port = static_cast<std::uint16_t>(10000 + i);  // distinct within the torrent
      s.left = (i % 4 == 0) ? 0 : 1000000;             // a quarter are seeders
      s.key.resize(8);
      std::uint32_t k = rng.next();
      for (int d = 0; d < 8; ++d) s.key[d] = hex[(k >> (28 - 4 * d)) & 0xf];
    }
  }
  return p;
}

struct stats {
  std::uint64_t sent = 0, responses = 0, announces = 0, scrapes = 0, connects = 0;
  std::uint64_t peers = 0, announces_without_peers = 0, errors = 0, timeouts = 0, bad = 0;
  std::uint64_t warm_done = 0;
};

enum class kind : std::uint8_t { connect, announce, scrape };

struct pending {
  clock_type::time_point sent;
  kind k;
  std::size_t slot_index;  // announce: the slot (for warm-up resends)
};

class worker {
 public:
  worker(const options& o, const population& p, unsigned index, std::atomic<bool>& stop)
      : o_(o), p_(p), index_(index), stop_(stop), rng_(o.seed * 7919u + index + 1) {}

  bool open(const sockaddr_in& to) {
    fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (fd_ < 0) return false;
    int buf = 4 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    return ::connect(fd_, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0;
  }
  ~worker() {
    if (fd_ >= 0) ::close(fd_);
  }

  void run(clock_type::time_point until) {
    started_ = clock_type::now();
    // This thread's slots in one fixed shuffled order (a function of the
    // seed and the thread), shared by warm-up and steady state.
    for (std::size_t i = index_; i < p_.slots.size(); i += o_.threads) order_.push_back(i);
    park_miller shuffle_rng(o_.seed * 104729u + index_ + 1);
    for (std::size_t i = order_.size(); i > 1; --i) {
      std::swap(order_[i - 1], order_[shuffle_rng.next() % i]);
    }
    if (o_.warmup) {
      todo_.assign(order_.rbegin(), order_.rend());  // popped from the back
    }
    const auto timeout = std::chrono::milliseconds(o_.timeout_ms);
    auto next_scan = clock_type::now() + std::chrono::milliseconds(50);
    auto connected_at = clock_type::now();
    std::vector<char> rbuf(64 * 2048);
    std::vector<mmsghdr> msgs(64);
    std::vector<iovec> iovs(64);
    while (!stop_.load(std::memory_order_relaxed)) {
      auto now = clock_type::now();
      if (!o_.warmup && now >= until) break;
      if (o_.warmup && todo_.empty() && inflight_.empty()) break;
      // Refresh the connection id well before the 2-minute limit.
      if (have_id_ && now - connected_at > std::chrono::seconds(60)) {
        have_id_ = false;
      }
      if (!have_id_ && !connecting_) {
        send_connect(now);
        connected_at = now;
      }
      if (have_id_) fill(now);
      flush();
      pollfd pfd{fd_, POLLIN, 0};
      ::poll(&pfd, 1, 2);
      // Drain replies in batches.
      for (;;) {
        for (std::size_t i = 0; i < msgs.size(); ++i) {
          iovs[i] = {rbuf.data() + i * 2048, 2048};
          msgs[i] = {};
          msgs[i].msg_hdr.msg_iov = &iovs[i];
          msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = ::recvmmsg(fd_, msgs.data(), static_cast<unsigned>(msgs.size()), MSG_DONTWAIT, nullptr);
        if (n <= 0) break;
        now = clock_type::now();
        for (int i = 0; i < n; ++i)
          on_reply(std::string_view(rbuf.data() + static_cast<std::size_t>(i) * 2048, msgs[i].msg_len),
                   now);
        if (static_cast<std::size_t>(n) < msgs.size()) break;
      }
      now = clock_type::now();
      if (now >= next_scan) {
        next_scan = now + std::chrono::milliseconds(50);
        for (auto it = inflight_.begin(); it != inflight_.end();) {
          if (now - it->second.sent > timeout) {
            ++s_.timeouts;
            if (it->second.k == kind::connect) connecting_ = false;
            if (o_.warmup && it->second.k == kind::announce) todo_.push_back(it->second.slot_index);
            it = inflight_.erase(it);
          } else {
            ++it;
          }
        }
      }
    }
  }

  const stats& result() const { return s_; }

 private:
  std::uint32_t next_tid() { return (static_cast<std::uint32_t>(index_) << 24) | (tid_++ & 0xffffff); }

  void send_connect(clock_type::time_point now) {
    auto tid = next_tid();
    std::string pkt;
    sk::encode_udp_connect_request(pkt, sk::transaction_id{tid});
    queue(std::move(pkt));
    inflight_[tid] = {now, kind::connect, 0};
    connecting_ = true;
  }

  /// Requests the pace allows by `now` (steady state with --rate).
  std::uint64_t allowed(clock_type::time_point now) const {
    const double secs = std::chrono::duration<double>(now - started_).count();
    return static_cast<std::uint64_t>(secs * static_cast<double>(o_.rate) / o_.threads) + 1;
  }

  void fill(clock_type::time_point now) {
    const bool paced = !o_.warmup && o_.rate > 0;
    const std::uint64_t budget = paced ? allowed(now) : 0;
    while (inflight_.size() < o_.window) {
      if (paced && issued_ >= budget) return;
      ++issued_;
      auto tid = next_tid();
      std::string pkt;
      if (o_.warmup) {
        if (todo_.empty()) return;
        std::size_t si = todo_.back();
        todo_.pop_back();
        announce(pkt, tid, si, sk::announce_event::started);
        inflight_[tid] = {now, kind::announce, si};
      } else if (o_.scrape_pct > 0 && rng_.next() % 100 < o_.scrape_pct) {
        hashes_.clear();
        for (unsigned i = 0; i < o_.scrape_hashes; ++i) hashes_.push_back(p_.hashes[rng_.next() % o_.torrents]);
        sk::encode_udp_scrape_request(pkt, id_, sk::transaction_id{tid}, hashes_.data(), hashes_.size());
        inflight_[tid] = {now, kind::scrape, 0};
      } else {
        std::size_t si = 0;
        if (o_.random_order || order_.empty()) {
          si = rng_.next() % p_.slots.size();
        } else {
          si = order_[cursor_];
          cursor_ = (cursor_ + 1) % order_.size();
        }
        announce(pkt, tid, si, sk::announce_event::none);
        inflight_[tid] = {now, kind::announce, si};
      }
      queue(std::move(pkt));
    }
  }

  void announce(std::string& pkt, std::uint32_t tid, std::size_t si, sk::announce_event ev) {
    const slot& s = p_.slots[si];
    req_.hash = p_.hashes[si / o_.peers];
    req_.id = s.id;
    req_.port = s.port;
    req_.left = s.left;
    req_.downloaded = s.left ? 0 : 1000000;
    req_.uploaded = 0;
    req_.numwant = o_.numwant;
    req_.event = ev;
    req_.key = s.key;
    sk::encode_udp_announce_request(pkt, id_, sk::transaction_id{tid}, req_);
  }

  void queue(std::string pkt) { out_.push_back(std::move(pkt)); }

  void flush() {
    std::size_t done = 0;
    while (done < out_.size()) {
      std::size_t n = std::min<std::size_t>(out_.size() - done, 64);
      std::vector<mmsghdr> m(n);
      std::vector<iovec> v(n);
      for (std::size_t i = 0; i < n; ++i) {
        v[i] = {out_[done + i].data(), out_[done + i].size()};
        m[i].msg_hdr.msg_iov = &v[i];
        m[i].msg_hdr.msg_iovlen = 1;
      }
      int r = ::sendmmsg(fd_, m.data(), static_cast<unsigned>(n), 0);
      if (r <= 0) {
        if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNREFUSED) break;
        // Buffer full or ICMP refused: drop the rest; they will time out.
        break;
      }
      s_.sent += static_cast<std::uint64_t>(r);
      done += static_cast<std::size_t>(r);
    }
    out_.clear();
  }

  void on_reply(std::string_view pkt, clock_type::time_point) {
    if (sk::parse_udp_response(pkt, false, resp_) != sk::udp_error::ok) {
      ++s_.bad;
      return;
    }
    auto it = inflight_.find(resp_.transaction.value);
    if (it == inflight_.end()) {
      ++s_.bad;  // late (already timed out) or unknown
      return;
    }
    kind k = it->second.k;
    std::size_t si = it->second.slot_index;
    inflight_.erase(it);
    if (resp_.action == sk::udp_action::error) {
      ++s_.errors;
      if (k == kind::connect) connecting_ = false;
      if (o_.warmup && k == kind::announce) todo_.push_back(si);
      if (errors_shown_ < 3) {
        ++errors_shown_;
        std::fprintf(stderr, "udp_loadgen: error reply: %.*s\n", static_cast<int>(resp_.message.size()),
                     resp_.message.data());
      }
      // An expired or foreign id: get a new one (once: not while connecting).
      if (k != kind::connect && !connecting_) have_id_ = false;
      return;
    }
    switch (k) {
      case kind::connect:
        if (resp_.action != sk::udp_action::connect) { ++s_.bad; connecting_ = false; return; }
        id_ = resp_.connection;
        have_id_ = true;
        connecting_ = false;
        ++s_.connects;
        return;
      case kind::announce: {
        if (resp_.action != sk::udp_action::announce) { ++s_.bad; return; }
        ++s_.responses;
        ++s_.announces;
        std::size_t n = resp_.peers.size() / sk::udp_peer4_size;
        s_.peers += n;
        if (n == 0) ++s_.announces_without_peers;
        if (o_.warmup) ++s_.warm_done;
        return;
      }
      case kind::scrape:
        if (resp_.action != sk::udp_action::scrape || resp_.scrape.size() != o_.scrape_hashes) {
          ++s_.bad;
          return;
        }
        ++s_.responses;
        ++s_.scrapes;
        return;
    }
  }

  const options& o_;
  const population& p_;
  unsigned index_;
  std::atomic<bool>& stop_;
  park_miller rng_;
  std::vector<std::size_t> order_;  // this thread's slots, shuffled
  std::size_t cursor_ = 0;          // steady state: next position in order_
  clock_type::time_point started_;
  std::uint64_t issued_ = 0;  // requests sent by fill (the pace counts them)
  int fd_ = -1;
  std::uint32_t tid_ = 1;
  bool have_id_ = false, connecting_ = false;
  sk::connection_id id_;
  std::unordered_map<std::uint32_t, pending> inflight_;
  std::vector<std::size_t> todo_;
  std::vector<std::string> out_;
  std::vector<sk::info_hash> hashes_;
  sk::announce_request req_;
  sk::udp_response resp_;
  stats s_;
  int errors_shown_ = 0;
};

bool parse_uint(const std::string& v, std::uint64_t lo, std::uint64_t hi, std::uint64_t& out) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 12) return false;
  out = std::stoull(v);
  return out >= lo && out <= hi;
}

int usage(const char* why) {
  std::fprintf(
      stderr,
      "udp_loadgen: %s\n"
      "usage: udp_loadgen --port=P [--host=127.0.0.1] [--torrents=1000] [--peers=20] [--seed=1]\n"
      "         [--scrape-pct=0] [--scrape-hashes=10] [--window=64] [--duration=15]\n"
      "         [--threads=1] [--numwant=50] [--timeout-ms=1000] [--warmup]\n"
      "         [--order=cycle|random] [--rate=0]\n"
      "       udp_loadgen --write-hashes[=FILE] [--torrents=N] [--seed=S]\n",
      why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto eq = a.find('=');
    std::string k = a.substr(0, eq), v = eq == std::string::npos ? "" : a.substr(eq + 1);
    std::uint64_t n = 0;
    if (k == "--host") o.host = v;
    else if (k == "--port" && parse_uint(v, 1, 65535, n)) o.port = static_cast<int>(n);
    else if (k == "--torrents" && parse_uint(v, 1, 10000000, n)) o.torrents = static_cast<std::uint32_t>(n);
    else if (k == "--peers" && parse_uint(v, 1, 50000, n)) o.peers = static_cast<std::uint32_t>(n);
    else if (k == "--seed" && parse_uint(v, 0, 0xffffffffu, n)) o.seed = static_cast<std::uint32_t>(n);
    else if (k == "--scrape-pct" && parse_uint(v, 0, 100, n)) o.scrape_pct = static_cast<unsigned>(n);
    else if (k == "--scrape-hashes" && parse_uint(v, 1, sk::udp_max_scrape_hashes, n)) o.scrape_hashes = static_cast<unsigned>(n);
    else if (k == "--window" && parse_uint(v, 1, 65536, n)) o.window = static_cast<unsigned>(n);
    else if (k == "--duration" && parse_uint(v, 1, 3600, n)) o.duration = static_cast<double>(n);
    else if (k == "--threads" && parse_uint(v, 1, 64, n)) o.threads = static_cast<unsigned>(n);
    else if (k == "--numwant" && parse_uint(v, 0, 1000, n)) o.numwant = static_cast<int>(n);
    else if (k == "--timeout-ms" && parse_uint(v, 10, 60000, n)) o.timeout_ms = static_cast<unsigned>(n);
    else if (k == "--warmup" && v.empty()) o.warmup = true;
    else if (k == "--order" && (v == "cycle" || v == "random")) o.random_order = v == "random";
    else if (k == "--rate" && parse_uint(v, 0, 100000000, n))
      o.rate = n;
    else if (k == "--write-hashes") { o.write_hashes = true; o.hashes_file = v; }
    else return usage(("bad option " + a).c_str());
  }
  population pop = make_population(o);
  if (o.write_hashes) {
    std::ofstream f;
    std::ostream* os = &std::cout;
    if (!o.hashes_file.empty()) {
      f.open(o.hashes_file);
      if (!f) return usage("cannot write the hash file");
      os = &f;
    }
    for (const auto& h : pop.hashes) *os << h.hex() << '\n';
    return os->good() ? 0 : 1;
  }
  if (o.port == 0) return usage("--port is required");
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(o.port));
  if (::inet_pton(AF_INET, o.host.c_str(), &to.sin_addr) != 1 || (ntohl(to.sin_addr.s_addr) >> 24) != 127)
    return usage("--host must be a loopback IPv4 address (127.x.y.z)");

  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<worker>> workers;
  for (unsigned t = 0; t < o.threads; ++t) {
    workers.push_back(std::make_unique<worker>(o, pop, t, stop));
    if (!workers.back()->open(to)) {
      std::perror("udp_loadgen: socket");
      return 1;
    }
  }
  // Warm-up is bounded too: 120 s at most.
  auto start = clock_type::now();
  auto until = start + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.duration));
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w, until] { w->run(until); });
  std::thread guard;
  std::atomic<bool> finished{false};
  if (o.warmup) {
    guard = std::thread([&] {
      auto deadline = clock_type::now() + std::chrono::seconds(120);
      while (!finished.load() && clock_type::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stop.store(true);
    });
  }
  for (auto& t : threads) t.join();
  finished.store(true);
  if (guard.joinable()) guard.join();
  double secs = std::chrono::duration<double>(clock_type::now() - start).count();
  stats s;
  for (auto& w : workers) {
    const stats& r = w->result();
    s.sent += r.sent; s.responses += r.responses; s.announces += r.announces; s.scrapes += r.scrapes;
    s.connects += r.connects; s.peers += r.peers; s.announces_without_peers += r.announces_without_peers;
    s.errors += r.errors; s.timeouts += r.timeouts; s.bad += r.bad; s.warm_done += r.warm_done;
  }
  std::printf(
      "BENCH mode=%s secs=%.2f sent=%llu responses=%llu rps=%.0f announces=%llu scrapes=%llu connects=%llu "
      "avg_peers=%.2f nopeers=%llu errors=%llu timeouts=%llu bad=%llu warm_done=%llu warm_total=%llu\n",
      o.warmup ? "warmup" : "steady", secs, static_cast<unsigned long long>(s.sent),
      static_cast<unsigned long long>(s.responses), secs > 0 ? static_cast<double>(s.responses) / secs : 0.0,
      static_cast<unsigned long long>(s.announces), static_cast<unsigned long long>(s.scrapes),
      static_cast<unsigned long long>(s.connects),
      s.announces ? static_cast<double>(s.peers) / static_cast<double>(s.announces) : 0.0,
      static_cast<unsigned long long>(s.announces_without_peers), static_cast<unsigned long long>(s.errors),
      static_cast<unsigned long long>(s.timeouts), static_cast<unsigned long long>(s.bad),
      static_cast<unsigned long long>(s.warm_done), static_cast<unsigned long long>(pop.slots.size()));
  return 0;
}
