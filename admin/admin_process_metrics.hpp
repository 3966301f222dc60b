#pragma once
/// The standard `process_*` metrics of Prometheus' client libraries, read
/// from /proc/self on Linux, with their usual names and meanings:
///
///   process_cpu_seconds_total       user + system CPU time (counter)
///   process_resident_memory_bytes   resident set size
///   process_virtual_memory_bytes    virtual memory size
///   process_open_fds                open file descriptors
///   process_max_fds                 the soft RLIMIT_NOFILE
///   process_start_time_seconds      start time, seconds since the epoch
///
/// Why our own reader and not prometheus-cpp: Debian's prometheus-cpp-dev
/// (1.0) has no process collector (its core has counters, gauges,
/// histograms and summaries only; process metrics are left to the
/// application), so these would be read from /proc here either way; the
/// rest of /metrics is written from counters the components already keep,
/// on the admin actor, off the announce path.

#include <cstdint>
#include <optional>
#include <string_view>

#include "admin/admin_exposition.hpp"

namespace sk::admin_api {

/// One reading of the process. A field the system does not give is nullopt
/// (and its family is left out).
struct process_sample {
  std::optional<double> cpu_seconds;
  std::optional<double> resident_bytes;
  std::optional<double> virtual_bytes;
  std::optional<double> open_fds;
  std::optional<double> max_fds;
  std::optional<double> start_time_seconds;
};

/// Reads /proc/self/stat, /proc/self/fd, /proc/stat and the fd limit.
process_sample read_process_sample();

/// Parses the text of /proc/<pid>/stat (the command may hold blanks and
/// parentheses: fields are counted from the last ')') into CPU seconds,
/// virtual and resident bytes and the start time in seconds since boot,
/// given the clock ticks per second and the page size. False when the text
/// has too few fields.
struct proc_stat {
  double cpu_seconds = 0;
  double virtual_bytes = 0;
  double resident_bytes = 0;
  double start_seconds_since_boot = 0;
};
bool parse_proc_stat(std::string_view text, double ticks_per_second, double page_size,
                     proc_stat& out);

/// Writes the families of `s` that have a value.
void write_process_metrics(exposition& m, const process_sample& s);

}  // namespace sk::admin_api
