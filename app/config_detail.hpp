#pragma once
/// What the files of app/config*.cpp share and nobody else needs (see
/// config.hpp for which file does what).

#include <algorithm>
#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <caf/config_value.hpp>
#include <caf/settings.hpp>
#include <caf/timespan.hpp>

#include "app/config.hpp"

namespace sk::config::detail {

/// A duration in the largest unit that represents it exactly ("30min",
/// "1500ms", "0s"). CAF 0.17 prints zero as "0d" and whole days with "d",
/// which its own config parser then rejects.
std::string format_duration(caf::timespan t);

/// "integer", "switch (true or false)", ...: a type in the help texts.
std::string type_word(value_type t);

/// "integer, 1 to 65535, default 6969".
std::string type_range_default(const option_def& o);

/// A value as an error message may show it (never a secret's).
std::string shown_value(const option_def& o, const caf::config_value& v);

/// Breaks `text` into lines of at most `width` characters (longer words
/// stay whole), each starting with `prefix`.
std::string wrap(const std::string& text, std::size_t width, const std::string& prefix);

/// The section `o` belongs to (every option has one: a schema test).
const section_def& section_of(const option_def& o);

/// The effective value of every option of the schema, by key.
using value_map = std::map<std::string, caf::config_value>;

/// Default, then whatever CAF merged into `content` (file, then command
/// line), then a command-line shortcut (shortcuts exist only on the command
/// line, so they win). Former names are already folded into their options
/// (load_config does that right after CAF's parse).
value_map effective_values(const caf::settings& content);

/// Problems of one load, one line each, each naming its option. A line is
/// kept once: an option read for two modules is reported once.
class problems {
 public:
  void add(std::string line) {
    if (std::find(lines_.begin(), lines_.end(), line) == lines_.end())
      lines_.push_back(std::move(line));
  }
  bool empty() const noexcept { return lines_.empty(); }
  void print(std::ostream& err) const {
    for (const auto& l : lines_) err << "swarmkeeper: " << l << '\n';
  }

 private:
  std::vector<std::string> lines_;
};

/// Turns the effective values of `content` into `out`, section by section,
/// each into the config struct of the module it configures. Ranges come
/// from the schema; what is checked here is the form of strings (addresses,
/// keys, lists), files named by options, and, through each module's
/// validate(), the rules between options. Every problem goes to `p`.
void resolve(const caf::settings& content, daemon_settings& out, problems& p);

}  // namespace sk::config::detail
