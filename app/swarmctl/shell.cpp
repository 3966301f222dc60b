#include "app/swarmctl/shell.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <istream>
#include <ostream>

// libedit's readline compatibility header (Debian libedit-dev).
#include <editline/readline.h>

namespace sk::swarmctl {

std::optional<std::string> history_file(const env_lookup& env) {
  if (auto h = env("SWARMCTL_HISTORY")) {
    if (h->empty()) return std::nullopt;
    return *h;
  }
  auto home = env("HOME");
  if (!home || home->empty()) return std::nullopt;
  return *home + "/.swarmctl_history";
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool is_option(std::string_view w) { return w.size() > 2 && starts_with(w, "--"); }

}  // namespace

std::vector<std::string> completions(std::string_view before, std::string_view word,
                                     const std::set<std::string>& hashes) {
  return completions(before, word, [&](std::string_view) { return hashes; });
}

std::vector<std::string> completions(std::string_view before, std::string_view word,
                                     const hash_source& hashes) {
  std::vector<std::string> words;
  try {
    words = split_line(before);
  } catch (const usage_error&) {
    return {};  // inside an open quote: nothing sensible to offer
  }
  std::vector<std::string> positional;
  for (const auto& w : words)
    if (!is_option(w)) positional.push_back(w);

  std::vector<std::string> out;
  auto offer = [&](const std::string& candidate) {
    if (starts_with(candidate, word)) out.push_back(candidate);
  };
  const command_spec* cmd = positional.empty() ? nullptr : find_command(positional[0]);

  if (starts_with(word, "--")) {
    const auto eq = word.find('=');
    if (cmd != nullptr && eq != std::string_view::npos) {
      const std::string name(word.substr(2, eq - 2));
      for (const auto& f : cmd->flags)
        if (f.name == name)
          for (const auto& v : f.values) offer("--" + name + "=" + v);
    } else {
      offer("--json");
      offer("--help");
      if (cmd != nullptr)
        for (const auto& f : cmd->flags) offer("--" + f.name + (f.takes_value ? "=" : ""));
    }
  } else if (positional.empty()) {
    for (const auto& c : command_table()) offer(c.name);
  } else if (cmd != nullptr && !cmd->kinds.empty()) {
    const std::size_t index = positional.size() - 1;  // arguments before this word
    if (index < cmd->max_args) {
      const arg_kind kind = cmd->kinds[std::min(index, cmd->kinds.size() - 1)];
      switch (kind) {
        case arg_kind::hash:
          for (const auto& h : hashes(word)) offer(h);
          break;
        case arg_kind::policy:
          for (const auto& p : policy_words()) offer(p);
          break;
        case arg_kind::start_stop:
          offer("start");
          offer("stop");
          break;
        case arg_kind::command:
          for (const auto& c : command_table()) offer(c.name);
          break;
        case arg_kind::text:
          break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::set<std::string> hashes_for_completion(session& s, std::string_view word) {
  std::set<std::string> out = s.seen_hashes;
  if (word.size() >= 40 || word.find_first_not_of("0123456789abcdefABCDEF") != word.npos)
    return out;
  try {
    if (!s.conn) s.conn = resolve_connection(s.startup, s.env, s.read);
  } catch (const usage_error&) {
    return out;
  }
  // A Tab must not hang on a daemon that does not answer.
  const auto saved = s.conn->timeout;
  s.conn->timeout = std::min(saved, std::chrono::milliseconds(3000));
  try {
    bool complete = true;
    for (auto& h : hashes_with_prefix(s, word, complete)) out.insert(std::move(h));
  } catch (const std::exception&) {
    // usage_error, command_failure, a JSON surprise: the seen hashes only.
  }
  s.conn->timeout = saved;
  return out;
}

std::string prompt_text(const std::string& node_name, const std::string& authority) {
  std::string label = node_name.empty() ? authority : node_name;
  if (label.empty()) return "swarmctl> ";
  // The name comes from the daemon: no control characters reach the terminal.
  for (auto& c : label)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return "swarmctl@" + elide(label, 40) + "> ";
}

namespace {

/// Runs one line; returns its exit code and whether the shell should end.
std::pair<int, bool> run_line(session& s, const std::string& line) {
  std::vector<std::string> words;
  try {
    words = split_line(line);
  } catch (const usage_error& e) {
    s.err << "swarmctl: " << e.what() << "\n";
    return {exit_usage, false};
  }
  if (words.empty() || words[0].rfind('#', 0) == 0) return {exit_ok, false};
  invocation inv;
  try {
    inv = parse_words(words, /*connection_options=*/false);
  } catch (const usage_error& e) {
    s.err << "swarmctl: " << e.what() << "\n";
    return {exit_usage, false};
  }
  if (inv.command.empty()) {
    if (inv.global.help) {
      s.out << help_text({}, output_style(s, inv).width);
      return {exit_ok, false};
    }
    s.err << "swarmctl: no command on the line; `help` lists them\n";
    return {exit_usage, false};
  }
  const int rc = run_invocation(inv, s);
  const command_spec* c = find_command(inv.command);
  const bool leave = rc == exit_ok && c != nullptr && c->name == "exit";
  return {rc, leave};
}

// -- libedit glue ---------------------------------------------------------------
// readline's completion hooks are plain C function pointers without a user
// pointer: the session being completed is kept here while the editor runs.

session* completing_session = nullptr;
std::vector<std::string> candidates;

char* candidate_generator(const char* /*text*/, int state) {
  static std::size_t next = 0;
  if (state == 0) next = 0;
  if (next >= candidates.size()) return nullptr;
  return ::strdup(candidates[next++].c_str());
}

char** complete_hook(const char* text, int start, int /*end*/) {
  rl_attempted_completion_over = 1;  // never fall back to file names
  if (completing_session == nullptr) return nullptr;
  const std::string before(rl_line_buffer, static_cast<std::size_t>(std::max(start, 0)));
  session& s = *completing_session;
  candidates = completions(before, text,
                           [&s](std::string_view word) { return hashes_for_completion(s, word); });
  if (candidates.empty()) return nullptr;
  return rl_completion_matches(text, candidate_generator);
}

/// Makes sure the history file exists with mode 0600 (commands name swarms
/// and ban reasons; nobody else needs to read them).
void prepare_history_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
}

// Ctrl-C. The handler raises `interrupted` (the request under way stops:
// session::cancel) and writes a byte to a pipe. The editor reads keys
// through read_key, which waits on the terminal and that pipe together: a
// Ctrl-C at any moment, even before the editor blocks, ends readline() with
// nothing, and the loop offers a fresh line. (libedit's own SIGINT handling
// ends the process; a flag alone would be missed when the signal lands
// before the terminal read starts.)
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
int interrupt_pipe[2] = {-1, -1};

extern "C" void on_interrupt(int) {
  const int saved_errno = errno;
  interrupted.store(true);
  const char byte = 1;
  if (interrupt_pipe[1] >= 0) (void)!::write(interrupt_pipe[1], &byte, 1);
  errno = saved_errno;
}

/// Empties the pipe (Ctrl-C pressed while a command ran was handled there).
void drain_interrupts() {
  char buf[64];
  while (interrupt_pipe[0] >= 0 && ::read(interrupt_pipe[0], buf, sizeof buf) > 0) {
  }
}

/// One byte of the terminal; -1 at end of input.
int read_byte(int fd) {
  for (;;) {
    unsigned char c = 0;
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1) return c;
    if (n < 0 && errno == EINTR) continue;
    return -1;
  }
}

/// libedit's key reader (rl_getc_function): the next character as a wide
/// character (decoded here with the locale's character set, as libedit
/// takes the value as one), or -1, which ends readline(): at end of input
/// or on Ctrl-C.
extern "C" int read_key(FILE* in) {
  const int fd = ::fileno(in);
  for (;;) {
    pollfd p[2] = {{fd, POLLIN, 0}, {interrupt_pipe[0], POLLIN, 0}};
    if (::poll(p, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (p[1].revents != 0) {
      drain_interrupts();
      return -1;
    }
    if (p[0].revents == 0) continue;
    const int first = read_byte(fd);
    if (first < 0x80) return first;  // ASCII, or -1
    char bytes[MB_LEN_MAX];
    std::size_t n = 0;
    bytes[n++] = static_cast<char>(first);
    for (;;) {
      std::mbstate_t state{};
      wchar_t wc = 0;
      const std::size_t r = std::mbrtowc(&wc, bytes, n, &state);
      if (r == static_cast<std::size_t>(-2) && n < sizeof bytes) {
        const int next = read_byte(fd);
        if (next < 0) return -1;
        bytes[n++] = static_cast<char>(next);
        continue;
      }
      if (r == static_cast<std::size_t>(-1) || r == static_cast<std::size_t>(-2)) return 0xFFFD;
      return static_cast<int>(wc);
    }
  }
}

/// The node's name for the prompt: GET /api/node's "node".
std::string node_name(session& s) {
  auto j = quiet_get(s, "/api/node");
  if (!j || !j->is_object() || !j->contains("node") || !(*j)["node"].is_string()) return {};
  return (*j)["node"].get<std::string>();
}

int interactive_loop(session& s) {
  rl_readline_name = "swarmctl";
  // Lines are decoded and encoded with the locale's character set: the
  // user's, or UTF-8 under the plain C locale (a terminal is UTF-8 then far
  // more often than ASCII). Only LC_CTYPE: numbers print as in C.
  const char* ctype = std::setlocale(LC_CTYPE, "");
  if (ctype == nullptr || std::strcmp(ctype, "C") == 0 || std::strcmp(ctype, "POSIX") == 0)
    std::setlocale(LC_CTYPE, "C.UTF-8");
  rl_catch_signals = 0;
  if (interrupt_pipe[0] < 0 && ::pipe2(interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
    interrupt_pipe[0] = interrupt_pipe[1] = -1;
  if (interrupt_pipe[0] >= 0) rl_getc_function = read_key;
  struct sigaction on_int {
  }, saved_int{};
  on_int.sa_handler = on_interrupt;
  sigemptyset(&on_int.sa_mask);
  on_int.sa_flags = 0;  // no SA_RESTART: the terminal read must return
  ::sigaction(SIGINT, &on_int, &saved_int);
  s.cancel = &interrupted;
  // Only blanks separate words, so "--sort=ra" completes as one word.
  static char breaks[] = " \t\n";
  rl_basic_word_break_characters = breaks;
  rl_attempted_completion_function = complete_hook;
  completing_session = &s;
  const auto hist = history_file(s.env);
  stifle_history(history_lines);
  if (hist) {
    prepare_history_file(*hist);
    read_history(hist->c_str());
  }
  s.out << "swarmctl shell: `help` lists commands, Tab completes, Ctrl-C clears the line, "
           "`exit` or Ctrl-D leaves\n";
  s.out.flush();
  std::string name = node_name(s);
  for (;;) {
    const std::string prompt = prompt_text(name, s.conn ? s.conn->url.authority() : std::string());
    drain_interrupts();
    interrupted.store(false);
    char* raw = readline(prompt.c_str());
    if (raw == nullptr) {
      s.out << "\n";
      s.out.flush();
      if (interrupted.load()) continue;  // Ctrl-C: the line is dropped
      break;                             // Ctrl-D or end of input
    }
    std::string line(raw);
    std::free(raw);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    add_history(line.c_str());
    if (hist) {
      // Written after every line: a killed shell keeps what it had.
      write_history(hist->c_str());
      history_truncate_file(hist->c_str(), history_lines);
    }
    // A Ctrl-C from here on (once the line was read) stops its command.
    auto [rc, leave] = run_line(s, line);
    s.out.flush();
    s.err.flush();
    if (leave) break;
    // The daemon was not reachable at start: ask again once it answers.
    if (name.empty() && rc == exit_ok) name = node_name(s);
  }
  completing_session = nullptr;
  s.cancel = nullptr;
  ::sigaction(SIGINT, &saved_int, nullptr);
  // Interactive: the status of one typo is not the session's.
  return exit_ok;
}

}  // namespace

int run_shell(session& s, std::istream& in, bool interactive) {
  s.in_shell = true;
  if (interactive) return interactive_loop(s);
  int last_failure = exit_ok;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    auto [rc, leave] = run_line(s, line);
    s.out.flush();
    s.err.flush();
    if (rc != exit_ok) last_failure = rc;
    if (leave) break;
  }
  return last_failure;
}

}  // namespace sk::swarmctl
