#include "app/swarmctl/commands.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "app/swarmctl/format.hpp"

namespace sk::swarmctl {

using json = nlohmann::json;

namespace {

http_request get(std::string target) { return {"GET", std::move(target), {}}; }
http_request post(std::string target, std::string body = {}) {
  return {"POST", std::move(target), std::move(body)};
}

/// The value of a flag that requires one; throws when given without '='.
std::optional<std::string> flag_value(const invocation& inv, const std::string& name) {
  auto it = inv.flags.find(name);
  if (it == inv.flags.end()) return std::nullopt;
  return it->second;
}

std::string swarms_target(const invocation& inv) {
  std::vector<std::string> query;
  const bool unhealthy = inv.flags.count("unhealthy") > 0;
  auto health = flag_value(inv, "health");
  if (unhealthy && health)
    throw usage_error("give either --unhealthy or --health=STATE, not both");
  if (unhealthy) query.push_back("health=unhealthy");
  if (health) {
    static const std::vector<std::string> states{"healthy", "degraded", "critical", "unhealthy",
                                                 "unevaluated"};
    if (std::find(states.begin(), states.end(), *health) == states.end())
      throw usage_error("--health must be one of healthy, degraded, critical, unhealthy, "
                        "unevaluated; not '" + *health + "'");
    query.push_back("health=" + *health);
  }
  if (auto sort = flag_value(inv, "sort")) {
    if (*sort != "size" && *sort != "rate" && *sort != "hash")
      throw usage_error("--sort must be size, rate or hash; not '" + *sort + "'");
    query.push_back("sort=" + *sort);
  }
  for (const char* name : {"limit", "offset"}) {
    if (auto v = flag_value(inv, name)) {
      if (!parse_count(*v))
        throw usage_error(std::string("--") + name + " must be a non-negative integer; not '" +
                          *v + "'");
      query.push_back(std::string(name) + "=" + *v);
    }
  }
  std::string target = "/api/swarms";
  for (std::size_t i = 0; i < query.size(); ++i) target += (i == 0 ? "?" : "&") + query[i];
  return target;
}

std::string join_rest(const std::vector<std::string>& args, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < args.size(); ++i) out += (i == from ? "" : " ") + args[i];
  return out;
}

std::string str(const json& j, const char* key) { return field(j, key); }

std::vector<command_spec> make_table() {
  std::vector<command_spec> t;
  using k = arg_kind;

  t.push_back({"node", "", "the node: version, uptime, swarms, memory, request counters",
               "--config also lists the effective configuration (secrets redacted).", 0, 0, {},
               {{"config", false, {}, "also print the effective configuration"}},
               [](const invocation&) { return get("/api/node"); },
               [](const json& j, const invocation& inv, const style& st) {
                 return render_node(j, inv.flags.count("config") > 0, st);
               }});
  t.push_back(
      {"swarms", "", "list swarms: hash, peers, seeders, leechers, rate, health, reasons, policy",
       "Sorted by size (peers) unless --sort says otherwise; 100 per page unless --limit.", 0, 0,
       {},
       {{"unhealthy", false, {}, "only degraded and critical swarms"},
        {"health", true, {"healthy", "degraded", "critical", "unhealthy", "unevaluated"},
         "only swarms in this state"},
        {"sort", true, {"size", "rate", "hash"}, "order: size (peers), rate (announces/s), hash"},
        {"limit", true, {}, "at most N swarms (default 100)"},
        {"offset", true, {}, "skip the first N"}},
       [](const invocation& inv) { return get(swarms_target(inv)); },
       [](const json& j, const invocation&, const style& st) { return render_swarms(j, st); }});
  t.push_back({"swarm", "<hash>", "one swarm in detail, with its peers and remediation history",
               "", 1, 1, {k::hash}, {},
               [](const invocation& inv) { return get("/api/swarms/" + checked_hash(inv.args[0])); },
               [](const json& j, const invocation&, const style& st) {
                 return render_swarm(j, st);
               }});
  t.push_back({"remediations", "", "active remediations and recent remediation events", "", 0, 0,
               {}, {}, [](const invocation&) { return get("/api/remediations"); },
               [](const json& j, const invocation&, const style& st) {
                 return render_remediations(j, st);
               }});
  t.push_back({"events", "", "supervisor events: restarts, give-ups, remediations", "", 0, 0, {},
               {}, [](const invocation&) { return get("/api/events"); },
               [](const json& j, const invocation&, const style& st) {
                 return render_events(j, st);
               }});
  t.push_back(
      {"policy", "<hash> <policy>", "pin a swarm's allocation policy (\"default\": unpin)",
       "A policy name pins it: it stays until the next change, and remediations restore it "
       "at their end instead of the config's. \"default\" unpins and returns the swarm to "
       "the configured default policy. Policies: default, adaptive, random, role-aware, "
       "seeder-rotation, stalled-boost, flash-crowd, reachability-aware, "
       "contribution-weighted (the daemon checks the name).",
       2, 2, {k::hash, k::policy}, {},
       [](const invocation& inv) {
         const std::string hash = checked_hash(inv.args[0]);
         if (inv.args[1].empty()) throw usage_error("the policy name is empty");
         return post("/api/swarms/" + hash + "/policy", json{{"policy", inv.args[1]}}.dump());
       },
       [](const json& j, const invocation&, const style&) {
         const bool pinned = j.value("pinned", false);
         const bool was_pinned = j.value("was_pinned", false);
         return "swarm " + str(j, "hash") + ": policy " + str(j, "policy") +
                (pinned ? ", pinned" : ", config default") + " (was " + str(j, "previous") +
                (was_pinned ? ", pinned" : "") + ")\n";
       }});
  t.push_back({"restart", "<hash>", "restart a swarm's actor (same peers and state, new actor)",
               "Answers at once; the supervisor restarts the swarm right after. Counts against "
               "supervisor.max-restarts like a crash.",
               1, 1, {k::hash}, {},
               [](const invocation& inv) {
                 return post("/api/swarms/" + checked_hash(inv.args[0]) + "/restart");
               },
               [](const json& j, const invocation&, const style&) {
                 return "swarm " + str(j, "hash") + ": " + str(j, "status") + " (old actor " +
                        str(j, "old_actor_id") + ")\n";
               }});
  t.push_back({"move", "<hash> <node>", "move a swarm to another cluster member",
               "The node answering hands the swarm, with its peers and state, to the named "
               "member; until the next membership change, when ownership applies again.",
               2, 2, {k::hash, k::text}, {},
               [](const invocation& inv) {
                 const std::string hash = checked_hash(inv.args[0]);
                 if (inv.args[1].empty()) throw usage_error("the node name is empty");
                 return post("/api/swarms/" + hash + "/move", json{{"node", inv.args[1]}}.dump());
               },
               [](const json& j, const invocation&, const style&) {
                 return "swarm " + str(j, "hash") + ": " + str(j, "status") + " to " +
                        str(j, "node") + "\n";
               }});
  t.push_back({"remediate", "<hash> start|stop", "start or stop a remediation for a swarm", "", 2,
               2, {k::hash, k::start_stop}, {},
               [](const invocation& inv) {
                 const std::string hash = checked_hash(inv.args[0]);
                 if (inv.args[1] != "start" && inv.args[1] != "stop")
                   throw usage_error("remediate takes start or stop, not '" + inv.args[1] + "'");
                 return post("/api/swarms/" + hash + "/remediation/" + inv.args[1]);
               },
               [](const json& j, const invocation& inv, const style&) {
                 const json& swarm = j.is_object() && j.contains("swarm") ? j["swarm"] : json();
                 const std::string hash = swarm.is_string() ? swarm.get<std::string>()
                                                            : checked_hash(inv.args[0]);
                 return "swarm " + hash + ": remediation " +
                        (inv.args[1] == "start" ? "started" : "stopped") + "\n";
               }});
  t.push_back({"bans", "", "banned client prefixes and why", "", 0, 0, {}, {},
               [](const invocation&) { return get("/api/bans"); },
               [](const json& j, const invocation&, const style& st) {
                 return render_bans(j, st);
               }});
  t.push_back({"ban", "<prefix> <reason...>", "ban clients whose peer_id starts with <prefix>",
               "The reason is the rest of the line (quote it or not). Example:\n"
               "  swarmctl ban -XX0001- leaks fake completions",
               2, command_spec::many, {k::text, k::text}, {},
               [](const invocation& inv) {
                 if (inv.args[0].empty()) throw usage_error("the ban prefix is empty");
                 const std::string reason = join_rest(inv.args, 1);
                 if (reason.empty()) throw usage_error("the ban reason is empty");
                 return post("/api/bans", json{{"prefix", inv.args[0]}, {"reason", reason}}.dump());
               },
               [](const json& j, const invocation&, const style&) {
                 return "banned prefix " + str(j, "prefix") + ": " + str(j, "reason") + "\n";
               }});
  t.push_back({"unban", "<prefix>", "lift the ban on a client prefix", "", 1, 1, {k::text}, {},
               [](const invocation& inv) {
                 if (inv.args[0].empty()) throw usage_error("the ban prefix is empty");
                 return http_request{"DELETE", "/api/bans/" + percent_encode(inv.args[0]), {}};
               },
               [](const json& j, const invocation&, const style&) {
                 return "unbanned prefix " + str(j, "prefix") + "\n";
               }});
  t.push_back({"access", "", "the info_hash access list: mode, file, hashes", "", 0, 0, {}, {},
               [](const invocation&) { return get("/api/access"); },
               [](const json& j, const invocation&, const style& st) {
                 return render_access(j, st);
               }});
  t.push_back({"allow", "<hash>", "let a hash be tracked (allow list: add; deny list: remove)",
               "Fails when the access list is off.", 1, 1, {k::hash}, {},
               [](const invocation& inv) {
                 return post("/api/access/" + checked_hash(inv.args[0]) + "/allow");
               },
               [](const json& j, const invocation&, const style&) {
                 return str(j, "hash") + ": allowed\n";
               }});
  t.push_back({"deny", "<hash>", "refuse a hash (allow list: remove; deny list: add)",
               "Fails when the access list is off.", 1, 1, {k::hash}, {},
               [](const invocation& inv) {
                 return post("/api/access/" + checked_hash(inv.args[0]) + "/deny");
               },
               [](const json& j, const invocation&, const style&) {
                 return str(j, "hash") + ": denied\n";
               }});
  t.push_back({"reload", "", "re-read the access list file (like SIGHUP)",
               "On an error in the file the old list stays in force and the error is shown.", 0,
               0, {}, {}, [](const invocation&) { return post("/api/access/reload"); },
               [](const json& j, const invocation&, const style&) {
                 return "access list reloaded: mode " + str(j, "mode") + ", " + str(j, "count") +
                        " hashes\n";
               }});
  command_spec metrics{"metrics", "", "the Prometheus /metrics text, as it is", "", 0, 0, {}, {},
                       [](const invocation&) { return get("/metrics"); }, nullptr};
  metrics.raw_text = true;
  t.push_back(std::move(metrics));
  // Cluster commands (`members`, `move <hash> <node>`) go here: one row each.
  t.push_back({"members", "", "cluster members (state, address, swarms) and recent migrations",
               "The answering node's view: live, suspect (connection dropped, still an owner "
               "until cluster.connection-timeout), left (said it leaves; not dialled until it "
               "starts again) or gone; swarms as each member counts them "
               "(unknown when it did not answer). Migrations are the swarms each member "
               "received, newest first. Without a cluster: this node alone.",
               0, 0, {}, {}, [](const invocation&) { return get("/api/cluster"); },
               [](const json& j, const invocation&, const style& st) {
                 return render_members(j, st);
               }});
  t.push_back({"help", "[command]", "this help, or one command's", "", 0, 1, {k::command}, {},
               nullptr, nullptr});
  t.push_back({"shell", "", "interactive mode (the default on a terminal)",
               "Line editing, history in ~/.swarmctl_history (SWARMCTL_HISTORY overrides; empty "
               "turns it off) and tab completion of commands, options and info_hashes (asked "
               "from the daemon). The prompt names the node. Each line is a command as on the "
               "command line, e.g. `swarms --json`. Ctrl-C clears the line (or stops the "
               "command under way); `exit`, `quit` or Ctrl-D leaves. On a pipe it reads "
               "commands line by line without the editor; blank lines and lines starting with "
               "# are skipped; end of input leaves.",
               0, 0, {}, {}, nullptr, nullptr});
  t.push_back({"exit", "", "leave the shell (also quit, or end of input)", "", 0, 0, {}, {},
               nullptr, nullptr});
  return t;
}


/// Checks flags and argument count of `inv` against `c`.
void check_shape(const command_spec& c, const invocation& inv) {
  for (const auto& [name, value] : inv.flags) {
    auto f = std::find_if(c.flags.begin(), c.flags.end(),
                          [&](const flag_spec& s) { return s.name == name; });
    if (f == c.flags.end())
      throw usage_error("'" + c.name + "' has no option --" + name + "\nusage: " + usage_line(c));
    if (f->takes_value && !value) throw usage_error("--" + name + " needs a value: --" + name + "=...");
    if (f->takes_value && value->empty()) throw usage_error("--" + name + " has an empty value");
    if (!f->takes_value && value) throw usage_error("--" + name + " takes no value");
  }
  if (inv.args.size() < c.min_args || inv.args.size() > c.max_args) {
    const std::string what = inv.args.size() < c.min_args ? "too few" : "too many";
    throw usage_error(what + " arguments for '" + c.name + "'\nusage: " + usage_line(c));
  }
}

}  // namespace

const std::vector<std::string>& policy_words() {
  static const std::vector<std::string> names{
      "default",     "adaptive",           "random",
      "role-aware",  "seeder-rotation",    "stalled-boost",
      "flash-crowd", "reachability-aware", "contribution-weighted"};
  return names;
}

const std::vector<command_spec>& command_table() {
  static const std::vector<command_spec> table = make_table();
  return table;
}

const command_spec* find_command(const std::string& name) {
  if (name == "quit") return find_command("exit");
  for (const auto& c : command_table())
    if (c.name == name) return &c;
  return nullptr;
}

std::string usage_line(const command_spec& c) {
  std::string u = "swarmctl " + c.name;
  for (const auto& f : c.flags) u += " [--" + f.name + (f.takes_value ? "=..." : "") + "]";
  if (!c.arguments.empty()) u += " " + c.arguments;
  return u;
}

http_request build_request(const invocation& inv) {
  const command_spec* c = find_command(inv.command);
  if (c == nullptr)
    throw usage_error("unknown command '" + inv.command + "'; `swarmctl help` lists them");
  check_shape(*c, inv);
  if (!c->request) throw usage_error("'" + c->name + "' sends no request");
  return c->request(inv);
}

namespace {

/// The error message of an API answer, or nullopt when it is not our JSON.
std::optional<std::string> api_error_message(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto it = j.find("error");
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string excerpt(const std::string& body) {
  std::string e = body.substr(0, 120);
  for (auto& c : e)
    if (c == '\n' || c == '\r') c = ' ';
  return e + (body.size() > 120 ? "..." : "");
}

const connection& connect(session& s) {
  if (!s.conn) s.conn = resolve_connection(s.startup, s.env, s.read);
  return *s.conn;
}

/// Sends `req`; the 2xx answer, else command_failure with the message and
/// exit code of what went wrong (`what` names the command in API errors).
http_reply exchange(session& s, const http_request& req, const std::string& what) {
  const connection& conn = connect(s);
  transfer_options opts = conn.transfer;
  opts.cancel = s.cancel;
  http_reply reply;
  try {
    reply = perform(conn.url, req, conn.token, conn.timeout, opts);
  } catch (const transport_error& e) {
    throw command_failure(exit_unreachable, e.what());
  }
  const std::string where = conn.url.text();
  if (reply.status == 401) {
    auto msg = api_error_message(reply.body);
    throw command_failure(exit_auth, "the admin token was refused by " + where + " (" +
                                         (msg ? *msg : std::string("HTTP 401")) +
                                         "); check --token, --token-file, SWARMCTL_TOKEN or "
                                         "SWARMCTL_TOKEN_FILE");
  }
  if (reply.status < 200 || reply.status >= 300) {
    auto msg = api_error_message(reply.body);
    if (!msg)
      throw command_failure(exit_api_error,
                            "unexpected answer from " + where + ": HTTP " +
                                std::to_string(reply.status) +
                                (reply.body.empty() ? "" : ": " + excerpt(reply.body)) +
                                " (is this the admin port?)");
    std::string text = what + ": " + *msg + " (HTTP " + std::to_string(reply.status) + ")";
    if (*msg == "no such endpoint")
      text += "; this daemon may be older than swarmctl and lack '" + what + "'";
    throw command_failure(exit_api_error, text);
  }
  return reply;
}

json parse_answer(session& s, const http_reply& reply) {
  json answer = json::parse(reply.body, nullptr, false);
  if (answer.is_discarded())
    throw command_failure(exit_api_error, "unexpected answer from " + connect(s).url.text() +
                                              ": HTTP " + std::to_string(reply.status) +
                                              ", not JSON: " + excerpt(reply.body) +
                                              " (is this the admin port?)");
  return answer;
}

std::string lower_hex(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// `inv` with every hash argument that is a prefix replaced by the hash.
invocation with_resolved_hashes(const command_spec& c, const invocation& inv, session& s) {
  invocation out = inv;
  for (std::size_t i = 0; i < out.args.size() && !c.kinds.empty(); ++i) {
    const arg_kind kind = c.kinds[std::min(i, c.kinds.size() - 1)];
    if (kind == arg_kind::hash && is_hash_prefix(out.args[i]))
      out.args[i] = resolve_hash_prefix(s, out.args[i]);
  }
  return out;
}

}  // namespace

std::vector<std::string> hashes_with_prefix(session& s, std::string_view prefix, bool& complete) {
  const std::string want = lower_hex(prefix);
  // The prefix is checked for hex digits by the callers; the daemon refuses
  // anything else with 400 anyway.
  std::string query = "sort=hash&limit=" + std::to_string(prefix_scan_limit);
  if (!want.empty()) query = "prefix=" + percent_encode(want) + "&" + query;
  const http_reply reply = exchange(s, get("/api/swarms?" + query), "swarms");
  const json answer = parse_answer(s, reply);
  std::vector<std::string> out;
  std::size_t listed = 0;
  if (answer.is_object() && answer.contains("swarms") && answer["swarms"].is_array()) {
    for (const auto& e : answer["swarms"]) {
      ++listed;
      if (!e.is_object() || !e.contains("hash") || !e["hash"].is_string()) continue;
      const std::string h = lower_hex(e["hash"].get<std::string>());
      if (is_info_hash(h) && h.compare(0, want.size(), want) == 0) out.push_back(h);
    }
  }
  const json& truncated = answer.is_object() && answer.contains("truncated") ? answer["truncated"]
                                                                            : json(false);
  const json& total = answer.is_object() && answer.contains("total") ? answer["total"] : json(0);
  complete = !(truncated.is_boolean() && truncated.get<bool>()) &&
             !(total.is_number() && total.get<double>() > static_cast<double>(listed));
  std::sort(out.begin(), out.end());
  return out;
}

std::string resolve_hash_prefix(session& s, std::string_view prefix) {
  bool complete = true;
  const auto matches = hashes_with_prefix(s, prefix, complete);
  const std::string shown(prefix);
  if (matches.size() == 1) return matches.front();
  if (matches.empty())
    throw command_failure(
        exit_api_error,
        "no swarm's info_hash starts with '" + shown + "'" +
            (complete ? std::string()
                      : " among the first " + std::to_string(prefix_scan_limit) +
                            " matches the daemon listed") +
            " (a hash the daemon has no swarm for must be given in full, 40 hex digits)");
  std::string some;
  for (std::size_t i = 0; i < matches.size() && i < 3; ++i)
    some += (i == 0 ? "" : ", ") + matches[i];
  throw command_failure(exit_usage, "'" + shown + "' is ambiguous: " +
                                        std::to_string(matches.size()) +
                                        " swarms' info_hashes start with it (" + some +
                                        (matches.size() > 3 ? ", ..." : "") +
                                        "); give more digits");
}

style output_style(const session& s, const invocation& inv) {
  style st;
  st.raw = inv.global.raw || s.startup.raw;
  const auto columns = s.env("COLUMNS");
  st.width = output_width(st.raw, columns ? *columns : std::string(), s.terminal_width());
  return st;
}

std::optional<json> quiet_get(session& s, const std::string& target) {
  try {
    const http_reply reply = exchange(s, get(target), "get");
    json j = json::parse(reply.body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  } catch (const usage_error&) {
  } catch (const command_failure&) {
  }
  return std::nullopt;
}

int run_invocation(const invocation& inv, session& s) {
  try {
    const command_spec* c = find_command(inv.command);
    if (c == nullptr)
      throw usage_error("unknown command '" + inv.command + "'; `swarmctl help` lists them");
    const style st = output_style(s, inv);
    if (inv.global.help) {
      s.out << help_text(c->name, st.width);
      return exit_ok;
    }
    check_shape(*c, inv);
    if (c->name == "help") {
      s.out << help_text(inv.args.empty() ? std::string{} : inv.args[0], st.width);
      return exit_ok;
    }
    if (c->name == "shell")
      throw usage_error(s.in_shell ? "already in the shell" : "shell is started by main");
    if (c->name == "exit") {
      if (!s.in_shell) throw usage_error("exit only means something in the shell");
      return exit_ok;
    }
    // Checked once before anything is sent (a bad hash or value costs no
    // request), and again once the prefixes are resolved.
    for (std::size_t i = 0; i < inv.args.size() && !c->kinds.empty(); ++i)
      if (c->kinds[std::min(i, c->kinds.size() - 1)] == arg_kind::hash &&
          !is_hash_prefix(inv.args[i]))
        checked_hash(inv.args[i]);
    const invocation resolved = with_resolved_hashes(*c, inv, s);
    const http_request req = c->request(resolved);
    const http_reply reply = exchange(s, req, c->name);
    if (c->raw_text) {
      s.out << reply.body;
      if (!reply.body.empty() && reply.body.back() != '\n') s.out << "\n";
      return exit_ok;
    }
    const json answer = parse_answer(s, reply);
    collect_hashes(answer, s.seen_hashes);
    if (inv.global.json || s.startup.json) {
      s.out << answer.dump(2) << "\n";
      return exit_ok;
    }
    s.out << fit_lines(c->render(answer, resolved, st), st.width);
    return exit_ok;
  } catch (const usage_error& e) {
    s.err << "swarmctl: " << e.what() << "\n";
    return exit_usage;
  } catch (const command_failure& e) {
    s.err << "swarmctl: " << e.what() << "\n";
    return e.code();
  } catch (const json::exception& e) {
    // A renderer met a shape it did not expect (renderers read
    // defensively; this is the last line of defence).
    s.err << "swarmctl: cannot print the answer (" << e.what() << "); try --json\n";
    return exit_api_error;
  }
}

}  // namespace sk::swarmctl
