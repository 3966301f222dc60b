#include "app/malloc_tuning.hpp"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace sk {

void reexec_with_malloc_tuning(char** argv) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  (void)argv;
#else
  constexpr const char* key = "glibc.malloc.tcache_count";
  // Set in the re-executed process: never a second time, even if the C
  // library dropped the tunable from the environment.
  constexpr const char* marker = "SWARMKEEPER_MALLOC_TUNED";
  if (std::getenv(marker) != nullptr) {
    ::unsetenv(marker);  // not passed on to anything the daemon starts
    return;
  }
  const char* current = std::getenv("GLIBC_TUNABLES");
  if (current != nullptr && std::strstr(current, key) != nullptr) return;
  // The executable's own path, so that the process keeps its name (an exec
  // of /proc/self/exe would rename it "exe").
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  if (std::strstr(path, " (deleted)") != nullptr) return;  // replaced since it started
  const bool had = current != nullptr;
  const std::string saved = had ? current : "";
  // Not re-executed: run on glibc's defaults, with the environment as it was.
  auto restore = [&] {
    ::unsetenv(marker);
    had ? ::setenv("GLIBC_TUNABLES", saved.c_str(), 1) : ::unsetenv("GLIBC_TUNABLES");
  };
  std::string value = saved.empty() ? std::string() : saved + ":";
  value += std::string(key) + "=" + std::to_string(malloc_cache_blocks);
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  if (::setenv(marker, "1", 1) != 0) return restore();
  ::execv(path, argv);
  restore();
#endif
}

}  // namespace sk
