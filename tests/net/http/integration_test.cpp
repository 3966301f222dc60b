/// Integration tests: the real `swarmkeeper` binary on a free port, driven
/// over loopback sockets. Replies are decoded with protocol's bencode decoder.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "harness.hpp"
#include "protocol/announce.hpp"
#include "protocol/bencode.hpp"
#include "protocol/udp.hpp"
#include "udp_tracker_client.hpp"

namespace sk::test {
namespace {

// -- decoding helpers -----------------------------------------------------------

/// A decoded reply; owns the bytes the document points into.
struct decoded {
  std::string text;
  bdecode_document doc;
  bdecode_node root;
};

std::unique_ptr<decoded> decode(const std::string& body) {
  auto d = std::make_unique<decoded>();
  d->text = body;
  const auto r = bdecode(d->text, d->doc);
  if (!r) throw std::runtime_error("not bencode (" + r.ec.message() + "): " + body);
  d->root = d->doc.root();
  if (!d->root.is_dict()) throw std::runtime_error("not a dictionary: " + body);
  return d;
}

struct peer4 {
  std::string ip;
  int port;
  friend bool operator<(const peer4& a, const peer4& b) {
    return std::tie(a.ip, a.port) < std::tie(b.ip, b.port);
  }
  friend bool operator==(const peer4& a, const peer4& b) {
    return a.ip == b.ip && a.port == b.port;
  }
};

/// Splits compact peers (6 bytes per IPv4 peer, 18 per IPv6 peer).
std::vector<peer4> compact_peers(std::string_view raw, bool v6) {
  const std::size_t addr = v6 ? 16 : 4;
  const std::size_t width = addr + 2;
  if (raw.size() % width != 0) throw std::runtime_error("compact peers of odd length");
  std::vector<peer4> out;
  for (std::size_t i = 0; i < raw.size(); i += width) {
    char text[INET6_ADDRSTRLEN];
    inet_ntop(v6 ? AF_INET6 : AF_INET, raw.data() + i, text, sizeof text);
    const auto* p = reinterpret_cast<const unsigned char*>(raw.data() + i + addr);
    out.push_back({text, p[0] << 8 | p[1]});
  }
  return out;
}

std::string ip_text(std::string_view raw) {
  char text[INET6_ADDRSTRLEN];
  if (raw.size() == 4)
    inet_ntop(AF_INET, raw.data(), text, sizeof text);
  else if (raw.size() == 16)
    inet_ntop(AF_INET6, raw.data(), text, sizeof text);
  else
    return "<" + std::to_string(raw.size()) + " bytes>";
  return text;
}

bool contains(const std::vector<peer4>& xs, const peer4& x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

/// Expects an ordinary bencoded tracker reply (HTTP 200, text/plain).
std::unique_ptr<decoded> tracker_reply(const http_response& r) {
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("content-type"), "text/plain");
  return decode(r.body);
}

std::unique_ptr<decoded> announce(std::uint16_t port, const announce_params& p,
                                  const std::string& host = "127.0.0.1",
                                  const std::string& extra_headers = {}) {
  auto d = tracker_reply(http_get(port, announce_target(p), host, extra_headers));
  if (d->root.dict_find("failure reason"))
    throw std::runtime_error("announce failed: " +
                             std::string(d->root.dict_find_string("failure reason")));
  return d;
}

std::unique_ptr<decoded> scrape(std::uint16_t port, const std::vector<std::string>& hashes) {
  return tracker_reply(http_get(port, scrape_target(hashes)));
}

/// complete/incomplete/downloaded of one hash in a scrape reply.
std::array<std::int64_t, 3> scrape_counts(const decoded& d, const std::string& hash) {
  const auto files = d.root.dict_find("files");
  if (!files.is_dict()) throw std::runtime_error("scrape reply without files: " + d.text);
  const auto e = files.dict_find(hash);
  if (!e.is_dict()) throw std::runtime_error("scrape reply without the hash: " + d.text);
  return {e.dict_find_int("complete", -1), e.dict_find_int("incomplete", -1),
          e.dict_find_int("downloaded", -1)};
}

std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

// -- a daemon shared by the tests that need no special options -------------------

class Tracker : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    daemon_ = new daemon_process;
    daemon_->start({"--io-threads=2"});
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
  }

  static std::uint16_t port() { return daemon_->port(); }

  /// An id unique to this test (tests share the daemon).
  static std::string id(const std::string& tag) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    return id20(std::string(info->name()) + "/" + tag);
  }

  static daemon_process* daemon_;
};

daemon_process* Tracker::daemon_ = nullptr;

// -- announce -------------------------------------------------------------------

TEST_F(Tracker, HealthIsOk) {
  const auto r = http_get(port(), "/health");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
}

TEST_F(Tracker, CompactAnnounce) {
  const auto hash = id("hash");
  auto a = announce(port(), {hash, id("a"), 7001, 100});
  EXPECT_EQ(a->root.dict_find_int("interval"), 1800);
  EXPECT_EQ(a->root.dict_find_int("min interval"), 900);
  EXPECT_EQ(a->root.dict_find_int("complete"), 0);
  EXPECT_EQ(a->root.dict_find_int("incomplete"), 1);
  ASSERT_TRUE(a->root.dict_find("peers").is_string());
  EXPECT_TRUE(compact_peers(a->root.dict_find_string("peers"), false).empty())
      << "a requester never receives itself";
  EXPECT_EQ(ip_text(a->root.dict_find_string("external ip")), "127.0.0.1");

  auto b = announce(port(), {hash, id("b"), 7002, 0});
  EXPECT_EQ(b->root.dict_find_int("complete"), 1);
  EXPECT_EQ(b->root.dict_find_int("incomplete"), 1);
  EXPECT_EQ(compact_peers(b->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"127.0.0.1", 7001}}));

  auto again = announce(port(), {hash, id("a"), 7001, 50});
  EXPECT_EQ(compact_peers(again->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"127.0.0.1", 7002}}));
  EXPECT_EQ(again->root.dict_find_int("incomplete"), 1) << "a re-announce updates, not adds";
}

TEST_F(Tracker, NonCompactWithPeerId) {
  const auto hash = id("hash");
  announce(port(), {hash, id("a"), 7011, 100});
  announce_params p{hash, id("b"), 7012, 100};
  p.compact = 0;
  auto b = announce(port(), p);
  const auto peers = b->root.dict_find("peers");
  ASSERT_TRUE(peers.is_list()) << b->text;
  ASSERT_EQ(peers.size(), 1u);
  const auto entry = peers.list_at(0);
  EXPECT_EQ(entry.dict_find_string("ip"), "127.0.0.1");
  EXPECT_EQ(entry.dict_find_int("port"), 7011);
  EXPECT_EQ(entry.dict_find_string("peer id"), id("a"));
}

TEST_F(Tracker, NonCompactWithoutPeerId) {
  const auto hash = id("hash");
  announce(port(), {hash, id("a"), 7021, 100});
  announce_params p{hash, id("b"), 7022, 100};
  p.compact = 0;
  p.no_peer_id = 1;
  auto b = announce(port(), p);
  const auto peers = b->root.dict_find("peers");
  ASSERT_TRUE(peers.is_list()) << b->text;
  ASSERT_EQ(peers.size(), 1u);
  const auto entry = peers.list_at(0);
  EXPECT_EQ(entry.dict_find_string("ip"), "127.0.0.1");
  EXPECT_EQ(entry.dict_find_int("port"), 7021);
  EXPECT_FALSE(entry.dict_find("peer id")) << b->text;
}

TEST_F(Tracker, Ipv6PeersOverLoopback) {
  if (!have_ipv6_loopback()) GTEST_SKIP() << "no ::1 on this host";
  const auto hash = id("hash");
  auto a = announce(port(), {hash, id("a"), 7031, 100}, "::1");
  EXPECT_EQ(ip_text(a->root.dict_find_string("external ip")), "::1");
  auto b = announce(port(), {hash, id("b"), 7032, 100}, "::1");
  EXPECT_EQ(compact_peers(b->root.dict_find_string("peers6"), true),
            (std::vector<peer4>{{"::1", 7031}}));
  EXPECT_TRUE(compact_peers(b->root.dict_find_string("peers"), false).empty());
  // An IPv4 requester gets the IPv6 peers in peers6 too.
  auto c = announce(port(), {hash, id("c"), 7033, 100});
  auto v6 = compact_peers(c->root.dict_find_string("peers6"), true);
  std::sort(v6.begin(), v6.end());
  EXPECT_EQ(v6, (std::vector<peer4>{{"::1", 7031}, {"::1", 7032}}));
}

TEST_F(Tracker, NumwantIsHonoured) {
  const auto hash = id("hash");
  for (int i = 0; i < 5; ++i)
    announce(port(), {hash, id("p" + std::to_string(i)), static_cast<std::uint16_t>(7040 + i), 1});
  // One asker per request: re-announcing at once would be refused (min
  // interval), and that is tested elsewhere.
  announce_params p{hash, id("asker-2"), 7049, 1};
  p.numwant = 2;
  EXPECT_EQ(compact_peers(announce(port(), p)->root.dict_find_string("peers"), false).size(), 2u);
  p = {hash, id("asker-0"), 7048, 1};
  p.numwant = 0;
  EXPECT_EQ(compact_peers(announce(port(), p)->root.dict_find_string("peers"), false).size(), 0u);
  p = {hash, id("asker-100"), 7047, 1};
  p.numwant = 100;
  // Everyone but itself: the five peers and the two earlier askers.
  EXPECT_EQ(compact_peers(announce(port(), p)->root.dict_find_string("peers"), false).size(), 7u);
}

TEST_F(Tracker, StoppedRemovesThePeer) {
  const auto hash = id("hash");
  announce(port(), {hash, id("a"), 7051, 100});
  announce(port(), {hash, id("b"), 7052, 100});
  announce_params stop{hash, id("a"), 7051, 100};
  stop.event = "stopped";
  announce(port(), stop);
  auto b = announce(port(), {hash, id("b"), 7052, 100});
  EXPECT_TRUE(compact_peers(b->root.dict_find_string("peers"), false).empty()) << b->text;
  EXPECT_EQ(b->root.dict_find_int("incomplete"), 1);
  EXPECT_EQ(scrape_counts(*scrape(port(), {hash}), hash), (std::array<std::int64_t, 3>{0, 1, 0}));
}

TEST_F(Tracker, CompletedCountsOncePerPeer) {
  const auto hash = id("hash");
  announce(port(), {hash, id("a"), 7061, 100});
  announce_params done{hash, id("a"), 7061, 0};
  done.event = "completed";
  announce(port(), done);
  announce(port(), done);  // a repeated completed event
  EXPECT_EQ(scrape_counts(*scrape(port(), {hash}), hash), (std::array<std::int64_t, 3>{1, 0, 1}));
  announce_params other{hash, id("b"), 7062, 0};
  other.event = "completed";
  auto r = announce(port(), other);
  EXPECT_EQ(r->root.dict_find_int("complete"), 2);
  EXPECT_EQ(scrape_counts(*scrape(port(), {hash}), hash), (std::array<std::int64_t, 3>{2, 0, 2}));
}

// -- scrape -----------------------------------------------------------------------

TEST_F(Tracker, ScrapeSingleMultiAndUnknown) {
  const auto hash = id("hash");
  const auto other = id("other");
  const auto unknown = id("unknown");
  announce(port(), {hash, id("a"), 7071, 100});
  announce(port(), {hash, id("b"), 7072, 0});
  announce(port(), {other, id("c"), 7073, 0});

  EXPECT_EQ(scrape_counts(*scrape(port(), {hash}), hash), (std::array<std::int64_t, 3>{1, 1, 0}));

  auto multi = scrape(port(), {unknown, hash, other, hash});
  const auto files = multi->root.dict_find("files");
  ASSERT_TRUE(files.is_dict());
  EXPECT_EQ(files.size(), 3u) << "duplicates are merged";
  EXPECT_EQ(scrape_counts(*multi, hash), (std::array<std::int64_t, 3>{1, 1, 0}));
  EXPECT_EQ(scrape_counts(*multi, other), (std::array<std::int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(scrape_counts(*multi, unknown), (std::array<std::int64_t, 3>{0, 0, 0}));
  // The decoder accepts only sorted keys, so decoding at all proves the order.

  EXPECT_EQ(scrape_counts(*scrape(port(), {unknown}), unknown),
            (std::array<std::int64_t, 3>{0, 0, 0}));
}

TEST_F(Tracker, ScrapeWithoutHashIsAFailure) {
  auto r = tracker_reply(http_get(port(), "/scrape"));
  EXPECT_NE(r->root.dict_find_string("failure reason").find("full scrape"), std::string::npos)
      << r->text;
}

// -- every malformed request gets its own failure reason -------------------------

TEST_F(Tracker, EveryMalformedRequestHasItsFailureReason) {
  const std::string h = url_encode(id("hash"));
  const std::string p = url_encode(id("peer"));
  const std::string ok = "info_hash=" + h + "&peer_id=" + p + "&port=6881";
  struct malformed {
    std::string target;
    query_error expected;
  };
  std::string many_hashes = "/scrape?";
  for (int i = 0; i < 75; ++i)
    many_hashes += (i ? "&" : "") + std::string("info_hash=") + url_encode(id(std::to_string(i)));
  const std::vector<malformed> cases = {
      {"/announce?" + ok + "&pad=" + std::string(6200, 'x'), query_error::query_too_long},
      {"/announce?" + ok + "&left=%zz", query_error::bad_escape},
      {"/announce?peer_id=" + p + "&port=1", query_error::missing_info_hash},
      {"/announce?info_hash=abc&peer_id=" + p + "&port=1", query_error::bad_info_hash_length},
      {"/announce?info_hash=" + h + "&port=1", query_error::missing_peer_id},
      {"/announce?info_hash=" + h + "&peer_id=short&port=1", query_error::bad_peer_id_length},
      {"/announce?info_hash=" + h + "&peer_id=" + p, query_error::missing_port},
      {"/announce?info_hash=" + h + "&peer_id=" + p + "&port=70000", query_error::bad_port},
      {"/announce?info_hash=" + h + "&peer_id=" + p + "&port=abc", query_error::bad_port},
      {"/announce?info_hash=" + h + "&peer_id=" + p + "&port=0", query_error::port_zero},
      {"/announce?" + ok + "&uploaded=-1", query_error::bad_uploaded},
      {"/announce?" + ok + "&downloaded=x", query_error::bad_downloaded},
      {"/announce?" + ok + "&left=-5", query_error::bad_left},
      {"/announce?" + ok + "&numwant=lots", query_error::bad_numwant},
      {"/announce?" + ok + "&compact=2", query_error::bad_compact},
      {"/announce?" + ok + "&no_peer_id=yes", query_error::bad_no_peer_id},
      {"/announce?" + ok + "&event=exploded", query_error::unknown_event},
      {"/announce?" + ok + "&ip=not.an.address", query_error::bad_ip},
      {"/announce?" + ok + "&port=6882", query_error::duplicate_parameter},
      {many_hashes, query_error::too_many_scrape_hashes},
  };
  std::set<int> covered;
  for (const auto& c : cases) {
    SCOPED_TRACE(failure_text(c.expected));
    auto r = tracker_reply(http_get(port(), c.target));
    EXPECT_EQ(r->root.dict_find_string("failure reason"), failure_text(c.expected)) << r->text;
    EXPECT_FALSE(r->root.dict_find("retry in")) << "a malformed request will not improve";
    EXPECT_EQ(r->root.size(), 1u) << r->text;
    covered.insert(static_cast<int>(c.expected));
  }
  // Every error the parser can report is exercised above.
  for (int e = static_cast<int>(query_error::query_too_long);
       e <= static_cast<int>(query_error::too_many_scrape_hashes); ++e)
    EXPECT_TRUE(covered.count(e)) << "no case for: " << failure_text(static_cast<query_error>(e));
}

// -- HTTP-level errors -------------------------------------------------------------

TEST_F(Tracker, OverlongUrlIs414AndCloses) {
  for (std::size_t length : {9000u, 200000u}) {
    http_connection c{"127.0.0.1", port()};
    c.send("GET /announce?x=" + std::string(length, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 414) << length;
    EXPECT_EQ(r.header("connection"), "close");
    EXPECT_TRUE(c.wait_closed());
  }
}

TEST_F(Tracker, AClientPipeliningPastTheServersCloseIsNotReset) {
  // The server decides to close (414) while the client, not having read
  // that yet, goes on pipelining. Its later requests arrive after the
  // response and the FIN: they are read and dropped while the server
  // lingers, so the client's kernel never gets a reset (which may discard
  // responses it has not read) and its sends keep succeeding until it
  // closes.
  http_connection c{"127.0.0.1", port()};
  c.send("GET /announce?x=" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto r = c.read_response();
  EXPECT_EQ(r.status, 414);
  EXPECT_EQ(r.header("connection"), "close");
  ASSERT_TRUE(c.wait_closed()) << "the FIN follows the response";
  const std::string more = "GET /health HTTP/1.1\r\nHost: t\r\n\r\n";
  // A closed socket answers the first of these with a reset, and the
  // loopback delivers it before the next send.
  for (int i = 0; i < 10; ++i) {
    const int error = c.try_send(more);
    EXPECT_EQ(error, 0) << "send " << i << ": " << std::strerror(error);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(c.wait_closed(100ms)) << "EOF again, nothing answered";
  EXPECT_FALSE(c.was_reset());
}

TEST_F(Tracker, OversizedHeadersAre431AndClose) {
  {
    http_connection c{"127.0.0.1", port()};
    c.send("GET /health HTTP/1.1\r\nHost: t\r\nX-Big: " + std::string(9000, 'b') + "\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 431);
    EXPECT_TRUE(c.wait_closed());
  }
  {
    // Larger than the parser's whole header limit.
    http_connection c{"127.0.0.1", port()};
    std::string many = "GET /health HTTP/1.1\r\nHost: t\r\n";
    for (int i = 0; i < 2000; ++i) many += "X-H" + std::to_string(i) + ": value\r\n";
    c.send(many + "\r\n");
    EXPECT_EQ(c.read_response().status, 431);
    EXPECT_TRUE(c.wait_closed());
  }
}

TEST_F(Tracker, RequestBodyIsRejected) {
  http_connection c{"127.0.0.1", port()};
  c.send("GET /health HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(c.read_response().status, 413);
  EXPECT_TRUE(c.wait_closed());
}

TEST_F(Tracker, OnlyGetIsAllowed) {
  http_connection c{"127.0.0.1", port()};
  for (const char* method : {"POST", "HEAD", "DELETE"}) {
    c.send(std::string(method) + " /announce HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_EQ(r.header("allow"), "GET");
  }
  // The connection survives a 405 without a body...
  EXPECT_EQ(c.get("/health").status, 200);
  // ...and a method with a body gets 405 too, then a close.
  http_connection d{"127.0.0.1", port()};
  d.send("PUT /announce HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc");
  const auto r = d.read_response();
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "GET");
  EXPECT_TRUE(d.wait_closed());
}

TEST_F(Tracker, UnknownPathIs404) {
  for (const char* target : {"/", "/nope", "/announce/", "/scrape.php", "/healthz"}) {
    const auto r = http_get(port(), target);
    EXPECT_EQ(r.status, 404) << target;
  }
}

TEST_F(Tracker, MalformedHttpIs400AndCloses) {
  for (const char* junk : {"GARBAGE\r\n\r\n", "GET /health HTTP/1.1\r\nNoColonHere\r\n\r\n",
                           "GET /health HTTP/x.y\r\n\r\n", "GET  HTTP/1.1\r\n\r\n"}) {
    http_connection c{"127.0.0.1", port()};
    c.send(junk);
    const auto r = c.read_response();
    EXPECT_EQ(r.status, 400) << junk;
    EXPECT_EQ(r.header("connection"), "close");
    EXPECT_TRUE(c.wait_closed()) << junk;
  }
}

// -- connections ---------------------------------------------------------------

TEST_F(Tracker, KeepAliveServesManyRequests) {
  http_connection c{"127.0.0.1", port()};
  const auto hash = id("hash");
  for (int i = 0; i < 10; ++i) {
    const auto r = c.get(announce_target(
        {hash, id("p" + std::to_string(i)), static_cast<std::uint16_t>(7100 + i), 1}));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("connection"), "");
    EXPECT_EQ(decode(r.body)->root.dict_find_int("incomplete"), i + 1);
  }
  EXPECT_EQ(c.get("/health").body, "ok");
  EXPECT_EQ(c.get("/nope").status, 404);
  EXPECT_EQ(scrape_counts(*decode(c.get(scrape_target({hash})).body), hash)[1], 10);
}

TEST_F(Tracker, PipelinedResponsesComeInRequestOrder) {
  // More requests than the pipeline depth (16), mixing answers that are
  // immediate (health, 404) with answers from swarm actors (announce,
  // scrape), whose order is only kept by the session's slot ring.
  constexpr int n = 60;
  std::string batch;
  for (int i = 0; i < n; ++i) {
    std::string target;
    switch (i % 4) {
      case 0:
        target = "/health";
        break;
      case 1:
        target = scrape_target({id("s" + std::to_string(i))});
        break;
      case 2:
        target = announce_target({id("a" + std::to_string(i)), id("p"), 7200, 1});
        break;
      case 3:
        target = "/nope";
        break;
    }
    batch += "GET " + target + " HTTP/1.1\r\nHost: t\r\n\r\n";
  }
  http_connection c{"127.0.0.1", port()};
  c.send(batch);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    const auto r = c.read_response();
    switch (i % 4) {
      case 0:
        EXPECT_EQ(r.body, "ok");
        break;
      case 1: {
        const auto hash = id("s" + std::to_string(i));
        EXPECT_EQ(scrape_counts(*decode(r.body), hash), (std::array<std::int64_t, 3>{0, 0, 0}));
        break;
      }
      case 2:
        EXPECT_EQ(decode(r.body)->root.dict_find_int("incomplete"), 1) << r.body;
        break;
      case 3:
        EXPECT_EQ(r.status, 404);
        break;
    }
  }
  EXPECT_EQ(c.get("/health").status, 200) << "the connection stays usable";
}

TEST_F(Tracker, ConnectionCloseIsHonouredInAPipeline) {
  http_connection c{"127.0.0.1", port()};
  c.send(
      "GET /health HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
      "GET /health HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(c.read_response().header("connection"), "");
  const auto second = c.read_response();
  EXPECT_EQ(second.body, "ok");
  EXPECT_EQ(second.header("connection"), "close");
  EXPECT_TRUE(c.wait_closed()) << "nothing after the response that closed";
}

TEST_F(Tracker, Http10ClosesUnlessKeepAliveAsked) {
  {
    http_connection c{"127.0.0.1", port()};
    c.send("GET /health HTTP/1.0\r\n\r\n");
    EXPECT_EQ(c.read_response().body, "ok");
    EXPECT_TRUE(c.wait_closed());
  }
  {
    http_connection c{"127.0.0.1", port()};
    c.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    const auto r = c.read_response();
    EXPECT_EQ(r.header("connection"), "keep-alive");
    c.send("GET /health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    EXPECT_EQ(c.read_response().body, "ok");
  }
}

TEST_F(Tracker, ForwardedForIsIgnoredFromUntrustedPeers) {
  const auto hash = id("hash");
  auto a = announce(port(), {hash, id("a"), 7301, 1}, "127.0.0.1",
                    "X-Forwarded-For: 10.1.2.3\r\nX-Real-IP: 10.4.5.6\r\n");
  EXPECT_EQ(ip_text(a->root.dict_find_string("external ip")), "127.0.0.1");
  auto b = announce(port(), {hash, id("b"), 7302, 1});
  EXPECT_EQ(compact_peers(b->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"127.0.0.1", 7301}}));
}

TEST_F(Tracker, IpParameterIsIgnoredByDefault) {
  const auto hash = id("hash");
  announce_params a{hash, id("a"), 7311, 1};
  a.ip = "10.9.9.9";
  announce(port(), a);
  auto b = announce(port(), {hash, id("b"), 7312, 1});
  EXPECT_EQ(compact_peers(b->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"127.0.0.1", 7311}}));
}

TEST_F(Tracker, NothingIsLoggedPerRequestAtInfo) {
  // /health may answer a moment before main() logs its start-up line: wait
  // for that line, so only per-request lines could add to the count.
  const auto started = std::chrono::steady_clock::now();
  while (daemon_->stderr_text().find("serving HTTP on") == std::string::npos &&
         std::chrono::steady_clock::now() - started < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // poll interval
  }
  ASSERT_NE(daemon_->stderr_text().find("serving HTTP on"), std::string::npos);
  const auto before = count_lines(daemon_->stderr_text());
  for (int i = 0; i < 20; ++i) {
    announce(port(), {id("hash"), id("p" + std::to_string(i)), 7400, 1});
    http_get(port(), "/nope");
    http_get(port(), "/announce?info_hash=x");
  }
  EXPECT_EQ(count_lines(daemon_->stderr_text()), before) << daemon_->stderr_text();
}

// -- daemons with special options --------------------------------------------------

TEST(TrackerOptions, ForwardedForIsHonouredFromATrustedProxy) {
  daemon_process d;
  // "probe" re-announces at once many times: only warn, never refuse.
  d.start({"--http.trusted-proxies=127.0.0.1,::1", "--clients.refuse-after-early=0"});
  const auto hash = id20("trusted-hash");
  auto ext = [&](const std::string& headers) {
    return ip_text(announce(d.port(), {hash, id20("probe"), 7501, 1}, "127.0.0.1", headers)
                       ->root.dict_find_string("external ip"));
  };
  EXPECT_EQ(ext("X-Forwarded-For: 10.1.2.3\r\n"), "10.1.2.3");
  // The rightmost untrusted hop is the client: a client can prepend anything.
  EXPECT_EQ(ext("X-Forwarded-For: 6.6.6.6, 10.1.2.3\r\n"), "10.1.2.3");
  // Trusted hops are skipped.
  EXPECT_EQ(ext("X-Forwarded-For: 10.1.2.3, 127.0.0.1\r\n"), "10.1.2.3");
  // Several header fields form one list.
  EXPECT_EQ(ext("X-Forwarded-For: 6.6.6.6\r\nX-Forwarded-For: 10.7.7.7\r\n"), "10.7.7.7");
  EXPECT_EQ(ext("X-Real-IP: 10.4.5.6\r\n"), "10.4.5.6");
  EXPECT_EQ(ext("X-Forwarded-For: 2001:db8::1\r\n"), "2001:db8::1");
  EXPECT_EQ(ext("X-Forwarded-For: garbage\r\n"), "127.0.0.1");
  EXPECT_EQ(ext(""), "127.0.0.1");

  // Other peers are given the forwarded address.
  announce(d.port(), {hash, id20("a"), 7502, 1}, "127.0.0.1", "X-Forwarded-For: 10.1.2.3\r\n");
  auto b = announce(d.port(), {hash, id20("b"), 7503, 1});
  auto peers = compact_peers(b->root.dict_find_string("peers"), false);
  EXPECT_TRUE(contains(peers, {"10.1.2.3", 7502})) << b->text;
}

TEST(TrackerOptions, IpParameterIsHonouredWhenTrusted) {
  daemon_process d;
  d.start({"--http.trust-ip-param"});
  const auto hash = id20("ip-param-hash");
  announce_params a{hash, id20("a"), 7511, 1};
  a.ip = "10.9.9.9";
  announce(d.port(), a);
  auto b = announce(d.port(), {hash, id20("b"), 7512, 1});
  EXPECT_EQ(compact_peers(b->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"10.9.9.9", 7511}}));
}

TEST(TrackerOptions, SilentPeersExpire) {
  daemon_process d;
  // "chatty" polls every 100 ms: only warn, never refuse.
  d.start({"--tracker.interval=1s", "--tracker.min-interval=1s", "--tracker.peer-timeout=2s",
           "--tracker.sweep-period=1s", "--clients.refuse-after-early=0"});
  const auto hash = id20("expiry-hash");
  announce(d.port(), {hash, id20("silent"), 7521, 1});
  auto first = announce(d.port(), {hash, id20("chatty"), 7522, 1});
  ASSERT_EQ(compact_peers(first->root.dict_find_string("peers"), false),
            (std::vector<peer4>{{"127.0.0.1", 7521}}));
  EXPECT_EQ(first->root.dict_find_int("interval"), 1);
  const auto deadline = clock::now() + 20s;
  bool expired = false;
  while (!expired && clock::now() < deadline) {
    auto r = announce(d.port(), {hash, id20("chatty"), 7522, 1});
    expired = compact_peers(r->root.dict_find_string("peers"), false).empty();
    if (!expired) std::this_thread::sleep_for(100ms);  // poll interval
  }
  EXPECT_TRUE(expired) << "the silent peer never expired";
  EXPECT_EQ(scrape_counts(*tracker_reply(http_get(d.port(), scrape_target({hash}))), hash),
            (std::array<std::int64_t, 3>{0, 1, 0}));
}

TEST(TrackerOptions, SigtermDrainsAndExitsZero) {
  daemon_process d;
  d.start();
  http_connection idle{"127.0.0.1", d.port()};
  EXPECT_EQ(idle.get("/health").status, 200);
  http_connection busy{"127.0.0.1", d.port()};
  std::string batch;
  for (int i = 0; i < 16; ++i)
    batch += "GET " + announce_target({id20("drain" + std::to_string(i)), id20("p"), 7600, 1}) +
             " HTTP/1.1\r\nHost: t\r\n\r\n";
  busy.send(batch);
  EXPECT_EQ(busy.read_response().status, 200);
  d.signal(SIGTERM);
  // Responses that were owed arrive complete and in order; then the
  // connection closes.
  int received = 1;
  try {
    for (; received < 16; ++received) {
      const auto r = busy.read_response();
      EXPECT_EQ(r.status, 200);
      EXPECT_EQ(decode(r.body)->root.dict_find_int("incomplete"), 1);
    }
  } catch (const std::runtime_error&) {
    // closed after a prefix of the responses
  }
  EXPECT_TRUE(busy.wait_closed());
  EXPECT_TRUE(idle.wait_closed()) << "idle keep-alive connections are closed at once";
  const auto status = d.wait_exit(15s);
  ASSERT_TRUE(status.has_value()) << "daemon did not exit";
  EXPECT_EQ(*status, 0) << d.stderr_text();
  EXPECT_NE(d.stderr_text().find("draining"), std::string::npos) << d.stderr_text();
  EXPECT_NE(d.stderr_text().find("stopped"), std::string::npos) << d.stderr_text();
}

TEST(TrackerOptions, SigintAlsoStopsCleanly) {
  daemon_process d;
  d.start();
  d.signal(SIGINT);
  const auto status = d.wait_exit(15s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(*status, 0) << d.stderr_text();
}

TEST(TrackerOptions, BindToOneAddress) {
  daemon_process d;
  d.start({"--bind=127.0.0.1"});
  EXPECT_EQ(http_get(d.port(), "/health").status, 200);
  if (have_ipv6_loopback()) {
    EXPECT_THROW(http_get(d.port(), "/health", "::1"), std::runtime_error)
        << "only the named address is served";
  }
}

// -- configuration ------------------------------------------------------------------

struct bad_config_case {
  std::vector<std::string> args;
  std::string message;
};

TEST(TrackerConfig, InvalidValuesFailAtStartWithAClearMessage) {
  char path[] = "/tmp/sk-net-config-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string ini = "[http]\nprot=1\n[tracker]\ninterval=1800\n";
  ASSERT_EQ(::write(fd, ini.data(), ini.size()), static_cast<ssize_t>(ini.size()));
  ::close(fd);
  const std::vector<bad_config_case> cases = {
      {{"--http-port=70000"}, "http.port must be between 1 and 65535 (got 70000)"},
      {{"--http.port=0"}, "http.port must be between 1 and 65535 (got 0)"},
      {{"--bind=300.1.1.1"}, "http.bind: '300.1.1.1' is not an IPv4 or IPv6 address"},
      {{"--tracker.interval=0s"}, "tracker.interval must be between"},
      {{"--tracker.interval=1800"}, "expected a duration"},
      {{"--tracker.min-interval=2h"}, "must not exceed the announce interval"},
      {{"--http.trusted-proxies=10.0.0.0/99"}, "'10.0.0.0/99' is not an address or CIDR block"},
      {{"--log-level=chatty"}, "log.level: 'chatty' is not one of"},
      {{"--io-threads=-1"}, "http.io-threads must be between 0 and 256"},
      {{"--no-such-option=1"}, "unknown option '--no-such-option=1'"},
      {{"stray"}, "unexpected argument 'stray'"},
      {{"--config-file=/nonexistent/swarmkeeper.ini"}, "cannot open config file"},
      {{std::string("--config-file=") + path}, "unknown option 'prot' in [http]"},
      {{std::string("--config-file=") + path}, "tracker.interval: expected a duration"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0]);
    daemon_process d;
    const int status = d.run_to_exit(c.args);
    EXPECT_NE(status, 0);
    EXPECT_NE(d.stderr_text().find(c.message), std::string::npos) << d.stderr_text();
  }
  ::unlink(path);
}

TEST(TrackerConfig, PortInUseFailsToStart) {
  // Occupy a port on 127.0.0.1 and ask the daemon for exactly that.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const auto port = std::to_string(ntohs(a.sin_port));
  daemon_process d;
  EXPECT_EQ(d.run_to_exit({"--bind=127.0.0.1", "--http-port=" + port}), 1);
  EXPECT_NE(d.stderr_text().find("cannot listen on 127.0.0.1:" + port), std::string::npos)
      << d.stderr_text();
  // With the default binds too: serving IPv6 alone would hide the problem.
  daemon_process both;
  EXPECT_EQ(both.run_to_exit({"--http-port=" + port}), 1);
  EXPECT_NE(both.stderr_text().find("cannot listen on 0.0.0.0:" + port), std::string::npos)
      << both.stderr_text();
  ::close(fd);
}

TEST(TrackerConfig, DumpConfigPrintsTheEffectiveConfigAndLoadsBack) {
  daemon_process first;
  ASSERT_EQ(first.run_to_exit({"--dump-config", "--http-port=7777", "--tracker.interval=20min",
                               "--http.trusted-proxies=10.0.0.0/8"}),
            0)
      << first.stderr_text();
  const auto dump = first.stdout_text();
  EXPECT_NE(dump.find("[http]\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nport=7777\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\ninterval=20min\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\ntrusted-proxies=[\"10.0.0.0/8\"]\n"), std::string::npos) << dump;
  // Of CAF's options only the one the schema declares.
  EXPECT_NE(dump.find("\n[scheduler]\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nmax-threads=0\n"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("max-throughput"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("[middleman]"), std::string::npos) << dump;

  char path[] = "/tmp/sk-net-dump-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, dump.data(), dump.size()), static_cast<ssize_t>(dump.size()));
  ::close(fd);
  daemon_process second;
  ASSERT_EQ(second.run_to_exit({std::string("--config-file=") + path, "--dump-config"}), 0)
      << second.stderr_text();
  EXPECT_EQ(second.stdout_text(), dump);
  ::unlink(path);
}

TEST(TrackerConfig, EmbeddedDefaultsServeHttpOnPort6969) {
  daemon_process d;
  ASSERT_EQ(d.run_to_exit({"--dump-config"}), 0);
  const auto dump = d.stdout_text();
  EXPECT_NE(dump.find("\nport=6969\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nbind=\"\"\n"), std::string::npos) << dump;
}

TEST(TrackerConfig, ExampleConfigInDeployLoads) {
  daemon_process d;
  EXPECT_EQ(d.run_to_exit(
                {std::string("--config-file=") + SWARMKEEPER_SOURCE_DIR + "/deploy/swarmkeeper.ini",
                 "--dump-config"}),
            0)
      << d.stderr_text();
}

TEST(TrackerConfig, CommandLineBeatsConfigFile) {
  char path[] = "/tmp/sk-net-prec-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string ini = "[http]\nport=1111\nmax-pipeline=4\n";
  ASSERT_EQ(::write(fd, ini.data(), ini.size()), static_cast<ssize_t>(ini.size()));
  ::close(fd);
  daemon_process d;
  ASSERT_EQ(
      d.run_to_exit({std::string("--config-file=") + path, "--http-port=2222", "--dump-config"}),
      0);
  const auto dump = d.stdout_text();
  EXPECT_NE(dump.find("\nport=2222\n"), std::string::npos) << dump;
  EXPECT_NE(dump.find("\nmax-pipeline=4\n"), std::string::npos) << dump;
  ::unlink(path);
}

// -- UDP (BEP 15) through the daemon ----------------------------------------------

TEST(TrackerUdp, OneSwarmWhateverTheTransport) {
  daemon_process d;
  d.start();
  const auto hash = id20("udp-one-swarm");
  // A seeder over HTTP, a leecher over UDP: each sees the other.
  announce(d.port(), {hash, id20("http-peer"), 7101, 0});
  udp_tracker_client c{d.udp_port()};
  c.connect();
  std::string bytes;
  const auto r = c.announce(hash, id20("udp-peer"), 7102, 500, bytes);
  ASSERT_EQ(r.action, udp_action::announce) << r.message;
  EXPECT_EQ(r.stats.complete, 1);
  EXPECT_EQ(r.stats.incomplete, 1);
  EXPECT_GT(r.interval, 0);
  const auto udp_peers = compact_peers(r.peers, false);
  EXPECT_TRUE(contains(udp_peers, {"127.0.0.1", 7101})) << "UDP announce misses the HTTP peer";
  EXPECT_FALSE(contains(udp_peers, {"127.0.0.1", 7102})) << "a peer is not its own peer";

  announce_params later{hash, id20("http-peer-2"), 7103, 10};
  later.compact = 1;
  auto http = announce(d.port(), later);
  const auto peers = compact_peers(http->root.dict_find_string("peers"), false);
  EXPECT_TRUE(contains(peers, {"127.0.0.1", 7102})) << "HTTP announce misses the UDP peer";
  EXPECT_NE(d.stderr_text().find("udp: listening on 0.0.0.0:" + std::to_string(d.udp_port())),
            std::string::npos)
      << d.stderr_text();
}

TEST(TrackerUdp, UdpScrapeMatchesHttpScrape) {
  daemon_process d;
  d.start();
  const auto hash = id20("udp-scrape");
  const auto other = id20("udp-scrape-other");
  const auto unknown = id20("udp-scrape-unknown");
  announce_params done{hash, id20("finisher"), 7201, 0};
  done.event = "completed";
  announce(d.port(), done);
  announce(d.port(), {hash, id20("leech-http"), 7202, 100});
  announce(d.port(), {other, id20("seed-other"), 7203, 0});
  udp_tracker_client c{d.udp_port()};
  c.connect();
  std::string bytes;
  ASSERT_EQ(c.announce(hash, id20("leech-udp"), 7204, 100, bytes).action, udp_action::announce);

  const auto r = c.scrape({hash, unknown, other, hash}, bytes);
  ASSERT_EQ(r.action, udp_action::scrape) << r.message;
  ASSERT_EQ(r.scrape.size(), 4u) << "one entry per requested hash, duplicates included";
  auto http = scrape(d.port(), {hash, unknown, other});
  const std::vector<std::string> order{hash, unknown, other, hash};
  for (std::size_t i = 0; i < order.size(); ++i) {
    SCOPED_TRACE(i);
    const auto want = scrape_counts(*http, order[i]);
    EXPECT_EQ(r.scrape[i].complete, want[0]);
    EXPECT_EQ(r.scrape[i].downloaded, want[2]);
    EXPECT_EQ(r.scrape[i].incomplete, want[1]);
  }
  EXPECT_EQ(scrape_counts(*http, hash), (std::array<std::int64_t, 3>{1, 2, 1}));
}

// -- real clients' habits with the default configuration ---------------------------

/// HTTP announce reply without `warning message` or `failure reason`.
void expect_plain_reply(std::uint16_t port, const announce_params& p) {
  const auto d = tracker_reply(http_get(port, announce_target(p)));
  EXPECT_FALSE(d->root.dict_find("failure reason")) << d->text;
  EXPECT_FALSE(d->root.dict_find("warning message")) << d->text;
  EXPECT_TRUE(d->root.dict_find("peers")) << d->text;
}

TEST(TrackerDefaults, ThreeAnnouncesOfOnePeerWithinASecondGetThreeNormalReplies) {
  // libtorrent announces once per listen socket and per tracker URL (a
  // torrent listing http:// and udp://), and users press "update tracker".
  daemon_process d;
  d.start();
  const auto hash = id20("defaults-repeats");
  announce(d.port(), {hash, id20("seed"), 7300, 0});
  announce_params p{hash, id20("client"), 7301, 500};
  p.event = "started";
  for (int i = 0; i < 3; ++i) expect_plain_reply(d.port(), p);
  p.event.clear();
  for (int i = 0; i < 3; ++i) expect_plain_reply(d.port(), p);

  udp_tracker_client c{d.udp_port()};
  c.connect();
  std::string bytes;
  for (int i = 0; i < 3; ++i) {
    const auto r = c.announce(hash, id20("udp-client"), 7302, 500, bytes, announce_event::none);
    ASSERT_EQ(r.action, udp_action::announce) << r.message;
    EXPECT_EQ(r.stats.complete, 1);
  }
  // The HTTP client again, over UDP now: the same peer, same address.
  for (int i = 0; i < 3; ++i) {
    const auto r = c.announce(hash, id20("client"), 7301, 500, bytes, announce_event::none);
    ASSERT_EQ(r.action, udp_action::announce) << r.message;
  }
  expect_plain_reply(d.port(), p);
  const auto s = scrape(d.port(), {hash});
  EXPECT_EQ(scrape_counts(*s, hash), (std::array<std::int64_t, 3>{1, 2, 0}));
}

TEST(TrackerDefaults, PausedPeersArePartialSeedsInScrape) {
  // BEP 21: event=paused (UDP: event 4) marks a partial seed; scrape's
  // `downloaders` leaves them out of `incomplete`.
  daemon_process d;
  d.start();
  const auto hash = id20("defaults-paused");
  announce(d.port(), {hash, id20("seed"), 7400, 0});
  announce(d.port(), {hash, id20("leech"), 7401, 900});
  announce_params partial{hash, id20("partial-http"), 7402, 300};
  partial.event = "paused";
  expect_plain_reply(d.port(), partial);
  udp_tracker_client c{d.udp_port()};
  c.connect();
  std::string bytes;
  const auto r = c.announce(hash, id20("partial-udp"), 7403, 300, bytes, announce_event::paused);
  ASSERT_EQ(r.action, udp_action::announce) << r.message;
  EXPECT_EQ(r.stats.incomplete, 3);  // UDP scrape has no field for them

  const auto s = scrape(d.port(), {hash});
  EXPECT_EQ(scrape_counts(*s, hash), (std::array<std::int64_t, 3>{1, 3, 0}));
  const auto e = s->root.dict_find("files").dict_find(hash);
  EXPECT_EQ(e.dict_find_int("downloaders", -1), 1) << s->text;
}

}  // namespace
}  // namespace sk::test
