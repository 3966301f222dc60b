// The reachability prober in-process: a real actor system, the prober's own
// io thread, and tiny real TCP listeners on loopback that answer a correct
// handshake, a wrong one, garbage, nothing, or close at once. Every wait is
// on a condition with a deadline; nothing sleeps.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "runtime/messages.hpp"
#include "net/probe/reachability_prober.hpp"
#include "test_listener.hpp"

namespace sk {
namespace {

using test::closed_port;
using test::hash_of;
using test::listener;

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

endpoint loopback(std::uint16_t port, std::uint8_t last = 1) {
  const std::uint8_t raw[4] = {127, 0, 0, last};
  return endpoint{ip_address::make_v4(raw), port};
}

bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = clock_type::now() + limit;
  while (!pred()) {
    if (clock_type::now() >= deadline) return pred();
    std::this_thread::yield();
  }
  return true;
}

class ProberTest : public ::testing::Test {
 protected:
  ProberTest() {
    register_message_types(cfg_);
    cfg_.set("scheduler.max-threads", 2);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
  }
  ~ProberTest() override {
    if (prober_) prober_->stop();
    prober_.reset();
    sys_.reset();
  }

  void start(prober_config pc) {
    prober_ = std::make_unique<reachability_prober>(*sys_, pc);
    prober_->start();
  }
  static prober_config loopback_config(std::chrono::milliseconds timeout = 2000ms) {
    prober_config pc;
    pc.allow_loopback = true;
    pc.timeout = timeout;
    return pc;
  }

  /// Asks about `target` (for info_hash `h`) from `self`.
  void ask(caf::scoped_actor& self, const endpoint& target, const info_hash& h,
           std::uint8_t peer = 1) {
    probe_request r;
    r.hash = h;
    r.id.bytes.fill(peer);
    r.target = target;
    self->send(prober_->actor(), probe_atom::value, r);
  }
  /// The next answer to `self`, or nullopt after `limit`.
  std::optional<probe_result> answer(caf::scoped_actor& self,
                                     std::chrono::milliseconds limit = 10000ms) {
    std::optional<probe_result> out;
    self->receive([&](probe_atom, const probe_result& r) { out = r; }, caf::after(limit) >> [] {});
    return out;
  }
  probe_outcome probe_once(const endpoint& target, const info_hash& h) {
    caf::scoped_actor self{*sys_};
    ask(self, target, h);
    auto r = answer(self);
    if (!r) {
      ADD_FAILURE() << "no answer";
      return probe_outcome::skipped;
    }
    EXPECT_EQ(r->hash, h);
    EXPECT_EQ(r->target, target);
    return r->outcome;
  }

  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  std::unique_ptr<reachability_prober> prober_;
};

TEST_F(ProberTest, ACorrectHandshakeIsReachableAndWeSendNothingMore) {
  const auto h = hash_of(0x11);
  listener l(listener::mode::answer, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::reachable);
  // Our handshake: pstrlen 19, the pstr, 8 reserved, the info_hash, our id.
  const auto got = l.received();
  ASSERT_EQ(got.size(), 68u);
  EXPECT_EQ(got.substr(0, 20), std::string("\x13"
                                           "BitTorrent protocol"));
  EXPECT_EQ(got.substr(28, 20), std::string(h.view()));
  EXPECT_EQ(got.substr(48, 8), "-SK0001-");
  EXPECT_EQ(got.substr(48), std::string(prober_->own_id().view()));
  // The prober closed right after reading the answer: the listener saw EOF
  // after our 68 bytes and nothing more.
  ASSERT_TRUE(wait_for([&] { return l.finished() == 1; }));
  EXPECT_EQ(l.accepted(), 1);
  EXPECT_EQ(l.extra_bytes(), 0u);
  EXPECT_EQ(prober_->counters().reachable, 1u);
}

TEST_F(ProberTest, AWrongInfoHashIsBogus) {
  const auto h = hash_of(0x12);
  listener l(listener::mode::wrong_hash, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::bogus);
  EXPECT_EQ(prober_->counters().bogus, 1u);
}

TEST_F(ProberTest, GarbageIsBogus) {
  const auto h = hash_of(0x13);
  listener l(listener::mode::garbage, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::bogus);
}

TEST_F(ProberTest, AClosedPortIsUnreachable) {
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(closed_port()), hash_of(0x14)), probe_outcome::unreachable);
  EXPECT_EQ(prober_->counters().unreachable, 1u);
}

TEST_F(ProberTest, AConnectionClosedWithoutAWordIsUnreachable) {
  const auto h = hash_of(0x15);
  listener l(listener::mode::close_at_once, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::unreachable);
}

TEST_F(ProberTest, ASilentListenerIsUnreachableAfterTheDeadline) {
  const auto h = hash_of(0x16);
  listener l(listener::mode::silent, h);
  start(loopback_config(300ms));
  const auto t0 = clock_type::now();
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::unreachable);
  EXPECT_GE(clock_type::now() - t0, 300ms);
}

TEST_F(ProberTest, MaxConcurrentIsRespectedAndEveryAskIsAnswered) {
  const auto h = hash_of(0x17);
  listener l(listener::mode::silent, h);
  auto pc = loopback_config(200ms);
  pc.max_concurrent = 2;
  start(pc);
  caf::scoped_actor self{*sys_};
  // Six distinct endpoints (127.0.0.1..6 on one port): no cooldown sharing.
  for (std::uint8_t i = 1; i <= 6; ++i) ask(self, loopback(l.port(), i), h, i);
  for (int i = 0; i < 6; ++i) {
    auto r = answer(self);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->outcome, probe_outcome::unreachable);
  }
  EXPECT_EQ(prober_->counters().started, 6u);
  EXPECT_LE(prober_->peak_active(), 2u);
  EXPECT_EQ(prober_->peak_active(), 2u);
}

TEST_F(ProberTest, BeyondMaxQueuedAsksAreDroppedAndCounted) {
  const auto h = hash_of(0x18);
  listener l(listener::mode::silent, h);
  auto pc = loopback_config(5000ms);
  pc.max_concurrent = 1;
  pc.max_queued = 1;
  start(pc);
  caf::scoped_actor self{*sys_};
  ask(self, loopback(l.port(), 1), h, 1);  // dialled
  ask(self, loopback(l.port(), 2), h, 2);  // queued
  ask(self, loopback(l.port(), 3), h, 3);  // dropped at once
  auto r = answer(self, 3000ms);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->outcome, probe_outcome::skipped);
  EXPECT_EQ(r->target, loopback(l.port(), 3));
  EXPECT_EQ(prober_->counters().dropped, 1u);
  EXPECT_EQ(prober_->queued(), 1u);
  EXPECT_EQ(prober_->active(), 1u);
}

TEST_F(ProberTest, OneAddressIsDialledOncePerCooldown) {
  const auto h = hash_of(0x19);
  listener l(listener::mode::answer, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::reachable);
  // Again, and from another swarm (another info_hash): answered from memory.
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::reachable);
  EXPECT_EQ(probe_once(loopback(l.port()), hash_of(0x20)), probe_outcome::reachable);
  EXPECT_EQ(prober_->counters().started, 1u);
  EXPECT_EQ(prober_->counters().remembered, 2u);
  EXPECT_EQ(l.accepted(), 1);
}

TEST_F(ProberTest, AsksAboutAnAddressBeingDialledShareTheDial) {
  const auto h = hash_of(0x25);
  listener l(listener::mode::silent, h);
  start(loopback_config(300ms));
  caf::scoped_actor self{*sys_};
  ask(self, loopback(l.port()), h, 1);
  ask(self, loopback(l.port()), hash_of(0x26), 2);  // another swarm, same peer address
  for (int i = 0; i < 2; ++i) {
    auto r = answer(self);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->outcome, probe_outcome::unreachable);
  }
  EXPECT_EQ(prober_->counters().started, 1u);
}

TEST_F(ProberTest, AWrongHashSaysNothingAboutAnotherTorrent) {
  const auto h = hash_of(0x21);
  listener l(listener::mode::wrong_hash, h);
  start(loopback_config());
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::bogus);
  EXPECT_EQ(probe_once(loopback(l.port()), hash_of(0x22)), probe_outcome::skipped);
}

TEST_F(ProberTest, LoopbackIsNeverDialledUnlessAllowed) {
  const auto h = hash_of(0x23);
  listener l(listener::mode::answer, h);
  start(prober_config{});  // defaults: no loopback, no private ranges
  EXPECT_EQ(probe_once(loopback(l.port()), h), probe_outcome::skipped);
  EXPECT_EQ(prober_->counters().refused, 1u);
  EXPECT_EQ(prober_->counters().started, 0u);
  EXPECT_EQ(l.accepted(), 0);
}

TEST_F(ProberTest, StopWithProbesInFlightReturnsPromptly) {
  const auto h = hash_of(0x24);
  listener l(listener::mode::silent, h);
  start(loopback_config(60000ms));
  caf::scoped_actor self{*sys_};
  for (std::uint8_t i = 1; i <= 3; ++i) ask(self, loopback(l.port(), i), h, i);
  ASSERT_TRUE(wait_for([&] { return prober_->active() == 3; }));
  const auto t0 = clock_type::now();
  prober_->stop();
  EXPECT_LT(clock_type::now() - t0, 1000ms);
  EXPECT_EQ(prober_->active(), 0u);
  // No answers for aborted probes: swarms forget them.
  EXPECT_FALSE(answer(self, 100ms));
}

TEST(ProbeAddressRules, OnlyUnicastPublicAddressesByDefault) {
  auto v4 = [](const char* text) {
    ip_address a;
    EXPECT_TRUE(ip_address::parse(text, a)) << text;
    return a;
  };
  struct row {
    const char* addr;
    bool by_default, with_loopback, with_private;
  };
  const row rows[] = {
      {"8.8.8.8", true, true, true},
      {"0.0.0.0", false, false, false},
      {"0.1.2.3", false, false, false},
      {"127.0.0.1", false, true, false},
      {"127.9.9.9", false, true, false},
      {"10.1.2.3", false, false, true},
      {"172.16.0.1", false, false, true},
      {"172.32.0.1", true, true, true},
      {"192.168.1.1", false, false, true},
      {"100.64.0.1", false, false, true},
      {"169.254.1.1", false, false, true},
      {"224.0.0.1", false, false, false},
      {"239.255.255.250", false, false, false},
      {"240.0.0.1", false, false, false},
      {"255.255.255.255", false, false, false},
      {"2001:db8::1", true, true, true},
      {"::", false, false, false},
      {"::1", false, true, false},
      {"ff02::1", false, false, false},
      {"fe80::1", false, false, true},
      {"fd00::1", false, false, true},
      {"::1.2.3.4", false, false, false},
      {"::ffff:127.0.0.1", false, true, false},
  };
  for (const auto& r : rows) {
    const auto a = v4(r.addr);
    EXPECT_EQ(probe_address_allowed(a, false, false), r.by_default) << r.addr;
    EXPECT_EQ(probe_address_allowed(a, true, false), r.with_loopback) << r.addr;
    EXPECT_EQ(probe_address_allowed(a, false, true), r.with_private) << r.addr;
  }
}

TEST(ProberConfig, ValidateNamesTheBadOption) {
  prober_config ok;
  EXPECT_EQ(ok.validate(), "");
  auto c = ok;
  c.timeout = 0ms;
  EXPECT_NE(c.validate().find("probe.timeout"), std::string::npos);
  c = ok;
  c.max_concurrent = 0;
  EXPECT_NE(c.validate().find("probe.max-concurrent"), std::string::npos);
}

}  // namespace
}  // namespace sk
