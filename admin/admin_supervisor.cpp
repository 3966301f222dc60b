#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"

namespace sk::admin_api {

namespace {

/// Asks `loc`'s supervisor to start or stop a remediation of `c.hash`.
void remediation(admin_call& c, bool start) {
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  const swarm_location loc = sh->dir->locate(hash);
  if (!loc.swarm) return job->reply_error(404, "no swarm for " + hash.hex());
  // A remote swarm's remediation runs under its owner's supervisor.
  const swarm_supervision_interface& sup = loc.supervision;
  if (!sup) return job->reply_error(503, "no supervisor is running");
  auto on_answer = [job, hash](std::string& outcome) {
    if (outcome == "started")
      return job->reply_json(202, {{"swarm", hash.hex()}, {"started", true}});
    if (outcome == "stopped")
      return job->reply_json(200, {{"swarm", hash.hex()}, {"stopped", true}});
    if (outcome == "running")
      return job->reply_error(409, "a remediation already runs for " + hash.hex());
    if (outcome == "none") return job->reply_error(409, "no remediation runs for " + hash.hex());
    if (outcome == "unknown") return job->reply_error(404, "no swarm for " + hash.hex());
    job->reply_error(500, "unexpected supervisor answer '" + outcome + "'");
  };
  // Stopping waits until the swarm runs on its defaults again (see
  // runtime/supervisor.hpp): allow it a little more than other requests.
  const auto timeout = start ? sh->cfg.actor_timeout : sh->cfg.actor_timeout * 3;
  auto on_error = [job](caf::error& err) {
    if (err == caf::sec::cannot_forward_to_invalid_actor)
      return job->reply_error(503, "no supervisor is running on the swarm's node");
    job->reply_error(504, "supervisor did not answer");
  };
  if (start)
    c.self->request(sup, timeout, remediate_atom::value, start_atom::value, hash)
        .then(on_answer, on_error);
  else
    c.self->request(sup, timeout, remediate_atom::value, stop_atom::value, hash)
        .then(on_answer, on_error);
}

}  // namespace

void get_events(admin_call& c) {
  const job_ptr& job = c.job;
  const supervisor_actor& sup = c.sh->dir->supervisor_handle();
  if (!sup) return job->reply_json(200, {{"events", json::array()}});
  c.self->request(sup, c.sh->cfg.actor_timeout, events_atom::value)
      .then(
          [job](std::vector<supervisor_event>& events) {
            json list = json::array();
            for (const auto& e : events) list.push_back(event_json(e));
            job->reply_json(200, {{"events", std::move(list)}});
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}

/// `active`: the swarms a remediation runs for, each with its actions so
/// far; `recent`: the remediation events still in the supervisor's log.
void get_remediations(admin_call& c) {
  actor_ptr self = c.self;
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const supervisor_actor& sup = sh->dir->supervisor_handle();
  if (!sup) return job->reply_json(200, {{"active", json::array()}, {"recent", json::array()}});
  self->request(sup, sh->cfg.actor_timeout, remediate_atom::value, caf::get_atom::value)
      .then(
          [self, sh, job, sup](std::vector<info_hash>& active) {
            swarm_list swarms;
            for (const auto& h : active)
              if (auto a = sh->dir->find_swarm(h)) swarms.emplace_back(h, std::move(a));
            fan_out_status(self, sh, std::move(swarms), [self, sh, job, sup](status_list&& st) {
              json list = json::array();
              for (const auto& [id, s] : st) {
                json entry = summary_json(s, id);
                json history = json::array();
                for (const auto& r : s.history) history.push_back(record_json(r));
                entry["actions"] = std::move(history);
                list.push_back(std::move(entry));
              }
              self->request(sup, sh->cfg.actor_timeout, events_atom::value)
                  .then(
                      [job, list](std::vector<supervisor_event>& events) {
                        json recent = json::array();
                        for (const auto& e : events)
                          if (e.kind.rfind("remediation", 0) == 0) recent.push_back(event_json(e));
                        job->reply_json(200, {{"active", list}, {"recent", std::move(recent)}});
                      },
                      [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
            });
          },
          [job](caf::error&) { job->reply_error(504, "supervisor did not answer"); });
}

void post_remediation_start(admin_call& c) { remediation(c, true); }

void post_remediation_stop(admin_call& c) { remediation(c, false); }

}  // namespace sk::admin_api
