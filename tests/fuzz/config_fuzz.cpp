// libFuzzer target: the daemon's config file (app/config.hpp: load_config
// with --config-file). The input is the file's content. CAF's INI reader
// parses it; ours is everything after: unknown keys and wrong types are
// errors, every value is range-checked, the sections become daemon_settings.
//
// Invariants checked besides "no sanitizer report":
// - a file is either accepted (`run`) or rejected with a message — never
//   "exit ok", which only --help and --dump-config may return;
// - what --dump-config prints for an accepted file is itself accepted and
//   dumps to the same text (config.hpp: "Loading it back with --config-file
//   yields the same configuration").

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "app/config.hpp"
#include "fuzz_check.hpp"

namespace {

/// A private scratch file (memory-backed where /dev/shm exists).
const std::string& scratch_path() {
  static const std::string path = [] {
    const char* dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(dir) + "/sk-config-fuzz-" + std::to_string(getpid()) + ".ini";
  }();
  return path;
}

void write_file(std::string_view content) {
  std::ofstream f{scratch_path(), std::ios::binary | std::ios::trunc};
  f.write(content.data(), static_cast<std::streamsize>(content.size()));
}

sk::load_action load(std::string_view content, sk::swarmkeeper_config& cfg, std::string& err) {
  write_file(content);
  std::string arg0 = "swarmkeeper";
  std::string arg1 = "--config-file=" + scratch_path();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  sk::daemon_settings settings;
  std::ostringstream out, errs;
  const sk::load_action a = sk::load_config(2, argv, cfg, settings, out, errs);
  err = errs.str();
  return a;
}

struct cleanup {
  ~cleanup() { unlink(scratch_path().c_str()); }
} remove_scratch_at_exit;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  sk::swarmkeeper_config cfg;
  std::string err;
  const sk::load_action a = load(file, cfg, err);
  FUZZ_CHECK(a != sk::load_action::exit_ok);
  if (a == sk::load_action::exit_error) {
    FUZZ_CHECK(!err.empty());
    return 0;
  }
  const std::string dumped = sk::dump_config(cfg);
  sk::swarmkeeper_config again;
  std::string err2;
  const sk::load_action b = load(dumped, again, err2);
  if (b != sk::load_action::run) std::fprintf(stderr, "reload rejected:\n%s", err2.c_str());
  FUZZ_CHECK(b == sk::load_action::run);
  FUZZ_CHECK(sk::dump_config(again) == dumped);
  return 0;
}
