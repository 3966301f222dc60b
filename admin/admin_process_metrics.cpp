#include "admin/admin_process_metrics.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace sk::admin_api {

namespace {

std::string read_all(const char* path) {
  std::ifstream f{path};
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// `btime` of /proc/stat: the boot time in seconds since the epoch.
std::optional<double> boot_time() {
  std::istringstream in{read_all("/proc/stat")};
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double t = 0;
      if (in >> t) return t;
      return std::nullopt;
    }
    in.ignore(1 << 16, '\n');
  }
  return std::nullopt;
}

std::optional<double> open_fd_count() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return std::nullopt;
  double n = 0;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') n += 1;
  closedir(d);
  return n - 1;  // the directory stream's own descriptor
}

}  // namespace

bool parse_proc_stat(std::string_view text, double ticks_per_second, double page_size,
                     proc_stat& out) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos || ticks_per_second <= 0) return false;
  // Fields after the command: 3 state, 4 ppid, ... 14 utime, 15 stime,
  // 22 starttime, 23 vsize, 24 rss (proc(5)); fields[0] is field 3.
  std::istringstream in{std::string(text.substr(close + 1))};
  std::vector<std::string> fields;
  for (std::string f; in >> f && fields.size() < 22;) fields.push_back(std::move(f));
  if (fields.size() < 22) return false;
  auto num = [&](std::size_t field) { return std::strtod(fields[field - 3].c_str(), nullptr); };
  out.cpu_seconds = (num(14) + num(15)) / ticks_per_second;
  out.start_seconds_since_boot = num(22) / ticks_per_second;
  out.virtual_bytes = num(23);
  out.resident_bytes = num(24) * page_size;
  return true;
}

process_sample read_process_sample() {
  process_sample s;
  proc_stat st;
  const double ticks = double(sysconf(_SC_CLK_TCK));
  const double page = double(sysconf(_SC_PAGESIZE));
  if (parse_proc_stat(read_all("/proc/self/stat"), ticks, page, st)) {
    s.cpu_seconds = st.cpu_seconds;
    s.virtual_bytes = st.virtual_bytes;
    s.resident_bytes = st.resident_bytes;
    if (auto boot = boot_time()) s.start_time_seconds = *boot + st.start_seconds_since_boot;
  }
  s.open_fds = open_fd_count();
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0)
    s.max_fds = lim.rlim_cur == RLIM_INFINITY ? -1.0 : double(lim.rlim_cur);
  return s;
}

void write_process_metrics(exposition& m, const process_sample& s) {
  using mt = metric_type;
  auto one = [&m](const char* name, mt type, const char* help, const std::optional<double>& v) {
    if (v) m.add(name, type, help).sample("", *v);
  };
  one("process_cpu_seconds_total", mt::counter, "Total user and system CPU time spent in seconds.",
      s.cpu_seconds);
  one("process_open_fds", mt::gauge, "Number of open file descriptors.", s.open_fds);
  one("process_max_fds", mt::gauge, "Maximum number of open file descriptors.", s.max_fds);
  one("process_virtual_memory_bytes", mt::gauge, "Virtual memory size in bytes.", s.virtual_bytes);
  one("process_resident_memory_bytes", mt::gauge, "Resident memory size in bytes.",
      s.resident_bytes);
  one("process_start_time_seconds", mt::gauge,
      "Start time of the process since unix epoch in seconds.", s.start_time_seconds);
}

}  // namespace sk::admin_api
