// The texts generated from the schema: --version, --help and --long-help,
// the sample config file, the README's option table, --dump-config and the
// admin API's view of the effective configuration.

#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <spdlog/version.h>
#include <boost/version.hpp>
#include <caf/all.hpp>

#include "app/config.hpp"
#include "app/config_detail.hpp"

// The build passes the project version (CMake `project(VERSION)`); a build
// outside the project's CMake (the fuzz targets) has none.
#ifndef SWARMKEEPER_VERSION
#define SWARMKEEPER_VERSION "unversioned"
#endif

namespace sk {
namespace config {

namespace {

using detail::section_of;
using detail::type_range_default;
using detail::type_word;
using detail::wrap;

/// The placeholder of a value on the command line (empty for switches).
std::string placeholder(const option_def& o) {
  if (auto c = std::get_if<choice_set>(&o.range)) {
    std::string out;
    for (const auto& n : c->names) out += (out.empty() ? "" : "|") + n;
    return out;
  }
  switch (o.type) {
    case value_type::integer:
      return "N";
    case value_type::boolean:
      return "";
    case value_type::string:
      return "TEXT";
    case value_type::string_list:
      return "LIST";
    case value_type::duration:
      return "DURATION";
    case value_type::real:
      return "X";
  }
  return {};
}

/// "--http.port" plus its shortcuts: "--http.port, --http-port", each
/// followed by `value` ("=N") when given.
std::string cli_names(const option_def& o, const std::string& value = "") {
  std::string out = "--" + o.key() + value;
  for (const auto& a : aliases()) {
    if (o.key() != a.target) continue;
    out += std::string(", --") + a.name + (a.negate ? "" : value);
  }
  return out;
}

}  // namespace

std::string detail::wrap(const std::string& text, std::size_t width, const std::string& prefix) {
  std::string out;
  std::string line;
  std::istringstream words{text};
  std::string word;
  while (words >> word) {
    if (!line.empty() && prefix.size() + line.size() + 1 + word.size() > width) {
      out += prefix + line + '\n';
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += prefix + line + '\n';
  return out;
}


const char* version() { return SWARMKEEPER_VERSION; }

std::string version_text() {
  std::ostringstream os;
  os << "swarmkeeper " << version() << " (CAF " << CAF_VERSION / 10000 << '.'
     << CAF_VERSION / 100 % 100 << '.' << CAF_VERSION % 100 << ", Boost "
     << BOOST_VERSION / 100000 << '.' << BOOST_VERSION / 100 % 1000 << '.'
     << BOOST_VERSION % 100 << ", spdlog " << SPDLOG_VER_MAJOR << '.' << SPDLOG_VER_MINOR << '.'
     << SPDLOG_VER_PATCH << ")\n";
  return os.str();
}

std::string help_text(bool long_help) {
  std::ostringstream os;
  os << "usage: swarmkeeper [--config-file=FILE] [--SECTION.OPTION=VALUE ...]\n"
        "       swarmkeeper --dump-config | --print-sample-config | --help | --long-help | "
        "--version\n\n";
  os << wrap("Defaults are built in. A config file (CAF INI syntax; --print-sample-config "
             "writes one) is read only when --config-file names one, and the command line "
             "beats the file. Unknown options and bad values stop the daemon with exit "
             "status 2. Switches take no value on the command line: --probe.enable turns one "
             "on, --no-udp turns the UDP tracker off.",
             78, "");
  if (!long_help) os << "--long-help also shows each option's type, range and default.\n";
  os << "\n";
  struct general {
    const char* names;
    const char* doc;
  };
  static constexpr general generals[] = {
      {"--config-file=FILE", "read this config file"},
      {"--dump-config", "print the effective configuration in config-file syntax and exit"},
      {"--print-sample-config", "print a config file listing every option at its default"},
      {"--help, -h", "print this help and exit"},
      {"--long-help", "print every option with its type, range and default, and exit"},
      {"--version", "print the version and exit"},
  };
  for (const auto& g : generals) {
    os << "  " << g.names << '\n';
    os << wrap(g.doc, 78, "      ");
  }
  const char* current = "";
  for (const auto& o : options()) {
    if (std::strcmp(current, o.section) != 0) {
      current = o.section;
      os << "\n[" << o.section << "] " << section_of(o).title << '\n';
    }
    const auto value = placeholder(o);
    os << "  " << cli_names(o, value.empty() ? "" : "=" + value) << '\n';
    os << wrap(o.doc, 78, "      ");
    if (const auto* r = renamed_to(o.key()))
      os << wrap(std::string("formerly --") + r->old_key + " (still accepted, deprecated)", 78,
                 "      ");
    if (long_help) os << wrap(type_range_default(o), 78, "      ");
  }
  return os.str();
}

std::string sample_config() {
  std::ostringstream os;
  os << "; swarmkeeper sample configuration (CAF 0.17 INI syntax).\n"
        ";\n"
        ";   swarmkeeper --config-file=/etc/swarmkeeper/swarmkeeper.ini\n"
        ";\n";
  std::string shortcuts;
  for (const auto& a : aliases()) shortcuts += (shortcuts.empty() ? "--" : ", --") + std::string(a.name);
  const std::string header =
      "Generated by `swarmkeeper --print-sample-config` from the option schema "
      "(app/config_schema.cpp); a test compares this file with it, so change the schema, not the "
      "file. Every option is listed at its built-in default and commented out: the file "
      "changes nothing until you remove the ';' in front of an option. Precedence: built-in "
      "defaults < this file < the command line (--section.option=value, e.g. "
      "--tracker.interval=20min; shortcuts: " +
      shortcuts +
      "). Switches (true/false options) take no value on the command line: "
      "--http.trust-ip-param turns one on; --no-udp turns the UDP tracker off.";
  os << wrap(header, 78, "; ") << ";\n";
  os << wrap("Syntax: strings are quoted (\"::1\"), durations carry a unit (500ms, 45s, 30min, "
             "2h), lists are [\"a\", \"b\"], comments start with ';'. Unknown options, values "
             "of the wrong type and values out of range are errors at start-up: the daemon "
             "refuses to run on a config it does not understand. `swarmkeeper --dump-config` "
             "prints the effective configuration in this format.",
             78, "; ");
  const char* current = "";
  for (const auto& o : options()) {
    if (std::strcmp(current, o.section) != 0) {
      current = o.section;
      const auto& s = section_of(o);
      os << "\n[" << s.name << "]\n";
      os << wrap(std::string(s.title) + "; configures " + s.configures + ".", 78, "; ");
    }
    os << ";\n";
    os << wrap(std::string(o.doc) + ".", 78, "; ");
    if (const auto* r = renamed_to(o.key())) {
      const std::string old = r->old_key;
      const auto dot = old.find('.');
      os << wrap("Formerly " + old.substr(dot + 1) + " in [" + old.substr(0, dot) +
                     "] (still accepted, deprecated).",
                 78, "; ");
    }
    os << wrap(type_range_default(o) + "; command line: " + cli_names(o) + ".", 78, "; ");
    os << ';' << o.name << '=' << format_value(o.fallback) << '\n';
  }
  return os.str();
}

std::string markdown_table() {
  const auto cell = [](std::string s) {
    std::string out;
    for (char c : s) {
      if (c == '|') out += '\\';
      out += c;
    }
    return out;
  };
  std::ostringstream os;
  os << "| option | default | range | meaning |\n|---|---|---|---|\n";
  for (const auto& o : options()) {
    std::string names = "`" + o.key() + "`";
    for (const auto& a : aliases())
      if (o.key() == a.target) names += std::string(" (`--") + a.name + "`)";
    if (const auto* r = renamed_to(o.key())) names += std::string(" (formerly `") + r->old_key + "`)";
    const auto range = describe_range(o);
    os << "| " << names << " | `" << cell(format_value(o.fallback)) << "` | "
       << (range.empty() ? type_word(o.type) : cell(range)) << " | " << cell(o.doc) << " |\n";
  }
  return os.str();
}

}  // namespace config

std::vector<std::pair<std::string, std::string>> redacted_config(const swarmkeeper_config& cfg) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto values = config::detail::effective_values(cfg.content);
  for (const auto& o : config::options()) {
    const auto key = o.key();
    const auto& v = values.at(key);
    if (o.secret) {
      auto s = caf::get_if<std::string>(&v);
      out.emplace_back(key, s != nullptr && s->empty() ? "" : "<redacted>");
    } else if (auto s = caf::get_if<std::string>(&v)) {
      out.emplace_back(key, *s);  // unquoted: JSON quotes it
    } else {
      out.emplace_back(key, config::format_value(v));
    }
  }
  return out;
}

std::string dump_config(const swarmkeeper_config& cfg) {
  std::ostringstream os;
  os << "; swarmkeeper configuration: the effective values (defaults < config file <\n"
        "; command line). Load it with --config-file=FILE.\n";
  const auto values = config::detail::effective_values(cfg.content);
  const char* current = "";
  for (const auto& o : config::options()) {
    if (std::strcmp(current, o.section) != 0) {
      os << "\n[" << o.section << "]\n";
      current = o.section;
    }
    os << config::detail::wrap(o.doc, 78, "; ");
    os << config::detail::wrap(config::detail::type_range_default(o), 78, "; ");
    os << o.name << '=' << config::format_value(values.at(o.key())) << '\n';
  }
  return os.str();
}

}  // namespace sk
