#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "cluster/cluster_messages.hpp"

namespace sk::admin_api {

namespace {

/// This node's node actor and every live member that answered in time.
struct cluster_answers {
  cluster::node_status mine;
  std::map<std::string, cluster::node_status> others;
};

/// The answer of GET /api/cluster from what the members said.
json cluster_json(const cluster_answers& a) {
  json members = json::array();
  std::vector<cluster::migration_record> migs(a.mine.migrations);
  for (const auto& [name, s] : a.others)
    migs.insert(migs.end(), s.migrations.begin(), s.migrations.end());
  for (const auto& m : a.mine.members) {
    json e = {{"name", m.name},
              {"state", m.state},
              {"address", m.host + ":" + std::to_string(m.port)},
              {"self", m.name == a.mine.name},
              {"swarms", nullptr},
              {"handoffs_pending", nullptr}};
    if (m.name == a.mine.name) {
      e["swarms"] = a.mine.swarms;
      e["handoffs_pending"] = a.mine.handoffs_pending;
    } else if (auto it = a.others.find(m.name); it != a.others.end()) {
      e["swarms"] = it->second.swarms;
      e["handoffs_pending"] = it->second.handoffs_pending;
    }
    members.push_back(std::move(e));
  }
  std::stable_sort(migs.begin(), migs.end(), [](const auto& x, const auto& y) {
    return x.finished_ms > y.finished_ms;  // newest first
  });
  json list = json::array();
  for (const auto& r : migs) list.push_back(migration_json(r));
  std::uint64_t moving = a.mine.handoffs_pending;
  for (const auto& [name, s] : a.others) moving += s.handoffs_pending;
  return {{"enabled", true},
          {"node", a.mine.name},
          {"members", std::move(members)},
          {"handoffs_pending", moving},
          {"migrations", std::move(list)}};
}

/// Outside a cluster: this node alone.
json single_node_json(const admin_state& sh) {
  json me = {{"name", sh.node_name()},   {"state", "live"},       {"address", nullptr},
             {"swarms", sh.dir->size()}, {"handoffs_pending", 0}, {"self", true}};
  return {{"enabled", false},
          {"node", sh.node_name()},
          {"members", json::array({me})},
          {"migrations", json::array()}};
}

}  // namespace

/// This node's node actor answers for itself and its view of the members;
/// every other live member is asked for its own count (a member that does
/// not answer within actor_timeout shows `"swarms": null`). Each receiving
/// node keeps its last 64 migrations.
void get_cluster(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  auto view = sh->dir->view();
  auto local = self->system().registry().get(cluster::node_registry_key);
  if (!view || !local) return job->reply_json(200, single_node_json(*sh));
  auto node = caf::actor_cast<cluster::node_operator_interface>(local);
  self->request(node, sh->cfg.actor_timeout, cluster::node_status_atom::value)
      .then(
          [self, sh, job, view](cluster::node_status& mine) {
            struct join_state {
              cluster_answers answers;
              std::size_t pending = 0;
            };
            auto st = std::make_shared<join_state>();
            st->answers.mine = std::move(mine);
            auto finish = [st, job]() { job->reply_json(200, cluster_json(st->answers)); };
            std::vector<std::pair<std::string, cluster::node_operator_interface>> others;
            for (const auto& m : st->answers.mine.members)
              if (m.state == "live" && m.name != st->answers.mine.name)
                if (auto h = view->node(m.name))
                  others.emplace_back(m.name,
                                      caf::actor_cast<cluster::node_operator_interface>(h));
            if (others.empty()) return finish();
            st->pending = others.size();
            for (auto& [name, h] : others) {
              self->request(h, sh->cfg.actor_timeout, cluster::node_status_atom::value)
                  .then(
                      [st, finish, name = name](cluster::node_status& s) {
                        st->answers.others[name] = std::move(s);
                        if (--st->pending == 0) finish();
                      },
                      [st, finish](caf::error&) {
                        if (--st->pending == 0) finish();
                      });
            }
          },
          [job](caf::error&) { job->reply_error(503, "the cluster node did not answer"); });
}

/// The cluster hands the local swarm, with its whole state, to that member
/// (runtime/directory.hpp: `move`). 202 once the move started; 409 with the
/// reason otherwise.
void post_move(admin_call& c) {
  const admin_state& sh = *c.sh;
  const info_hash& hash = c.hash;
  json body = json::parse(c.job->body, nullptr, false);
  auto n = body.is_object() ? body.find("node") : body.end();
  if (body.is_discarded() || !body.is_object() || n == body.end() || !n->is_string())
    return c.job->reply_error(400, "body must be a JSON object such as {\"node\":\"b\"}");
  const std::string node = n->get<std::string>();
  // Tell the receiver first, so its migration record says "operator".
  if (auto v = sh.dir->view())
    if (auto target = v->node(node))
      caf::anon_send(caf::actor_cast<cluster::node_operator_interface>(target),
                     cluster::movenote_atom::value, hash, v->self);
  if (auto why = sh.dir->move(hash, node); !why.empty())
    return c.job->reply_error(409, "cannot move swarm " + hash.hex() + ": " + why);
  const std::string from = sh.node_name();
  spdlog::info("admin: swarm {}: owner {} -> {} (moving)", hash.hex(), from, node);
  record_event(sh, hash, "operator-move", from + " -> " + node);
  c.job->reply_json(202, {{"hash", hash.hex()}, {"node", node}, {"status", "moving"}});
}

}  // namespace sk::admin_api
