#pragma once
/// Peer allocation policies: which peers (and how many) an announce gets.
///
/// Plain C++ (no CAF, no clock): the swarm core calls `allocator::select_*`
/// with its `peer_table`, the swarm's policy and its latest `health_report`.
/// Deterministic for a given seed and call sequence (tests, simulator).
///
/// Every policy honours `numwant`, never returns the requester, never returns
/// a quarantined peer (the table keeps them out of its sampling sets, and the
/// allocator re-checks the flag of every candidate) and never returns a peer
/// twice; every returned peer's served count goes up by one (kept in the
/// table's hot array, visible as `peer_traits::served` through the
/// table's accessors). Candidates are judged from the table's dense hot
/// array (16 bytes per peer), never its records. All work is
/// O(numwant × small constant) whatever the swarm size: candidates come from
/// the table's per-role, per-family index pools by sparse sampling or a
/// rotation cursor, never from a scan.
///
/// The policies (n = effective numwant, q = ceil(n × leecher_seeder_share)):
///
///   random                uniform over every peer (quarantine, self and
///                         family excluded). No role rule: the baseline.
///   role_aware            seeder requester: leechers only.
///                         leecher requester: up to q seeders (uniform), then
///                         leechers (uniform), then more seeders if leechers
///                         ran short. Seeders come first in the reply.
///   seeder_rotation       as role_aware, but a leecher's seeders come from a
///                         round-robin cursor over the seeder pool (one per
///                         family filter), so with S seeders each seeder is
///                         handed out within ceil(S / min(q, S)) leecher
///                         announces of the same family filter (stable set).
///   stalled_boost         stalled leecher (flag_stalled): b = ceil(n ×
///                         stalled_boost_fraction) slots go first to seeders,
///                         then to the most complete leechers (highest
///                         progress among oversampling × b sampled ones); the
///                         rest are leechers, then seeders. Others: role_aware.
///   flash_crowd           tracker-side super-seeding. A leecher gets at most
///                         flash_crowd_seeders_per_reply seeders, from the
///                         rotation cursor, and only seeders revealed fewer
///                         than flash_crowd_reveal times in the current round;
///                         a round ends after as many leecher announces as the
///                         swarm has leechers (≈ one announce interval), so
///                         each seeder is revealed to a rotating subset of at
///                         most flash_crowd_reveal leechers per interval. The
///                         leecher part is stratified by progress (a sample of
///                         flash_crowd_oversampling × want leechers sorted by
///                         progress, picked at evenly spaced ranks) so pieces
///                         spread. A seeder requester
///                         gets leechers, stratified the same way.
///   reachability_aware    role_aware, and an unreachable requester
///                         (flag_unreachable) never gets unreachable peers.
///   contribution_weighted role_aware selection; a requester with
///                         flag_poor_contributor gets max(min(floor, numwant),
///                         floor(numwant × contribution_weight)) peers.
///   adaptive              (default) see `resolve` for the decision table;
///                         always applies the reachability rule and the
///                         contribution count.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tracker/health_types.hpp"
#include "tracker/peer_table.hpp"
#include "tracker/random.hpp"
#include "protocol/reply.hpp"

namespace sk {

/// Tunables of the allocation policies (shared by the swarms of a node).
struct allocation_config {
  /// Adaptive goes flash-crowd when the health report says `flash-crowd` or
  /// `few-seeders`, or when it counts at least `flash_crowd_min_leechers`
  /// leechers and seeders < leechers × this ratio.
  double flash_crowd_seeder_ratio = 0.05;
  /// Smallest swarm (leechers) for which the ratio alone triggers flash-crowd.
  std::size_t flash_crowd_min_leechers = 20;
  /// Flash-crowd: leechers each seeder is revealed to per round.
  std::uint32_t flash_crowd_reveal = 8;
  /// Flash-crowd: most seeders one leecher's reply carries.
  std::uint32_t flash_crowd_seeders_per_reply = 1;
  /// Role-aware (and derivatives): share of a leecher's reply given to
  /// seeders before leechers, (0, 1]. The rest goes to leechers so leechers
  /// also meet each other; seeders fill in when leechers run short.
  double leecher_seeder_share = 0.5;
  /// Stalled boost: share of a stalled leecher's reply reserved for seeders
  /// and the most complete leechers, (0, 1].
  double stalled_boost_fraction = 0.5;
  /// Contribution-weighted: poor contributors get numwant × this, [0, 1] ...
  double contribution_weight = 0.5;
  /// ... but never fewer than this (or numwant if smaller).
  std::size_t contribution_floor = 10;
  /// Candidates sampled per wanted peer when picking the most complete
  /// leechers for stalled boost (no O(N) scan), in [1, 64]. The top want of
  /// c × want sampled lie, in expectation, in the top 1/c of the swarm.
  std::uint32_t candidate_oversampling = 4;
  /// Candidates sampled per wanted peer when stratifying leechers by
  /// progress under flash-crowd, in [1, 64]. Spreading picks over the
  /// progress range needs fewer than finding the top; this sample is sorted
  /// on every flash-crowd announce, so it is kept small.
  std::uint32_t flash_crowd_oversampling = 2;
  /// Rejection budget: extra draws allowed beyond the peers wanted, per
  /// wanted peer (plus 16), when candidates may be refused (self, already
  /// picked, unreachable). Bounds the work; a swarm refusing nearly all
  /// candidates yields fewer peers rather than a scan.
  std::uint32_t extra_draws_per_peer = 3;
  /// Most of one reply that the peers of one address (IPv4, IPv6 /64) may
  /// take while peers of other addresses are left to hand out, as a share
  /// of the peers wanted: max(1, floor(numwant × this)), in (0, 1]. 1: no
  /// share. When every other address is handed out already, the reply is
  /// filled from the crowded addresses (a swarm behind one NAT still gets
  /// full replies).
  double max_address_share = 0.125;

  /// Empty when usable, otherwise one sentence naming the first bad field.
  std::string validate() const;
};

/// One announce's view for allocation.
struct allocation_request {
  peer_key requester;
  bool requester_seeder = false;
  /// A partial seed (BEP 21): served like a seeder (downloading leechers
  /// only), and, like a seeder, never handed other partial seeds.
  bool requester_partial = false;
  /// May be null: unknown / not stored (then no flag applies). May point
  /// into the table (the `announce_ex` result): selection's `sync` moves no
  /// record, so the pointer stays valid through the call.
  const peer_traits* requester_traits = nullptr;
  std::size_t numwant = 0;
  family_filter family = family_filter::both;
  bool compact = true;
};

/// Picks the peers of announce replies by policy. One per swarm (it keeps a
/// PRNG and scratch buffers; the rotation and flash-crowd state lives in
/// the `peer_table`).
class allocator {
 public:
  explicit allocator(allocation_config cfg = {}, std::uint64_t seed = 0);
  /// An allocator on shared tunables (not copied): every swarm of a node
  /// points at its one allocation config.
  static allocator on_shared(std::shared_ptr<const allocation_config> cfg, std::uint64_t seed);

  const allocation_config& config() const noexcept { return *cfg_; }
  void set_config(const allocation_config& cfg) {
    cfg_ = std::make_shared<const allocation_config>(cfg);
  }
  void reseed(std::uint64_t seed) noexcept { rng_.reseed(seed); }

  /// Appends the chosen peers' compact bytes (IPv4 to `peers4`, IPv6 to
  /// `peers6`, in choice order). Returns the number added. `swarm` may be
  /// null (no report yet). Syncs the table first (pending traits writes),
  /// and advances the table's rotation cursor / flash-crowd round when the
  /// policy uses them, so call it once per announce that wants peers.
  std::size_t select_compact(peer_table& table, policy_kind policy,
                             const allocation_request& req, const health_report* swarm,
                             std::string& peers4, std::string& peers6);

  /// Like `select_compact`, appending entries with ids to `out` (choice order).
  std::size_t select_entries(peer_table& table, policy_kind policy,
                             const allocation_request& req, const health_report* swarm,
                             std::vector<peer_entry>& out);

  /// The swarm-level concrete policy: `adaptive` becomes `flash_crowd` when
  /// `flash_condition(swarm)`, else `seeder_rotation`; others unchanged.
  policy_kind resolve(policy_kind requested, const health_report* swarm) const;

  /// The concrete selection policy for this request. Adaptive's decision
  /// table (checked top-down; the reachability rule and the contribution
  /// count apply on every row):
  ///
  ///   requester                  swarm                    -> selection
  ///   seeder                     flash condition          -> flash_crowd
  ///                                                          (stratified leechers)
  ///   seeder                     otherwise                -> role_aware (leechers)
  ///   leecher                    flash condition          -> flash_crowd
  ///   leecher with flag_stalled  otherwise                -> stalled_boost
  ///   leecher                    otherwise                -> seeder_rotation
  ///
  /// Flash-crowd wins over stalled boost on purpose: in a flash crowd most
  /// leechers look stalled, and boosting them all would hand the few seeders
  /// to everyone, which is what super-seeding must avoid.
  policy_kind resolve(policy_kind requested, const allocation_request& req,
                      const health_report* swarm) const;

  /// Whether the report calls for flash-crowd mode (see allocation_config).
  bool flash_condition(const health_report* swarm) const;

  /// Peers to return: `req.numwant`, or for a poor contributor under
  /// `contribution_weighted` / `adaptive` max(min(floor, numwant),
  /// floor(numwant × weight)).
  std::size_t effective_numwant(policy_kind policy, const allocation_request& req) const;

 private:
  struct shared_tag {};
  allocator(shared_tag, std::shared_ptr<const allocation_config> cfg, std::uint64_t seed)
      : cfg_(std::move(cfg)), rng_(seed) {}

  /// Fills the thread's picked list (allocation.cpp) with records_ indices,
  /// in reply order.
  void choose(peer_table& t, policy_kind policy, const allocation_request& req,
              const health_report* swarm);

  /// Uniform draws over a virtual index array with batched prefetching.
  template <class View, class Visit>
  void scan(peer_table& t, const View& v, std::uint32_t draws, Visit&& visit);

  // Building blocks (each appends to the picked list, marking picks; see .cpp).
  void take_uniform_all(peer_table& t, std::size_t want);
  void take_uniform(peer_table& t, int role, std::size_t want);
  void take_rotation(peer_table& t, std::size_t want, bool flash);
  template <class View>
  void sample_progress(peer_table& t, const View& v, std::size_t m);
  void take_top_progress(peer_table& t, std::size_t want);
  void take_stratified(peer_table& t, std::size_t want);
  void role_aware(peer_table& t, std::size_t n, bool rotation);
  /// Walks every candidate (leechers only, or every role) until the reply
  /// holds `n` peers (the fill after address shares refused picks).
  void take_scan(peer_table& t, std::size_t n, bool leechers_only);
  /// When address shares refused picks and the reply is short of `n`: the
  /// other addresses' peers by `take_scan`, then the crowd's.
  void fill_after_shares(peer_table& t, std::size_t n, bool leechers_only);
  /// Candidate test: not the requester, not quarantined, not picked, and
  /// reachable when the reachability rule is on.
  bool acceptable(const peer_table& t, std::uint32_t i) const;
  /// Adds record i to the reply, unless its address holds its share of the
  /// reply already (`allocation_config::max_address_share`); whether it did.
  bool pick(peer_table& t, std::uint32_t i);
  std::size_t draw_budget(std::size_t want) const noexcept;

  std::shared_ptr<const allocation_config> cfg_;
  fast_rng rng_;
  /// Per-call state. (The picked list, the candidates and the sampling
  /// scratch are per thread, see allocation.cpp: nothing of a selection
  /// outlives the call, so a swarm keeps no buffers between announces.)
  std::uint32_t self_ = 0;
  family_filter family_ = family_filter::both;
  bool requester_seeder_ = false;
  /// Seeders and partial seeds are never handed partial seeds: neither side
  /// would download from the other.
  bool skip_partial_ = false;
  bool avoid_unreachable_ = false;
};

}  // namespace sk
