// swarmctl's argument parsing, connection resolution, URL parsing, shell
// line splitting and hash checks: pure functions, no daemon.

#include <map>

#include <gtest/gtest.h>

#include "app/swarmctl/client.hpp"
#include "app/swarmctl/options.hpp"

namespace sk::swarmctl {
namespace {

using namespace std::chrono_literals;

const std::string hash40 = "0123456789abcdef0123456789ABCDEF01234567";

TEST(ParseWords, CommandArgumentsAndGlobalOptionsAnywhere) {
  auto inv = parse_words({"--json", "swarm", hash40, "--url", "http://h:1", "--timeout=2.5"});
  EXPECT_EQ(inv.command, "swarm");
  ASSERT_EQ(inv.args.size(), 1u);
  EXPECT_EQ(inv.args[0], hash40);
  EXPECT_TRUE(inv.global.json);
  EXPECT_EQ(inv.global.url, "http://h:1");
  EXPECT_EQ(inv.global.timeout, 2500ms);
  EXPECT_TRUE(inv.flags.empty());
}

TEST(ParseWords, CommandFlagsKeepWhetherAValueWasGiven) {
  auto inv = parse_words({"swarms", "--unhealthy", "--limit=5", "--sort="});
  EXPECT_EQ(inv.command, "swarms");
  ASSERT_EQ(inv.flags.count("unhealthy"), 1u);
  EXPECT_FALSE(inv.flags["unhealthy"].has_value());
  EXPECT_EQ(inv.flags["limit"], "5");
  EXPECT_EQ(inv.flags["sort"], "");
}

TEST(ParseWords, SingleDashWordsAreArgumentsAndDoubleDashEndsOptions) {
  auto inv = parse_words({"ban", "-XX0001-", "fakes", "--", "--completions", "x"});
  EXPECT_EQ(inv.command, "ban");
  EXPECT_EQ(inv.args, (std::vector<std::string>{"-XX0001-", "fakes", "--completions", "x"}));
  EXPECT_TRUE(inv.flags.empty());
}

TEST(ParseWords, Errors) {
  EXPECT_THROW(parse_words({"node", "--url"}), usage_error);
  EXPECT_THROW(parse_words({"node", "--timeout=0"}), usage_error);
  EXPECT_THROW(parse_words({"node", "--timeout=abc"}), usage_error);
  EXPECT_THROW(parse_words({"node", "--json=1"}), usage_error);
  EXPECT_THROW(parse_words({"swarms", "--limit=1", "--limit=2"}), usage_error);
  EXPECT_THROW(parse_words({"node", "--=x"}), usage_error);
}

TEST(ParseWords, ShellLinesMayNotChangeTheConnection) {
  EXPECT_THROW(parse_words({"node", "--url=http://x:1"}, false), usage_error);
  EXPECT_THROW(parse_words({"node", "--token=abc"}, false), usage_error);
  EXPECT_THROW(parse_words({"node", "--token-file=f"}, false), usage_error);
  EXPECT_TRUE(parse_words({"node", "--json"}, false).global.json);
}

TEST(ParseTimeout, SecondsToMilliseconds) {
  EXPECT_EQ(parse_timeout("10"), 10000ms);
  EXPECT_EQ(parse_timeout("0.25"), 250ms);
  EXPECT_EQ(parse_timeout("3600"), 3600000ms);
  EXPECT_FALSE(parse_timeout("3601"));
  EXPECT_FALSE(parse_timeout("0"));
  EXPECT_FALSE(parse_timeout("0.0001"));
  EXPECT_FALSE(parse_timeout("-1"));
  EXPECT_FALSE(parse_timeout("1e3"));
  EXPECT_FALSE(parse_timeout(""));
  EXPECT_FALSE(parse_timeout("1.2.3"));
}

TEST(ParseCount, NonNegativeIntegers) {
  EXPECT_EQ(parse_count("0"), 0u);
  EXPECT_EQ(parse_count("123"), 123u);
  EXPECT_FALSE(parse_count(""));
  EXPECT_FALSE(parse_count("-1"));
  EXPECT_FALSE(parse_count("1x"));
  EXPECT_FALSE(parse_count("1234567890"));
}

// -- connection -------------------------------------------------------------------

struct fake_world {
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> files;
  env_lookup env_fn() const {
    return [this](const char* n) -> std::optional<std::string> {
      auto it = env.find(n);
      if (it == env.end()) return std::nullopt;
      return it->second;
    };
  }
  file_reader file_fn() const {
    return [this](const std::string& p) -> std::optional<std::string> {
      auto it = files.find(p);
      if (it == files.end()) return std::nullopt;
      return it->second;
    };
  }
  connection resolve(const global_options& g) const { return resolve_connection(g, env_fn(), file_fn()); }
};

TEST(ResolveConnection, OptionsBeatEnvironment) {
  fake_world w;
  w.env = {{"SWARMCTL_URL", "http://10.0.0.1:7000"}, {"SWARMCTL_TOKEN", "env-token"}};
  w.files = {{"/t", "file-token\nsecond line\n"}};
  global_options g;
  auto c = w.resolve(g);
  EXPECT_EQ(c.url.host, "10.0.0.1");
  EXPECT_EQ(c.url.port, 7000);
  EXPECT_EQ(c.token, "env-token");
  EXPECT_EQ(c.timeout, 10000ms);

  g.url = "http://127.0.0.1:9000";
  g.token_file = "/t";
  c = w.resolve(g);
  EXPECT_EQ(c.url.port, 9000);
  EXPECT_EQ(c.token, "file-token");

  g.token = "option-token";
  g.timeout = 1500ms;
  c = w.resolve(g);
  EXPECT_EQ(c.token, "option-token");
  EXPECT_EQ(c.timeout, 1500ms);
}

TEST(ResolveConnection, TokenFileFromEnvironmentAndTrimming) {
  fake_world w;
  w.env = {{"SWARMCTL_URL", "http://h:1"}, {"SWARMCTL_TOKEN_FILE", "/tok"}};
  w.files = {{"/tok", "  spaced-token \r\n"}};
  EXPECT_EQ(w.resolve({}).token, "spaced-token");
  // SWARMCTL_TOKEN beats SWARMCTL_TOKEN_FILE.
  w.env["SWARMCTL_TOKEN"] = "direct";
  EXPECT_EQ(w.resolve({}).token, "direct");
}

TEST(ResolveConnection, MissingOrBadPiecesAreUsageErrorsNamingThem) {
  fake_world w;
  auto message = [&](const global_options& g) {
    try {
      w.resolve(g);
    } catch (const usage_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({}).find("no admin URL"), std::string::npos);
  w.env["SWARMCTL_URL"] = "ftp://x";
  EXPECT_NE(message({}).find("SWARMCTL_URL"), std::string::npos);
  w.env["SWARMCTL_URL"] = "http://x:1";
  EXPECT_NE(message({}).find("no admin token"), std::string::npos);
  global_options g;
  g.token_file = "/missing";
  EXPECT_NE(message(g).find("cannot read '/missing'"), std::string::npos);
  w.files["/empty"] = "\n\n";
  g.token_file = "/empty";
  EXPECT_NE(message(g).find("no token"), std::string::npos);
  g.token_file.reset();
  g.token = "";
  EXPECT_NE(message(g).find("--token is empty"), std::string::npos);
}

TEST(ResolveConnection, NoDefaultUrlBecauseTheAdminPortHasNone) {
  // app/config.cpp: admin.port defaults to 0 (no admin server).
  EXPECT_FALSE(default_admin_url().has_value());
}

// -- URL --------------------------------------------------------------------------

TEST(ParseAdminUrl, HostsPortsAndBasePaths) {
  std::string err;
  auto u = parse_admin_url("http://127.0.0.1:8081", err);
  ASSERT_TRUE(u) << err;
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8081);
  EXPECT_EQ(u->base_path, "");
  EXPECT_EQ(u->text(), "http://127.0.0.1:8081");

  u = parse_admin_url("HTTP://localhost", err);
  ASSERT_TRUE(u) << err;
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->port, 80);

  u = parse_admin_url("http://[::1]:9000/sk/", err);
  ASSERT_TRUE(u) << err;
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9000);
  EXPECT_EQ(u->base_path, "/sk");
  EXPECT_EQ(u->text(), "http://[::1]:9000/sk");
}

TEST(ParseAdminUrl, RefusesWhatItCannotUse) {
  for (const char* bad :
       {"127.0.0.1:8081", "ftp://h", "http://", "https://", "http://:80", "http://h:",
        "http://h:0", "http://h:65536", "http://h:12a", "http://[::1", "http://[::1]x",
        "http://u:p@h:1", "http://h:1/?x=1", "http://h:1#f"}) {
    std::string err;
    EXPECT_FALSE(parse_admin_url(bad, err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
  std::string err;
  parse_admin_url("ftp://h:1", err);
  EXPECT_NE(err.find("expected http://HOST:PORT or https://HOST:PORT"), std::string::npos) << err;
}

TEST(ParseAdminUrl, HttpsWithItsDefaultPort) {
  std::string err;
  auto u = parse_admin_url("HTTPS://proxy.example/sk", err);
  ASSERT_TRUE(u) << err;
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->text(), "https://proxy.example:443/sk");
  EXPECT_EQ(u->authority(), "proxy.example:443");
  u = parse_admin_url("https://[::1]:8443", err);
  ASSERT_TRUE(u) << err;
  EXPECT_EQ(u->port, 8443);
  EXPECT_EQ(u->authority(), "[::1]:8443");
  u = parse_admin_url("http://h", err);
  ASSERT_TRUE(u) << err;
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->port, 80);
}

TEST(ParseWords, TlsAndOutputOptions) {
  auto inv = parse_words({"--ca-file", "/ca.pem", "--insecure", "swarms", "--raw"});
  EXPECT_EQ(inv.global.ca_file, "/ca.pem");
  EXPECT_TRUE(inv.global.insecure);
  EXPECT_TRUE(inv.global.raw);
  EXPECT_TRUE(inv.flags.empty());
  EXPECT_THROW(parse_words({"--insecure=yes", "node"}), usage_error);
  EXPECT_THROW(parse_words({"--ca-file=", "node"}), usage_error);
  // The shell may not change how the connection is trusted.
  EXPECT_THROW(parse_words({"node", "--insecure"}, false), usage_error);
  EXPECT_THROW(parse_words({"node", "--ca-file=/x"}, false), usage_error);
  EXPECT_TRUE(parse_words({"node", "--raw"}, false).global.raw);
}

TEST(ResolveConnection, CaFileAndInsecureForHttpsOnly) {
  fake_world w;
  w.env = {{"SWARMCTL_URL", "https://127.0.0.1:8443"}, {"SWARMCTL_TOKEN", "t"}};
  w.files = {{"/ca.pem", "-----BEGIN CERTIFICATE-----\n"}};
  global_options g;
  auto c = w.resolve(g);
  EXPECT_TRUE(c.url.tls);
  EXPECT_EQ(c.transfer.ca_file, "");
  EXPECT_FALSE(c.transfer.insecure);
  w.env["SWARMCTL_CA_FILE"] = "/ca.pem";
  EXPECT_EQ(w.resolve(g).transfer.ca_file, "/ca.pem");
  g.ca_file = "/missing.pem";
  try {
    w.resolve(g);
    FAIL() << "no error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("--ca-file: cannot read '/missing.pem'"),
              std::string::npos)
        << e.what();
  }
  g.ca_file.reset();
  g.insecure = true;
  EXPECT_TRUE(w.resolve(g).transfer.insecure);
  // With http they would mean nothing: refused rather than ignored.
  g.url = "http://127.0.0.1:8081";
  EXPECT_THROW(w.resolve(g), usage_error);
  g.insecure = false;
  g.ca_file = "/ca.pem";
  EXPECT_THROW(w.resolve(g), usage_error);
  // SWARMCTL_CA_FILE set for other (https) daemons does not break http.
  g.ca_file.reset();
  EXPECT_EQ(w.resolve(g).transfer.ca_file, "");
}

TEST(PercentEncode, KeepsUnreservedOnly) {
  EXPECT_EQ(percent_encode("-XX0001-"), "-XX0001-");
  EXPECT_EQ(percent_encode("a/b c%"), "a%2Fb%20c%25");
  EXPECT_EQ(percent_encode(std::string("\xff\x00", 2)), "%FF%00");
}

// -- shell lines and hashes ------------------------------------------------------------

TEST(SplitLine, BlanksQuotesAndEscapes) {
  EXPECT_EQ(split_line("  swarms   --limit=3 "), (std::vector<std::string>{"swarms", "--limit=3"}));
  EXPECT_EQ(split_line("ban -XX \"two words\" 'it''s' a\\ b"),
            (std::vector<std::string>{"ban", "-XX", "two words", "its", "a b"}));
  EXPECT_EQ(split_line("x ''"), (std::vector<std::string>{"x", ""}));
  EXPECT_EQ(split_line("'a\\b'"), (std::vector<std::string>{"a\\b"}));
  EXPECT_TRUE(split_line("   ").empty());
  EXPECT_THROW(split_line("ban \"open"), usage_error);
  EXPECT_THROW(split_line("ban 'open"), usage_error);
  EXPECT_THROW(split_line("ban x\\"), usage_error);
}

TEST(Hashes, FortyHexDigitsLowerCased) {
  EXPECT_TRUE(is_info_hash(hash40));
  EXPECT_EQ(checked_hash(hash40), "0123456789abcdef0123456789abcdef01234567");
  EXPECT_FALSE(is_info_hash(hash40.substr(1)));
  EXPECT_FALSE(is_info_hash(hash40 + "0"));
  EXPECT_FALSE(is_info_hash("g123456789abcdef0123456789abcdef01234567"));
  EXPECT_TRUE(is_hash_prefix("0123"));
  EXPECT_TRUE(is_hash_prefix("ABCDEF0"));
  EXPECT_TRUE(is_hash_prefix(hash40.substr(1)));
  EXPECT_FALSE(is_hash_prefix("012"));
  EXPECT_FALSE(is_hash_prefix(hash40));
  EXPECT_FALSE(is_hash_prefix("012g"));
  EXPECT_FALSE(is_hash_prefix(""));
  try {
    checked_hash("xyz");
    FAIL() << "no error";
  } catch (const usage_error& e) {
    EXPECT_NE(std::string(e.what()).find("'xyz' is not an info_hash"), std::string::npos);
  }
}

}  // namespace
}  // namespace sk::swarmctl
