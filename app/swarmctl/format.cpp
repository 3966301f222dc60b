#include "app/swarmctl/format.hpp"

#include <algorithm>
#include <ctime>

#include "app/swarmctl/options.hpp"

namespace sk::swarmctl {

using json = nlohmann::json;

namespace {

const json& member(const json& j, const char* key) {
  static const json null_value;
  if (!j.is_object()) return null_value;
  auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

const json& array_of(const json& j, const char* key) {
  static const json empty = json::array();
  const json& v = member(j, key);
  return v.is_array() ? v : empty;
}

/// `s` or "-" when empty (an empty cell would hide a column's value).
std::string or_dash(std::string s) { return s.empty() ? "-" : s; }

}  // namespace

// -- renderers ----------------------------------------------------------------------

std::string render_node(const json& j, bool with_config, const style& st) {
  key_values kv;
  kv.add("node", field(j, "node"));
  kv.add("version", field(j, "version"));
  kv.add("uptime", duration_text(member(j, "uptime_seconds"), st));
  const json& actors = member(j, "actors");
  kv.add("swarms", field(actors, "swarms"));
  kv.add("actors running", field(actors, "running"));
  kv.add("scheduler threads", field(j, "scheduler_threads"));
  kv.add("resident memory", bytes_text(member(member(j, "memory"), "resident_bytes"), st));
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
    out += t.render(st.width);
  }
  return out;
}

std::string render_swarms(const json& j, const style& st) {
  const json& list = array_of(j, "swarms");
  const json& total = member(j, "total");
  std::string out;
  if (list.empty()) {
    out = total.is_number() && total.get<double>() > 0
              ? "no swarms in this page (" + field(j, "total") + " match; lower --offset)\n"
              : "no swarms\n";
  } else {
    text_table t{{hash_column(),
                  {"PEERS", text_table::align::right},
                  {"SEEDERS", text_table::align::right},
                  {"LEECHERS", text_table::align::right},
                  {"RATE", text_table::align::right},
                  {"HEALTH"},
                  {"REASONS"},
                  {"POLICY"}}};
    for (const auto& s : list) {
      t.add({field(s, "hash"), field(s, "peers"), field(s, "seeders"), field(s, "leechers"),
             rate_text(member(s, "announce_rate"), st), field(s, "health"),
             or_dash(field(s, "reasons")), field(s, "policy")});
    }
    out = t.render(st.width);
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

std::string render_swarm(const json& j, const style& st) {
  key_values kv;
  kv.add("hash", field(j, "hash"));
  const std::string reasons = field(j, "reasons");
  kv.add("health", field(j, "health") + (reasons.empty() || reasons == "-" ? "" : " (" + reasons + ")"));
  kv.add("policy", field(j, "policy"));
  kv.add("peers", field(j, "peers") + " (" + field(j, "seeders") + " seeders, " +
                      field(j, "leechers") + " leechers)");
  // The scrape's "downloaded": how many peers completed, not bytes.
  kv.add("completed", field(j, "downloaded") + " downloads");
  kv.add("announce rate", rate_text(member(j, "announce_rate"), st));
  const json& interval = member(j, "interval");
  if (interval.is_object())
    kv.add("interval", duration_text(member(interval, "scaled_seconds"), st) + " (base " +
                           duration_text(member(interval, "base_seconds"), st) + ", min " +
                           duration_text(member(interval, "min_seconds"), st) + ")");
  const json& hd = member(j, "health_detail");
  if (hd.is_object()) {
    kv.add("stalled / quarantined", field(hd, "stalled") + " / " + field(hd, "quarantined"));
    kv.add("completion rate", rate_text(member(hd, "completion_rate"), st, "/h"));
    kv.add("progress p25/med/p75", percent_text(member(hd, "progress_p25"), st) + " / " +
                                       percent_text(member(hd, "progress_median"), st) + " / " +
                                       percent_text(member(hd, "progress_p75"), st));
    const std::string age = duration_text(member(hd, "age_seconds"), st);
    kv.add("evaluated", age == "-" ? "never" : age + " ago");
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
    // At 80 columns an IPv4 address stays whole; the peer_id (the client
    // column names it) and the client's name give way first.
    text_table t{{{"ADDRESS", text_table::align::left, 15},
                  {"PORT", text_table::align::right},
                  {"CLIENT", text_table::align::left, 8},
                  {"ROLE"},
                  {"LEFT", text_table::align::right},
                  {"DONE", text_table::align::right},
                  {"ANNOUNCES", text_table::align::right},
                  {"FLAGS"},
                  {"PEER_ID", text_table::align::left, 9}}};
    for (const auto& p : peers) {
      const json& seeder = member(p, "seeder");
      const std::string role =
          seeder.is_boolean() ? (seeder.get<bool>() ? "seeder" : "leecher") : "-";
      t.add({field(p, "address"), field(p, "port"), field(p, "client"), role,
             bytes_text(member(p, "left"), st), percent_text(member(p, "progress"), st),
             field(p, "announces"), or_dash(field(p, "flags")), field(p, "peer_id")});
    }
    out += t.render(st.width);
  }
  const json& history = array_of(j, "remediation_history");
  if (!history.empty()) {
    out += "\nremediation history:\n";
    text_table t{{{"AGE", text_table::align::right}, {"ACTION"}, {"STRATEGY"}, {"REASON"}, {"DETAIL"}}};
    for (const auto& r : history)
      t.add({duration_text(member(r, "age_seconds"), st), field(r, "action"),
             field(r, "strategy"), field(r, "reason"), field(r, "detail")});
    out += t.render(st.width);
  }
  return out;
}

namespace {

std::string events_table(const json& events, const style& st) {
  text_table t{{{"AGE", text_table::align::right}, hash_column(), {"KIND"}, {"DETAIL"}}};
  for (const auto& e : events)
    t.add({duration_text(member(e, "age_seconds"), st), field(e, "hash"), field(e, "kind"),
           field(e, "detail")});
  return t.render(st.width);
}

}  // namespace

std::string render_remediations(const json& j, const style& st) {
  std::string out;
  const json& active = array_of(j, "active");
  if (active.empty()) {
    out += "no active remediations\n";
  } else {
    out += "active remediations:\n";
    text_table t{{hash_column(),
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
               duration_text(member(a, "age_seconds"), st) + " ago)";
      }
      t.add({field(r, "hash"), field(r, "health"), or_dash(field(r, "reasons")), field(r, "policy"),
             std::to_string(actions.size()), last});
    }
    out += t.render(st.width);
  }
  const json& recent = array_of(j, "recent");
  out += "\n";
  if (recent.empty()) {
    out += "no recent remediation events\n";
  } else {
    out += "recent remediation events:\n" + events_table(recent, st);
  }
  return out;
}

std::string render_events(const json& j, const style& st) {
  const json& events = array_of(j, "events");
  if (events.empty()) return "no supervisor events\n";
  return events_table(events, st);
}

std::string render_bans(const json& j, const style& st) {
  const json& bans = array_of(j, "bans");
  if (bans.empty()) return "no bans\n";
  text_table t{{{"PREFIX"}, {"REASON"}}};
  for (const auto& b : bans) t.add({field(b, "prefix"), field(b, "reason")});
  return t.render(st.width);
}

std::string render_members(const json& j, const style& st) {
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
  out += t.render(st.width);
  const json& migrations = array_of(j, "migrations");
  if (enabled.is_boolean() && !enabled.get<bool>()) return out;
  out += "\n";
  const json& pending = member(j, "handoffs_pending");
  if (pending.is_number() && pending.get<double>() > 0)
    out += value_text(pending) + " swarms being handed over now\n";
  if (migrations.empty()) return out + "no migrations recorded\n";
  text_table m{{{"FINISHED (UTC)"}, {"FROM"}, {"TO"}, hash_column(), {"REASON"},
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
  return out + m.render(st.width);
}

std::string render_access(const json& j, const style& /*st*/) {
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
      out += "... and " +
             value_text(count.get<double>() - static_cast<double>(hashes.size())) + " more\n";
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
