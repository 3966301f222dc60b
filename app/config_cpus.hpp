#pragma once
/// How many CPUs this process may really use: the threads the defaults
/// start (`http.io-threads = 0`, `scheduler.max-threads = 0`) follow it, so
/// a daemon pinned to one core (taskset, systemd `CPUAffinity=`) or given a
/// quota (a container's `cpu.max`, systemd `CPUQuota=`) does not start a
/// thread per core of the machine.

#include <cstddef>
#include <optional>
#include <string>

namespace sk::config {

/// What the budget is made of, for logs and tests.
struct cpu_budget {
  /// CPUs in the affinity mask (sched_getaffinity); the machine's count if
  /// that cannot be read.
  std::size_t affinity = 1;
  /// The cgroup's quota in CPUs, rounded up (`cpu.max` of cgroup v2, or
  /// `cpu.cfs_quota_us / cpu.cfs_period_us` of v1, the smallest along the
  /// path to the root); empty when there is none.
  std::optional<std::size_t> quota;
  /// min(affinity, quota), at least 1.
  std::size_t usable() const noexcept;
};

/// The quota in CPUs (rounded up) a cgroup v2 `cpu.max` line states:
/// "max 100000" (none) or "150000 100000" (2). Empty for no quota and for
/// text that is not such a line.
std::optional<std::size_t> parse_cpu_max(const std::string& line);

/// The budget of this process. `fs_root` prefixes every path read
/// (/proc/self/cgroup, /sys/fs/cgroup/...), so tests can give it a tree.
cpu_budget read_cpu_budget(const std::string& fs_root = "");

}  // namespace sk::config
