#include "runtime/remediation_actor.hpp"

#include <utility>

#include <spdlog/spdlog.h>

#include "runtime/swarm_actor_log.hpp"
#include "runtime/swarm_interface.hpp"

namespace sk {
namespace {

/// Sends the knobs as a request: the swarm answers with the previous knobs
/// (ignored). A swarm that died meanwhile is restarted by the supervisor,
/// which rebinds us and we send them again.
void set_knobs(remediation_actor_ptr self, const swarm_knobs& k) {
  self->request(self->state.swarm, caf::infinite, knobs_atom::value, caf::put_atom::value, k)
      .then([](const swarm_knobs&) {},
            [self](const caf::error& err) {
              if (err != caf::sec::request_receiver_down) {
                spdlog::warn("remediation of swarm {}: the swarm refused knobs: {}",
                             self->state.hash.hex(), self->system().render(err));
              }
            });
}

/// Tells the swarm where the plan stands (none once it is done), so the
/// swarm's snapshots carry it.
void send_progress(remediation_actor_ptr self) {
  auto& st = self->state;
  std::vector<remediation_progress> p;
  if (st.plan && !st.plan->done()) p.push_back(st.plan->progress(self->clock().now()));
  self->send(st.swarm, progress_atom::value, std::move(p));
}

void carry_out(remediation_actor_ptr self, remediation_plan::step step) {
  auto& st = self->state;
  if (step.knobs) {
    set_knobs(self, *step.knobs);
  }
  for (auto& rec : step.records) {
    // One line per action (never per announce), within the node's budget
    // of per-swarm lines (runtime/swarm_actor_log.hpp).
    swarm_log::instance().info(self->clock().now(), "remediation of swarm {}: {}", st.hash.hex(),
                               to_string(rec));
    self->send(st.swarm, history_atom::value, caf::put_atom::value, std::move(rec));
  }
  send_progress(self);
  if (step.done) {
    self->quit();
  }
}

}  // namespace

remediation_actor::behavior_type remediation_behavior(
    remediation_actor_ptr self, info_hash hash, local_swarm_actor swarm, remediation_config cfg,
    swarm_knobs baseline, health_report initial, supervisor_actor supervisor,
    std::uint32_t operator_reasons, bool policy_pinned,
    std::optional<remediation_progress> resume) {
  auto& st = self->state;
  // A stray error message must not end a remediation half-way (CAF's
  // default error handler quits).
  self->set_error_handler([](caf::error&) {});
  st.hash = hash;
  st.swarm = std::move(swarm);
  if (resume)
    st.plan.emplace(cfg, *resume, self->clock().now());
  else
    st.plan.emplace(cfg, baseline, operator_reasons, policy_pinned);
  st.last = initial;
  if (supervisor) {
    self->monitor(supervisor);
    self->set_down_handler([self, sup = supervisor.address()](caf::down_msg& dm) {
      if (dm.source == sup) {
        self->quit(dm.reason);
      }
    });
  }
  if (resume) {
    // Where the plan stood when its swarm was saved or moved: the knobs
    // again (the swarm's own copy may be older), judged from the next tick.
    set_knobs(self, st.plan->knobs());
    send_progress(self);
  } else {
    carry_out(self, st.plan->on_report(initial));
  }
  return {
      [self](health_atom, const info_hash& h, const health_report& r) {
        auto& st = self->state;
        if (h != st.hash || !st.plan) {
          return;
        }
        st.last = r;
        carry_out(self, st.plan->on_report(r));
      },
      [self](rebind_atom, const local_swarm_actor& swarm) {
        auto& st = self->state;
        st.swarm = swarm;
        // A swarm restored from a broken state starts from its defaults.
        set_knobs(self, st.plan->knobs());
        send_progress(self);
      },
      [self](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        auto step = st.plan->abort(st.last, "stopped by an operator; defaults restored");
        for (auto& rec : step.records) {
          spdlog::info("remediation of swarm {}: {}", st.hash.hex(), to_string(rec));
          self->send(st.swarm, history_atom::value, caf::put_atom::value, std::move(rec));
        }
        send_progress(self);
        // Answer (and quit) only once the swarm runs on its defaults again,
        // so whoever stopped us sees them restored at once.
        auto rp = self->make_response_promise<bool>();
        self->request(st.swarm, std::chrono::seconds(5), knobs_atom::value, caf::put_atom::value,
                      st.plan->baseline())
            .then(
                [self, rp](const swarm_knobs&) mutable {
                  rp.deliver(true);
                  self->quit();
                },
                [self, rp](const caf::error&) mutable {
                  // Gone or restarting: a restarted swarm starts from its
                  // core's knobs, which the baseline may not have reached.
                  rp.deliver(false);
                  self->quit();
                });
        return rp;
      },
      [self](policy_atom, caf::put_atom, const swarm_knobs& baseline,
             bool pinned) -> caf::result<std::string> {
        auto& st = self->state;
        auto knobs = st.plan->rebase(baseline, pinned);
        if (!knobs) {
          knobs = baseline;  // done, quitting: the swarm gets the new baseline
        }
        send_progress(self);
        auto rp = self->make_response_promise<std::string>();
        self->request(st.swarm, std::chrono::seconds(5), knobs_atom::value, caf::put_atom::value,
                      *knobs)
            .then(
                [rp](const swarm_knobs& previous) mutable {
                  rp.deliver(std::string(to_string(previous.policy)));
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](caf::get_atom) {
        std::vector<std::string> names;
        for (strategy s : self->state.plan->active()) {
          names.emplace_back(to_string(s));
        }
        return names;
      },
  };
}

}  // namespace sk
