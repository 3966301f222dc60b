#pragma once
/// swarmctl's shell: the interactive mode (libedit: line editing, history in
/// a bounded file, tab completion) and the same loop without the editor
/// when stdin is not a terminal (scripts, pipes, tests).
///
/// libedit (BSD licence) and not GNU readline (GPL): swarmkeeper is MIT.

#include <functional>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "app/swarmctl/commands.hpp"

namespace sk::swarmctl {

/// Lines kept in the history file.
constexpr int history_lines = 1000;

/// The history file: SWARMCTL_HISTORY when set (empty: no history), else
/// $HOME/.swarmctl_history; nullopt when there is none.
std::optional<std::string> history_file(const env_lookup& env);

/// Info_hashes that may complete `word` (asked only when a hash argument
/// is being completed).
using hash_source = std::function<std::set<std::string>(std::string_view word)>;

/// Completion candidates for the word `word` whose line so far (everything
/// before the word) is `before`: command names for the first word; then,
/// by the command's argument kind, info_hashes from `hashes`, policy
/// names, start/stop or command names; flags
/// (--name or --name=) when the word starts with "--"; a flag's values
/// after "--name=". Sorted, unique, all starting with `word`.
std::vector<std::string> completions(std::string_view before, std::string_view word,
                                     const hash_source& hashes);
/// The same with a fixed set of hashes.
std::vector<std::string> completions(std::string_view before, std::string_view word,
                                     const std::set<std::string>& hashes);

/// The info_hashes that complete `word` in `s`: the daemon's swarms
/// starting with it (GET /api/swarms, as prefixes are resolved) and those
/// seen in earlier answers; only the seen ones when the daemon cannot be
/// asked.
std::set<std::string> hashes_for_completion(session& s, std::string_view word);

/// The shell's prompt: "swarmctl NODE> " with the daemon's node name
/// (`node_name`, from GET /api/node), else the URL's host:port (`authority`),
/// else "swarmctl> ".
std::string prompt_text(const std::string& node_name, const std::string& authority);

/// Runs commands until `exit`/`quit` or end of input. `interactive` true:
/// the libedit editor on the terminal (prompt_text; Ctrl-C clears the line
/// or stops the request under way, Ctrl-D leaves); false: reads `in` line
/// by line, no prompt, skipping blank lines and # comments.
/// A failing command never ends the shell. Returns 0 when every command
/// succeeded, else the exit code of the last one that failed.
int run_shell(session& s, std::istream& in, bool interactive);

}  // namespace sk::swarmctl
