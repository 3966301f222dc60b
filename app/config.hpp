#pragma once
/// The daemon's configuration: one schema (`sk::config::options()`) that
/// declares every option once — section, name, type, default, range, one-line
/// doc — and from which registration, range checks, `--help`,
/// `--long-help`, `--dump-config` and the sample config file
/// (`--print-sample-config`, shipped as deploy/swarmkeeper.ini) all come.
///
/// Precedence: embedded defaults < config file (`--config-file=FILE`) <
/// command line. Unlike plain CAF 0.17, which stores unknown INI keys and
/// silently drops INI values of the wrong type, every key of the file and
/// every option of the command line must be an option of the schema (or a
/// former name of one) with a value of its type, and every value is
/// range-checked before anything starts. CAF's own options are not accepted
/// except the one the schema declares (`scheduler.max-threads`).
///
/// The files:
///
///   config_schema.cpp   the sections, the option table, shortcuts, former names
///   config_values.cpp   values as text, ranges in words, type and range checks
///   config_load.cpp     registration with CAF, reading the command line and the
///                       file, former names, load_config()
///   config_resolve.cpp  effective values into each module's config struct, and
///                       the checks between options
///   config_texts.cpp    --version, --help, the sample file, the README table,
///                       --dump-config, the admin API's view
///   config_detail.hpp   what these files share and nobody else needs

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/config_value.hpp>
#include <caf/timespan.hpp>

#include "cluster/cluster_config.hpp"
#include "runtime/state_keeper.hpp"
#include "runtime/supervisor.hpp"
#include "tracker/swarm_config.hpp"
#include "admin/admin_server.hpp"
#include "net/http/http_server.hpp"
#include "net/probe/reachability_prober.hpp"
#include "net/gateway.hpp"
#include "net/node_lists.hpp"
#include "net/udp/udp_server.hpp"

namespace sk {

/// Everything the daemon reads from its configuration, validated. Each
/// section configures its own module; nothing here is live state (the
/// access and ban lists start from `lists` and live in `node_lists`).
struct daemon_settings {
  /// The HTTP transport ([http]).
  http_server_config http;
  /// `udp.enable`: serve the UDP tracker at all.
  bool udp_enabled = true;
  /// The UDP transport ([udp]); `bind` already falls back to http.bind.
  udp_config udp;
  /// The one door both transports share ([gateway]; its numwant and scrape
  /// limits from [tracker], its trusted-address rule per transport from
  /// http.trust-ip-param and udp.trust-ip-field).
  gateway_config gateway;
  /// What the node holds at most ([caps]): main builds the node's census
  /// (tracker/node_census.hpp) from it.
  node_caps caps;
  /// Per-swarm settings, the self-healing ones included ([tracker],
  /// [clients], [health], [allocation], remediation.history-size).
  /// The ban list is live state: main hands the swarms `node_lists::bans`
  /// beside it (`node_shared`).
  swarm_config swarm;
  /// The supervisor and remediation ([supervisor], [remediation]).
  supervisor_config supervisor;
  /// `probe.enable`: run the reachability prober (swarms probe only then;
  /// the per-swarm decisions are in `swarm.probe`).
  bool probe_enabled = false;
  /// The prober ([probe]); `cooldown` is probe.reprobe-after.
  prober_config probe;
  /// `admin.port` != 0: run the admin API (then `admin.token` is set).
  bool admin_enabled = false;
  /// The admin API ([admin]); the token already read from token-file.
  /// `access` stays null: main hands the admin API `node_lists::access`.
  admin_config admin;
  /// The cluster ([cluster]); off unless `cluster.port` is set (then the
  /// secret is read from secret-file, and udp.connection-id-key, when
  /// empty, is derived from it).
  cluster::cluster_config cluster;
  /// What the node-wide lists start with ([access] and clients.banned, the
  /// access file already read): main builds `node_lists` from it.
  initial_lists lists;
  /// CPUs this process may use (affinity mask and cgroup quota,
  /// app/config_cpus.hpp), read once: the zero defaults of http.io-threads
  /// and scheduler.max-threads are derived from it.
  std::size_t usable_cpus = 1;
  /// spdlog level name: trace, debug, info, warn, error, critical, off.
  std::string log_level = "info";
  /// `log.format`: "text" or "json" (app/logging.hpp).
  std::string log_format = "text";
  /// The node's budget of per-swarm info lines (runtime/swarm_actor_log.hpp).
  double log_swarm_lines_per_minute = 60.0;
  std::uint32_t log_swarm_lines_burst = 100;
  /// The state file ([state]); off while `dir` is empty.
  state_config state;
  /// How long SIGINT/SIGTERM waits for open requests before stopping.
  std::chrono::milliseconds drain_timeout{10000};
  /// `scheduler.batch`: every thread under SCHED_BATCH (set by main before
  /// the first thread starts, so every thread inherits it).
  bool batch_scheduling = true;
  /// Warnings for the log once it is set up (a deprecated option name was
  /// used), one line each.
  std::vector<std::string> warnings;
};

namespace config {

/// The type of an option's value as written in a config file.
enum class value_type { integer, boolean, string, string_list, duration, real };

/// Inclusive bounds of an integer option. `extra` is one more value accepted
/// outside them, with its own meaning in the doc (-1: never, ...).
struct integer_range {
  std::int64_t lo;
  std::int64_t hi;
  std::optional<std::int64_t> extra;
};

/// Inclusive bounds of a duration option; `extra` as for integers (0s: off).
struct duration_range {
  caf::timespan lo;
  caf::timespan hi;
  std::optional<caf::timespan> extra;
};

/// Inclusive bounds of a real option.
struct real_range {
  double lo;
  double hi;
};

/// The only values a string option accepts.
struct choice_set {
  std::vector<std::string> names;
};

/// Any value of the option's type (strings whose form is checked by the
/// module they configure, switches, lists).
struct no_range {};

using value_range = std::variant<no_range, integer_range, duration_range, real_range, choice_set>;

/// A `[section]` of the config file and the part of the daemon it configures.
struct section_def {
  const char* name;
  /// One line: what the section is about.
  const char* title;
  /// The header and struct its options end up in.
  const char* configures;
};

/// One option, declared once.
struct option_def {
  const char* section;
  const char* name;
  value_type type;
  /// The default (a value of `type`).
  caf::config_value fallback;
  value_range range;
  /// One line, without the range and default (those are printed from the
  /// fields above).
  const char* doc;
  /// Error messages, help and the admin API never show its value.
  bool secret = false;
  /// Registered and read by CAF itself (scheduler.max-threads); swarmkeeper
  /// only documents and range-checks it.
  bool caf_owned = false;

  /// "section.name".
  std::string key() const;
};

/// A command-line shortcut (`--http-port` for `--http.port`).
struct alias_def {
  const char* name;
  const char* target;  ///< "section.name"
  /// A switch that sets its boolean target to false (CAF 0.17 switches
  /// cannot be given a value on the command line, so "off" needs its own).
  bool negate = false;
};

/// An option's former name, still accepted (in the file and on the command
/// line) with a warning in the log: an option that moved to the section of
/// the module it configures.
struct renamed_def {
  const char* old_key;  ///< "section.name" as it used to be
  const char* new_key;  ///< "section.name" of the option now
};

/// The sections, in the order help, dumps and the sample file list them.
const std::vector<section_def>& sections();
/// Every option, grouped by section in the order of `sections()`.
const std::vector<option_def>& options();
/// Every command-line shortcut.
const std::vector<alias_def>& aliases();
/// The option "section.name", or null.
const option_def* find_option(std::string_view key);
/// The shortcut `name` (without "--"), or null.
const alias_def* find_alias(std::string_view name);
/// Every former option name.
const std::vector<renamed_def>& renamed();
/// The former name `old_key` ("section.name"), or null.
const renamed_def* find_renamed(std::string_view old_key);
/// The renamed entry whose new name is `new_key`, or null.
const renamed_def* renamed_to(std::string_view new_key);

/// A value in config-file syntax (what the CAF 0.17 parser reads back):
/// durations in the largest exact unit ("30min", "0s"), reals always with a
/// decimal point, strings quoted.
std::string format_value(const caf::config_value& v);
/// The range in words: "1 to 65535", "-1 or 1 to 10080", "one of off,
/// allow, deny"; empty for options without one.
std::string describe_range(const option_def& o);
/// What a value of type `t` looks like ("an integer"), for messages.
std::string expected_text(value_type t);
/// Nothing when `v` has the option's type and lies in its range; otherwise
/// one line naming the option — as `as_key` when given (the former name the
/// user wrote) — and never showing a secret's value.
std::optional<std::string> check_value(const option_def& o, const caf::config_value& v,
                                       std::string_view as_key = {});

/// The project version from CMake's `project(VERSION)`.
const char* version();
/// What `--version` prints.
std::string version_text();
/// What `--help` (`long_help` false) and `--long-help` print.
std::string help_text(bool long_help);
/// What `--print-sample-config` prints: every option, commented out at its
/// default, with its doc and range (deploy/swarmkeeper.ini).
std::string sample_config();
/// The README's option table (Markdown), one row per option.
std::string markdown_table();

}  // namespace config

/// The CAF config with swarmkeeper's options registered.
class swarmkeeper_config : public caf::actor_system_config {
 public:
  swarmkeeper_config();

  /// Exposes the option set (validation walks it).
  const caf::config_option_set& options() const noexcept { return custom_options_; }
};

/// What `load_config` decided.
enum class load_action {
  run,         ///< settings are valid: start the daemon
  exit_ok,     ///< --help, --long-help, --version, --dump-config or
               ///< --print-sample-config was served: exit 0
  exit_error,  ///< a message went to `err`: exit non-zero
};

/// Parses `argv` (and the file named by `--config-file=FILE`) into `cfg` and
/// `out`. Writes help, version, the sample config and `--dump-config` output
/// to `out_stream`, every problem to `err_stream` (all of them, one per line,
/// each naming the option).
load_action load_config(int argc, char** argv, swarmkeeper_config& cfg, daemon_settings& out,
                        std::ostream& out_stream, std::ostream& err_stream);

/// Every option of the schema with its effective value as text, secrets
/// (`udp.connection-id-key`, `admin.token`, `cluster.secret`) shown as
/// "<redacted>" when set: what the admin API reports.
std::vector<std::pair<std::string, std::string>> redacted_config(const swarmkeeper_config& cfg);

/// The effective configuration in config-file syntax, every option of the
/// schema with its doc, range and default as comments (what `--dump-config`
/// prints). Loading it back with `--config-file` yields the same
/// configuration.
std::string dump_config(const swarmkeeper_config& cfg);

}  // namespace sk
