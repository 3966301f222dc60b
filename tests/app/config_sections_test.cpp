// Each section configures its own module: which struct every option reaches
// (and which it leaves alone), the former names of options that moved to
// [gateway] (accepted with a warning, named as written in messages,
// precedence kept), exact range messages at both ends of every range, and
// the node-wide lists built from what the config read.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include "app/config.hpp"
#include "config_test_support.hpp"
#include "net/node_lists.hpp"
#include "protocol/text.hpp"

namespace sk {
namespace {

using namespace std::chrono_literals;
using config::option_def;
using config::value_type;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// -- what each struct holds, as text, to compare loads ---------------------------

std::string http_fields(const daemon_settings& s) {
  const auto& h = s.http;
  std::ostringstream os;
  os << h.port << '|';
  for (const auto& b : h.bind_addresses) os << b << ',';
  os << '|' << h.io_threads << '|' << h.max_url_length << '|' << h.max_header_bytes << '|'
     << h.max_query_length << '|' << h.read_timeout.count() << '|' << h.write_timeout.count()
     << '|' << h.defer_accept.count() << '|' << h.max_pipeline << '|' << h.max_connections << '|'
     << h.max_connections_per_address
     << '|' << h.proxies.empty();
  return os.str();
}

std::string udp_fields(const daemon_settings& s) {
  const auto& u = s.udp;
  std::ostringstream os;
  os << s.udp_enabled << '|' << u.port << '|' << u.bind << '|' << u.workers << '|'
     << u.connection_id_key << '|' << u.max_url_data;
  return os.str();
}

std::string gateway_fields(const daemon_settings& s) {
  const auto& g = s.gateway;
  std::ostringstream os;
  os << g.request_timeout.count() << '|' << g.retry_in_minutes << '|' << g.max_in_flight << '|'
     << g.trust_claimed_ip[0] << g.trust_claimed_ip[1] << '|' << g.max_numwant << '|'
     << g.max_scrape_hashes << '|' << g.new_swarm_burst << '|' << g.new_swarms_per_minute << '|'
     << g.request_burst << '|' << g.requests_per_second << '|' << g.rate_limit_addresses;
  return os.str();
}

std::string caps_fields(const daemon_settings& s) {
  return std::to_string(s.caps.max_swarms) + "|" + std::to_string(s.caps.max_peers);
}

/// Values other than the default that `o` accepts, in config-file syntax
/// (the first that loads is used: rules between options may refuse some).
std::vector<std::string> other_values(const option_def& o) {
  const auto key = o.key();
  if (key == "http.bind" || key == "udp.bind") return {"\"127.0.0.2\""};
  if (key == "http.trusted-proxies") return {"[\"10.0.0.0/8\"]"};
  if (key == "udp.connection-id-key") return {"\"00112233445566778899aabbccddeeff\""};
  std::vector<std::string> out;
  if (o.type == value_type::boolean) {
    out.push_back(*caf::get_if<bool>(&o.fallback) ? "false" : "true");
  } else if (auto r = std::get_if<config::integer_range>(&o.range)) {
    for (auto x : {r->lo, r->hi, r->lo + 1})
      if (caf::config_value{x} != o.fallback) out.push_back(config::format_value(caf::config_value{x}));
  } else if (auto r = std::get_if<config::duration_range>(&o.range)) {
    for (auto x : {r->lo, r->hi})
      if (caf::config_value{x} != o.fallback) out.push_back(config::format_value(caf::config_value{x}));
  }
  return out;
}

/// Loads `[section] name=value` with the first other value that loads.
std::optional<loaded> load_other(const option_def& o) {
  for (const auto& v : other_values(o)) {
    auto r = load_file("[" + std::string(o.section) + "]\n" + o.name + "=" + v + "\n");
    if (r.action == load_action::run) return r;
  }
  return std::nullopt;
}

TEST(ConfigSections, EachTransportSectionConfiguresItsTransportOnly) {
  const auto defaults = load({});
  ASSERT_EQ(defaults.action, load_action::run) << defaults.err;
  const auto& d = defaults.settings;
  int checked = 0;
  for (const auto& o : config::options()) {
    const std::string section = o.section;
    if (section != "http" && section != "udp" && section != "gateway") continue;
    SCOPED_TRACE(o.key());
    const auto r = load_other(o);
    ASSERT_TRUE(r.has_value()) << "no other value of " << o.key() << " loads";
    const auto& s = r->settings;
    const auto key = o.key();
    if (key == "http.trust-ip-param" || key == "udp.trust-ip-field") {
      // The claimed-address rule is the gateway's, one switch per transport.
      const auto t = key == "http.trust-ip-param" ? transport::http : transport::udp;
      const auto other = t == transport::http ? transport::udp : transport::http;
      EXPECT_TRUE(s.gateway.trust_claimed_ip[static_cast<std::size_t>(t)]);
      EXPECT_FALSE(s.gateway.trust_claimed_ip[static_cast<std::size_t>(other)]);
      EXPECT_EQ(http_fields(s), http_fields(d));
      EXPECT_EQ(udp_fields(s), udp_fields(d));
    } else if (section == "http") {
      EXPECT_NE(http_fields(s), http_fields(d)) << "the value reaches http_server_config";
      EXPECT_EQ(gateway_fields(s), gateway_fields(d));
      // udp.bind follows http.bind while it is empty (documented); nothing
      // else of [http] reaches UDP.
      if (key != "http.bind") {
        EXPECT_EQ(udp_fields(s), udp_fields(d));
      } else {
        EXPECT_EQ(s.udp.bind, "127.0.0.2");
      }
    } else if (section == "udp") {
      EXPECT_NE(udp_fields(s), udp_fields(d)) << "the value reaches udp_config";
      EXPECT_EQ(http_fields(s), http_fields(d));
      EXPECT_EQ(gateway_fields(s), gateway_fields(d));
    } else {
      EXPECT_NE(gateway_fields(s), gateway_fields(d)) << "the value reaches gateway_config";
      EXPECT_EQ(http_fields(s), http_fields(d));
      EXPECT_EQ(udp_fields(s), udp_fields(d));
    }
    ++checked;
  }
  EXPECT_GT(checked, 20);
}

TEST(ConfigSections, TheCapsSectionConfiguresTheCensusOnly) {
  const auto defaults = load({});
  ASSERT_EQ(defaults.action, load_action::run) << defaults.err;
  const auto& d = defaults.settings;
  EXPECT_EQ(d.caps.max_swarms, node_caps{}.max_swarms);
  EXPECT_EQ(d.caps.max_peers, node_caps{}.max_peers);
  int checked = 0;
  for (const auto& o : config::options()) {
    if (std::string(o.section) != "caps") continue;
    SCOPED_TRACE(o.key());
    const auto r = load_other(o);
    ASSERT_TRUE(r.has_value()) << "no other value of " << o.key() << " loads";
    EXPECT_NE(caps_fields(r->settings), caps_fields(d));
    EXPECT_EQ(gateway_fields(r->settings), gateway_fields(d));
    EXPECT_EQ(r->settings.swarm.max_peers, d.swarm.max_peers);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
  const auto r = load({"--caps.max-swarms=5", "--caps.max-peers=7",
                       "--tracker.max-peers-per-swarm=3", "--gateway.new-swarm-burst=4",
                       "--gateway.new-swarms-per-minute=9"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.settings.caps.max_swarms, 5u);
  EXPECT_EQ(r.settings.caps.max_peers, 7u);
  EXPECT_EQ(r.settings.swarm.max_peers, 3u);
  EXPECT_EQ(r.settings.gateway.new_swarm_burst, 4u);
  EXPECT_EQ(r.settings.gateway.new_swarms_per_minute, 9.0);
  EXPECT_EQ(d.swarm.max_peers, 200000u) << "the per-swarm default the doc explains";
}

TEST(ConfigSections, HttpLimitsAndTimeoutsNoLongerChangeUdp) {
  const auto r = load({"--http.max-query-length=100", "--http.read-timeout=1s",
                       "--http.write-timeout=2s", "--gateway.request-timeout=250ms"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.settings.http.max_query_length, 100u);
  EXPECT_EQ(r.settings.udp.max_url_data, 6144u) << "UDP's parser limit is its own";
  EXPECT_EQ(r.settings.gateway.request_timeout, 250ms) << "one deadline, the gateway's";
  const auto u = load({"--udp.max-url-data=300"});
  ASSERT_EQ(u.action, load_action::run) << u.err;
  EXPECT_EQ(u.settings.udp.max_url_data, 300u);
  EXPECT_EQ(u.settings.http.max_query_length, 6144u);
}

TEST(ConfigSections, TrackerLimitsReachTheGatewayAndTheSwarms) {
  const auto r = load({"--tracker.max-numwant=200", "--tracker.max-scrape-hashes=10",
                       "--http.max-query-length=700", "--udp.max-url-data=300"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  const auto& s = r.settings;
  EXPECT_EQ(s.swarm.max_numwant, 200);
  EXPECT_EQ(s.gateway.max_numwant, 200);
  EXPECT_EQ(s.gateway.max_scrape_hashes, 10u);
  // Each transport's parser: the gateway's limits, its own length.
  const auto http = s.gateway.parse_limits(s.http.max_query_length);
  EXPECT_EQ(http.max_numwant, 200);
  EXPECT_EQ(http.max_scrape_hashes, 10u);
  EXPECT_EQ(http.max_query_length, 700u);
  const auto udp = s.gateway.parse_limits(s.udp.max_url_data);
  EXPECT_EQ(udp.max_scrape_hashes, 10u);
  EXPECT_EQ(udp.max_query_length, 300u);
}

TEST(ConfigSections, TheGatewayConfigValidatesItsOwnFields) {
  gateway_config ok;
  EXPECT_EQ(ok.validate(), "");
  auto c = ok;
  c.request_timeout = 0ms;
  EXPECT_TRUE(has(c.validate(), "request timeout")) << c.validate();
  c = ok;
  c.max_in_flight = 0;
  EXPECT_TRUE(has(c.validate(), "max in flight")) << c.validate();
  c = ok;
  c.retry_in_minutes = 0;
  EXPECT_TRUE(has(c.validate(), "retry in")) << c.validate();
  c = ok;
  c.max_scrape_hashes = 0;
  EXPECT_TRUE(has(c.validate(), "scrape hashes")) << c.validate();
  c = ok;
  c.max_numwant = -1;
  EXPECT_TRUE(has(c.validate(), "numwant")) << c.validate();
  c = ok;
  c.new_swarm_burst = 0;
  EXPECT_TRUE(has(c.validate(), "new swarm burst")) << c.validate();
  c = ok;
  c.new_swarms_per_minute = 0;
  EXPECT_TRUE(has(c.validate(), "new swarms per minute")) << c.validate();
}

// -- ranges: the exact message at both ends -----------------------------------------

TEST(ConfigRanges, BothEndsOfEveryRangeAreRefusedWithAMessageNamingTheKeyAndTheBounds) {
  int checked = 0;
  for (const auto& o : config::options()) {
    std::vector<caf::config_value> outside;
    std::string lo, hi;
    if (auto r = std::get_if<config::integer_range>(&o.range)) {
      lo = std::to_string(r->lo);
      hi = std::to_string(r->hi);
      if (r->lo > std::numeric_limits<std::int64_t>::min() && r->lo - 1 != r->extra)
        outside.emplace_back(r->lo - 1);
      if (r->hi < std::numeric_limits<std::int64_t>::max() && r->hi + 1 != r->extra)
        outside.emplace_back(r->hi + 1);
    } else if (auto r = std::get_if<config::duration_range>(&o.range)) {
      lo = config::format_value(caf::config_value{r->lo});
      hi = config::format_value(caf::config_value{r->hi});
      const caf::timespan ns{1};
      if (r->lo.count() > 0 && r->lo - ns != r->extra) outside.emplace_back(r->lo - ns);
      outside.emplace_back(r->hi + ns);
    } else if (auto r = std::get_if<config::real_range>(&o.range)) {
      lo = config::format_value(caf::config_value{r->lo});
      hi = config::format_value(caf::config_value{r->hi});
      outside.emplace_back(r->lo - std::max(1e-6, std::fabs(r->lo) * 1e-6));
      outside.emplace_back(r->hi + std::max(1e-6, std::fabs(r->hi) * 1e-6));
    } else {
      continue;
    }
    for (const auto& v : outside) {
      const auto arg = "--" + o.key() + "=" + cli_text(v);
      SCOPED_TRACE(arg);
      const auto message = config::check_value(o, v);
      ASSERT_TRUE(message.has_value());
      EXPECT_EQ(message->rfind(o.key() + " must be ", 0), 0u) << *message;
      EXPECT_TRUE(has(*message, "between " + lo + " and " + hi + " (got ")) << *message;
      // A real read back from text may differ in its last digit: compare
      // up to the value.
      const auto named = message->substr(0, message->find(" (got "));
      const auto r = load({arg});
      EXPECT_EQ(r.action, load_action::exit_error);
      if (o.caf_owned && has(r.err, "invalid value in '" + arg + "'")) {
        // CAF parses its own option (unsigned) and refuses a negative one.
        EXPECT_TRUE(has(r.err, lo + " to " + hi)) << r.err;
      } else {
        EXPECT_TRUE(has(r.err, "swarmkeeper: " + named + " (got ")) << r.err;
      }
      const auto f = load_file("[" + std::string(o.section) + "]\n" + o.name + "=" +
                               config::format_value(v) + "\n");
      EXPECT_EQ(f.action, load_action::exit_error);
      EXPECT_TRUE(has(f.err, named + " (got ")) << f.err;
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(ConfigRanges, UnknownKeysOfTheNewSectionAndMovedNamesInTheWrongPlaceAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[gateway]\nrequest-timeot=1s\n", "unknown option 'request-timeot' in [gateway]"},
      {"[gateway]\ntrust-ip-param=true\n", "unknown option 'trust-ip-param' in [gateway]"},
      {"[http]\nmax-in-flight=5\n", "unknown option 'max-in-flight' in [http]"},
      {"[udp]\nrequest-timeout=1s\n", "unknown option 'request-timeout' in [udp]"},
      {"[udp]\nmax-query-length=5\n", "unknown option 'max-query-length' in [udp]"},
  };
  for (const auto& [file, message] : cases) {
    SCOPED_TRACE(file);
    const auto r = load_file(file);
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_TRUE(has(r.err, message)) << r.err;
  }
  for (const auto* arg : {"--gateway.trust-ip-param", "--udp.request-timeout=1s",
                          "--http.max-in-flight=3", "--gateway.nope=1"}) {
    SCOPED_TRACE(arg);
    const auto r = load({arg});
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_TRUE(has(r.err, std::string("unknown option '") + arg + "'")) << r.err;
  }
}

// -- former names --------------------------------------------------------------------

TEST(ConfigRenamed, EveryFormerNameLeadsToAnOptionAndIsNoOptionItself) {
  ASSERT_FALSE(config::renamed().empty());
  for (const auto& r : config::renamed()) {
    SCOPED_TRACE(r.old_key);
    const auto* now = config::find_option(r.new_key);
    ASSERT_NE(now, nullptr);
    EXPECT_STREQ(now->section, "gateway");
    EXPECT_EQ(config::find_option(r.old_key), nullptr);
    EXPECT_EQ(config::find_alias(r.old_key), nullptr);
    EXPECT_EQ(config::find_renamed(r.old_key), &r);
    EXPECT_EQ(config::renamed_to(r.new_key), &r);
    // Users find the new name from the old one in every generated text.
    EXPECT_TRUE(has(config::help_text(false), std::string("formerly --") + r.old_key));
    EXPECT_TRUE(has(config::markdown_table(), std::string("(formerly `") + r.old_key + "`)"));
    const std::string old = r.old_key;
    const auto dot = old.find('.');
    std::string sample = config::sample_config();
    for (auto p = sample.find("\n; "); p != std::string::npos; p = sample.find("\n; ", p))
      sample.replace(p, 3, " ");
    EXPECT_TRUE(has(sample, "Formerly " + old.substr(dot + 1) + " in [" + old.substr(0, dot) +
                                "] (still accepted, deprecated)."));
  }
  EXPECT_EQ(config::find_renamed("http.port"), nullptr);
}

TEST(ConfigRenamed, AFormerNameSetsTheOptionWithAWarningOnTheCommandLineAndInTheFile) {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"http.request-timeout", "2s", "gateway.request-timeout"},
      {"http.retry-in", "7", "gateway.retry-in"},
      {"udp.max-in-flight", "9", "gateway.max-in-flight"},
  };
  for (const auto& [old_key, value, new_key] : cases) {
    SCOPED_TRACE(old_key);
    const auto dot = old_key.find('.');
    const loaded runs[] = {
        load({"--" + old_key + "=" + value}),
        load_file("[" + old_key.substr(0, dot) + "]\n" + old_key.substr(dot + 1) + "=" + value +
                  "\n"),
    };
    for (const auto& r : runs) {
      ASSERT_EQ(r.action, load_action::run) << r.err;
      EXPECT_EQ(r.err, "") << "a warning for the log, not an error";
      EXPECT_EQ(r.value(new_key), value);
      ASSERT_EQ(r.settings.warnings.size(), 1u);
      const auto& w = r.settings.warnings[0];
      EXPECT_TRUE(has(w, old_key + " is deprecated")) << w;
      EXPECT_TRUE(has(w, new_key)) << w;
      for (const auto& [k, v] : redacted_config(*r.cfg)) EXPECT_NE(k, old_key);
    }
    EXPECT_EQ(runs[0].value(new_key), runs[1].value(new_key));
  }
  const auto r = load({"--http.request-timeout=2s", "--http.retry-in=7", "--udp.max-in-flight=9"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  EXPECT_EQ(r.settings.gateway.request_timeout, 2s);
  EXPECT_EQ(r.settings.gateway.retry_in_minutes, 7);
  EXPECT_EQ(r.settings.gateway.max_in_flight, 9u);
  EXPECT_EQ(r.settings.warnings.size(), 3u);
}

TEST(ConfigRenamed, PrecedenceIsKeptAcrossOldAndNewNames) {
  struct precedence_case {
    std::string file;
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<precedence_case> cases = {
      // The command line beats the file, whichever name either uses.
      {"[http]\nrequest-timeout=2s\n", {"--gateway.request-timeout=3s"}, "3s"},
      {"[gateway]\nrequest-timeout=3s\n", {"--http.request-timeout=2s"}, "2s"},
      {"[http]\nrequest-timeout=2s\n", {"--http.request-timeout=4s"}, "4s"},
      // Within one source the new name wins.
      {"[http]\nrequest-timeout=2s\n[gateway]\nrequest-timeout=3s\n", {}, "3s"},
      {"[gateway]\nrequest-timeout=3s\n[http]\nrequest-timeout=2s\n", {}, "3s"},
      {"", {"--http.request-timeout=2s", "--gateway.request-timeout=3s"}, "3s"},
      {"", {"--gateway.request-timeout=3s", "--http.request-timeout=2s"}, "3s"},
      // Not given under either name: the default.
      {"[http]\nport=7000\n", {}, "5s"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file + (c.args.empty() ? "" : c.args[0]));
    const auto r = load_file(c.file, c.args);
    ASSERT_EQ(r.action, load_action::run) << r.err;
    EXPECT_EQ(r.value("gateway.request-timeout"), c.expected);
  }
}

TEST(ConfigRenamed, ProblemsNameTheFormerNameAsWritten) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cli = {
      {{"--udp.max-in-flight=0"}, "udp.max-in-flight must be between 1 and 16777216 (got 0)"},
      {{"--udp.max-in-flight=16777217"},
       "udp.max-in-flight must be between 1 and 16777216 (got 16777217)"},
      {{"--http.retry-in=0"}, "http.retry-in must be between 1 and 1440 (got 0)"},
      {{"--http.retry-in=1441"}, "http.retry-in must be between 1 and 1440 (got 1441)"},
      {{"--http.request-timeout=0s"}, "http.request-timeout must be between 1ms and 1h (got 0s)"},
      {{"--http.request-timeout=61min"},
       "http.request-timeout must be between 1ms and 1h (got 61min)"},
      {{"--http.retry-in=x"}, "invalid value in '--http.retry-in=x': expected an integer"},
      {{"--http.request-timeout=5"},
       "invalid value in '--http.request-timeout=5': expected a duration"},
  };
  for (const auto& [args, message] : cli) {
    SCOPED_TRACE(args[0]);
    const auto r = load(args);
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_TRUE(has(r.err, message)) << r.err;
  }
  const std::vector<std::pair<std::string, std::string>> files = {
      {"[udp]\nmax-in-flight=0\n", "udp.max-in-flight must be between 1 and 16777216 (got 0)"},
      {"[http]\nretry-in=\"x\"\n", "http.retry-in: expected an integer, got \"x\""},
      {"[http]\nrequest-timeout=5\n", "http.request-timeout: expected a duration"},
  };
  for (const auto& [file, message] : files) {
    SCOPED_TRACE(file);
    const auto r = load_file(file);
    EXPECT_EQ(r.action, load_action::exit_error);
    EXPECT_TRUE(has(r.err, message)) << r.err;
  }
  // A former name that loses to the new one is not checked, as any value
  // that is overridden.
  const auto overridden = load_file("[udp]\nmax-in-flight=0\n", {"--gateway.max-in-flight=5"});
  ASSERT_EQ(overridden.action, load_action::run) << overridden.err;
  EXPECT_EQ(overridden.settings.gateway.max_in_flight, 5u);
}

TEST(ConfigRenamed, TheDumpWritesOnlyTheNewNames) {
  const auto first = load_file("[http]\nrequest-timeout=2s\n[udp]\nmax-in-flight=9\n",
                               {"--dump-config", "--http.retry-in=7"});
  ASSERT_EQ(first.action, load_action::exit_ok) << first.err;
  const auto& dump = first.out;
  const auto at = dump.find("\n[gateway]\n");
  ASSERT_NE(at, std::string::npos) << dump;
  const auto gateway = dump.substr(at, dump.find("\n[", at + 1) - at);
  EXPECT_TRUE(has(gateway, "\nrequest-timeout=2s\n")) << gateway;
  EXPECT_TRUE(has(gateway, "\nmax-in-flight=9\n")) << gateway;
  EXPECT_TRUE(has(gateway, "\nretry-in=7\n")) << gateway;
  const auto http_at = dump.find("\n[http]\n");
  const auto http = dump.substr(http_at, dump.find("\n[", http_at + 1) - http_at);
  EXPECT_FALSE(has(http, "\nrequest-timeout=")) << http;
  EXPECT_FALSE(has(http, "\nretry-in=")) << http;
  // Loaded back: the same configuration, and nothing deprecated any more.
  const auto again = load_file(dump);
  ASSERT_EQ(again.action, load_action::run) << again.err;
  EXPECT_TRUE(again.settings.warnings.empty());
  EXPECT_EQ(again.settings.gateway.request_timeout, 2s);
  EXPECT_EQ(again.settings.gateway.max_in_flight, 9u);
  EXPECT_EQ(again.settings.gateway.retry_in_minutes, 7);
}

// -- the node-wide lists -----------------------------------------------------------

TEST(ConfigLists, TheLiveListsAreBuiltFromWhatTheConfigRead) {
  const std::string hash = "0123456789abcdef0123456789abcdef01234567";
  temp_file access_file{"# refused\n" + hash + "\n"};
  const auto r = load({"--access.mode=deny", "--access.file=" + access_file.path(),
                       "--clients.banned=-XX0001-=old client;-YY=broken"});
  ASSERT_EQ(r.action, load_action::run) << r.err;
  const auto& l = r.settings.lists;
  EXPECT_EQ(l.mode, access_mode::deny);
  EXPECT_EQ(l.access_file, access_file.path());
  EXPECT_EQ(l.access.size(), 1u);
  EXPECT_EQ(l.bans.size(), 2u);
  // No live state in the settings (swarm_config has no ban list at all):
  // the swarms and the admin API get it from node_lists.
  EXPECT_EQ(r.settings.admin.access, nullptr);

  node_lists lists{r.settings.lists};
  ASSERT_NE(lists.access(), nullptr);
  ASSERT_NE(lists.bans(), nullptr);
  EXPECT_EQ(lists.access()->mode(), access_mode::deny);
  EXPECT_EQ(lists.access()->file(), access_file.path());
  const auto parsed = parse_hex_hash(hash);
  ASSERT_TRUE(parsed.has_value());
  const info_hash h = *parsed;
  EXPECT_FALSE(lists.access()->allowed(h));
  EXPECT_EQ(lists.bans()->snapshot()->size(), 2u);
  // A change through the holder is what every holder of the pointer sees.
  EXPECT_EQ(lists.bans()->add("-ZZ", "gone"), live_ban_list::add_result::added);
  EXPECT_EQ(lists.bans()->snapshot()->size(), 3u);
  EXPECT_EQ(r.settings.lists.bans.size(), 2u) << "the settings keep the start state";

  const auto defaults = load({});
  ASSERT_EQ(defaults.action, load_action::run) << defaults.err;
  node_lists empty{defaults.settings.lists};
  EXPECT_EQ(empty.access()->mode(), access_mode::off);
  EXPECT_TRUE(empty.access()->allowed(h));
  EXPECT_EQ(empty.bans()->snapshot()->size(), 0u);
}

TEST(ConfigLists, ABadAccessFileOrBanListStopsTheLoad) {
  temp_file bad{"not a hash\n"};
  const auto r = load({"--access.mode=allow", "--access.file=" + bad.path()});
  EXPECT_EQ(r.action, load_action::exit_error);
  EXPECT_TRUE(has(r.err, "access.file: ")) << r.err;
  const auto b = load({"--clients.banned=-XX="});
  EXPECT_EQ(b.action, load_action::exit_error);
  EXPECT_TRUE(has(b.err, "clients.banned: ")) << b.err;
}

}  // namespace
}  // namespace sk
