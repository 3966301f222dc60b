// The UDP server in-process: a real actor system and swarm directory, the
// server on a free loopback port, and plain blocking POSIX client sockets
// with receive timeouts. Time for connection ids is injected (`advance`);
// everything else waits on a condition with a deadline, never a fixed sleep.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "tracker/client_id.hpp"
#include "runtime/directory.hpp"
#include "runtime/messages.hpp"
#include "tracker/swarm_config.hpp"
#include "net/udp/udp_server.hpp"
#include "protocol/connection_id.hpp"
#include "protocol/udp.hpp"
#include "announces.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;

/// A fixed key, so the test can compute what the server decides.
constexpr const char* test_key = "000102030405060708090a0b0c0d0e0f";

/// A blocking UDP socket connected to the server (so it only hears the server).
class client {
 public:
  /// `source_v4`: bind to this loopback address first (e.g. "127.0.0.2"), so
  /// the server sees another client address; IPv4 only.
  client(bool v6, std::uint16_t port, std::chrono::milliseconds timeout = 3000ms,
         const char* source_v4 = nullptr)
      : v6_(v6), source_(source_v4 ? source_v4 : (v6 ? "::1" : "127.0.0.1")) {
    fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    if (fd_ < 0) {
      throw std::runtime_error("socket() failed");
    }
    if (source_v4 != nullptr) {
      sockaddr_in src{};
      src.sin_family = AF_INET;
      if (v6 || ::inet_pton(AF_INET, source_v4, &src.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) != 0) {
        ::close(fd_);
        throw std::runtime_error("cannot bind the client to its source address");
      }
    }
    set_timeout(timeout);
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      a->sin6_addr = in6addr_loopback;
      len = sizeof(sockaddr_in6);
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof(sockaddr_in);
    }
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      throw std::runtime_error("connect() failed");
    }
    sockaddr_storage local{};
    socklen_t llen = sizeof local;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &llen);
    local_port_ = v6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&local)->sin6_port)
                     : ntohs(reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  }
  ~client() { ::close(fd_); }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  void set_timeout(std::chrono::milliseconds t) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(t.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  void send(const std::string& bytes) const {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }
  /// The next datagram, or nullopt after the receive timeout.
  std::optional<std::string> recv() const {
    char buf[4096];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0) {
      return std::nullopt;
    }
    return std::string(buf, static_cast<std::size_t>(n));
  }
  std::optional<std::string> exchange(const std::string& bytes) const {
    send(bytes);
    return recv();
  }
  bool v6() const { return v6_; }
  std::uint16_t local_port() const { return local_port_; }
  /// This socket's address as the server sees it.
  endpoint as_endpoint() const {
    endpoint e;
    ip_address::parse(source_, e.ip);
    e.port = local_port_;
    return e;
  }

 private:
  int fd_ = -1;
  bool v6_ = false;
  std::string source_;
  std::uint16_t local_port_ = 0;
};

info_hash hash_of(std::uint8_t b) {
  info_hash h;
  h.bytes.fill(b);
  return h;
}

/// Client `id` (every id byte `id`, key "0000ABCD") starts on `h`.
announce_request make_announce(const info_hash& h, std::uint8_t id, std::uint16_t port,
                               std::uint64_t left) {
  peer_id peer;
  peer.bytes.fill(id);
  announce_request r = test::announce_of(h, peer, port, left, announce_event::started);
  r.key = "0000ABCD";
  return r;
}

/// Compact peers as (address text, port).
std::set<std::pair<std::string, std::uint16_t>> decode_peers(std::string_view peers, bool v6) {
  std::set<std::pair<std::string, std::uint16_t>> out;
  const std::size_t size = udp_peer_size(v6);
  for (std::size_t o = 0; o + size <= peers.size(); o += size) {
    ip_address a;
    if (v6) {
      std::uint8_t raw[16];
      std::memcpy(raw, peers.data() + o, 16);
      a = ip_address::make_v6(raw);
    } else {
      std::uint8_t raw[4];
      std::memcpy(raw, peers.data() + o, 4);
      a = ip_address::make_v4(raw);
    }
    const auto* p = reinterpret_cast<const unsigned char*>(peers.data() + o + size - 2);
    out.emplace(a.to_string(), static_cast<std::uint16_t>((p[0] << 8) | p[1]));
  }
  return out;
}

/// Waits until `pred` holds or `limit` passes; returns the last value.
bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return pred();
    }
    std::this_thread::yield();
  }
  return true;
}

/// Occupies every CAF scheduler thread (the fixture runs two) until released,
/// so that nothing the server hands to CAF can run: requests stay in flight
/// for as long as a test needs, without timing assumptions.
class scheduler_blocker {
 public:
  explicit scheduler_blocker(caf::actor_system& sys, int threads = 2)
      : gate_(release_.get_future().share()) {
    for (int i = 0; i < threads; ++i) {
      blockers_.push_back(sys.spawn(
          [](std::shared_future<void> gate, std::atomic<int>* n) -> caf::behavior {
            return {[gate, n](caf::ok_atom) {
              ++*n;
              gate.wait();
            }};
          },
          gate_, &blocked_));
      caf::anon_send(blockers_.back(), caf::ok_atom::value);
    }
    EXPECT_TRUE(wait_for([&] { return blocked_.load() == threads; }));
  }
  ~scheduler_blocker() {
    release();
    for (auto& b : blockers_) {
      caf::anon_send_exit(b, caf::exit_reason::user_shutdown);
    }
  }
  void release() {
    if (!released_) {
      released_ = true;
      release_.set_value();
    }
  }

 private:
  std::promise<void> release_;
  std::shared_future<void> gate_;
  std::atomic<int> blocked_{0};
  bool released_ = false;
  std::vector<caf::actor> blockers_;
};

class udp_server_test : public ::testing::Test {
 protected:
  udp_server_test() {
    cfg_.set("scheduler.max-threads", 2);
    register_message_types(cfg_);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
    swarm_config sc;
    sc.rng_seed = 42;
    dir_ = std::make_unique<swarm_directory>(*sys_, sc);
  }

  ~udp_server_test() override {
    if (server_) {
      server_->stop();
      server_.reset();
    }
    dir_->stop_all();
    dir_.reset();
    sys_.reset();
  }

  /// A config for loopback on a free port with the test key and clock.
  static udp_config base_config() {
    udp_config c;
    c.port = 0;
    c.connection_id_key = test_key;
    return c;
  }

  /// The gateway the server gets of its own (the daemon shares one with HTTP).
  static gateway_config base_gateway() {
    gateway_config g;
    g.request_timeout = 3000ms;
    return g;
  }

  void start(const udp_config& c = base_config(), const gateway_config& g = base_gateway()) {
    server_ = std::make_unique<udp_server>(*sys_, *dir_, c, g, nullptr, [this] { return now(); });
    server_->start();
    ASSERT_NE(server_->port(), 0);
  }

  std::chrono::steady_clock::time_point now() const {
    return std::chrono::steady_clock::now() + std::chrono::seconds(offset_.load());
  }
  void advance(std::chrono::seconds d) { offset_ += d.count(); }

  std::uint16_t port() const { return server_->port(); }

  /// Connects `c` and returns its id.
  connection_id connect(const client& c) {
    std::string req;
    encode_udp_connect_request(req, transaction_id{0x11223344});
    const auto reply = c.exchange(req);
    EXPECT_TRUE(reply.has_value());
    udp_response r;
    if (!reply || parse_udp_response(*reply, c.v6(), r) != udp_error::ok) {
      ADD_FAILURE() << "no connect reply";
      return {};
    }
    EXPECT_EQ(r.action, udp_action::connect);
    EXPECT_EQ(r.transaction, transaction_id{0x11223344});
    return r.connection;
  }

  /// Sends an announce and returns the raw reply (nullopt on timeout).
  std::optional<std::string> announce_raw(const client& c, connection_id id,
                                          const announce_request& a, std::uint32_t tid = 77) {
    std::string req;
    encode_udp_announce_request(req, id, transaction_id{tid}, a);
    return c.exchange(req);
  }

  /// Announces and parses the reply, which must be an announce reply.
  udp_response announce(const client& c, connection_id id, const announce_request& a) {
    storage_.push_back(announce_raw(c, id, a).value_or(std::string()));
    udp_response r;
    EXPECT_EQ(parse_udp_response(storage_.back(), c.v6(), r), udp_error::ok);
    EXPECT_EQ(r.action, udp_action::announce) << r.message;
    EXPECT_EQ(r.transaction, transaction_id{77});
    return r;
  }

  udp_response scrape(const client& c, connection_id id, const std::vector<info_hash>& hashes) {
    std::string req;
    encode_udp_scrape_request(req, id, transaction_id{99}, hashes.data(), hashes.size());
    storage_.push_back(c.exchange(req).value_or(std::string()));
    udp_response r;
    EXPECT_EQ(parse_udp_response(storage_.back(), c.v6(), r), udp_error::ok);
    EXPECT_EQ(r.action, udp_action::scrape) << r.message;
    EXPECT_EQ(r.transaction, transaction_id{99});
    return r;
  }

  static std::string expected_error(std::uint32_t tid, udp_error e, std::size_t request_size) {
    std::string out;
    encode_udp_error_reply(out, transaction_id{tid}, e, request_size);
    return out;
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<swarm_directory> dir_;
  std::unique_ptr<udp_server> server_;
  std::atomic<std::int64_t> offset_{0};
  std::vector<std::string> storage_;  // keeps parsed replies' bytes alive
};

TEST(udp_config_test, validate_names_the_bad_field) {
  udp_config ok;
  EXPECT_EQ(ok.validate(), "");
  udp_config c = ok;
  c.workers = 0;
  EXPECT_NE(c.validate().find("udp.workers"), std::string::npos);
  c = ok;
  c.bind = "localhost";
  EXPECT_NE(c.validate().find("udp.bind"), std::string::npos);
  c.bind = "::1";
  EXPECT_EQ(c.validate(), "");
  c = ok;
  c.connection_id_key = "abc";
  EXPECT_NE(c.validate().find("udp.connection-id-key"), std::string::npos);
  c.connection_id_key = test_key;
  EXPECT_EQ(c.validate(), "");
}

TEST_F(udp_server_test, invalid_config_throws_at_construction) {
  udp_config c = base_config();
  c.workers = 0;
  EXPECT_THROW(udp_server(*sys_, *dir_, c, base_gateway()), std::invalid_argument);
  gateway_config g = base_gateway();
  g.max_in_flight = 0;
  EXPECT_THROW(udp_server(*sys_, *dir_, base_config(), g), std::invalid_argument);
}

TEST_F(udp_server_test, connect_returns_an_id_bound_to_the_source) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  connection_id_issuer ids = connection_id_issuer::from_config(test_key);
  EXPECT_TRUE(ids.valid(id, c.as_endpoint(), now()));
  // Counters move right after the send, so the client may be faster.
  EXPECT_TRUE(wait_for([&] { return server_->counters().connects == 1U; }));
}

TEST_F(udp_server_test, announce_returns_peers_without_the_requester) {
  start();
  const info_hash h = hash_of(1);
  client seeder(false, port());
  client leecher1(false, port());
  client leecher2(false, port());

  udp_response r = announce(seeder, connect(seeder), make_announce(h, 1, 6881, 0));
  EXPECT_EQ(r.interval, 1800);
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 0);
  EXPECT_TRUE(r.peers.empty());

  r = announce(leecher1, connect(leecher1), make_announce(h, 2, 6882, 100));
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_EQ(decode_peers(r.peers, false),
            (std::set<std::pair<std::string, std::uint16_t>>{{"127.0.0.1", 6881}}));

  r = announce(leecher2, connect(leecher2), make_announce(h, 3, 6883, 100));
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 2);
  EXPECT_EQ(r.peers.size(), 2 * udp_peer4_size);
  EXPECT_EQ(decode_peers(r.peers, false), (std::set<std::pair<std::string, std::uint16_t>>{
                                              {"127.0.0.1", 6881}, {"127.0.0.1", 6882}}));
  ASSERT_TRUE(wait_for([&] { return server_->counters().replied == 6U; }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.announces, 3U);
  EXPECT_EQ(k.connects, 3U);
  EXPECT_EQ(k.replied, 6U);
  EXPECT_EQ(k.received, 6U);
  EXPECT_EQ(k.dropped(), 0U);
}

TEST_F(udp_server_test, numwant_zero_gets_counts_but_no_peers) {
  start();
  const info_hash h = hash_of(2);
  client a(false, port());
  client b(false, port());
  announce(a, connect(a), make_announce(h, 1, 7001, 5));
  announce_request req = make_announce(h, 2, 7002, 5);
  req.numwant = 0;
  const udp_response r = announce(b, connect(b), req);
  EXPECT_EQ(r.stats.incomplete, 2);
  EXPECT_TRUE(r.peers.empty());
}

TEST_F(udp_server_test, announce_over_ipv6_gets_18_byte_peers_of_its_family) {
  start();
  if (!server_->has_ipv6()) {
    GTEST_SKIP() << "no IPv6 on this host";
  }
  const info_hash h = hash_of(3);
  client v4(false, port());
  client v6a(true, port());
  client v6b(true, port());
  announce(v4, connect(v4), make_announce(h, 1, 6001, 10));
  announce(v6a, connect(v6a), make_announce(h, 2, 6002, 10));
  udp_response r = announce(v6b, connect(v6b), make_announce(h, 3, 6003, 10));
  EXPECT_EQ(r.stats.incomplete, 3);
  ASSERT_EQ(r.peers.size(), udp_peer6_size);
  EXPECT_EQ(decode_peers(r.peers, true),
            (std::set<std::pair<std::string, std::uint16_t>>{{"::1", 6002}}));
  // The IPv4 client sees no IPv6 peers (6-byte replies only).
  r = announce(v4, connect(v4), make_announce(h, 1, 6001, 10));
  EXPECT_EQ(r.stats.incomplete, 3);
  EXPECT_TRUE(r.peers.empty());
}

TEST_F(udp_server_test, scrape_merges_known_and_unknown_in_request_order) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  const info_hash seeded = hash_of(10);
  const info_hash leeched = hash_of(11);
  const info_hash unknown = hash_of(12);
  announce(c, id, make_announce(seeded, 1, 6881, 0));
  announce(c, id, make_announce(leeched, 1, 6881, 500));

  udp_response r = scrape(c, id, {unknown});
  ASSERT_EQ(r.scrape.size(), 1U);
  EXPECT_EQ(r.scrape[0].complete, 0);
  EXPECT_EQ(r.scrape[0].incomplete, 0);
  EXPECT_EQ(r.scrape[0].downloaded, 0);

  r = scrape(c, id, {leeched, unknown, seeded, leeched});
  ASSERT_EQ(r.scrape.size(), 4U);
  EXPECT_EQ(r.scrape[0].complete, 0);
  EXPECT_EQ(r.scrape[0].incomplete, 1);
  EXPECT_EQ(r.scrape[1].complete, 0);
  EXPECT_EQ(r.scrape[1].incomplete, 0);
  EXPECT_EQ(r.scrape[2].complete, 1);
  EXPECT_EQ(r.scrape[2].incomplete, 0);
  EXPECT_EQ(r.scrape[3].complete, 0);
  EXPECT_EQ(r.scrape[3].incomplete, 1);
  // Scrapes must not create swarms.
  EXPECT_FALSE(dir_->find(unknown));
  EXPECT_TRUE(wait_for([&] { return server_->counters().scrapes == 2U; }));
}

TEST_F(udp_server_test, bad_action_and_port_zero_get_error_replies) {
  start();
  client c(false, port());
  const connection_id id = connect(c);

  std::string bad_action;
  encode_udp_connect_request(bad_action, transaction_id{5});
  // Overwrite the protocol id with our connection id and the action with 7.
  for (int i = 0; i < 8; ++i) {
    bad_action[static_cast<std::size_t>(i)] = static_cast<char>(id.value >> (56 - 8 * i));
  }
  bad_action[11] = 7;
  auto reply = c.exchange(bad_action);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, expected_error(5, udp_error::unknown_action, bad_action.size()));

  reply = announce_raw(c, id, make_announce(hash_of(4), 1, 0, 0), 6);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, expected_error(6, udp_error::port_zero, udp_announce_request_size));
  udp_response r;
  ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
  EXPECT_EQ(r.action, udp_action::error);
  EXPECT_FALSE(dir_->find(hash_of(4)));
  EXPECT_TRUE(wait_for([&] { return server_->counters().error_replies == 2U; }));
}

TEST_F(udp_server_test, expired_connection_id_is_refused_and_reconnect_works) {
  start();
  client c(false, port());
  connection_id id = connect(c);
  advance(std::chrono::seconds(connection_id_issuer::min_lifetime_seconds - 1));
  announce(c, id, make_announce(hash_of(5), 1, 6881, 1));  // still valid

  advance(std::chrono::seconds(connection_id_issuer::max_lifetime_seconds));
  const auto reply = announce_raw(c, id, make_announce(hash_of(5), 1, 6881, 1), 8);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, expected_error(8, udp_error::invalid_connection_id, udp_announce_request_size));

  id = connect(c);
  const udp_response r = announce(c, id, make_announce(hash_of(5), 1, 6881, 1));
  EXPECT_EQ(r.stats.incomplete, 1);
}

TEST_F(udp_server_test, id_presented_from_another_address_is_refused) {
  start();
  client owner(false, port());
  client thief(false, port(), 3000ms, "127.0.0.2");
  const connection_id id = connect(owner);
  const auto reply = announce_raw(thief, id, make_announce(hash_of(6), 9, 6999, 1), 9);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, expected_error(9, udp_error::invalid_connection_id, udp_announce_request_size));
  EXPECT_FALSE(dir_->find(hash_of(6)));  // nothing stored for the thief
  const udp_response r = announce(owner, id, make_announce(hash_of(6), 1, 6881, 1));
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_TRUE(r.peers.empty());
}

// Ids are bound to the address, not the port: libtorrent keeps one id per
// tracker for the whole process and announces from several sockets with it.
TEST_F(udp_server_test, id_is_accepted_from_another_port_of_the_same_address) {
  start();
  client first(false, port());
  client second(false, port());
  ASSERT_NE(first.local_port(), second.local_port());
  const connection_id id = connect(first);
  const udp_response r = announce(second, id, make_announce(hash_of(16), 2, 6882, 1));
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_TRUE(dir_->find(hash_of(16)));
}

TEST_F(udp_server_test, ip_field_is_ignored_unless_trusted) {
  start();
  client liar(false, port());
  client other(false, port());
  announce_request claim = make_announce(hash_of(7), 1, 7100, 1);
  ip_address fake;
  ASSERT_TRUE(ip_address::parse("10.1.2.3", fake));
  claim.claimed_ip = fake;
  announce(liar, connect(liar), claim);
  const udp_response r = announce(other, connect(other), make_announce(hash_of(7), 2, 7200, 1));
  EXPECT_EQ(decode_peers(r.peers, false),
            (std::set<std::pair<std::string, std::uint16_t>>{{"127.0.0.1", 7100}}));
}

TEST_F(udp_server_test, ip_field_is_honoured_when_trusted) {
  gateway_config g = base_gateway();
  g.trust_claimed_ip[static_cast<std::size_t>(transport::udp)] = true;
  start(base_config(), g);
  client proxy(false, port());
  client other(false, port());
  announce_request claim = make_announce(hash_of(8), 1, 7100, 1);
  ip_address named;
  ASSERT_TRUE(ip_address::parse("10.1.2.3", named));
  claim.claimed_ip = named;
  announce(proxy, connect(proxy), claim);
  const udp_response r = announce(other, connect(other), make_announce(hash_of(8), 2, 7200, 1));
  EXPECT_EQ(decode_peers(r.peers, false),
            (std::set<std::pair<std::string, std::uint16_t>>{{"10.1.2.3", 7100}}));
}

TEST_F(udp_server_test, hostile_packets_get_the_parser_disposition_and_no_crash) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  const connection_id_issuer ids = connection_id_issuer::from_config(test_key);
  const endpoint me = c.as_endpoint();

  std::vector<std::string> packets;
  // Every truncation of a valid announce, and of a scrape short of one hash
  // (a scrape cut after its first hash is a valid one-hash scrape).
  std::string full;
  encode_udp_announce_request(full, id, transaction_id{1}, make_announce(hash_of(9), 1, 6881, 1));
  for (std::size_t n = 0; n < full.size(); ++n) {
    packets.push_back(full.substr(0, n));
  }
  const info_hash two[2] = {hash_of(9), hash_of(10)};
  full.clear();
  encode_udp_scrape_request(full, id, transaction_id{2}, two, 2);
  for (std::size_t n = 0; n < udp_header_size + info_hash::size; ++n) {
    packets.push_back(full.substr(0, n));
  }
  // A connect without the magic and an error packet sent to us.
  std::string bad_magic;
  encode_udp_connect_request(bad_magic, transaction_id{3});
  bad_magic[0] = 1;
  packets.push_back(bad_magic);
  std::string error_packet;
  encode_udp_connect_request(error_packet, transaction_id{4});
  error_packet[11] = 3;
  packets.push_back(error_packet);
  // Random bytes, printed seed.
  const std::uint32_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 300; ++i) {
    std::string p(std::uniform_int_distribution<std::size_t>(0, 200)(rng), '\0');
    for (char& ch : p) {
      ch = static_cast<char>(rng());
    }
    packets.push_back(std::move(p));
  }

  // What the parser says for each, at the same (injected) time.
  std::uint64_t expect_drop = 0;
  std::uint64_t expect_error = 0;
  std::uint64_t expect_process = 0;
  std::vector<bool> answered;  // per packet: an error reply is due
  udp_request scratch;
  for (const auto& p : packets) {
    const auto r = accept_udp_request(p, gateway_config{}.parse_limits(udp_config{}.max_url_data), ids, me, now(), scratch);
    answered.push_back(r.disposition == udp_disposition::reply_error);
    switch (r.disposition) {
      case udp_disposition::drop:
        ++expect_drop;
        break;
      case udp_disposition::reply_error:
        ++expect_error;
        break;
      case udp_disposition::process:
        ++expect_process;
        break;
    }
  }
  EXPECT_EQ(expect_process, 0U);  // every truncation is short of a request
  EXPECT_GT(expect_drop, 0U);
  EXPECT_GT(expect_error, 0U);

  ASSERT_TRUE(wait_for([&] { return server_->counters().connects == 1U; }));
  const udp_counters before = server_->counters();
  // In windows, so that neither side's receive buffer overflows (loopback
  // drops what does not fit, and small datagrams cost ~1 KB of buffer each).
  constexpr std::size_t window = 16;
  for (std::size_t first = 0; first < packets.size(); first += window) {
    const std::size_t last = std::min(packets.size(), first + window);
    for (std::size_t i = first; i < last; ++i) {
      c.send(packets[i]);
    }
    ASSERT_TRUE(wait_for([&] {
      const udp_counters k = server_->counters();
      return k.received - before.received == last &&
             k.error_replies + k.dropped() - before.error_replies - before.dropped() == last;
    })) << "received "
        << server_->counters().received - before.received << " of " << last;
    for (std::size_t i = first; i < last; ++i) {
      if (!answered[i]) {
        continue;
      }
      // Replies come back in order (one worker, loopback) and are never
      // larger than what provoked them.
      const auto reply = c.recv();
      ASSERT_TRUE(reply.has_value()) << "packet " << i;
      EXPECT_LE(reply->size(), packets[i].size());
      udp_response r;
      ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
      EXPECT_EQ(r.action, udp_action::error);
    }
  }
  const udp_counters after = server_->counters();
  EXPECT_EQ(after.dropped_malformed - before.dropped_malformed, expect_drop);
  EXPECT_EQ(after.error_replies - before.error_replies, expect_error);
  EXPECT_EQ(after.announces + after.scrapes, 0U);

  // Still serving.
  EXPECT_NE(connect(c).value, 0U);
}

TEST_F(udp_server_test, several_workers_share_the_port) {
  udp_config cfg = base_config();
  cfg.workers = 2;
  start(cfg);
  std::vector<std::unique_ptr<client>> clients;
  clients.reserve(6);
  for (int i = 0; i < 6; ++i) {
    clients.push_back(std::make_unique<client>(false, port()));
  }
  int i = 0;
  for (auto& c : clients) {
    ++i;
    const udp_response r = announce(*c, connect(*c),
                                    make_announce(hash_of(20), static_cast<std::uint8_t>(i),
                                                  static_cast<std::uint16_t>(8000 + i), 1));
    EXPECT_EQ(r.stats.incomplete, i);
  }
}

TEST_F(udp_server_test, every_request_is_answered_or_counted_under_a_small_window) {
  gateway_config g = base_gateway();
  g.max_in_flight = 1;
  start(base_config(), g);
  client c(false, port());
  const connection_id id = connect(c);
  constexpr int burst = 100;
  for (int i = 0; i < burst; ++i) {
    std::string req;
    encode_udp_announce_request(req, id, transaction_id{static_cast<std::uint32_t>(i)},
                                make_announce(hash_of(static_cast<std::uint8_t>(i)), 1, 6881, 1));
    c.send(req);
  }
  ASSERT_TRUE(wait_for([&] {
    const udp_counters k = server_->counters();
    return k.announces + k.dropped_overload + k.dropped_send_failed == burst;
  }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.received, burst + 1U);
  int answered = 0;
  while (answered < static_cast<int>(k.announces) && c.recv()) {
    ++answered;
  }
  EXPECT_EQ(answered, static_cast<int>(k.announces));
}

TEST_F(udp_server_test, a_lone_request_is_answered_from_the_swarms_thread) {
  // One request at a time, as under clients' pace: each is its worker's
  // only unsettled request when its swarm answers, so the swarm's thread
  // sends the reply itself (no drain for the worker), and its latency is
  // recorded all the same.
  start();
  client c(false, port());
  const connection_id id = connect(c);
  constexpr int requests = 12;
  for (int i = 0; i < requests; ++i) {
    const udp_response r = announce(c, id,
                                    make_announce(hash_of(static_cast<std::uint8_t>(1 + i % 3)),
                                                  static_cast<std::uint8_t>(10 + i), 7000, 1));
    EXPECT_EQ(r.action, udp_action::announce);
  }
  // Counted right after the send, so possibly after the client read it.
  ASSERT_TRUE(wait_for(
      [&] { return server_->announce_latency().count() == static_cast<std::uint64_t>(requests); }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.announces, static_cast<std::uint64_t>(requests));
  EXPECT_EQ(k.direct_replies, static_cast<std::uint64_t>(requests));
  EXPECT_EQ(k.replied, requests + 1U);  // and the connect
  EXPECT_EQ(server_->announce_latency().count(), static_cast<std::uint64_t>(requests));
}

TEST_F(udp_server_test, replies_of_requests_in_flight_together_leave_through_the_worker) {
  // Twenty announces wait for the swarms together: every reply but the last
  // one settled finds another request unsettled and goes to the worker's
  // outbox (one sendmmsg per drain); at most the last leaves on its own.
  start();
  client c(false, port());
  const connection_id id = connect(c);
  constexpr int burst = 20;
  {
    scheduler_blocker blocked(*sys_);
    for (int i = 0; i < burst; ++i) {
      std::string req;
      encode_udp_announce_request(
          req, id, transaction_id{static_cast<std::uint32_t>(i)},
          make_announce(hash_of(static_cast<std::uint8_t>(40 + i)), 1, 6881, 1));
      c.send(req);
    }
    ASSERT_TRUE(wait_for([&] { return server_->counters().received == burst + 1U; }));
    ASSERT_TRUE(wait_for([&] { return server_->in_flight() == static_cast<std::size_t>(burst); }));
  }
  std::set<std::uint32_t> answered;
  while (answered.size() < static_cast<std::size_t>(burst)) {
    const auto reply = c.recv();
    ASSERT_TRUE(reply.has_value()) << answered.size() << " of " << burst << " answered";
    udp_response r;
    ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
    EXPECT_EQ(r.action, udp_action::announce);
    EXPECT_TRUE(answered.insert(r.transaction.value).second);
  }
  ASSERT_TRUE(wait_for(
      [&] { return server_->announce_latency().count() == static_cast<std::uint64_t>(burst); }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.announces, static_cast<std::uint64_t>(burst));
  EXPECT_LE(k.direct_replies, 1U);
  EXPECT_EQ(server_->announce_latency().count(), static_cast<std::uint64_t>(burst));
}

TEST_F(udp_server_test, stop_drains_requests_in_flight_and_stops_receiving) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  constexpr int burst = 50;
  for (int i = 0; i < burst; ++i) {
    std::string req;
    encode_udp_announce_request(
        req, id, transaction_id{static_cast<std::uint32_t>(i)},
        make_announce(hash_of(static_cast<std::uint8_t>(100 + i)), 1, 6881, 1));
    c.send(req);
  }
  // Stop while (some of) these are with the swarms.
  ASSERT_TRUE(wait_for([&] { return server_->counters().received > 1; }));
  const auto t0 = std::chrono::steady_clock::now();
  server_->stop(2000ms);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s);
  EXPECT_EQ(server_->in_flight(), 0U);

  const udp_counters k = server_->counters();
  // Every announce received was answered, failed, or counted as dropped.
  EXPECT_EQ(k.received - 1, k.announces + k.error_replies + k.dropped());
  EXPECT_EQ(k.dropped_shutdown, 0U);  // a 2 s deadline is ample for local swarms
  int answered = 0;
  while (answered < static_cast<int>(k.announces) && c.recv()) {
    ++answered;
  }
  EXPECT_EQ(answered, static_cast<int>(k.announces));

  // Nothing answers any more.
  c.set_timeout(300ms);
  std::string req;
  encode_udp_connect_request(req, transaction_id{1});
  EXPECT_FALSE(c.exchange(req).has_value());
  server_->stop();  // idempotent
}

TEST_F(udp_server_test, requests_beyond_the_in_flight_window_are_dropped_and_counted) {
  gateway_config g = base_gateway();
  g.max_in_flight = 2;
  start(base_config(), g);
  client c(false, port());
  const connection_id id = connect(c);
  scheduler_blocker blocker(*sys_);
  for (std::uint32_t i = 0; i < 5; ++i) {
    std::string req;
    encode_udp_announce_request(
        req, id, transaction_id{i},
        make_announce(hash_of(static_cast<std::uint8_t>(30 + i)), 1, 6881, 1));
    c.send(req);
  }
  // `received` moves before the datagram is handled: wait for the outcome.
  ASSERT_TRUE(wait_for([&] { return server_->counters().dropped_overload >= 3U; }));
  EXPECT_EQ(server_->counters().received, 6U);
  EXPECT_EQ(server_->counters().dropped_overload, 3U);
  EXPECT_EQ(server_->in_flight(), 2U);
  // Connects never wait for CAF, so they are served meanwhile.
  EXPECT_NE(connect(c).value, 0U);

  blocker.release();
  ASSERT_TRUE(wait_for([&] { return server_->counters().announces == 2U; }));
  std::set<std::uint32_t> answered;
  for (int i = 0; i < 2; ++i) {
    const auto reply = c.recv();
    ASSERT_TRUE(reply.has_value());
    udp_response r;
    ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
    EXPECT_EQ(r.action, udp_action::announce);
    answered.insert(r.transaction.value);
  }
  EXPECT_EQ(answered, (std::set<std::uint32_t>{0, 1}));  // the first two got in
  EXPECT_EQ(server_->in_flight(), 0U);
}

TEST_F(udp_server_test, stop_past_the_drain_deadline_accounts_for_every_request) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  auto blocker = std::make_unique<scheduler_blocker>(*sys_);
  for (std::uint32_t i = 0; i < 3; ++i) {
    std::string req;
    encode_udp_announce_request(
        req, id, transaction_id{i},
        make_announce(hash_of(static_cast<std::uint8_t>(40 + i)), 1, 6881, 1));
    c.send(req);
  }
  ASSERT_TRUE(wait_for([&] { return server_->in_flight() == 3U; }));
  // Nothing can answer before the drain deadline. stop() then needs the
  // scheduler to end its helper actors: free it once the deadline passed.
  // (Whether the swarms squeeze their replies in between the deadline and
  // the helpers' exit is a race, so the test checks the sum.)
  constexpr auto drain = 100ms;
  const auto deadline = std::chrono::steady_clock::now() + drain;
  std::thread releaser([&] {
    wait_for([&] { return std::chrono::steady_clock::now() > deadline; });
    blocker->release();
  });
  server_->stop(drain);
  releaser.join();
  EXPECT_GE(std::chrono::steady_clock::now(), deadline);
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.dropped_shutdown + k.announces, 3U);
  EXPECT_EQ(server_->in_flight(), 0U);
  for (std::uint64_t i = 0; i < k.announces; ++i) {
    EXPECT_TRUE(c.recv().has_value());
  }
  blocker.reset();
}

}  // namespace
}  // namespace sk

namespace sk {
namespace {

TEST_F(udp_server_test, a_swarm_that_does_not_answer_in_time_gets_timed_out_retry_later) {
  gateway_config g = base_gateway();
  g.request_timeout = 200ms;
  start(base_config(), g);
  client c(false, port());
  const connection_id id = connect(c);
  // Nothing in CAF can run: the swarm never sees the announce in time.
  scheduler_blocker blocker(*sys_);
  const auto reply = announce_raw(c, id, make_announce(hash_of(0x61), 1, 6881, 1), 4242);
  ASSERT_TRUE(reply.has_value());
  udp_response r;
  ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
  EXPECT_EQ(r.action, udp_action::error);
  EXPECT_EQ(r.transaction, transaction_id{4242});
  EXPECT_EQ(r.message, refusal_text(gateway_refusal::timeout));
  // Counted right after the send: the reply may arrive first.
  EXPECT_TRUE(wait_for([&] { return server_->counters().swarm_failures == 1U; }));
  EXPECT_EQ(server_->in_flight(), 0U);

  // When the swarm finally gets to it, its late answer is not sent: the
  // request was settled once, by the timeout.
  blocker.release();
  ASSERT_TRUE(wait_for([&] { return scrape(c, id, {hash_of(0x61)}).scrape.size() == 1; }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.announces, 0U);
  EXPECT_EQ(k.error_replies, 1U);
  c.set_timeout(200ms);
  EXPECT_FALSE(c.recv().has_value());  // no second reply to transaction 4242
}

TEST_F(udp_server_test, an_announce_to_a_swarm_that_just_ended_is_routed_again) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  // The swarm is in the directory but gone (as after its idle ending, in the
  // moment before it erased its entry): the ticket is dropped unprocessed,
  // which routes once more; the directory still hands out the dead actor,
  // so the second attempt answers "swarm busy" instead of hanging.
  caf::actor swarm = dir_->route(hash_of(0x62));
  caf::anon_send_exit(swarm, caf::exit_reason::kill);
  caf::scoped_actor waiter{*sys_};
  waiter->wait_for(swarm);
  const auto reply = announce_raw(c, id, make_announce(hash_of(0x62), 1, 6881, 1), 5);
  ASSERT_TRUE(reply.has_value());
  udp_response r;
  ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
  EXPECT_EQ(r.action, udp_action::error);
  EXPECT_EQ(r.message, refusal_text(gateway_refusal::swarm_unavailable));
  EXPECT_EQ(server_->counters().rerouted, 1U);
  // Counted right after the send: the reply may arrive first.
  EXPECT_TRUE(wait_for([&] { return server_->counters().swarm_failures == 1U; }));
  EXPECT_EQ(server_->in_flight(), 0U);
}

}  // namespace
}  // namespace sk

namespace sk {
namespace {

/// Stores a peer in `h`'s swarm directly (any address, no UDP client needed).
void seed_peer(caf::actor_system& sys, swarm_directory& dir, const info_hash& h, std::uint32_t n,
               const endpoint& ep) {
  swarm_announce a;
  a.request = make_announce(h, 0, ep.port, 10);
  a.request.id.bytes.fill(0);
  std::memcpy(a.request.id.bytes.data(), &n, sizeof n);
  a.peer = ep;
  // As the gateway sends it: a ticket to the routed swarm.
  const auto r = test::announce_and_wait(dir.route_swarm(h), std::move(a));
  ASSERT_TRUE(r) << sys.render(r.error());
}

/// Stores `n` IPv4 peers in `h`'s swarm: ids 1..n, addresses from
/// `first_address` and ports from `first_port` on, one step each.
void seed_v4_peers(caf::actor_system& sys, swarm_directory& dir, const info_hash& h,
                   std::uint32_t n, std::uint32_t first_address, std::uint16_t first_port) {
  for (std::uint32_t i = 0; i < n; ++i) {
    endpoint v4;
    v4.ip = ip_address::make_v4(first_address + i);
    v4.port = static_cast<std::uint16_t>(first_port + i);
    seed_peer(sys, dir, h, i + 1, v4);
  }
}

TEST_F(udp_server_test, a_client_gets_numwant_peers_of_its_own_family_not_a_split) {
  start();
  const info_hash h = hash_of(0x71);
  // 40 IPv4 and 40 IPv6 peers: a split of the default 50 would give an IPv4
  // client only about 25 usable peers; it must get all 40 IPv4 ones.
  seed_v4_peers(*sys_, *dir_, h, 40, 0x0a000001u, 20000);  // 10.0.0.x
  for (std::uint32_t i = 0; i < 40; ++i) {
    endpoint v6;
    std::uint8_t raw[16] = {0x20, 0x01, 0x0d, 0xb8};
    raw[15] = static_cast<std::uint8_t>(i + 1);
    v6.ip = ip_address::make_v6(raw);
    v6.port = static_cast<std::uint16_t>(30000 + i);
    seed_peer(*sys_, *dir_, h, 100 + i, v6);
  }
  client c(false, port());
  const udp_response r = announce(c, connect(c), make_announce(h, 1, 6001, 10));
  EXPECT_EQ(r.stats.incomplete, 81);
  EXPECT_EQ(r.peers.size(), 40 * udp_peer_size(false));
  for (const auto& [address, port_number] : decode_peers(r.peers, false)) {
    EXPECT_EQ(address.rfind("10.0.0.", 0), 0U) << address;
    EXPECT_GE(port_number, 20000);
  }
}

TEST_F(udp_server_test, replies_on_both_sides_of_the_inline_buffer_carry_every_peer_once) {
  // Up to 50 IPv4 peers (320 bytes with the header) the reply is encoded
  // in the reply object's own buffer, beyond it into a string of its own:
  // both must carry exactly the peers chosen, each once.
  swarm_config sc;
  sc.rng_seed = 42;
  sc.max_numwant = 80;
  dir_->stop_all();
  dir_ = std::make_unique<swarm_directory>(*sys_, sc);
  gateway_config g = base_gateway();
  g.max_numwant = 80;  // the parser's bound
  start(base_config(), g);
  const info_hash h = hash_of(0x73);
  seed_v4_peers(*sys_, *dir_, h, 70, 0x0a000101u, 21000);  // 10.0.1.x
  client c(false, port());
  const connection_id id = connect(c);
  for (const std::int32_t want : {49, 50, 51, 70}) {
    announce_request req = make_announce(h, 1, 6001, 10);
    req.numwant = want;
    const udp_response r = announce(c, id, req);
    EXPECT_EQ(r.stats.incomplete, 71) << want;
    ASSERT_EQ(r.peers.size(), static_cast<std::size_t>(want) * udp_peer4_size) << want;
    const auto peers = decode_peers(r.peers, false);
    EXPECT_EQ(peers.size(), static_cast<std::size_t>(want)) << "a peer twice at numwant " << want;
    for (const auto& [address, port_number] : peers) {
      EXPECT_EQ(address.rfind("10.0.1.", 0), 0U) << address;
      EXPECT_EQ(port_number - 21000, std::stoi(address.substr(7)) - 1) << address;
    }
  }
}

TEST_F(udp_server_test, a_banned_client_gets_an_error_packet_with_the_reason_never_larger) {
  swarm_config sc;
  sc.rng_seed = 42;
  std::string error;
  const std::string reason(120, 'r');  // longer than an announce's error packet may carry
  auto bans = client_ban_list::parse("XX=" + reason, &error);
  ASSERT_TRUE(bans) << error;
  dir_->stop_all();
  dir_ = std::make_unique<swarm_directory>(
      *sys_, sc, node_shared{std::make_shared<live_ban_list>(*bans), nullptr});
  start();
  client c(false, port());
  const connection_id id = connect(c);
  const auto reply = announce_raw(c, id, make_announce(hash_of(0x72), 'X', 6001, 10), 9);
  ASSERT_TRUE(reply.has_value());
  EXPECT_LE(reply->size(), 98U);  // never larger than the announce
  udp_response r;
  ASSERT_EQ(parse_udp_response(*reply, false, r), udp_error::ok);
  EXPECT_EQ(r.action, udp_action::error);
  EXPECT_EQ(r.transaction, transaction_id{9});
  EXPECT_EQ(r.message, reason.substr(0, 90));
  // Not stored: the next client sees an empty swarm.
  client other(false, port());
  const udp_response o = announce(other, connect(other), make_announce(hash_of(0x72), 2, 6002, 10));
  EXPECT_EQ(o.stats.incomplete, 1);
  EXPECT_TRUE(o.peers.empty());
  EXPECT_TRUE(wait_for([&] { return server_->counters().announces == 1U; }));
  const udp_counters k = server_->counters();
  EXPECT_EQ(k.error_replies, 1U);
  EXPECT_EQ(k.swarm_failures, 0U);  // a refusal is an answer, not a failure
}

}  // namespace
}  // namespace sk

namespace sk {
namespace {

TEST_F(udp_server_test, a_scrape_of_a_swarm_that_is_gone_counts_zeros_and_still_answers) {
  start();
  client c(false, port());
  const connection_id id = connect(c);
  announce(c, id, make_announce(hash_of(0x81), 1, 6001, 0));  // one seeder in 0x81
  // 0x82's swarm is in the directory but dead: its ticket is dropped unread.
  caf::actor gone = dir_->route(hash_of(0x82));
  caf::anon_send_exit(gone, caf::exit_reason::kill);
  caf::scoped_actor waiter{*sys_};
  waiter->wait_for(gone);
  const udp_response r = scrape(c, id, {hash_of(0x82), hash_of(0x81), hash_of(0x82)});
  ASSERT_EQ(r.scrape.size(), 3U);
  EXPECT_EQ(r.scrape[0].complete, 0);
  EXPECT_EQ(r.scrape[1].complete, 1);
  EXPECT_EQ(r.scrape[2].complete, 0);
  EXPECT_TRUE(wait_for([&] { return server_->counters().scrapes == 1U; }));
  EXPECT_EQ(server_->in_flight(), 0U);
}

}  // namespace
}  // namespace sk
