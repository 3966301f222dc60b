#pragma once
/// swarmctl's command-line side, all pure (unit-tested without a daemon):
/// exit codes, splitting argv into global options / command / command flags
/// / arguments, resolving the connection from options and environment,
/// splitting a shell line into words, and info_hash validation.
///
/// The splitting is written here rather than with CLI11: one ~70-line
/// function serves argv and shell lines alike, while flags, arity, help and
/// completion come from the command table (commands.hpp). CLI11 would need
/// that table mirrored into an App per run, and it reads a single-dash word
/// such as a ban prefix ("-XX0001-") as short options.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "app/swarmctl/client.hpp"

namespace sk::swarmctl {

/// swarmctl's exit status (documented in `swarmctl help` and the README).
enum exit_code : int {
  exit_ok = 0,
  exit_api_error = 1,    ///< the daemon answered with an error (4xx/5xx) or an unexpected answer
  exit_usage = 2,        ///< bad arguments, bad hash, missing URL/token: nothing was sent
  exit_unreachable = 3,  ///< connection refused, timed out, name not resolved, broken
  exit_auth = 4,         ///< the admin token was refused (401)
};

/// Bad arguments; the message is shown with a usage hint, exit 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options that apply to every command. Unset optionals fall back to the
/// environment (see resolve_connection).
struct global_options {
  std::optional<std::string> url;
  std::optional<std::string> token;
  std::optional<std::string> token_file;
  std::optional<std::chrono::milliseconds> timeout;
  /// https: the CA (PEM) that signed the proxy's certificate.
  std::optional<std::string> ca_file;
  /// https: accept any certificate (a self-signed proxy).
  bool insecure = false;
  bool json = false;
  /// Exact values in the tables (bytes, seconds, rates as numbers), no
  /// fitting to the terminal's width.
  bool raw = false;
  bool help = false;
  bool version = false;
};

/// One parsed command line (argv, or one shell line).
struct invocation {
  global_options global;
  /// The command word; empty when none was given.
  std::string command;
  /// Positional arguments after the command, in order.
  std::vector<std::string> args;
  /// Command flags as given: "--limit=5" → {"limit", "5"}, "--unhealthy" →
  /// {"unhealthy", nullopt} (no '=' at all). Which flags a command takes,
  /// and whether with a value, is checked by the command table, not here.
  std::map<std::string, std::optional<std::string>> flags;
};

/// Splits `words` (argv without the program name, or a shell line).
/// Options may come before or after the command. Global options with a
/// value take `--url=U` or `--url U`; command flags only `--name[=value]`.
/// `--` ends option parsing (so a ban reason may start with "--"); a single
/// '-' prefix is an argument (ban prefixes look like "-XX0001-").
/// `connection_options` false (inside the shell) refuses --url, --token,
/// --token-file, --timeout, --ca-file and --insecure. Throws usage_error.
invocation parse_words(const std::vector<std::string>& words, bool connection_options = true);

/// What a request needs besides its target: where, who, how long.
struct connection {
  admin_url url;
  std::string token;
  std::chrono::milliseconds timeout{10000};
  /// CA file and --insecure for https.
  transfer_options transfer;
};

/// Reads an environment variable; nullopt when unset (injected for tests).
using env_lookup = std::function<std::optional<std::string>(const char*)>;
/// Reads a whole file; nullopt when it cannot be read (injected for tests).
using file_reader = std::function<std::optional<std::string>(const std::string&)>;

/// The process environment and filesystem.
std::optional<std::string> real_env(const char* name);
std::optional<std::string> real_file(const std::string& path);

/// The default admin URL: none, because the daemon runs no admin server
/// unless admin.port is set (app/config.cpp: admin.port defaults to 0).
/// Kept as one function so a future default port lands in one place.
std::optional<std::string> default_admin_url();

/// Decides URL, token and timeout. Precedence: --url > SWARMCTL_URL >
/// default_admin_url(); --token > --token-file > SWARMCTL_TOKEN >
/// SWARMCTL_TOKEN_FILE (a token file's first line, surrounding blanks
/// removed); --ca-file > SWARMCTL_CA_FILE. --ca-file or --insecure with an
/// http URL is an error (they would silently mean nothing). Throws
/// usage_error naming what is missing or wrong.
connection resolve_connection(const global_options& g, const env_lookup& env = real_env,
                              const file_reader& read = real_file);

/// Parses a --timeout value in seconds ("10", "2.5"); > 0 and <= 3600.
std::optional<std::chrono::milliseconds> parse_timeout(std::string_view seconds);

/// Parses a non-negative integer flag value (no sign, at most 9 digits).
std::optional<std::size_t> parse_count(std::string_view text);

/// Splits a shell line into words: blanks separate, '...' and "..." quote,
/// backslash escapes the next character (outside single quotes). Throws
/// usage_error on an unterminated quote or a trailing backslash.
std::vector<std::string> split_line(std::string_view line);

/// True for exactly 40 hex digits (either case).
bool is_info_hash(std::string_view text);

/// Fewest hex digits of an info_hash prefix that is looked up.
constexpr std::size_t min_hash_prefix = 4;

/// True for min_hash_prefix to 39 hex digits: a prefix to resolve.
bool is_hash_prefix(std::string_view text);

/// `text` as a lower-case info_hash; throws usage_error naming the bad value
/// when it is not 40 hex digits (or a prefix that was not resolved).
std::string checked_hash(std::string_view text);

}  // namespace sk::swarmctl
