#include "app/config_cpus.hpp"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace sk::config {

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line))
    return std::nullopt;
  return line;
}

std::optional<long long> parse_integer(std::string_view s) {
  long long v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || p != end)
    return std::nullopt;
  return v;
}

std::size_t ceil_cpus(long long quota, long long period) {
  return static_cast<std::size_t>((quota + period - 1) / period);
}

void keep_smaller(std::optional<std::size_t>& acc, std::optional<std::size_t> v) {
  if (v && (!acc || *v < *acc))
    acc = v;
}

/// "/a/b/c" -> "/a/b/c", "/a/b", "/a", "": a cgroup and its ancestors, each
/// of which may set a quota.
std::vector<std::string> self_and_ancestors(std::string path) {
  std::vector<std::string> out;
  while (!path.empty() && path != "/") {
    out.push_back(path);
    const auto slash = path.rfind('/');
    path.resize(slash == std::string::npos ? 0 : slash);
  }
  out.emplace_back();
  return out;
}

std::size_t affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0)
      return static_cast<std::size_t>(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::size_t cpu_budget::usable() const noexcept {
  std::size_t n = affinity;
  if (quota)
    n = std::min(n, *quota);
  return std::max<std::size_t>(n, 1);
}

std::optional<std::size_t> parse_cpu_max(const std::string& line) {
  std::istringstream in(line);
  std::string quota, period;
  if (!(in >> quota >> period) || quota == "max")
    return std::nullopt;
  auto q = parse_integer(quota);
  auto p = parse_integer(period);
  if (!q || !p || *q <= 0 || *p <= 0)
    return std::nullopt;
  return ceil_cpus(*q, *p);
}

cpu_budget read_cpu_budget(const std::string& fs_root) {
  cpu_budget b;
  b.affinity = fs_root.empty() ? affinity_cpus() : std::max(1u, std::thread::hardware_concurrency());
  // /proc/self/cgroup: "0::/path" (v2), "N:cpu,cpuacct:/path" (v1).
  std::ifstream in(fs_root + "/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto c1 = line.find(':');
    const auto c2 = c1 == std::string::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string::npos)
      continue;
    const std::string controllers = line.substr(c1 + 1, c2 - c1 - 1);
    const std::string path = line.substr(c2 + 1);
    if (controllers.empty()) {
      for (const auto& p : self_and_ancestors(path))
        if (auto l = first_line(fs_root + "/sys/fs/cgroup" + p + "/cpu.max"))
          keep_smaller(b.quota, parse_cpu_max(*l));
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    bool cpu = false;
    while (std::getline(names, name, ','))
      cpu = cpu || name == "cpu";
    if (!cpu)
      continue;
    for (const auto& mount : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}) {
      for (const auto& p : self_and_ancestors(path)) {
        const std::string dir = fs_root + mount + p;
        auto q = first_line(dir + "/cpu.cfs_quota_us");
        auto per = first_line(dir + "/cpu.cfs_period_us");
        if (!q || !per)
          continue;
        auto qv = parse_integer(*q);
        auto pv = parse_integer(*per);
        if (qv && pv && *qv > 0 && *pv > 0)
          keep_smaller(b.quota, ceil_cpus(*qv, *pv));
      }
    }
  }
  return b;
}

}  // namespace sk::config
