#pragma once
/// Keeps a node's state across restarts (`state.dir`): loads the state file
/// once at start, before any port opens, and writes it every
/// `state.snapshot-period` and once more on SIGTERM after the drain.
///
///   start:    load() ──▶ directory.install(swarm) for every swarm whose
///             peers are not all expired, the ban list, the supervisor's holds
///   periodic: the keeper actor (its own thread) asks every local swarm for
///             a snapshot, at most `in_flight` at once, and streams each
///             answer into the temporary file; then bans and holds; then
///             the atomic rename (runtime/state_file.hpp)
///   SIGTERM:  save_now() the same way, waited for; a periodic write under
///             way then is abandoned (it began before the drain) and the
///             new one begins at once
///
/// A swarm is copied on its own thread between two of its messages, so
/// announces pause only for the copy of their own swarm. Few requests are
/// in flight (16), so an announce queued on a CAF worker waits behind at
/// most that many copies, and the keeper's thread, which encodes and writes
/// the file, yields its core after every 0.2 ms of work (at the normal
/// priority: a starved low-priority thread would hold the locks it shares
/// with the swarms and the network threads). What happened
/// while the daemon was down counts as time: ages grow by the downtime, and
/// a peer whose timeout passed is dropped on load.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <caf/all.hpp>

#include "runtime/state_file.hpp"
#include "tracker/access_list.hpp"

namespace sk {

class swarm_directory;
class live_ban_list;

struct state_config {
  /// Empty: no state is kept.
  std::string dir;
  /// How often a snapshot is written while running; zero: only on SIGTERM.
  std::chrono::milliseconds period{std::chrono::minutes{5}};
  /// Snapshots asked of swarms at once.
  std::size_t in_flight = 16;
  /// How long a write waits without moving on (no answer, no sleeping
  /// swarm written) before the swarms it still asked are left out of it.
  std::chrono::milliseconds swarm_timeout{std::chrono::seconds{10}};
  /// A restored peer that last announced longer ago than this is dropped
  /// (the swarms' `tracker.peer-timeout`).
  std::chrono::seconds peer_timeout{3900};
};

/// What the admin API and /metrics show of the state file. Written by the
/// keeper, read anywhere.
struct state_stats {
  enum load_outcome : int { not_loaded = 0, absent = 1, loaded = 2, refused = 3 };
  std::atomic<int> load{not_loaded};
  std::atomic<std::int64_t> load_duration_ms{0};
  std::atomic<std::uint64_t> loaded_swarms{0};
  std::atomic<std::uint64_t> loaded_peers{0};
  /// Peers whose timeout passed while the daemon was down.
  std::atomic<std::uint64_t> expired_peers{0};
  std::atomic<std::uint64_t> loaded_bans{0};
  /// Access-list entries put back from the file (a node without an access
  /// file).
  std::atomic<std::uint64_t> loaded_access{0};

  std::atomic<std::int64_t> last_write_unix_ms{0};
  std::atomic<std::int64_t> last_duration_ms{0};
  std::atomic<std::uint64_t> last_bytes{0};
  std::atomic<std::uint64_t> last_swarms{0};
  std::atomic<std::uint64_t> last_peers{0};
  std::atomic<std::uint64_t> writes{0};
  std::atomic<std::uint64_t> write_failures{0};

  /// Why the file was refused and where it went; the last write error.
  std::string load_problem() const;
  std::string moved_to() const;
  std::string last_error() const;
  void set_load_problem(std::string problem, std::string moved);
  void set_last_error(std::string e);

 private:
  mutable std::mutex mutex_;
  std::string load_problem_;
  std::string moved_to_;
  std::string last_error_;
};

class state_keeper {
 public:
  /// `access` (may be null): the node's access list, kept in the file
  /// while the node has no access file.
  state_keeper(caf::actor_system& sys, swarm_directory& dir, std::shared_ptr<live_ban_list> bans,
               state_config cfg, std::shared_ptr<access_control> access = nullptr);
  ~state_keeper();
  state_keeper(const state_keeper&) = delete;
  state_keeper& operator=(const state_keeper&) = delete;

  /// Reads the state file and installs what it holds. Call once, after the
  /// supervisor started and before any front end routes. Never throws; a
  /// refused file is logged once and moved aside, and the node starts empty.
  void load();
  /// Starts the periodic snapshots (no-op without a period).
  void start();
  /// Writes a snapshot now and waits for it, at most `timeout`. True when
  /// the file was committed.
  bool save_now(std::chrono::milliseconds timeout);
  /// Stops the keeper's actor (an unfinished write is abandoned; the old
  /// file stays).
  void stop();

  const std::shared_ptr<state_stats>& stats() const noexcept { return stats_; }
  const state_config& config() const noexcept { return cfg_; }

 private:
  caf::actor_system& sys_;
  swarm_directory& dir_;
  std::shared_ptr<live_ban_list> bans_;
  state_config cfg_;
  std::shared_ptr<access_control> access_;
  std::shared_ptr<state_stats> stats_;
  caf::actor actor_;
};


}  // namespace sk
