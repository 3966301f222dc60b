// The swarm actor's side of reachability probing, on CAF's deterministic
// test scheduler: a swarm given a prober (through its registry) sends it
// `(probe_atom, probe_request)` after an announce and applies the
// `(probe_atom, probe_result)` answer; a swarm without one never asks; a
// restarted swarm still has the prober.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "announces.hpp"
#include "caf_fixture.hpp"
#include "runtime/swarm_actor.hpp"
#include "serialization.hpp"
#include "test_util.hpp"
#include "tickets.hpp"

namespace sk {
namespace {

using std::chrono::seconds;
using test::pid;
using test::v4;

const info_hash hash = test::ih(0x77);

/// A registry that only hands out a prober.
class prober_registry : public swarm_registry {
 public:
  explicit prober_registry(caf::actor p)
      : prober_(caf::actor_cast<prober_interface>(std::move(p))) {}
  bool erase_if_owner(const info_hash&, const caf::actor_addr&) override { return false; }
  prober_interface prober() const override { return prober_; }

 private:
  prober_interface prober_;
};

/// Records every request and answers it with `outcome`, like the real
/// prober (anon_send to the asking swarm).
caf::behavior fake_prober(caf::event_based_actor* self,
                          std::shared_ptr<std::vector<probe_request>> seen, probe_outcome outcome) {
  return {
      [self, seen, outcome](probe_atom, const probe_request& r) {
        seen->push_back(r);
        caf::anon_send(caf::actor_cast<caf::actor>(self->current_sender()), probe_atom::value,
                       probe_result{r.hash, r.id, r.target, outcome});
      },
  };
}

class ProbeActor : public test::caf_fixture {
 protected:
  swarm_config config() const {
    auto c = test::short_config(3);
    c.probe.enabled = true;
    return c;
  }
};

TEST_F(ProbeActor, ASwarmAsksItsProberAndAppliesTheAnswer) {
  auto seen = std::make_shared<std::vector<probe_request>>();
  auto prober = track(sys->spawn(fake_prober, seen, probe_outcome::unreachable));
  auto registry = std::make_shared<prober_registry>(prober);
  auto core = std::make_shared<swarm_core>(hash, config(), 1);
  auto swarm = track(test::untyped(spawn_swarm(*sys, core, registry)));
  const auto ep = v4(10, 0, 0, 1, 6881);
  ASSERT_TRUE(test::announce_by_ticket(swarm, test::swarm_announce_of(hash, 1, ep, 100),
                                       [this] { run(); }));
  run();
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0].target, ep);
  EXPECT_EQ((*seen)[0].id, pid(1));
  const auto* t = core->table().traits(peer_key{pid(1), ep.ip});
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->has(flag_unreachable));
  EXPECT_FALSE(t->has(flag_quarantined));
  EXPECT_EQ(core->outstanding_probes(), 0u);
  EXPECT_EQ(core->counters().probes_unreachable, 1u);
}

TEST_F(ProbeActor, BogusAnswersQuarantine) {
  auto seen = std::make_shared<std::vector<probe_request>>();
  auto prober = track(sys->spawn(fake_prober, seen, probe_outcome::bogus));
  auto registry = std::make_shared<prober_registry>(prober);
  auto core = std::make_shared<swarm_core>(hash, config(), 1);
  auto swarm = track(test::untyped(spawn_swarm(*sys, core, registry)));
  const auto ep = v4(10, 0, 0, 2, 6881);
  ASSERT_TRUE(test::announce_by_ticket(swarm, test::swarm_announce_of(hash, 2, ep, 100),
                                       [this] { run(); }));
  run();
  EXPECT_TRUE(core->table().traits(peer_key{pid(2), ep.ip})->has(flag_quarantined));
  EXPECT_EQ(core->table().quarantined_count(), 1u);
}

TEST_F(ProbeActor, ASwarmWithoutAProberNeverAsks) {
  auto core = std::make_shared<swarm_core>(hash, config(), 1);
  auto swarm = track(test::untyped(spawn_swarm(*sys, core)));
  ASSERT_TRUE(test::announce_by_ticket(
      swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 6881), 100), [this] { run(); }));
  EXPECT_FALSE(core->probing());
  EXPECT_EQ(core->outstanding_probes(), 0u);
  EXPECT_EQ(core->counters().probes_requested, 0u);
}

TEST_F(ProbeActor, ProbingOffInTheConfigNeverAsksEvenWithAProber) {
  auto seen = std::make_shared<std::vector<probe_request>>();
  auto prober = track(sys->spawn(fake_prober, seen, probe_outcome::reachable));
  auto registry = std::make_shared<prober_registry>(prober);
  auto c = config();
  c.probe.enabled = false;
  auto core = std::make_shared<swarm_core>(hash, c, 1);
  auto swarm = track(test::untyped(spawn_swarm(*sys, core, registry)));
  ASSERT_TRUE(test::announce_by_ticket(
      swarm, test::swarm_announce_of(hash, 1, v4(10, 0, 0, 1, 6881), 100), [this] { run(); }));
  run();
  EXPECT_TRUE(seen->empty());
}

TEST_F(ProbeActor, ARestartedSwarmStillHasItsProber) {
  auto seen = std::make_shared<std::vector<probe_request>>();
  auto prober = track(sys->spawn(fake_prober, seen, probe_outcome::reachable));
  auto registry = std::make_shared<prober_registry>(prober);
  auto core = std::make_shared<swarm_core>(hash, config(), 1);
  auto first = test::untyped(spawn_swarm(*sys, core, registry));
  caf::anon_send_exit(first, caf::exit_reason::kill);
  run();
  // What the supervisor does after a crash: a new actor on the same core
  // and registry.
  auto second = track(test::untyped(spawn_swarm(*sys, core, registry)));
  const auto ep = v4(10, 0, 0, 3, 6881);
  ASSERT_TRUE(test::announce_by_ticket(second, test::swarm_announce_of(hash, 3, ep, 100),
                                       [this] { run(); }));
  run();
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_TRUE(core->table().traits(peer_key{pid(3), ep.ip})->has(flag_reachable));
}

TEST_F(ProbeActor, ProbeMessagesRoundTripUnderTheirRegisteredNames) {
  probe_result r;
  r.hash = hash;
  r.id = pid(9);
  std::uint8_t raw[16] = {0x20, 0x01, 0x0d, 0xb8};
  raw[15] = 7;
  r.target = endpoint{ip_address::make_v6(raw), 51413};
  r.outcome = probe_outcome::bogus;
  probe_request q{r.hash, r.id, r.target};
  const caf::message out = test::round_trip(*sys, caf::make_message(probe_atom::value, q, r));
  ASSERT_TRUE((out.match_elements<probe_atom, probe_request, probe_result>()));
  const auto& q2 = out.get_as<probe_request>(1);
  const auto& r2 = out.get_as<probe_result>(2);
  EXPECT_EQ(q2.hash, hash);
  EXPECT_EQ(q2.target, r.target);
  EXPECT_EQ(r2.id, pid(9));
  EXPECT_EQ(r2.target, r.target);
  EXPECT_EQ(r2.outcome, probe_outcome::bogus);
  for (const char* name : {"sk::probe_request", "sk::probe_result"}) {
    EXPECT_NE(sys->types().make_value(name), nullptr) << name;
  }
}

}  // namespace
}  // namespace sk
