#include "bench/sim/evaluation.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "tracker/random.hpp"

namespace sk::sim {

namespace {

constexpr double kib = 1024.0;
constexpr double mib = 1024.0 * 1024.0;

/// Home connections: the leecher mix of most scenarios (mean upload about
/// 195 KiB/s; a 256 MiB file takes about 22 min at that rate).
std::vector<peer_class> home_mix() {
  return {{100 * kib, 1 * mib, 0.5}, {200 * kib, 2 * mib, 0.35}, {500 * kib, 4 * mib, 0.15}};
}

scenario base(const std::string& name, const std::string& description) {
  scenario s;
  s.name = name;
  s.description = description;
  s.pieces = 256;
  s.piece_bytes = 1 * mib;  // a 256 MiB file
  s.classes = home_mix();
  return s;
}

/// Poisson arrivals for `hours`, measured after a warm-up of `warmup_h`.
void poisson(scenario& s, double per_hour, double hours, double warmup_h) {
  s.poisson_rate = per_hour / 3600.0;
  s.poisson_until_s = hours * 3600;
  s.measure_from_s = warmup_h * 3600;
  s.measure_until_s = hours * 3600;
  s.horizon_s = hours * 3600 + 4 * 3600;
}

/// `per_hour` 300 keeps about 200 peers in the swarm, more than numwant
/// (50) and the peer set (80): the regime where the choice of peers matters
/// at all. "-small" (90/h, about 60 peers) is the regime where every
/// announce gets nearly everyone anyway.
scenario unreachable(double fraction, double per_hour, const char* suffix) {
  const int pct = static_cast<int>(fraction * 100 + 0.5);
  scenario s = base("unreachable-" + std::to_string(pct) + suffix,
                    "Poisson " + std::to_string(static_cast<int>(per_hour)) +
                        "/h for 4 h, one origin seed at 1 MiB/s, seeding 20 min on average; " +
                        std::to_string(pct) + "% of peers accept no inbound connection");
  s.origin_seeds = 1;
  s.origin_up_bps = 1 * mib;
  poisson(s, per_hour, 4, 1);
  s.seed_time_mean_s = 20 * 60;
  s.unreachable_fraction = fraction;
  return s;
}

/// A multi-file torrent where most arrivals want only some files: 8 files
/// of 32 MiB, Poisson 150/h for 5 h, 3 origin seeds; 80% of arrivals pick a
/// contiguous run of 1-3 files and, once they have it, seed it for 60 min on
/// average (partial seeds); full leechers seed 30 min on average, as in
/// `steady` (long enough that "seeders leave early" is rarely true). About
/// 20 seeders, 120 partial seeds and a few downloading peers: seeders are
/// fewer than a tenth of the peers that are not seeders, so a tracker that
/// counted partial seeds as leechers would call the swarm short of seeders.
/// `paused` off: the same peers without BEP 21 (they announce none).
scenario partial_seeds(const std::string& name, bool paused) {
  scenario s = base(name, std::string("partial seeds: 8 files of 32 MiB, Poisson 150/h for 5 h, "
                                      "3 origin seeds at 512 KiB/s; 80% of arrivals want 1-3 "
                                      "contiguous files and seed them 60 min on average ") +
                              (paused ? "announcing paused (BEP 21)"
                                      : "announcing none (no BEP 21)") +
                              "; full leechers seed 30 min");
  s.files = 8;
  s.origin_seeds = 3;
  s.origin_up_bps = 512 * kib;
  poisson(s, 150, 5, 1.5);
  s.seed_time_mean_s = 30 * 60;
  s.partial_fraction = 0.8;
  s.partial_max_files = 3;
  s.partial_seed_time_mean_s = 60 * 60;
  s.partial_announce_paused = paused;
  return s;
}

}  // namespace

std::vector<std::string> scenario_names() {
  return {"steady",         "flash-crowd",    "heterogeneous",
          "unreachable-30", "unreachable-50", "unreachable-70",
          "unreachable-50-small", "seeders-leave", "free-riders",
          "partial-seeds", "partial-seeds-no-paused"};
}

std::optional<scenario> make_scenario(const std::string& name) {
  if (name == "steady") {
    scenario s = base(name, "steady and well seeded: Poisson 60/h for 6 h, 3 origin seeds at "
                            "1 MiB/s, seeding 30 min on average");
    s.origin_seeds = 3;
    s.origin_up_bps = 1 * mib;
    poisson(s, 60, 6, 1.5);
    s.seed_time_mean_s = 30 * 60;
    return s;
  }
  if (name == "flash-crowd") {
    scenario s = base(name, "flash crowd: 200 leechers within 2 min, one slow origin seed "
                            "(200 KiB/s), seeding 20 min on average");
    s.origin_seeds = 1;
    s.origin_up_bps = 200 * kib;
    s.flash_leechers = 200;
    s.flash_window_s = 120;
    s.seed_time_mean_s = 20 * 60;
    s.horizon_s = 10 * 3600;
    return s;
  }
  if (name == "heterogeneous") {
    scenario s = base(name, "heterogeneous bandwidth: 10% fast (2 MiB/s up), 30% medium "
                            "(256 KiB/s), 60% slow (32 KiB/s); Poisson 60/h, one origin seed");
    s.classes = {{2 * mib, 8 * mib, 0.1}, {256 * kib, 2 * mib, 0.3}, {32 * kib, 512 * kib, 0.6}};
    s.origin_seeds = 1;
    s.origin_up_bps = 512 * kib;
    poisson(s, 60, 6, 1.5);
    s.seed_time_mean_s = 15 * 60;
    return s;
  }
  if (name == "unreachable-30") {
    return unreachable(0.3, 300, "");
  }
  if (name == "unreachable-50") {
    return unreachable(0.5, 300, "");
  }
  if (name == "unreachable-70") {
    return unreachable(0.7, 300, "");
  }
  if (name == "unreachable-50-small") {
    return unreachable(0.5, 90, "-small");
  }
  if (name == "seeders-leave") {
    scenario s = base(name, "seeders leaving at once: 150 leechers over 10 min, 2 origin seeds "
                            "at 256 KiB/s, seeding 10 min on average; at 17.5 min every seeder "
                            "leaves (pieces not yet copied are lost)");
    s.origin_seeds = 2;
    s.origin_up_bps = 256 * kib;
    s.poisson_rate = 150.0 / 600.0;
    s.poisson_until_s = 600;
    s.seeders_leave_at_s = 1050;
    s.seed_time_mean_s = 10 * 60;
    s.horizon_s = 6 * 3600;
    return s;
  }
  if (name == "free-riders") {
    scenario s = base(name, "20% free-riders (never upload, report uploaded = 0); Poisson 90/h, "
                            "2 origin seeds at 512 KiB/s; compared with the same run without "
                            "them");
    s.origin_seeds = 2;
    s.origin_up_bps = 512 * kib;
    poisson(s, 90, 5, 1.5);
    s.seed_time_mean_s = 20 * 60;
    s.freerider_fraction = 0.2;
    return s;
  }
  if (name == "partial-seeds") {
    return partial_seeds(name, true);
  }
  if (name == "partial-seeds-no-paused") {
    return partial_seeds(name, false);
  }
  return std::nullopt;
}

const std::vector<metric_def>& metric_defs() {
  using R = run_metrics;
  using X = std::map<std::string, double>;
  auto extra = [](const X& x, const char* k) {
    auto it = x.find(k);
    return it == x.end() ? -1.0 : it->second;
  };
  static const std::vector<metric_def> defs = {
      {"median_s", [](const R& m, const X&) { return m.median_s; }, false},
      {"p95_s", [](const R& m, const X&) { return m.p95_s; }, false},
      {"max_s", [](const R& m, const X&) { return m.max_s; }, false},
      {"mean_s", [](const R& m, const X&) { return m.completed ? m.mean_s : -1.0; }, false},
      {"fraction_completed", [](const R& m, const X&) { return m.fraction_completed; }, false},
      {"first_copy_s", [](const R& m, const X&) { return m.first_copy_s; }, false},
      {"seed_upload_copies", [](const R& m, const X&) { return m.seed_upload_copies; }, false},
      {"min_copies_mean", [](const R& m, const X&) { return m.min_copies_mean; }, false},
      {"stalled_mean", [](const R& m, const X&) { return m.stalled_mean; }, false},
      {"stalled_peak", [](const R& m, const X&) { return double(m.stalled_peak); }, false},
      {"unreachable_median_s", [](const R& m, const X&) { return m.unreachable_median_s; }, false},
      {"reachable_median_s", [](const R& m, const X&) { return m.reachable_median_s; }, false},
      {"compliant_median_s", [](const R& m, const X&) { return m.compliant_median_s; }, false},
      {"compliant_p95_s", [](const R& m, const X&) { return m.compliant_p95_s; }, false},
      {"freerider_median_s", [](const R& m, const X&) { return m.freerider_median_s; }, false},
      {"no_freerider_median_s",
       [extra](const R&, const X& x) { return extra(x, "no_freerider_median_s"); }, false},
      {"compliant_vs_no_freeriders",
       [extra](const R& m, const X& x) {
         const double ref = extra(x, "no_freerider_median_s");
         return ref > 0 && m.compliant_median_s > 0 ? m.compliant_median_s / ref - 1.0 : -1e300;
       },
       true},
      {"partial_median_s", [](const R& m, const X&) { return m.partial_median_s; }, false},
      {"partial_p95_s", [](const R& m, const X&) { return m.partial_p95_s; }, false},
      {"partial_fraction_completed",
       [](const R& m, const X&) {
         return m.partial_seeds ? double(m.partial_completed) / m.partial_seeds : -1.0;
       },
       false},
      {"mean_leechers", [](const R& m, const X&) { return m.mean_leechers; }, false},
      {"mean_seeders", [](const R& m, const X&) { return m.mean_seeders; }, false},
      {"mean_partial", [](const R& m, const X&) { return m.mean_partial; }, false},
      {"announces", [](const R& m, const X&) { return double(m.announces); }, false},
      {"paused_announces", [](const R& m, const X&) { return double(m.paused_announces); },
       false},
      {"remediation_actions",
       [](const R& m, const X&) { return double(m.remediation_actions); }, false},
      {"unhealthy_share",
       [](const R& m, const X&) {
         return m.health_ticks ? double(m.unhealthy_ticks) / m.health_ticks : -1.0;
       },
       false},
      {"leave_early_share",
       [](const R& m, const X&) {
         return m.health_ticks ? double(m.leave_early_ticks) / m.health_ticks : -1.0;
       },
       false},
      {"remediation_starts", [](const R& m, const X&) { return double(m.remediation_starts); },
       false},
      {"seeding_remediation",
       [](const R& m, const X&) {
         return (m.remediation_reasons & seeding_alarm_reasons) != 0 ? 1.0 : 0.0;
       },
       false},
      {"seeding_alarm",
       [](const R& m, const X&) {
         return (m.unhealthy_reasons & seeding_alarm_reasons) != 0 ? 1.0 : 0.0;
       },
       false},
      {"seeder_appeals", [](const R& m, const X&) { return double(m.seeder_appeals); }, false},
      {"warned", [](const R& m, const X&) { return double(m.warned); }, false},
      {"refused", [](const R& m, const X&) { return double(m.refused); }, false},
      {"scrape_mismatches", [](const R& m, const X&) { return double(m.scrape_mismatches); },
       false},
      {"end_s", [](const R& m, const X&) { return m.end_s; }, false},
  };
  return defs;
}

namespace {

bool defined(double v, bool signed_ok) { return signed_ok ? v > -1e299 : v >= 0; }

}  // namespace

std::vector<std::vector<std::vector<replication_result>>> run_matrix(
    const std::vector<scenario>& scenarios, const std::vector<tracker_setup>& setups,
    std::uint32_t reps, std::uint64_t seed, unsigned threads) {
  std::vector<std::vector<std::vector<replication_result>>> out(
      scenarios.size(), std::vector<std::vector<replication_result>>(
                            setups.size(), std::vector<replication_result>(reps)));
  const std::size_t jobs = scenarios.size() * setups.size() * reps;
  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::string error;
  auto worker = [&] {
    for (std::size_t j = next++; j < jobs; j = next++) {
      const std::size_t r = j % reps;
      const std::size_t p = (j / reps) % setups.size();
      const std::size_t s = j / reps / setups.size();
      try {
        replication_result& res = out[s][p][r];
        res.m = run_once(scenarios[s], setups[p], seed, static_cast<std::uint32_t>(r));
        if (scenarios[s].freerider_fraction > 0 && !scenarios[s].drop_freeriders) {
          scenario ref = scenarios[s];
          ref.drop_freeriders = true;
          const run_metrics m = run_once(ref, setups[p], seed, static_cast<std::uint32_t>(r));
          res.extra["no_freerider_median_s"] = m.median_s;
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mutex);
        error = e.what();
      }
    }
  };
  if (threads == 0) {
    threads = std::max(1u, std::thread::hardware_concurrency());
  }
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) {
    pool.emplace_back(worker);
  }
  worker();
  for (auto& t : pool) {
    t.join();
  }
  if (!error.empty()) {
    throw std::runtime_error(error);
  }
  return out;
}

paired compare(const std::vector<double>& x, const std::vector<double>& base, bool signed_ok) {
  paired out;
  std::vector<double> a, b;
  for (std::size_t i = 0; i < std::min(x.size(), base.size()); ++i) {
    if (defined(x[i], signed_ok) && defined(base[i], signed_ok)) {
      a.push_back(x[i]);
      b.push_back(base[i]);
    }
  }
  out.n = a.size();
  if (a.empty()) {
    return out;
  }
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double e : v) {
      s += e;
    }
    return s / static_cast<double>(v.size());
  };
  out.mean = mean(a);
  out.base_mean = mean(b);
  if (out.base_mean == 0) {
    return out;
  }
  out.valid = true;
  out.rel = (out.mean - out.base_mean) / out.base_mean;
  // Percentile bootstrap of the paired relative difference: resample
  // replications (pairs stay together).
  fast_rng rng(0xb0075e7);
  constexpr int resamples = 2000;
  std::vector<double> rel;
  rel.reserve(resamples);
  const auto n = static_cast<std::uint32_t>(a.size());
  for (int k = 0; k < resamples; ++k) {
    double sa = 0, sb = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t j = rng.below(n);
      sa += a[j];
      sb += b[j];
    }
    rel.push_back(sb == 0 ? 0 : (sa - sb) / sb);
  }
  out.ci_low = quantile(rel, 0.025);
  out.ci_high = quantile(rel, 0.975);
  return out;
}

namespace {

std::string num(double v) {
  if (!std::isfinite(v)) {
    return "null";
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out + "\"";
}

std::vector<double> values_of(const metric_def& d,
                              const std::vector<replication_result>& reps) {
  std::vector<double> v;
  for (const auto& r : reps) {
    v.push_back(d.value(r.m, r.extra));
  }
  return v;
}

}  // namespace

void write_json(std::ostream& os, const std::vector<scenario>& scenarios,
                const std::vector<tracker_setup>& setups,
                const std::vector<std::vector<std::vector<replication_result>>>& results,
                std::uint64_t seed, std::size_t baseline) {
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    for (std::size_t p = 0; p < setups.size(); ++p) {
      const auto& reps = results[s][p];
      os << "{\"scenario\":" << quoted(scenarios[s].name)
         << ",\"policy\":" << quoted(setups[p].name) << ",\"replications\":" << reps.size()
         << ",\"seed\":" << seed << ",\"baseline\":"
         << (baseline < setups.size() ? quoted(setups[baseline].name) : "null")
         << ",\"metrics\":{";
      bool first = true;
      for (const auto& d : metric_defs()) {
        const auto v = values_of(d, reps);
        std::vector<double> ok;
        for (double e : v) {
          if (defined(e, d.signed_ok)) {
            ok.push_back(e);
          }
        }
        if (ok.empty()) {
          continue;
        }
        double sum = 0;
        for (double e : ok) {
          sum += e;
        }
        os << (first ? "" : ",") << quoted(d.name) << ":{\"mean\":" << num(sum / ok.size())
           << ",\"n\":" << ok.size() << ",\"values\":[";
        first = false;
        for (std::size_t k = 0; k < v.size(); ++k) {
          os << (k ? "," : "") << (defined(v[k], d.signed_ok) ? num(v[k]) : "null");
        }
        os << "]";
        if (baseline < setups.size() && baseline != p && !d.signed_ok) {
          const paired c = compare(v, values_of(d, results[s][baseline]), d.signed_ok);
          if (c.valid) {
            os << ",\"vs_baseline\":{\"n\":" << c.n << ",\"base_mean\":" << num(c.base_mean)
               << ",\"mean\":" << num(c.mean) << ",\"rel\":" << num(c.rel)
               << ",\"ci_low\":" << num(c.ci_low) << ",\"ci_high\":" << num(c.ci_high) << "}";
          }
        }
        os << "}";
      }
      os << "}}\n";
    }
  }
}

void write_text(std::ostream& os, const std::vector<scenario>& scenarios,
                const std::vector<tracker_setup>& setups,
                const std::vector<std::vector<std::vector<replication_result>>>& results,
                std::size_t baseline) {
  static const char* shown[] = {"median_s",           "p95_s",           "max_s",
                                "fraction_completed", "first_copy_s",    "seed_upload_copies",
                                "min_copies_mean",    "stalled_mean",    "unreachable_median_s",
                                "compliant_median_s", "compliant_vs_no_freeriders",
                                "partial_median_s",   "partial_fraction_completed",
                                "announces",          "remediation_actions",
                                "unhealthy_share"};
  for (std::size_t s = 0; s < scenarios.size(); ++s) {
    os << "== " << scenarios[s].name << ": " << scenarios[s].description << "\n";
    for (const char* name : shown) {
      const metric_def* d = nullptr;
      for (const auto& e : metric_defs()) {
        if (e.name == name) {
          d = &e;
        }
      }
      bool any = false;
      for (std::size_t p = 0; p < setups.size() && !any; ++p) {
        for (double v : values_of(*d, results[s][p])) {
          any = any || defined(v, d->signed_ok);
        }
      }
      if (!any) {
        continue;
      }
      os << "  " << name << "\n";
      for (std::size_t p = 0; p < setups.size(); ++p) {
        const auto v = values_of(*d, results[s][p]);
        double sum = 0;
        std::size_t n = 0;
        for (double e : v) {
          if (defined(e, d->signed_ok)) {
            sum += e;
            ++n;
          }
        }
        char buf[200];
        std::snprintf(buf, sizeof buf, "    %-22s %12.4g", setups[p].name.c_str(),
                      n ? sum / n : 0.0);
        os << buf;
        if (baseline < setups.size() && p != baseline && !d->signed_ok) {
          const paired c = compare(v, values_of(*d, results[s][baseline]), d->signed_ok);
          if (c.valid) {
            std::snprintf(buf, sizeof buf, "   %+7.1f%% [%+7.1f%%, %+7.1f%%]", 100 * c.rel,
                          100 * c.ci_low, 100 * c.ci_high);
            os << buf;
          }
        }
        os << "\n";
      }
    }
  }
}

}  // namespace sk::sim
