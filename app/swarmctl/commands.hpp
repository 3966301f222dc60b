#pragma once
/// swarmctl's commands: one table row per command (name, usage, help,
/// argument and flag checks, how to build its request, how to print its
/// answer) and the one function that runs a parsed invocation.
///
/// Adding a command (e.g. the cluster's `members` and `move <hash> <node>`)
/// is one row in command_table() in commands.cpp: a `request` builder and a
/// `render` function; help, argument checks, --json, error handling, exit
/// codes and shell completion come from the row.
///
///   argv / shell line ─▶ parse_words ─▶ run_invocation
///        find row ─▶ check flags + arity ─▶ hash prefixes resolved (GET
///        /api/swarms) ─▶ row.request(inv) ─▶ perform
///        ─▶ 401: exit 4 · 4xx/5xx: API message, exit 1 · no answer: exit 3
///        ─▶ 2xx: --json pretty JSON, else row.render(answer) fitted to the
///           terminal's width (--raw: exact values, no fitting)

#include <atomic>
#include <functional>
#include <iosfwd>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/swarmctl/client.hpp"
#include "app/swarmctl/options.hpp"
#include "app/swarmctl/table.hpp"

namespace sk::swarmctl {

/// What a positional argument is (checked client-side; completed by the shell).
enum class arg_kind {
  hash,        ///< an info_hash: 40 hex digits, or a unique prefix of 4 or more
  policy,      ///< an allocation policy name (or "default")
  start_stop,  ///< "start" or "stop"
  command,     ///< a swarmctl command name
  text,        ///< free text
};

/// A command flag such as --limit=N.
struct flag_spec {
  std::string name;
  /// True: --name=VALUE; false: plain --name.
  bool takes_value = false;
  /// Suggested values (completion and help), e.g. size, rate.
  std::vector<std::string> values;
  std::string help;
};

/// One row of the command table.
struct command_spec {
  std::string name;
  /// Arguments in usage form, e.g. "<hash> <policy>".
  std::string arguments;
  std::string summary;
  /// More help for `swarmctl help <name>`; may be empty.
  std::string details;
  std::size_t min_args = 0;
  /// Most arguments; `many` for "the rest of the line" (ban reasons).
  std::size_t max_args = 0;
  static constexpr std::size_t many = static_cast<std::size_t>(-1);
  /// Kind of each argument; the last one repeats.
  std::vector<arg_kind> kinds;
  std::vector<flag_spec> flags;
  /// Builds the API request from checked arguments; throws usage_error.
  /// Empty for commands that run locally (help, shell, exit).
  std::function<http_request(const invocation&)> request;
  /// Prints a 2xx JSON answer for humans in a style (width, --raw). Empty
  /// with `raw_text`.
  std::function<std::string(const nlohmann::json&, const invocation&, const style&)> render;
  /// The answer is text printed as it is (metrics); --json does not apply.
  bool raw_text = false;
};

/// Policy names the daemon knows (tracker/health_types.hpp policy_names,
/// repeated here so swarmctl does not link the actor layer) plus
/// "default". For completion and help only: the daemon validates.
const std::vector<std::string>& policy_words();

/// Every command, in the order `help` lists them.
const std::vector<command_spec>& command_table();
/// The row named `name`; nullptr when there is none.
const command_spec* find_command(const std::string& name);

/// Checks `inv` against its row (known command, allowed flags with or
/// without values, argument count, hashes) and returns the request it
/// makes. Throws usage_error. Pure: what the unit tests drive.
http_request build_request(const invocation& inv);

/// "swarmctl NAME [--flag=...] ARGUMENTS": the usage line of a row.
std::string usage_line(const command_spec& c);

/// The text of `swarmctl help` (no topic) or `swarmctl help <command>`,
/// fitted to `width` columns (0: as wide as it is); throws usage_error for
/// an unknown topic.
std::string help_text(const std::string& topic = {}, std::size_t width = 0);

/// State that lives across commands of one run (or one shell session).
struct session {
  session(std::ostream& o, std::ostream& e) : out(o), err(e) {}
  /// Options given when swarmctl started (a shell line may add --json).
  global_options startup;
  std::ostream& out;
  std::ostream& err;
  env_lookup env = real_env;
  file_reader read = real_file;
  /// Info hashes seen in answers so far (shell completion).
  std::set<std::string> seen_hashes;
  /// Resolved on first use and kept (the token file is read once).
  std::optional<connection> conn;
  /// True inside the shell: `shell` is refused, `exit` is meaningful.
  bool in_shell = false;
  /// The terminal's width in columns (0: not a terminal); read before
  /// every command, as the terminal may have been resized.
  std::function<std::size_t()> terminal_width = [] { return std::size_t{0}; };
  /// Raised (by Ctrl-C in the shell) to abandon the request under way.
  const std::atomic<bool>* cancel = nullptr;
};

/// The style of `inv`'s output in `s`: --raw from either; the width from
/// COLUMNS or the terminal (none with --raw).
style output_style(const session& s, const invocation& inv);

/// Most matches of a prefix listed: one page of GET /api/swarms?prefix=
/// sorted by hash, at the daemon's admin fan-out maximum. The daemon
/// searches every swarm it holds for the prefix, whatever this limit.
constexpr std::size_t prefix_scan_limit = 10000;

/// The info_hashes of the daemon's swarms that start with `prefix` (hex,
/// any case; the daemon searches them all, GET /api/swarms?prefix=), sorted;
/// `complete` false when more swarms match than the daemon listed. An
/// empty `prefix` lists the first page of every swarm. Throws usage_error
/// (no URL or token) or command_failure.
std::vector<std::string> hashes_with_prefix(session& s, std::string_view prefix, bool& complete);

/// `prefix` resolved to the one info_hash of the daemon's swarms that
/// starts with it. None: command_failure with exit 1; several: exit 2,
/// naming how many and a few of them.
std::string resolve_hash_prefix(session& s, std::string_view prefix);

/// A GET answered with JSON, or nullopt on any failure (nothing printed):
/// for the shell's prompt and completion, which must never get in the way.
std::optional<nlohmann::json> quiet_get(session& s, const std::string& target);

/// A command that failed after its arguments were checked: the message
/// (without "swarmctl: ") and the exit code.
class command_failure : public std::runtime_error {
 public:
  command_failure(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

/// Runs one invocation: messages go to `s.err` prefixed "swarmctl: ",
/// output to `s.out`. Returns the exit code; never throws for bad input,
/// an unreachable daemon or an unexpected answer.
int run_invocation(const invocation& inv, session& s);

}  // namespace sk::swarmctl
