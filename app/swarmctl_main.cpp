// swarmctl: the command-line client of swarmkeeper's admin API.
//
// One-shot commands (`swarmctl swarms --unhealthy`), or the shell
// (`swarmctl` on a terminal, `swarmctl shell`). The pieces live in
// app/swarmctl/: options (argv, environment, exit codes), client (HTTP and
// HTTPS through libcurl), commands (the command table, hash prefixes), help
// (its texts), format (one renderer per answer), table (width, elision,
// units), shell (libedit).

#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>
#include <string>
#include <vector>

#include "app/swarmctl/commands.hpp"
#include "app/swarmctl/options.hpp"
#include "app/swarmctl/shell.hpp"

#ifndef SWARMKEEPER_VERSION
#define SWARMKEEPER_VERSION "unknown"
#endif

int main(int argc, char** argv) {
  using namespace sk::swarmctl;
  std::vector<std::string> words(argv + 1, argv + argc);
  invocation inv;
  try {
    inv = parse_words(words);
  } catch (const usage_error& e) {
    std::cerr << "swarmctl: " << e.what() << "\n`swarmctl help` shows the usage\n";
    return exit_usage;
  }
  if (inv.global.version) {
    std::cout << "swarmctl " << SWARMKEEPER_VERSION << "\n";
    return exit_ok;
  }
  session s{std::cout, std::cerr};
  s.startup = inv.global;
  s.terminal_width = [] {
    winsize ws{};
    if (::isatty(STDOUT_FILENO) != 1 || ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0)
      return std::size_t{0};
    return static_cast<std::size_t>(ws.ws_col);
  };
  const bool tty = ::isatty(STDIN_FILENO) == 1;
  if (inv.command.empty()) {
    if (inv.global.help) {
      std::cout << help_text({}, output_style(s, inv).width);
      return exit_ok;
    }
    if (!tty) {
      std::cerr << "swarmctl: no command given (stdin is not a terminal, so no interactive "
                   "shell; use `swarmctl shell` to read commands from it)\n"
                   "`swarmctl help` lists the commands\n";
      return exit_usage;
    }
    return run_shell(s, std::cin, true);
  }
  if (inv.command == "shell" && !inv.global.help) {
    if (!inv.args.empty() || !inv.flags.empty()) {
      std::cerr << "swarmctl: shell takes no arguments\n";
      return exit_usage;
    }
    return run_shell(s, std::cin, tty);
  }
  return run_invocation(inv, s);
}
