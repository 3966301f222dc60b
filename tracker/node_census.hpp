#pragma once
/// How much one node holds (swarms, peers) against its caps, and what the
/// caps refused: one object per node, shared by the directory (which counts
/// swarms and refuses the one too many), every swarm (which adds its peers
/// and refuses a new peer on a full node or a full swarm) and the gateway
/// (which refuses addresses creating too many swarms), and read by
/// `/metrics`. Live state, not settings: it is handed to the swarms beside
/// their `swarm_settings`, never inside a `swarm_config`.
///
/// Counts are relaxed atomics. The peer count is approximate while swarms
/// are serving: each swarm adds the change of its table right after the
/// announce or sweep step that made it, so a reader may miss the peers of
/// the announces running at that moment (at most one per scheduler thread),
/// and the node can end up that many peers above its cap; it is exact
/// whenever no swarm is between a table change and its addition.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sk {

/// The node-wide caps (section `[caps]`).
struct node_caps {
  /// Swarms this node holds (its own, not remote handles); a new torrent
  /// beyond it is refused, every existing swarm is served.
  std::uint64_t max_swarms = 1000000;
  /// Peers in all swarms of this node; a new peer beyond it is refused, a
  /// known peer is served.
  std::uint64_t max_peers = 10000000;

  /// Empty when usable, else one sentence naming the bad field.
  std::string validate() const {
    if (max_swarms == 0) return "max swarms must be at least 1";
    if (max_peers == 0) return "max peers must be at least 1";
    return {};
  }
};

/// The caps a request can meet.
enum class node_cap : std::uint8_t {
  swarms = 0,            ///< the node holds `max_swarms` swarms
  peers = 1,             ///< the node holds `max_peers` peers
  swarm_peers = 2,       ///< the swarm holds `max_peers_per_swarm` peers
  new_swarm_budget = 3,  ///< the address created its budget of new swarms
};
constexpr std::size_t node_cap_count = 4;

/// "swarms", "peers", "swarm_peers", "new_swarm_budget" (metric labels).
constexpr std::string_view to_string(node_cap c) noexcept {
  switch (c) {
    case node_cap::swarms:
      return "swarms";
    case node_cap::peers:
      return "peers";
    case node_cap::swarm_peers:
      return "swarm_peers";
    case node_cap::new_swarm_budget:
      return "new_swarm_budget";
  }
  return "unknown";
}

/// The node's counts against its caps. Thread-safe (relaxed atomics).
class node_census {
 public:
  explicit node_census(node_caps caps = {}) noexcept : caps_(caps) {}
  node_census(const node_census&) = delete;
  node_census& operator=(const node_census&) = delete;

  const node_caps& caps() const noexcept { return caps_; }

  // -- swarms (the directory's local entries) ---------------------------------

  void add_swarms(std::int64_t delta) noexcept { swarms_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t swarms() const noexcept { return swarms_.load(std::memory_order_relaxed); }
  bool swarms_full() const noexcept {
    return swarms() >= static_cast<std::int64_t>(caps_.max_swarms);
  }

  // -- peers (every swarm's table) --------------------------------------------

  void add_peers(std::int64_t delta) noexcept { peers_.fetch_add(delta, std::memory_order_relaxed); }
  std::int64_t peers() const noexcept { return peers_.load(std::memory_order_relaxed); }
  bool peers_full() const noexcept { return peers() >= static_cast<std::int64_t>(caps_.max_peers); }

  // -- refusals and the "reached" state of each cap -----------------------------

  void count_refusal(node_cap c) noexcept {
    refusals_[index(c)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t refusals(node_cap c) const noexcept {
    return refusals_[index(c)].load(std::memory_order_relaxed);
  }

  /// Marks a node-wide cap (swarms, peers, new_swarm_budget) reached; true
  /// only for the call that changed it, so the caller logs the moment once.
  bool reach(node_cap c) noexcept {
    return reached_[index(c)].exchange(1, std::memory_order_relaxed) == 0;
  }
  /// Marks it cleared; true only for the call that changed it.
  bool clear(node_cap c) noexcept {
    return reached_[index(c)].exchange(0, std::memory_order_relaxed) != 0;
  }
  /// A swarm reached (`+1`) or left (`-1`) its own peer cap.
  void swarm_at_peer_cap(std::int64_t delta) noexcept {
    reached_[index(node_cap::swarm_peers)].fetch_add(delta, std::memory_order_relaxed);
  }
  /// 1 while a node-wide cap is reached, else 0; for `swarm_peers`, the
  /// number of swarms at their cap.
  std::int64_t reached(node_cap c) const noexcept {
    return reached_[index(c)].load(std::memory_order_relaxed);
  }

 private:
  static constexpr std::size_t index(node_cap c) noexcept { return static_cast<std::size_t>(c); }

  const node_caps caps_;
  std::atomic<std::int64_t> swarms_{0};
  std::atomic<std::int64_t> peers_{0};
  std::array<std::atomic<std::uint64_t>, node_cap_count> refusals_{};
  std::array<std::atomic<std::int64_t>, node_cap_count> reached_{};
};

}  // namespace sk
