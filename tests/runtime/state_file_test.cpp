// The state file: what is written comes back whole; a file that is
// truncated anywhere, has any byte flipped, another version, or nothing in
// it is refused as a whole (no record handed out) with a reason; refused
// files are moved aside, never deleted; ages grow by the downtime and
// expired peers are dropped.
#include <zlib.h>

#include <gtest/gtest.h>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <condition_variable>
#include <future>
#include <mutex>
#include <iterator>
#include <set>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "runtime/directory.hpp"
#include "runtime/message_types.hpp"
#include "runtime/state_file.hpp"
#include "runtime/state_keeper.hpp"
#include "runtime/swarm_actor.hpp"
#include "runtime/swarm_snapshot.hpp"
#include "tracker/swarm_core.hpp"
#include "announces.hpp"

namespace sk {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using outcome = state_file::read_result::outcome;

/// A swarm of `n` peers (every third a seeder) and one completion.
swarm_snapshot swarm_of(std::uint8_t b, std::uint32_t n) {
  swarm_config cfg;
  const auto h = test::filled_hash(b);
  swarm_core core(h, cfg, b);
  const health_time t0 = health_time{} + 10h;
  announce_result res;
  for (std::uint32_t i = 0; i < n; ++i) {
    reset_result(res);
    const endpoint from{ip_address::make_v4(0x0a000000u + i), static_cast<std::uint16_t>(7000 + i)};
    core.announce(test::swarm_announce_of(h, test::numbered_peer(i), from, i % 3 == 0 ? 0 : 500),
                  t0 + i * 1s, res);
  }
  if (n > 1) {
    reset_result(res);
    const endpoint from{ip_address::make_v4(0x0a000001u), 7001};
    core.announce(test::swarm_announce_of(h, test::numbered_peer(1), from, 0, announce_event::completed),
                  t0 + 100s, res);
  }
  return take_snapshot(core, t0 + 120s);
}

class StateFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("sk-state-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes three swarms, two bans and holds; returns the file's bytes.
  std::vector<char> write_sample(std::int64_t written = 1'700'000'000'000) {
    std::string error;
    auto w = state_file::writer::open(dir_, written, &error);
    EXPECT_TRUE(w) << error;
    swarm_snapshot first = swarm_of(1, 10);
    remediation_progress p;
    p.started = true;
    p.knobs.policy = policy_kind::flash_crowd;
    p.knobs.seeder_warning = true;
    p.active = {static_cast<std::uint16_t>(strategy::flash_crowd)};
    p.tried = p.active;
    p.trial = static_cast<std::int16_t>(strategy::flash_crowd);
    p.trial_age_ms = 42000;
    p.trial_ticks = 1;
    first.remediation.push_back(p);
    EXPECT_TRUE(w->add(first));
    EXPECT_TRUE(w->add(swarm_of(2, 1)));
    EXPECT_TRUE(w->add(swarm_of(3, 40)));
    EXPECT_TRUE(w->add(std::vector<ban_rule>{{"-XX0001-", "broken client"}, {"-YY", "abuse"}}));
    supervisor_holds h;
    h.pinned.emplace_back(test::filled_hash(1), "role-aware");
    h.holdoff_left_ms.emplace_back(test::filled_hash(3), 120000);
    EXPECT_TRUE(w->add(h));
    EXPECT_TRUE(w->add(state_file::access_record{
        "deny", {test::filled_hash(7), test::filled_hash(8)}}));
    EXPECT_EQ(w->swarms(), 3u);
    EXPECT_EQ(w->peers(), 51u);
    EXPECT_TRUE(w->commit(&error)) << error;
    return file_bytes();
  }
  std::vector<char> file_bytes() const {
    std::ifstream in(state_file::path_in(dir_), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  void put_file(const std::vector<char>& bytes) const {
    fs::create_directories(dir_);
    std::ofstream(state_file::path_in(dir_), std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  struct collected {
    std::vector<swarm_snapshot> swarms;
    std::vector<ban_rule> bans;
    supervisor_holds holds;
    state_file::access_record access;
    std::int64_t begun_at = -1;
    int calls = 0;
  };
  state_file::sink sink_into(collected& c) {
    state_file::sink s;
    s.swarm = [&c](swarm_snapshot&& x) {
      ++c.calls;
      c.swarms.push_back(std::move(x));
    };
    s.bans = [&c](std::vector<ban_rule>&& b) {
      ++c.calls;
      c.bans = std::move(b);
    };
    s.holds = [&c](supervisor_holds&& h) {
      ++c.calls;
      c.holds = std::move(h);
    };
    s.access = [&c](state_file::access_record&& a) {
      ++c.calls;
      c.access = std::move(a);
    };
    s.begin = [&c](std::int64_t written) {
      ++c.calls;
      c.begun_at = written;
    };
    return s;
  }
  std::string dir_;
};

TEST_F(StateFile, AbsentFileIsAFirstStart) {
  collected c;
  auto r = state_file::read(dir_, sink_into(c));
  EXPECT_EQ(r.status, outcome::absent);
  EXPECT_EQ(c.calls, 0);
}

TEST_F(StateFile, EverythingWrittenComesBack) {
  write_sample(1'700'000'123'456);
  collected c;
  auto r = state_file::read(dir_, sink_into(c));
  ASSERT_EQ(r.status, outcome::loaded) << r.problem;
  EXPECT_EQ(r.written_unix_ms, 1'700'000'123'456);
  EXPECT_EQ(r.swarms, 3u);
  EXPECT_EQ(r.peers, 51u);
  ASSERT_EQ(c.swarms.size(), 3u);
  const auto want = swarm_of(3, 40);
  const auto& got = c.swarms[2];
  EXPECT_EQ(got.hash, want.hash);
  EXPECT_EQ(got.downloaded, want.downloaded);
  EXPECT_EQ(got.downloaded, 1u);
  ASSERT_EQ(got.peers.size(), want.peers.size());
  for (std::size_t i = 0; i < got.peers.size(); ++i) {
    EXPECT_EQ(got.peers[i].id, want.peers[i].id);
    EXPECT_EQ(got.peers[i].left, want.peers[i].left);
    EXPECT_EQ(got.peers[i].last_announce_age_ms, want.peers[i].last_announce_age_ms);
  }
  EXPECT_EQ(got.counters, want.counters);
  EXPECT_TRUE(got.remediation.empty());
  // The remediation under way of the first swarm, field by field.
  ASSERT_EQ(c.swarms[0].remediation.size(), 1u);
  const auto& p = c.swarms[0].remediation[0];
  EXPECT_TRUE(p.started);
  EXPECT_EQ(p.knobs.policy, policy_kind::flash_crowd);
  EXPECT_TRUE(p.knobs.seeder_warning);
  EXPECT_EQ(p.active, (std::vector<std::uint16_t>{static_cast<std::uint16_t>(strategy::flash_crowd)}));
  EXPECT_EQ(p.trial, static_cast<std::int16_t>(strategy::flash_crowd));
  EXPECT_EQ(p.trial_age_ms, 42000);
  EXPECT_EQ(p.trial_ticks, 1u);
  EXPECT_EQ(p.healthy_age_ms, -1);
  ASSERT_EQ(c.bans.size(), 2u);
  EXPECT_EQ(c.bans[0].prefix, "-XX0001-");
  EXPECT_EQ(c.bans[1].reason, "abuse");
  ASSERT_EQ(c.holds.pinned.size(), 1u);
  EXPECT_EQ(c.holds.pinned[0].first, test::filled_hash(1));
  EXPECT_EQ(c.holds.pinned[0].second, "role-aware");
  ASSERT_EQ(c.holds.holdoff_left_ms.size(), 1u);
  EXPECT_EQ(c.holds.holdoff_left_ms[0].second, 120000);
  EXPECT_EQ(c.access.mode, "deny");
  EXPECT_EQ(c.access.hashes,
            (std::vector<info_hash>{test::filled_hash(7), test::filled_hash(8)}));
  // `begin` came first, with the file's time.
  EXPECT_EQ(c.begun_at, 1'700'000'123'456);
  // The temporary file is gone after the rename; the file is private.
  EXPECT_FALSE(fs::exists(fs::path(dir_) / state_file::temp_name));
  struct stat st {};
  ASSERT_EQ(::stat(state_file::path_in(dir_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

std::uint32_t le32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(p[i])) << (8 * i);
  return v;
}
void put_le32(char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>(v >> (8 * i));
}

/// Makes `bytes` (a whole file of this build's version) a file of version
/// `v` < 3 as that version wrote it: the header's version, every swarm
/// record in the shorter layout without the remediation under way (which
/// is dropped), and the trailer's CRC computed again (it covers the whole
/// file before it). `header_size` 24, frames of kind (1) + length (4).
void as_version(std::vector<char>& bytes, std::uint8_t v) {
  std::vector<char> out(bytes.begin(), bytes.begin() + 24);
  out[8] = static_cast<char>(v);
  std::size_t at = 24;
  while (static_cast<std::uint8_t>(bytes[at]) != 0xFFu) {
    const std::uint8_t kind = static_cast<std::uint8_t>(bytes[at]);
    const std::uint32_t length = le32(bytes.data() + at + 1);
    std::vector<char> payload(bytes.begin() + at + 5, bytes.begin() + at + 5 + length);
    if (kind == 1) {
      swarm_snapshot snap;
      caf::binary_deserializer in{static_cast<caf::execution_unit*>(nullptr), payload.data(),
                                  payload.size()};
      ASSERT_FALSE(in(snap));
      payload.clear();
      caf::binary_serializer sink{static_cast<caf::execution_unit*>(nullptr), payload};
      swarm_snapshot_v2 old{snap};
      ASSERT_FALSE(sink(old));
    }
    char frame[5];
    frame[0] = static_cast<char>(kind);
    put_le32(frame + 1, static_cast<std::uint32_t>(payload.size()));
    out.insert(out.end(), frame, frame + 5);
    out.insert(out.end(), payload.begin(), payload.end());
    at += 5 + length;
  }
  std::vector<char> trailer(bytes.begin() + at, bytes.end());
  ASSERT_EQ(trailer.size(), 21u);
  const auto crc = static_cast<std::uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(out.data()),
              static_cast<uInt>(out.size())));
  put_le32(trailer.data() + 13, crc);
  out.insert(out.end(), trailer.begin(), trailer.end());
  bytes = std::move(out);
}

void as_version_one(std::vector<char>& bytes) { as_version(bytes, 1); }

TEST_F(StateFile, AVersionTwoFileIsStillRead) {
  // Version 2 swarm records end before the remediation under way.
  const auto v3 = write_sample();
  auto v2 = v3;
  as_version(v2, 2);
  EXPECT_LT(v2.size(), v3.size());
  collected c, c3;
  auto r = state_file::read_bytes(v2, sink_into(c));
  ASSERT_EQ(r.status, outcome::loaded) << r.problem;
  ASSERT_EQ(state_file::read_bytes(v3, sink_into(c3)).status, outcome::loaded);
  ASSERT_EQ(c.swarms.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.swarms[i].hash, c3.swarms[i].hash);
    EXPECT_EQ(c.swarms[i].peers.size(), c3.swarms[i].peers.size());
    EXPECT_EQ(c.swarms[i].downloaded, c3.swarms[i].downloaded);
    EXPECT_TRUE(c.swarms[i].remediation.empty());
  }
  EXPECT_FALSE(c3.swarms[0].remediation.empty()) << "the sample's first swarm is being remediated";
  EXPECT_EQ(c.access.hashes.size(), 2u);
  // A version-3 record under a version-2 header is refused, not misread.
  auto mixed = v3;
  mixed[8] = 2;
  const std::size_t trailer = mixed.size() - 21;
  put_le32(mixed.data() + trailer + 13,
           static_cast<std::uint32_t>(::crc32(::crc32(0L, Z_NULL, 0),
                                              reinterpret_cast<const Bytef*>(mixed.data()),
                                              static_cast<uInt>(trailer))));
  collected cm;
  auto rm = state_file::read_bytes(mixed, sink_into(cm));
  EXPECT_EQ(rm.status, outcome::refused);
  EXPECT_EQ(cm.calls, 0);
}

TEST_F(StateFile, AVersionOneFileIsStillReadButMayNotHoldAnAccessList) {
  // A version-1 file: the same framing, without the access record (kind 4,
  // new in version 2). Its trailer's CRC covers the header, so the version
  // is changed before the checksum is computed again.
  std::string error;
  auto w = state_file::writer::open(dir_, 1'700'000'000'000, &error);
  ASSERT_TRUE(w) << error;
  ASSERT_TRUE(w->add(swarm_of(1, 4)));
  ASSERT_TRUE(w->commit(&error)) << error;
  auto bytes = file_bytes();
  as_version_one(bytes);
  collected c;
  auto r = state_file::read_bytes(bytes, sink_into(c));
  ASSERT_EQ(r.status, outcome::loaded) << r.problem;
  EXPECT_EQ(c.swarms.size(), 1u);

  // The same version-1 header on a file with an access record is refused.
  const auto v2 = write_sample();
  auto v1 = v2;
  as_version_one(v1);
  collected c2;
  auto r2 = state_file::read_bytes(v1, sink_into(c2));
  EXPECT_EQ(r2.status, outcome::refused);
  EXPECT_NE(r2.problem.find("kind 4"), std::string::npos) << r2.problem;
  EXPECT_EQ(c2.calls, 0);
}

TEST_F(StateFile, EveryTruncationIsRefusedWhole) {
  const auto bytes = write_sample();
  ASSERT_GT(bytes.size(), 100u);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    collected c;
    auto r = state_file::read_bytes(std::vector<char>(bytes.begin(), bytes.begin() + n),
                                    sink_into(c));
    ASSERT_EQ(r.status, outcome::refused) << "cut at " << n;
    EXPECT_FALSE(r.problem.empty());
    ASSERT_EQ(c.calls, 0) << "a record of a file cut at " << n << " was handed out";
  }
}

TEST_F(StateFile, EveryFlippedByteIsRefusedWhole) {
  const auto bytes = write_sample();
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    auto bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    collected c;
    auto r = state_file::read_bytes(bad, sink_into(c));
    // The written-time field is not covered by any check but the CRC, like
    // every other byte: nothing may slip through.
    ASSERT_EQ(r.status, outcome::refused) << "byte " << i;
    ASSERT_EQ(c.calls, 0) << "byte " << i;
  }
}

TEST_F(StateFile, ForeignVersionEmptyAndGarbageAreRefusedWithAReason) {
  auto bytes = write_sample();
  auto future = bytes;
  future[8] = static_cast<char>(state_file::version + 1);
  collected c;
  auto r = state_file::read_bytes(future, sink_into(c));
  EXPECT_EQ(r.status, outcome::refused);
  EXPECT_NE(r.problem.find("version"), std::string::npos) << r.problem;
  r = state_file::read_bytes({}, sink_into(c));
  EXPECT_EQ(r.status, outcome::refused);
  EXPECT_NE(r.problem.find("empty"), std::string::npos) << r.problem;
  r = state_file::read_bytes(std::vector<char>(1000, 'x'), sink_into(c));
  EXPECT_EQ(r.status, outcome::refused);
  EXPECT_NE(r.problem.find("magic"), std::string::npos) << r.problem;
  // Bytes appended after the trailer.
  auto longer = bytes;
  longer.push_back('!');
  r = state_file::read_bytes(longer, sink_into(c));
  EXPECT_EQ(r.status, outcome::refused);
  EXPECT_EQ(c.calls, 0);
}

TEST_F(StateFile, RefusedFileIsMovedAsideNotDeleted) {
  put_file({'g', 'a', 'r', 'b', 'a', 'g', 'e'});
  std::string error;
  const auto first = state_file::move_aside(dir_, &error);
  ASSERT_FALSE(first.empty()) << error;
  EXPECT_FALSE(fs::exists(state_file::path_in(dir_)));
  ASSERT_TRUE(fs::exists(first));
  EXPECT_EQ(fs::file_size(first), 7u);
  EXPECT_NE(first.find("swarmkeeper.state.bad-"), std::string::npos);
  // A second one in the same second gets a name of its own.
  put_file({'x'});
  const auto second = state_file::move_aside(dir_, &error);
  ASSERT_FALSE(second.empty()) << error;
  EXPECT_NE(first, second);
  EXPECT_TRUE(fs::exists(first));
  EXPECT_TRUE(fs::exists(second));
}

TEST_F(StateFile, AFailedWriteKeepsTheOldFile) {
  const auto old = write_sample();
  {
    std::string error;
    auto w = state_file::writer::open(dir_, 1, &error);
    ASSERT_TRUE(w) << error;
    ASSERT_TRUE(w->add(swarm_of(9, 3)));
    // Dropped before commit (a crash or an error mid-write).
  }
  EXPECT_EQ(file_bytes(), old);
  EXPECT_FALSE(fs::exists(fs::path(dir_) / state_file::temp_name));
}

TEST_F(StateFile, UnwritableDirectoryIsAnErrorNotACrash) {
  std::string error;
  auto w = state_file::writer::open("/proc/sk-no-such-dir/state", 1, &error);
  EXPECT_FALSE(w);
  EXPECT_FALSE(error.empty());
}

TEST(StateAging, DowntimeAgesPeersAndDropsTheExpired) {
  auto s = swarm_of(5, 10);
  // Peer i announced at t0 + i s; the snapshot was taken at t0 + 120 s, so
  // peer i is (120 - i) s old (peer 1 re-announced at t0 + 100 s: 20 s).
  std::vector<std::int64_t> before;
  for (const auto& p : s.peers) before.push_back(p.last_announce_age_ms);
  auto kept = s;
  EXPECT_EQ(age_snapshot(kept, 1000, 1h), 0u);
  for (std::size_t i = 0; i < kept.peers.size(); ++i)
    EXPECT_EQ(kept.peers[i].last_announce_age_ms, before[i] + 1000);
  // Down for 3,600 s with a timeout of 3,700 s: peers older than 100 s at
  // the snapshot are gone (ages 111..120 s: peers 0 and 2..9), peer 1 (20 s)
  // stays.
  auto aged = s;
  EXPECT_EQ(age_snapshot(aged, 3'600'000, 3700s), 9u);
  ASSERT_EQ(aged.peers.size(), 1u);
  EXPECT_EQ(aged.peers[0].id, test::numbered_peer(1));
  // A clock that went backwards is no downtime.
  auto back = s;
  EXPECT_EQ(age_snapshot(back, -5000, 1h), 0u);
  EXPECT_EQ(back.peers[0].last_announce_age_ms, before[0]);
}


/// A node of one scheduler thread holding three swarms of five peers,
/// whose worker a test can hold (a blocking actor) so that no swarm
/// answers until `release()`.
struct one_worker_node {
  static caf::actor_system_config& configured(caf::actor_system_config& c) {
    c.set("scheduler.max-threads", 1);
    c.set("logger.file-verbosity", caf::atom("quiet"));
    register_message_types(c);
    return c;
  }
  static swarm_config swarms() {
    swarm_config cfg;
    cfg.peer_timeout = std::chrono::hours(1);
    return cfg;
  }

  one_worker_node() {
    for (std::uint8_t b = 1; b <= 3; ++b) installed += dir.install(swarm_of(b, 5)) ? 1 : 0;
  }
  ~one_worker_node() {
    if (blocker) {
      if (!released) release();
      caf::anon_send_exit(blocker, caf::exit_reason::user_shutdown);
    }
    dir.stop_all();
  }
  bool filled() const { return installed == 3; }
  /// Returns once the worker runs the blocking actor.
  void hold() {
    std::promise<void> held;
    auto until = freed.get_future().share();
    blocker = sys.spawn([&held, until](caf::event_based_actor*) -> caf::behavior {
      return {[&held, until](caf::ok_atom) {
        held.set_value();
        until.wait();
      }};
    });
    caf::anon_send(blocker, caf::ok_atom::value);
    held.get_future().wait();
  }
  void release() {
    released = true;
    freed.set_value();
  }

  caf::actor_system_config cfg;
  caf::actor_system sys{configured(cfg)};
  swarm_directory dir{sys, swarms()};
  int installed = 0;
  std::promise<void> freed;
  bool released = false;
  caf::actor blocker;
};

// The keeper on a real scheduler of one worker thread, held by a blocking
// actor: the swarms cannot answer the keeper's snapshot requests. The
// write goes on without them after `swarm_timeout` with no answer (the old
// file is replaced, the swarms left out), and their answers, arriving once
// the worker is free, are dropped: the next write holds every swarm once.
TEST_F(StateFile, SwarmsThatDoNotAnswerAreLeftOutAndTheirLateAnswersDropped) {
  one_worker_node node;
  ASSERT_TRUE(node.filled());
  state_config sc;
  sc.dir = dir_;
  sc.period = 0ms;
  // Long enough for a slow machine (sanitizers) to answer the second write
  // in time.
  sc.swarm_timeout = 1s;
  state_keeper keeper(node.sys, node.dir, nullptr, sc);
  node.hold();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(keeper.save_now(20s));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 1s);
  EXPECT_EQ(keeper.stats()->last_swarms.load(), 0u);
  EXPECT_EQ(keeper.stats()->writes.load(), 1u);
  node.release();
  // The three late answers come before or while this write asks again:
  // they count for nothing, the new answers once each.
  EXPECT_TRUE(keeper.save_now(20s));
  EXPECT_EQ(keeper.stats()->last_swarms.load(), 3u);
  EXPECT_EQ(keeper.stats()->last_peers.load(), 15u);
  collected c;
  ASSERT_EQ(state_file::read(dir_, sink_into(c)).status, outcome::loaded);
  ASSERT_EQ(c.swarms.size(), 3u);
  std::set<info_hash> hashes;
  for (const auto& x : c.swarms) hashes.insert(x.hash);
  EXPECT_EQ(hashes.size(), 3u);
}


/// A log sink that lets a test wait for a line holding `needle`.
class line_waiter final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit line_waiter(std::string needle) : needle_(std::move(needle)) {}
  bool wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> g(m_);
    return cv_.wait_for(g, timeout, [this] { return seen_ > 0; });
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string text(msg.payload.data(), msg.payload.size());
    if (text.find(needle_) == std::string::npos) return;
    std::lock_guard<std::mutex> g(m_);
    ++seen_;
    cv_.notify_all();
  }
  void flush_() override {}

 private:
  const std::string needle_;
  std::mutex m_;
  std::condition_variable cv_;
  int seen_ = 0;
};

// Two saves while the swarms cannot answer (the one worker is held): the
// write the first began gives way to the second's at once (the log says
// so); once the worker is free both are answered by that one write, which
// holds every swarm once, and no temporary file is left.
/// Makes `logger` the default one while it lives. Declared before the
/// actor system, it is set before any of the system's threads starts and
/// put back after they are joined.
class default_logger_while {
 public:
  explicit default_logger_while(std::shared_ptr<spdlog::logger> logger)
      : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::move(logger));
  }
  ~default_logger_while() { spdlog::set_default_logger(previous_); }
  default_logger_while(const default_logger_while&) = delete;
  default_logger_while& operator=(const default_logger_while&) = delete;

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(StateFile, ASaveAskedDuringAWriteAbandonsItAndOneNewWriteAnswersBoth) {
  auto waiter = std::make_shared<line_waiter>("gives way to a new one");
  default_logger_while logs{std::make_shared<spdlog::logger>("wait", waiter)};
  one_worker_node node;
  ASSERT_TRUE(node.filled());
  state_config sc;
  sc.dir = dir_;
  sc.period = 0ms;
  sc.swarm_timeout = 30s;
  state_keeper keeper(node.sys, node.dir, nullptr, sc);
  node.hold();
  keeper.start();  // one keeper actor before the two callers race to it
  auto first = std::async(std::launch::async, [&keeper] { return keeper.save_now(60s); });
  auto second = std::async(std::launch::async, [&keeper] { return keeper.save_now(60s); });
  const bool gave_way = waiter->wait(30s);
  node.release();
  EXPECT_TRUE(gave_way);
  EXPECT_TRUE(first.get());
  EXPECT_TRUE(second.get());
  EXPECT_EQ(keeper.stats()->writes.load(), 1u);
  EXPECT_EQ(keeper.stats()->last_swarms.load(), 3u);
  collected c;
  ASSERT_EQ(state_file::read(dir_, sink_into(c)).status, outcome::loaded);
  EXPECT_EQ(c.swarms.size(), 3u);
  EXPECT_FALSE(fs::exists(fs::path(dir_) / state_file::temp_name));
}

}  // namespace
}  // namespace sk
