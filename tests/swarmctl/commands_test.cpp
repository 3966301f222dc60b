// swarmctl's command table: the request each command sends, client-side
// checks (exit 2 before anything is sent), help, and shell completion.

#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "app/swarmctl/commands.hpp"
#include "app/swarmctl/shell.hpp"

namespace sk::swarmctl {
namespace {

using json = nlohmann::json;

const std::string hash = "0123456789abcdef0123456789abcdef01234567";
const std::string upper = "0123456789ABCDEF0123456789ABCDEF01234567";

http_request req(const std::vector<std::string>& words) { return build_request(parse_words(words)); }

void expect(const std::vector<std::string>& words, const std::string& method,
            const std::string& target, const json& body = nullptr) {
  SCOPED_TRACE(words.empty() ? "" : words[0]);
  auto r = req(words);
  EXPECT_EQ(r.method, method);
  EXPECT_EQ(r.target, target);
  if (body.is_null()) {
    EXPECT_EQ(r.body, "");
  } else {
    EXPECT_EQ(json::parse(r.body), body);
  }
}

TEST(BuildRequest, EveryApiCommand) {
  expect({"node"}, "GET", "/api/node");
  expect({"node", "--config"}, "GET", "/api/node");
  expect({"swarms"}, "GET", "/api/swarms");
  expect({"swarms", "--unhealthy", "--sort=rate", "--limit=5", "--offset=10"}, "GET",
         "/api/swarms?health=unhealthy&sort=rate&limit=5&offset=10");
  expect({"swarms", "--health=critical"}, "GET", "/api/swarms?health=critical");
  expect({"swarm", upper}, "GET", "/api/swarms/" + hash);
  expect({"remediations"}, "GET", "/api/remediations");
  expect({"events"}, "GET", "/api/events");
  expect({"policy", hash, "role-aware"}, "POST", "/api/swarms/" + hash + "/policy",
         {{"policy", "role-aware"}});
  expect({"restart", hash}, "POST", "/api/swarms/" + hash + "/restart");
  expect({"remediate", hash, "start"}, "POST", "/api/swarms/" + hash + "/remediation/start");
  expect({"remediate", hash, "stop"}, "POST", "/api/swarms/" + hash + "/remediation/stop");
  expect({"bans"}, "GET", "/api/bans");
  expect({"ban", "-XX0001-", "fake", "completions"}, "POST", "/api/bans",
         {{"prefix", "-XX0001-"}, {"reason", "fake completions"}});
  expect({"unban", "-X/ %"}, "DELETE", "/api/bans/-X%2F%20%25");
  expect({"access"}, "GET", "/api/access");
  expect({"allow", hash}, "POST", "/api/access/" + hash + "/allow");
  expect({"deny", hash}, "POST", "/api/access/" + hash + "/deny");
  expect({"reload"}, "POST", "/api/access/reload");
  expect({"metrics"}, "GET", "/metrics");
}

TEST(BuildRequest, ClientSideChecks) {
  const std::vector<std::vector<std::string>> bad{
      {"nosuch"},
      {"swarm"},
      {"swarm", "abc"},
      {"swarm", hash, "extra"},
      {"restart", hash + "0"},
      {"policy", hash},
      {"policy", "xyz", "random"},
      {"remediate", hash, "pause"},
      {"ban", "-XX"},
      {"ban", "", "reason"},
      {"allow", "zz"},
      {"swarms", "--health=sick"},
      {"swarms", "--unhealthy", "--health=healthy"},
      {"swarms", "--sort=name"},
      {"swarms", "--limit=-1"},
      {"swarms", "--limit"},
      {"swarms", "--limit="},
      {"swarms", "--unhealthy=yes"},
      {"swarms", "--bogus"},
      {"node", "--unhealthy"},
      {"events", "x"},
  };
  for (const auto& words : bad) {
    std::string line;
    for (const auto& w : words) line += w + " ";
    EXPECT_THROW(req(words), usage_error) << line;
  }
}

TEST(RunInvocation, UsageErrorsExitTwoWithoutConnecting) {
  std::ostringstream out, err;
  session s{out, err};
  // No URL and no token anywhere: a request would fail with a usage error
  // about the URL. A bad hash must be reported first, before resolution.
  s.env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  EXPECT_EQ(run_invocation(parse_words({"swarm", "nothex"}), s), exit_usage);
  EXPECT_NE(err.str().find("'nothex' is not an info_hash"), std::string::npos) << err.str();
  err.str("");
  // Too short to be a prefix (fewer than 4 digits): refused before connecting.
  EXPECT_EQ(run_invocation(parse_words({"swarm", "abc"}), s), exit_usage);
  EXPECT_NE(err.str().find("or a unique prefix of 4 or more"), std::string::npos) << err.str();
  err.str("");
  // A prefix needs the daemon: without a URL that is the error.
  EXPECT_EQ(run_invocation(parse_words({"restart", "abcd"}), s), exit_usage);
  EXPECT_NE(err.str().find("no admin URL"), std::string::npos) << err.str();
  err.str("");
  EXPECT_EQ(run_invocation(parse_words({"node"}), s), exit_usage);
  EXPECT_NE(err.str().find("no admin URL"), std::string::npos) << err.str();
  err.str("");
  EXPECT_EQ(run_invocation(parse_words({"frobnicate"}), s), exit_usage);
  EXPECT_NE(err.str().find("unknown command 'frobnicate'"), std::string::npos);
  err.str("");
  EXPECT_EQ(run_invocation(parse_words({"exit"}), s), exit_usage);
  EXPECT_TRUE(out.str().empty());
}

TEST(RunInvocation, HelpNeedsNoDaemon) {
  std::ostringstream out, err;
  session s{out, err};
  EXPECT_EQ(run_invocation(parse_words({"help"}), s), exit_ok);
  for (const auto& c : command_table()) EXPECT_NE(out.str().find("  " + c.name), std::string::npos) << c.name;
  EXPECT_NE(out.str().find("exit codes"), std::string::npos);
  out.str("");
  EXPECT_EQ(run_invocation(parse_words({"help", "swarms"}), s), exit_ok);
  EXPECT_NE(out.str().find("--unhealthy"), std::string::npos);
  out.str("");
  EXPECT_EQ(run_invocation(parse_words({"swarm", "--help"}), s), exit_ok);
  EXPECT_NE(out.str().find("usage: swarmctl swarm <hash>"), std::string::npos) << out.str();
  EXPECT_EQ(run_invocation(parse_words({"help", "nosuch"}), s), exit_usage);
}

TEST(HelpText, ProseWrapsTablesElideAtTheWidth) {
  for (std::size_t width : {0u, 80u, 50u}) {
    const std::string text = help_text("shell", width);
    std::istringstream is(text);
    std::string joined;
    for (std::string line; std::getline(is, line);) {
      EXPECT_LE(line.size(), width == 0 ? 80u : width) << width << ": " << line;
      joined += line + " ";
    }
    // Wrapped, not cut: every word of the details is still there.
    EXPECT_NE(joined.find("blank lines and lines starting with # are skipped; end of input "
                          "leaves."),
              std::string::npos)
        << text;
  }
  std::istringstream all(help_text({}, 80));
  for (std::string line; std::getline(all, line);) {
    std::size_t columns = 0;
    for (unsigned char c : line) columns += (c & 0xC0) != 0x80 ? 1 : 0;
    EXPECT_LE(columns, 80u) << line;
  }
}

TEST(CommandTable, NamesAreUniqueAndRowsAreComplete) {
  std::set<std::string> names;
  for (const auto& c : command_table()) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_FALSE(c.summary.empty()) << c.name;
    EXPECT_LE(c.min_args, c.max_args) << c.name;
    if (c.request && !c.raw_text) {
      EXPECT_TRUE(static_cast<bool>(c.render)) << c.name;
    }
    if (c.max_args > 0) {
      EXPECT_FALSE(c.kinds.empty()) << c.name;
    }
  }
}

// -- completion ---------------------------------------------------------------------

TEST(Completions, CommandNamesHashesPoliciesFlags) {
  const std::set<std::string> seen{hash, "fedcba9876543210fedcba9876543210fedcba98"};
  EXPECT_EQ(completions("", "sw", seen), (std::vector<std::string>{"swarm", "swarms"}));
  EXPECT_EQ(completions("", "re", seen),
            (std::vector<std::string>{"reload", "remediate", "remediations", "restart"}));
  EXPECT_EQ(completions("swarm ", "", seen),
            (std::vector<std::string>{hash, "fedcba9876543210fedcba9876543210fedcba98"}));
  EXPECT_EQ(completions("restart ", "fed", seen),
            (std::vector<std::string>{"fedcba9876543210fedcba9876543210fedcba98"}));
  EXPECT_EQ(completions("policy " + hash + " ", "role", seen),
            (std::vector<std::string>{"role-aware"}));
  EXPECT_EQ(completions("remediate " + hash + " ", "st", seen),
            (std::vector<std::string>{"start", "stop"}));
  EXPECT_EQ(completions("help ", "ev", seen), (std::vector<std::string>{"events"}));
  EXPECT_EQ(completions("swarms ", "--so", seen), (std::vector<std::string>{"--sort="}));
  EXPECT_EQ(completions("swarms ", "--sort=r", seen), (std::vector<std::string>{"--sort=rate"}));
  EXPECT_EQ(completions("swarms --limit=3 ", "--u", seen),
            (std::vector<std::string>{"--unhealthy"}));
  EXPECT_EQ(completions("", "--j", seen), (std::vector<std::string>{"--json"}));
  // No argument slot left, free text, unknown command, open quote: nothing.
  EXPECT_TRUE(completions("swarm " + hash + " ", "", seen).empty());
  EXPECT_TRUE(completions("ban ", "", seen).empty());
  EXPECT_TRUE(completions("nosuch ", "", seen).empty());
  EXPECT_TRUE(completions("ban \"open ", "", seen).empty());
}

TEST(Completions, HashesLearnedFromAnswers) {
  // What run_invocation stores from answers is what completion offers; the
  // collection itself is tested in format_test (collect_hashes).
  std::ostringstream out, err;
  session s{out, err};
  s.seen_hashes.insert(hash);
  EXPECT_EQ(completions("swarm ", "01", s.seen_hashes), (std::vector<std::string>{hash}));
}

TEST(Completions, HashesAreAskedOnlyForAHashArgument) {
  std::vector<std::string> asked;
  const hash_source source = [&](std::string_view word) {
    asked.emplace_back(word);
    return std::set<std::string>{hash, "fedcba9876543210fedcba9876543210fedcba98"};
  };
  EXPECT_EQ(completions("swarm ", "0123", source), (std::vector<std::string>{hash}));
  EXPECT_EQ(completions("policy ", "fed", source),
            (std::vector<std::string>{"fedcba9876543210fedcba9876543210fedcba98"}));
  EXPECT_EQ(asked, (std::vector<std::string>{"0123", "fed"}));
  // Command names, policies, flags: the daemon is not asked.
  completions("", "sw", source);
  completions("policy " + hash + " ", "ro", source);
  completions("swarms ", "--so", source);
  completions("ban ", "", source);
  EXPECT_EQ(asked.size(), 2u);
}

TEST(Completions, WithoutADaemonOnlyTheSeenHashes) {
  std::ostringstream out, err;
  session s{out, err};
  s.env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  s.seen_hashes.insert(hash);
  EXPECT_EQ(hashes_for_completion(s, "01"), (std::set<std::string>{hash}));
  EXPECT_TRUE(err.str().empty()) << err.str();
}

TEST(Prompt, NodeNameElseHostPort) {
  EXPECT_EQ(prompt_text("tracker-eu-1", "127.0.0.1:8081"), "swarmctl@tracker-eu-1> ");
  EXPECT_EQ(prompt_text("", "[::1]:8081"), "swarmctl@[::1]:8081> ");
  EXPECT_EQ(prompt_text("", ""), "swarmctl> ");
  // A daemon's name cannot send escape sequences to the terminal.
  EXPECT_EQ(prompt_text("evil\x1b[2J", ""), "swarmctl@evil?[2J> ");
  EXPECT_EQ(prompt_text(std::string(100, 'n'), "").size(),
            std::string("swarmctl@> ").size() + 39 + std::string("\xE2\x80\xA6").size());
}

TEST(ShellPiped, RunsLinesSkipsCommentsReportsLastFailureAndStopsAtExit) {
  std::ostringstream out, err;
  session s{out, err};
  s.env = [](const char*) -> std::optional<std::string> { return std::nullopt; };
  std::istringstream in(
      "# a comment\n"
      "\n"
      "help events\n"
      "swarm nothex\n"
      "help restart\r\n"
      "ban \"unterminated\n"
      "node --url=http://x:1\n"
      "exit\n"
      "help swarms\n");
  EXPECT_EQ(run_shell(s, in, false), exit_usage);
  EXPECT_NE(out.str().find("usage: swarmctl events"), std::string::npos);
  EXPECT_NE(out.str().find("usage: swarmctl restart"), std::string::npos);
  EXPECT_EQ(out.str().find("usage: swarmctl swarms"), std::string::npos) << "ran past exit";
  EXPECT_NE(err.str().find("not an info_hash"), std::string::npos);
  EXPECT_NE(err.str().find("unterminated"), std::string::npos);
  EXPECT_NE(err.str().find("only be given when swarmctl starts"), std::string::npos);

  std::ostringstream out2, err2;
  session ok{out2, err2};
  std::istringstream good("help\nhelp node\n");
  EXPECT_EQ(run_shell(ok, good, false), exit_ok);
  EXPECT_TRUE(err2.str().empty()) << err2.str();
}

TEST(HistoryFile, EnvironmentHomeOrNone) {
  auto env_of = [](std::map<std::string, std::string> m) {
    return [m](const char* n) -> std::optional<std::string> {
      auto it = m.find(n);
      if (it == m.end()) return std::nullopt;
      return it->second;
    };
  };
  EXPECT_EQ(history_file(env_of({{"HOME", "/home/u"}})), "/home/u/.swarmctl_history");
  EXPECT_EQ(history_file(env_of({{"HOME", "/home/u"}, {"SWARMCTL_HISTORY", "/tmp/h"}})), "/tmp/h");
  EXPECT_FALSE(history_file(env_of({{"HOME", "/home/u"}, {"SWARMCTL_HISTORY", ""}})));
  EXPECT_FALSE(history_file(env_of({})));
}

}  // namespace
}  // namespace sk::swarmctl
