#include "tracker/remediation_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>



namespace sk {

namespace {

std::optional<policy_kind> policy_of(strategy s) {
  switch (s) {
    case strategy::stalled_boost:
      return policy_kind::stalled_boost;
    case strategy::flash_crowd:
      return policy_kind::flash_crowd;
    case strategy::seeder_rotation:
      return policy_kind::seeder_rotation;
    case strategy::reachability:
      return policy_kind::reachability_aware;
    case strategy::strict_quarantine:
    case strategy::keep_seeding:
      break;
  }
  return std::nullopt;
}

int popcount(std::uint32_t x) noexcept {
  int n = 0;
  for (; x != 0; x &= x - 1) {
    ++n;
  }
  return n;
}

std::string fmt_badness(double before, double after) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "badness %.1f -> %.1f", before, after);
  return buf;
}

}  // namespace

std::string remediation_config::validate() const {
  if (watch_ticks == 0) {
    return "remediation watch ticks must be at least 1";
  }
  if (watch_time < std::chrono::seconds{0}) {
    return "remediation watch time must not be negative";
  }
  if (healthy_time < std::chrono::seconds{0}) {
    return "remediation healthy time must not be negative";
  }
  if (!(leecher_interval_scale > 0.0 && leecher_interval_scale <= 1.0)) {
    return "remediation leecher interval scale must be in (0, 1] (got " +
           std::to_string(leecher_interval_scale) + ")";
  }
  if (!(min_improvement >= 0.0 && std::isfinite(min_improvement))) {
    return "remediation min improvement must be a non-negative number";
  }
  return {};
}

std::string_view to_string(strategy s) noexcept {
  switch (s) {
    case strategy::strict_quarantine:
      return "strict-quarantine";
    case strategy::stalled_boost:
      return "stalled-boost";
    case strategy::flash_crowd:
      return "flash-crowd";
    case strategy::seeder_rotation:
      return "seeder-rotation";
    case strategy::keep_seeding:
      return "keep-seeding";
    case strategy::reachability:
      return "reachability";
  }
  return "unknown";
}

std::vector<strategy> candidate_strategies(std::uint32_t reasons) {
  std::vector<strategy> out;
  if ((reasons & reason_abusive_clients) != 0) {
    out.push_back(strategy::strict_quarantine);
  }
  if ((reasons & (reason_stalled_leechers | reason_low_completion_rate)) != 0) {
    out.push_back(strategy::stalled_boost);
  }
  if ((reasons & (reason_no_seeders | reason_few_seeders | reason_flash_crowd)) != 0) {
    out.push_back(strategy::flash_crowd);
    out.push_back(strategy::seeder_rotation);
  }
  if ((reasons & reason_seeders_leave_early) != 0) {
    out.push_back(strategy::keep_seeding);
  }
  if ((reasons & reason_unreachable_peers) != 0) {
    out.push_back(strategy::reachability);
  }
  return out;
}

double badness(const health_signals& s) noexcept {
  const double leechers = static_cast<double>(std::max<std::uint64_t>(s.leechers, 1));
  // `unevaluated` lies outside the severity order: nothing judged, nothing bad.
  const double severity = is_unhealthy(s.state) ? static_cast<int>(s.state) : 0;
  double b = 100.0 * severity + 10.0 * popcount(s.reasons) +
             10.0 * static_cast<double>(s.stalled) / leechers;
  if (s.seeders == 0 && s.leechers > 0) {
    b += 5.0;
  }
  b -= std::min(std::max(s.completion_rate, 0.0), 5.0);
  return b;
}

remediation_plan::remediation_plan(remediation_config cfg, swarm_knobs baseline,
                                   std::uint32_t operator_reasons, bool policy_pinned)
    : cfg_(cfg),
      baseline_(baseline),
      knobs_(baseline),
      operator_reasons_(operator_reasons),
      policy_pinned_(policy_pinned) {}

namespace {

std::int64_t age_of(health_time now, health_time t) {
  return std::max<std::int64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now - t).count(), 0);
}

health_time time_at(health_time now, std::int64_t age_ms) {
  return now - std::chrono::milliseconds(std::max<std::int64_t>(age_ms, 0));
}

std::vector<strategy> strategies_of(const std::vector<std::uint16_t>& v) {
  std::vector<strategy> out;
  for (std::uint16_t x : v) {
    if (x < strategy_count) out.push_back(static_cast<strategy>(x));
  }
  return out;
}

std::vector<std::uint16_t> values_of(const std::vector<strategy>& v) {
  std::vector<std::uint16_t> out;
  out.reserve(v.size());
  for (strategy s : v) out.push_back(static_cast<std::uint16_t>(s));
  return out;
}

}  // namespace

remediation_progress aged(remediation_progress p, std::int64_t by_ms) noexcept {
  const std::int64_t by = std::max<std::int64_t>(by_ms, 0);
  if (p.trial_age_ms >= 0) p.trial_age_ms += by;
  if (p.healthy_age_ms >= 0) p.healthy_age_ms += by;
  return p;
}

remediation_plan::remediation_plan(remediation_config cfg, const remediation_progress& p,
                                   health_time now)
    : cfg_(cfg),
      baseline_(p.baseline),
      knobs_(p.knobs),
      started_(p.started),
      exhausted_(p.exhausted),
      active_(strategies_of(p.active)),
      tried_(strategies_of(p.tried)),
      trial_before_(p.trial_before),
      trial_ticks_(p.trial_ticks),
      start_signals_(p.start_signals),
      operator_reasons_(p.operator_reasons),
      policy_pinned_(p.policy_pinned) {
  if (p.trial >= 0 && p.trial < strategy_count) {
    trial_ = static_cast<strategy>(p.trial);
    trial_since_ = time_at(now, p.trial_age_ms);
  }
  if (p.healthy_age_ms >= 0) healthy_since_ = time_at(now, p.healthy_age_ms);
}

remediation_progress remediation_plan::progress(health_time now) const {
  remediation_progress p;
  p.baseline = baseline_;
  p.knobs = knobs_;
  p.started = started_;
  p.exhausted = exhausted_;
  p.active = values_of(active_);
  p.tried = values_of(tried_);
  if (trial_) {
    p.trial = static_cast<std::int16_t>(*trial_);
    p.trial_age_ms = age_of(now, trial_since_);
  }
  p.trial_before = trial_before_;
  p.trial_ticks = trial_ticks_;
  p.start_signals = start_signals_;
  if (healthy_since_) p.healthy_age_ms = age_of(now, *healthy_since_);
  p.operator_reasons = operator_reasons_;
  p.policy_pinned = policy_pinned_;
  return p;
}

std::uint32_t operator_reasons_for(std::uint32_t reported) noexcept {
  return reported != 0 ? reported : (reason_few_seeders | reason_stalled_leechers);
}

swarm_knobs remediation_plan::compose() const {
  swarm_knobs k = baseline_;
  const double short_scale =
      std::min(baseline_.leecher_interval_scale,
               baseline_.leecher_interval_scale * cfg_.leecher_interval_scale);
  for (strategy s : active_) {
    if (auto p = policy_of(s); p && !policy_pinned_) {
      k.policy = *p;
    }
    switch (s) {
      case strategy::strict_quarantine:
        k.quarantine_strict = true;
        break;
      case strategy::stalled_boost:
        k.leecher_interval_scale = short_scale;
        break;
      case strategy::flash_crowd:
        k.seeder_warning = true;
        k.leecher_interval_scale = short_scale;
        break;
      case strategy::seeder_rotation:
      case strategy::keep_seeding:
        k.seeder_warning = true;
        break;
      case strategy::reachability:
        break;
    }
  }
  return k;
}

bool remediation_plan::conflicts(strategy s) const {
  if (policy_pinned_) {
    // No strategy sets the policy: only one that does nothing else is out.
    return s == strategy::reachability;
  }
  if (!policy_of(s)) {
    return false;
  }
  return std::any_of(active_.begin(), active_.end(),
                     [](strategy a) { return policy_of(a).has_value(); });
}

remediation_record remediation_plan::make(const health_report& r, std::string action,
                                          std::string strategy_name, std::string reason) const {
  remediation_record rec;
  rec.at = r.at;
  rec.action = std::move(action);
  rec.strategy = std::move(strategy_name);
  rec.reason = std::move(reason);
  rec.detail = to_string(knobs_);
  rec.before = health_signals::of(r);
  rec.after = rec.before;
  return rec;
}

remediation_plan::step remediation_plan::on_report(const health_report& r) {
  step out;
  if (done_) {
    return out;
  }
  const health_signals now = health_signals::of(r);
  if (!started_) {
    started_ = true;
    start_signals_ = now;
    out.records.push_back(
        make(r, "start", "",
             operator_reasons_ != 0 ? "operator: " + reasons_to_string(operator_reasons_)
                                    : reasons_to_string(r.reasons)));
  }

  if (!is_unhealthy(r.state)) {
    if (!healthy_since_) {
      healthy_since_ = r.at;
    }
    if (r.at - *healthy_since_ >= cfg_.healthy_time) {
      knobs_ = baseline_;
      active_.clear();
      trial_.reset();
      done_ = true;
      auto rec = make(
          r, "end", "",
          "healthy for " + std::to_string(cfg_.healthy_time.count()) + " s; defaults restored");
      rec.before = start_signals_;
      out.records.push_back(std::move(rec));
      out.knobs = knobs_;
      out.done = true;
      return out;
    }
  } else {
    healthy_since_.reset();
  }

  // Judge the strategy on trial once it had its ticks.
  if (trial_) {
    ++trial_ticks_;
    if (trial_ticks_ >= cfg_.watch_ticks && r.at - trial_since_ >= cfg_.watch_time) {
      const double b0 = badness(trial_before_);
      const double b1 = badness(now);
      const bool helped = !is_unhealthy(r.state) || b0 - b1 >= cfg_.min_improvement;
      const strategy judged = *trial_;
      trial_.reset();
      if (!helped) {
        active_.erase(std::find(active_.begin(), active_.end(), judged));
        knobs_ = compose();
        out.knobs = knobs_;
      }
      auto rec = make(r, helped ? "keep" : "rollback", std::string(to_string(judged)),
                      fmt_badness(b0, b1) + (helped ? ": helped" : ": did not help"));
      rec.before = trial_before_;
      rec.after = now;
      out.records.push_back(std::move(rec));
    }
  }

  // Nothing on trial and still unhealthy (or an operator asked): the next
  // strategy.
  if (!trial_ && (is_unhealthy(r.state) || operator_reasons_ != 0)) {
    const std::uint32_t reasons = r.reasons | operator_reasons_;
    std::optional<strategy> next;
    for (strategy s : candidate_strategies(reasons)) {
      const bool tried = std::find(tried_.begin(), tried_.end(), s) != tried_.end();
      if (!tried && !conflicts(s)) {
        next = s;
        break;
      }
    }
    if (next) {
      const bool escalation = !active_.empty();
      tried_.push_back(*next);
      active_.push_back(*next);
      trial_ = next;
      trial_before_ = now;
      trial_since_ = r.at;
      trial_ticks_ = 0;
      exhausted_ = false;
      knobs_ = compose();
      out.knobs = knobs_;
      out.records.push_back(make(r, escalation ? "escalate" : "apply",
                                 std::string(to_string(*next)), reasons_to_string(reasons)));
    } else if (!exhausted_) {
      exhausted_ = true;
      out.records.push_back(make(
          r, "exhausted", "",
          "no untried strategy for " + reasons_to_string(reasons) + "; keeping what helped"));
    }
  }
  return out;
}

remediation_plan::step remediation_plan::abort(const health_report& last, const std::string& why) {
  step out;
  if (done_) {
    return out;
  }
  knobs_ = baseline_;
  active_.clear();
  trial_.reset();
  done_ = true;
  auto rec = make(last, "end", "", why);
  rec.before = start_signals_;
  out.records.push_back(std::move(rec));
  out.knobs = knobs_;
  out.done = true;
  return out;
}

std::optional<swarm_knobs> remediation_plan::rebase(const swarm_knobs& baseline,
                                                    bool policy_pinned) {
  baseline_ = baseline;
  policy_pinned_ = policy_pinned;
  if (done_) {
    return std::nullopt;
  }
  if (policy_pinned_ && trial_ == strategy::reachability) {
    // Nothing left of it under a pinned policy: its trial ends unjudged.
    trial_.reset();
  }
  if (policy_pinned_) {
    active_.erase(std::remove(active_.begin(), active_.end(), strategy::reachability),
                  active_.end());
  }
  knobs_ = compose();
  return knobs_;
}

// -- the actor ------------------------------------------------------------------

}  // namespace sk
