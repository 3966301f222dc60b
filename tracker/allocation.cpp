#include "tracker/allocation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace sk {

namespace {

constexpr std::uint32_t no_record = std::numeric_limits<std::uint32_t>::max();

/// ceil(n × f) for f in [0, 1], robust to 0.1 × 10 = 1.0000000000000002.
std::size_t ceil_share(std::size_t n, double f) {
  const double x = std::ceil(static_cast<double>(n) * f - 1e-9);
  return x <= 0 ? 0 : std::min(n, static_cast<std::size_t>(x));
}

}  // namespace

allocator::allocator(allocation_config cfg, std::uint64_t seed)
    : cfg_(std::make_shared<const allocation_config>(std::move(cfg))), rng_(seed) {}

allocator allocator::on_shared(std::shared_ptr<const allocation_config> cfg, std::uint64_t seed) {
  return allocator(shared_tag{}, std::move(cfg), seed);
}

namespace {

/// Scratch of the selection in progress, shared by every allocator on the
/// thread (a selection never starts another): the picks in reply order, and
/// the sampled candidates of the progress-ranked policies. Warm buffers for
/// whichever swarm the thread serves next, none kept per swarm.
struct selection_scratch {
  std::vector<std::uint32_t> picked;
  std::vector<std::pair<float, std::uint32_t>> candidates;
  /// Picks of this reply per address tag (`hot_entry::addr_tag`): open
  /// addressing over parallel arrays, valid where `stamps` equals `stamp`
  /// (cleared in O(1) per reply).
  std::vector<std::uint16_t> tags;
  std::vector<std::uint16_t> counts;
  std::vector<std::uint32_t> stamps;
  /// The records_ index of each tag's first pick.
  std::vector<std::uint32_t> first;
  std::uint32_t stamp = 0;
  std::uint32_t mask = 0;
  /// Most picks per address tag in this reply; 0: no share applies.
  std::size_t share_limit = 0;
  /// A pick was refused for its address's share in this reply.
  bool share_refused = false;

  /// Starts a reply of at most `n` picks with at most `limit` per tag.
  void reset_shares(std::size_t n, std::size_t limit) {
    share_limit = limit;
    share_refused = false;
    if (limit == 0) return;
    std::size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (stamps.size() < cap) {
      tags.assign(cap, 0);
      counts.assign(cap, 0);
      stamps.assign(cap, 0);
      first.assign(cap, 0);
      stamp = 0;
    }
    mask = static_cast<std::uint32_t>(cap - 1);
    if (++stamp == 0) {
      std::fill(stamps.begin(), stamps.end(), 0);
      stamp = 1;
    }
  }
  /// Counts one more pick of `tag` (record `i`) and returns true, or returns
  /// false when its address holds its share already. Tags are 16 bits: when
  /// a tag at its share belongs to another address than its first pick's,
  /// the two merely collide, and the pick is allowed (`same_address` reads
  /// the records, only then).
  template <class SameAddress>
  bool take_share(std::uint16_t tag, std::uint32_t i, SameAddress&& same_address) {
    if (share_limit == 0) return true;
    // Picks are at most n and the table has 2n slots or more: a free slot
    // always ends the probe.
    for (std::uint32_t s = (tag * 0x9e37u) & mask;; s = (s + 1) & mask) {
      if (stamps[s] != stamp) {
        stamps[s] = stamp;
        tags[s] = tag;
        counts[s] = 1;
        first[s] = i;
        return true;
      }
      if (tags[s] == tag) {
        if (counts[s] < share_limit) {
          ++counts[s];
          return true;
        }
        if (!same_address(first[s], i)) return true;
        share_refused = true;
        return false;
      }
    }
  }
};
thread_local selection_scratch scratch;

}  // namespace

// -- building blocks ----------------------------------------------------------

std::size_t allocator::draw_budget(std::size_t want) const noexcept {
  // Refusals come from the requester (one), peers already picked for this
  // reply, and (under the reachability rule) unreachable peers.
  return want + want * cfg_->extra_draws_per_peer + 16 + scratch.picked.size();
}

// Candidate checks and picks read and write only the 16-byte hot entry
// (peer_table::hot_entry): on a swarm far larger than the cache, each
// candidate is one small random read instead of a 152-byte record. The
// hot flags equal the traits' flags here because `choose` syncs first.
bool allocator::acceptable(const peer_table& t, std::uint32_t i) const {
  const peer_table::hot_entry& h = t.hot_[i];
  if (i == self_ || h.mark == t.mark_epoch_ || h.has(peer_table::hot_quarantined) ||
      (h.flags & flag_quarantined) != 0 || (skip_partial_ && h.has(peer_table::hot_partial))) {
    return false;
  }
  const bool v6 = h.has(peer_table::hot_v6);
  if (family_ == family_filter::v4_only ? v6 : family_ == family_filter::v6_only && !v6) {
    return false;
  }
  return !(avoid_unreachable_ && (h.flags & flag_unreachable) != 0);
}

bool allocator::pick(peer_table& t, std::uint32_t i) {
  peer_table::hot_entry& h = t.hot_[i];
  if (!scratch.take_share(h.addr_tag, i, [&t](std::uint32_t a, std::uint32_t b) {
        const ip_address& x = t.records_[a].ip;
        const ip_address& y = t.records_[b].ip;
        return x.v6 == y.v6 && address_bits(x) == address_bits(y);
      })) {
    return false;  // its address has its share of this reply; see `take_scan`
  }
  h.mark = t.mark_epoch_;
  ++h.served;
  scratch.picked.push_back(i);
  return true;
}

namespace {

/// The concatenation of the allowed families' parts of one index set, as
/// one virtual array (sampling position p -> records_ index).
struct concat_view {
  const std::vector<std::uint32_t>* a = nullptr;
  const std::vector<std::uint32_t>* b = nullptr;
  std::uint32_t size_a = 0;
  std::uint32_t size_b = 0;
  std::uint32_t size() const noexcept { return size_a + size_b; }
  std::uint32_t at(std::uint32_t p) const { return p < size_a ? (*a)[p] : (*b)[p - size_a]; }
  const std::uint32_t* address(std::uint32_t p) const {
    return p < size_a ? a->data() + p : b->data() + (p - size_a);
  }
};

concat_view view_of(const std::vector<std::uint32_t>& v4, std::uint32_t n4,
                    const std::vector<std::uint32_t>& v6, std::uint32_t n6,
                    family_filter family) {
  concat_view v;
  v.a = &v4;
  v.b = &v6;
  v.size_a = family == family_filter::v6_only ? 0 : n4;
  v.size_b = family == family_filter::v4_only ? 0 : n6;
  return v;
}

/// The allowed families' part of one role's pools (0 seeders, 1 leechers).
concat_view role_view(const std::array<std::vector<std::uint32_t>, 2>& pools,
                      family_filter family) {
  return view_of(pools[0], static_cast<std::uint32_t>(pools[0].size()), pools[1],
                 static_cast<std::uint32_t>(pools[1].size()), family);
}

}  // namespace

// Draws `draws` positions of `v` (uniform order, without replacement) and
// calls `visit(records_ index)` for each until it returns false. On a swarm
// far larger than the cache every candidate costs two dependent misses (the
// index-pool entry, then its hot entry), and overlapping them is most of
// the cost, so positions are drawn in batches, in three passes: draw and
// prefetch the pool entries, read them and prefetch the hot entries, visit.
// (Drawing up to a batch more than needed only consumes PRNG output; the
// accepted ones stay a uniform sample, and the draws are the same as
// visiting one at a time.)
//
// The sampler's scratch map is shared by every allocator on the thread:
// it is scratch for one scan only (a scan never starts another), and one
// warm copy beats a cold one per swarm when announces hop between many
// swarms. Its draws depend only on the PRNG, size and count, not on the
// map, so sharing changes no selection.
template <class View, class Visit>
void allocator::scan(peer_table& t, const View& v, std::uint32_t draws, Visit&& visit) {
  constexpr std::uint32_t batch = 8;
  std::uint32_t buf[batch];
  static thread_local sparse_sampler sampler;
  sampler.reset(v.size(), draws);
  for (std::uint32_t d = 0; d < draws;) {
    const std::uint32_t k = std::min(batch, draws - d);
    for (std::uint32_t j = 0; j < k; ++j) {
      buf[j] = sampler.next(rng_);
      __builtin_prefetch(v.address(buf[j]));
    }
    for (std::uint32_t j = 0; j < k; ++j) {
      buf[j] = v.at(buf[j]);
      __builtin_prefetch(&t.hot_[buf[j]]);
    }
    for (std::uint32_t j = 0; j < k; ++j) {
      if (!visit(buf[j])) {
        return;
      }
    }
    d += k;
  }
}

void allocator::take_uniform_all(peer_table& t, std::size_t want) {
  // Every sampleable peer of the allowed families: slots [0, active).
  const concat_view v =
      view_of(t.v4_.owner, t.v4_.active, t.v6_.owner, t.v6_.active, family_);
  const std::size_t target = scratch.picked.size() + want;
  if (want == 0 || v.size() == 0) {
    return;
  }
  const auto draws = static_cast<std::uint32_t>(std::min<std::size_t>(v.size(), draw_budget(want)));
  scan(t, v, draws, [&](std::uint32_t i) {
    if (acceptable(t, i)) {
      pick(t, i);
    }
    return scratch.picked.size() < target;
  });
}

void allocator::take_scan(peer_table& t, std::size_t n, bool leechers_only) {
  // Every candidate once, in storage order from a random start: only after
  // the policy came out short because crowded addresses had their share,
  // so the few peers of other addresses are found however many the crowded
  // ones hold (sampling would mostly draw the crowd). O(candidates); the
  // per-address bound of the table keeps a crowd small.
  const concat_view v =
      leechers_only ? role_view(t.pools_[1], family_)
                    : view_of(t.v4_.owner, t.v4_.active, t.v6_.owner, t.v6_.active, family_);
  if (v.size() == 0) {
    return;
  }
  const std::uint32_t start = rng_.below(v.size());
  for (std::uint32_t s = 0; s < v.size() && scratch.picked.size() < n; ++s) {
    const std::uint32_t p = start + s;
    const std::uint32_t i = v.at(p >= v.size() ? p - v.size() : p);
    if (acceptable(t, i)) {
      pick(t, i);
    }
  }
}

void allocator::take_uniform(peer_table& t, int role, std::size_t want) {
  const concat_view v = role_view(t.pools_[static_cast<std::size_t>(role)], family_);
  const std::size_t target = scratch.picked.size() + want;
  if (want == 0 || v.size() == 0) {
    return;
  }
  const auto draws = static_cast<std::uint32_t>(std::min<std::size_t>(v.size(), draw_budget(want)));
  scan(t, v, draws, [&](std::uint32_t i) {
    if (acceptable(t, i)) {
      pick(t, i);
    }
    return scratch.picked.size() < target;
  });
}

void allocator::take_rotation(peer_table& t, std::size_t want, bool flash) {
  // Round robin over the seeder pools of the allowed families. The cursor
  // advances past every position looked at, picked or not, so a full cycle
  // takes ceil(S / seeders per reply) replies when nothing is refused.
  // Swap-removals move one seeder per removal, which can delay it by at most
  // one cycle; the bound is exact for a stable seeder set.
  const concat_view v = role_view(t.pools_[0], family_);
  if (want == 0 || v.size() == 0) {
    return;
  }
  std::uint32_t& cursor = t.rotation_[static_cast<std::size_t>(family_)];
  const std::uint32_t start = cursor % v.size();
  const auto limit = static_cast<std::uint32_t>(std::min<std::size_t>(v.size(), draw_budget(want)));
  const std::size_t target = scratch.picked.size() + want;
  std::uint32_t steps = 0;
  auto position = [&](std::uint32_t step) {
    const std::uint32_t p = start + step;
    return p >= v.size() ? p - v.size() : p;
  };
  // The pool is walked in order (hardware prefetch handles it); the hot
  // entries it names are random, so prefetch them a few steps ahead.
  constexpr std::uint32_t ahead = 8;
  for (std::uint32_t s = 0; s < std::min(ahead, limit); ++s) {
    __builtin_prefetch(&t.hot_[v.at(position(s))]);
  }
  while (steps < limit && scratch.picked.size() < target) {
    const std::uint32_t p = position(steps);
    if (steps + ahead < limit) {
      __builtin_prefetch(&t.hot_[v.at(position(steps + ahead))]);
    }
    ++steps;
    const std::uint32_t i = v.at(p);
    if (!acceptable(t, i)) {
      continue;
    }
    if (flash) {
      // Tracker-side super-seeding: a bounded audience per seeder and round.
      peer_table::reveal_state& r = t.reveal_at(i);
      if (r.round != t.flash_round_) {
        r.round = t.flash_round_;
        r.count = 0;
      }
      if (r.count >= cfg_->flash_crowd_reveal) {
        continue;
      }
      ++r.count;
      if (!pick(t, i)) --r.count;  // not revealed after all
      continue;
    }
    pick(t, i);
  }
  cursor = (start + steps) % v.size();
}

// Fills scratch.candidates with (progress, records_ index) of up to m acceptable
// peers drawn uniformly from `v`.
template <class View>
void allocator::sample_progress(peer_table& t, const View& v, std::size_t m) {
  const auto draws = static_cast<std::uint32_t>(std::min<std::size_t>(v.size(), draw_budget(m)));
  scratch.candidates.clear();
  scan(t, v, draws, [&](std::uint32_t i) {
    if (acceptable(t, i)) {
      scratch.candidates.emplace_back(t.records_[i].traits.progress, i);
    }
    return scratch.candidates.size() < m;
  });
}

void allocator::take_top_progress(peer_table& t, std::size_t want) {
  // The most complete leechers among a uniform sample of c × want of them
  // (c = candidate_oversampling): the top want of that sample lie, in
  // expectation, in the top 1/c of the swarm, found without an O(size) scan.
  const concat_view v = role_view(t.pools_[1], family_);
  if (want == 0 || v.size() == 0) {
    return;
  }
  sample_progress(t, v, want * cfg_->candidate_oversampling);
  const std::size_t k = std::min(want, scratch.candidates.size());
  std::partial_sort(scratch.candidates.begin(), scratch.candidates.begin() + static_cast<std::ptrdiff_t>(k),
                    scratch.candidates.end(), [](const auto& x, const auto& y) {
                      return x.first != y.first ? x.first > y.first : x.second < y.second;
                    });
  for (std::size_t j = 0; j < k; ++j) {
    pick(t, scratch.candidates[j].second);
  }
}

void allocator::take_stratified(peer_table& t, std::size_t want) {
  // Leechers at evenly spaced progress ranks of an oversampled sample, so a
  // reply mixes early, middle and late peers (unknown progress sorts first,
  // with the beginners).
  const concat_view v = role_view(t.pools_[1], family_);
  if (want == 0 || v.size() == 0) {
    return;
  }
  sample_progress(t, v, want * cfg_->flash_crowd_oversampling);
  std::sort(scratch.candidates.begin(), scratch.candidates.end());
  const std::size_t c = scratch.candidates.size();
  if (c <= want) {
    for (const auto& cand : scratch.candidates) {
      pick(t, cand.second);
    }
    return;
  }
  // c > want: the ranks floor((j + 1/2) c / want) are distinct.
  for (std::size_t j = 0; j < want; ++j) {
    pick(t, scratch.candidates[(2 * j + 1) * c / (2 * want)].second);
  }
}

void allocator::role_aware(peer_table& t, std::size_t n, bool rotation) {
  if (requester_seeder_) {
    take_uniform(t, 1, n);  // seeders never get seeders
    return;
  }
  const std::size_t q = ceil_share(n, cfg_->leecher_seeder_share);
  auto seeders = [&](std::size_t want) {
    rotation ? take_rotation(t, want, false) : take_uniform(t, 0, want);
  };
  seeders(q);
  take_uniform(t, 1, n - scratch.picked.size());
  if (scratch.picked.size() < n) {
    seeders(n - scratch.picked.size());  // leechers ran short
  }
}

// -- policies -----------------------------------------------------------------

void allocator::choose(peer_table& t, policy_kind policy, const allocation_request& req,
                       const health_report* swarm) {
  t.sync();
  scratch.picked.clear();
  if (++t.mark_epoch_ == 0) {  // wrapped: stale marks could look current
    for (auto& h : t.hot_) {
      h.mark = 0;
    }
    t.mark_epoch_ = 1;
  }
  self_ = t.locate(req.requester);
  if (self_ == peer_table::none) {
    self_ = no_record;
  }
  family_ = req.family;
  requester_seeder_ = req.requester_seeder || req.requester_partial;
  skip_partial_ = requester_seeder_;
  const bool unreachable =
      req.requester_traits != nullptr && req.requester_traits->has(flag_unreachable);
  avoid_unreachable_ =
      unreachable && (policy == policy_kind::reachability_aware || policy == policy_kind::adaptive);
  const std::size_t n = effective_numwant(policy, req);
  if (n == 0) {
    return;
  }
  // One address's share of this reply (see allocation_config).
  const auto share = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::floor(static_cast<double>(n) * cfg_->max_address_share)));
  scratch.reset_shares(n, share < n ? share : 0);
  const policy_kind chosen = resolve(policy, req, swarm);
  switch (chosen) {
    case policy_kind::random:
      take_uniform_all(t, n);
      break;
    case policy_kind::role_aware:
    case policy_kind::reachability_aware:
    case policy_kind::contribution_weighted:
    case policy_kind::adaptive:  // not returned by resolve
      role_aware(t, n, false);
      break;
    case policy_kind::seeder_rotation:
      role_aware(t, n, true);
      break;
    case policy_kind::stalled_boost:
      if (requester_seeder_ || req.requester_traits == nullptr ||
          !req.requester_traits->has(flag_stalled)) {
        role_aware(t, n, false);
        break;
      }
      {
        // Boost slots: seeders first, then the most complete leechers.
        const std::size_t b = ceil_share(n, cfg_->stalled_boost_fraction);
        take_uniform(t, 0, b);
        take_top_progress(t, b - scratch.picked.size());
      }
      take_uniform(t, 1, n - scratch.picked.size());
      take_uniform(t, 0, n - scratch.picked.size());
      break;
    case policy_kind::flash_crowd:
      if (requester_seeder_) {
        take_stratified(t, n);
        break;
      }
      take_rotation(t, std::min<std::size_t>(n, cfg_->flash_crowd_seeders_per_reply), true);
      take_stratified(t, n - scratch.picked.size());
      // Leechers the shares held back come before any seeder top-up.
      fill_after_shares(t, n, true);
      take_rotation(t, n - scratch.picked.size(), true);  // leechers ran short
      // A round lasts as many leecher announces as there are leechers,
      // about one announce interval.
      if (++t.flash_served_ >= std::max<std::size_t>(1, t.leechers_)) {
        ++t.flash_round_;
        t.flash_served_ = 0;
      }
      break;
  }
  // Seeders get leechers only, and so does a leecher under flash-crowd
  // (its seeders are rationed).
  fill_after_shares(t, n, requester_seeder_ || chosen == policy_kind::flash_crowd);
}

void allocator::fill_after_shares(peer_table& t, std::size_t n, bool leechers_only) {
  if (scratch.picked.size() >= n || !scratch.share_refused) {
    return;
  }
  // Short because crowded addresses had their share: first every other
  // address's peers, then, when none is left, the crowd (a swarm behind
  // one NAT still gets full replies).
  take_scan(t, n, leechers_only);
  if (scratch.picked.size() < n) {
    const std::size_t limit = scratch.share_limit;
    scratch.share_limit = 0;
    take_scan(t, n, leechers_only);
    scratch.share_limit = limit;
  }
}

std::size_t allocator::select_compact(peer_table& table, policy_kind policy,
                                      const allocation_request& req, const health_report* swarm,
                                      std::string& peers4, std::string& peers6) {
  choose(table, policy, req, swarm);
  // Copied from the families' compact vectors (the hot entries, in cache
  // from the choice, give the slots), never from the records. All the
  // sources are prefetched first so their misses overlap; then each buffer
  // grows once and takes fixed-size copies.
  std::size_t k6 = 0;
  for (const std::uint32_t i : scratch.picked) {
    const peer_table::hot_entry& h = table.hot_[i];
    const bool v6 = h.has(peer_table::hot_v6);
    const peer_table::family& f = v6 ? table.v6_ : table.v4_;
    __builtin_prefetch(f.compact.data() + static_cast<std::size_t>(h.slot) * f.width());
    k6 += v6;
  }
  const std::size_t k4 = scratch.picked.size() - k6;
  const std::size_t o4 = peers4.size();
  const std::size_t o6 = peers6.size();
  peers4.resize(o4 + 6 * k4);
  peers6.resize(o6 + 18 * k6);
  char* w4 = peers4.data() + o4;
  char* w6 = peers6.data() + o6;
  for (const std::uint32_t i : scratch.picked) {
    const peer_table::hot_entry& h = table.hot_[i];
    const std::size_t slot = h.slot;
    if (h.has(peer_table::hot_v6)) {
      std::memcpy(w6, table.v6_.compact.data() + slot * 18, 18);
      w6 += 18;
    } else {
      std::memcpy(w4, table.v4_.compact.data() + slot * 6, 6);
      w4 += 6;
    }
  }
  return scratch.picked.size();
}

std::size_t allocator::select_entries(peer_table& table, policy_kind policy,
                                      const allocation_request& req, const health_report* swarm,
                                      std::vector<peer_entry>& out) {
  choose(table, policy, req, swarm);
  out.reserve(out.size() + scratch.picked.size());
  for (const std::uint32_t i : scratch.picked) {
    const peer_table::record& r = table.records_[i];
    peer_entry e;
    e.id = r.id;
    e.ep.ip = r.ip;
    e.ep.port = r.port;
    out.push_back(e);
  }
  return scratch.picked.size();
}

}  // namespace sk
