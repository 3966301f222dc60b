// The allocator's rules that pick no peer: its config's checks, which
// policy a request gets, and how many peers.
#include "tracker/allocation.hpp"

#include <algorithm>
#include <cmath>

namespace sk {

namespace {

bool in_unit(double x, bool zero_ok) {
  return std::isfinite(x) && (zero_ok ? x >= 0.0 : x > 0.0) && x <= 1.0;
}

}  // namespace

std::string allocation_config::validate() const {
  if (!in_unit(flash_crowd_seeder_ratio, true)) {
    return "allocation.flash_crowd_seeder_ratio must be in [0, 1]";
  }
  if (!in_unit(max_address_share, false)) {
    return "allocation.max_address_share must be in (0, 1]";
  }
  if (flash_crowd_reveal == 0) {
    return "allocation.flash_crowd_reveal must be at least 1";
  }
  if (flash_crowd_seeders_per_reply == 0) {
    return "allocation.flash_crowd_seeders_per_reply must be at least 1";
  }
  if (!in_unit(leecher_seeder_share, false)) {
    return "allocation.leecher_seeder_share must be in (0, 1]";
  }
  if (!in_unit(stalled_boost_fraction, false)) {
    return "allocation.stalled_boost_fraction must be in (0, 1]";
  }
  if (!in_unit(contribution_weight, true)) {
    return "allocation.contribution_weight must be in [0, 1]";
  }
  if (candidate_oversampling == 0 || candidate_oversampling > 64) {
    return "allocation.candidate_oversampling must be in [1, 64]";
  }
  if (flash_crowd_oversampling == 0 || flash_crowd_oversampling > 64) {
    return "allocation.flash_crowd_oversampling must be in [1, 64]";
  }
  if (extra_draws_per_peer > 64) {
    return "allocation.extra_draws_per_peer must be at most 64";
  }
  return {};
}

bool allocator::flash_condition(const health_report* swarm) const {
  if (swarm == nullptr) {
    return false;
  }
  if ((swarm->reasons & (reason_flash_crowd | reason_few_seeders)) != 0) {
    return true;
  }
  return swarm->leechers >= cfg_->flash_crowd_min_leechers &&
         static_cast<double>(swarm->seeders) <
             static_cast<double>(swarm->leechers) * cfg_->flash_crowd_seeder_ratio;
}

policy_kind allocator::resolve(policy_kind requested, const health_report* swarm) const {
  if (requested != policy_kind::adaptive) {
    return requested;
  }
  return flash_condition(swarm) ? policy_kind::flash_crowd : policy_kind::seeder_rotation;
}

policy_kind allocator::resolve(policy_kind requested, const allocation_request& req,
                               const health_report* swarm) const {
  if (requested != policy_kind::adaptive) {
    return requested;
  }
  const bool flash = flash_condition(swarm);
  if (req.requester_seeder) {
    return flash ? policy_kind::flash_crowd : policy_kind::role_aware;
  }
  if (flash) {
    return policy_kind::flash_crowd;
  }
  if (req.requester_traits != nullptr && req.requester_traits->has(flag_stalled)) {
    return policy_kind::stalled_boost;
  }
  return policy_kind::seeder_rotation;
}

std::size_t allocator::effective_numwant(policy_kind policy,
                                         const allocation_request& req) const {
  const std::size_t n = req.numwant;
  const bool weighted =
      policy == policy_kind::contribution_weighted || policy == policy_kind::adaptive;
  if (!weighted || req.requester_traits == nullptr ||
      !req.requester_traits->has(flag_poor_contributor)) {
    return n;
  }
  const auto scaled =
      static_cast<std::size_t>(std::floor(static_cast<double>(n) * cfg_->contribution_weight));
  return std::min(n, std::max(std::min(cfg_->contribution_floor, n), scaled));
}

}  // namespace sk
