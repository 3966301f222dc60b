#include "net/tracker_bridge.hpp"

#include <algorithm>
#include <deque>
#include <utility>

#include <spdlog/spdlog.h>

#include "actors/directory.hpp"

namespace sk {

const char* failure_text(bridge_error e) noexcept {
  switch (e) {
    case bridge_error::swarm_unavailable:
      return "tracker busy: swarm unavailable, retry later";
    case bridge_error::timeout:
      return "tracker busy: request timed out, retry later";
    case bridge_error::shutting_down:
      return "tracker is shutting down, retry later";
    case bridge_error::internal:
      break;
  }
  return "internal tracker error, retry later";
}

namespace {

using steady = std::chrono::steady_clock;

/// Collects the answers of every existing swarm of one scrape.
struct scrape_fanin {
  scrape_job job;
  std::vector<scrape_entry> entries;
  std::size_t pending = 0;
  bool failed = false;
  bridge_error error = bridge_error::internal;
};

/// One job a network actor still owes an answer for.
struct inflight {
  announce_job announce;                 ///< when `scrape` is null
  std::shared_ptr<scrape_fanin> scrape;  ///< set for scrapes
};

/// Jobs in flight, addressed by a 64-bit id (generation << 32 | index), so
/// that an answer arriving after its job timed out finds nothing instead of
/// a newer job in the same slot. Slots and their strings are reused.
class inflight_table {
 public:
  std::uint64_t insert(inflight&& value) {
    std::uint32_t index;
    if (free_.empty()) {
      index = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      index = free_.back();
      free_.pop_back();
    }
    slot& s = slots_[index];
    s.value = std::move(value);
    s.live = true;
    return std::uint64_t{s.generation} << 32 | index;
  }

  inflight* find(std::uint64_t id) noexcept {
    const auto index = static_cast<std::uint32_t>(id);
    if (index >= slots_.size()) return nullptr;
    slot& s = slots_[index];
    return s.live && s.generation == static_cast<std::uint32_t>(id >> 32) ? &s.value : nullptr;
  }

  /// Removes the job and hands it out (the slot is free again).
  inflight take(std::uint64_t id) {
    const auto index = static_cast<std::uint32_t>(id);
    slot& s = slots_[index];
    inflight out = std::move(s.value);
    s.value = inflight{};
    s.live = false;
    ++s.generation;
    free_.push_back(index);
    return out;
  }

 private:
  struct slot {
    inflight value;
    std::uint32_t generation = 0;
    bool live = false;
  };
  std::vector<slot> slots_;
  std::vector<std::uint32_t> free_;
};

struct network_actor_state {
  static inline const char* name = "network-actor";
  swarm_locator* locator = nullptr;
  steady::duration timeout{};
  inflight_table jobs;
  /// (deadline, id) in insertion order; all jobs share one timeout, so the
  /// front always expires first.
  std::deque<std::pair<steady::time_point, std::uint64_t>> deadlines;
};

using network_pointer = network_actor::stateful_pointer<network_actor_state>;

bridge_error classify(const caf::error& err) {
  if (err == caf::sec::request_receiver_down) return bridge_error::swarm_unavailable;
  if (err == caf::sec::invalid_argument) return bridge_error::swarm_unavailable;
  return bridge_error::internal;
}

/// Answers job `id` with an error and forgets it.
void fail(network_pointer self, std::uint64_t id, bridge_error e) {
  inflight job = self->state.jobs.take(id);
  if (job.scrape)
    deliver_error(job.scrape->job, e);
  else
    deliver_error(job.announce, e);
}

std::uint64_t track(network_pointer self, inflight&& job) {
  const auto id = self->state.jobs.insert(std::move(job));
  self->state.deadlines.emplace_back(steady::now() + self->state.timeout, id);
  return id;
}

/// Sends announce `id` to the swarm that owns its hash. `attempt` 0 is the
/// first try; a swarm that ended between lookup and send
/// (`request_receiver_down`) is looked up once more, because the directory
/// then spawns a fresh one.
///
/// The request itself has no CAF timeout: a CAF request timeout is one
/// event per request on the actor clock's thread (a wake-up each, and a
/// stale timeout message later), which measurably cost ~8 us of CPU per
/// announce. The network actor expires its jobs on one periodic tick instead.
void send_announce(network_pointer self, std::uint64_t id, int attempt) {
  const inflight* job = self->state.jobs.find(id);
  caf::actor swarm = self->state.locator->route(job->announce.announce.request.hash);
  if (!swarm) {
    fail(self, id, bridge_error::swarm_unavailable);
    return;
  }
  // The message gets a copy of the announce: the job keeps the original in
  // case a retry is needed.
  self->request(swarm, caf::infinite, announce_atom::value, job->announce.announce)
      .then(
          [self, id](announce_result& result) {
            if (!self->state.jobs.find(id)) return;  // timed out meanwhile
            inflight done = self->state.jobs.take(id);
            deliver_announce(done.announce, std::move(result));
          },
          [self, id, attempt](caf::error& err) {
            if (!self->state.jobs.find(id)) return;
            if (err == caf::sec::request_receiver_down && attempt == 0) {
              send_announce(self, id, 1);
              return;
            }
            spdlog::debug("announce failed: {}", self->system().render(err));
            fail(self, id, classify(err));
          });
}

void run_announce(network_pointer self, announce_job&& job) {
  const auto id = track(self, inflight{std::move(job), nullptr});
  send_announce(self, id, 0);
}

void finish_scrape(network_pointer self, std::uint64_t id) {
  inflight done = self->state.jobs.take(id);
  auto& fan = *done.scrape;
  if (fan.failed)
    deliver_error(fan.job, fan.error);
  else
    deliver_scrape(fan.job, std::move(fan.entries));
}

void run_scrape(network_pointer self, scrape_job&& job) {
  auto fan = std::make_shared<scrape_fanin>();
  fan->entries.resize(job.hashes.size());
  for (std::size_t i = 0; i < job.hashes.size(); ++i) fan->entries[i].hash = job.hashes[i];
  fan->job = std::move(job);
  const auto id = track(self, inflight{{}, fan});
  for (std::size_t i = 0; i < fan->entries.size(); ++i) {
    // find(), not route(): scraping an unknown torrent must not create a
    // swarm (anyone could fill the directory with scrapes of random hashes).
    caf::actor swarm = self->state.locator->find(fan->entries[i].hash);
    if (!swarm) continue;  // unknown torrent: zeros
    ++fan->pending;
    self->request(swarm, caf::infinite, scrape_atom::value)
        .then(
            [self, id, fan, i](swarm_stats& stats) {
              fan->entries[i].stats = stats;
              if (--fan->pending == 0 && self->state.jobs.find(id)) finish_scrape(self, id);
            },
            [self, id, fan](caf::error& err) {
              // A swarm that ended meanwhile has no peers: zeros are right.
              if (err != caf::sec::request_receiver_down) {
                fan->failed = true;
                fan->error = classify(err);
              }
              if (--fan->pending == 0 && self->state.jobs.find(id)) finish_scrape(self, id);
            });
  }
  if (fan->pending == 0) finish_scrape(self, id);
}

/// Fails every job whose deadline passed.
void expire(network_pointer self) {
  auto& st = self->state;
  const auto now = steady::now();
  while (!st.deadlines.empty() && st.deadlines.front().first <= now) {
    const auto id = st.deadlines.front().second;
    st.deadlines.pop_front();
    if (st.jobs.find(id)) fail(self, id, bridge_error::timeout);
  }
}

network_actor::behavior_type network_actor_impl(network_pointer self, swarm_locator* locator,
                                                std::chrono::milliseconds timeout) {
  self->state.locator = locator;
  self->state.timeout = timeout;
  const auto tick = std::clamp<std::chrono::milliseconds>(timeout / 5, std::chrono::milliseconds(1),
                                                          std::chrono::milliseconds(1000));
  self->delayed_send(self, tick, caf::tick_atom::value);
  return {
      [self](announce_job& job) { run_announce(self, std::move(job)); },
      [self](scrape_job& job) { run_scrape(self, std::move(job)); },
      [self](job_batch& batch) {
        for (auto& job : batch.announces) run_announce(self, std::move(job));
        for (auto& job : batch.scrapes) run_scrape(self, std::move(job));
      },
      [self, tick](caf::tick_atom) {
        expire(self);
        self->delayed_send(self, tick, caf::tick_atom::value);
      },
  };
}

/// The daemon's locator: the directory itself.
class directory_locator final : public swarm_locator {
 public:
  explicit directory_locator(swarm_directory& dir) : dir_(dir) {}
  caf::actor route(const info_hash& h) override { return dir_.route(h); }
  caf::actor find(const info_hash& h) override { return dir_.find(h); }

 private:
  swarm_directory& dir_;
};

}  // namespace

tracker_bridge::tracker_bridge(caf::actor_system& sys, swarm_directory& dir,
                               const bridge_config& cfg)
    : sys_(sys), own_locator_(std::make_unique<directory_locator>(dir)) {
  spawn_actors(*own_locator_, cfg);
}

tracker_bridge::tracker_bridge(caf::actor_system& sys, swarm_locator& locator,
                               const bridge_config& cfg)
    : sys_(sys) {
  spawn_actors(locator, cfg);
}

void tracker_bridge::spawn_actors(swarm_locator& locator, const bridge_config& cfg) {
  const std::size_t lanes = cfg.lanes == 0 ? 1 : cfg.lanes;
  actors_.reserve(lanes);
  for (std::size_t i = 0; i < lanes; ++i) {
    // Hidden: the actor system's destructor must not wait for them; stop()
    // ends them explicitly.
    actors_.push_back(sys_.spawn<caf::hidden>(network_actor_impl, &locator, cfg.request_timeout));
  }
}

tracker_bridge::~tracker_bridge() { stop(); }

// announce()/scrape() run on I/O threads, which have all been joined before
// stop() clears actors_ (see the stop order in app/).
void tracker_bridge::announce(std::size_t lane, announce_job&& job) {
  caf::anon_send(actors_[lane % actors_.size()], std::move(job));
}

void tracker_bridge::scrape(std::size_t lane, scrape_job&& job) {
  caf::anon_send(actors_[lane % actors_.size()], std::move(job));
}

void tracker_bridge::submit(std::size_t lane, job_batch&& batch) {
  caf::anon_send(actors_[lane % actors_.size()], std::move(batch));
}

void tracker_bridge::stop() {
  if (actors_.empty()) return;
  caf::scoped_actor waiter{sys_};
  for (auto& a : actors_) waiter->send_exit(a, caf::exit_reason::user_shutdown);
  waiter->wait_for(actors_);
  actors_.clear();
}

}  // namespace sk
