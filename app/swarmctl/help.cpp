// swarmctl's help texts (help_text in commands.hpp), made from the command
// table: prose wrapped to the width, tables elided.

#include <algorithm>
#include <sstream>

#include "app/swarmctl/commands.hpp"
#include "app/swarmctl/table.hpp"

namespace sk::swarmctl {

namespace {

/// `text` with each of its lines broken at blanks into lines of at most
/// `width` columns (a longer word stays whole); ends in '\n'.
std::string wrap_words(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) indent = 0;
    std::istringstream words(line.substr(indent));
    std::string current(indent, ' ');
    bool empty = true;
    for (std::string w; words >> w;) {
      if (!empty && display_width(current) + 1 + display_width(w) > width) {
        out += current + "\n";
        current.assign(indent, ' ');
        empty = true;
      }
      current += (empty ? "" : " ") + w;
      empty = false;
    }
    out += current + "\n";
  }
  return out;
}

}  // namespace

std::string help_text(const std::string& topic, std::size_t width) {
  std::ostringstream os;
  if (!topic.empty()) {
    const command_spec* c = find_command(topic);
    if (c == nullptr)
      throw usage_error("no command '" + topic + "'; `swarmctl help` lists them");
    os << "usage: " << usage_line(*c) << "\n\n" << c->summary << "\n";
    // Prose is wrapped (at 80 columns, or the terminal's when narrower);
    // tables are elided.
    const std::size_t prose = width == 0 ? 80 : std::min<std::size_t>(width, 80);
    if (!c->details.empty()) os << "\n" << wrap_words(c->details, prose);
    if (!c->flags.empty()) {
      os << "\noptions:\n";
      text_table t{{{"  OPTION"}, {"MEANING"}}};
      for (const auto& f : c->flags) {
        std::string values;
        for (const auto& v : f.values) values += (values.empty() ? "" : "|") + v;
        t.add({"  --" + f.name + (f.takes_value ? "=" + (values.empty() ? "N" : values) : ""),
               f.help});
      }
      os << t.render(width);
    }
    if (c->request && !c->raw_text) os << "\n--json prints the API's JSON answer instead.\n";
    return fit_lines(os.str(), width);
  }
  os << "swarmctl: control a running swarmkeeper through its admin API\n\n"
        "usage: swarmctl [global options] <command> [arguments]\n"
        "       swarmctl [global options]            (interactive shell on a terminal)\n\n"
        "commands:\n";
  text_table t{{{"  COMMAND"}, {"WHAT"}}};
  for (const auto& c : command_table())
    t.add({"  " + c.name + (c.arguments.empty() ? "" : " " + c.arguments), c.summary});
  os << t.render(width);
  os << "\nglobal options (anywhere on the line):\n"
        "  --url=URL          admin API: http://HOST:PORT, or https://HOST:PORT through\n"
        "                     a TLS proxy (env SWARMCTL_URL); the daemon's admin.bind\n"
        "                     and admin.port; no default (the API is off unless set)\n"
        "  --token-file=PATH  file whose first line is the admin token\n"
        "                     (env SWARMCTL_TOKEN_FILE)\n"
        "  --token=TOKEN      the admin token (env SWARMCTL_TOKEN; visible in ps:\n"
        "                     prefer a file)\n"
        "  --ca-file=PEM      https: trust the CA (or self-signed certificate) in this\n"
        "                     file instead of the system's (env SWARMCTL_CA_FILE)\n"
        "  --insecure         https: accept any certificate (the token then goes to\n"
        "                     whoever answers; for a throwaway self-signed proxy only)\n"
        "  --timeout=SECONDS  give up on an answer after this long (default 10)\n"
        "  --json             print the API's JSON (pretty) instead of tables\n"
        "  --raw              tables with exact values (bytes, seconds, rates as\n"
        "                     numbers), not fitted to the terminal's width\n"
        "Options beat environment variables. Tables fit COLUMNS or the terminal's\n"
        "width, eliding cells (an ellipsis marks the cut); hashes accept a unique\n"
        "prefix of 4 or more hex digits.\n\n"
        "exit codes: 0 ok, 1 the daemon answered with an error (or no swarm matches\n"
        "            a hash prefix), 2 bad usage (nothing sent; or an ambiguous hash\n"
        "            prefix), 3 daemon unreachable (refused, timeout, unknown host,\n"
        "            TLS), 4 token refused\n\n"
        "`swarmctl help <command>` tells more about one command.\n";
  return fit_lines(os.str(), width);
}

}  // namespace sk::swarmctl
