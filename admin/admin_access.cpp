#include <map>

#include <spdlog/spdlog.h>

#include "admin/admin_handlers.hpp"
#include "admin/admin_json.hpp"
#include "tracker/access_list.hpp"

namespace sk::admin_api {

namespace {

/// Most hashes GET /api/access lists (`count` says how many there are).
constexpr std::size_t max_hashes_listed = 1000;

/// Ends the local swarms among `local` (refused torrents; a forwarder is
/// left alone) and calls `done(ended, peers)`: how many swarms ended and the
/// peers they held (as each swarm counted them just before; one that does
/// not answer in time ends all the same, its peers uncounted).
void end_swarms(actor_ptr self, const state_ptr& sh,
                swarm_list local,
                std::function<void(std::size_t, std::uint64_t)> done) {
  fan_out_status(self, sh, local, [sh, local, done = std::move(done)](status_list&& st) {
    std::map<caf::actor_id, std::uint64_t> peers_of;
    for (const auto& [id, s] : st) peers_of[id] = s.peer_count;
    std::size_t ended = 0;
    std::uint64_t peers = 0;
    for (const auto& [hash, a] : local) {
      if (!sh->dir->end_swarm(hash)) continue;
      ++ended;
      peers += peers_of[a.id()];
    }
    done(ended, peers);
  });
}

/// Serves (`allow`) or refuses `c.hash` from now on.
void set_access(admin_call& c, bool allow) {
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  const info_hash hash = c.hash;
  access_control* ac = sh->cfg.access.get();
  if (ac == nullptr || ac->mode() == access_mode::off)
    return job->reply_error(409, "access list is off");
  const char* before = ac->allowed(hash) ? "served" : "refused";
  const auto r = ac->set_allowed(hash, allow);
  if (!r.ok) {
    spdlog::error("admin: access list: {}", r.error);
    return job->reply_error(500, r.error);
  }
  const std::string change = std::string(before) + " -> " + (allow ? "served" : "refused") + " (" +
                             to_string(ac->mode()) + " list)";
  if (allow) {
    spdlog::info("admin: info_hash {}: {}", hash.hex(), change);
    record_event(*sh, hash, "operator-access", change);
    return job->reply_json(200, {{"hash", hash.hex()}, {"allowed", true}, {"swarm_ended", false}});
  }
  // Refused from now on (the front ends check the list before routing):
  // a live swarm of it ends, dropping its peers and any remediation.
  swarm_list local;
  if (auto a = sh->dir->find_swarm(hash)) local.emplace_back(hash, std::move(a));
  end_swarms(c.self, sh, std::move(local),
             [sh, job, hash, change](std::size_t ended, std::uint64_t peers) {
               const std::string detail =
                   change + (ended != 0
                                 ? "; its swarm ended (" + std::to_string(peers) + " peers dropped)"
                                 : std::string());
               spdlog::info("admin: info_hash {}: {}", hash.hex(), detail);
               record_event(*sh, hash, "operator-access", detail);
               job->reply_json(200, {{"hash", hash.hex()},
                                     {"allowed", false},
                                     {"swarm_ended", ended != 0},
                                     {"peers_dropped", peers}});
             });
}

}  // namespace

void get_access(admin_call& c) {
  const access_control* ac = c.sh->cfg.access.get();
  json hashes = json::array();
  std::size_t count = 0;
  if (ac != nullptr) {
    const auto list = ac->snapshot();
    count = list->size();
    for (const auto& h : list->sorted()) {
      if (hashes.size() >= max_hashes_listed) break;
      hashes.push_back(h.hex());
    }
  }
  c.job->reply_json(200, {{"mode", ac != nullptr ? to_string(ac->mode()) : "off"},
                          {"file", ac != nullptr ? ac->file() : std::string()},
                          {"count", count},
                          {"hashes", std::move(hashes)}});
}

void post_access_allow(admin_call& c) { set_access(c, true); }

void post_access_deny(admin_call& c) { set_access(c, false); }

/// The old list stays in force when the file cannot be read (422); swarms
/// of torrents the new list refuses end, as after a deny.
void post_access_reload(admin_call& c) {
  const state_ptr& sh = c.sh;
  const job_ptr& job = c.job;
  access_control* ac = sh->cfg.access.get();
  if (ac == nullptr || ac->file().empty())
    return job->reply_error(409, "no access file configured (access.file)");
  const auto before = ac->snapshot()->size();
  const auto r = ac->reload();
  if (!r.ok) {
    spdlog::error("admin: access list reload failed, the old list stays: {}", r.error);
    return job->reply_error(422, r.error + " (the old list stays in force)");
  }
  const auto count = ac->snapshot()->size();
  swarm_list refused;
  for (auto& [h, swarm] :
       sh->dir->local_swarms_if([ac](const info_hash& h) { return !ac->allowed(h); }))
    refused.emplace_back(h, std::move(swarm));
  end_swarms(c.self, sh, std::move(refused),
             [sh, job, ac, before, count](std::size_t ended, std::uint64_t peers) {
               std::string detail = "reloaded " + ac->file() + ": " + std::to_string(before) +
                                    " -> " + std::to_string(count) + " hashes";
               if (ended != 0)
                 detail += "; " + std::to_string(ended) + " swarms of refused torrents ended (" +
                           std::to_string(peers) + " peers dropped)";
               spdlog::info("admin: access list {}", detail);
               record_event(*sh, no_swarm, "operator-access", detail);
               job->reply_json(
                   200,
                   {{"mode", to_string(ac->mode())}, {"count", count}, {"swarms_ended", ended}});
             });
}

}  // namespace sk::admin_api
