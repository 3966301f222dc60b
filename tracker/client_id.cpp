#include "tracker/client_id.hpp"

#include <algorithm>
#include <cstring>

#include "protocol/text.hpp"

namespace sk {

namespace {

struct known_client {
  std::string_view code;
  std::string_view name;
};

// Azureus-style codes of clients still seen in the wild (BEP 20 and the
// clients' own sources). Case matters: "LT" and "lt" are different clients.
constexpr known_client azureus_clients[] = {
    {"7T", "aTorrent"},
    {"AG", "Ares"},
    {"AZ", "Vuze"},
    {"BC", "BitComet"},
    {"BI", "BiglyBT"},
    {"BT", "BitTorrent"},
    {"BW", "BitWombat"},
    {"DE", "Deluge"},
    {"FD", "Free Download Manager"},
    {"FW", "FrostWire"},
    {"KT", "KTorrent"},
    {"LT", "libtorrent (Rasterbar)"},
    {"lt", "libTorrent (rakshasa)"},
    {"MG", "MediaGet"},
    {"PI", "PicoTorrent"},
    {"qB", "qBittorrent"},
    {"RT", "Retriever"},
    {"SD", "Thunder (XunLei)"},
    {"TR", "Transmission"},
    {"UM", "uTorrent Mac"},
    {"UT", "uTorrent"},
    {"UW", "uTorrent Web"},
    {"WD", "WebTorrent Desktop"},
    {"WW", "WebTorrent"},
    {"XL", "Xunlei"},
};

constexpr known_client shadow_clients[] = {
    {"A", "ABC"},
    {"O", "Osprey Permaseed"},
    {"Q", "BTQueue"},
    {"R", "Tribler"},
    {"S", "Shadow"},
    {"T", "BitTornado"},
    {"U", "UPnP NAT Bit Torrent"},
};

constexpr known_client mainline_clients[] = {
    {"M", "BitTorrent Mainline"},
    {"Q", "Queen Bee"},
};

template <std::size_t N>
std::string name_of(const known_client (&table)[N], std::string_view code) {
  for (const auto& c : table) {
    if (c.code == code) {
      return std::string(c.name);
    }
  }
  return std::string(code);
}

bool is_digit(std::uint8_t c) noexcept { return c >= '0' && c <= '9'; }
bool is_upper(std::uint8_t c) noexcept { return c >= 'A' && c <= 'Z'; }
bool is_lower(std::uint8_t c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_alnum(std::uint8_t c) noexcept { return is_digit(c) || is_upper(c) || is_lower(c); }

/// 0-9 -> 0..9, A-Z and a-z -> 10..35 (the Azureus-style convention).
int alnum_value(std::uint8_t c) noexcept {
  if (is_digit(c)) return c - '0';
  if (is_upper(c)) return c - 'A' + 10;
  return c - 'a' + 10;
}

/// Shadow's alphabet: 0-9, A-Z, a-z, '.' -> 0..62; -1 for anything else.
int shadow_value(std::uint8_t c) noexcept {
  if (is_digit(c)) return c - '0';
  if (is_upper(c)) return c - 'A' + 10;
  if (is_lower(c)) return c - 'a' + 36;
  if (c == '.') return 62;
  return -1;
}

bool azureus(const std::uint8_t* b, client_info& out) {
  if (b[0] != '-' || b[7] != '-') return false;
  for (int i = 1; i <= 6; ++i) {
    if (!is_alnum(b[i])) return false;
  }
  out.style = client_info::style::azureus;
  out.code.assign(reinterpret_cast<const char*>(b + 1), 2);
  out.name = name_of(azureus_clients, out.code);
  const int major = alnum_value(b[3]);
  if (out.code == "TR" && major <= 3 && is_digit(b[4]) && is_digit(b[5])) {
    // Transmission before 4.0: major, two-digit minor, then a status
    // character ('0' release, 'Z' development, 'X' beta): "-TR2940-" = 2.94.
    out.version = std::to_string(major) + '.' + static_cast<char>(b[4]) + static_cast<char>(b[5]);
    if (b[6] == 'Z' || b[6] == 'X') out.version += '+';
    return true;
  }
  out.version = std::to_string(major) + '.' + std::to_string(alnum_value(b[4])) + '.' +
                std::to_string(alnum_value(b[5]));
  if (is_digit(b[6])) {
    if (b[6] != '0') out.version += '.' + std::string(1, static_cast<char>(b[6]));
  } else {
    out.version += static_cast<char>(b[6]);  // build letter, uTorrent's "355W"
  }
  return true;
}

bool mainline(const std::uint8_t* b, client_info& out) {
  // L digits '-' digits '-' digits '-': three runs of 1..3 digits.
  if (!is_upper(b[0])) return false;
  std::size_t i = 1;
  std::string version;
  for (int part = 0; part < 3; ++part) {
    const std::size_t start = i;
    while (i < 20 && is_digit(b[i]) && i - start < 3) ++i;
    if (i == start || i >= 20 || b[i] != '-') return false;
    if (part > 0) version += '.';
    // Strip leading zeros but keep one digit.
    std::size_t first = start;
    while (first + 1 < i && b[first] == '0') ++first;
    version.append(reinterpret_cast<const char*>(b + first), i - first);
    ++i;
  }
  out.style = client_info::style::mainline;
  out.code.assign(1, static_cast<char>(b[0]));
  out.name = name_of(mainline_clients, out.code);
  out.version = std::move(version);
  return true;
}

bool shadow(const std::uint8_t* b, client_info& out) {
  if (!is_upper(b[0])) return false;
  // Version characters in bytes 1..5, then only '-' up to byte 8 included.
  std::size_t end = 1;
  while (end <= 5 && shadow_value(b[end]) >= 0) ++end;
  if (end == 1) return false;
  for (std::size_t i = end; i <= 8; ++i) {
    if (b[i] != '-') return false;
  }
  out.style = client_info::style::shadow;
  out.code.assign(1, static_cast<char>(b[0]));
  out.name = name_of(shadow_clients, out.code);
  out.version.clear();
  for (std::size_t i = 1; i < end; ++i) {
    if (i > 1) out.version += '.';
    out.version += std::to_string(shadow_value(b[i]));
  }
  return true;
}

bool special(const std::uint8_t* b, client_info& out) {
  // Old BitComet (and its BitLord / BitSpirit relatives): "exbc", "FUTB" or
  // "xUTB", then the version as two raw bytes (major, minor).
  if (std::memcmp(b, "exbc", 4) == 0 || std::memcmp(b, "FUTB", 4) == 0 ||
      std::memcmp(b, "xUTB", 4) == 0) {
    out.style = client_info::style::special;
    out.code = "BC";
    out.name = "BitComet";
    const std::string minor = std::to_string(b[5]);
    out.version = std::to_string(b[4]) + '.' + (minor.size() < 2 ? "0" + minor : minor);
    return true;
  }
  // Tixati: "TIX" and four digits: "TIX0283" = 2.83.
  if (std::memcmp(b, "TIX", 3) == 0 && is_digit(b[3]) && is_digit(b[4]) && is_digit(b[5]) &&
      is_digit(b[6])) {
    out.style = client_info::style::special;
    out.code = "TIX";
    out.name = "Tixati";
    const int major = (b[3] - '0') * 10 + (b[4] - '0');
    out.version = std::to_string(major) + '.' + static_cast<char>(b[5]) + static_cast<char>(b[6]);
    return true;
  }
  return false;
}

bool has_control(std::string_view s) noexcept {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

/// `s` with control bytes, bytes >= 0x7f, '"' and every byte in `also`
/// written as %XX.
std::string percent_escape(std::string_view s, std::string_view also) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || also.find(c) != std::string_view::npos) {
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

/// Printable form of a (possibly binary) text for error messages, with the
/// spec's own escapes; `escape_percent` for decoded bytes (so the result reads
/// as spec text), not for text the operator wrote.
std::string printable(std::string_view s, bool escape_percent = true) {
  return percent_escape(s, escape_percent ? "%" : "");
}

}  // namespace

std::string client_info::to_string() const {
  if (version.empty()) return name;
  return name + ' ' + version;
}

client_info identify_client(const peer_id& id) {
  client_info out;
  const std::uint8_t* b = id.bytes.data();
  // Order matters: "exbc" would never match the others, but "M4-3-6--" is not
  // Shadow only because Shadow wants '-' padding through byte 8, and "TIX..."
  // is checked before Shadow so Tixati's letters are not read as a version.
  if (azureus(b, out) || special(b, out) || mainline(b, out) || shadow(b, out)) {
    return out;
  }
  out = client_info{};
  out.name = "unknown";
  return out;
}

bool client_ban_list::add(std::string prefix, std::string reason) {
  if (prefix.empty() || prefix.size() > peer_id::size) return false;
  if (reason.empty() || reason.size() > max_reason_length || has_control(reason)) return false;
  for (const auto& r : rules_) {
    if (r.prefix == prefix) return false;
  }
  rules_.push_back({std::move(prefix), std::move(reason)});
  return true;
}

bool client_ban_list::remove(std::string_view prefix) {
  const auto it = std::find_if(rules_.begin(), rules_.end(),
                               [&](const ban_rule& r) { return r.prefix == prefix; });
  if (it == rules_.end()) return false;
  rules_.erase(it);
  return true;
}

const ban_rule* client_ban_list::match(const peer_id& id) const noexcept {
  const std::string_view raw = id.view();
  const ban_rule* best = nullptr;
  for (const auto& r : rules_) {
    if ((best == nullptr || r.prefix.size() > best->prefix.size()) &&
        raw.compare(0, r.prefix.size(), r.prefix) == 0) {
      best = &r;
    }
  }
  return best;
}

std::optional<client_ban_list> client_ban_list::parse(std::string_view spec, std::string* error) {
  client_ban_list list;
  std::size_t number = 0;
  auto fail = [&](std::string_view shown, const std::string& what) {
    if (error != nullptr) {
      *error =
          "ban rule " + std::to_string(number) + " (\"" + printable(shown, false) + "\"): " + what;
    }
    return std::nullopt;
  };
  while (true) {
    const std::size_t semi = spec.find(';');
    const std::string_view rule = trim(spec.substr(0, semi));
    if (!rule.empty()) {
      ++number;
      const std::size_t eq = rule.find('=');
      const std::string_view raw_prefix = trim(rule.substr(0, eq));
      if (eq == std::string_view::npos) return fail(rule, "missing '=reason'");
      const std::string_view reason = trim(rule.substr(eq + 1));
      std::string prefix;
      for (std::size_t i = 0; i < raw_prefix.size(); ++i) {
        if (raw_prefix[i] != '%') {
          prefix += raw_prefix[i];
          continue;
        }
        const int hi = i + 2 < raw_prefix.size() ? hex_digit(raw_prefix[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_digit(raw_prefix[i + 2]) : -1;
        if (lo < 0) return fail(raw_prefix, "'%' must be followed by two hex digits");
        prefix += static_cast<char>(hi * 16 + lo);
        i += 2;
      }
      if (prefix.empty()) return fail(raw_prefix, "empty prefix");
      if (prefix.size() > peer_id::size) {
        return fail(raw_prefix,
                    "prefix is " + std::to_string(prefix.size()) + " bytes, a peer_id has only 20");
      }
      if (reason.empty()) return fail(raw_prefix, "missing reason after '='");
      if (reason.size() > max_reason_length) {
        return fail(raw_prefix,
                    "reason longer than " + std::to_string(max_reason_length) + " bytes");
      }
      if (has_control(reason)) return fail(raw_prefix, "reason has control characters");
      for (const auto& r : list.rules_) {
        if (r.prefix == prefix) {
          return fail(raw_prefix, "prefix \"" + printable(prefix) + "\" is listed twice");
        }
      }
      list.rules_.push_back({std::move(prefix), std::string(reason)});
    }
    if (semi == std::string_view::npos) break;
    spec.remove_prefix(semi + 1);
  }
  return list;
}

std::string escape_ban_prefix(std::string_view raw) {
  // '=' and ';' separate rules in the `clients.banned` notation.
  return percent_escape(raw, "%=;");
}

std::optional<std::string> parse_ban_prefix(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& what) -> std::optional<std::string> {
    if (error != nullptr) *error = what;
    return std::nullopt;
  };
  std::string prefix;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      prefix += text[i];
      continue;
    }
    const int hi = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_digit(text[i + 2]) : -1;
    if (lo < 0) return fail("prefix: '%' must be followed by two hex digits");
    prefix += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (prefix.empty()) return fail("prefix must not be empty");
  if (prefix.size() > peer_id::size)
    return fail("prefix is " + std::to_string(prefix.size()) + " bytes, a peer_id has only 20");
  return prefix;
}

live_ban_list::add_result live_ban_list::add(std::string prefix, std::string reason) {
  std::lock_guard<std::mutex> lock{write_mutex_};
  auto current = cell_.load();
  for (const auto& r : current->rules())
    if (r.prefix == prefix) return add_result::exists;
  client_ban_list next = *current;
  if (!next.add(std::move(prefix), std::move(reason))) return add_result::invalid;
  cell_.store(std::make_shared<const client_ban_list>(std::move(next)));
  return add_result::added;
}

bool live_ban_list::remove(std::string_view prefix) {
  std::lock_guard<std::mutex> lock{write_mutex_};
  client_ban_list next = *cell_.load();
  if (!next.remove(prefix)) return false;
  cell_.store(std::make_shared<const client_ban_list>(std::move(next)));
  return true;
}

}  // namespace sk
