#include <algorithm>

#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "protocol/text.hpp"

namespace sk::admin_api {

namespace {

/// The swarm list's query: `prefix`, `health`, `sort`, `limit`, `offset`.
struct list_query {
  std::optional<hash_prefix> prefix;  ///< none: every swarm
  std::string health;                 ///< empty: every state
  std::string sort = "size";
  std::size_t limit = 100;
  std::size_t offset = 0;
};

/// Parses and checks the list's query; nullopt after answering 400.
std::optional<list_query> read_list_query(const admin_call& c) {
  std::string error;
  auto q = parse_query(c.query, {"prefix", "health", "sort", "limit", "offset"}, error);
  if (!q) {
    c.job->reply_error(400, error);
    return std::nullopt;
  }
  list_query out;
  if (q->count("prefix")) {
    out.prefix = parse_hash_prefix((*q)["prefix"]);
    if (!out.prefix) {
      c.job->reply_error(400, "prefix must be 1 to 40 hex digits of an info_hash (either case)");
      return std::nullopt;
    }
  }
  out.health = (*q)["health"];
  const std::string& h = out.health;
  if (!h.empty() && h != "healthy" && h != "degraded" && h != "critical" && h != "unhealthy" &&
      h != "unevaluated") {
    c.job->reply_error(400,
                       "health must be one of healthy, degraded, critical, unhealthy, unevaluated");
    return std::nullopt;
  }
  if (q->count("sort")) out.sort = (*q)["sort"];
  if (out.sort != "size" && out.sort != "rate" && out.sort != "hash") {
    c.job->reply_error(400, "sort must be one of size, rate, hash");
    return std::nullopt;
  }
  const std::size_t max_fanout = c.sh->cfg.max_fanout;
  if (q->count("limit")) {
    auto v = parse_count((*q)["limit"], max_fanout);
    if (!v) {
      c.job->reply_error(400, "limit must be an integer from 0 to " + std::to_string(max_fanout));
      return std::nullopt;
    }
    out.limit = *v;
  }
  if (q->count("offset")) {
    auto v = parse_count((*q)["offset"], 100000000);
    if (!v) {
      c.job->reply_error(400, "offset must be a non-negative integer");
      return std::nullopt;
    }
    out.offset = *v;
  }
  return out;
}

/// The page of `all` that `q` asks for, as the list's answer.
json list_json(status_list&& all, const list_query& q, bool truncated) {
  status_list kept;
  for (auto& e : all) {
    const std::string h = health_name(e.second);
    const bool match = q.health.empty() || h == q.health ||
                       (q.health == "unhealthy" && (h == "degraded" || h == "critical"));
    if (match) kept.push_back(std::move(e));
  }
  auto size_of = [](const swarm_status& s) { return s.stats.complete + s.stats.incomplete; };
  std::sort(kept.begin(), kept.end(), [&](const auto& a, const auto& b) {
    if (q.sort == "size" && size_of(a.second) != size_of(b.second))
      return size_of(a.second) > size_of(b.second);
    if (q.sort == "rate" && a.second.health.announce_rate != b.second.health.announce_rate)
      return a.second.health.announce_rate > b.second.health.announce_rate;
    return a.second.hash < b.second.hash;
  });
  json list = json::array();
  for (std::size_t i = q.offset; i < kept.size() && i < q.offset + q.limit; ++i) {
    // A sleeping swarm answered from its data: no actor.
    const bool asleep = kept[i].first == 0;
    json j = summary_json(kept[i].second, kept[i].first);
    if (asleep) j["actor_id"] = nullptr;
    j["asleep"] = asleep;
    list.push_back(std::move(j));
  }
  json out = {{"total", kept.size()},
              {"offset", q.offset},
              {"limit", q.limit},
              {"truncated", truncated},
              {"swarms", std::move(list)}};
  if (q.prefix) out["prefix"] = q.prefix->bytes.hex().substr(0, q.prefix->digits);
  return out;
}

/// The list's view of a sleeping swarm, from what its data keeps (its
/// counts and health as they were at the sleep; actor id 0: none).
swarm_status dormant_status(const info_hash& h, const dormant_swarm& d) {
  swarm_status s;
  s.hash = h;
  s.stats.complete = d.share.seeders;
  s.stats.incomplete = d.share.leechers;
  s.stats.partial = d.share.partial_seeds;
  s.stats.downloaded = static_cast<std::int64_t>(d.downloaded);
  s.knobs.policy = d.policy;
  s.evaluated = d.evaluated;
  s.health.state = d.share.health;
  s.health.reasons = d.share.reasons;
  s.health.announce_rate = d.announce_rate;
  s.peer_count = d.peers;
  return s;
}

/// Asks the owner's supervisor, through the forwarder in `loc`, to restart
/// the swarm. The owner's swarm is asked first for its actor id, so the
/// answer names the actor that is replaced, as on the owner.
void restart_remote(admin_call& c, const swarm_location& loc) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  self->request(loc.swarm, sh->cfg.actor_timeout, status_atom::value)
      .then(
          [self, sh, job, hash, loc](swarm_status& s) {
            const std::uint64_t old_id = s.actor_id;
            self->request(loc.supervision, sh->cfg.actor_timeout, restart_atom::value, hash)
                .then(
                    [job, hash, loc, old_id](std::string& outcome) {
                      if (outcome == "restarting")
                        return job->reply_json(202, {{"hash", hash.hex()},
                                                     {"old_actor_id", old_id},
                                                     {"status", "restarting"},
                                                     {"node", loc.owner}});
                      job->reply_error(
                          409, "swarm " + hash.hex() + " is not supervised on " + loc.owner);
                    },
                    [job, hash, loc](caf::error& err) {
                      if (err == caf::sec::cannot_forward_to_invalid_actor)
                        return job->reply_error(
                            409, "swarm " + hash.hex() + " is not supervised on " + loc.owner);
                      reply_swarm_error(job, hash, err);
                    });
          },
          [job, hash](caf::error& err) { reply_swarm_error(job, hash, err); });
}

}  // namespace

void get_swarms(admin_call& c) {
  auto q = read_list_query(c);
  if (!q) return;
  const state_ptr& sh = c.sh;
  // With a prefix, every local swarm is looked at and only the matches are
  // listed (at most max_fanout of them: more is "truncated"); without, the
  // first max_fanout swarms are. Running swarms are asked for their status;
  // sleeping ones answer from their data and stay asleep (a console that
  // shows a page of swarms every few seconds must not keep them awake).
  std::optional<hash_prefix> prefix = q->prefix;
  auto entries = sh->dir->local_entries_where(
      sh->cfg.max_fanout + 1, [&prefix](const info_hash& h) { return !prefix || prefix->matches(h); });
  const bool truncated = entries.size() > sh->cfg.max_fanout;
  if (truncated) entries.resize(sh->cfg.max_fanout);
  std::vector<std::pair<info_hash, local_swarm_actor>> awake;
  auto asleep = std::make_shared<status_list>();
  for (auto& e : entries) {
    if (e.dormant)
      asleep->emplace_back(0, dormant_status(e.hash, *e.dormant));
    else
      awake.emplace_back(e.hash, std::move(e.actor));
  }
  fan_out_status(c.self, sh, std::move(awake),
                 [job = c.job, q = *q, truncated, asleep](status_list&& all) {
                   for (auto& s : *asleep) all.push_back(std::move(s));
                   job->reply_json(200, list_json(std::move(all), q, truncated));
                 });
}

void get_swarm(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.swarm) return job->reply_error(404, "no swarm for " + hash.hex());
  const caf::actor_id id = loc.swarm.id();
  self->request(loc.swarm, sh->cfg.actor_timeout, status_atom::value, caf::get_atom::value,
                sh->cfg.max_peers_listed)
      .then(
          [self, sh, job, id, hash, loc](swarm_status& s) {
            const std::string owner = loc.owner.empty() ? sh->node_name() : loc.owner;
            auto j = std::make_shared<json>(detail_json(s, id, owner, sh->dir->config()));
            const swarm_supervision_interface& sup = loc.supervision;
            if (!sup) {
              (*j)["policy_pinned"] = false;
              return job->reply_json(200, *j);
            }
            // Whether an operator pinned the policy: the supervisor keeps it.
            self->request(sup, sh->cfg.actor_timeout, policy_atom::value, caf::get_atom::value,
                          hash)
                .then(
                    [job, j](bool pinned) {
                      (*j)["policy_pinned"] = pinned;
                      job->reply_json(200, *j);
                    },
                    [job, j](caf::error&) {
                      (*j)["policy_pinned"] = nullptr;
                      job->reply_json(200, *j);
                    });
          },
          [job, hash](caf::error& err) { reply_swarm_error(job, hash, err); });
}

/// A policy name pins it, "default" unpins (runtime/supervisor.hpp). The
/// supervisor applies it (and logs it) so a running or later remediation
/// keeps the operator's choice.
void post_policy(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  json body = json::parse(job->body, nullptr, false);
  if (body.is_discarded() || !body.is_object())
    return job->reply_error(400, "body must be a JSON object such as {\"policy\":\"role-aware\"}");
  auto it = body.find("policy");
  if (it == body.end() || !it->is_string())
    return job->reply_error(400, "body needs a string field \"policy\"");
  const std::string name = it->get<std::string>();
  if (name != "default" && !parse_policy(name)) {
    std::string names = "default";
    for (auto n : policy_names) names += ", " + std::string(n);
    return job->reply_error(400, "unknown policy '" + name + "'; one of " + names);
  }
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.swarm) return job->reply_error(404, "no swarm for " + hash.hex());
  // The node the swarm runs on (through a forwarder, its owner's supervisor
  // pins it there).
  const std::string node = loc.owner.empty() ? sh->node_name() : loc.owner;
  // Straight to the swarm (no pinning): without a supervisor, or for a
  // swarm the supervisor does not know.
  auto direct = [self, sh, job, hash, name, node, swarm = loc.swarm]() {
    self->request(swarm, sh->cfg.actor_timeout, policy_atom::value, caf::put_atom::value, name)
        .then(
            [job, hash, name, node](std::string& previous) {
              spdlog::info("admin: swarm {}: policy {} -> {}", hash.hex(), previous, name);
              job->reply_json(200, {{"hash", hash.hex()},
                                    {"policy", name},
                                    {"previous", previous},
                                    {"pinned", false},
                                    {"node", node}});
            },
            [job, hash](caf::error& err) {
              if (err == caf::sec::invalid_argument)
                job->reply_error(400, "policy rejected by the swarm");
              else
                reply_swarm_error(job, hash, err);
            });
  };
  const swarm_supervision_interface& sup = loc.supervision;
  if (!sup) return direct();
  self->request(sup, sh->cfg.actor_timeout * 2, policy_atom::value, caf::put_atom::value, hash,
                name)
      .then(
          [job, hash, node](policy_change& pc) {
            job->reply_json(200, {{"hash", hash.hex()},
                                  {"policy", pc.policy},
                                  {"previous", pc.previous},
                                  {"pinned", pc.pinned},
                                  {"was_pinned", pc.was_pinned},
                                  {"node", node}});
          },
          [job, hash, direct](caf::error& err) {
            if (err == caf::sec::cannot_forward_to_invalid_actor) return direct();
            if (err == caf::sec::invalid_argument)
              return job->reply_error(400, "policy rejected by the swarm");
            reply_swarm_error(job, hash, err);
          });
}

/// The supervisor kills the swarm actor and restarts it from its state
/// (logged there with the old and new actor); for a swarm another node
/// owns, that node's supervisor does.
void post_restart(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.swarm) return job->reply_error(404, "no swarm for " + hash.hex());
  // Never the forwarder itself: killing it would only drop the route.
  if (loc.remote) return restart_remote(c, loc);
  const swarm_interface& swarm = loc.swarm;
  const caf::actor_id old_id = swarm.id();
  auto accepted = [job, hash, old_id, node = sh->node_name()]() {
    job->reply_json(
        202,
        {{"hash", hash.hex()}, {"old_actor_id", old_id}, {"status", "restarting"}, {"node", node}});
  };
  const swarm_supervision_interface& sup = loc.supervision;
  if (!sup) {
    // Nobody restarts it: the next announce spawns an empty swarm.
    self->send_exit(swarm, caf::exit_reason::kill);
    spdlog::info("admin: swarm {}: actor {} -> killed (no supervisor: restarted empty)", hash.hex(),
                 old_id);
    return accepted();
  }
  self->request(sup, sh->cfg.actor_timeout, restart_atom::value, hash)
      .then(
          [job, hash, accepted](std::string& outcome) {
            if (outcome == "restarting") return accepted();
            job->reply_error(409, "swarm " + hash.hex() + " is not supervised on this node");
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}

}  // namespace sk::admin_api
