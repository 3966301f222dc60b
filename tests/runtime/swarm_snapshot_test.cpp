// Swarm snapshots (migration, replication): the state survives a trip
// through CAF's binary serialization into a new core; merging keeps the
// newer entry.
#include <limits>

#include <gtest/gtest.h>

#include <caf/all.hpp>

#include "announces.hpp"
#include "runtime/message_types.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/swarm_core.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;

/// Peer `i` (10.0.0.i, port 6000 + i) announces `h`.
swarm_announce announce_of(const info_hash& h, std::uint32_t i, std::uint64_t left,
                           announce_event ev = announce_event::started) {
  const endpoint from{ip_address::make_v4(0x0a000000u + i), static_cast<std::uint16_t>(6000 + i)};
  return test::swarm_announce_of(h, test::numbered_peer(i), from, left, ev);
}

class SnapshotTest : public ::testing::Test {
 protected:
  SnapshotTest() {
    cfg_.set("scheduler.policy", caf::atom("testing"));
    register_message_types(cfg_);
    sys_ = std::make_unique<caf::actor_system>(cfg_);
  }
  swarm_snapshot round_trip(const swarm_snapshot& s) {
    std::vector<char> buf;
    caf::binary_serializer sink{*sys_, buf};
    auto msg = caf::make_message(caf::migrate_atom::value, caf::put_atom::value, s);
    EXPECT_FALSE(sink(msg));
    caf::message out;
    caf::binary_deserializer source{*sys_, buf};
    EXPECT_FALSE(source(out));
    EXPECT_TRUE((out.match_elements<caf::migrate_atom, caf::put_atom, swarm_snapshot>()));
    return out.get_as<swarm_snapshot>(2);
  }
  caf::actor_system_config cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  swarm_config swarm_cfg_;
};

TEST_F(SnapshotTest, WholeStateSurvivesTheWire) {
  const auto h = test::filled_hash(0xab);
  swarm_core core(h, swarm_cfg_, 42);
  const health_time t0 = health_time{} + 10h;
  announce_result res;
  for (std::uint32_t i = 0; i < 50; ++i) {
    reset_result(res);
    ASSERT_TRUE(core.announce(announce_of(h, i, i % 5 == 0 ? 0 : 1000 + i), t0 + i * 1s, res));
  }
  reset_result(res);
  ASSERT_TRUE(core.announce(announce_of(h, 7, 0, announce_event::completed), t0 + 60s, res));
  swarm_knobs k = core.knobs();
  k.seeder_warning = true;
  ASSERT_TRUE(core.set_knobs(k));
  remediation_record rec;
  rec.action = "apply";
  rec.strategy = "seeder-appeal";
  core.record(rec);
  const auto before = core.scrape();
  // A remediation under way, its progress sent 30 s before the snapshot.
  remediation_progress rp;
  rp.started = true;
  rp.knobs = k;
  rp.active = {static_cast<std::uint16_t>(strategy::keep_seeding)};
  rp.trial = static_cast<std::int16_t>(strategy::keep_seeding);
  rp.trial_age_ms = 10'000;
  rp.healthy_age_ms = 5'000;
  core.set_remediation(rp, t0 + 70s);

  const health_time taken = t0 + 100s;
  core.tick(taken);
  ASSERT_NE(core.last_report(), nullptr);
  const auto snap = round_trip(take_snapshot(core, taken));
  ASSERT_EQ(snap.peers.size(), 50u);

  // A different machine: another clock origin.
  const health_time there = health_time{} + 500h;
  auto copy = restore_snapshot(snap, swarm_cfg_, there);
  EXPECT_EQ(copy->hash(), h);
  EXPECT_EQ(copy->table().size(), core.table().size());
  EXPECT_EQ(copy->scrape().complete, before.complete);
  EXPECT_EQ(copy->scrape().incomplete, before.incomplete);
  EXPECT_EQ(copy->scrape().downloaded, before.downloaded);
  EXPECT_EQ(copy->counters().announces, core.counters().announces);
  EXPECT_TRUE(copy->knobs().seeder_warning);
  ASSERT_EQ(copy->history().size(), 1u);
  EXPECT_EQ(copy->history().front().strategy, "seeder-appeal");
  EXPECT_TRUE(copy->check_invariants());
  // The remediation under way, aged by the 30 s between its progress and
  // the snapshot, then by the time since the copy arrived.
  auto moved = copy->remediation(there + 2s);
  ASSERT_TRUE(moved);
  EXPECT_EQ(moved->trial, static_cast<std::int16_t>(strategy::keep_seeding));
  EXPECT_EQ(moved->trial_age_ms, 42'000);
  EXPECT_EQ(moved->healthy_age_ms, 37'000);
  EXPECT_EQ(moved->active, rp.active);
  EXPECT_TRUE(moved->knobs.seeder_warning);
  // The health model: its windows, size estimate and last report.
  ASSERT_NE(copy->last_report(), nullptr);
  EXPECT_EQ(copy->last_report()->state, core.last_report()->state);
  EXPECT_EQ(copy->last_report()->reasons, core.last_report()->reasons);
  EXPECT_EQ(copy->last_report()->seeders, core.last_report()->seeders);
  EXPECT_EQ(copy->last_report()->announce_rate, core.last_report()->announce_rate);
  EXPECT_EQ(copy->tracker().torrent_size(), core.tracker().torrent_size());
  const auto was = core.tracker().totals(taken);
  const auto is = copy->tracker().totals(there);
  EXPECT_EQ(is.announces, 51u);
  EXPECT_EQ(is.announces, was.announces);
  EXPECT_EQ(is.completions, was.completions);
  EXPECT_EQ(is.arrivals, was.arrivals);
  // Its next evaluation sees the same window (rates from the old owner's
  // history, not from zero).
  core.tick(taken + 60s);
  copy->tick(there + 60s);
  const health_report* next_here = core.last_report();
  const health_report* next_there = copy->last_report();
  EXPECT_GT(next_there->announce_rate, 0.0);
  EXPECT_EQ(next_there->announce_rate, next_here->announce_rate);
  EXPECT_EQ(next_there->completion_rate, next_here->completion_rate);
  EXPECT_EQ(next_there->state, next_here->state);
  // Every peer, with its traits and its age.
  core.table().for_each(
      [&](const peer_key& key, const endpoint& ep, bool seeder, const peer_traits& t) {
        const peer_traits* c = copy->table().traits(key);
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(copy->table().is_seeder(key), seeder);
        EXPECT_EQ(c->left, t.left);
        EXPECT_EQ(c->announces, t.announces);
        EXPECT_EQ(there - c->last_announce, taken - t.last_announce);
        endpoint e;
        ASSERT_TRUE(copy->table().find(key, e));
        EXPECT_EQ(e, ep);
      });
}

TEST_F(SnapshotTest, MergeKeepsNewerLocalPeersAndAddsCounts) {
  const auto h = test::filled_hash(0x11);
  const health_time t0 = health_time{} + 10h;
  swarm_core old_owner(h, swarm_cfg_, 1);
  announce_result res;
  for (std::uint32_t i = 0; i < 10; ++i) {
    reset_result(res);
    old_owner.announce(announce_of(h, i, 500), t0, res);
  }
  // Requests reached the new owner before the snapshot: peer 3 announced
  // there again (left went down), and peer 100 is new.
  swarm_core fresh(h, swarm_cfg_, 2);
  reset_result(res);
  fresh.announce(announce_of(h, 3, 100), t0 + 5s, res);
  reset_result(res);
  fresh.announce(announce_of(h, 100, 100), t0 + 5s, res);
  remediation_progress rp;
  rp.started = true;
  old_owner.set_remediation(rp, t0);
  merge_snapshot(fresh, round_trip(take_snapshot(old_owner, t0 + 5s)), t0 + 5s);
  EXPECT_EQ(fresh.table().size(), 11u);
  // A running swarm's remediation is its supervisor's: a merge brings none.
  EXPECT_FALSE(fresh.remediation(t0 + 5s));
  EXPECT_EQ(fresh.table().traits(peer_key{test::numbered_peer(3), announce_of(h, 3, 0).peer.ip})->left, 100u);
  EXPECT_EQ(fresh.counters().announces, 12u);
  EXPECT_TRUE(fresh.check_invariants());
  // Another hash's snapshot changes nothing.
  swarm_core other(test::filled_hash(0x22), swarm_cfg_, 3);
  merge_snapshot(other, take_snapshot(old_owner, t0), t0);
  EXPECT_EQ(other.table().size(), 0u);
}

TEST_F(SnapshotTest, TwoCopiesOfOneHistoryAreNotCountedTwice) {
  // A swarm with 3 completions is saved (older copy), gets 2 more, and is
  // saved again: after SIGKILLs both copies come back on two nodes.
  const auto h = test::filled_hash(0x33);
  const health_time t0 = health_time{} + 10h;
  swarm_core live(h, swarm_cfg_, 1);
  live.set_lineage(new_lineage());
  announce_result res;
  auto complete = [&](std::uint32_t i, health_time at) {
    reset_result(res);
    live.announce(announce_of(h, i, 100), at, res);
    reset_result(res);
    live.announce(announce_of(h, i, 0, announce_event::completed), at + 1s, res);
  };
  for (std::uint32_t i = 0; i < 3; ++i) complete(i, t0);
  const swarm_snapshot older = round_trip(take_snapshot(live, t0 + 10s));
  for (std::uint32_t i = 3; i < 5; ++i) complete(i, t0 + 20s);
  const swarm_snapshot newer = round_trip(take_snapshot(live, t0 + 30s));
  ASSERT_EQ(older.downloaded, 3u);
  ASSERT_EQ(newer.downloaded, 5u);
  EXPECT_EQ(older.lineage, live.lineage());
  EXPECT_NE(older.lineage, 0u);

  // The owner holds the newer copy; the older one arrives: 5, not 8.
  auto owner = restore_snapshot(newer, swarm_cfg_, t0 + 40s);
  EXPECT_EQ(owner->lineage(), newer.lineage);
  const auto announces = owner->counters().announces;
  merge_snapshot(*owner, older, t0 + 40s);
  EXPECT_EQ(owner->scrape().downloaded, 5);
  EXPECT_EQ(owner->counters().announces, announces);
  EXPECT_EQ(owner->table().size(), 5u);
  // The other way round, too.
  auto other = restore_snapshot(older, swarm_cfg_, t0 + 40s);
  merge_snapshot(*other, newer, t0 + 40s);
  EXPECT_EQ(other->scrape().downloaded, 5);

  // A swarm started afresh meanwhile (requests reached the new owner before
  // the snapshot did) is another history: the counts add up, and the
  // merged swarm carries the arriving lineage.
  swarm_core fresh(h, swarm_cfg_, 2);
  fresh.set_lineage(new_lineage());
  reset_result(res);
  fresh.announce(announce_of(h, 9, 0, announce_event::completed), t0 + 35s, res);
  ASSERT_EQ(fresh.scrape().downloaded, 1);
  merge_snapshot(fresh, newer, t0 + 40s);
  EXPECT_EQ(fresh.scrape().downloaded, 6);
  EXPECT_EQ(fresh.lineage(), newer.lineage);
  // ... after which the older copy is recognised as part of it.
  merge_snapshot(fresh, older, t0 + 41s);
  EXPECT_EQ(fresh.scrape().downloaded, 6);
  // Unnamed copies (lineage 0: written before lineages existed) add up.
  swarm_snapshot unnamed = older;
  unnamed.lineage = 0;
  swarm_core plain(h, swarm_cfg_, 3);
  merge_snapshot(plain, unnamed, t0 + 40s);
  merge_snapshot(plain, unnamed, t0 + 40s);
  EXPECT_EQ(plain.scrape().downloaded, 6);
  EXPECT_NE(new_lineage(), new_lineage());
}

/// A core with `n` peers announcing `h`, as a snapshot.
swarm_snapshot snapshot_of(const info_hash& h, std::uint32_t n, const swarm_config& cfg) {
  swarm_core core(h, cfg, 7);
  const health_time t0 = health_time{} + 10h;
  announce_result res;
  for (std::uint32_t i = 0; i < n; ++i) {
    reset_result(res);
    EXPECT_TRUE(core.announce(announce_of(h, i, i % 3 == 0 ? 0 : 500 + i), t0, res));
  }
  return take_snapshot(core, t0 + 5s);
}

/// A history of one remediation, and one under way, added to `s`.
void add_remediation(swarm_snapshot& s) {
  remediation_record r;
  r.action = "apply";
  r.strategy = "seeder-appeal";
  r.reason = "few seeders";
  s.history.push_back(r);
  remediation_progress rp;
  rp.started = true;
  rp.trial_ticks = 4;
  s.remediation.push_back(rp);
}

TEST_F(SnapshotTest, PackedSnapshotsUnpackToTheSameEncodingSmallAndLarge) {
  // 1 and 10 peers (most sleeping swarms) and 2,000; each twice in a row,
  // since a thread's codec keeps its contexts and buffers between uses.
  for (const std::uint32_t n : {1u, 10u, 10u, 2000u, 2000u, 1u}) {
    SCOPED_TRACE(n);
    const auto snap = snapshot_of(test::filled_hash(static_cast<std::uint8_t>(n)), n, swarm_cfg_);
    std::uint32_t raw_size = 0;
    const std::vector<char> packed = pack_snapshot(snap, raw_size);
    ASSERT_FALSE(packed.empty());
    EXPECT_GT(raw_size, 0u);
    // Smaller than the state file's record of the same swarm.
    EXPECT_LT(packed.size(), encode_snapshot(snap).size());
    swarm_snapshot back;
    ASSERT_TRUE(unpack_snapshot(packed, raw_size, back));
    EXPECT_EQ(back.peers.size(), n);
    EXPECT_EQ(encode_snapshot(back), encode_snapshot(snap));
    // A wrong size or a cut stream is refused, not half read.
    swarm_snapshot bad;
    EXPECT_FALSE(unpack_snapshot(packed, raw_size + 1, bad));
    EXPECT_FALSE(unpack_snapshot(packed, raw_size - 1, bad));
    const std::vector<char> cut(packed.begin(), packed.begin() + packed.size() / 2);
    EXPECT_FALSE(unpack_snapshot(cut, raw_size, bad));
  }
}

TEST_F(SnapshotTest, PackedSnapshotsKeepEveryFieldOfUnusualPeers) {
  // The sleeping form writes peers in a layout of its own: every case it
  // treats apart (address family, key forms, unset and set progress and
  // completion, ages out of their usual order, large counters, ids that
  // share a prefix with the peer before or not) comes back exactly, with a
  // remediation and a history beside them.
  auto snap = snapshot_of(test::filled_hash(0x31), 9, swarm_cfg_);
  ASSERT_EQ(snap.peers.size(), 9u);
  const char* keys[] = {"",         "0A1B2C3D", "0a1b2c3d", "0a1B2c3D",
                        "12345678", "ABCDEFGH", "k",        "a-key-longer-than-8",
                        "00000000"};
  for (std::size_t i = 0; i < snap.peers.size(); ++i) {
    auto& p = snap.peers[i];
    p.key = keys[i];
    p.left = i == 2 ? std::numeric_limits<std::uint64_t>::max() : p.left;
    p.uploaded = std::uint64_t{1} << (7 * i);
    p.downloaded = i * 1000003;
    p.first_seen_age_ms = 3600000 + static_cast<std::int64_t>(i);
    p.last_announce_age_ms = i == 4 ? 0 : static_cast<std::int64_t>(i) * 900;
    // Clocks of two nodes (a migrated swarm): a progress newer than the
    // announce, which the layout stores as a negative difference.
    p.last_progress_age_ms = i == 5 ? -20 : p.last_announce_age_ms + 7;
    p.completed_age_ms = i % 2 == 0 ? -1 : 120000 + static_cast<std::int64_t>(i);
    p.announces = i == 6 ? std::numeric_limits<std::uint32_t>::max() : 3;
    p.announces_without_progress = static_cast<std::uint32_t>(i);
    p.early_announces = static_cast<std::uint32_t>(i % 3);
    p.strikes = i == 7 ? 2 : 0;
    p.progress = i == 1 ? 0.0f : i == 3 ? 0.3125f : i == 8 ? 1.0f : -1.0f;
    p.flags = static_cast<std::uint8_t>(i * 29);
  }
  // Ages at the ends of their range, whose differences wrap.
  snap.peers[0].first_seen_age_ms = std::numeric_limits<std::int64_t>::max();
  snap.peers[0].last_announce_age_ms = std::numeric_limits<std::int64_t>::min();
  snap.peers[1].completed_age_ms = std::numeric_limits<std::int64_t>::min();
  std::uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34};
  snap.peers[3].ep.ip = ip_address::make_v6(v6);
  snap.peers[3].ep.port = 65535;
  snap.peers[6].ep.port = 0;
  // An id sharing nothing with the one before, one sharing all of it.
  snap.peers[4].id.bytes.fill(0xee);
  snap.peers[5].id = snap.peers[4].id;
  add_remediation(snap);
  snap.lineage = 0x1234567890abcdefULL;

  std::uint32_t raw_size = 0;
  const std::vector<char> packed = pack_snapshot(snap, raw_size);
  ASSERT_FALSE(packed.empty());
  swarm_snapshot back;
  ASSERT_TRUE(unpack_snapshot(packed, raw_size, back));
  ASSERT_EQ(back.peers.size(), snap.peers.size());
  for (std::size_t i = 0; i < snap.peers.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(back.peers[i].key, snap.peers[i].key);
    EXPECT_EQ(back.peers[i].ep, snap.peers[i].ep);
    EXPECT_EQ(back.peers[i].id, snap.peers[i].id);
    EXPECT_EQ(back.peers[i].last_progress_age_ms, snap.peers[i].last_progress_age_ms);
    EXPECT_EQ(back.peers[i].completed_age_ms, snap.peers[i].completed_age_ms);
  }
  EXPECT_TRUE(back.peers[3].ep.ip.v6);
  EXPECT_EQ(back.remediation.size(), 1u);
  EXPECT_EQ(back.history.size(), 1u);
  EXPECT_EQ(encode_snapshot(back), encode_snapshot(snap));
}

TEST_F(SnapshotTest, AReusedSnapshotHoldsOnlyTheLastSwarmTakenOrUnpackedIntoIt) {
  // A swarm falling asleep and a swarm waking reuse one snapshot per
  // thread: what an earlier, larger swarm left in it (more peers, a
  // history, a remediation under way) must not show in the next one.
  const health_time t0 = health_time{} + 10h;
  auto big = snapshot_of(test::filled_hash(0x51), 40, swarm_cfg_);
  add_remediation(big);
  big.peers[0].key = "a-key-longer-than-16-bytes";
  const auto big_core = restore_snapshot(big, swarm_cfg_, t0);
  ASSERT_EQ(big_core->table().size(), 40u);
  ASSERT_FALSE(big_core->history().empty());
  ASSERT_TRUE(big_core->remediation(t0));
  const auto small_snap = snapshot_of(test::filled_hash(0x52), 3, swarm_cfg_);
  const auto small_core = restore_snapshot(small_snap, swarm_cfg_, t0);

  swarm_snapshot reused;
  take_snapshot(*big_core, t0 + 1s, reused);
  EXPECT_EQ(encode_snapshot(reused), encode_snapshot(take_snapshot(*big_core, t0 + 1s)));
  take_snapshot(*small_core, t0 + 1s, reused);
  const auto fresh = take_snapshot(*small_core, t0 + 1s);
  EXPECT_EQ(reused.peers.size(), 3u);
  EXPECT_TRUE(reused.history.empty());
  EXPECT_TRUE(reused.remediation.empty());
  EXPECT_EQ(encode_snapshot(reused), encode_snapshot(fresh));

  std::uint32_t big_raw = 0;
  std::uint32_t small_raw = 0;
  const auto big_packed = pack_snapshot(big, big_raw);
  const auto small_packed = pack_snapshot(fresh, small_raw);
  swarm_snapshot unpacked;
  ASSERT_TRUE(unpack_snapshot(big_packed, big_raw, unpacked));
  EXPECT_EQ(encode_snapshot(unpacked), encode_snapshot(big));
  ASSERT_TRUE(unpack_snapshot(small_packed, small_raw, unpacked));
  EXPECT_EQ(encode_snapshot(unpacked), encode_snapshot(fresh));

  // Trimming gives back a large peers' array only.
  trim_snapshot(unpacked);
  EXPECT_GE(unpacked.peers.capacity(), 3u);
  swarm_snapshot huge;
  huge.peers.resize(1000);
  trim_snapshot(huge);
  EXPECT_EQ(huge.peers.capacity(), 0u);
}

TEST_F(SnapshotTest, DamagedPackedSnapshotsAreRefusedOrReadWhole) {
  // Bytes changed anywhere in a packed swarm either fail to unpack or
  // unpack to a snapshot that encodes whole; none is read past its end.
  const auto snap = snapshot_of(test::filled_hash(0x44), 10, swarm_cfg_);
  std::uint32_t raw_size = 0;
  const std::vector<char> packed = pack_snapshot(snap, raw_size);
  ASSERT_FALSE(packed.empty());
  std::size_t refused = 0;
  for (std::size_t at = 0; at < packed.size(); ++at) {
    for (const int flip : {0x01, 0x80, 0xff}) {
      std::vector<char> damaged = packed;
      damaged[at] = static_cast<char>(damaged[at] ^ flip);
      swarm_snapshot out;
      if (!unpack_snapshot(damaged, raw_size, out)) {
        ++refused;
        continue;
      }
      EXPECT_FALSE(encode_snapshot(out).empty());
    }
  }
  EXPECT_GT(refused, 0u);
  for (std::size_t n = 1; n < packed.size(); ++n) {
    const std::vector<char> cut(packed.begin(), packed.begin() + static_cast<std::ptrdiff_t>(n));
    swarm_snapshot out;
    EXPECT_FALSE(unpack_snapshot(cut, raw_size, out)) << n;
  }
}

TEST(SnapshotFinite, EveryFloatOfASnapshotIsMadeFinite) {
  const double inf = std::numeric_limits<double>::infinity();
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  swarm_snapshot s;
  s.knobs.interval_scale = inf;
  s.knobs.leecher_interval_scale = -inf;
  remediation_record r;
  r.before.completion_rate = inf;
  r.after.completion_rate = std::numeric_limits<double>::quiet_NaN();
  s.history.push_back(r);
  peer_snapshot p;
  p.progress = nanf;
  s.peers.push_back(p);
  s.health.last.completion_rate = -inf;
  s.health.last.announce_rate = inf;
  s.health.last.progress_p25 = nanf;
  s.health.last.progress_median = std::numeric_limits<float>::infinity();
  s.health.last.progress_p75 = -std::numeric_limits<float>::infinity();

  make_finite(s);

  EXPECT_EQ(s.knobs.interval_scale, std::numeric_limits<double>::max());
  EXPECT_EQ(s.knobs.leecher_interval_scale, std::numeric_limits<double>::lowest());
  EXPECT_EQ(s.history[0].before.completion_rate, std::numeric_limits<double>::max());
  EXPECT_EQ(s.history[0].after.completion_rate, 0.0);
  EXPECT_EQ(s.peers[0].progress, -1.0f);
  EXPECT_EQ(s.health.last.completion_rate, std::numeric_limits<double>::lowest());
  EXPECT_EQ(s.health.last.announce_rate, std::numeric_limits<double>::max());
  EXPECT_EQ(s.health.last.progress_p25, -1.0f);
  EXPECT_EQ(s.health.last.progress_median, std::numeric_limits<float>::max());
  EXPECT_EQ(s.health.last.progress_p75, std::numeric_limits<float>::lowest());
}

}  // namespace
}  // namespace sk
