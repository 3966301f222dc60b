#include "app/swarmctl/options.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "protocol/text.hpp"

namespace sk::swarmctl {

namespace {

/// Global options that take a value.
bool is_valued_global(std::string_view name) {
  return name == "url" || name == "token" || name == "token-file" || name == "timeout" ||
         name == "ca-file";
}

bool is_connection_option(std::string_view name) {
  return is_valued_global(name) || name == "insecure";
}

std::string trim(std::string_view s) { return std::string(sk::trim(s)); }

}  // namespace

std::optional<std::chrono::milliseconds> parse_timeout(std::string_view seconds) {
  if (seconds.empty() || seconds.size() > 12) return std::nullopt;
  for (char c : seconds)
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) return std::nullopt;
  const std::string text(seconds);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v <= 0 || v > 3600)
    return std::nullopt;
  const auto ms = static_cast<long long>(std::llround(v * 1000));
  if (ms < 1) return std::nullopt;
  return std::chrono::milliseconds(ms);
}

std::optional<std::size_t> parse_count(std::string_view text) {
  if (text.empty() || text.size() > 9) return std::nullopt;
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

invocation parse_words(const std::vector<std::string>& words, bool connection_options) {
  invocation inv;
  bool options_done = false;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const bool is_option = !options_done && w.size() > 2 && w.compare(0, 2, "--") == 0;
    if (!options_done && w == "--") {
      options_done = true;
      continue;
    }
    if (!is_option) {
      if (inv.command.empty())
        inv.command = w;
      else
        inv.args.push_back(w);
      continue;
    }
    const auto eq = w.find('=');
    const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? w.substr(eq + 1) : std::string{};
    if (name.empty()) throw usage_error("malformed option '" + w + "'");
    if (is_connection_option(name) && !connection_options)
      throw usage_error("--" + name + " can only be given when swarmctl starts, not in the shell");
    if (is_valued_global(name)) {
      std::string v = value;
      if (!has_value) {
        if (i + 1 >= words.size()) throw usage_error("--" + name + " needs a value");
        v = words[++i];
      }
      if (name == "url") {
        inv.global.url = v;
      } else if (name == "token") {
        inv.global.token = v;
      } else if (name == "token-file") {
        inv.global.token_file = v;
      } else if (name == "ca-file") {
        if (v.empty()) throw usage_error("--ca-file is empty");
        inv.global.ca_file = v;
      } else {
        auto t = parse_timeout(v);
        if (!t)
          throw usage_error("--timeout must be a number of seconds above 0 and at most 3600, not '" +
                            v + "'");
        inv.global.timeout = *t;
      }
      continue;
    }
    if (name == "json" || name == "raw" || name == "insecure" || name == "help" ||
        name == "version") {
      if (has_value) throw usage_error("--" + name + " takes no value");
      if (name == "json") inv.global.json = true;
      if (name == "raw") inv.global.raw = true;
      if (name == "insecure") inv.global.insecure = true;
      if (name == "help") inv.global.help = true;
      if (name == "version") inv.global.version = true;
      continue;
    }
    if (inv.flags.count(name)) throw usage_error("--" + name + " given twice");
    inv.flags[name] = has_value ? std::optional<std::string>(value) : std::nullopt;
  }
  return inv;
}

std::optional<std::string> real_env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

std::optional<std::string> real_file(const std::string& path) {
  std::ifstream f{path, std::ios::binary};
  if (!f) return std::nullopt;
  std::ostringstream os;
  os << f.rdbuf();
  if (f.bad()) return std::nullopt;
  return os.str();
}

std::optional<std::string> default_admin_url() { return std::nullopt; }

connection resolve_connection(const global_options& g, const env_lookup& env,
                              const file_reader& read) {
  connection c;
  std::optional<std::string> url_text = g.url;
  std::string url_origin = "--url";
  if (!url_text) {
    auto e = env("SWARMCTL_URL");
    if (e && !e->empty()) {
      url_text = e;
      url_origin = "SWARMCTL_URL";
    }
  }
  if (!url_text) {
    url_text = default_admin_url();
    url_origin = "the default URL";
  }
  if (!url_text)
    throw usage_error(
        "no admin URL: give --url=http://127.0.0.1:PORT or set SWARMCTL_URL (PORT is the "
        "daemon's admin.port; the admin API is off unless it is set)");
  std::string error;
  auto url = parse_admin_url(*url_text, error);
  if (!url) throw usage_error(url_origin + ": " + error);
  c.url = *url;

  auto from_file = [&](const std::string& path, const std::string& origin) {
    auto text = read(path);
    if (!text) throw usage_error(origin + ": cannot read '" + path + "'");
    const auto nl = text->find('\n');
    std::string token = trim(text->substr(0, nl));
    if (token.empty()) throw usage_error(origin + ": '" + path + "' holds no token on its first line");
    return token;
  };
  if (g.token) {
    c.token = *g.token;
    if (c.token.empty()) throw usage_error("--token is empty");
  } else if (g.token_file) {
    c.token = from_file(*g.token_file, "--token-file");
  } else if (auto t = env("SWARMCTL_TOKEN"); t && !t->empty()) {
    c.token = *t;
  } else if (auto f = env("SWARMCTL_TOKEN_FILE"); f && !f->empty()) {
    c.token = from_file(*f, "SWARMCTL_TOKEN_FILE");
  } else {
    throw usage_error(
        "no admin token: give --token-file=PATH (or --token=T), or set SWARMCTL_TOKEN or "
        "SWARMCTL_TOKEN_FILE (the daemon's admin.token)");
  }
  if (g.timeout) c.timeout = *g.timeout;
  std::optional<std::string> ca = g.ca_file;
  std::string ca_origin = "--ca-file";
  if (!ca) {
    if (auto e = env("SWARMCTL_CA_FILE"); e && !e->empty()) {
      ca = e;
      ca_origin = "SWARMCTL_CA_FILE";
    }
  }
  if (!c.url.tls && (g.ca_file || g.insecure))
    throw usage_error(std::string(g.insecure ? "--insecure" : "--ca-file") +
                      " applies to https URLs only; " + url_origin + " is " + c.url.text());
  if (ca && c.url.tls) {
    if (!read(*ca)) throw usage_error(ca_origin + ": cannot read '" + *ca + "'");
    c.transfer.ca_file = *ca;
  }
  c.transfer.insecure = g.insecure;
  return c;
}

std::vector<std::string> split_line(std::string_view line) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '\'') {
      if (c == '\'')
        quote = 0;
      else
        cur += c;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= line.size()) throw usage_error("trailing backslash");
      cur += line[++i];
      in_word = true;
      continue;
    }
    if (quote == '"') {
      if (c == '"')
        quote = 0;
      else
        cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      continue;
    }
    cur += c;
    in_word = true;
  }
  if (quote != 0) throw usage_error(std::string("unterminated ") + quote + " quote");
  if (in_word) out.push_back(std::move(cur));
  return out;
}

bool is_info_hash(std::string_view text) {
  if (text.size() != 40) return false;
  for (char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_hash_prefix(std::string_view text) {
  if (text.size() < min_hash_prefix || text.size() >= 40) return false;
  for (char c : text)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string checked_hash(std::string_view text) {
  if (!is_info_hash(text))
    throw usage_error("'" + std::string(text) +
                      "' is not an info_hash: expected 40 hex digits, or a unique prefix of " +
                      std::to_string(min_hash_prefix) + " or more");
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace sk::swarmctl
