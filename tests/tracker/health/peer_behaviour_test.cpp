#include "tracker/peer_behaviour.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace sk {
namespace {

using namespace std::chrono_literals;

constexpr std::uint64_t mib = 1ull << 20;
constexpr std::uint64_t torrent = 1000 * mib;

/// One peer announcing to one swarm, with an injected clock. `req` persists
/// between announces, so a test changes only what the client would change.
struct peer_sim {
  behaviour_config cfg;
  peer_traits t;
  announce_request req;
  health_time now = health_time{} + 24h;
  std::uint64_t torrent_size = torrent;
  bool known = false;

  peer_sim() {
    req.key = "A1B2C3D4";
    req.left = torrent;
  }

  /// Announces `after` the previous one (or the start) with `ev`.
  behaviour_verdict announce(std::chrono::seconds after, announce_event ev = announce_event::none) {
    now += after;
    req.event = ev;
    const bool is_new = !known;
    known = true;
    return observe_announce(t, req, is_new, now, torrent_size, cfg);
  }
  /// The usual first announce.
  behaviour_verdict start() { return announce(0s, announce_event::started); }
  /// Downloads and uploads some bytes, then announces.
  behaviour_verdict progress(std::chrono::seconds after, std::uint64_t down, std::uint64_t up,
                             announce_event ev = announce_event::none) {
    req.downloaded += down;
    req.uploaded += up;
    req.left = req.left > down ? req.left - down : 0;
    return announce(after, ev);
  }
};

/// A fresh seed, or SK_TEST_SEED from the environment to replay a failure.
std::uint64_t test_seed() {
  if (const char* env = std::getenv("SK_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return std::random_device{}();
}

void expect_clean(const behaviour_verdict& v) {
  EXPECT_EQ(v.findings, 0u) << findings_to_string(v.findings);
  EXPECT_FALSE(v.warn);
  EXPECT_FALSE(v.refuse);
  EXPECT_FALSE(v.quarantine);
  EXPECT_TRUE(v.message.empty()) << v.message;
}

// --- the clean session --------------------------------------------------------

TEST(PeerBehaviour, CleanLibtorrentSessionRaisesNothing) {
  // What libtorrent sends to a tracker with interval 1800 / min interval 900:
  // started; re-announces at the interval (a little early or late: timers,
  // queueing); one early re-announce at exactly min interval when it wants
  // more peers; `completed` the moment the download ends; seeding announces;
  // `stopped` whenever the user quits.
  peer_sim p;
  int completions = 0;
  auto check = [&](const behaviour_verdict& v) {
    expect_clean(v);
    completions += v.completed ? 1 : 0;
  };
  check(p.start());
  check(p.progress(1800s, 200 * mib, 40 * mib));
  check(p.progress(1795s, 200 * mib, 60 * mib));  // 5 s early: timer jitter
  check(p.progress(900s, 100 * mib, 30 * mib));   // exactly min interval
  check(p.progress(1810s, 200 * mib, 50 * mib));  // a little late
  EXPECT_EQ(p.t.left, 300 * mib);
  check(p.progress(1000s, 300 * mib, 20 * mib, announce_event::completed));
  EXPECT_EQ(p.t.left, 0u);
  check(p.progress(1800s, 0, 300 * mib));
  check(p.progress(1800s, 0, 200 * mib));
  check(p.progress(1800s, 0, 0));  // nobody wanted anything
  check(p.progress(120s, 0, 10 * mib, announce_event::stopped));

  EXPECT_EQ(completions, 1);
  EXPECT_EQ(p.t.strikes, 0u);
  EXPECT_EQ(p.t.early_announces, 0u);
  EXPECT_EQ(p.t.flags, 0u);
  EXPECT_EQ(p.t.announces, 10u);
  EXPECT_EQ(p.t.key, "A1B2C3D4");
  ASSERT_TRUE(p.t.completed_at.has_value());
  EXPECT_FLOAT_EQ(p.t.progress, 1.0f);
}

TEST(PeerBehaviour, RandomCleanSessionsRaiseNothing) {
  // Many honest sessions with random timing (never sooner than min interval
  // minus the slack), random but possible transfer amounts, a completion when
  // the data is in, seeding, and a stop. Not one finding may come out.
  const std::uint64_t seed = test_seed();
  std::printf("clean session seed: %llu\n", static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  for (int session = 0; session < 200; ++session) {
    peer_sim p;
    p.req.key = std::to_string(pick(0, 1u << 30));
    p.req.left = pick(0, 4) == 0 ? 0 : pick(1, torrent);  // some start as seeders
    // Session counters start at zero, also for a resumed download.
    int completions = 0;
    auto check = [&](const behaviour_verdict& v) {
      EXPECT_EQ(v.findings & misbehaviour_findings, 0u) << findings_to_string(v.findings);
      EXPECT_FALSE(v.warn);
      EXPECT_FALSE(v.refuse);
      EXPECT_FALSE(v.quarantine);
      completions += v.completed ? 1 : 0;
    };
    const bool seeder_at_start = p.req.left == 0;
    check(p.start());
    const int announces = static_cast<int>(pick(1, 20));
    for (int i = 0; i < announces; ++i) {
      constexpr std::uint64_t rate = 50 * mib;  // per second, a fast seedbox
      const std::uint64_t gap = pick(856, 3600);
      const std::uint64_t down = std::min(p.req.left, pick(0, gap * rate));
      const bool finishing = down > 0 && down == p.req.left;
      // `completed` goes out as soon as the data is in, not on the timer:
      // any time after the download can have happened.
      const std::uint64_t elapsed = finishing ? pick(down / rate + 1, gap) : gap;
      const std::uint64_t up = pick(0, elapsed * rate);
      const auto after = std::chrono::seconds(elapsed);
      check(p.progress(after, down, up,
                       finishing ? announce_event::completed : announce_event::none));
    }
    check(p.progress(std::chrono::seconds(pick(0, 3600)), 0, 0, announce_event::stopped));
    EXPECT_EQ(completions, !seeder_at_start && p.req.left == 0 ? 1 : 0);
    EXPECT_EQ(p.t.strikes, 0u);
  }
}

TEST(PeerBehaviour, RandomHostileAnnouncesKeepInvariants) {
  const std::uint64_t seed = test_seed();
  std::printf("hostile announce seed: %llu\n", static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  const announce_event events[] = {announce_event::none, announce_event::started,
                                   announce_event::completed, announce_event::stopped};
  for (int session = 0; session < 200; ++session) {
    peer_sim p;
    p.start();
    for (int i = 0; i < 50; ++i) {
      p.req.left = pick(0, 3) == 0 ? 0 : pick(0, torrent);
      p.req.uploaded = pick(0, ~0ull);
      p.req.downloaded = pick(0, 4) == 0 ? 0 : pick(0, ~0ull);
      p.req.key = pick(0, 5) == 0 ? "" : std::to_string(pick(0, 3));
      const auto v = p.announce(std::chrono::seconds(pick(0, 4000)), events[pick(0, 3)]);
      EXPECT_FALSE(v.warn && v.refuse);
      EXPECT_EQ(!v.message.empty(), v.warn || v.refuse) << v.message;
      EXPECT_EQ(v.quarantine, p.t.has(flag_quarantined));
      EXPECT_EQ(p.t.has(flag_quarantined), p.t.strikes >= p.cfg.quarantine_strikes);
      if (p.t.has(flag_stalled)) {
        EXPECT_GT(p.t.left, 0u);
      }
      if (v.refuse) {
        EXPECT_GE(v.retry_in, 1s);
      }
      EXPECT_GE(p.t.progress, 0.0f);
      EXPECT_LE(p.t.progress, 1.0f);
    }
  }
}

TEST(PeerBehaviour, NewPeerIsInitialised) {
  peer_sim p;
  // Leftovers of a previous life of the record must not carry over, except
  // what a reachability probe found.
  p.t.strikes = 7;
  p.t.early_announces = 2;
  p.t.key = "old";
  p.t.flags = flag_quarantined | flag_stalled | flag_warned | flag_reachable;
  p.req.left = 250 * mib;
  const auto v = p.start();
  expect_clean(v);
  EXPECT_FALSE(v.completed);
  EXPECT_EQ(p.t.first_seen, p.now);
  EXPECT_EQ(p.t.last_announce, p.now);
  EXPECT_EQ(p.t.last_progress, p.now);
  EXPECT_EQ(p.t.announces, 1u);
  EXPECT_EQ(p.t.strikes, 0u);
  EXPECT_EQ(p.t.early_announces, 0u);
  EXPECT_EQ(p.t.key, "A1B2C3D4");
  EXPECT_EQ(p.t.flags, flag_reachable);
  EXPECT_FLOAT_EQ(p.t.progress, 0.75f);
}

TEST(PeerBehaviour, NewPeerSendingCompletedCountsOnce) {
  peer_sim p;
  p.req.left = 0;
  const auto v = p.announce(0s, announce_event::completed);
  EXPECT_TRUE(v.completed);
  ASSERT_TRUE(p.t.completed_at.has_value());
  EXPECT_EQ(*p.t.completed_at, p.now);
}

TEST(PeerBehaviour, NewSeederHasNoCompletionTime) {
  peer_sim p;
  p.req.left = 0;
  const auto v = p.start();
  EXPECT_FALSE(v.completed);
  EXPECT_FALSE(p.t.completed_at.has_value());
  EXPECT_FLOAT_EQ(p.t.progress, 1.0f);
}

// --- timing ---------------------------------------------------------------------

TEST(PeerBehaviour, RepeatsWithinTheWindowAreCoalesced) {
  // libtorrent with two trackers (http:// and udp://) or two listen sockets
  // announces the same thing several times within milliseconds.
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 10 * mib);
  const peer_traits before = p.t;
  for (int i = 0; i < 3; ++i) {
    p.now += 5ms;
    const auto v = p.announce(0s);
    expect_clean(v);
    EXPECT_TRUE(v.repeat);
    EXPECT_FALSE(v.early);
  }
  // Nothing of a repeat is taken: the interval is still timed from the
  // accepted announce.
  EXPECT_EQ(p.t.last_announce, before.last_announce);
  EXPECT_EQ(p.t.announces, before.announces);
  EXPECT_EQ(p.t.early_announces, 0u);
  EXPECT_EQ(p.t.strikes, 0u);
}

TEST(PeerBehaviour, RepeatOfTheSameEventIsCoalesced) {
  peer_sim p;
  p.req.key = "key1";
  p.start();
  // started over both transports: the second is a repeat, not a restart.
  auto v = p.announce(0s, announce_event::started);
  EXPECT_TRUE(v.repeat);
  expect_clean(v);
  // completed over both transports: one completion, no repeated-completed.
  p.req.left = 0;
  p.req.downloaded = torrent;
  v = p.announce(600s, announce_event::completed);
  EXPECT_TRUE(v.completed);
  v = p.announce(0s, announce_event::completed);
  EXPECT_TRUE(v.repeat);
  EXPECT_FALSE(v.completed);
  expect_clean(v);
  EXPECT_EQ(p.t.strikes, 0u);
}

TEST(PeerBehaviour, RepeatToleratesCounterNoiseOnly) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 0);
  auto v = p.progress(1s, 4 * mib, 2 * mib);  // a few seconds of transfer
  EXPECT_TRUE(v.repeat);
  v = p.progress(1s, 40 * mib, 0);  // beyond the noise: news, early
  EXPECT_FALSE(v.repeat);
  EXPECT_TRUE(v.early);
  expect_clean(v);
}

TEST(PeerBehaviour, RoleChangeOrAnotherEventIsNotARepeat) {
  peer_sim p;
  p.start();
  p.req.left = 1;
  p.progress(1800s, 0, 0);
  auto v = p.progress(0s, 1, 0);  // left 1 -> 0: completion, not a repeat
  EXPECT_FALSE(v.repeat);
  EXPECT_TRUE(v.completed);
  v = p.announce(0s, announce_event::stopped);
  EXPECT_FALSE(v.repeat);
  expect_clean(v);
}

TEST(PeerBehaviour, RepeatWindowIsConfigurableAndEndsAtTheEarlyThreshold) {
  peer_sim p;
  p.cfg.min_interval = 10s;  // early below 5 s
  p.start();
  // On time: an ordinary announce, even with nothing moved.
  auto v = p.announce(6s);
  EXPECT_FALSE(v.repeat);
  EXPECT_FALSE(v.early);
  v = p.announce(1s);
  EXPECT_TRUE(v.repeat);
  p.cfg.duplicate_window = 0s;
  v = p.announce(1s);
  EXPECT_FALSE(v.repeat);
  EXPECT_TRUE(v.early);
}

TEST(PeerBehaviour, OneEarlyAnnounceIsTolerated) {
  // A user pressing "update tracker" after a while: early, not a repeat.
  peer_sim p;
  p.start();
  const auto v = p.progress(300s, 50 * mib, 0);
  expect_clean(v);
  EXPECT_TRUE(v.early);
  EXPECT_FALSE(v.repeat);
  EXPECT_EQ(p.t.early_announces, 1u);
  EXPECT_EQ(p.t.last_announce, p.now);  // served and taken
}

TEST(PeerBehaviour, SustainedEarlyAnnouncingWarnsThenRefuses) {
  peer_sim p;
  p.start();
  EXPECT_TRUE(p.progress(100s, 50 * mib, 0).early);
  EXPECT_TRUE(p.progress(100s, 50 * mib, 0).early);
  auto v = p.progress(100s, 50 * mib, 0);  // the third in a row
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_too_frequent));
  EXPECT_TRUE(v.warn);
  EXPECT_FALSE(v.refuse);
  EXPECT_EQ(v.message,
            "announcing too often: wait at least 900 s (min interval) between announces");
  EXPECT_TRUE(p.t.has(flag_warned));
  EXPECT_EQ(p.t.strikes, 0u);  // frequency escalates by refusal, not quarantine
  EXPECT_TRUE(p.progress(100s, 50 * mib, 0).warn);
  const health_time accepted = p.now;
  const std::uint64_t left = p.t.left;
  v = p.progress(200s, 50 * mib, 0);  // the fifth
  EXPECT_TRUE(v.refuse);
  EXPECT_FALSE(v.warn);
  EXPECT_EQ(v.retry_in, 700s);  // 900 s after the last accepted announce
  EXPECT_EQ(v.message, "announcing too often (min interval 900 s): retry in 700 s");
  // The refused announce was not taken.
  EXPECT_EQ(p.t.last_announce, accepted);
  EXPECT_EQ(p.t.left, left);
  EXPECT_EQ(p.t.early_announces, 5u);

  // Retrying after `retry in` is on time again and clears everything.
  expect_clean(p.announce(700s));
  EXPECT_EQ(p.t.early_announces, 0u);
  EXPECT_FALSE(p.t.has(flag_warned));
}

TEST(PeerBehaviour, RetryInIsRoundedUpAndAtLeastOneSecond) {
  peer_sim p;
  p.cfg.early_warn_after = 1;
  p.cfg.early_refuse_after = 1;
  p.cfg.duplicate_window = 0s;
  p.start();
  p.now += std::chrono::milliseconds(500);
  auto v = p.announce(0s);
  EXPECT_TRUE(v.refuse);
  EXPECT_EQ(v.retry_in, 900s);  // 899.5 s rounds up
  p.cfg.early_announce_slack = 0s;
  p.cfg.early_announce_slack_fraction = 0.0;
  v = p.announce(899s);
  EXPECT_TRUE(v.refuse);
  EXPECT_EQ(v.retry_in, 1s);
}

TEST(PeerBehaviour, OnTimeAnnounceResetsTheEarlyStreak) {
  peer_sim p;
  p.cfg.early_warn_after = 2;
  p.start();
  EXPECT_TRUE(p.progress(100s, 50 * mib, 0).early);
  EXPECT_TRUE(p.progress(100s, 50 * mib, 0).warn);
  expect_clean(p.announce(900s));
  EXPECT_FALSE(p.t.has(flag_warned));
  EXPECT_EQ(p.t.early_announces, 0u);
  // A new streak starts over.
  const auto v = p.progress(100s, 50 * mib, 0);
  EXPECT_TRUE(v.early);
  EXPECT_FALSE(v.warn);
}

TEST(PeerBehaviour, SlackToleratesSlightlyEarlyAnnounces) {
  // Default slack at 900 s: max(30 s, 5 % = 45 s) = 45 s.
  peer_sim p;
  p.start();
  const auto on_time = p.announce(856s);
  expect_clean(on_time);
  EXPECT_FALSE(on_time.early);
  EXPECT_TRUE(p.progress(854s, 50 * mib, 0).early);
}

TEST(PeerBehaviour, ShortMinIntervalIsStillEnforced) {
  // The 30 s slack would swallow a 10 s min interval; it is capped at half.
  peer_sim p;
  p.cfg.min_interval = 10s;
  p.cfg.duplicate_window = 0s;
  p.start();
  EXPECT_FALSE(p.announce(5s).early);
  EXPECT_TRUE(p.announce(4s).early);
  EXPECT_TRUE(p.announce(1s).early);
  const auto v = p.announce(1s);
  EXPECT_TRUE(v.warn);
  EXPECT_EQ(v.message, "announcing too often: wait at least 10 s (min interval) between announces");
  EXPECT_TRUE(p.announce(1s).warn);
  const auto refused = p.announce(1s);
  EXPECT_TRUE(refused.refuse);
  EXPECT_EQ(refused.retry_in, 9s);  // 10 s after the last accepted announce
}

TEST(PeerBehaviour, EventsAreNeverEarly) {
  // started, completed, stopped and paused are sent when they happen.
  peer_sim p;
  p.cfg.duplicate_window = 0s;
  p.start();
  for (int i = 0; i < 6; ++i) {
    const auto v = p.announce(1s, announce_event::started);
    expect_clean(v);
    EXPECT_FALSE(v.early);
  }
  p.req.left = 100 * mib;
  for (int i = 0; i < 6; ++i) {
    const auto v = p.announce(1s, announce_event::paused);
    expect_clean(v);
    EXPECT_FALSE(v.early);
  }
  p.req.left = 0;
  p.req.downloaded = torrent;
  const auto done = p.announce(1s, announce_event::completed);
  expect_clean(done);
  EXPECT_TRUE(done.completed);
  expect_clean(p.announce(1s, announce_event::stopped));
}

TEST(PeerBehaviour, EnforcementSteps) {
  peer_sim p;
  p.cfg.early_refuse_after = 0;  // never refuse
  p.cfg.duplicate_window = 0s;
  p.start();
  for (int i = 0; i < 8; ++i) {
    const auto v = p.announce(10s);
    EXPECT_EQ(v.warn, i >= 2) << i;
    EXPECT_FALSE(v.refuse);
  }
  peer_sim q;
  q.cfg.early_warn_after = 0;  // never warn: tolerate, then refuse
  q.cfg.duplicate_window = 0s;
  q.start();
  for (int i = 0; i < 4; ++i) {
    const auto v = q.announce(10s);
    EXPECT_FALSE(v.warn);
    EXPECT_FALSE(v.refuse);
  }
  EXPECT_TRUE(q.announce(10s).refuse);
}

// --- the benign patterns of real clients --------------------------------------------

TEST(PeerBehaviour, MagnetStartIsNotLeftRising) {
  // A magnet link: the client knows no size before the metadata arrives, so
  // it announces left = 0 with nothing downloaded, then the real left.
  peer_sim p;
  p.req.left = 0;
  p.start();
  p.req.left = torrent;
  const auto v = p.announce(20s);
  expect_clean(v);
  EXPECT_EQ(p.t.strikes, 0u);
  EXPECT_EQ(p.t.left, torrent);
  EXPECT_FALSE(p.t.completed_at.has_value());
}

TEST(PeerBehaviour, CounterResetWithoutStartedIsARestart) {
  // A client restarted from resume data without sending `started`: both
  // transfer counters are back near zero, left may have risen (re-check),
  // and the key may be new.
  peer_sim p;
  p.start();
  p.progress(1800s, 300 * mib, 200 * mib);
  p.req.uploaded = 0;
  p.req.downloaded = mib;
  p.req.left += 20 * mib;
  p.req.key = "FEEDF00D";
  const auto v = p.announce(1800s);
  expect_clean(v);
  EXPECT_EQ(p.t.strikes, 0u);
  EXPECT_EQ(p.t.key, "FEEDF00D");
}

TEST(PeerBehaviour, PartialSeedSelectingMoreFilesIsNotLeftRising) {
  peer_sim p;
  p.start();
  p.progress(1800s, 400 * mib, 0, announce_event::paused);
  EXPECT_TRUE(p.t.has(flag_partial_seed));
  p.req.left += 200 * mib;  // the user picked more files: downloading again
  const auto v = p.announce(1800s);
  expect_clean(v);
  EXPECT_FALSE(p.t.has(flag_partial_seed));
}

TEST(PeerBehaviour, PartialSeedsAreNeverStalled) {
  peer_sim p;
  p.start();
  p.progress(600s, 300 * mib, 0);
  for (int i = 0; i < 10; ++i) {
    const auto v = p.announce(1800s, announce_event::paused);
    expect_clean(v);
  }
  EXPECT_TRUE(p.t.has(flag_partial_seed));
  EXPECT_FALSE(p.t.has(flag_stalled));
  EXPECT_EQ(p.t.announces_without_progress, 0u);
  // `paused` with nothing left is a seeder, not a partial seed.
  p.req.left = 0;
  p.req.downloaded = torrent;
  p.announce(1800s, announce_event::paused);
  EXPECT_FALSE(p.t.has(flag_partial_seed));
}

// --- counter sanity ---------------------------------------------------------------

TEST(PeerBehaviour, LeftRisingIsCaught) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 0);
  p.req.left += 50 * mib;
  const auto v = p.announce(1800s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_left_rising));
  EXPECT_TRUE(v.warn);
  EXPECT_EQ(v.message, "inconsistent announce (left-rising)");
  EXPECT_EQ(p.t.strikes, 1u);
  EXPECT_TRUE(p.t.has(flag_warned));
}

TEST(PeerBehaviour, UploadedGoingBackwardsIsCaught) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 80 * mib);
  p.req.uploaded -= 1;
  const auto v = p.announce(1800s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_counters_backwards));
  EXPECT_EQ(p.t.strikes, 1u);
}

TEST(PeerBehaviour, DownloadedGoingBackwardsIsCaught) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 80 * mib);
  p.req.downloaded = 10 * mib;
  const auto v = p.announce(1800s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_counters_backwards));
  // Counted once: the next announce compares with the stored lower value.
  expect_clean(p.progress(1800s, mib, 0));
}

TEST(PeerBehaviour, RestartMayResetCountersAndRaiseLeft) {
  peer_sim p;
  p.start();
  p.progress(1800s, 300 * mib, 100 * mib);
  // The client restarts: new session counters, a re-check lost some data,
  // and a new key.
  p.req.uploaded = 0;
  p.req.downloaded = 0;
  p.req.left = 800 * mib;
  p.req.key = "0000BEEF";
  expect_clean(p.announce(1800s, announce_event::started));
  EXPECT_EQ(p.t.key, "0000BEEF");
  EXPECT_EQ(p.t.uploaded, 0u);
}

TEST(PeerBehaviour, ImpossibleRateIsCaught) {
  peer_sim p;
  p.start();
  // 1800 s at 1 % above 10 Gbit/s.
  p.req.uploaded += static_cast<std::uint64_t>(1800 * 1.25e9 * 1.01);
  const auto v = p.announce(1800s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_impossible_rate));
  EXPECT_EQ(p.t.strikes, 1u);
}

TEST(PeerBehaviour, FastButPossibleRateIsFine) {
  peer_sim p;
  p.start();
  const auto bytes = static_cast<std::uint64_t>(1800 * 1.25e9 * 0.99);
  p.req.downloaded += bytes;
  p.req.uploaded += bytes;
  expect_clean(p.announce(1800s));
}

TEST(PeerBehaviour, RateOfSimultaneousAnnouncesUsesMinimumInterval) {
  peer_sim p;
  p.start();
  p.req.left = 0;
  p.req.downloaded += 2'000'000'000;  // 2 GB "in no time": over 1 s it is still too much
  const auto v = p.announce(0s, announce_event::completed);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_impossible_rate));
}

TEST(PeerBehaviour, RepeatedCompletedIsCaught) {
  peer_sim p;
  p.start();
  const auto done = p.progress(1800s, torrent, 0, announce_event::completed);
  EXPECT_TRUE(done.completed);
  expect_clean(p.progress(1800s, 0, 100 * mib));
  const auto again = p.progress(1800s, 0, 100 * mib, announce_event::completed);
  EXPECT_EQ(again.findings, static_cast<std::uint32_t>(finding_repeated_completed));
  EXPECT_FALSE(again.completed);
  EXPECT_EQ(p.t.strikes, 1u);
}

TEST(PeerBehaviour, RetransmittedCompletedIsNotRepeated) {
  // A UDP client whose reply was lost resends the same request.
  peer_sim p;
  p.start();
  EXPECT_TRUE(p.progress(1800s, torrent, 0, announce_event::completed).completed);
  const auto resent = p.announce(15s, announce_event::completed);
  expect_clean(resent);
  EXPECT_FALSE(resent.completed);
}

TEST(PeerBehaviour, CompletedAgainAfterRestartIsAllowed) {
  peer_sim p;
  p.start();
  EXPECT_TRUE(p.progress(1800s, torrent, 0, announce_event::completed).completed);
  // Restart as a leecher (a re-check found a bad file), download it again.
  p.req.left = 100 * mib;
  p.req.downloaded = 0;
  p.req.uploaded = 0;
  expect_clean(p.announce(1800s, announce_event::started));
  EXPECT_FALSE(p.t.completed_at.has_value());
  const auto again = p.progress(600s, 100 * mib, 0, announce_event::completed);
  expect_clean(again);
  EXPECT_TRUE(again.completed);
}

TEST(PeerBehaviour, SeederRestartKeepsCompletionTime) {
  peer_sim p;
  p.start();
  p.progress(1800s, torrent, 0, announce_event::completed);
  const health_time done = *p.t.completed_at;
  p.req.uploaded = p.req.downloaded = 0;
  expect_clean(p.announce(1800s, announce_event::started));
  ASSERT_TRUE(p.t.completed_at.has_value());
  EXPECT_EQ(*p.t.completed_at, done);
}

TEST(PeerBehaviour, SilentTransitionToSeederCountsOneCompletion) {
  peer_sim p;
  p.start();
  const auto v = p.progress(1800s, torrent, 0);  // left reaches 0, no event
  expect_clean(v);
  EXPECT_TRUE(v.completed);
  ASSERT_TRUE(p.t.completed_at.has_value());
  EXPECT_FALSE(p.progress(1800s, 0, mib).completed);
}

// --- key ------------------------------------------------------------------------------

TEST(PeerBehaviour, KeyMismatchIsCaughtAndFirstKeyKept) {
  peer_sim p;
  p.start();
  p.req.key = "DEADBEEF";
  const auto v = p.progress(1800s, mib, 0);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_key_mismatch));
  EXPECT_TRUE(v.warn);
  EXPECT_EQ(p.t.key, "A1B2C3D4");
  EXPECT_EQ(p.t.strikes, 1u);
  // The owner of the first key announces normally again.
  p.req.key = "A1B2C3D4";
  expect_clean(p.progress(1800s, mib, 0));
}

TEST(PeerBehaviour, KeyComparisonIgnoresCaseAndAbsence) {
  peer_sim p;
  p.start();
  p.req.key = "a1b2c3d4";  // the same key as lower-case hex (HTTP vs UDP)
  expect_clean(p.progress(1800s, mib, 0));
  p.req.key.clear();  // no key this time: says nothing
  expect_clean(p.progress(1800s, mib, 0));
  EXPECT_EQ(p.t.key, "A1B2C3D4");
}

TEST(PeerBehaviour, FirstKeyMayComeLater) {
  peer_sim p;
  p.req.key.clear();
  p.start();
  EXPECT_TRUE(p.t.key.empty());
  p.req.key = "CAFEF00D";
  expect_clean(p.progress(1800s, mib, 0));
  EXPECT_EQ(p.t.key, "CAFEF00D");
  p.req.key = "00000001";
  EXPECT_EQ(p.progress(1800s, mib, 0).findings, static_cast<std::uint32_t>(finding_key_mismatch));
}

// --- stall ----------------------------------------------------------------------------

TEST(PeerBehaviour, StalledAfterAnnouncesAndTime) {
  peer_sim p;
  p.start();
  EXPECT_EQ(p.announce(1800s).findings, 0u);
  EXPECT_EQ(p.announce(1800s).findings, 0u);
  EXPECT_FALSE(p.t.has(flag_stalled));
  const auto v = p.announce(1800s);  // third announce without progress, 90 min
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_stalled));
  EXPECT_FALSE(v.warn);  // not misbehaviour
  EXPECT_TRUE(p.t.has(flag_stalled));
  EXPECT_EQ(p.t.announces_without_progress, 3u);
  // Reported on the change only.
  EXPECT_EQ(p.announce(1800s).findings, 0u);
  EXPECT_TRUE(p.t.has(flag_stalled));
}

TEST(PeerBehaviour, StallClearedByAnyProgress) {
  peer_sim p;
  p.start();
  for (int i = 0; i < 3; ++i) p.announce(1800s);
  ASSERT_TRUE(p.t.has(flag_stalled));
  expect_clean(p.progress(1800s, 1, 0));
  EXPECT_FALSE(p.t.has(flag_stalled));
  EXPECT_EQ(p.t.announces_without_progress, 0u);
  EXPECT_EQ(p.t.last_progress, p.now);
}

TEST(PeerBehaviour, StallNeedsTheTimeToo) {
  peer_sim p;
  p.cfg.stall_time = 2h;
  p.start();
  for (int i = 0; i < 7; ++i) p.announce(900s);  // 7 announces, 105 min
  EXPECT_FALSE(p.t.has(flag_stalled));
  EXPECT_EQ(p.announce(900s).findings, static_cast<std::uint32_t>(finding_stalled));  // 120 min
}

TEST(PeerBehaviour, StallNeedsTheAnnouncesToo) {
  peer_sim p;
  p.start();
  p.announce(5h);  // one late announce: not enough evidence
  p.announce(5h);
  EXPECT_FALSE(p.t.has(flag_stalled));
  p.announce(5h);
  EXPECT_TRUE(p.t.has(flag_stalled));
}

TEST(PeerBehaviour, SeedersNeverStall) {
  peer_sim p;
  p.req.left = 0;
  p.start();
  for (int i = 0; i < 10; ++i) expect_clean(p.announce(1800s));
  EXPECT_FALSE(p.t.has(flag_stalled));
  EXPECT_EQ(p.t.announces_without_progress, 0u);
}

// --- strikes and quarantine ------------------------------------------------------

TEST(PeerBehaviour, QuarantineAfterStrikes) {
  peer_sim p;
  p.start();
  for (std::uint32_t strike = 1; strike <= 3; ++strike) {
    p.req.uploaded = strike % 2 == 1 ? 0 : 5;  // jumps around
    p.req.left += mib;                         // and left keeps rising
    const auto v = p.announce(1800s);
    EXPECT_TRUE(v.warn);
    EXPECT_EQ(p.t.strikes, strike);
    EXPECT_EQ(v.quarantine, strike == 3);
    EXPECT_EQ(p.t.has(flag_quarantined), strike == 3);
    if (strike == 3) {
      EXPECT_NE(v.message.find("no longer handed to other peers"), std::string::npos) << v.message;
    }
  }
  // Quarantine lasts while the peer stays, even through clean announces.
  p.req.uploaded = 100;
  const auto clean = p.progress(1800s, mib, 0);
  EXPECT_EQ(clean.findings, 0u);
  EXPECT_FALSE(clean.warn);
  EXPECT_TRUE(clean.quarantine);
  EXPECT_TRUE(p.t.has(flag_quarantined));
  EXPECT_FALSE(p.t.has(flag_warned));
}

TEST(PeerBehaviour, SeveralFindingsInOneAnnounceAreOneStrike) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 100 * mib);
  p.req.uploaded = 0;
  p.req.left = torrent;
  p.req.key = "FFFFFFFF";
  const auto v = p.announce(1800s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_counters_backwards |
                                                   finding_left_rising | finding_key_mismatch));
  EXPECT_EQ(p.t.strikes, 1u);
  EXPECT_EQ(v.message, "inconsistent announce (left-rising,counters-backwards,key-mismatch)");
}

TEST(PeerBehaviour, QuarantineCanBeDisabled) {
  peer_sim p;
  p.cfg.quarantine_strikes = 0;
  p.start();
  for (int i = 0; i < 5; ++i) {
    p.req.left += mib;
    EXPECT_FALSE(p.announce(1800s).quarantine);
  }
  EXPECT_EQ(p.t.strikes, 5u);
}

TEST(PeerBehaviour, EarlyAndCounterFindingsTogether) {
  peer_sim p;
  p.cfg.early_warn_after = 1;
  p.start();
  p.progress(1800s, 100 * mib, 0);
  p.req.left += 50 * mib;
  const auto v = p.announce(60s);
  EXPECT_EQ(v.findings, static_cast<std::uint32_t>(finding_too_frequent | finding_left_rising));
  EXPECT_EQ(v.message,
            "announcing too often: wait at least 900 s (min interval) between announces; "
            "inconsistent announce (left-rising)");
}

// --- progress and contribution ---------------------------------------------------

TEST(PeerBehaviour, ProgressFollowsTheTorrentSize) {
  peer_sim p;
  p.start();
  EXPECT_FLOAT_EQ(p.t.progress, 0.0f);
  p.progress(1800s, 250 * mib, 100 * mib);
  EXPECT_FLOAT_EQ(p.t.progress, 0.25f);
  p.torrent_size = 0;  // unknown size: unknown progress
  p.progress(1800s, 250 * mib, 100 * mib);
  EXPECT_FLOAT_EQ(p.t.progress, -1.0f);
  p.torrent_size = 100 * mib;  // an underestimate: clamp, never negative
  p.progress(1800s, mib, 100 * mib);
  EXPECT_FLOAT_EQ(p.t.progress, 0.0f);
}

TEST(PeerBehaviour, PoorContributorFlag) {
  peer_sim p;
  p.start();
  p.progress(1800s, 60 * mib, 0);
  EXPECT_FALSE(p.t.has(flag_poor_contributor));  // below 64 MiB: too early to judge
  p.progress(1800s, 40 * mib, mib);
  EXPECT_TRUE(p.t.has(flag_poor_contributor));  // 100 MiB down, 1 MiB up
  p.progress(1800s, 0, 20 * mib);
  EXPECT_FALSE(p.t.has(flag_poor_contributor));  // 21 MiB up: ratio met
}

TEST(PeerBehaviour, SeedersAreNeverPoorContributors) {
  peer_sim p;
  p.start();
  p.progress(1800s, 100 * mib, 0);
  ASSERT_TRUE(p.t.has(flag_poor_contributor));  // a leecher that gave nothing
  // It completes without having uploaded: as a seeder it can only give, and
  // fewer peers would only slow that down.
  p.progress(1800s, p.req.left, 0, announce_event::completed);
  ASSERT_EQ(p.req.left, 0U);
  EXPECT_FALSE(p.t.has(flag_poor_contributor));
}

// --- names and config ------------------------------------------------------------

TEST(PeerBehaviour, FindingNames) {
  EXPECT_EQ(findings_to_string(0), "");
  EXPECT_EQ(findings_to_string(finding_too_frequent | finding_key_mismatch),
            "too-frequent,key-mismatch");
  EXPECT_EQ(findings_to_string(0x7f),
            "too-frequent,left-rising,counters-backwards,impossible-rate,repeated-completed,"
            "key-mismatch,stalled");
  EXPECT_EQ(finding_name(finding_stalled), "stalled");
}

TEST(PeerBehaviour, ConfigValidation) {
  EXPECT_EQ(behaviour_config{}.validate(), "");
  behaviour_config c;
  c.min_interval = 0s;
  EXPECT_NE(c.validate().find("min interval"), std::string::npos);
  c = {};
  c.stall_announces = 0;
  EXPECT_NE(c.validate().find("stall announces"), std::string::npos);
  c = {};
  c.max_rate_bytes_per_second = 0;
  EXPECT_NE(c.validate().find("max rate"), std::string::npos);
  c = {};
  c.early_announce_slack_fraction = 1.0;
  EXPECT_NE(c.validate().find("slack fraction"), std::string::npos);
  c = {};
  c.early_warn_after = 6;
  c.early_refuse_after = 5;
  EXPECT_NE(c.validate().find("must not exceed"), std::string::npos);
  c.early_refuse_after = 0;  // never refuse: any warning step is fine
  EXPECT_EQ(c.validate(), "");
  c = {};
  c.duplicate_window = -1s;
  EXPECT_NE(c.validate().find("duplicate window"), std::string::npos);
}

}  // namespace
}  // namespace sk
