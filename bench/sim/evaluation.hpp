#pragma once
/// The evaluation around the simulator: the named scenarios of the
/// self-healing comparison, replications on a thread per core with common
/// random numbers, paired differences against `random` with bootstrap
/// intervals, and the text / JSON output of `swarmsim`.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/sim/swarm_sim.hpp"

namespace sk::sim {

/// Names of the scenarios, in table order.
std::vector<std::string> scenario_names();
/// The scenario of that name; nullopt when unknown.
std::optional<scenario> make_scenario(const std::string& name);

/// Health reasons that counting partial seeds as leechers (or as stalled
/// ones) would raise: no / few seeders, stalled leechers, low completion
/// rate, flash crowd. The `seeding_alarm` metric is 1 for a run with any
/// degraded or critical report giving one of them in the measured span,
/// `seeding_remediation` for a run where a remediation started for one.
constexpr std::uint32_t seeding_alarm_reasons = reason_no_seeders | reason_few_seeders |
                                                reason_stalled_leechers |
                                                reason_low_completion_rate | reason_flash_crowd;

/// One measured quantity of a run.
struct metric_def {
  std::string name;
  /// Its value; negative values mean "not defined in this run" (for
  /// metrics that can be negative, see `signed_ok`).
  std::function<double(const run_metrics&, const std::map<std::string, double>&)> value;
  bool signed_ok = false;
};

/// Every metric swarmsim reports, in output order.
const std::vector<metric_def>& metric_defs();

/// One replication of one (scenario, setup): the run and, for free-rider
/// scenarios, extras such as the reference run's median.
struct replication_result {
  run_metrics m;
  std::map<std::string, double> extra;
};

/// Runs `reps` replications of every (scenario, setup) pair on `threads`
/// threads (0: one per core). result[s][p][r].
std::vector<std::vector<std::vector<replication_result>>> run_matrix(
    const std::vector<scenario>& scenarios, const std::vector<tracker_setup>& setups,
    std::uint32_t reps, std::uint64_t seed, unsigned threads);

/// A paired comparison of one metric against the baseline.
struct paired {
  std::size_t n = 0;      ///< replications where both values are defined
  double base_mean = 0;   ///< baseline mean over those
  double mean = 0;        ///< this setup's mean over those
  double rel = 0;         ///< (mean - base_mean) / base_mean
  double ci_low = 0;      ///< bootstrap 95% interval of rel
  double ci_high = 0;
  bool valid = false;
};

/// Paired relative difference of `x` against `base` (same length, same
/// replication order), with a percentile bootstrap (2000 resamples, fixed
/// seed: the same data always gives the same interval). Pairs where either
/// value is undefined (negative unless `signed_ok`) are left out.
paired compare(const std::vector<double>& x, const std::vector<double>& base, bool signed_ok);

/// Writes one JSON object per (scenario, setup), one per line.
void write_json(std::ostream& os, const std::vector<scenario>& scenarios,
                const std::vector<tracker_setup>& setups,
                const std::vector<std::vector<std::vector<replication_result>>>& results,
                std::uint64_t seed, std::size_t baseline);

/// Writes a readable table per scenario (key metrics, rel. to baseline).
void write_text(std::ostream& os, const std::vector<scenario>& scenarios,
                const std::vector<tracker_setup>& setups,
                const std::vector<std::vector<std::vector<replication_result>>>& results,
                std::size_t baseline);

}  // namespace sk::sim
