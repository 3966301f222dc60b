// Reading the configuration: the schema's options registered with CAF,
// the command line sorted and checked, the file checked key by key (CAF
// 0.17 keeps unknown keys and drops values of the wrong type silently),
// former option names folded into their options, then resolve().

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/defaults.hpp>

#include "app/config.hpp"
#include "app/config_detail.hpp"

namespace sk {

namespace {

using config::option_def;
using config::value_type;
using config::detail::problems;

// -- registration ----------------------------------------------------------------

template <class T>
void add_option(caf::config_option_set& set, const char* category, const char* name,
                const char* help) {
  caf::config_option_adder{set, category}.add<T>(name, help);
}

void register_option(caf::config_option_set& set, const char* category, const char* name,
                     value_type type, const char* help) {
  switch (type) {
    case value_type::integer:
      add_option<std::int64_t>(set, category, name, help);
      break;
    case value_type::boolean:
      add_option<bool>(set, category, name, help);
      break;
    case value_type::string:
      add_option<std::string>(set, category, name, help);
      break;
    case value_type::string_list:
      add_option<std::vector<std::string>>(set, category, name, help);
      break;
    case value_type::duration:
      add_option<caf::timespan>(set, category, name, help);
      break;
    case value_type::real:
      add_option<double>(set, category, name, help);
      break;
  }
}

const option_def& alias_target(const config::alias_def& a) {
  const auto* o = config::find_option(a.target);
  if (o == nullptr) throw std::logic_error(std::string("alias --") + a.name + " has no target");
  return *o;
}

const option_def& renamed_target(const config::renamed_def& r) {
  const auto* o = config::find_option(r.new_key);
  if (o == nullptr) throw std::logic_error(std::string(r.old_key) + " is renamed to nothing");
  return *o;
}

// -- former names ------------------------------------------------------------------

/// Removes "section.name" from `content` (CAF's dictionary has no erase).
void erase_key(caf::settings& content, const std::string& key) {
  const auto dot = key.find('.');
  const auto name = key.substr(dot + 1);
  auto section = content.find(key.substr(0, dot));
  if (section == content.end()) return;
  auto* entries = caf::get_if<caf::settings>(&section->second);
  if (entries == nullptr) return;
  caf::settings rest;
  for (auto& [k, v] : *entries)
    if (k != name) rest[k] = std::move(v);
  *entries = std::move(rest);
}

/// Folds every former option name in `content` into its option, so that
/// `content` holds only the schema's keys (dump, admin view and resolve read
/// those). Precedence is kept: the command line beats the file whatever the
/// name, and within one source the new name beats the former one. The
/// value is checked under the name the user wrote; each former name used
/// leaves one line in `warnings`.
void fold_renamed(caf::settings& content, const std::set<std::string>& cli_keys,
                  std::vector<std::string>& warnings, problems& p) {
  for (const auto& r : config::renamed()) {
    const caf::config_value* given = caf::get_if(&content, r.old_key);
    if (given == nullptr) continue;
    const caf::config_value value = *given;
    erase_key(content, r.old_key);
    const std::string new_key = r.new_key;
    const auto dot = new_key.find('.');
    warnings.push_back(std::string(r.old_key) + " is deprecated: its value applies to " + new_key +
                       "; write " + new_key.substr(dot + 1) + " in [" + new_key.substr(0, dot) +
                       "] (or --" + new_key + ") instead");
    const bool old_on_cli = cli_keys.count(r.old_key) != 0;
    const bool new_on_cli = cli_keys.count(new_key) != 0;
    const bool new_given = caf::get_if(&content, new_key) != nullptr;
    if (old_on_cli ? new_on_cli : new_given) continue;  // the new name wins
    if (auto problem = config::check_value(renamed_target(r), value, r.old_key)) {
      p.add(std::move(*problem));
      continue;
    }
    caf::put(content, new_key, value);
  }
}

// -- strict checks of the command line and the file -------------------------------

/// What an argument of the command line is to load_config.
enum class arg_kind {
  config_file,
  dump_config,
  print_sample,
  help,
  long_help,
  version,
  option,  ///< for CAF to parse: an option of the schema or a shortcut
};

/// Renders a CAF parser error ("parser_error(...)") in words; a bad
/// command-line value also says what the option expects.
std::string describe(const caf::error& err, const caf::config_option_set* opts = nullptr) {
  if (err.category() != caf::atom("parser")) return caf::actor_system_config::render(err);
  const auto code = static_cast<caf::pec>(err.code());
  std::string text = caf::to_string(code);
  std::replace(text.begin(), text.end(), '_', ' ');
  const auto& ctx = err.context();
  if (ctx.match_elements<caf::settings>()) {
    const auto& s = ctx.get_as<caf::settings>(0);
    if (auto arg = caf::get_if<std::string>(&s, "argument")) {
      if (code == caf::pec::not_an_option) return "unknown option '" + *arg + "'";
      const auto name = arg->substr(0, arg->find('='));
      if (opts != nullptr && name.size() > 2 && name.compare(0, 2, "--") == 0) {
        const auto bare = name.substr(2);
        const option_def* o = config::find_option(bare);
        if (auto a = config::find_alias(bare)) o = &alias_target(*a);
        if (auto r = config::find_renamed(bare)) o = config::find_option(r->new_key);
        if (auto opt = opts->cli_long_name_lookup(caf::string_view{bare.data(), bare.size()})) {
          if (opt->is_flag())
            return "'" + name + "' is a switch: give it without a value to turn it on";
          if (o != nullptr) {
            // A secret's value stays out of the message.
            const std::string shown = o->secret ? name + "=..." : *arg;
            const auto range = config::describe_range(*o);
            return "invalid value in '" + shown + "': expected " +
                   config::expected_text(o->type) + (range.empty() ? "" : ", " + range);
          }
        }
      }
      text += " in '" + *arg + "'";
    }
    auto line = caf::get_if<std::int64_t>(&s, "line");
    auto column = caf::get_if<std::int64_t>(&s, "column");
    if (line && column)
      text += " at line " + std::to_string(*line) + ", column " + std::to_string(*column);
  }
  return text;
}

/// Every key of the file must be an option of the schema with a value of
/// its type (ranges are checked on the effective values).
void check_file_keys(const caf::settings& raw, const caf::config_option_set& opts,
                     const std::string& file, problems& p) {
  for (const auto& [section, value] : raw) {
    if (auto entries = caf::get_if<caf::settings>(&value)) {
      for (const auto& [name, v] : *entries) {
        const auto key = section + "." + name;
        const auto* o = config::find_option(key);
        // A former name is checked as its option, and named as written.
        if (const auto* r = config::find_renamed(key)) o = config::find_option(r->new_key);
        if (o == nullptr) {
          p.add(file + ": unknown option '" + name + "' in [" + section + "]");
          continue;
        }
        // CAF's own check too: a value it rejects it would silently drop.
        const auto* opt = opts.qualified_name_lookup(section, name);
        const bool caf_rejects = opt == nullptr || static_cast<bool>(opt->check(v));
        auto problem = config::check_value(*o, v, key);
        const bool wrong_type = problem && problem->compare(0, key.size() + 11, key + ": expected") == 0;
        if (wrong_type || (caf_rejects && problem))
          p.add(file + ": " + *problem);
        else if (caf_rejects)
          p.add(file + ": " + key + ": expected " + config::expected_text(o->type) + ", got " +
                config::detail::shown_value(*o, v));
      }
      continue;
    }
    if (const auto* a = config::find_alias(section)) {
      const auto& o = alias_target(*a);
      p.add(file + ": '" + section + "' is a command-line shortcut; in a config file write '" +
            o.name + "' in the [" + o.section + "] section");
      continue;
    }
    p.add(file + ": unknown option '" + section + "' outside any section");
  }
}

}  // namespace

swarmkeeper_config::swarmkeeper_config() {
  for (const auto& o : config::options())
    if (!o.caf_owned) register_option(custom_options_, o.section, o.name, o.type, o.doc);
  for (const auto& a : config::aliases()) {
    const std::string help = a.negate ? std::string("turns --") + a.target + " off"
                                      : std::string("shortcut for --") + a.target;
    // config_option copies the description, so a temporary is fine.
    register_option(custom_options_, "global", a.name,
                    a.negate ? value_type::boolean : alias_target(a).type, help.c_str());
  }
  // Former names, so that CAF reads them (and checks their type) in the
  // file and on the command line; load_config folds them into their options.
  for (const auto& r : config::renamed()) {
    const std::string old_key = r.old_key;
    const auto dot = old_key.find('.');
    const std::string help = std::string("deprecated name of --") + r.new_key;
    register_option(custom_options_, old_key.substr(0, dot).c_str(),
                    old_key.substr(dot + 1).c_str(), renamed_target(r).type, help.c_str());
  }
  // Fixed, not options: measured choices that an operator has no reason to
  // change.
  // CAF 0.17 lets an actor drain its whole mailbox before yielding its
  // thread; bound it so one busy swarm cannot starve the others.
  set("scheduler.max-throughput", 64);
  // Work sharing (one queue, workers block on a condition variable) instead
  // of CAF's default work stealing, whose idle workers poll and then sleep
  // in steps of 50 us to 10 ms: every announce arrives from an I/O thread,
  // so with stealing it often waits for a sleeping worker. Measured with
  // bench/http (tracker pinned to one CPU): 2x requests/s with
  // Connection: close, 1.4x with keep-alive. See README.
  set("scheduler.policy", caf::atom("sharing"));
}

load_action load_config(int argc, char** argv, swarmkeeper_config& cfg, daemon_settings& out,
                        std::ostream& out_stream, std::ostream& err_stream) {
  // Sort the arguments: ours, options for CAF to parse, and mistakes. CAF
  // itself would accept every one of its own ~40 options (most of which do
  // nothing here), print its own help, and read caf-application.ini.
  std::vector<std::string> args;
  std::set<std::string> cli_keys;  ///< the options the command line sets
  std::string config_file;
  bool dump = false, sample = false, help = false, long_help = false, version = false;
  config::detail::problems p;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (name == "--config-file") {
      if (eq == std::string::npos || eq + 1 == a.size()) {
        err_stream << "swarmkeeper: --config-file needs a file: --config-file=FILE\n";
        return load_action::exit_error;
      }
      config_file = a.substr(eq + 1);
    } else if (a == "--dump-config") {
      dump = true;
    } else if (a == "--print-sample-config") {
      sample = true;
    } else if (a == "--help" || a == "-h" || a == "-?") {
      help = true;
    } else if (a == "--long-help") {
      long_help = true;
    } else if (a == "--version") {
      version = true;
    } else if (name.size() > 2 && name.compare(0, 2, "--") == 0 &&
               (config::find_option(std::string_view{name}.substr(2)) != nullptr ||
                config::find_alias(std::string_view{name}.substr(2)) != nullptr ||
                config::find_renamed(std::string_view{name}.substr(2)) != nullptr)) {
      const auto bare = name.substr(2);
      const auto* alias = config::find_alias(bare);
      cli_keys.insert(alias != nullptr ? std::string(alias->target) : bare);
      args.push_back(std::move(a));
    } else if (!a.empty() && a[0] == '-') {
      p.add("unknown option '" + a + "' (see --help)");
    } else {
      p.add("unexpected argument '" + a + "'");
    }
  }
  // What needs no configuration is served first, whatever else was given.
  if (version) {
    out_stream << config::version_text();
    return load_action::exit_ok;
  }
  if (help || long_help) {
    out_stream << config::help_text(long_help);
    return load_action::exit_ok;
  }
  if (sample) {
    out_stream << config::sample_config();
    return load_action::exit_ok;
  }

  // The file: CAF would quietly fall back to caf-application.ini in the
  // working directory; we read only a file the user named, and insist on it.
  std::string file_text;
  if (!config_file.empty()) {
    std::ifstream f{config_file};
    if (!f) {
      err_stream << "swarmkeeper: cannot open config file '" << config_file
                 << "': " << std::strerror(errno) << '\n';
      return load_action::exit_error;
    }
    file_text.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    std::istringstream raw_stream{file_text};
    auto raw = caf::actor_system_config::parse_config(raw_stream);
    if (!raw) {
      err_stream << "swarmkeeper: config file '" << config_file << "': " << describe(raw.error())
                 << " (strings must be quoted, e.g. bind=\"::1\")\n";
      return load_action::exit_error;
    }
    check_file_keys(*raw, cfg.options(), config_file, p);
  }
  std::istringstream ini{file_text};
  if (auto err = cfg.parse(args, ini)) {
    p.add(describe(err, &cfg.options()) + " (see --help)");
    p.print(err_stream);
    return load_action::exit_error;
  }
  for (const auto& extra : cfg.remainder) p.add("unexpected argument '" + extra + "'");
  out.warnings.clear();
  fold_renamed(cfg.content, cli_keys, out.warnings, p);
  config::detail::resolve(cfg.content, out, p);
  if (!p.empty()) {
    p.print(err_stream);
    return load_action::exit_error;
  }
  if (dump) {
    out_stream << dump_config(cfg);
    out_stream.flush();
    return load_action::exit_ok;
  }
  // scheduler.max-threads=0 stands for one worker per CPU this process may
  // use (affinity mask and cgroup quota, app/config_cpus.hpp); CAF itself
  // would start no worker at all for 0, and its own default (a thread per
  // core of the machine, at least 4) ignores pinning and quotas.
  if (caf::get_or(cfg.content, "scheduler.max-threads", std::int64_t{0}) == 0)
    cfg.set("scheduler.max-threads", static_cast<std::int64_t>(out.usable_cpus));
  return load_action::run;
}


}  // namespace sk
