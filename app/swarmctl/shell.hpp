#pragma once
/// swarmctl's shell: the interactive mode (libedit: line editing, history in
/// a bounded file, tab completion) and the same loop without the editor
/// when stdin is not a terminal (scripts, pipes, tests).
///
/// libedit (BSD licence) and not GNU readline (GPL): swarmkeeper is MIT.

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

/// Completion candidates for the word `word` whose line so far (everything
/// before the word) is `before`: command names for the first word; then,
/// by the command's argument kind, info_hashes from `hashes`, policy names,
/// start/stop or command names; flags (--name or --name=) when the word
/// starts with "--"; a flag's values after "--name=". Sorted, unique, all
/// starting with `word`.
std::vector<std::string> completions(std::string_view before, std::string_view word,
                                     const std::set<std::string>& hashes);

/// Runs commands until `exit`/`quit` or end of input. `interactive` true:
/// the libedit editor on the terminal (prompt "swarmctl> "); false: reads
/// `in` line by line, no prompt, skipping blank lines and # comments.
/// A failing command never ends the shell. Returns 0 when every command
/// succeeded, else the exit code of the last one that failed.
int run_shell(session& s, std::istream& in, bool interactive);

}  // namespace sk::swarmctl
