#pragma once
// What the tests of app/config*.cpp share: a temporary config file, one run
// of load_config with everything it wrote, and values as the command line
// writes them.

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/config.hpp"

namespace sk {

/// A config file for the duration of a test.
class temp_file {
 public:
  explicit temp_file(const std::string& content) {
    char path[] = "/tmp/sk-app-config-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = path;
    std::ofstream{path_, std::ios::binary} << content;
  }
  ~temp_file() { ::unlink(path_.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  const std::string& path() const { return path_; }
  std::string arg() const { return "--config-file=" + path_; }

 private:
  std::string path_;
};

/// One run of load_config.
struct loaded {
  load_action action = load_action::exit_error;
  std::unique_ptr<swarmkeeper_config> cfg = std::make_unique<swarmkeeper_config>();
  daemon_settings settings;
  std::string out;
  std::string err;

  /// The effective value of `key` as the admin API shows it.
  std::string value(const std::string& key) const {
    for (const auto& [k, v] : redacted_config(*cfg))
      if (k == key) return v;
    ADD_FAILURE() << "no option " << key;
    return {};
  }
};

inline loaded load(const std::vector<std::string>& args) {
  std::vector<std::string> storage{"swarmkeeper"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  loaded r;
  std::ostringstream out, err;
  r.action = load_config(static_cast<int>(storage.size()), argv.data(), *r.cfg, r.settings, out,
                         err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

inline loaded load_file(const std::string& content, std::vector<std::string> args = {}) {
  temp_file f{content};
  args.insert(args.begin(), f.arg());
  return load(args);
}

inline std::string read_source_file(const std::string& relative) {
  std::ifstream f{std::string(SWARMKEEPER_SOURCE_DIR) + "/" + relative, std::ios::binary};
  EXPECT_TRUE(f) << relative;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

/// A value as the command line gives it: strings unquoted.
inline std::string cli_text(const caf::config_value& v) {
  if (auto s = caf::get_if<std::string>(&v)) return *s;
  return config::format_value(v);
}

}  // namespace sk
