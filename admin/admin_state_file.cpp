#include "admin/admin_state_file.hpp"

#include "runtime/state_keeper.hpp"

namespace sk::admin_api {

namespace {

using mt = metric_type;

const char* outcome_name(int o) {
  switch (o) {
    case state_stats::absent: return "absent";
    case state_stats::loaded: return "loaded";
    case state_stats::refused: return "refused";
    default: return "not_loaded";
  }
}

}  // namespace

void write_state_file(exposition& m, const state_stats* s) {
  if (s == nullptr) return;
  m.add("swarmkeeper_state_last_write_timestamp_seconds", mt::gauge,
        "Unix time the last state file was committed; 0: none since start.")
      .sample("", double(s->last_write_unix_ms.load()) / 1000.0);
  m.add("swarmkeeper_state_last_write_duration_seconds", mt::gauge,
        "How long the last state file took to write (asking every swarm, writing, fsync, "
        "rename).")
      .sample("", double(s->last_duration_ms.load()) / 1000.0);
  m.add("swarmkeeper_state_last_write_bytes", mt::gauge, "Size of the last state file.")
      .sample("", double(s->last_bytes.load()));
  m.add("swarmkeeper_state_last_write_swarms", mt::gauge, "Swarms in the last state file.")
      .sample("", double(s->last_swarms.load()));
  m.add("swarmkeeper_state_last_write_peers", mt::gauge, "Peers in the last state file.")
      .sample("", double(s->last_peers.load()));
  auto writes = m.add("swarmkeeper_state_writes_total", mt::counter,
                      "State files written since start, by outcome (failed: the previous "
                      "file stays).");
  writes.sample(label("outcome", "ok"), double(s->writes.load()));
  writes.sample(label("outcome", "failed"), double(s->write_failures.load()));
  m.add("swarmkeeper_state_load_duration_seconds", mt::gauge,
        "How long loading the state file took at start.")
      .sample("", double(s->load_duration_ms.load()) / 1000.0);
  auto loaded = m.add("swarmkeeper_state_loaded", mt::gauge,
                      "What the start loaded from the state file (expired_peers: dropped, "
                      "their timeout passed while the daemon was down).");
  loaded.sample(label("what", "swarms"), double(s->loaded_swarms.load()));
  loaded.sample(label("what", "peers"), double(s->loaded_peers.load()));
  loaded.sample(label("what", "bans"), double(s->loaded_bans.load()));
  loaded.sample(label("what", "access_entries"), double(s->loaded_access.load()));
  loaded.sample(label("what", "expired_peers"), double(s->expired_peers.load()));
  m.add("swarmkeeper_state_load_refused", mt::gauge,
        "1 when the state file found at start was refused (moved aside; the node started "
        "empty).")
      .sample("", s->load.load() == state_stats::refused ? 1 : 0);
}

json state_file_json(const state_stats* s, const std::string& dir) {
  if (s == nullptr) return nullptr;
  json load = {{"outcome", outcome_name(s->load.load())},
               {"duration_ms", s->load_duration_ms.load()},
               {"swarms", s->loaded_swarms.load()},
               {"peers", s->loaded_peers.load()},
               {"bans", s->loaded_bans.load()},
               {"access_entries", s->loaded_access.load()},
               {"expired_peers", s->expired_peers.load()}};
  if (s->load.load() == state_stats::refused) {
    load["problem"] = s->load_problem();
    load["moved_to"] = s->moved_to();
  }
  json last = nullptr;
  if (s->writes.load() > 0)
    last = {{"unix_ms", s->last_write_unix_ms.load()},
            {"duration_ms", s->last_duration_ms.load()},
            {"bytes", s->last_bytes.load()},
            {"swarms", s->last_swarms.load()},
            {"peers", s->last_peers.load()}};
  json j = {{"dir", dir},
            {"load", std::move(load)},
            {"last_write", std::move(last)},
            {"writes", s->writes.load()},
            {"write_failures", s->write_failures.load()}};
  if (s->write_failures.load() > 0) j["last_error"] = s->last_error();
  return j;
}

}  // namespace sk::admin_api
