#include "app/swarmctl/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "app/swarmctl/options.hpp"

namespace sk::swarmctl {

using json = nlohmann::json;

// -- text_table -------------------------------------------------------------------

text_table::text_table(std::vector<column> columns) : columns_(std::move(columns)) {}

void text_table::add(std::vector<std::string> cells) {
  if (cells.size() > columns_.size())
    throw std::invalid_argument("text_table: row has more cells than columns");
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string text_table::render() const {
  std::vector<std::size_t> width(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) width[c] = columns_[c].title.size();
  for (const auto& row : rows_)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      const std::string& cell = cells[c];
      const std::size_t pad = width[c] - cell.size();
      if (c > 0) l += "  ";
      if (columns_[c].alignment == align::right) {
        l.append(pad, ' ');
        l += cell;
      } else {
        l += cell;
        l.append(pad, ' ');
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l;
    out += '\n';
  };
  std::vector<std::string> titles;
  for (const auto& c : columns_) titles.push_back(c.title);
  line(titles);
  for (const auto& row : rows_) line(row);
  return out;
}

// -- values -------------------------------------------------------------------------

namespace {

const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

std::string number_text(double v) {
  if (!std::isfinite(v)) return "-";
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::ostringstream os;
    os << static_cast<long long>(v);
    return os.str();
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

const json& array_of(const json& j, const char* key) {
  static const json empty = json::array();
  const json& v = member(j, key);
  return v.is_array() ? v : empty;
}

/// `s` or "-" when empty (an empty cell would hide a column's value).
std::string or_dash(std::string s) { return s.empty() ? "-" : s; }

/// The first `n` characters of `s` (for wide cells such as detail texts).
std::string clip(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 3) + "...";
}

/// A "key: value" block with aligned values.
class key_values {
 public:
  void add(std::string key, std::string value) { rows_.emplace_back(std::move(key), std::move(value)); }
  std::string render() const {
    std::size_t w = 0;
    for (const auto& r : rows_) w = std::max(w, r.first.size());
    std::string out;
    for (const auto& [k, v] : rows_) {
      out += k + ":";
      out.append(w - k.size() + 1, ' ');
      out += v;
      while (!out.empty() && out.back() == ' ') out.pop_back();
      out += '\n';
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

}  // namespace

std::string value_text(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number()) return number_text(v.get<double>());
  if (v.is_array()) {
    std::string out;
    for (const auto& e : v) out += (out.empty() ? "" : ",") + value_text(e);
    return out;
  }
  return v.dump();
}

std::string field(const json& j, const char* key) { return value_text(member(j, key)); }

std::string duration_text(const json& seconds) {
  if (!seconds.is_number()) return "-";
  const double s = seconds.get<double>();
  if (!std::isfinite(s) || s < 0) return "-";
  char buf[64];
  if (s < 10 && s != std::floor(s)) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
    return buf;
  }
  const auto total = static_cast<long long>(s);
  const long long d = total / 86400, h = total % 86400 / 3600, m = total % 3600 / 60,
                  sec = total % 60;
  if (d > 0)
    std::snprintf(buf, sizeof buf, "%lldd %02lldh", d, h);
  else if (h > 0)
    std::snprintf(buf, sizeof buf, "%lldh %02lldm", h, m);
  else if (m > 0)
    std::snprintf(buf, sizeof buf, "%lldm %02llds", m, sec);
  else
    std::snprintf(buf, sizeof buf, "%llds", sec);
  return buf;
}

std::string bytes_text(const json& bytes) {
  if (!bytes.is_number()) return "-";
  double b = bytes.get<double>();
  if (!std::isfinite(b) || b < 0) return "-";
  if (b < 1024) return number_text(std::floor(b)) + " B";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  int u = -1;
  while (b >= 1024 && u < 3) {
    b /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s", b, units[u]);
  return buf;
}

std::string percent_text(const json& fraction) {
  if (!fraction.is_number()) return "-";
  const double f = fraction.get<double>();
  if (!std::isfinite(f)) return "-";
  return number_text(std::round(f * 100)) + "%";
}

// -- renderers ----------------------------------------------------------------------

std::string render_node(const json& j, bool with_config) {
  key_values kv;
  kv.add("node", field(j, "node"));
  kv.add("version", field(j, "version"));
  kv.add("uptime", duration_text(member(j, "uptime_seconds")));
  const json& actors = member(j, "actors");
  kv.add("swarms", field(actors, "swarms"));
  kv.add("actors running", field(actors, "running"));
  kv.add("scheduler threads", field(j, "scheduler_threads"));
  kv.add("resident memory", bytes_text(member(member(j, "memory"), "resident_bytes")));
  const json& req = member(j, "requests");
  if (const json& udp = member(req, "udp"); udp.is_object()) {
    kv.add("udp requests", "received " + field(udp, "received") + ", announces " +
                               field(udp, "announces") + ", scrapes " + field(udp, "scrapes") +
                               ", connects " + field(udp, "connects") + ", errors " +
                               field(udp, "error_replies") + ", dropped " + field(udp, "dropped"));
  }
  if (const json& h = member(req, "http"); h.is_object())
    kv.add("http connections", field(h, "connections"));
  if (const json& a = member(req, "admin"); a.is_object()) {
    kv.add("admin requests", "ok " + field(a, "ok") + ", client errors " +
                                 field(a, "client_errors") + ", server errors " +
                                 field(a, "server_errors") + ", unauthorized " +
                                 field(a, "unauthorized"));
  }
  std::string out = kv.render();
  const json& config = member(j, "config");
  if (with_config && config.is_object()) {
    out += "\nconfiguration:\n";
    text_table t{{{"OPTION"}, {"VALUE"}}};
    for (auto it = config.begin(); it != config.end(); ++it) t.add({it.key(), value_text(*it)});
    out += t.render();
  }
  return out;
}

std::string render_swarms(const json& j) {
  const json& list = array_of(j, "swarms");
  const json& total = member(j, "total");
  std::string out;
  if (list.empty()) {
    out = total.is_number() && total.get<double>() > 0
              ? "no swarms in this page (" + field(j, "total") + " match; lower --offset)\n"
              : "no swarms\n";
  } else {
    text_table t{{{"HASH"},
                  {"PEERS", text_table::align::right},
                  {"SEEDERS", text_table::align::right},
                  {"LEECHERS", text_table::align::right},
                  {"RATE/S", text_table::align::right},
                  {"HEALTH"},
                  {"REASONS"},
                  {"POLICY"}}};
    for (const auto& s : list) {
      t.add({field(s, "hash"), field(s, "peers"), field(s, "seeders"), field(s, "leechers"),
             field(s, "announce_rate"), field(s, "health"), or_dash(field(s, "reasons")),
             field(s, "policy")});
    }
    out = t.render();
    if (total.is_number()) {
      const double offset = member(j, "offset").is_number() ? member(j, "offset").get<double>() : 0;
      const auto first = static_cast<long long>(offset) + 1;
      const auto last = static_cast<long long>(offset) + static_cast<long long>(list.size());
      if (static_cast<double>(list.size()) < total.get<double>())
        out += "showing " + std::to_string(first) + "-" + std::to_string(last) + " of " +
               field(j, "total") + " (use --offset and --limit for more)\n";
      else
        out += field(j, "total") + (total.get<double>() == 1 ? " swarm\n" : " swarms\n");
    }
  }
  if (member(j, "truncated").is_boolean() && member(j, "truncated").get<bool>())
    out += "note: the daemon looked at only part of its swarms (admin fan-out limit)\n";
  return out;
}

std::string render_swarm(const json& j) {
  key_values kv;
  kv.add("hash", field(j, "hash"));
  const std::string reasons = field(j, "reasons");
  kv.add("health", field(j, "health") + (reasons.empty() || reasons == "-" ? "" : " (" + reasons + ")"));
  kv.add("policy", field(j, "policy"));
  kv.add("peers", field(j, "peers") + " (" + field(j, "seeders") + " seeders, " +
                      field(j, "leechers") + " leechers)");
  kv.add("downloaded", field(j, "downloaded"));
  kv.add("announce rate", field(j, "announce_rate") + "/s");
  const json& interval = member(j, "interval");
  if (interval.is_object())
    kv.add("interval", field(interval, "scaled_seconds") + " s (base " +
                           field(interval, "base_seconds") + " s, min " +
                           field(interval, "min_seconds") + " s)");
  const json& hd = member(j, "health_detail");
  if (hd.is_object()) {
    kv.add("stalled / quarantined", field(hd, "stalled") + " / " + field(hd, "quarantined"));
    kv.add("completion rate", field(hd, "completion_rate"));
    kv.add("progress p25/med/p75", percent_text(member(hd, "progress_p25")) + " / " +
                                       percent_text(member(hd, "progress_median")) + " / " +
                                       percent_text(member(hd, "progress_p75")));
    kv.add("evaluated", duration_text(member(hd, "age_seconds")) == "-"
                            ? "never"
                            : duration_text(member(hd, "age_seconds")) + " ago");
  }
  const json& knobs = member(j, "knobs");
  if (knobs.is_object())
    kv.add("knobs", "interval x" + field(knobs, "interval_scale") + ", leecher interval x" +
                        field(knobs, "leecher_interval_scale") + ", seeder warning " +
                        field(knobs, "seeder_warning") + ", strict quarantine " +
                        field(knobs, "quarantine_strict"));
  const json& counters = member(j, "counters");
  if (counters.is_object())
    kv.add("counters", "announces " + field(counters, "announces") + ", banned " +
                           field(counters, "banned") + ", refused " + field(counters, "refused") +
                           ", warned " + field(counters, "warned") + ", seeder appeals " +
                           field(counters, "seeder_appeals"));
  kv.add("owner", field(j, "owner_node") + " (actor " + field(j, "actor_id") + ")");
  std::string out = kv.render();

  const json& peers = array_of(j, "peers_listed");
  out += "\npeers";
  if (member(j, "peer_count").is_number() &&
      member(j, "peer_count").get<double>() > static_cast<double>(peers.size()))
    out += " (first " + std::to_string(peers.size()) + " of " + field(j, "peer_count") + ")";
  out += ":\n";
  if (peers.empty()) {
    out += "  none\n";
  } else {
    text_table t{{{"ADDRESS"},
                  {"PORT", text_table::align::right},
                  {"CLIENT"},
                  {"ROLE"},
                  {"LEFT", text_table::align::right},
                  {"PROGRESS", text_table::align::right},
                  {"ANNOUNCES", text_table::align::right},
                  {"FLAGS"},
                  {"PEER_ID"}}};
    for (const auto& p : peers) {
      const json& seeder = member(p, "seeder");
      const std::string role =
          seeder.is_boolean() ? (seeder.get<bool>() ? "seeder" : "leecher") : "-";
      t.add({field(p, "address"), field(p, "port"), field(p, "client"), role, field(p, "left"),
             percent_text(member(p, "progress")), field(p, "announces"),
             or_dash(field(p, "flags")), field(p, "peer_id")});
    }
    out += t.render();
  }
  const json& history = array_of(j, "remediation_history");
  if (!history.empty()) {
    out += "\nremediation history:\n";
    text_table t{{{"AGE", text_table::align::right}, {"ACTION"}, {"STRATEGY"}, {"REASON"}, {"DETAIL"}}};
    for (const auto& r : history)
      t.add({duration_text(member(r, "age_seconds")), field(r, "action"), field(r, "strategy"),
             field(r, "reason"), clip(field(r, "detail"), 80)});
    out += t.render();
  }
  return out;
}

namespace {

std::string events_table(const json& events) {
  text_table t{{{"AGE", text_table::align::right}, {"HASH"}, {"KIND"}, {"DETAIL"}}};
  for (const auto& e : events)
    t.add({duration_text(member(e, "age_seconds")), field(e, "hash"), field(e, "kind"),
           clip(field(e, "detail"), 100)});
  return t.render();
}

}  // namespace

std::string render_remediations(const json& j) {
  std::string out;
  const json& active = array_of(j, "active");
  if (active.empty()) {
    out += "no active remediations\n";
  } else {
    out += "active remediations:\n";
    text_table t{{{"HASH"},
                  {"HEALTH"},
                  {"REASONS"},
                  {"POLICY"},
                  {"ACTIONS", text_table::align::right},
                  {"LAST ACTION"}}};
    for (const auto& r : active) {
      const json& actions = array_of(r, "actions");
      std::string last = "-";
      if (!actions.empty()) {
        const json& a = actions.back();
        last = field(a, "action") + " " + field(a, "strategy") + " (" +
               duration_text(member(a, "age_seconds")) + " ago)";
      }
      t.add({field(r, "hash"), field(r, "health"), or_dash(field(r, "reasons")), field(r, "policy"),
             std::to_string(actions.size()), last});
    }
    out += t.render();
  }
  const json& recent = array_of(j, "recent");
  out += "\n";
  if (recent.empty()) {
    out += "no recent remediation events\n";
  } else {
    out += "recent remediation events:\n" + events_table(recent);
  }
  return out;
}

std::string render_events(const json& j) {
  const json& events = array_of(j, "events");
  if (events.empty()) return "no supervisor events\n";
  return events_table(events);
}

std::string render_bans(const json& j) {
  const json& bans = array_of(j, "bans");
  if (bans.empty()) return "no bans\n";
  text_table t{{{"PREFIX"}, {"REASON"}}};
  for (const auto& b : bans) t.add({field(b, "prefix"), field(b, "reason")});
  return t.render();
}

std::string render_members(const json& j) {
  std::string out;
  const json& enabled = member(j, "enabled");
  if (enabled.is_boolean() && !enabled.get<bool>())
    out += "cluster off: single node " + field(j, "node") + "\n";
  text_table t{{{"NAME"}, {"STATE"}, {"ADDRESS"}, {"SWARMS", text_table::align::right}}};
  for (const auto& m : array_of(j, "members")) {
    const json& self = member(m, "self");
    const bool me = self.is_boolean() && self.get<bool>();
    const json& swarms = member(m, "swarms");
    t.add({field(m, "name") + (me ? " *" : ""), field(m, "state"),
           or_dash(value_text(member(m, "address"))),
           swarms.is_number() ? value_text(swarms) : "unknown"});
  }
  out += t.render();
  const json& migrations = array_of(j, "migrations");
  if (enabled.is_boolean() && !enabled.get<bool>()) return out;
  out += "\n";
  const json& pending = member(j, "handoffs_pending");
  if (pending.is_number() && pending.get<double>() > 0)
    out += value_text(pending) + " swarms being handed over now\n";
  if (migrations.empty()) return out + "no migrations recorded\n";
  text_table m{{{"FINISHED (UTC)"}, {"FROM"}, {"TO"}, {"HASH"}, {"REASON"},
                {"PEERS", text_table::align::right}}};
  for (const auto& r : migrations) {
    std::string when = "-";
    const json& ms = member(r, "finished_ms");
    if (ms.is_number_unsigned()) {
      const std::time_t secs = static_cast<std::time_t>(ms.get<std::uint64_t>() / 1000);
      std::tm tm{};
      char buf[32];
      if (gmtime_r(&secs, &tm) != nullptr && std::strftime(buf, sizeof buf, "%F %T", &tm) > 0)
        when = buf;
    }
    m.add({when, or_dash(value_text(member(r, "from"))), field(r, "to"), field(r, "hash"),
           field(r, "reason"), field(r, "peers")});
  }
  return out + m.render();
}

std::string render_access(const json& j) {
  key_values kv;
  kv.add("mode", field(j, "mode"));
  kv.add("file", or_dash(field(j, "file")));
  kv.add("hashes", field(j, "count"));
  std::string out = kv.render();
  const json& hashes = array_of(j, "hashes");
  if (!hashes.empty()) {
    out += "\n";
    for (const auto& h : hashes) out += value_text(h) + "\n";
    const json& count = member(j, "count");
    if (count.is_number() && count.get<double>() > static_cast<double>(hashes.size()))
      out += "... and " + number_text(count.get<double>() - static_cast<double>(hashes.size())) +
             " more\n";
  }
  return out;
}

void collect_hashes(const json& j, std::set<std::string>& out) {
  if (j.is_array()) {
    for (const auto& e : j) collect_hashes(e, out);
    return;
  }
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if ((it.key() == "hash" || it.key() == "swarm") && it->is_string() &&
        is_info_hash(it->get<std::string>())) {
      out.insert(checked_hash(it->get<std::string>()));
    } else if (it->is_structured()) {
      collect_hashes(*it, out);
    }
  }
}

}  // namespace sk::swarmctl
