// The config schema and load_config (app/config.hpp) without the daemon:
// defaults, every range bound, types, unknown keys, shortcuts, precedence,
// the dump round trip, secrets, and the texts generated from the schema
// (--help, --long-help, --version, the shipped sample file, the README's
// option table).

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/config.hpp"
#include "config_test_support.hpp"

namespace sk {
namespace {

using config::option_def;
using config::value_type;

/// A value as redacted_config shows it (strings unquoted, secrets hidden).
std::string shown_text(const option_def& o, const caf::config_value& v) {
  if (o.secret) return cli_text(v).empty() ? "" : "<redacted>";
  return cli_text(v);
}

/// True when `err` says the value of `key` is out of range or of the wrong
/// type (the messages of the schema's checks and of CAF's parser).
bool refuses(const std::string& err, const std::string& key) {
  return err.find(key + " must be ") != std::string::npos ||
         err.find(key + ": expected ") != std::string::npos ||
         err.find(key + ": '") != std::string::npos ||
         err.find("invalid value in '--" + key + "=") != std::string::npos;
}

/// The effective value of `o` after a load is `v`. scheduler.max-threads=0
/// is the exception: it becomes CAF's default count when the daemon may run.
void expect_effective(const loaded& r, const option_def& o, const caf::config_value& v) {
  if (o.caf_owned && r.action == load_action::run && cli_text(v) == "0") {
    EXPECT_GT(std::stoll(r.value(o.key())), 0);
    return;
  }
  EXPECT_EQ(r.value(o.key()), shown_text(o, v));
}

struct bound_case {
  caf::config_value value;
  bool accepted;
};

/// The bounds of an option's range (accepted) and the values just outside
/// them (refused); nothing for options without a range.
std::vector<bound_case> bound_cases(const option_def& o) {
  std::vector<bound_case> out;
  if (auto r = std::get_if<config::integer_range>(&o.range)) {
    out.push_back({caf::config_value{r->lo}, true});
    out.push_back({caf::config_value{r->hi}, true});
    if (r->extra) out.push_back({caf::config_value{*r->extra}, true});
    if (r->lo > std::numeric_limits<std::int64_t>::min() && r->lo - 1 != r->extra)
      out.push_back({caf::config_value{r->lo - 1}, false});
    if (r->hi < std::numeric_limits<std::int64_t>::max() && r->hi + 1 != r->extra)
      out.push_back({caf::config_value{r->hi + 1}, false});
  } else if (auto r = std::get_if<config::duration_range>(&o.range)) {
    const caf::timespan ns{1};
    out.push_back({caf::config_value{r->lo}, true});
    out.push_back({caf::config_value{r->hi}, true});
    if (r->extra) out.push_back({caf::config_value{*r->extra}, true});
    if (r->lo.count() > 0 && r->lo - ns != r->extra)
      out.push_back({caf::config_value{r->lo - ns}, false});
    out.push_back({caf::config_value{r->hi + ns}, false});
  } else if (auto r = std::get_if<config::real_range>(&o.range)) {
    const auto step = [](double x) { return std::max(1e-6, std::fabs(x) * 1e-6); };
    out.push_back({caf::config_value{r->lo}, true});
    out.push_back({caf::config_value{r->hi}, true});
    out.push_back({caf::config_value{r->lo - step(r->lo)}, false});
    out.push_back({caf::config_value{r->hi + step(r->hi)}, false});
  } else if (auto c = std::get_if<config::choice_set>(&o.range)) {
    for (const auto& name : c->names) out.push_back({caf::config_value{name}, true});
    out.push_back({caf::config_value{std::string("no-such-choice")}, false});
  }
  return out;
}

// -- the schema itself --------------------------------------------------------------

TEST(ConfigSchema, EveryOptionIsDeclaredOnceWithADocAndAKnownSection) {
  std::set<std::string> keys;
  std::set<std::string> sections;
  for (const auto& s : config::sections()) {
    EXPECT_TRUE(sections.insert(s.name).second) << s.name;
    EXPECT_STRNE(s.title, "");
    EXPECT_STRNE(s.configures, "");
  }
  for (const auto& o : config::options()) {
    EXPECT_TRUE(keys.insert(o.key()).second) << "declared twice: " << o.key();
    EXPECT_EQ(sections.count(o.section), 1u) << o.key();
    const std::string doc = o.doc;
    EXPECT_FALSE(doc.empty()) << o.key();
    EXPECT_EQ(doc.find('\n'), std::string::npos) << "one line: " << o.key();
    EXPECT_EQ(config::find_option(o.key()), &o);
  }
  EXPECT_EQ(config::find_option("http.nope"), nullptr);
  EXPECT_EQ(config::find_option("http"), nullptr);
  EXPECT_EQ(config::find_option("scheduler.policy"), nullptr);
  // Options of one section are adjacent (each section is printed once).
  std::string previous;
  std::set<std::string> closed;
  for (const auto& o : config::options()) {
    if (o.section != previous) {
      EXPECT_TRUE(closed.insert(o.section).second) << "section split: " << o.section;
      previous = o.section;
    }
  }
}

TEST(ConfigSchema, EveryDefaultHasItsTypeAndLiesInItsRange) {
  for (const auto& o : config::options()) {
    EXPECT_EQ(config::check_value(o, o.fallback), std::nullopt) << o.key();
  }
}

TEST(ConfigSchema, EveryShortcutNamesAnOption) {
  for (const auto& a : config::aliases()) {
    const auto* o = config::find_option(a.target);
    ASSERT_NE(o, nullptr) << a.name;
    if (a.negate) {
      EXPECT_EQ(o->type, value_type::boolean) << a.name;
    }
    EXPECT_EQ(config::find_alias(a.name), &a);
    EXPECT_EQ(config::find_option(a.name), nullptr) << "shortcut shadows an option: " << a.name;
  }
}

TEST(ConfigSchema, CheckValueNamesTheOptionAndNeverShowsASecret) {
  const auto* port = config::find_option("http.port");
  ASSERT_NE(port, nullptr);
  EXPECT_EQ(config::check_value(*port, caf::config_value{std::int64_t{0}}),
            "http.port must be between 1 and 65535 (got 0)");
  EXPECT_EQ(config::check_value(*port, caf::config_value{std::string("x")}),
            "http.port: expected an integer, got \"x\"");
  const auto* retry = config::find_option("clients.banned-retry-in");
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(config::check_value(*retry, caf::config_value{std::int64_t{0}}),
            "clients.banned-retry-in must be -1 or between 1 and 10080 (got 0)");
  const auto* key = config::find_option("udp.connection-id-key");
  ASSERT_NE(key, nullptr);
  ASSERT_TRUE(key->secret);
  const auto msg = config::check_value(*key, caf::config_value{std::int64_t{987654321}});
  ASSERT_TRUE(msg.has_value());
  EXPECT_NE(msg->find("udp.connection-id-key"), std::string::npos);
  EXPECT_EQ(msg->find("987654321"), std::string::npos) << *msg;
}

// -- loading ----------------------------------------------------------------------

TEST(ConfigLoad, DefaultsLoad) {
  const auto r = load({});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "");
  const auto& s = r.settings;
  EXPECT_EQ(s.http.port, 6969);
  EXPECT_TRUE(s.http.bind_addresses.empty());
  EXPECT_GE(s.http.io_threads, 1u);
  EXPECT_EQ(s.http.max_pipeline, 16u);
  EXPECT_EQ(s.gateway.request_timeout, std::chrono::milliseconds{5000});
  EXPECT_TRUE(s.udp_enabled);
  EXPECT_EQ(s.udp.port, 6969);
  EXPECT_EQ(s.udp.workers, 1u);
  EXPECT_EQ(s.swarm.announce_interval, std::chrono::seconds{1800});
  EXPECT_EQ(s.swarm.min_interval, std::chrono::seconds{900});
  EXPECT_EQ(s.swarm.default_policy, policy_kind::adaptive);
  EXPECT_EQ(s.swarm.banned_retry_in_minutes, -1);
  EXPECT_FALSE(s.probe_enabled);
  EXPECT_FALSE(s.admin_enabled);
  EXPECT_EQ(s.admin.bind, "127.0.0.1");
  EXPECT_FALSE(s.cluster.enabled());
  EXPECT_EQ(s.lists.mode, access_mode::off);
  EXPECT_EQ(s.lists.access.size(), 0u);
  EXPECT_EQ(s.lists.bans.size(), 0u);
  EXPECT_EQ(s.admin.access, nullptr) << "live state is node_lists', not a setting";
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.log_level, "info");
  EXPECT_EQ(s.drain_timeout, std::chrono::milliseconds{10000});
  // scheduler.max-threads=0 hands CAF a real thread count.
  EXPECT_GT(caf::get_or(r.cfg->content, "scheduler.max-threads", std::int64_t{0}), 0);
  // Every option's effective value is its default.
  for (const auto& o : config::options()) {
    if (o.caf_owned) continue;
    EXPECT_EQ(r.value(o.key()), shown_text(o, o.fallback)) << o.key();
  }
}

TEST(ConfigLoad, EveryRangeBoundIsAcceptedAndJustOutsideRefusedOnTheCommandLine) {
  int checked = 0;
  for (const auto& o : config::options()) {
    for (const auto& c : bound_cases(o)) {
      const auto arg = "--" + o.key() + "=" + cli_text(c.value);
      SCOPED_TRACE(arg);
      const auto r = load({arg});
      if (c.accepted) {
        // Rules between options (validate()) may still object; the range
        // check must not.
        EXPECT_FALSE(refuses(r.err, o.key())) << r.err;
        expect_effective(r, o, c.value);
      } else {
        EXPECT_EQ(r.action, load_action::exit_error);
        EXPECT_TRUE(refuses(r.err, o.key())) << r.err;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
}

TEST(ConfigLoad, EveryRangeBoundIsAcceptedAndJustOutsideRefusedInTheFile) {
  for (const auto& o : config::options()) {
    for (const auto& c : bound_cases(o)) {
      const auto line = std::string(o.name) + "=" + config::format_value(c.value);
      SCOPED_TRACE(o.key() + ": " + line);
      const auto r = load_file("[" + std::string(o.section) + "]\n" + line + "\n");
      if (c.accepted) {
        EXPECT_FALSE(refuses(r.err, o.key())) << r.err;
        expect_effective(r, o, c.value);
      } else {
        EXPECT_EQ(r.action, load_action::exit_error);
        EXPECT_TRUE(refuses(r.err, o.key())) << r.err;
      }
    }
  }
}

TEST(ConfigLoad, AcceptedValuesReachTheSettings) {
  const auto r = load({"--http.port=1", "--http.max-pipeline=1024", "--tracker.interval=100h",
                       "--tracker.min-interval=1s", "--tracker.peer-timeout=168h",
                       "--clients.banned-retry-in=10080", "--allocation.policy=random",
                       "--health.min-seeder-ratio=1000.0", "--cluster.rebalance-period=0s",
                       "--access.mode=deny", "--log.level=off", "--scheduler.max-threads=3"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.settings.http.port, 1);
  EXPECT_EQ(r.settings.http.max_pipeline, 1024u);
  EXPECT_EQ(r.settings.swarm.announce_interval, std::chrono::hours{100});
  EXPECT_EQ(r.settings.swarm.peer_timeout, std::chrono::hours{168});
  EXPECT_EQ(r.settings.swarm.min_interval, std::chrono::seconds{1});
  EXPECT_EQ(r.settings.swarm.banned_retry_in_minutes, 10080);
  EXPECT_EQ(r.settings.swarm.default_policy, policy_kind::random);
  EXPECT_DOUBLE_EQ(r.settings.swarm.health.min_seeder_ratio, 1000.0);
  EXPECT_EQ(r.settings.cluster.rebalance_period, std::chrono::milliseconds{0});
  EXPECT_EQ(r.settings.lists.mode, access_mode::deny);
  EXPECT_EQ(r.settings.log_level, "off");
  EXPECT_EQ(caf::get_or(r.cfg->content, "scheduler.max-threads", std::int64_t{0}), 3);
}

/// A value of another type than the option's, as the file writes it.
std::string wrong_type_text(value_type t) {
  switch (t) {
    case value_type::integer:
    case value_type::real:
      return "\"987654321\"";
    case value_type::boolean:
    case value_type::string:
    case value_type::string_list:
    case value_type::duration:
      return "987654321";
  }
  return {};
}

TEST(ConfigLoad, WrongTypesInTheFileAreRefusedNamingTheOption) {
  for (const auto& o : config::options()) {
    const auto line = std::string(o.name) + "=" + wrong_type_text(o.type);
    SCOPED_TRACE(o.key() + ": " + line);
    const auto r = load_file("[" + std::string(o.section) + "]\n" + line + "\n");
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_NE(r.err.find(o.key() + ": expected " + config::expected_text(o.type)),
              std::string::npos)
        << r.err;
    if (o.secret) {
      EXPECT_EQ(r.err.find("987654321"), std::string::npos) << r.err;
    }
  }
}

TEST(ConfigLoad, WrongTypesOnTheCommandLineAreRefusedNamingTheOption) {
  for (const auto& o : config::options()) {
    std::string arg = "--" + o.key();
    switch (o.type) {
      case value_type::integer:
        arg += "=x";
        break;
      case value_type::duration:
        arg += "=1800";  // no unit
        break;
      case value_type::real:
        arg += "=abc";
        break;
      case value_type::boolean:
        arg += "=1";  // a switch takes no value
        break;
      case value_type::string:
      case value_type::string_list:
        continue;  // every word is a string
    }
    SCOPED_TRACE(arg);
    const auto r = load({arg});
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_NE(r.err.find("--" + o.key()), std::string::npos) << r.err;
    if (o.type == value_type::boolean) {
      EXPECT_NE(r.err.find("is a switch"), std::string::npos) << r.err;
    } else {
      EXPECT_NE(r.err.find("expected " + config::expected_text(o.type)), std::string::npos)
          << r.err;
    }
  }
}

TEST(ConfigLoad, UnknownKeysInTheFileAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[http]\nprot=1\n", "unknown option 'prot' in [http]"},
      {"[nosuch]\na=1\n", "unknown option 'a' in [nosuch]"},
      {"x=1\n", "unknown option 'x' outside any section"},
      // CAF's own options, which CAF itself would accept.
      {"[scheduler]\npolicy=\"stealing\"\n", "unknown option 'policy' in [scheduler]"},
      {"[middleman]\nworkers=2\n", "unknown option 'workers' in [middleman]"},
      {"[logger]\nfile-name=\"x.log\"\n", "unknown option 'file-name' in [logger]"},
      {"http-port=1\n",
       "'http-port' is a command-line shortcut; in a config file write 'port' in the [http] "
       "section"},
  };
  for (const auto& [file, message] : cases) {
    SCOPED_TRACE(file);
    const auto r = load_file(file);
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST(ConfigLoad, UnknownOptionsOnTheCommandLineAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--no-such-option=1", "unknown option '--no-such-option=1'"},
      {"--scheduler.policy=sharing", "unknown option '--scheduler.policy=sharing'"},
      {"--scheduler.max-throughput=5", "unknown option '--scheduler.max-throughput=5'"},
      {"--logger.file-name=x.log", "unknown option '--logger.file-name=x.log'"},
      {"--middleman.workers=2", "unknown option '--middleman.workers=2'"},
      {"--http", "unknown option '--http'"},
      {"-x", "unknown option '-x'"},
      {"stray", "unexpected argument 'stray'"},
  };
  for (const auto& [arg, message] : cases) {
    SCOPED_TRACE(arg);
    const auto r = load({arg});
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  // All problems at once, one per line.
  const auto r = load({"--nope=1", "stray", "--http.port=0"});
  EXPECT_EQ(r.action, load_action::exit_error);
  EXPECT_NE(r.err.find("unknown option '--nope=1'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unexpected argument 'stray'"), std::string::npos) << r.err;
}

TEST(ConfigLoad, AFileThatCannotBeReadOrParsedIsAnError) {
  auto r = load({"--config-file=/nonexistent/swarmkeeper.ini"});
  EXPECT_EQ(r.action, load_action::exit_error);
  EXPECT_NE(r.err.find("cannot open config file"), std::string::npos) << r.err;
  r = load({"--config-file="});
  EXPECT_EQ(r.action, load_action::exit_error);
  EXPECT_NE(r.err.find("--config-file needs a file"), std::string::npos) << r.err;
  r = load_file("[http]\nbind=::1\n");
  EXPECT_EQ(r.action, load_action::exit_error);
  EXPECT_NE(r.err.find("strings must be quoted"), std::string::npos) << r.err;
}

TEST(ConfigLoad, ShortcutsSetTheirOption) {
  for (const auto& a : config::aliases()) {
    const auto& o = *config::find_option(a.target);
    SCOPED_TRACE(a.name);
    if (a.negate) {
      const auto r = load({std::string("--") + a.name});
      EXPECT_EQ(r.value(a.target), "false");
      continue;
    }
    std::string value;
    if (o.type == value_type::integer)
      value = std::to_string(std::get<config::integer_range>(o.range).lo + 1);
    else if (auto c = std::get_if<config::choice_set>(&o.range))
      value = c->names.front();
    else
      value = "127.0.0.2";
    const auto r = load({std::string("--") + a.name + "=" + value});
    EXPECT_EQ(r.value(a.target), o.secret ? "<redacted>" : value) << r.err;
  }
  const auto r = load({"--http-port=7000", "--udp-port=7001", "--bind=127.0.0.1",
                       "--log-level=debug", "--no-udp", "--io-threads=3"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.settings.http.port, 7000);
  EXPECT_EQ(r.settings.udp.port, 7001);
  EXPECT_EQ(r.settings.http.bind_addresses, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(r.settings.log_level, "debug");
  EXPECT_FALSE(r.settings.udp_enabled);
  EXPECT_EQ(r.settings.http.io_threads, 3u);
  // A shortcut's value is checked like its option's.
  const auto bad = load({"--http-port=70000"});
  EXPECT_EQ(bad.action, load_action::exit_error);
  EXPECT_NE(bad.err.find("http.port must be between 1 and 65535 (got 70000)"), std::string::npos)
      << bad.err;
}

TEST(ConfigLoad, CommandLineBeatsFileBeatsDefaults) {
  const auto file = "[http]\nport=1111\nmax-pipeline=4\n[tracker]\ninterval=20min\n";
  const auto from_file = load_file(file);
  ASSERT_EQ(from_file.action, load_action::run) << from_file.err;
  EXPECT_EQ(from_file.settings.http.port, 1111);
  EXPECT_EQ(from_file.settings.http.max_pipeline, 4u);
  EXPECT_EQ(from_file.settings.swarm.announce_interval, std::chrono::minutes{20});
  EXPECT_EQ(from_file.settings.udp.port, 6969);  // not in the file: the default
  const auto both = load_file(file, {"--http-port=2222", "--tracker.interval=25min"});
  ASSERT_EQ(both.action, load_action::run) << both.err;
  EXPECT_EQ(both.settings.http.port, 2222);
  EXPECT_EQ(both.settings.http.max_pipeline, 4u);
  EXPECT_EQ(both.settings.swarm.announce_interval, std::chrono::minutes{25});
  // A command-line value repairs a bad file value only if the file value
  // has the right type: the type is checked where it is written.
  const auto repaired = load_file("[http]\nport=0\n", {"--http.port=3333"});
  ASSERT_EQ(repaired.action, load_action::run) << repaired.err;
  EXPECT_EQ(repaired.settings.http.port, 3333);
  const auto still_bad = load_file("[http]\nport=\"x\"\n", {"--http.port=3333"});
  EXPECT_EQ(still_bad.action, load_action::exit_error);
}

TEST(ConfigDump, LoadsBackToTheSameConfiguration) {
  const std::vector<std::string> args = {
      "--dump-config",
      "--http-port=7777",
      "--tracker.interval=20min",
      "--http.trusted-proxies=10.0.0.0/8",
      "--clients.banned-retry-in=5",
      "--clients.banned=-XX0001-=old client",
      "--health.min-seeder-ratio=0.3",
      "--no-udp",
      "--allocation.policy=random",
      "--log-level=debug",
      "--scheduler.max-threads=3",
      "--cluster.rebalance-period=0s",
      "--probe.timeout=1500ms",
      "--udp.connection-id-key=00112233445566778899aabbccddeeff"};
  const auto first = load(args);
  ASSERT_EQ(first.action, load_action::exit_ok) << first.err;
  const auto dump = first.out;
  // Every option, in its section, with its doc and range as comments.
  for (const auto& o : config::options()) {
    const auto at = dump.find("\n[" + std::string(o.section) + "]\n");
    ASSERT_NE(at, std::string::npos) << o.section;
    const auto section = dump.substr(at, dump.find("\n[", at + 1) - at);
    EXPECT_NE(section.find("\n" + std::string(o.name) + "="), std::string::npos) << o.key();
    // Comments are wrapped: compare with the line breaks taken out.
    std::string unwrapped = section;
    for (auto p = unwrapped.find("\n; "); p != std::string::npos; p = unwrapped.find("\n; ", p))
      unwrapped.replace(p, 3, " ");
    const auto range = config::describe_range(o);
    if (!range.empty()) {
      EXPECT_NE(unwrapped.find(range), std::string::npos) << o.key();
    }
  }
  EXPECT_NE(dump.find("\nport=7777\n"), std::string::npos);
  EXPECT_NE(dump.find("\ntrusted-proxies=[\"10.0.0.0/8\"]\n"), std::string::npos);
  EXPECT_NE(dump.find("\nrebalance-period=0s\n"), std::string::npos);
  EXPECT_NE(dump.find("\ntimeout=1500ms\n"), std::string::npos);
  EXPECT_EQ(dump.find("max-throughput"), std::string::npos) << "CAF internals are not options";

  const auto second = load_file(dump, {"--dump-config"});
  ASSERT_EQ(second.action, load_action::exit_ok) << second.err;
  EXPECT_EQ(second.out, dump);
  const auto a = load_file(dump);
  const auto b = load(std::vector<std::string>(args.begin() + 1, args.end()));
  ASSERT_EQ(a.action, load_action::run) << a.err;
  ASSERT_EQ(b.action, load_action::run) << b.err;
  EXPECT_EQ(redacted_config(*a.cfg), redacted_config(*b.cfg));
  EXPECT_EQ(a.settings.http.port, 7777);
  EXPECT_FALSE(a.settings.udp_enabled);
  EXPECT_EQ(a.settings.swarm.banned_retry_in_minutes, 5);
  EXPECT_EQ(a.settings.udp.connection_id_key, b.settings.udp.connection_id_key);
  EXPECT_EQ(a.settings.probe.timeout, std::chrono::milliseconds{1500});
}

TEST(ConfigDump, DefaultsDumpAsTheSchemaDefaults) {
  const auto r = load({"--dump-config"});
  ASSERT_EQ(r.action, load_action::exit_ok) << r.err;
  for (const auto& o : config::options()) {
    const auto line = "\n" + std::string(o.name) + "=" + config::format_value(o.fallback) + "\n";
    EXPECT_NE(r.out.find(line), std::string::npos) << o.key();
  }
}

// -- secrets ------------------------------------------------------------------------

TEST(ConfigSecrets, AreNeverEchoedInMessagesOrTheAdminView) {
  const std::string secret = "hunter2hunter2hunter2-XYZ";
  const auto bad_key = load({"--udp.connection-id-key=" + secret});
  EXPECT_EQ(bad_key.action, load_action::exit_error);
  EXPECT_NE(bad_key.err.find("udp.connection-id-key"), std::string::npos) << bad_key.err;
  EXPECT_EQ(bad_key.err.find(secret), std::string::npos) << bad_key.err;

  const auto short_token = load({"--admin-port=7000", "--admin-token=shortXYZ"});
  EXPECT_EQ(short_token.action, load_action::exit_error);
  EXPECT_NE(short_token.err.find("admin.token"), std::string::npos) << short_token.err;
  EXPECT_EQ(short_token.err.find("shortXYZ"), std::string::npos) << short_token.err;

  const auto in_file = load_file("[cluster]\nsecret=[\"" + secret + "\"]\n");
  EXPECT_EQ(in_file.action, load_action::exit_error);
  EXPECT_NE(in_file.err.find("cluster.secret: expected a quoted string"), std::string::npos)
      << in_file.err;
  EXPECT_EQ(in_file.err.find(secret), std::string::npos) << in_file.err;

  const auto ok = load({"--admin-port=7000", "--admin-token=" + secret,
                        "--cluster-secret=" + secret});
  for (const auto& [key, value] : redacted_config(*ok.cfg)) {
    EXPECT_EQ(value.find(secret), std::string::npos) << key;
    if (key == "admin.token" || key == "cluster.secret") {
      EXPECT_EQ(value, "<redacted>");
    }
  }
  for (const auto& o : config::options())
    if (o.secret) {
      EXPECT_EQ(ok.value(o.key()).find(secret), std::string::npos) << o.key();
    }
}

// -- generated texts ----------------------------------------------------------------

TEST(ConfigHelp, ListsOnlySwarmkeepersOptionsWithTheirDocs) {
  const auto help = load({"--help"});
  ASSERT_EQ(help.action, load_action::exit_ok) << help.err;
  EXPECT_EQ(help.err, "");
  EXPECT_EQ(help.out, config::help_text(false));
  EXPECT_EQ(load({"-h"}).out, help.out);
  EXPECT_EQ(help.out.rfind("usage: swarmkeeper ", 0), 0u) << help.out;
  const auto long_help = load({"--long-help"});
  ASSERT_EQ(long_help.action, load_action::exit_ok);
  EXPECT_EQ(long_help.out, config::help_text(true));
  for (const auto* text : {&help.out, &long_help.out}) {
    for (const auto& s : config::sections()) {
      EXPECT_NE(text->find("\n[" + std::string(s.name) + "] "), std::string::npos) << s.name;
    }
    for (const auto& o : config::options()) {
      EXPECT_NE(text->find("  --" + o.key()), std::string::npos) << o.key();
    }
    for (const auto& a : config::aliases()) {
      EXPECT_NE(text->find("--" + std::string(a.name)), std::string::npos) << a.name;
    }
    for (const char* flag : {"--config-file=FILE", "--dump-config", "--print-sample-config",
                             "--long-help", "--version"})
      EXPECT_NE(text->find(flag), std::string::npos) << flag;
    // CAF's own help text, wrong for this program.
    for (const char* caf_text : {"caf-application.ini", "STDERR", "[middleman]", "middleman.", "logger",
                                 "work-stealing", "max-throughput", "scheduler.policy"})
      EXPECT_EQ(text->find(caf_text), std::string::npos) << caf_text;
  }
  // Only the long help has types, ranges and defaults.
  EXPECT_NE(long_help.out.find("integer, 1 to 65535, default 6969"), std::string::npos);
  EXPECT_NE(long_help.out.find("one of off, allow, deny, default \"off\""), std::string::npos);
  EXPECT_EQ(help.out.find("default 6969"), std::string::npos);
  // Help needs no valid configuration.
  EXPECT_EQ(load({"--http.port=0", "--help"}).action, load_action::exit_ok);
}

TEST(ConfigHelp, VersionIsTheProjectVersion) {
  const auto r = load({"--version"});
  ASSERT_EQ(r.action, load_action::exit_ok) << r.err;
  EXPECT_STREQ(config::version(), SWARMKEEPER_PROJECT_VERSION);
  EXPECT_EQ(r.out.rfind(std::string("swarmkeeper ") + SWARMKEEPER_PROJECT_VERSION + " (", 0), 0u)
      << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST(ConfigSample, TheShippedIniIsTheGeneratedOne) {
  const auto r = load({"--print-sample-config"});
  ASSERT_EQ(r.action, load_action::exit_ok) << r.err;
  EXPECT_EQ(r.out, config::sample_config());
  EXPECT_EQ(read_source_file("deploy/swarmkeeper.ini"), r.out)
      << "regenerate it: swarmkeeper --print-sample-config > deploy/swarmkeeper.ini";
}

TEST(ConfigSample, ListsEveryOptionAtItsDefaultAndChangesNothing) {
  const auto sample = config::sample_config();
  std::string uncommented;
  std::istringstream lines{sample};
  std::string line;
  while (std::getline(lines, line)) {
    // ";name=value" is a commented-out option; "; text" is prose.
    if (line.size() > 1 && line[0] == ';' && line[1] != ' ' && line.find('=') != std::string::npos)
      uncommented += line.substr(1) + '\n';
    else
      uncommented += line + '\n';
  }
  for (const auto& o : config::options()) {
    const auto at = uncommented.find("\n[" + std::string(o.section) + "]\n");
    ASSERT_NE(at, std::string::npos) << o.section;
    const auto section = uncommented.substr(at, uncommented.find("\n[", at + 1) - at);
    const auto assignment =
        "\n" + std::string(o.name) + "=" + config::format_value(o.fallback) + "\n";
    EXPECT_NE(section.find(assignment), std::string::npos) << o.key();
  }
  // As shipped (all commented out) and with every option set to its default,
  // the file yields the built-in defaults.
  const auto defaults = load({});
  ASSERT_EQ(defaults.action, load_action::run) << defaults.err;
  const std::string* texts[] = {&sample, &uncommented};
  for (const auto* text : texts) {
    const auto r = load_file(*text);
    ASSERT_EQ(r.action, load_action::run) << r.err;
    EXPECT_EQ(redacted_config(*r.cfg), redacted_config(*defaults.cfg));
  }
}

TEST(ConfigSample, TheReadmeTableIsTheGeneratedOne) {
  const auto readme = read_source_file("README.md");
  const std::string header = "| option | default | range | meaning |\n";
  const auto begin = readme.find(header);
  ASSERT_NE(begin, std::string::npos) << "README.md has no option table";
  auto end = begin;
  while (end < readme.size() && readme[end] == '|') end = readme.find('\n', end) + 1;
  EXPECT_EQ(readme.substr(begin, end - begin), config::markdown_table());
}

}  // namespace
}  // namespace sk
