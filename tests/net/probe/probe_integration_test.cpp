// Reachability probing through the real daemon: peers announce over HTTP
// from loopback; one has a real listener answering the BitTorrent handshake
// on its announced port, some have closed ports, one answers garbage. What
// the probes decided shows in the replies: under the default (adaptive)
// policy an unreachable requester is never given another unreachable peer,
// and the peer answering garbage is given to nobody. The swarm logs each
// applied probe result at debug level, which is how the test knows the
// probes are done (waiting on that line with a deadline, never sleeping).

#include <arpa/inet.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "harness.hpp"
#include "protocol/bencode.hpp"
#include "test_listener.hpp"

namespace sk::test {
namespace {

std::string hex(const std::string& raw) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 0xf]);
  }
  return out;
}

/// Ports of the compact IPv4 peers of an announce reply (all on 127.0.0.1).
std::set<int> peer_ports(const http_response& r) {
  EXPECT_EQ(r.status, 200) << r.body;
  std::string text = r.body;
  bdecode_document doc;
  const auto res = bdecode(text, doc);
  if (!res) throw std::runtime_error("not bencode: " + r.body);
  const auto root = doc.root();
  if (root.dict_find("failure reason")) throw std::runtime_error("failure: " + r.body);
  const auto peers = root.dict_find_string("peers");
  std::set<int> out;
  for (std::size_t i = 0; i + 6 <= peers.size(); i += 6) {
    const auto* p = reinterpret_cast<const unsigned char*>(peers.data() + i);
    EXPECT_EQ(p[0], 127);
    out.insert(p[4] << 8 | p[5]);
  }
  return out;
}

bool wait_for_log(const daemon_process& d, const std::vector<std::string>& needles,
                  std::chrono::milliseconds limit) {
  const auto deadline = clock::now() + limit;
  for (;;) {
    const auto log = d.stderr_text();
    bool all = true;
    for (const auto& n : needles) all = all && log.find(n) != std::string::npos;
    if (all) return true;
    if (clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
}

TEST(TrackerProbe, UnreachablePeersAreNeverPairedAndBogusOnesNeverHandedOut) {
  const std::string hash = id20("probe-integration");
  const auto h = info_hash::from_bytes(hash);
  listener reachable(listener::mode::answer, h);
  listener garbage(listener::mode::garbage, h);
  const std::uint16_t closed_b = closed_port();
  const std::uint16_t closed_c = closed_port();
  ASSERT_NE(closed_b, closed_c);

  daemon_process d;
  d.start({"--probe.enable", "--probe.allow-loopback", "--probe.timeout=2s", "--log-level=debug",
           // Re-announcing at once to read the result must only be warned.
           "--clients.refuse-after-early=0"});

  struct peer {
    std::string id;
    std::uint16_t port;
  };
  const peer a{id20("probe-a"), reachable.port()};
  const peer b{id20("probe-b"), closed_b};
  const peer c{id20("probe-c"), closed_c};
  const peer g{id20("probe-g"), garbage.port()};
  auto announce = [&](const peer& p) {
    announce_params ap(hash, p.id, p.port, 1000);
    ap.numwant = 50;
    ap.compact = 1;
    return peer_ports(http_get(d.port(), announce_target(ap)));
  };
  for (const auto& p : {a, b, c, g}) announce(p);

  const std::string prefix = "swarm " + hex(hash) + ": probe of 127.0.0.1:";
  ASSERT_TRUE(wait_for_log(d,
                           {prefix + std::to_string(a.port) + " reachable",
                            prefix + std::to_string(b.port) + " unreachable",
                            prefix + std::to_string(c.port) + " unreachable",
                            prefix + std::to_string(g.port) + " bogus"},
                           20s))
      << d.stderr_text();
  EXPECT_EQ(reachable.accepted(), 1);

  // An unreachable requester gets the reachable peer, never the other
  // unreachable one, never the bogus one.
  for (int i = 0; i < 5; ++i) {
    const auto got_c = announce(c);
    EXPECT_TRUE(got_c.count(a.port)) << "C should get the reachable peer";
    EXPECT_FALSE(got_c.count(b.port)) << "two unreachable peers paired";
    EXPECT_FALSE(got_c.count(g.port)) << "a bogus peer was handed out";
    const auto got_b = announce(b);
    EXPECT_TRUE(got_b.count(a.port));
    EXPECT_FALSE(got_b.count(c.port)) << "two unreachable peers paired";
    EXPECT_FALSE(got_b.count(g.port));
  }
  // A reachable requester gets the unreachable ones (they can dial it) but
  // never the bogus one.
  const auto got_a = announce(a);
  EXPECT_EQ(got_a, (std::set<int>{b.port, c.port}));
  ASSERT_TRUE(reachable.finished() == 1 || [&] {
    const auto deadline = clock::now() + 5s;
    while (reachable.finished() != 1 && clock::now() < deadline) std::this_thread::yield();
    return reachable.finished() == 1;
  }());
  EXPECT_EQ(reachable.extra_bytes(), 0u) << "the prober sent more than its handshake";
}

TEST(TrackerProbe, OffByDefault) {
  const std::string hash = id20("probe-off");
  listener reachable(listener::mode::answer, info_hash::from_bytes(hash));
  daemon_process d;
  d.start({"--log-level=debug"});
  announce_params ap(hash, id20("probe-off-a"), reachable.port(), 1000);
  ASSERT_EQ(http_get(d.port(), announce_target(ap)).status, 200);
  // Same request path as above, then a second announce whose reply proves
  // the first was fully handled: still nobody dialled.
  announce_params other(hash, id20("probe-off-b"), closed_port(), 1000);
  ASSERT_EQ(http_get(d.port(), announce_target(other)).status, 200);
  EXPECT_EQ(reachable.accepted(), 0);
  EXPECT_EQ(d.stderr_text().find("probe of"), std::string::npos);
}

TEST(TrackerProbe, InvalidProbeValuesExitTwoNamingTheOption) {
  for (const std::string bad :
       {"--probe.timeout=0s", "--probe.max-concurrent=0", "--probe.max-queued=-1",
        "--probe.reprobe-after=0s", "--probe.max-per-swarm=0"}) {
    daemon_process d;
    EXPECT_EQ(d.run_to_exit({bad}), 2) << bad;
    const auto name = bad.substr(2, bad.find('=') - 2);
    EXPECT_NE(d.stderr_text().find(name), std::string::npos) << d.stderr_text();
  }
}

TEST(TrackerProbe, DumpConfigShowsTheProbeSection) {
  daemon_process d;
  ASSERT_EQ(d.run_to_exit({"--dump-config"}), 0);
  const auto dump = d.stdout_text();
  const auto at = dump.find("\n[probe]\n");
  ASSERT_NE(at, std::string::npos) << dump;
  const auto section = dump.substr(at, dump.find("\n[", at + 1) - at);
  for (const char* line : {"\nenable=false\n", "\ntimeout=3s\n", "\nmax-concurrent=64\n",
                           "\nmax-queued=1024\n", "\nmax-per-swarm=8\n", "\nreprobe-after=1h\n",
                           "\nallow-private=false\n", "\nallow-loopback=false\n"}) {
    EXPECT_NE(section.find(line), std::string::npos) << line << section;
  }
}

}  // namespace
}  // namespace sk::test
