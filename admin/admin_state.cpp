#include "admin/admin_state.hpp"

#include <unistd.h>

#include <fstream>

#include "runtime/directory.hpp"

namespace sk::admin_api {

std::string admin_state::node_name() const {
  auto v = dir->view();
  return v ? v->self : host_name;
}

void admin_state::count(unsigned status) noexcept {
  if (status < 400)
    ok.fetch_add(1, std::memory_order_relaxed);
  else if (status < 500)
    client_errors.fetch_add(1, std::memory_order_relaxed);
  else
    server_errors.fetch_add(1, std::memory_order_relaxed);
}

double admin_state::uptime_seconds() const noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

std::string local_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::uint64_t resident_bytes() {
  std::ifstream f{"/proc/self/statm"};
  std::uint64_t size = 0, resident = 0;
  if (!(f >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace sk::admin_api
