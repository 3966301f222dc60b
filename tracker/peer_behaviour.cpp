#include "tracker/peer_behaviour.hpp"

#include <algorithm>
#include <cmath>

namespace sk {

namespace {

using std::chrono::duration_cast;
using std::chrono::seconds;



/// Time from `earlier` to `later`, never negative (a caller's clock may be
/// fed out of order; that must not read as "announced in the future").
health_clock::duration since(health_time earlier, health_time later) noexcept {
  return later > earlier ? later - earlier : health_clock::duration::zero();
}

/// The shortest gap between announces that is not early.
health_clock::duration early_threshold(const behaviour_config& cfg) noexcept {
  const auto by_fraction = std::chrono::duration<double>(
      static_cast<double>(cfg.min_interval.count()) * cfg.early_announce_slack_fraction);
  const auto min = duration_cast<health_clock::duration>(cfg.min_interval);
  // Never more than half of min interval: a short min interval (tests, a
  // small deployment) must still be enforced, not swallowed by the slack.
  const auto slack =
      std::min(min / 2, std::max(duration_cast<health_clock::duration>(by_fraction),
                                 duration_cast<health_clock::duration>(cfg.early_announce_slack)));
  return min - slack;
}

float progress_of(std::uint64_t left, std::uint64_t torrent_size) noexcept {
  if (left == 0) return 1.0f;
  if (torrent_size == 0) return -1.0f;
  if (left >= torrent_size) return 0.0f;
  return static_cast<float>(1.0 - static_cast<double>(left) / static_cast<double>(torrent_size));
}

void judge_contribution(peer_traits& t, const behaviour_config& cfg) noexcept {
  // A seeder can only give from now on: fewer peers would only slow down
  // what it uploads (a client that just completed has a poor ratio by
  // construction), so only leechers are judged.
  const bool poor = t.left > 0 && t.downloaded >= cfg.poor_contributor_min_downloaded &&
                    t.downloaded > 0 &&
                    static_cast<double>(t.uploaded) <
                        cfg.poor_contributor_ratio * static_cast<double>(t.downloaded);
  t.set(flag_poor_contributor, poor);
}

std::string warning_text(std::uint32_t findings, const behaviour_config& cfg,
                         bool quarantined_now) {
  std::string out;
  if ((findings & finding_too_frequent) != 0) {
    out = "announcing too often: wait at least " + std::to_string(cfg.min_interval.count()) +
          " s (min interval) between announces";
  }
  const std::uint32_t counters = findings & strike_findings;
  if (counters != 0) {
    if (!out.empty()) out += "; ";
    out += "inconsistent announce (" + findings_to_string(counters) + ")";
  }
  if (quarantined_now) {
    out += "; this client is no longer handed to other peers";
  }
  return out;
}

}  // namespace

bool same_key_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool same_key_text(const key_text& a, std::string_view b) noexcept {
  char buf[8];
  return same_key_text(a.view(buf), b);
}

std::string behaviour_config::validate() const {
  if (min_interval <= seconds{0}) {
    return "behaviour min interval must be positive (got " + std::to_string(min_interval.count()) +
           " s)";
  }
  if (early_announce_slack < seconds{0}) {
    return "early announce slack must not be negative";
  }
  if (!(early_announce_slack_fraction >= 0.0 && early_announce_slack_fraction < 1.0)) {
    return "early announce slack fraction must be in [0, 1)";
  }
  if (early_warn_after > 0 && early_refuse_after > 0 && early_warn_after > early_refuse_after) {
    return "early announces that warn (" + std::to_string(early_warn_after) +
           ") must not exceed those that refuse (" + std::to_string(early_refuse_after) + ")";
  }
  if (duplicate_window < seconds{0}) {
    return "duplicate window must not be negative";
  }
  if (stall_announces == 0) {
    return "stall announces must be at least 1";
  }
  if (stall_time < seconds{0}) {
    return "stall time must not be negative";
  }
  if (!(max_rate_bytes_per_second > 0.0)) {
    return "max rate must be positive";
  }
  if (min_rate_interval <= seconds{0}) {
    return "min rate interval must be positive";
  }
  if (!(poor_contributor_ratio >= 0.0)) {
    return "poor contributor ratio must not be negative";
  }
  return {};
}

std::string_view finding_name(behaviour_finding f) noexcept {
  switch (f) {
    case finding_too_frequent:
      return "too-frequent";
    case finding_left_rising:
      return "left-rising";
    case finding_counters_backwards:
      return "counters-backwards";
    case finding_impossible_rate:
      return "impossible-rate";
    case finding_repeated_completed:
      return "repeated-completed";
    case finding_key_mismatch:
      return "key-mismatch";
    case finding_stalled:
      return "stalled";
  }
  return "unknown";
}

std::string findings_to_string(std::uint32_t findings) {
  std::string out;
  for (int i = 0; i < behaviour_finding_count; ++i) {
    const auto bit = static_cast<behaviour_finding>(1u << i);
    if ((findings & bit) != 0) {
      if (!out.empty()) out += ',';
      out += finding_name(bit);
    }
  }
  return out;
}

namespace {

std::uint64_t distance(std::uint64_t a, std::uint64_t b) noexcept { return a > b ? a - b : b - a; }

/// `req` says again what the stored announce said (see the header: repeat).
bool is_repeat(const peer_traits& t, const announce_request& req, health_clock::duration elapsed,
               const behaviour_config& cfg) noexcept {
  if (elapsed > std::min(duration_cast<health_clock::duration>(cfg.duplicate_window),
                         early_threshold(cfg))) {
    return false;
  }
  const auto last = static_cast<announce_event>(t.last_event);
  if (req.event != announce_event::none && req.event != last) {
    return false;
  }
  if ((req.left == 0) != (t.left == 0)) {
    return false;  // a role change (completion, re-check) is news
  }
  return distance(req.left, t.left) <= cfg.counter_noise &&
         distance(req.uploaded, t.uploaded) <= cfg.counter_noise &&
         distance(req.downloaded, t.downloaded) <= cfg.counter_noise;
}

/// Both transfer counters reset (to at most the noise) from a session that
/// had moved beyond it: a client restarted from resume data without
/// sending `started`.
bool is_counter_reset(const peer_traits& t, const announce_request& req,
                      const behaviour_config& cfg) noexcept {
  const bool had = t.uploaded > cfg.counter_noise || t.downloaded > cfg.counter_noise;
  const bool fresh = req.uploaded <= cfg.counter_noise && req.downloaded <= cfg.counter_noise &&
                     (req.uploaded < t.uploaded || req.downloaded < t.downloaded);
  return had && fresh;
}

bool partial_seed(const announce_request& req) noexcept {
  return req.left > 0 && req.event == announce_event::paused;
}

}  // namespace

behaviour_verdict observe_announce(peer_traits& t, const announce_request& req, bool is_new,
                                   health_time now, std::uint64_t torrent_size,
                                   const behaviour_config& cfg) {
  behaviour_verdict v;

  if (is_new) {
    // A fresh record. Keep only what a probe may already have found out about
    // the address; everything else describes a previous life of the record.
    const auto probe_bits =
        static_cast<std::uint8_t>(t.flags & (flag_reachable | flag_unreachable));
    t = peer_traits{};
    t.flags = probe_bits;
    t.set(flag_partial_seed, partial_seed(req));
    t.last_event = static_cast<std::uint8_t>(req.event);
    t.first_seen = now;
    t.last_announce = now;
    t.last_progress = now;
    t.announces = 1;
    t.left = req.left;
    t.uploaded = req.uploaded;
    t.downloaded = req.downloaded;
    t.key = req.key;
    if (req.left == 0 && req.event == announce_event::completed) {
      t.completed_at = now;
      v.completed = true;
    }
    t.progress = progress_of(req.left, torrent_size);
    judge_contribution(t, cfg);
    return v;
  }

  const auto elapsed = since(t.last_announce, now);

  // Repeats first: the same announce again is never judged.
  if (req.event != announce_event::stopped && is_repeat(t, req, elapsed, cfg)) {
    v.repeat = true;
    v.quarantine = t.has(flag_quarantined);
    return v;
  }

  const bool restart = req.event == announce_event::started || is_counter_reset(t, req, cfg);

  // Timing: only ordinary announces can be early; events are sent when they
  // happen.
  const bool timed = req.event == announce_event::none;
  bool early = false;
  if (timed && elapsed < early_threshold(cfg)) {
    early = true;
    ++t.early_announces;
    if (cfg.early_refuse_after > 0 && t.early_announces >= cfg.early_refuse_after) {
      // Refused: nothing of this announce is taken, so the next one is timed
      // from the last accepted announce, exactly as `retry in` tells.
      const auto due = t.last_announce + cfg.min_interval;
      const auto wait = since(now, due);
      auto wait_s = duration_cast<seconds>(wait);
      if (wait_s < wait) ++wait_s;  // round up
      v.retry_in = std::max(wait_s, seconds{1});
      v.refuse = true;
      v.findings |= finding_too_frequent;
      v.quarantine = t.has(flag_quarantined);
      t.set(flag_warned);
      v.message = "announcing too often (min interval " + std::to_string(cfg.min_interval.count()) +
                  " s): retry in " + std::to_string(v.retry_in.count()) + " s";
      return v;
    }
    if (cfg.early_warn_after > 0 && t.early_announces >= cfg.early_warn_after) {
      v.findings |= finding_too_frequent;
    } else {
      v.early = true;
    }
  }

  // Counter sanity, between two announces of one session only: a restart
  // begins new counters (and may re-check data, so `left` may rise).
  if (!restart) {
    if (req.uploaded < t.uploaded || req.downloaded < t.downloaded) {
      v.findings |= finding_counters_backwards;
    }
    // Benign rises: the magnet pattern (no size known before the metadata
    // arrived, so the first announce said left = 0 with nothing
    // downloaded), and a partial seed that selected more files.
    const bool magnet = t.left == 0 && t.downloaded == 0;
    const bool more_files = t.has(flag_partial_seed);
    if (req.left > t.left && !magnet && !more_files) {
      v.findings |= finding_left_rising;
    }
    const std::uint64_t up = req.uploaded > t.uploaded ? req.uploaded - t.uploaded : 0;
    const std::uint64_t down = req.downloaded > t.downloaded ? req.downloaded - t.downloaded : 0;
    const double dt =
        std::chrono::duration<double>(
            std::max(elapsed, duration_cast<health_clock::duration>(cfg.min_rate_interval)))
            .count();
    if (static_cast<double>(std::max(up, down)) / dt > cfg.max_rate_bytes_per_second) {
      v.findings |= finding_impossible_rate;
    }
  }

  // Completion. A restart as a leecher begins a session that may complete
  // again; a restart as a seeder keeps the old completion time (it tells how
  // long the peer has been seeding, for the early-leaver rule).
  if (restart && req.left > 0) {
    t.completed_at.reset();
  }
  if (req.event == announce_event::completed) {
    if (t.completed_at) {
      // A retransmission of the very announce that completed (its reply was
      // lost: UDP clients resend the same request) is not a second
      // completion: same counters, and nothing came in between.
      const bool retransmission = *t.completed_at == t.last_announce && req.left == t.left &&
                                  req.uploaded == t.uploaded && req.downloaded == t.downloaded;
      if (!retransmission) {
        v.findings |= finding_repeated_completed;
      }
    } else {
      t.completed_at = now;
      v.completed = true;
    }
  } else if (req.left == 0 && t.left > 0 && !t.completed_at) {
    // Became a seeder without saying `completed` (some clients omit it).
    t.completed_at = now;
    v.completed = true;
  }

  // Key: the first key is the peer's; a restart may bring a new one. An
  // announce without a key says nothing.
  if (!req.key.empty()) {
    if (t.key.empty() || restart) {
      t.key = req.key;
    } else if (!same_key_text(t.key, req.key)) {
      v.findings |= finding_key_mismatch;
    }
  }

  // Progress and stall (downloading leechers only: a partial seed wants
  // nothing more, so it cannot be stalled).
  const bool partial = partial_seed(req);
  if (req.left == 0 || req.left < t.left || partial) {
    t.announces_without_progress = 0;
    t.last_progress = now;
    t.set(flag_stalled, false);
  } else {
    ++t.announces_without_progress;
    if (!t.has(flag_stalled) && t.announces_without_progress >= cfg.stall_announces &&
        since(t.last_progress, now) >= cfg.stall_time) {
      t.set(flag_stalled);
      v.findings |= finding_stalled;
    }
  }

  t.set(flag_partial_seed, partial);
  t.last_event = static_cast<std::uint8_t>(req.event);
  t.left = req.left;
  t.uploaded = req.uploaded;
  t.downloaded = req.downloaded;
  t.last_announce = now;
  ++t.announces;
  t.progress = progress_of(req.left, torrent_size);
  judge_contribution(t, cfg);

  bool quarantined_now = false;
  if ((v.findings & strike_findings) != 0) {
    ++t.strikes;
    if (cfg.quarantine_strikes > 0 && t.strikes >= cfg.quarantine_strikes &&
        !t.has(flag_quarantined)) {
      t.set(flag_quarantined);
      quarantined_now = true;
    }
  }
  v.quarantine = t.has(flag_quarantined);

  if ((v.findings & misbehaviour_findings) != 0) {
    v.warn = true;
    t.set(flag_warned);
    v.message = warning_text(v.findings, cfg, quarantined_now);
  } else if (!early) {
    t.early_announces = 0;
    t.set(flag_warned, false);
  }
  return v;
}

}  // namespace sk
