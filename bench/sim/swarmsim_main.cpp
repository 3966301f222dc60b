// swarmsim: runs the swarm simulator against swarmkeeper's tracker code and
// compares every tracker setup with uniform random selection
// (bench/sim/README.md).
//
//   swarmsim --scenario=NAME|all --policy=NAME|all --replications=N --seed=S
//            [--json] [--threads=T] [--series=FILE] [--log]

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/sim/evaluation.hpp"

namespace {

using namespace sk::sim;

int usage(const char* msg) {
  if (msg != nullptr) {
    std::fprintf(stderr, "swarmsim: %s\n", msg);
  }
  std::fprintf(stderr,
               "usage: swarmsim [--scenario=NAME|all] [--policy=NAME|all] [--replications=N]\n"
               "                [--seed=S] [--json] [--threads=T] [--series=FILE] [--log]\n"
               "  --scenario      one of:");
  for (const auto& n : scenario_names()) {
    std::fprintf(stderr, " %s", n.c_str());
  }
  std::fprintf(stderr, ", or all (default all)\n  --policy        one of:");
  for (const auto& s : all_setups()) {
    std::fprintf(stderr, " %s", s.name.c_str());
  }
  std::fprintf(stderr,
               ", or all (default all); random (the baseline) always runs too\n"
               "  --replications  replications per scenario and policy (default 20)\n"
               "  --seed          base seed (default 1); every random draw depends only on\n"
               "                  (seed, scenario, replication)\n"
               "  --json          one JSON object per scenario and policy, one per line\n"
               "  --threads       worker threads (default: one per core)\n"
               "  --series=FILE   write the 60 s samples of replication 0 as CSV\n"
               "  --log           print replication 0's remediation actions (stderr)\n");
  return 2;
}

bool parse_u64(const std::string& s, std::uint64_t& out) {
  if (s.empty() || s.size() > 19) {
    return false;
  }
  for (char c : s) {
    if (c < '0' || c > '9') {
      return false;
    }
  }
  out = std::strtoull(s.c_str(), nullptr, 10);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_arg = "all";
  std::string policy_arg = "all";
  std::uint64_t reps = 20;
  std::uint64_t seed = 1;
  std::uint64_t threads = 0;
  bool json = false;
  bool log = false;
  std::string series_file;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const char* prefix, std::string& out) {
      const std::string p = prefix;
      if (a.rfind(p, 0) == 0) {
        out = a.substr(p.size());
        return true;
      }
      return false;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      usage(nullptr);
      return 0;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--log") {
      log = true;
    } else if (value("--scenario=", v)) {
      scenario_arg = v;
    } else if (value("--policy=", v)) {
      policy_arg = v;
    } else if (value("--replications=", v)) {
      if (!parse_u64(v, reps) || reps == 0 || reps > 100000) {
        return usage("--replications must be an integer in [1, 100000]");
      }
    } else if (value("--seed=", v)) {
      if (!parse_u64(v, seed)) {
        return usage("--seed must be a non-negative integer");
      }
    } else if (value("--threads=", v)) {
      if (!parse_u64(v, threads) || threads > 256) {
        return usage("--threads must be an integer in [0, 256]");
      }
    } else if (value("--series=", v)) {
      series_file = v;
    } else {
      return usage(("unknown argument: " + a).c_str());
    }
  }

  std::vector<scenario> scenarios;
  for (const auto& n : scenario_names()) {
    if (scenario_arg == "all" || scenario_arg == n) {
      scenarios.push_back(*make_scenario(n));
    }
  }
  if (scenarios.empty()) {
    if (auto extra = make_scenario(scenario_arg)) {
      scenarios.push_back(*extra);  // a variant outside the table
    }
  }
  if (scenarios.empty()) {
    return usage(("unknown scenario: " + scenario_arg).c_str());
  }
  std::vector<tracker_setup> setups;
  if (policy_arg == "all") {
    setups = all_setups();
  } else {
    auto s = find_setup(policy_arg);
    if (!s) {
      return usage(("unknown policy: " + policy_arg).c_str());
    }
    setups.push_back(*find_setup("random"));
    if (s->name != "random") {
      setups.push_back(*s);
    }
  }

  const auto t0 = std::chrono::steady_clock::now();
  try {
    const auto results = run_matrix(scenarios, setups, static_cast<std::uint32_t>(reps), seed,
                                    static_cast<unsigned>(threads));
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (json) {
      write_json(std::cout, scenarios, setups, results, seed, 0);
    } else {
      write_text(std::cout, scenarios, setups, results, 0);
      std::printf("(%zu runs, %.1f s; relative to random: paired mean difference [bootstrap "
                  "95%% interval])\n",
                  scenarios.size() * setups.size() * reps, secs);
    }
    if (log || !series_file.empty()) {
      std::ofstream series;
      if (!series_file.empty()) {
        series.open(series_file);
        if (!series) {
          std::fprintf(stderr, "swarmsim: cannot write %s\n", series_file.c_str());
          return 1;
        }
        series << "scenario,policy,t,leechers,seeders,min_copies,stalled,partial\n";
      }
      run_options opt;
      opt.keep_series = !series_file.empty();
      opt.keep_log = log;
      for (const auto& sc : scenarios) {
        for (const auto& st : setups) {
          const run_metrics m = run_once(sc, st, seed, 0, opt);
          if (log && !m.remediation_log.empty()) {
            std::cerr << "-- " << sc.name << " / " << st.name << " (replication 0)\n"
                      << m.remediation_log;
          }
          for (const auto& p : m.series) {
            series << sc.name << ',' << st.name << ',' << p.t << ',' << p.leechers << ','
                   << p.seeders << ',' << p.min_copies << ',' << p.stalled << ',' << p.partial
                   << '\n';
          }
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "swarmsim: %s\n", e.what());
    return 1;
  }
  return 0;
}
