#include "protocol/announce.hpp"

#include <cstring>

#include "protocol/text.hpp"

// Query-string rules (HTTP announce and scrape):
//
//   query  = pair *( "&" pair )      empty pairs ("&&") are skipped
//   pair   = name [ "=" value ]      a name without "=" has the empty value
//
// Names and values are decoded as application/x-www-form-urlencoded, the way
// browsers and every form encoder (Python urlencode, Go url.Values, PHP
// http_build_query, Java URLEncoder) produce them: "%XX" is the byte 0xXX
// (either case of hex), "+" is a space, every other byte stands for itself.
// Those encoders write a real '+' as "%2B", and the BitTorrent clients
// (libtorrent, Transmission, uTorrent) escape both '+' and ' ', so reading
// '+' as a space never misreads a hash from them. A '%' not followed by two
// hex digits is `bad_escape` — but only in a parameter we use: unknown
// parameters are skipped without being decoded.
//
// Values are validated strictly; see `failure_text` for each error. The
// first error found (left to right) wins; missing parameters are checked
// after the whole query was read, in the order info_hash, peer_id, port.
//
// Decisions beyond the BEPs:
// - Numbers are ASCII decimal digits only (no sign, space or hex; leading
//   zeros are tolerated); beyond UINT64_MAX is an error, not a clamp.
// - numwant: any negative number (clients send -1) means "no preference"
//   and yields -1; values above `max_numwant` are clamped to it.
// - event: "" and "empty" are a regular announce (BEP 3); "paused" is BEP
//   21's partial seed (`announce_event::paused`).
// - ip: an empty value is the same as no `ip`; a host name is `bad_ip`.
// - A single-valued parameter repeated with the same value (as parsed, so
//   port=6881 and port=06881 agree) is accepted; a different value is
//   `duplicate_parameter`.
// - uploaded, downloaded and left default to 0 when absent (BEP 3 calls them
//   required, but the error set has no "missing" code for them and many
//   trackers accept their absence).

namespace sk {

namespace {

class query_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "sk.query"; }
  std::string message(int ev) const override {
    return std::string(failure_text(static_cast<query_error>(ev)));
  }
};

/// Decodes `in` into `out[0..cap)`. Returns false on a bad escape. `length`
/// is the full decoded length even when it exceeds `cap` (the excess is not
/// written), so callers can tell "too long" from "fits".
bool form_decode(std::string_view in, char* out, std::size_t cap, std::size_t& length) noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (in.size() - i < 3) return false;
      const int hi = hex_digit(in[i + 1]);
      const int lo = hex_digit(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      c = static_cast<char>(hi << 4 | lo);
      i += 2;
    } else if (c == '+') {
      c = ' ';
    }
    if (n < cap) out[n] = c;
    ++n;
  }
  length = n;
  return true;
}

/// Decodes into a std::string, reusing its capacity.
bool form_decode(std::string_view in, std::string& out) {
  out.resize(in.size());  // decoding never lengthens
  std::size_t n = 0;
  if (!form_decode(in, out.data(), out.size(), n)) {
    out.clear();
    return false;
  }
  out.resize(n);
  return true;
}

/// Strict unsigned decimal: one or more ASCII digits, no sign, no spaces.
bool parse_u64(std::string_view s, std::uint64_t& out) noexcept {
  if (s.empty()) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;  // overflow
    v = v * 10 + d;
  }
  out = v;
  return true;
}

/// The parameters we read, one bit each in the `seen` mask.
enum class param : std::uint8_t {
  info_hash,
  peer_id,
  port,
  uploaded,
  downloaded,
  left,
  numwant,
  compact,
  no_peer_id,
  event,
  key,
  trackerid,
  ip,
  unknown,
};

param classify(std::string_view raw_name) noexcept {
  // Clients never escape names, but nothing forbids it: decode when needed.
  char buf[16];
  std::string_view name = raw_name;
  if (raw_name.find_first_of("%+") != std::string_view::npos) {
    std::size_t n = 0;
    if (!form_decode(raw_name, buf, sizeof buf, n) || n > sizeof buf) return param::unknown;
    name = std::string_view(buf, n);
  }
  switch (name.size()) {
    case 2:
      if (name == "ip") return param::ip;
      break;
    case 3:
      if (name == "key") return param::key;
      break;
    case 4:
      if (name == "port") return param::port;
      if (name == "left") return param::left;
      break;
    case 5:
      if (name == "event") return param::event;
      break;
    case 7:
      if (name == "peer_id") return param::peer_id;
      if (name == "numwant") return param::numwant;
      if (name == "compact") return param::compact;
      break;
    case 8:
      if (name == "uploaded") return param::uploaded;
      break;
    case 9:
      if (name == "info_hash") return param::info_hash;
      if (name == "trackerid") return param::trackerid;
      break;
    case 10:
      if (name == "downloaded") return param::downloaded;
      if (name == "no_peer_id") return param::no_peer_id;
      break;
    default:
      break;
  }
  return param::unknown;
}

/// Calls `fn(name, value)` for each pair; stops at the first non-ok result.
template <class Fn>
query_error for_each_pair(std::string_view query, Fn&& fn) {
  std::size_t i = 0;
  while (i < query.size()) {
    std::size_t amp = query.find('&', i);
    if (amp == std::string_view::npos) amp = query.size();
    const std::string_view pair = query.substr(i, amp - i);
    i = amp + 1;
    if (pair.empty()) continue;
    const std::size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (const query_error e = fn(name, value); e != query_error::ok) return e;
  }
  return query_error::ok;
}

/// Decodes a 20-byte id; `bad_length` when it is not exactly 20 bytes.
query_error decode_id20(std::string_view value, std::uint8_t (&out)[20], query_error bad_length) {
  std::size_t n = 0;
  if (!form_decode(value, reinterpret_cast<char*>(out), 20, n)) return query_error::bad_escape;
  return n == 20 ? query_error::ok : bad_length;
}

/// Decodes a short value (numbers, flags, event names) into a stack buffer;
/// anything longer than `cap` decoded bytes is reported as `too_long`.
enum class short_result { ok, bad_escape, too_long };
short_result decode_short(std::string_view value, char* buf, std::size_t cap,
                          std::string_view& out) noexcept {
  std::size_t n = 0;
  if (!form_decode(value, buf, cap, n)) return short_result::bad_escape;
  if (n > cap) return short_result::too_long;
  out = std::string_view(buf, n);
  return short_result::ok;
}

}  // namespace

const std::error_category& query_category() noexcept {
  static const query_category_impl instance;
  return instance;
}

std::error_code make_error_code(query_error e) noexcept {
  return {static_cast<int>(e), query_category()};
}

std::string_view failure_text(query_error e) noexcept {
  switch (e) {
    case query_error::ok:
      return "no error";
    case query_error::query_too_long:
      return "query string too long";
    case query_error::bad_escape:
      return "malformed percent-escape in query string";
    case query_error::missing_info_hash:
      return "missing info_hash";
    case query_error::bad_info_hash_length:
      return "info_hash must be exactly 20 bytes";
    case query_error::missing_peer_id:
      return "missing peer_id";
    case query_error::bad_peer_id_length:
      return "peer_id must be exactly 20 bytes";
    case query_error::missing_port:
      return "missing port";
    case query_error::bad_port:
      return "port must be a decimal number from 1 to 65535";
    case query_error::port_zero:
      return "port 0 is not a valid listening port";
    case query_error::bad_uploaded:
      return "uploaded must be a non-negative decimal number of bytes";
    case query_error::bad_downloaded:
      return "downloaded must be a non-negative decimal number of bytes";
    case query_error::bad_left:
      return "left must be a non-negative decimal number of bytes";
    case query_error::bad_numwant:
      return "numwant must be a decimal number";
    case query_error::bad_compact:
      return "compact must be 0 or 1";
    case query_error::bad_no_peer_id:
      return "no_peer_id must be 0 or 1";
    case query_error::unknown_event:
      return "event must be started, completed, stopped, paused or empty";
    case query_error::bad_ip:
      return "ip must be an IPv4 or IPv6 address";
    case query_error::duplicate_parameter:
      return "a parameter was given twice with different values";
    case query_error::too_many_scrape_hashes:
      return "too many info_hash values in one scrape";
  }
  return "invalid request";
}

query_error parse_announce_query(std::string_view query, const query_limits& limits,
                                 announce_request& out) {
  // Reset field by field: assigning a fresh request would drop the
  // capacity of key/tracker_id, and reusing it keeps this allocation-free.
  out.hash = {};
  out.id = {};
  out.port = 0;
  out.uploaded = out.downloaded = out.left = 0;
  out.numwant = -1;
  out.event = announce_event::none;
  out.compact = true;
  out.no_peer_id = false;
  out.key.clear();
  out.tracker_id.clear();
  out.claimed_ip.reset();

  if (query.size() > limits.max_query_length) return query_error::query_too_long;

  std::uint32_t seen = 0;
  // First sighting: record the value. Later sightings: same value is fine
  // (some clients repeat parameters verbatim), a different one is an error.
  auto first_time = [&seen](param p) {
    const std::uint32_t bit = 1u << static_cast<unsigned>(p);
    const bool first = (seen & bit) == 0;
    seen |= bit;
    return first;
  };

  // Numbers and flags: at most this many decoded bytes; more cannot be a
  // valid value (20 digits is UINT64_MAX; leading zeros are tolerated up to
  // this length).
  constexpr std::size_t short_cap = 32;

  // Decodes a number/flag value into `buf`; a value too long to be valid is
  // the parameter's own error `bad`.
  auto short_value = [](std::string_view value, char* buf, std::size_t cap, query_error bad,
                        std::string_view& text) {
    switch (decode_short(value, buf, cap, text)) {
      case short_result::bad_escape:
        return query_error::bad_escape;
      case short_result::too_long:
        return bad;
      case short_result::ok:
        break;
    }
    return query_error::ok;
  };
  // Stores `v` on the parameter's first sighting; a repeat must agree.
  auto set_once = [&first_time](param p, auto& dest, auto v) {
    if (first_time(p)) {
      dest = v;
      return query_error::ok;
    }
    return dest == v ? query_error::ok : query_error::duplicate_parameter;
  };

  const query_error err =
      for_each_pair(query, [&](std::string_view name, std::string_view value) -> query_error {
        const param p = classify(name);
        switch (p) {
          case param::unknown:
            return query_error::ok;

          case param::info_hash:
          case param::peer_id: {
            const bool is_hash = p == param::info_hash;
            std::uint8_t raw[20];
            const query_error e = decode_id20(
                value, raw,
                is_hash ? query_error::bad_info_hash_length : query_error::bad_peer_id_length);
            if (e != query_error::ok) return e;
            auto& dest = is_hash ? out.hash.bytes : out.id.bytes;
            if (first_time(p)) {
              std::memcpy(dest.data(), raw, 20);
            } else if (std::memcmp(dest.data(), raw, 20) != 0) {
              return query_error::duplicate_parameter;
            }
            return query_error::ok;
          }

          case param::port:
          case param::uploaded:
          case param::downloaded:
          case param::left: {
            query_error bad = query_error::bad_port;
            if (p == param::uploaded) bad = query_error::bad_uploaded;
            if (p == param::downloaded) bad = query_error::bad_downloaded;
            if (p == param::left) bad = query_error::bad_left;
            char buf[short_cap];
            std::string_view text;
            if (const query_error e = short_value(value, buf, sizeof buf, bad, text);
                e != query_error::ok)
              return e;
            std::uint64_t v = 0;
            if (!parse_u64(text, v)) return bad;  // also catches '-' and overflow
            if (p == param::port) {
              if (v == 0) return query_error::port_zero;
              if (v > 65535) return query_error::bad_port;
            }
            if (p == param::port) return set_once(p, out.port, static_cast<std::uint16_t>(v));
            std::uint64_t& dest = p == param::uploaded     ? out.uploaded
                                  : p == param::downloaded ? out.downloaded
                                                           : out.left;
            return set_once(p, dest, v);
          }

          case param::numwant: {
            char buf[short_cap];
            std::string_view text;
            if (const query_error e =
                    short_value(value, buf, sizeof buf, query_error::bad_numwant, text);
                e != query_error::ok)
              return e;
            // Negative numbers (clients send -1) mean "no preference": default.
            std::int32_t n = -1;
            std::uint64_t v = 0;
            if (!text.empty() && text[0] == '-') {
              if (!parse_u64(text.substr(1), v)) return query_error::bad_numwant;
            } else {
              if (!parse_u64(text, v)) return query_error::bad_numwant;
              const auto cap =
                  static_cast<std::uint64_t>(limits.max_numwant < 0 ? 0 : limits.max_numwant);
              n = static_cast<std::int32_t>(v < cap ? v : cap);
            }
            return set_once(p, out.numwant, n);
          }

          case param::compact:
          case param::no_peer_id: {
            const query_error bad =
                p == param::compact ? query_error::bad_compact : query_error::bad_no_peer_id;
            char buf[short_cap];
            std::string_view text;
            if (const query_error e = short_value(value, buf, sizeof buf, bad, text);
                e != query_error::ok)
              return e;
            if (text != "0" && text != "1") return bad;
            const bool v = text == "1";
            return set_once(p, p == param::compact ? out.compact : out.no_peer_id, v);
          }

          case param::event: {
            char buf[short_cap];
            std::string_view text;
            if (const query_error e =
                    short_value(value, buf, sizeof buf, query_error::unknown_event, text);
                e != query_error::ok)
              return e;
            announce_event ev;
            if (text == "started") {
              ev = announce_event::started;
            } else if (text == "completed") {
              ev = announce_event::completed;
            } else if (text == "stopped") {
              ev = announce_event::stopped;
            } else if (text == "paused") {
              ev = announce_event::paused;
            } else if (text.empty() || text == "empty") {
              // BEP 3: empty = a regular announce.
              ev = announce_event::none;
            } else {
              return query_error::unknown_event;
            }
            return set_once(p, out.event, ev);
          }

          case param::key:
          case param::trackerid: {
            std::string& dest = p == param::key ? out.key : out.tracker_id;
            if (first_time(p))
              return form_decode(value, dest) ? query_error::ok : query_error::bad_escape;
            // A repeat: rare, so a temporary string is fine here.
            std::string again;
            if (!form_decode(value, again)) return query_error::bad_escape;
            return again == dest ? query_error::ok : query_error::duplicate_parameter;
          }

          case param::ip: {
            char buf[ip_address::max_text_length];
            std::string_view text;
            if (const query_error e =
                    short_value(value, buf, sizeof buf, query_error::bad_ip, text);
                e != query_error::ok)
              return e;
            if (text.empty()) return query_error::ok;  // "ip=" is the same as no ip
            ip_address addr;
            if (!ip_address::parse(text, addr)) return query_error::bad_ip;
            if (first_time(p)) {
              out.claimed_ip = addr;
            } else if (*out.claimed_ip != addr) {
              return query_error::duplicate_parameter;
            }
            return query_error::ok;
          }
        }
        return query_error::ok;
      });
  if (err != query_error::ok) return err;

  auto has = [&seen](param p) { return (seen & (1u << static_cast<unsigned>(p))) != 0; };
  if (!has(param::info_hash)) return query_error::missing_info_hash;
  if (!has(param::peer_id)) return query_error::missing_peer_id;
  if (!has(param::port)) return query_error::missing_port;
  return query_error::ok;
}

query_error parse_scrape_query(std::string_view query, const query_limits& limits,
                               std::vector<info_hash>& out) {
  out.clear();
  if (query.size() > limits.max_query_length) return query_error::query_too_long;
  return for_each_pair(query, [&](std::string_view name, std::string_view value) {
    if (classify(name) != param::info_hash) return query_error::ok;
    std::uint8_t raw[20];
    const query_error e = decode_id20(value, raw, query_error::bad_info_hash_length);
    if (e != query_error::ok) return e;
    if (out.size() >= limits.max_scrape_hashes) return query_error::too_many_scrape_hashes;
    info_hash h;
    std::memcpy(h.bytes.data(), raw, 20);
    out.push_back(h);
    return query_error::ok;
  });
}

}  // namespace sk
